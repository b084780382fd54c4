// make gpu-test: device recorder checks on a real GPU. Each kernel's capture
// is decoded with ikp.h and compared with what the kernel did.
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "../../ikp.h"
#include "../../ikp_cuda.cuh"
#include "../check.h"
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

void launch_ring(int blocks, int events, int pads, uint64_t *prof);
void launch_ring_staged(int blocks, int events, int pads, unsigned stage_records, int flush_every, uint64_t *prof);
void launch_staged(int blocks, int events, unsigned stage_records, int flush_every, int where, uint64_t *prof);
void launch_staged_after_finalize(unsigned *bad, uint64_t *prof);
void launch_staged_wrap(int blocks, const unsigned long long *n, const int *where, uint64_t *prof);

enum { EV_OUTER, EV_INNER, EV_MARK, EV_SPIN };

// every lane: outer { inner { } } mark(+block id); 3-D grid, 2 groups per block
__global__ void nest_kernel(uint64_t *prof)
{
    IKP_LANE(lane);
    const unsigned group = threadIdx.x / 64; // 2 groups of 2 warps
    const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    IKP_INIT(lane, prof, group, 2, threadIdx.x % 64 == 0);
    IKP_BEGIN(lane, EV_OUTER);
    IKP_BEGIN(lane, EV_INNER);
    IKP_END(lane, EV_INNER);
    IKP_END(lane, EV_OUTER);
    IKP_INSTANT(lane, EV_MARK);
    IKP_DATA(lane, EV_MARK, block * 2 + group);
    IKP_FINALIZE(lane);
}

// regions of a known minimum length: a spin of k cycles inside each
__global__ void spin_kernel(const long long *ks, int nk, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    for (int i = 0; i < nk; i++) {
        long long k = ks[i];
        IKP_BEGIN(lane, EV_SPIN);
        long long c0 = clock64();
        while (clock64() - c0 < k) {}
        IKP_END(lane, EV_SPIN);
    }
    IKP_FINALIZE(lane);
}

__global__ void many_kernel(int events, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    for (int i = 0; i < events; i++) { IKP_BEGIN(lane, 1); IKP_END(lane, 1); }
    IKP_FINALIZE(lane);
}

// A begin's record is stored by the lane's next record (ikp_cuda.cuh,
// ikpd__begin): whatever that is, and at IKP_FINALIZE if nothing follows.
// how 0: begin, instant, begin, data, anchor, begin, finalize (no end);
// how 1: two begin/end pairs into 3 slots (the second end is dropped).
__global__ void pending_kernel(int how, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    if (how == 0) {
        IKP_BEGIN(lane, 1);
        IKP_INSTANT(lane, 2);
        IKP_BEGIN(lane, 3);
        IKP_DATA(lane, 3, 77);
        IKP_ANCHOR(lane);
        IKP_BEGIN(lane, 4);
    } else {
        IKP_BEGIN(lane, 1);
        IKP_END(lane, 1);
        IKP_BEGIN(lane, 2);
        IKP_END(lane, 2);
    }
    IKP_FINALIZE(lane);
}

static std::vector<uint64_t> download(const uint64_t *d, size_t words)
{
    std::vector<uint64_t> h(words);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), d, words * 8, cudaMemcpyDeviceToHost));
    return h;
}

static ikp_capture *open(const std::vector<uint64_t> &w)
{
    ikp_capture *cap = NULL;
    ikp_error e;
    if (ikp_capture_open(w.data(), w.size(), NULL, &cap, &e) != IKP_OK) {
        fprintf(stderr, "decode: %s\n", e.message);
        return NULL;
    }
    return cap;
}

