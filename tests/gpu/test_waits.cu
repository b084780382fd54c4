// make gpu-test: stamps after waits, and warps of one block against each
// other, through the public macros in every build (default, staged, ring,
// staged ring, globaltimer). The kernels: tests/gpu/waits_kernels.cuh.
//
// 1. Barriers (__syncthreads, named bar.sync, __syncthreads_count, the
//    cluster barrier, __syncwarp, an mbarrier try_wait loop): the releasing
//    side spins S = 0 .. 200,000 cycles and begins a region as it arrives;
//    the waiting side's stamp right after the wait (an end, a begin, an
//    instant, a scope's end) is never before that begin, and comes a fixed
//    time after it, the same for every S >= 2,000 to within 8 cycles
//    (globaltimer build: two 32 ns ticks). Three waits have a jitter of
//    their own, which the tolerance takes: an mbarrier try_wait loop sees
//    the phase at its next poll (64 cycles); after __syncwarp the two
//    halves of the warp take turns in an order its scheduler picks (32
//    cycles); and the cluster barrier's release crosses multiprocessors
//    (1,024 cycles). Both sides are on one multiprocessor: one clock.
// 2. Asynchronous waits (cp.async.wait_group, cp.async.bulk.wait_group,
//    wgmma.wait_group, griddepcontrol.wait): the region around the wait
//    covers the work waited for: it grows with the work, and the grid
//    dependency's wait ends after the primary block on its multiprocessor.
// 3. Two warps of one block taking turns for 2 ms or more on every
//    multiprocessor: their regions never overlap, and (default build) each
//    gap between them decodes to its cycle difference at the clock's rate.
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "../../ikp.h"
#include "../check.h"
#include "lane_events.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

cudaError_t waits_default(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch, uint64_t *prof);
cudaError_t waits_staged(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch, uint64_t *prof);
cudaError_t waits_ring(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch, uint64_t *prof);
cudaError_t waits_staged_ring(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch, uint64_t *prof);
cudaError_t waits_gt(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch, uint64_t *prof);
cudaError_t waits_wgmma(int n, int blocks, float *sink, uint64_t *prof);

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

enum { W_REL, W_WAIT, W_AFTER, W_INST, W_SCOPE, W_ASYNC };
enum { WK_SYNC, WK_NAMED, WK_RED, WK_CLUSTER, WK_WARP, WK_MBAR, WK_BARRIER_KINDS };
static const char *const kind_name[] = {"__syncthreads", "bar.sync 1, 64", "__syncthreads_count", "cluster barrier",
                                        "__syncwarp", "mbarrier try_wait"};
typedef cudaError_t (*run_fn)(int, int, unsigned long long, int, int, void *, uint64_t *);
struct build_t { const char *name; run_fn run; bool ns; };
static const build_t builds[] = {{"default", waits_default, false}, {"staged", waits_staged, false},
                                 {"ring", waits_ring, false}, {"staged ring", waits_staged_ring, false},
                                 {"globaltimer", waits_gt, true}};

static int g_sms;
static void *g_scratch;

// launch, download as README does (SM clock samples while the kernel runs), decode
static ikp_capture *capture(ikp_cuda_buffer &b, std::vector<uint64_t> &w, const build_t &bd, int what, int kind,
                            unsigned long long spin, int n, int blocks)
{
    ikp_error e;
    ikp_capture *cap = NULL;
    ikp_decode_options o;
    CHECK_EQ(ikp_cuda_buffer_reset(&b, 0, &e), IKP_OK);
    if (what == 5) CK(waits_wgmma(n, blocks, (float *)g_scratch, b.device));
    else CK(bd.run(what, kind, spin, n, blocks, g_scratch, b.device));
    w.resize(b.num_words);
    CHECK_EQ(ikp_cuda_buffer_download(&b, 0, w.data(), &e), IKP_OK);
    memset(&o, 0, sizeof o);
    o.sm_clock = b.sm_clock;
    o.num_sm_clock = b.num_sm_clock;
    if (ikp_capture_open(w.data(), w.size(), &o, &cap, &e) != IKP_OK) {
        fprintf(stderr, "decode: %s\n", e.message);
        CHECK(false);
        return NULL;
    }
    return cap;
}

