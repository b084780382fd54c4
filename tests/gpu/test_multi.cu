// Two-GPU checks (make gpu-test-multi): the GPU-GPU and GPU-host clock
// helpers, and causality in a merged timeline. GPUs 0 and 1 exchange tiles
// through peer memory (examples/peer_ring.cuh) in both directions; in the
// merged timeline every "flag raised" on one GPU must come before the
// matching "flag seen" on the other, by at least the one-way latency
// measured by the ping-pong minus the stated uncertainty. Placed on the raw
// %globaltimer values instead, the same check must fail (the GPUs' clocks
// are ~100 us apart). On a machine with fewer than two GPUs (or without
// peer access) every check is skipped, and said so.
// An anchor every 20000 cycles (~10 us): the SM clock's rate wanders while
// the kernels spin on flags, and two anchors per lane would misplace its
// middle by up to ~1 us, more than the flag's travel time.
#define IKP_ANCHOR_EVERY 20000
#include "../../ikp_cuda.cuh"
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "../../ikp.h"
#include "../check.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>
#include "../../examples/peer_ring.cuh"

#define CHECKS_SKIPPED 17 /* the checks below, when they cannot run */

/* (step, ps on the merged axis) of every event id of capture k */
static std::vector<std::pair<uint32_t, int64_t>> stamps(const ikp_capture *cap, const ikp_alignment &a, uint32_t id)
{
    std::vector<std::pair<uint32_t, int64_t>> v;
    ikp_lane_events ev;
    ikp_error e;
    memset(&ev, 0, sizeof ev); /* reused by ikp_decode_lane: starts empty */
    if (ikp_decode_lane(cap, 0, &ev, &e) != IKP_OK) return v;
    for (size_t k = 0; k < ev.count; k++) {
        const ikp_event &x = ev.events[k];
        if (x.id != id || !(x.flags & (IKP_EVENT_HAS_BEGIN_DATA | IKP_EVENT_HAS_END_DATA))) continue;
        v.push_back({(x.flags & IKP_EVENT_HAS_BEGIN_DATA) ? (uint32_t)x.begin_data : (uint32_t)x.end_data,
                     a.zero_ns * 1000 + x.start_ps});
    }
    ikp_lane_events_free(cap, &ev);
    return v;
}

typedef struct verdict {
    size_t pairs, backwards;
    int64_t min_gap_ps, median_gap_ps;
} verdict;

/* every raise on GPU d against the sighting on GPU 1 - d, both directions */
static verdict causality(ikp_capture *caps[2], const ikp_alignment al[2])
{
    verdict v = {0, 0, INT64_MAX, 0};
    std::vector<int64_t> gaps;
    for (int d = 0; d < 2; d++) {
        auto raise = stamps(caps[d], al[d], RING_RAISE), seen = stamps(caps[1 - d], al[1 - d], RING_SEEN);
        std::sort(seen.begin(), seen.end());
        for (auto &r : raise) {
            auto it = std::lower_bound(seen.begin(), seen.end(), std::make_pair(r.first, (int64_t)INT64_MIN));
            if (it == seen.end() || it->first != r.first) continue;
            int64_t gap = it->second - r.second;
            gaps.push_back(gap);
            v.pairs++;
            if (gap <= 0) v.backwards++;
            v.min_gap_ps = std::min(v.min_gap_ps, gap);
        }
    }
    if (!gaps.empty()) {
        std::sort(gaps.begin(), gaps.end());
        v.median_gap_ps = gaps[gaps.size() / 2];
    }
    return v;
}

static void print(const char *what, const verdict &v, const ikp_alignment &a)
{
    printf("  %-34s %5zu exchanges, %4zu out of order, gap min %9.3f us, median %8.3f us; placement ", what, v.pairs,
           v.backwards, v.min_gap_ps / 1e6, v.median_gap_ps / 1e6);
    if (a.via == IKP_ALIGN_RAW) printf("not measured\n");
    else printf("+- %.3f us\n", a.uncertainty_ns / 1e3);
}