static void test_nesting_3d_grid()
{
    dim3 grid(16, 16, 24); // 6144 blocks x 2 groups = 12288 lanes
    const uint32_t lanes = 16 * 16 * 24 * 2;
    ikp_cuda_buffer buf;
    CHECK_EQ(ikp_cuda_buffer_create(&buf, lanes, 8, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, NULL), IKP_OK);
    nest_kernel<<<grid, 128>>>(buf.device);
    CK(cudaGetLastError());
    std::vector<uint64_t> w = download(buf.device, buf.num_words);
    ikp_capture *cap = open(w);
    CHECK(cap != NULL);
    if (cap) {
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        CHECK_EQ(in->active_lanes, lanes);
        CHECK_EQ(in->records, lanes * 6ull);
        CHECK_EQ(in->dropped, 0);
        CHECK_EQ(in->backwards, 0);
        CHECK_EQ(in->unfinalized_lanes, 0);
        CHECK(in->grid[0] == 16 && in->grid[1] == 16 && in->grid[2] == 24);
        ikp_lane_events ev;
        memset(&ev, 0, sizeof ev);
        int bad = 0;
        for (uint32_t l = 0; l < lanes; l++) {
            const ikp_lane_info li_v = lane_info(cap, l), *li = &li_v;
            if (li->block != l / 2 || li->group != l % 2 || li->sm == IKP_NO_SM) bad++;
            if (ikp_decode_lane(cap, l, &ev, NULL) != IKP_OK || ev.count != 3) { bad++; continue; }
            const ikp_event *o = &ev.events[0], *i = &ev.events[1], *m = &ev.events[2];
            if (o->kind != IKP_EVENT_REGION || o->id != EV_OUTER || i->kind != IKP_EVENT_REGION || i->id != EV_INNER) bad++;
            if (!(o->start_ps <= i->start_ps && i->end_ps <= o->end_ps && i->start_ps <= i->end_ps)) bad++; // nesting, monotonic
            if (m->kind != IKP_EVENT_INSTANT || m->start_ps < o->end_ps || !(m->flags & IKP_EVENT_HAS_BEGIN_DATA) || m->begin_data != l) bad++;
            if (o->track != 0 || i->track != 0) bad++;
        }
        CHECK_EQ(bad, 0);
        ikp_lane_events_free(cap, &ev);
        ikp_capture_free(cap);
    }
    // launched again without a reset: every lane is found claimed
    nest_kernel<<<grid, 128>>>(buf.device);
    CK(cudaGetLastError());
    w = download(buf.device, buf.num_words);
    cap = open(w);
    if (cap) { CHECK_EQ(ikp_capture_get_info(cap)->claimed_twice, lanes); ikp_capture_free(cap); }
    ikp_cuda_buffer_destroy(&buf);
}

static void test_min_duration()
{
    std::vector<long long> ks = {16, 100, 1000, 10000, 100000, 1000000, 10000000};
    long long *dks;
    CK(cudaMalloc(&dks, ks.size() * sizeof(long long)));
    CK(cudaMemcpy(dks, ks.data(), ks.size() * sizeof(long long), cudaMemcpyHostToDevice));
    ikp_cuda_buffer buf;
    CHECK_EQ(ikp_cuda_buffer_create(&buf, 4, 64, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, NULL), IKP_OK);
    spin_kernel<<<4, 32>>>(dks, (int)ks.size(), buf.device);
    CK(cudaGetLastError());
    std::vector<uint64_t> w = download(buf.device, buf.num_words);
    ikp_capture *cap = open(w);
    if (cap) {
        ikp_lane_events ev;
        memset(&ev, 0, sizeof ev);
        for (uint32_t l = 0; l < 4; l++) {
            double rate = lane_info(cap, l).cycles_per_ns;
            CHECK(rate > 0.5 && rate < 3.0);
            CHECK_EQ(ikp_decode_lane(cap, l, &ev, NULL), IKP_OK);
            CHECK_EQ(ev.count, ks.size());
            for (size_t i = 0; i < ev.count && i < ks.size(); i++) {
                double cycles = (ev.events[i].end_ps - ev.events[i].start_ps) / 1000.0 * rate;
                CHECK(cycles >= ks[i] * 0.999 - 1); // never shorter than the spin
                if (l == 0) printf("  spin %9lld cycles: decoded %12.1f cycles (%.1f ns)\n", ks[i], cycles,
                                   (ev.events[i].end_ps - ev.events[i].start_ps) / 1000.0);
            }
        }
        ikp_lane_events_free(cap, &ev);
        ikp_capture_free(cap);
    }
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaFree(dks));
}

