// make bench-gpu: time added per recorded event, all recorders in one run.
// A full grid (4 warps/SM: SMs x 128 threads; 16 warps/SM: 2*SMs x 256);
// each warp runs ITERS regions of a dependent FMA chain (16 or 256 FMAs);
// lane 0 records the begin and end of every region. Reported: ns added per
// event on one warp's path = (kernel time - no-profiling time) / events per warp.
#include "../ikp_cuda.cuh"
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "../ikp.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

enum { NONE, TIMER, FLOOR, IKP, IKP_NOW, FENCE, FENCE_LAB, ATOMIC, MODES };
static const char *mode_name[MODES] = {"no profiling", "timer read only", "timer + 8-byte store (floor)",
                                       "IKP (ikp_cuda.cuh)", "IKP, IKP_DEFER_BEGIN=0 (begin stored at once)", "store + __threadfence_block on every thread (flashinfer/TIRx style)",
                                       "store + fence in the leader's branch, 64-bit globaltimer (the timing microbenchmark's form)",
                                       "atomicAdd cursor + store"};
#define ITERS 4000
__host__ __device__ static constexpr bool records_ikp(int mode) { return mode == IKP || mode == IKP_NOW; } // into an IKP buffer

__device__ __forceinline__ unsigned clk() { unsigned long long t; asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) :: "memory"); return (unsigned)t; }
__device__ __forceinline__ void pin(float &x) { asm volatile("" : "+f"(x) :: "memory"); }
__device__ __forceinline__ unsigned long long gt64() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory"); return t; }
__device__ __forceinline__ unsigned gtlo() { unsigned t; asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(t) :: "memory"); return t; }

template <int MODE>
__device__ __forceinline__ void stamp(ikp_lane &lane, unsigned long long *wb, unsigned *cur, unsigned &n, unsigned &acc,
                                      bool lead, unsigned tag, unsigned long long *&fp, unsigned fstride)
{
    if (MODE == TIMER) acc += clk();
    // the floor: what any recorder must do, with no bound check
    if (MODE == FLOOR) { if (lead) wb[n] = (unsigned long long)clk() << 32 | tag; }
    if (MODE == IKP) { if (tag == 5) ikpd__begin(lane, tag); else ikpd__record(lane, tag); } // IKP_BEGIN, IKP_END
    // what IKP_BEGIN is with IKP_DEFER_BEGIN=0: a record stored at once, like the end
    if (MODE == IKP_NOW) ikpd__record(lane, tag);
    // flashinfer / TIRx style: begin = leader store, then a fence on every
    // thread; end = fence, then store; the write pointer advances by a stride
    if (MODE == FENCE) {
        if (tag == 6) __threadfence_block();
        if (lead) { *fp = (unsigned long long)gtlo() << 32 | tag; fp += fstride; }
        if (tag == 5) __threadfence_block();
    }
    if (MODE == FENCE_LAB) { if (lead) { wb[n] = gt64(); __threadfence_block(); } }
    if (MODE == ATOMIC) { if (lead) { unsigned i = atomicAdd(cur, 1u); wb[i % (2 * ITERS)] = (unsigned long long)clk() << 32 | tag; } }
    n++;
}

template <int MODE>
__global__ void events_kernel(float *sink, unsigned long long *buf, unsigned *cursors, int work, uint64_t *prof)
{
    const int warp = threadIdx.x / 32, l = threadIdx.x % 32, nw = blockDim.x / 32;
    const int gw = blockIdx.x * nw + warp;
    unsigned long long *wb = buf + (size_t)gw * 2 * ITERS;
    ikp_lane lane;
    if (records_ikp(MODE)) IKP_INIT(lane, prof, warp, nw, l == 0);
    float x = threadIdx.x * 1e-3f;
    unsigned n = 0, acc = 0, fstride = gridDim.x * nw;
    unsigned long long *fp = buf + gw; // interleaved layout, as TIRx/flashinfer
    for (int it = 0; it < ITERS; it++) {
        pin(x);
        stamp<MODE>(lane, wb, cursors + gw, n, acc, l == 0, 5, fp, fstride);
        pin(x);
        for (int k = 0; k < work; k++) x = fmaf(x, 1.0001f, 0.5f);
        pin(x);
        stamp<MODE>(lane, wb, cursors + gw, n, acc, l == 0, 6, fp, fstride);
        pin(x);
    }
    if (records_ikp(MODE)) IKP_FINALIZE(lane);
    if (x == 12345.f || acc == 1) sink[gw] = x;
}

template <int MODE>
static float time_mode(int blocks, int threads, float *sink, unsigned long long *buf, unsigned *cur, int work,
                       ikp_cuda_buffer *ib)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ts;
    for (int r = 0; r < 16; r++) {
        if (records_ikp(MODE)) ikp_cuda_buffer_reset(ib, 0, NULL);
        CK(cudaEventRecord(a));
        events_kernel<MODE><<<blocks, threads>>>(sink, buf, cur, work, ib->device);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r) ts.push_back(ms); // first launch is warm-up
    }
    std::sort(ts.begin(), ts.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return ts[ts.size() / 2];
}