static double median(std::vector<double> v)
{
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// 1. barriers: for each S, each checked block, the four stamps after the
// waits minus the release instant before them, in cycles (globaltimer: ns)
static void barriers(ikp_cuda_buffer &b, const build_t &bd, int kind)
{
    static const unsigned long long spins[] = {0, 2000, 20000, 200000};
    const int blocks = kind == WK_CLUSTER ? g_sms / 2 * 2 : g_sms;
    std::vector<double> d[4][4]; // [S][phase], per block
    std::vector<uint64_t> w;
    int missing = 0;
    for (int si = 0; si < 4; si++) {
        ikp_capture *cap = capture(b, w, bd, 0, kind, spins[si], 0, blocks);
        if (!cap) return;
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        CHECK_EQ(in->dropped, 0);
        for (int blk = 0; blk < blocks; blk++) {
            if (kind == WK_CLUSTER && blk % 2) continue; // its releaser is in the other block
            const uint32_t rel_lane = blk * 3 + (kind == WK_WARP ? 2 : 0), wait_lane = blk * 3 + 1;
            std::vector<ikp_event> rel = events(cap, rel_lane, W_REL), wt = events(cap, wait_lane, W_WAIT),
                                   af = events(cap, wait_lane, W_AFTER), is = events(cap, wait_lane, W_INST),
                                   sc = events(cap, wait_lane, W_SCOPE);
            if (rel.size() != 4 || wt.size() != 1 || af.size() != 1 || is.size() != 1 || sc.size() != 1) { missing++; continue; }
            const double per = bd.ns ? 1.0 : lane_info(cap, wait_lane).cycles_per_ns; // ns -> cycles
            const int64_t x[4] = {wt[0].end_ps, af[0].start_ps, is[0].start_ps, sc[0].end_ps};
            for (int ph = 0; ph < 4; ph++) d[si][ph].push_back((x[ph] - rel[ph].start_ps) / 1000.0 * per);
        }
        ikp_capture_free(cap);
    }
    CHECK_EQ(missing, 0);
    const double tol = kind == WK_CLUSTER ? (bd.ns ? 600.0 : 1024.0) : kind == WK_MBAR ? 64.0
                       : kind == WK_WARP ? (bd.ns ? 64.0 : 32.0) : (bd.ns ? 64.0 : 8.0);
    printf("  %-11s %-19s", bd.name, kind_name[kind]);
    for (int ph = 0; ph < 4; ph++) {
        const double f = median(d[3][ph]);
        double worst = 0, lowest = 1e30;
        int off = 0, early = 0;
        for (int si = 0; si < 4; si++)
            for (double v : d[si][ph]) {
                lowest = std::min(lowest, v);
                if (v < (bd.ns ? -32.0 : 0.0)) early++; // before the release
                if (si == 0) continue;                  // S = 0: it may wait for the waiter itself
                worst = std::max(worst, std::fabs(v - f));
                if (std::fabs(v - f) > tol) off++;
            }
        CHECK(f > (bd.ns ? -32.0 : 0.0) && f < (bd.ns ? 1000.0 : 2000.0)); // a stamp read before the wait: f ~ -S
        CHECK_EQ(off, 0);
        CHECK_EQ(early, 0);
        printf(" | %s +%.0f (+-%.1f%s)", ph == 0 ? "end" : ph == 1 ? "begin" : ph == 2 ? "instant" : "scope", f, worst,
               off || early ? ", FAILED" : "");
    }
    printf(" %s\n", bd.ns ? "ns" : "cycles");
}

// 2. asynchronous waits: median region around the wait, in cycles (ns)
static double async_region(ikp_cuda_buffer &b, const build_t &bd, int what, int n)
{
    std::vector<uint64_t> w;
    std::vector<double> r;
    ikp_capture *cap = capture(b, w, bd, what, 0, 0, n, g_sms);
    if (!cap) return NAN;
    for (int blk = 0; blk < g_sms; blk++) {
        std::vector<ikp_event> a = events(cap, blk, W_ASYNC);
        if (a.size() == 1) r.push_back((a[0].end_ps - a[0].start_ps) / 1000.0 * (bd.ns ? 1.0 : lane_info(cap, blk).cycles_per_ns));
    }
    CHECK_EQ((int)r.size(), g_sms);
    ikp_capture_free(cap);
    return median(r);
}

static void asyncs(ikp_cuda_buffer &b, const build_t &bd)
{
    // a copy from global memory takes hundreds of cycles; a stamp read before
    // the wait would read a few. A bulk store of 32 KiB takes over 31 x 16
    // cycles more than one of 1 KiB (about 39 a KiB was seen on an H200)
    const double lo = bd.ns ? 32.0 : 100.0;
    const double c1 = async_region(b, bd, 1, 1), c32 = async_region(b, bd, 1, 32);
    const double b1 = async_region(b, bd, 2, 1), b32 = async_region(b, bd, 2, 32);
    CHECK(c1 >= lo && c32 >= lo);
    CHECK(b32 >= b1 + 31 * (bd.ns ? 8.0 : 16.0));
    printf("  %-11s cp.async.wait_group: 1 / 32 pieces %.0f / %.0f; cp.async.bulk.wait_group: 1 / 32 KiB %.0f / %.0f",
           bd.name, c1, c32, b1, b32);
    if (bd.run == waits_default) {
        const double g1 = async_region(b, bd, 5, 1), g32 = async_region(b, bd, 5, 32);
        CHECK(g1 >= 16 && g32 >= g1 + 64); // 31 more matrix multiplies before the wait ends
        printf("; wgmma.wait_group: 1 / 32 multiplies %.0f / %.0f", g1, g32);
    }
    printf(" %s\n", bd.ns ? "ns" : "cycles");
    // griddepcontrol.wait: ends after the primary blocks; here checked
    // against the primary block of the same multiprocessor (one clock)
    std::vector<uint64_t> w;
    for (unsigned long long spin : {20000ull, 200000ull}) {
        ikp_capture *cap = capture(b, w, bd, 3, 0, spin, 0, g_sms);
        if (!cap) return;
        int pairs = 0, early = 0;
        std::vector<double> region;
        for (int q = 0; q < g_sms; q++) {
            std::vector<ikp_event> wt = events(cap, q * 2 + 1, W_WAIT);
            if (wt.size() != 1) { CHECK(false); continue; }
            region.push_back((wt[0].end_ps - wt[0].start_ps) / 1000.0 * (bd.ns ? 1.0 : lane_info(cap, q * 2 + 1).cycles_per_ns));
            for (int p = 0; p < g_sms; p++) {
                if (lane_info(cap, p * 2).sm != lane_info(cap, q * 2 + 1).sm) continue;
                std::vector<ikp_event> rel = events(cap, p * 2, W_REL);
                if (rel.size() != 1) continue;
                pairs++;
                if (wt[0].end_ps < rel[0].start_ps) early++;
            }
        }
        CHECK(pairs > 0);
        CHECK_EQ(early, 0);
        const double m = median(region);
        // after 200,000 cycles the secondary waited out most of the primary's
        // spin (ns: at most 2.2 GHz): over half of it, where a wait that did
        // not hold reads a few cycles (the secondary starts some microseconds
        // into the spin: medians of 172,500 to 190,800 cycles on an H200);
        // after 20,000 it may start after the primary ended
        if (spin == 200000ull) CHECK(m >= 0.5 * (double)spin / (bd.ns ? 2.2 : 1.0));
        printf("  %-11s griddepcontrol.wait after %llu cycles of the primary: median region %.0f %s, %d same-SM pairs, "
               "%d ending early\n", bd.name, spin, m, bd.ns ? "ns" : "cycles", pairs, early);
        ikp_capture_free(cap);
    }
}

// 3. the handshake: two warps of one block taking turns
static void handshake(const build_t &bd)
{
    const int turns = 1000;
    const unsigned long long work = 2000;
    ikp_cuda_buffer b;
    ikp_error e;
    std::vector<uint64_t> w;
    if (ikp_cuda_buffer_create(&b, g_sms * 2, 4096, &e) != IKP_OK) { fprintf(stderr, "%s\n", e.message); CHECK(false); return; }
    ikp_capture *cap = capture(b, w, bd, 4, 0, work, turns, g_sms);
    if (!cap) { ikp_cuda_buffer_destroy(&b); return; }
    const ikp_capture_info *in = ikp_capture_get_info(cap);
    int overlaps = 0, bad_gaps = 0, gaps = 0, short_lanes = 0;
    double worst = 0;
    for (int blk = 0; blk < g_sms; blk++) {
        std::vector<ikp_event> a = events(cap, blk * 2, W_WAIT), c = events(cap, blk * 2 + 1, W_WAIT);
        CHECK_EQ((int)a.size(), turns);
        CHECK_EQ((int)c.size(), turns);
        if ((int)a.size() != turns || (int)c.size() != turns) continue;
        if (c[turns - 1].end_ps - a[0].start_ps < 2000000000ll) short_lanes++;
        for (int i = 0; i < turns; i++) {
            if (!(a[i].end_ps <= c[i].start_ps && (i + 1 == turns || c[i].end_ps <= a[i + 1].start_ps))) overlaps++;
        }
        if (bd.run != waits_default) continue;
        // the raw stamps (FORMAT.md: a lane's records after its 8 header
        // words, tag then stamp; automatic anchors are data records)
        const uint64_t cap_slots = w[1] >> 32;
        std::vector<uint32_t> sa, sc;
        for (int which = 0; which < 2; which++) {
            const uint64_t *h = &w[8 + (size_t)(blk * 2 + which) * (8 + cap_slots + 1)];
            const uint64_t stored = h[7] & 0xFFFFFFFFu;
            for (uint64_t k = 0; k < stored; k++) {
                const uint32_t tag = (uint32_t)h[8 + k];
                if (tag & 0x80000000u) continue;
                (which ? sc : sa).push_back((uint32_t)(h[8 + k] >> 32));
            }
        }
        if ((int)sa.size() != 2 * turns || (int)sc.size() != 2 * turns) { CHECK(false); continue; }
        for (int i = 0; i + 1 < turns; i++) {
            const double per_cycle = (double)(a[i + 1].start_ps - a[i].start_ps) / (double)(uint32_t)(sa[2 * i + 2] - sa[2 * i]);
            const double want = (double)(uint32_t)(sc[2 * i] - sa[2 * i + 1]) * per_cycle, got = (double)(c[i].start_ps - a[i].end_ps);
            worst = std::max(worst, std::fabs(got - want));
            gaps++;
            if (std::fabs(got - want) > 1000.0) bad_gaps++;
        }
    }
    CHECK_EQ(overlaps, 0);
    CHECK_EQ(bad_gaps, 0);
    CHECK_EQ(short_lanes, 0);
    CHECK(in->sm_exact || bd.ns);
    printf("  %-11s handshake: %d blocks x %d turns a warp, %d overlaps", bd.name, g_sms, turns, overlaps);
    if (gaps) printf(", %d gaps from their cycle difference at most %.3f ns off", gaps, worst / 1000.0);
    printf("\n");
    ikp_capture_free(cap);
    ikp_cuda_buffer_destroy(&b);
}

int main()
{
    int dev = 0;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    g_sms = p.multiProcessorCount;
    CK(cudaMalloc(&g_scratch, 16u << 20));
    CK(cudaMemset(g_scratch, 1, 16u << 20));
    ikp_cuda_buffer b;
    ikp_error e;
    if (ikp_cuda_buffer_create(&b, g_sms * 3, 64, &e) != IKP_OK) { fprintf(stderr, "%s\n", e.message); return 1; }
    printf("stamps after waits on %s (%d SMs); the stamp minus the release, the same for S = 2,000 .. 200,000 "
           "(+- the largest difference):\n", p.name, g_sms);
    for (const build_t &bd : builds)
        for (int k = 0; k < WK_BARRIER_KINDS; k++) barriers(b, bd, k);
    printf("asynchronous waits (median region):\n");
    for (const build_t &bd : builds) asyncs(b, bd);
    ikp_cuda_buffer_destroy(&b);
    printf("warps of one block taking turns:\n");
    for (const build_t &bd : builds) handshake(bd);
    CK(cudaFree(g_scratch));
    return check_report();
}