static void test_pending_begin()
{
    for (int how = 0; how < 2; how++) {
        const uint32_t capy = how == 0 ? 16 : 3;
        ikp_cuda_buffer buf;
        CHECK_EQ(ikp_cuda_buffer_create(&buf, 2, capy, NULL), IKP_OK);
        CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, NULL), IKP_OK);
        pending_kernel<<<2, 64>>>(how, buf.device);
        CK(cudaGetLastError());
        std::vector<uint64_t> w = download(buf.device, buf.num_words);
        // the records as stored, in slot order: tag (low word) and stamp (high)
        const uint64_t *rec = w.data() + IKP_WIRE_HEADER_WORDS + IKP_WIRE_LANE_WORDS;
        const uint32_t want0[] = {1u << 2 | IKP_WIRE_KIND_BEGIN, 2u << 2 | IKP_WIRE_KIND_INSTANT,
                                  3u << 2 | IKP_WIRE_KIND_BEGIN, 3u << 2 | IKP_WIRE_DATA_MARK,
                                  IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR, IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR | 1u << 2,
                                  4u << 2 | IKP_WIRE_KIND_BEGIN};
        const uint32_t want1[] = {1u << 2 | IKP_WIRE_KIND_BEGIN, 1u << 2 | IKP_WIRE_KIND_END, 2u << 2 | IKP_WIRE_KIND_BEGIN};
        const uint32_t *want = how == 0 ? want0 : want1;
        const size_t nw = how == 0 ? 7 : 3;
        // (a begin's tag bits 16..29 carry ticks: FORMAT.md "Ticks")
        const uint32_t ticks = IKP_WIRE_TICKS_MASK << IKP_WIRE_TICKS_SHIFT;
        int order = 1;
        for (size_t i = 0; i < nw; i++) order &= ((uint32_t)rec[i] & ~ticks) == want[i];
        CHECK(order);
        if (how == 0) {
            CHECK_EQ((uint32_t)(rec[3] >> 32), 77u);
            // the timed records (begin 1, instant 2, begin 3, begin 4) in time order
            const uint32_t t1 = (uint32_t)(rec[0] >> 32), t2 = (uint32_t)(rec[1] >> 32), t3 = (uint32_t)(rec[2] >> 32),
                           t4 = (uint32_t)(rec[6] >> 32);
            CHECK(t2 - t1 < 1000000u && t3 - t2 < 1000000u && t4 - t3 < 1000000u); // mod 2^32: forwards
        }
        ikp_capture *cap = open(w);
        CHECK(cap != NULL);
        if (cap) {
            const ikp_capture_info *in = ikp_capture_get_info(cap);
            CHECK_EQ(in->records, 2 * nw);
            CHECK_EQ(in->dropped, how == 0 ? 0u : 2u);
            CHECK_EQ(in->backwards, 0);
            CHECK_EQ(in->unfinalized_lanes, 0);
            ikp_stats *st = NULL;
            CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
            if (st) {
                CHECK_EQ(st->unmatched_begin, how == 0 ? 6u : 2u);
                CHECK_EQ(st->regions, how == 0 ? 0u : 2u);
                CHECK_EQ(st->instants, how == 0 ? 2u : 0u);
                ikp_stats_free(st);
            }
            ikp_capture_free(cap);
        }
        ikp_cuda_buffer_destroy(&buf);
    }
}