/* the IKP capture of the last launch holds every record */
static bool capture_complete(ikp_cuda_buffer *ib, int nw)
{
    std::vector<uint64_t> h(ib->num_words);
    CK(cudaMemcpy(h.data(), ib->device, h.size() * 8, cudaMemcpyDeviceToHost));
    ikp_capture *cap = NULL;
    bool ok = ikp_capture_open(h.data(), h.size(), NULL, &cap, NULL) == IKP_OK &&
              ikp_capture_get_info(cap)->records - ikp_capture_get_info(cap)->anchors == (uint64_t)nw * 2 * ITERS && !ikp_capture_get_info(cap)->dropped;
    if (!ok) fprintf(stderr, "IKP capture incomplete\n");
    ikp_capture_free(cap);
    return ok;
}

int main()
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    const int sms = p.multiProcessorCount;
    printf("device: %s, %d SMs; %d regions per warp (2 events each); median of 15 launches\n\n", p.name, sms, ITERS);
    printf("| recorder | 4 w/SM, 16 FMA | 4 w/SM, 256 FMA | 16 w/SM, 16 FMA | 16 w/SM, 256 FMA |\n| --- | --- | --- | --- | --- |\n");
    double added[MODES][4];
    float base_ms[4];
    int col = 0;
    for (int wps : {4, 16})
        for (int work : {16, 256}) {
            int threads = wps == 4 ? 128 : 256, blocks = wps == 4 ? sms : 2 * sms, nw = blocks * threads / 32;
            float *sink;
            unsigned long long *buf;
            unsigned *cur;
            ikp_cuda_buffer ib;
            CK(cudaMalloc(&sink, nw * sizeof(float)));
            CK(cudaMalloc(&buf, (size_t)nw * 2 * ITERS * 8));
            CK(cudaMalloc(&cur, nw * sizeof(unsigned)));
            CK(cudaMemset(cur, 0, nw * sizeof(unsigned)));
            if (ikp_cuda_buffer_create(&ib, nw, 2 * ITERS + 256, NULL) != IKP_OK) return 1; // + anchors (IKP_ANCHOR_EVERY)
            float t[MODES];
            t[NONE] = time_mode<NONE>(blocks, threads, sink, buf, cur, work, &ib);
            t[TIMER] = time_mode<TIMER>(blocks, threads, sink, buf, cur, work, &ib);
            t[FLOOR] = time_mode<FLOOR>(blocks, threads, sink, buf, cur, work, &ib);
            t[IKP] = time_mode<IKP>(blocks, threads, sink, buf, cur, work, &ib);
            if (!capture_complete(&ib, nw)) return 1;
            t[IKP_NOW] = time_mode<IKP_NOW>(blocks, threads, sink, buf, cur, work, &ib);
            if (!capture_complete(&ib, nw)) return 1;
            t[FENCE] = time_mode<FENCE>(blocks, threads, sink, buf, cur, work, &ib);
            t[FENCE_LAB] = time_mode<FENCE_LAB>(blocks, threads, sink, buf, cur, work, &ib);
            t[ATOMIC] = time_mode<ATOMIC>(blocks, threads, sink, buf, cur, work, &ib);
            base_ms[col] = t[NONE];
            for (int m = 0; m < MODES; m++) added[m][col] = (t[m] - t[NONE]) * 1e6 / (2.0 * ITERS);
            ikp_cuda_buffer_destroy(&ib);
            CK(cudaFree(sink));
            CK(cudaFree(buf));
            CK(cudaFree(cur));
            col++;
        }
    for (int m = 0; m < MODES; m++) {
        printf("| %s |", mode_name[m]);
        for (int c = 0; c < 4; c++) {
            if (m == NONE) printf(" %.3f ms |", base_ms[c]);
            else printf(" %.1f ns |", added[m][c]);
        }
        printf("\n");
    }
    printf("| IKP / floor |");
    for (int c = 0; c < 4; c++) printf(" %.2fx |", added[IKP][c] / added[FLOOR][c]);
    printf("\n| IKP_DEFER_BEGIN=0 / floor |");
    for (int c = 0; c < 4; c++) printf(" %.2fx |", added[IKP_NOW][c] / added[FLOOR][c]);
    printf("\n| flashinfer/TIRx style / IKP |");
    for (int c = 0; c < 4; c++) printf(" %.2fx |", added[FENCE][c] / added[IKP][c]);
    printf("\n| fenced form / IKP |");
    for (int c = 0; c < 4; c++) printf(" %.2fx |", added[FENCE_LAB][c] / added[IKP][c]);
    printf("\n");
    return 0;
}
