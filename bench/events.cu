// make bench-gpu: the cost per event of IKP as a user records events, through
// the public macros only, on the kernel shape of bench/proton_events.py.
// Built four ways (default; -DIKP_RING=1; -DIKP_STAGED=1; both) against the
// current headers (-I.) and the previous release's (-Ibench/prev); run by
// bench/bench_gpu.py, which puts them beside Triton's Proton in one table.
//
// Kernel: SMs * WPS / 4 blocks of 128 threads, one IKP lane per warp (its
// lane 0 records). K iterations of R regions, each W/R dependent FMAs, in
// tiles of 512/R iterations (a loop of tiles around a loop of iterations, as
// a persistent kernel's); the event id is computed at run time ((it & 3) * R
// + r), as when a kernel's events depend on its loop. Each region's work is
// pinned inside it (IKP_PIN after the begin and before the end), as README
// tells users to do for register math: unpinned, nvcc moves the FMAs of all
// but the last region of an iteration past their stamps, and `ikp
// check-sass` reports those regions empty (Triton keeps Proton's scopes
// around their FMAs, so pinned is the like-for-like shape). ON=false: the
// same kernel with no IKP macro.
// Capacity: every record kept (2*R*K + 64 a lane) in bounded builds; a
// 256-record ring a lane in ring builds, like Proton's per-warp ring.
// Staged bounded builds flush after each tile (1024 records: the stage's
// size), where GUIDE.md says to flush; staged ring builds only at
// IKP_FINALIZE.
// Two more builds, for the rows beside the table: -DEVENTS_UNPINNED=1 (the
// default build with the work not pinned) and -DEVENTS_FLUSH_EACH=1 (the
// staged build testing in every iteration whether to flush, in one loop).
// And four floors, not recorders (no IKP macro but IKP_PIN): what a timer
// read and a store per event cost in this kernel, with no flush (and no
// check or count but in the fourth). The first two record as Proton does:
// a ring of 256 records a warp in shared memory, its index advanced once
// an iteration (the ring wraps between iterations only), each record one
// 32-bit clock read, its tag and one 8-byte store at a constant offset,
// copied to global memory at the end.
// -DEVENTS_FLOOR=1 stores each record right after its stamp, as Proton
// does; -DEVENTS_FLOOR=2 stores a region's two records after its end
// stamp, the end's first, as IKP's code asks. -DEVENTS_FLOOR=3 is the
// second in global memory instead, where IKP's default build stores: no
// ring, every record kept (the default build's 2*R*K a lane), at a
// constant offset from an address advanced once an iteration.
// -DEVENTS_FLOOR=4 is the second with the check of IKP's bounded builds
// added, in the same instructions: before each region's end stamp one
// compare of the slots left with 1 decides whether its two records are
// stored, and one saturating decrement takes them (the slots left start at
// 2^30 on the recording lane, so none is ever dropped, and at 0 on the
// others). Their check: the last 256 records of each lane (in the ring, or
// among all of them for the third) hold their tags where they belong, and
// each of those regions' end stamp is at or after its begin stamp.
// Timing: cudaEvents around each launch, median of 20 after 5 warm-ups; the
// buffer is reset before each recording launch, outside the timed span.
// After each configuration the capture is decoded and its record counts
// checked. Prints one JSON line per configuration; exit 1 on a failed check.
//
// With IKP_EVENTS_DUMP=PREFIX in the environment each configuration's buffer
// is also written to PREFIX<WPS>w_R<R>_<W>.bin (bench_gpu.py reads the
// region lengths from them).
//
// Usage: events [--quick]     (--quick: K = 200 instead of 4000)
#ifndef EVENTS_UNPINNED
#define EVENTS_UNPINNED 0
#endif
#ifndef EVENTS_FLUSH_EACH
#define EVENTS_FLUSH_EACH 0
#endif
#ifndef EVENTS_FLOOR
#define EVENTS_FLOOR 0
#endif
#include "ikp_cuda.cuh"
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "ikp.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "events: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const int N_WARM = 5, N_RUNS = 20, RING = 256;
// stage records a lane: staged ring, the ring itself; staged bounded, room for
// the 1024 records made between two flushes (unstaged builds declare no stage)
#define STAGE (IKP_RING ? 256 : 1024)
static const char *BUILD = EVENTS_FLOOR == 1   ? "floor: Proton's records, no check"
                           : EVENTS_FLOOR == 2 ? "floor: IKP's pairs, no check"
                           : EVENTS_FLOOR == 3 ? "floor: IKP's pairs to global memory, no check"
                           : EVENTS_FLOOR == 4 ? "floor: IKP's pairs, IKP's check"
                           : EVENTS_UNPINNED   ? "default, work not pinned"
                           : EVENTS_FLUSH_EACH ? "staged, flush tested each iteration"
                           : IKP_STAGED        ? (IKP_RING ? "staged ring" : "staged")
                                               : (IKP_RING ? "ring" : "default");