static void test_overflow_guard()
{
    // capacity 8, 100 events per lane; guard words after the buffer must stay intact
    const uint32_t lanes = 64, capy = 8, guard = 4096;
    size_t words = ikp_buffer_words(lanes, capy);
    uint64_t *d;
    CK(cudaMalloc(&d, (words + guard) * 8));
    std::vector<uint64_t> init(words + guard, 0);
    ikp_buffer_header(init.data(), lanes, capy, 0, NULL);
    for (size_t i = words; i < words + guard; i++) init[i] = 0x5A5A5A5A5A5A5A5Aull;
    CK(cudaMemcpy(d, init.data(), init.size() * 8, cudaMemcpyHostToDevice));
    many_kernel<<<lanes, 64>>>(50, d);
    CK(cudaGetLastError());
    std::vector<uint64_t> w = download(d, words + guard);
    int guard_ok = 1;
    for (size_t i = words; i < words + guard; i++) guard_ok &= w[i] == 0x5A5A5A5A5A5A5A5Aull;
    CHECK(guard_ok);
    w.resize(words);
    ikp_capture *cap = open(w);
    if (cap) {
        CHECK_EQ(ikp_capture_get_info(cap)->records, lanes * 8ull);
        CHECK_EQ(ikp_capture_get_info(cap)->dropped, lanes * 92ull);
        CHECK_EQ(lane_info(cap, 7).dropped, 92);
        ikp_capture_free(cap);
    }
    // a grid larger than the buffer: lanes refused and counted, nothing written past it
    CK(cudaMemcpy(d, init.data(), init.size() * 8, cudaMemcpyHostToDevice));
    many_kernel<<<lanes + 36, 64>>>(5, d);
    CK(cudaGetLastError());
    w = download(d, words + guard);
    guard_ok = 1;
    for (size_t i = words; i < words + guard; i++) guard_ok &= w[i] == 0x5A5A5A5A5A5A5A5Aull;
    CHECK(guard_ok);
    w.resize(words);
    cap = open(w);
    if (cap) {
        CHECK_EQ(ikp_capture_get_info(cap)->refused_lanes, 36);
        CHECK_EQ(ikp_capture_get_info(cap)->lanes_needed, lanes + 36);
        CHECK_EQ(ikp_capture_get_info(cap)->active_lanes, lanes);
        ikp_capture_free(cap);
    }
    // a buffer never initialised: the kernel writes nothing, the host says so
    std::vector<uint64_t> junk(words + guard, 0xABABABABABABABABull);
    CK(cudaMemcpy(d, junk.data(), junk.size() * 8, cudaMemcpyHostToDevice));
    many_kernel<<<lanes, 64>>>(5, d);
    CK(cudaGetLastError());
    w = download(d, words + guard);
    CHECK(w == junk);
    ikp_capture *c2 = NULL;
    ikp_error e;
    CHECK(ikp_capture_open(w.data(), words, NULL, &c2, &e) != IKP_OK);
    CK(cudaFree(d));
}

// runs the ring kernel (ring_kernel.cuh) for 100 iterations on 8 blocks into
// a ring of 32 slots a lane; stage: 0 not staged, else a shared ring of that
// many records flushed every flush_every iterations. The capture of the
// words downloaded into w (which it reads: w must outlive it), or NULL.
static ikp_capture *ring_capture(int pads, unsigned stage_records, int flush_every, std::vector<uint64_t> &w)
{
    ikp_cuda_buffer buf;
    CHECK_EQ(ikp_cuda_buffer_create(&buf, 8, 40, NULL), IKP_OK); // ring of 32
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, NULL), IKP_OK);
    if (stage_records) launch_ring_staged(8, 100, pads, stage_records, flush_every, buf.device);
    else launch_ring(8, 100, pads, buf.device);
    CK(cudaGetLastError());
    w = download(buf.device, buf.num_words);
    ikp_cuda_buffer_destroy(&buf);
    return open(w);
}

// 100 instants with payloads 0..99 (200 records, in pairs). Kept: the newest
// `kept` records, intact.
static void ring_case(const char *what, unsigned stage_records, int flush_every, unsigned kept)
{
    std::vector<uint64_t> w;
    ikp_capture *cap = ring_capture(0, stage_records, flush_every, w);
    if (cap) {
        ikp_lane_events ev;
        memset(&ev, 0, sizeof ev);
        CHECK(lane_info(cap, 3).flags & IKP_LANE_RING);
        CHECK_EQ(lane_info(cap, 3).records, kept);
        CHECK_EQ(lane_info(cap, 3).dropped, 200 - kept);
        CHECK_EQ(ikp_decode_lane(cap, 3, &ev, NULL), IKP_OK);
        CHECK_EQ(ev.count, kept / 2); // the newest instants, each with its payload
        int ok = 1;
        for (size_t i = 0; i < ev.count; i++) ok &= ev.events[i].begin_data == 100 - kept / 2 + i;
        if (!ok) printf("  %s: wrong payloads\n", what);
        CHECK(ok);
        ikp_lane_events_free(cap, &ev);
        ikp_capture_free(cap);
    }
}