int main()
{
    int n = 0, ab = 0, ba = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    if (n >= 2) {
        cudaDeviceCanAccessPeer(&ab, 0, 1);
        cudaDeviceCanAccessPeer(&ba, 1, 0);
    }
    if (n < 2 || !ab || !ba) {
        printf("skipped: %d two-GPU checks (this machine has %d GPU%s%s)\n", CHECKS_SKIPPED, n, n == 1 ? "" : "s",
               n >= 2 ? " without peer access between 0 and 1" : "");
        return check_report();
    }
    const int steps = 500;
    static ring_result res;
    if (ring_run(steps, &res)) { CHECK(0); return check_report(); }
    CHECK(res.sums_ok);
    /* the helpers: readings of both GPUs against the host around the kernels, peer measurements */
    for (int d = 0; d < 2; d++) {
        CHECK_EQ(res.num_clock[d], 2);
        CHECK(res.peers[d][0].round_trip_ns > 0 && res.peers[d][0].uncertainty_ns < 2000);
        printf("GPU %d -> %d over peer memory: offset %+.3f us +- %.3f us (round trip %.3f us), after: %+.3f us;"
               " GPU %d - host %+.3f us +- %.3f us\n", d, 1 - d, res.peers[d][0].offset_ns / 1e3,
               res.peers[d][0].uncertainty_ns / 1e3, res.peers[d][0].round_trip_ns / 1e3,
               res.peers[d][1].offset_ns / 1e3, d,
               (double)(int64_t)(res.clock[d][0].gpu_ns - (uint64_t)res.clock[d][0].host_ns) / 1e3,
               res.clock[d][0].uncertainty_ns / 1e3);
    }
    /* the two directions measure one offset: 0->1 and 1->0 agree within their uncertainties */
    CHECK(std::llabs(res.peers[0][0].offset_ns + res.peers[1][0].offset_ns) <=
          (long long)(res.peers[0][0].uncertainty_ns + res.peers[1][0].uncertainty_ns));
    uint32_t one_way = std::min(res.peers[0][0].round_trip_ns, res.peers[1][0].round_trip_ns) / 2;
    ikp_error e;
    ikp_capture *caps[2] = {ring_open(&res, 0, 1, &e), ring_open(&res, 1, 1, &e)};
    ikp_capture *host_only[2] = {ring_open(&res, 0, 0, &e), ring_open(&res, 1, 0, &e)};
    CHECK(caps[0] && caps[1] && host_only[0] && host_only[1]);
    if (caps[0] && caps[1] && host_only[0] && host_only[1]) {
        ikp_alignment al[2], alh[2], alr[2];
        CHECK_EQ(ikp_merge_align(caps, 2, 0, al, &e), IKP_OK);
        CHECK_EQ(al[1].via, IKP_ALIGN_PEER);
        CHECK_EQ(ikp_merge_align(host_only, 2, 0, alh, &e), IKP_OK);
        CHECK_EQ(alh[1].via, IKP_ALIGN_HOST);
        CHECK_EQ(ikp_merge_align(caps, 2, 1, alr, &e), IKP_OK);
        verdict vp = causality(caps, al), vh = causality(host_only, alh), vr = causality(caps, alr);
        printf("causality over %d steps, both directions (one-way latency %.3f us):\n", steps, one_way / 1e3);
        print("aligned, GPU-GPU measurement", vp, al[1]);
        print("aligned, host readings only", vh, alh[1]);
        print("raw %globaltimer (no alignment)", vr, alr[1]);
        CHECK_EQ(vp.pairs, (size_t)(2 * steps));
        CHECK(vp.backwards == 0 && vp.min_gap_ps >= ((int64_t)one_way - (int64_t)al[1].uncertainty_ns) * 1000);
        CHECK(vh.backwards == 0 && vh.min_gap_ps >= ((int64_t)one_way - (int64_t)alh[1].uncertainty_ns) * 1000);
        /* without alignment the clocks' offset shows: some sightings come before their raise */
        if (std::llabs(al[1].offset_ns) > 10000) CHECK(vr.backwards > 0);
        else printf("  (the GPUs' clocks are only %.3f us apart: raw placement is not checked)\n", al[1].offset_ns / 1e3);
        const char *dir = getenv("IKP_MULTI_OUT");
        if (dir) { /* the captures and merged traces, for a look */
            char p[512];
            for (int d = 0; d < 2; d++) {
                snprintf(p, sizeof p, "%s/ring_gpu%d.ikp", dir, d);
                CHECK_EQ(ikp_capture_write_path(caps[d], p, &e), IKP_OK);
            }
            snprintf(p, sizeof p, "%s/ring_merged.pftrace", dir);
            CHECK_EQ(ikp_write_merged_path(caps, 2, NULL, p, &e), IKP_OK);
        }
    }
    for (int d = 0; d < 2; d++) { ikp_capture_free(caps[d]); ikp_capture_free(host_only[d]); }
    return check_report();
}