constexpr bool PINNED = !EVENTS_UNPINNED;
static_assert(!(EVENTS_UNPINNED && (IKP_STAGED || IKP_RING)) && !(EVENTS_FLUSH_EACH && (IKP_RING || !IKP_STAGED)) &&
                  !(EVENTS_UNPINNED && EVENTS_FLUSH_EACH) &&
                  !(EVENTS_FLOOR && (IKP_STAGED || IKP_RING || EVENTS_UNPINNED || EVENTS_FLUSH_EACH)),
              "EVENTS_UNPINNED is a default build, EVENTS_FLUSH_EACH a staged bounded build, EVENTS_FLOOR neither");
constexpr int FLOOR_RING = 256; // records a warp in a floor's ring

// a floor's 32-bit clock read and its 8-byte shared-memory store, where w
__device__ __forceinline__ unsigned floor_stamp()
{
    unsigned t;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(t)::"memory");
    return t;
}
// the same read after w is known, as IKP's stamp (w an input)
__device__ __forceinline__ unsigned floor_stamp_after(unsigned w)
{
    unsigned t;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(t) : "r"(w) : "memory");
    return t;
}
__device__ __forceinline__ void floor_store(unsigned w, unsigned slot, unsigned tag, unsigned v)
{
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %0, 0;\n\t@q st.shared.v2.u32 [%1], {%2, %3};\n\t}" ::"r"(w),
                 "r"(slot), "r"(tag), "r"(v)
                 : "memory");
}
// the same to global memory
__device__ __forceinline__ void floor_gstore(unsigned w, unsigned long long *slot, unsigned tag, unsigned v)
{
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %0, 0;\n\t@q st.global.v2.u32 [%1], {%2, %3};\n\t}" ::"r"(w),
                 "l"(slot), "r"(tag), "r"(v)
                 : "memory");
}
// a floor's slots for one region's two records, r-th of an iteration, stored
// where FLOOR_W (floor 4: where slots are left)
#if EVENTS_FLOOR == 4
#define FLOOR_W room
#else
#define FLOOR_W writes
#endif
#if EVENTS_FLOOR == 3
#define FLOOR_STORE(r, end, tag, v) floor_gstore(FLOOR_W, slots + 2 * (r) + (end), tag, v)
#else
#define FLOOR_STORE(r, end, tag, v) floor_store(FLOOR_W, slots + 16 * (r) + 8 * (end), tag, v)
#endif