// 100 x (an instant, then a region: 3 records in 4 slots, the instant's
// second slot a pad): the newest 8 iterations are kept, 24 records, and 276
// counted as overwritten (records, not slots)
static void ring_pads_case(const char *what, unsigned stage_records)
{
    std::vector<uint64_t> w;
    ikp_capture *cap = ring_capture(1, stage_records, 0, w);
    if (cap) {
        ikp_lane_events ev;
        memset(&ev, 0, sizeof ev);
        CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 0);
        CHECK_EQ(ikp_capture_get_info(cap)->invalid, 0);
        CHECK_EQ(lane_info(cap, 3).records, 24);
        CHECK_EQ(lane_info(cap, 3).dropped, 276);
        CHECK_EQ(ikp_decode_lane(cap, 3, &ev, NULL), IKP_OK);
        CHECK_EQ(ev.count, 16);
        size_t regions = 0, instants = 0;
        for (size_t i = 0; i < ev.count; i++) {
            regions += ev.events[i].kind == IKP_EVENT_REGION && ev.events[i].id == 5;
            instants += ev.events[i].kind == IKP_EVENT_INSTANT && ev.events[i].id == 4;
        }
        if (regions != 8 || instants != 8) printf("  %s: %zu regions, %zu instants\n", what, regions, instants);
        CHECK_EQ(regions, 8);
        CHECK_EQ(instants, 8);
        ikp_lane_events_free(cap, &ev);
        ikp_capture_free(cap);
    }
}

static void test_ring()
{
    ring_pads_case("ring with pads", 0);
    ring_pads_case("ring with pads, staged", 256);
    ring_case("ring", 0, 0, 32);
    ring_case("ring, staged, flushed every 5 instants", 16, 5, 32);
    ring_case("ring, staged, flushed at the end", 256, 0, 32);
    ring_case("ring, stage of 8 overwritten before the flush", 8, 0, 8);
    ring_case("ring, stage of 12 (ring of 8) flushed every 3 instants", 12, 3, 32);
}

// runs staged_kernel (staged.cu) on `blocks` blocks; checks every lane: `stored`
// records kept, `dropped` counted, and the kept regions are events
// 0, 1, ... with their payloads, in order and non-decreasing in time
static void staged_case(const char *what, int events, unsigned stage_records, int flush_every, int where,
                        uint32_t capacity, uint32_t stored, uint32_t dropped)
{
    const int blocks = 40;
    ikp_cuda_buffer buf;
    CHECK_EQ(ikp_cuda_buffer_create(&buf, blocks * 2, capacity, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, NULL), IKP_OK);
    launch_staged(blocks, events, stage_records, flush_every, where, buf.device);
    CK(cudaGetLastError());
    std::vector<uint64_t> w = download(buf.device, buf.num_words);
    ikp_capture *cap = open(w);
    CHECK(cap != NULL);
    if (!cap) { ikp_cuda_buffer_destroy(&buf); return; }
    ikp_lane_events ev;
    memset(&ev, 0, sizeof ev);
    int bad = 0;
    for (uint32_t l = 0; l < blocks * 2u; l++) {
        const ikp_lane_info li_v = lane_info(cap, l), *li = &li_v;
        if (li->records != stored || li->dropped != dropped) {
            if (!bad) printf("  %s: lane %u stored %u dropped %u, expected %u and %u\n", what, l,
                             (unsigned)li->records, (unsigned)li->dropped, stored, dropped);
            bad++;
            continue;
        }
        if (ikp_decode_lane(cap, l, &ev, NULL) != IKP_OK) { bad++; continue; }
        const size_t whole = stored / 3; // complete begin/payload/end triples
        if (ev.count < whole) { bad++; continue; }
        for (size_t i = 0; i < whole; i++) {
            const ikp_event *e = &ev.events[i];
            if (e->kind != IKP_EVENT_REGION || e->id != 1 || e->begin_data != i || e->end_ps < e->start_ps ||
                (i && e->start_ps < ev.events[i - 1].end_ps))
                bad++;
        }
    }
    if (bad) printf("  %s: %d bad lanes\n", what, bad);
    CHECK_EQ(bad, 0);
    ikp_lane_events_free(cap, &ev);
    ikp_capture_free(cap);
    ikp_cuda_buffer_destroy(&buf);
}

static void test_staged()
{
    staged_case("staged, flushed at the end", 100, 512, 0, 0, 400, 300, 0);
    staged_case("staged, flushed every 7 events", 100, 32, 7, 0, 400, 300, 0);
    staged_case("staged, flushed every event", 50, 3, 1, 0, 200, 150, 0);
    staged_case("staged, flushed twice every 5 events", 100, 15, -5, 0, 400, 300, 0);
    staged_case("staged, 300 records a flush", 1000, 300, 100, 0, 3200, 3000, 0);
    staged_case("stage overflows: lane closes", 100, 64, 0, 0, 400, 64, 236);
    staged_case("stage overflows between flushes", 100, 64, 30, 0, 400, 64, 236);
    // the second flush of each pair has nothing to move: the closed lane stays closed
    staged_case("stage overflows between flushes, flushed twice", 100, 64, -30, 0, 400, 64, 236);
    staged_case("profile buffer fills first", 100, 512, 0, 0, 100, 100, 200);
    staged_case("profile buffer fills across flushes", 100, 40, 10, 0, 100, 100, 200);
    staged_case("global pointer refused: every record dropped", 100, 512, 0, 1, 400, 0, 300);
    // 300 records in a stage of 200: they fit only because the second IKP_STAGE flushes
    staged_case("records before the stage dropped; IKP_STAGE again flushes", 100, 200, 0, 2, 400, 300, 2);
    // records after IKP_FINALIZE: nothing stored, nothing counted, no shared memory written
    {
        ikp_cuda_buffer buf;
        CHECK_EQ(ikp_cuda_buffer_create(&buf, 1, 64, NULL), IKP_OK);
        CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, NULL), IKP_OK);
        unsigned *bad, nbad = 1;
        CK(cudaMalloc(&bad, sizeof *bad));
        CK(cudaMemset(bad, 0, sizeof *bad));
        launch_staged_after_finalize(bad, buf.device);
        CK(cudaGetLastError());
        CK(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
        CHECK_EQ(nbad, 0u);
        std::vector<uint64_t> w = download(buf.device, buf.num_words);
        ikp_capture *cap = open(w);
        CHECK(cap != NULL);
        if (cap) {
            const ikp_lane_info li = lane_info(cap, 0);
            CHECK_EQ(li.records, 10u);
            CHECK_EQ(li.dropped, 0u);
            ikp_capture_free(cap);
        }
        CK(cudaFree(bad));
        ikp_cuda_buffer_destroy(&buf);
    }
}

// a staged bounded lane counts its records since the flush modulo 2^29 (in
// bytes, in 32 bits): past that, the lane still stores a prefix, closes and
// counts the rest as dropped, exactly up to the stage's size + 2^29 records
// between two flushes (a lower bound past that), never 0 with records
// dropped. One lane a block, a stage of 64 records, each case its own
// block of one launch
static void test_staged_wrap()
{
    const unsigned long long W = 1ull << 29;
    struct {
        const char *what;
        unsigned long long n;
        int where;
        unsigned stored;
        unsigned long long dropped;
    } c[] = {
        {"2^29 + 10 records (the count reads 10), a flush, 5 more", W + 10, 2, 64, W + 10 - 64 + 5},
        {"2^29 + 64 records (the count reads the stage's 64)", W + 64, 0, 64, W},
        {"2^29 - 1 records", W - 1, 0, 64, W - 1 - 64},
        {"2^29 records, never staged (the count reads 0)", W, 1, 0, W},
        {"64 records, a full stage", 64, 0, 64, 0},
        {"65 records", 65, 0, 64, 1},
    };
    const int nc = (int)(sizeof c / sizeof c[0]);
    unsigned long long hn[sizeof c / sizeof c[0]];
    int hw[sizeof c / sizeof c[0]];
    for (int i = 0; i < nc; i++) hn[i] = c[i].n, hw[i] = c[i].where;
    unsigned long long *dn;
    int *dw;
    CK(cudaMalloc(&dn, sizeof hn));
    CK(cudaMalloc(&dw, sizeof hw));
    CK(cudaMemcpy(dn, hn, sizeof hn, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dw, hw, sizeof hw, cudaMemcpyHostToDevice));
    ikp_cuda_buffer buf;
    CHECK_EQ(ikp_cuda_buffer_create(&buf, (uint32_t)nc, 128, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, NULL), IKP_OK);
    launch_staged_wrap(nc, dn, dw, buf.device);
    CK(cudaGetLastError());
    std::vector<uint64_t> w = download(buf.device, buf.num_words);
    ikp_capture *cap = open(w);
    CHECK(cap != NULL);
    if (cap) {
        for (int i = 0; i < nc; i++) {
            const ikp_lane_info li = lane_info(cap, (uint32_t)i);
            if (li.records != c[i].stored || li.dropped != c[i].dropped)
                printf("  staged wrap, %s: stored %u dropped %llu, expected %u and %llu\n", c[i].what,
                       (unsigned)li.records, (unsigned long long)li.dropped, c[i].stored, c[i].dropped);
            CHECK_EQ((unsigned)li.records, c[i].stored);
            CHECK_EQ((unsigned long long)li.dropped, c[i].dropped);
        }
        ikp_capture_free(cap);
    }
    CK(cudaFree(dn));
    CK(cudaFree(dw));
    ikp_cuda_buffer_destroy(&buf);
}