template <bool ON, int R, int W>
__global__ void __launch_bounds__(128) events_kernel(float *sink, int k, uint64_t *prof)
{
    const unsigned warp = threadIdx.x / 32;
    float x = (threadIdx.x % 128) * 1e-3f;
    IKP_SHARED_STAGE(stage, 4, STAGE);
    IKP_LANE(lane);
#if EVENTS_FLOOR
    unsigned writes = threadIdx.x % 32 == 0;
    asm volatile("" : "+r"(writes)); // as IKP's: the compiler may not unswitch on it
#if EVENTS_FLOOR == 4
    int left = writes ? 1 << 30 : 0; // floor 4's slots left (IKP's bounded check)
#endif
#if EVENTS_FLOOR == 3
    // this lane's records, all of them (2 * R * k), from prof (lane 0's over the
    // buffer's header, which the floor does not decode): the next iteration's slots
    unsigned long long *next = (unsigned long long *)prof + (size_t)(blockIdx.x * 4 + warp) * (2u * R * (unsigned)k);
#else
    __shared__ __align__(16) unsigned long long ring[4][FLOOR_RING];
    const unsigned base = (unsigned)__cvta_generic_to_shared(ring[warp]);
    unsigned idx = 0;
#endif
    (void)lane;
    (void)stage;
#else
    if constexpr (ON) {
        IKP_INIT(lane, prof, warp, 4, threadIdx.x % 32 == 0);
        IKP_STAGE(lane, stage[warp], STAGE);
    }
#endif
    // not unrolled, as Triton leaves Proton's loop: unrolling by 4 would make
    // the event ids compile-time constants
    constexpr int PER_FLUSH = 512 / R; // iterations a tile: 1024 records, the stage
    const int tile = EVENTS_FLUSH_EACH ? k : PER_FLUSH;
#pragma unroll 1
    for (int t0 = 0; t0 < k; t0 += tile) {
        const int t1 = t0 + tile < k ? t0 + tile : k;
#pragma unroll 1
        for (int it = t0; it < t1; it++) {
            const unsigned ev0 = (it & 3) * R;
#if EVENTS_FLOOR == 3
            unsigned long long *const slots = next; // this iteration's 2R slots (next: below)
#elif EVENTS_FLOOR
            const unsigned slots = base + (idx % FLOOR_RING) * 8u; // this iteration's 2R slots
            idx += 2 * R;
#endif
#pragma unroll
            for (int r = 0; r < R; r++) {
#if EVENTS_FLOOR
                unsigned tb = 0;
                if constexpr (ON) {
                    tb = floor_stamp();
#if EVENTS_FLOOR == 1
                    FLOOR_STORE(r, 0, IKP_WIRE_TAG(ev0 + r, IKP_WIRE_KIND_BEGIN), tb);
#endif
                }
#else
                if constexpr (ON) IKP_BEGIN(lane, ev0 + r);
#endif
                if constexpr (ON && PINNED) IKP_PIN(x);
#pragma unroll
                for (int j = 0; j < W / R; j++) x = fmaf(x, 1.0001f, 0.5f);
                if constexpr (ON && PINNED) IKP_PIN(x);
#if EVENTS_FLOOR
                if constexpr (ON) {
#if EVENTS_FLOOR == 4
                    const unsigned room = left > 1; // IKP's check, before the stamp as IKP's
                    const unsigned te = floor_stamp_after(room);
#else
                    const unsigned te = floor_stamp();
#endif
                    FLOOR_STORE(r, 1, IKP_WIRE_TAG(ev0 + r, IKP_WIRE_KIND_END), te);
                    if (EVENTS_FLOOR >= 2) FLOOR_STORE(r, 0, IKP_WIRE_TAG(ev0 + r, IKP_WIRE_KIND_BEGIN), tb);
#if EVENTS_FLOOR == 4
                    left = __viaddmax_s32(left, -2, 0);
#endif
                }
#else
                if constexpr (ON) IKP_END(lane, ev0 + r);
#endif
            }
#if EVENTS_FLOOR == 3
            next += 2 * R; // after the stores, as the default build advances its slot
#endif
            if constexpr (ON && EVENTS_FLUSH_EACH) {
                if ((it + 1) % PER_FLUSH == 0) IKP_FLUSH(lane);
            }
        }
        // a bounded stage is flushed after each tile (no code unless staged)
        if constexpr (ON && !IKP_RING && !EVENTS_FLUSH_EACH) IKP_FLUSH(lane);
    }
#if EVENTS_FLOOR == 1 || EVENTS_FLOOR == 2 || EVENTS_FLOOR == 4
    if constexpr (ON) { // the ring to global memory: lane l's at prof + l * FLOOR_RING
        __syncwarp();
        if (writes)
            for (int i = 0; i < FLOOR_RING; i++) prof[(blockIdx.x * 4 + warp) * FLOOR_RING + i] = ring[warp][i];
    }
#elif !EVENTS_FLOOR
    if constexpr (ON) IKP_FINALIZE(lane);
#endif
    if (x == 12345.f) sink[blockIdx.x * 128 + threadIdx.x] = x;
}