static int64_t realtime_ns()
{
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

// host time: the buffer's readings (at reset and download) place the kernel's
// events on CLOCK_REALTIME between host clock reads taken before the launch
// and after it ended; the standalone reading agrees with them
static void test_host_time()
{
    ikp_cuda_buffer buf;
    ikp_error e;
    CHECK_EQ(ikp_cuda_buffer_create(&buf, 1, 64, NULL), IKP_OK);
    CHECK(buf.gpu.ordinal >= 0 && buf.gpu.host[0] != 0);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, 0, NULL), IKP_OK);
    CHECK_EQ(buf.num_clock, 1);
    const long long ks[1] = {2000000}; // ~1 ms
    long long *dks;
    CK(cudaMalloc(&dks, sizeof ks));
    CK(cudaMemcpy(dks, ks, sizeof ks, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize());
    const int64_t before = realtime_ns();
    spin_kernel<<<1, 32>>>(dks, 1, buf.device);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const int64_t after = realtime_ns();
    std::vector<uint64_t> w(buf.num_words);
    CHECK_EQ(ikp_cuda_buffer_download(&buf, 0, w.data(), NULL), IKP_OK);
    CHECK_EQ(buf.num_clock, 2);
    ikp_decode_options o;
    memset(&o, 0, sizeof o);
    o.clock = buf.clock;
    o.num_clock = buf.num_clock;
    o.device = &buf.gpu;
    ikp_capture *cap = NULL;
    CHECK_EQ(ikp_capture_open(w.data(), w.size(), &o, &cap, &e), IKP_OK);
    if (cap) {
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        ikp_lane_events ev;
        memset(&ev, 0, sizeof ev);
        CHECK(in->host_time_known);
        CHECK(in->host_zero_uncertainty_ns < 5000);
        if (ikp_decode_lane(cap, 0, &ev, NULL) == IKP_OK) {
            const int64_t u = in->host_zero_uncertainty_ns;
            const int64_t t0 = in->host_zero_ns, t1 = in->host_zero_ns + ev.events[ev.count - 1].end_ps / 1000;
            printf("host time: kernel region %lld .. %lld ns after the host read before the launch (+- %lld ns); "
                   "the read after it came %lld ns after its end\n", (long long)(t0 - before), (long long)(t1 - before),
                   (long long)u, (long long)(after - t1));
            CHECK(ev.count >= 1 && t0 + u >= before && t1 - u <= after);
            ikp_lane_events_free(cap, &ev);
        } else CHECK(0);
        const ikp_device_id *d = ikp_capture_device(cap);
        CHECK(d && memcmp(d->uuid, buf.gpu.uuid, 16) == 0);
        ikp_capture_free(cap);
    }
    ikp_clock_sync one;
    CHECK_EQ(ikp_cuda_clock_reading(&one, &e), IKP_OK);
    /* GPU - host offsets of the readings agree within their uncertainties and 100 ns per ms */
    int64_t o1 = (int64_t)(one.gpu_ns - (uint64_t)one.host_ns), o0 = (int64_t)(buf.clock[0].gpu_ns - (uint64_t)buf.clock[0].host_ns);
    int64_t dt_ms = (int64_t)(one.gpu_ns - buf.clock[0].gpu_ns) / 1000000;
    CHECK(std::llabs(o1 - o0) <= (int64_t)(one.uncertainty_ns + buf.clock[0].uncertainty_ns) + 100 * dt_ms + 100);
    printf("host time: GPU - host %+lld ns +- %u (reset), %+lld ns +- %u (%lld ms later)\n", (long long)o0,
           buf.clock[0].uncertainty_ns, (long long)o1, one.uncertainty_ns, (long long)dt_ms);
    CK(cudaFree(dks));
    ikp_cuda_buffer_destroy(&buf);
}

int main()
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
    test_nesting_3d_grid();
    test_min_duration();
    test_pending_begin();
    test_overflow_guard();
    test_ring();
    test_staged();
    test_staged_wrap();
    test_host_time();
    return check_report();
}