// median launch time (ms) of N_RUNS after `warm` warm-ups
template <bool ON, int R, int W>
static float timed(int blocks, float *sink, int k, ikp_cuda_buffer *buf, int warm)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int i = 0; i < warm + N_RUNS; i++) {
        if (ON) {
            ikp_error err;
            if (ikp_cuda_buffer_reset(buf, 0, &err) != IKP_OK) {
                fprintf(stderr, "events: ikp_cuda_buffer_reset: %s\n", err.message);
                exit(1);
            }
        }
        CK(cudaEventRecord(a));
        events_kernel<ON, R, W><<<blocks, 128>>>(sink, k, buf->device);
        CK(cudaGetLastError());
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float t;
        CK(cudaEventElapsedTime(&t, a, b));
        if (i >= warm) ms.push_back(t);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(ms.begin(), ms.end());
    return (ms[N_RUNS / 2 - 1] + ms[N_RUNS / 2]) / 2;
}

// "ok", or what differs from the expected counts (no quotes: it goes into JSON)
static std::string check(ikp_cuda_buffer *buf, unsigned lanes, unsigned long long per_lane, const char *dump)
{
    std::vector<uint64_t> words(buf->num_words);
    CK(cudaMemcpy(words.data(), buf->device, words.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    if (dump) {
        FILE *f = fopen(dump, "wb");
        if (!f || fwrite(words.data(), sizeof(uint64_t), words.size(), f) != words.size() || fclose(f) != 0) {
            fprintf(stderr, "events: cannot write %s\n", dump);
            exit(1);
        }
    }
    ikp_capture *cap = NULL;
    ikp_error err;
    char msg[512];
    if (ikp_capture_open(words.data(), words.size(), NULL, &cap, &err) != IKP_OK) {
        snprintf(msg, sizeof msg, "decode failed: %s", err.message);
    } else {
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        const unsigned long long want = per_lane * lanes;
        if (in->active_lanes != lanes || in->records != want || (!IKP_RING && in->dropped != 0))
            snprintf(msg, sizeof msg, "%u lanes, %llu records, %llu dropped; expected %u lanes, %llu records%s",
                     in->active_lanes, (unsigned long long)in->records, (unsigned long long)in->dropped, lanes, want,
                     IKP_RING ? "" : ", 0 dropped");
        else
            snprintf(msg, sizeof msg, "ok");
        ikp_capture_free(cap);
    }
    for (char *c = msg; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '\'';
    return msg;
}

// a floor's check: each lane's ring (floor 3: its records, all of them)
// holds its last FLOOR_RING records (of `records`, 2 * R a loop
// iteration), each tag where it belongs, and each region's end stamp at or
// after its begin stamp
static std::string check_floor(ikp_cuda_buffer *buf, unsigned lanes, unsigned long long records, int R)
{
    const unsigned long long ring = EVENTS_FLOOR == 3 ? records : FLOOR_RING; // words a lane
    if (lanes * ring > buf->num_words) return "the buffer is too small for the floor";
    std::vector<uint64_t> w((size_t)(lanes * ring));
    CK(cudaMemcpy(w.data(), buf->device, w.size() * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    unsigned long long bad = 0;
    for (unsigned l = 0; l < lanes; l++)
        for (unsigned long long j = records - FLOOR_RING; j < records; j++) {
            const unsigned long long it = j / (2 * R);
            const unsigned r = (unsigned)(j % (2 * R)) / 2, end = (unsigned)(j & 1);
            const uint64_t rec = w[(size_t)(l * ring + j % ring)];
            const unsigned want = IKP_WIRE_TAG((unsigned)(it & 3) * R + r, end ? IKP_WIRE_KIND_END : IKP_WIRE_KIND_BEGIN);
            if ((uint32_t)rec != want) bad++;
            if (end && (int32_t)((uint32_t)(rec >> 32) - (uint32_t)(w[(size_t)(l * ring + (j - 1) % ring)] >> 32)) < 0)
                bad++;
        }
    if (!bad) return "ok";
    char msg[128];
    snprintf(msg, sizeof msg, "%llu floor records not where they belong or ending before they begin", bad);
    return msg;
}

static unsigned pow2_floor(unsigned x)
{
    unsigned p = 1;
    while (p * 2 <= x) p *= 2;
    return p;
}

// one configuration: off, on, check, off again; false when the check failed
template <int R, int W>
static bool config(int sms, int wps, int k)
{
    const int blocks = sms * wps / 4;
    const unsigned lanes = blocks * 4;
    const unsigned long long events = 2ull * R * k; // per lane
    const unsigned capacity = IKP_RING ? RING : (unsigned)events + 64;
    unsigned ring = pow2_floor(capacity);                      // ring builds: the buffer's ring,
    if (IKP_STAGED) ring = std::min(ring, pow2_floor(STAGE));  // and the stage's
    const unsigned long long per_lane = IKP_RING ? std::min<unsigned long long>(events, ring) : events;
    float *sink;
    ikp_cuda_buffer buf;
    ikp_error err;
    CK(cudaMalloc(&sink, (size_t)blocks * 128 * sizeof(float)));
    if (ikp_cuda_buffer_create(&buf, lanes, capacity, &err) != IKP_OK) {
        fprintf(stderr, "events: ikp_cuda_buffer_create(%u lanes, %u records): %s\n", lanes, capacity, err.message);
        exit(1);
    }
    const float off = timed<false, R, W>(blocks, sink, k, &buf, N_WARM);
    const float on = timed<true, R, W>(blocks, sink, k, &buf, N_WARM);
    const char *prefix = getenv("IKP_EVENTS_DUMP");
    std::string dump = prefix ? std::string(prefix) + std::to_string(wps) + "w_R" + std::to_string(R) + "_" +
                                    std::to_string(W) + ".bin"
                              : std::string();
    const std::string ok = EVENTS_FLOOR ? check_floor(&buf, lanes, events, R)
                                        : check(&buf, lanes, per_lane, prefix ? dump.c_str() : NULL);
    const float off2 = timed<false, R, W>(blocks, sink, k, &buf, N_WARM);
    printf("events {\"build\":\"%s\",\"version\":\"%d.%d.%d\",\"wps\":%d,\"R\":%d,\"W\":%d,\"K\":%d,"
           "\"off_ms\":%.5f,\"off2_ms\":%.5f,\"on_ms\":%.5f,\"ns_per_event\":%.3f,\"check\":\"%s\"}\n",
           BUILD, IKP_CUDA_VERSION_MAJOR, IKP_CUDA_VERSION_MINOR, IKP_CUDA_VERSION_PATCH, wps, R, W, k, off, off2, on,
           (on - off) * 1e6 / events, ok.c_str());
    fflush(stdout);
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaFree(sink));
    return ok == "ok";
}

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int k = quick ? 200 : 4000;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    const int sms = p.multiProcessorCount;
    printf("events: %s, %d SMs, IKP %d.%d.%d (%s), K=%d, median of %d after %d warm-up\n", p.name, sms,
           IKP_CUDA_VERSION_MAJOR, IKP_CUDA_VERSION_MINOR, IKP_CUDA_VERSION_PATCH, BUILD, k, N_RUNS, N_WARM);
    fflush(stdout);
    // (WPS, R, W) in the order of bench/proton_events.py
    bool ok = true;
    ok &= config<1, 16>(sms, 4, k);
    ok &= config<4, 16>(sms, 4, k);
    ok &= config<1, 16>(sms, 16, k);
    ok &= config<4, 16>(sms, 16, k);
    ok &= config<1, 256>(sms, 4, k);
    ok &= config<4, 256>(sms, 4, k);
    ok &= config<1, 256>(sms, 16, k);
    ok &= config<4, 256>(sms, 16, k);
    return ok ? 0 : 1;
}
