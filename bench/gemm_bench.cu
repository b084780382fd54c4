// make bench-gpu, part 2: perturbation of a real pipelined kernel. The same
// warp-specialized GEMM, instrumented on every k-tile of its producer and
// consumers, timed in one process with: IKP compiled out, IKP (cycles), IKP
// (globaltimer), a flashinfer/TIRx-style recorder on the same events, the
// breakdown of IKP's cost by side, and cuBLAS on the same problem; and
// IKP (cycles, staged) once more while ikp_cuda_buffer_download samples the
// SM clocks beside the kernel. Rounds interleave the variants; medians.
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "../ikp.h"
#include "../examples/gemm_common.h"
#include <cublas_v2.h>
#include <algorithm>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

typedef void *(*gemm_plan_fn)(const uint16_t *, const uint16_t *, int, int, int);
typedef cudaError_t (*gemm_fn)(const void *, float *, uint64_t *, cudaStream_t);
#define GEMM_DECL(v) void *gemm_plan_##v(const uint16_t *, const uint16_t *, int, int, int); \
    cudaError_t gemm_run_##v(const void *, float *, uint64_t *, cudaStream_t);
GEMM_DECL(0)
GEMM_DECL(1)
GEMM_DECL(2)
GEMM_DECL(3)
GEMM_DECL(4)
GEMM_DECL(5)
GEMM_DECL(6)
GEMM_DECL(7)
#define NV 8 /* kernel builds (bench/gemm_variant.cu); row NV of the table is cuBLAS */

/* what each build records: into the IKP buffer or not, and how many of the
   three lanes per tile it opens */
static const struct {
    const char *name;
    gemm_plan_fn plan;
    gemm_fn run;
    bool ikp;
    unsigned lanes_per_tile;
    bool all_events; /* records every event of the example: all such captures must agree */
    bool fi;         /* records into the flashinfer-style buffer */
} variants[NV + 1] = {
    {"IKP_ENABLE=0 (no profiling)", gemm_plan_0, gemm_run_0, false, 0, false, false},
    {"IKP, SM-cycle timer (staged in shared memory)", gemm_plan_1, gemm_run_1, true, 3, true, false},
    {"IKP, globaltimer (staged)", gemm_plan_2, gemm_run_2, true, 3, true, false},
    {"IKP, SM-cycle timer, not staged (stores to the buffer)", gemm_plan_3, gemm_run_3, true, 3, true, false},
    {"flashinfer/TIRx-style recorder", gemm_plan_4, gemm_run_4, false, 0, false, true},
    {"IKP cycles staged, consumers' records only", gemm_plan_5, gemm_run_5, true, 2, false, false},
    {"IKP cycles staged, producer's records only", gemm_plan_6, gemm_run_6, true, 1, false, false},
    {"IKP cycles staged, load and mma regions only (no waits, no payload)", gemm_plan_7, gemm_run_7, true, 3, false, false},
    {"cuBLAS (cublasGemmEx, bf16 in, fp32 out)", NULL, NULL, false, 0, false, false},
};

int main(int argc, char **argv)
{
    // gemm_bench [size [variant]]: with a variant (0 .. NV), that build alone,
    // run a few times and not timed (for a profiler such as ncu)
    const int M = argc > 1 ? atoi(argv[1]) : 8192, N = M, K = M, only = argc > 2 ? atoi(argv[2]) : -1;
    const int rounds = only >= 0 ? 3 : 21;
    const double flop = 2.0 * M * N * K;
    if (M < 256 || M % 256) { fprintf(stderr, "size must be a multiple of 256\n"); return 2; }
    if (only > NV) { fprintf(stderr, "variant must be 0 .. %d\n", NV); return 2; }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    gemm_problem g;
    CK(gemm_problem_init(g, M, N, K));
    const uint16_t *A = g.A, *B = g.B;
    float *C = g.C;
    std::vector<float> &hC = g.hC;
    const uint32_t lanes = (M / 128) * (N / 256) * 3, cap = 5 * (K / 64) + 16;
    ikp_cuda_buffer ib;
    if (ikp_cuda_buffer_create(&ib, lanes, cap, NULL) != IKP_OK) return 1;
    uint64_t *fib; // flashinfer-style buffer: 1 + lanes * records
    const size_t fiw = 1 + (size_t)lanes * cap;
    CK(cudaMalloc(&fib, fiw * 8));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
    const float one = 1.f, zero = 0.f;
    void *plans[NV];
    for (int v = 0; v < NV; v++)
        if (!(plans[v] = variants[v].plan(A, B, M, N, K))) { fprintf(stderr, "cannot make the tensor maps\n"); return 1; }
    std::vector<float> t[NV + 1], t_sampled;
    std::vector<uint64_t> host(ib.num_words);
    uint32_t samples = 0;
    unsigned long long full_records = 0;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v <= NV; v++) {
            if (only >= 0 && v != only) continue;
            uint64_t *prof = NULL;
            if (variants[v].ikp) { ikp_cuda_buffer_reset(&ib, 0, NULL); prof = ib.device; }
            if (variants[v].fi) { CK(cudaMemset(fib, 0, fiw * 8)); prof = fib; }
            CK(cudaMemset(C, 0xFF, hC.size() * 4));
            CK(cudaEventRecord(a));
            if (v < NV) CK(variants[v].run(plans[v], C, prof, 0));
            else if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16BF, K, A, CUDA_R_16BF, K,
                                  &zero, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
                return 1;
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (r) t[v].push_back(ms);
            if (v == 1 && only < 0) { // the same build, waited for by the download, which samples the SM clocks
                ikp_cuda_buffer_reset(&ib, 0, NULL);
                CK(cudaEventRecord(a));
                CK(variants[v].run(plans[v], C, ib.device, 0));
                CK(cudaEventRecord(b));
                if (ikp_cuda_buffer_download(&ib, 0, host.data(), NULL) != IKP_OK) return 1;
                CK(cudaEventElapsedTime(&ms, a, b));
                if (r) t_sampled.push_back(ms);
                samples = ib.num_sm_clock;
            }
            if (r == rounds - 1) { // every variant computes the right product
                CK(cudaMemcpy(hC.data(), C, hC.size() * 4, cudaMemcpyDeviceToHost));
                int bad = gemm_check(g.hA, g.hB, hC, M, N, K, 64);
                if (bad) { fprintf(stderr, "%s: %d wrong elements\n", variants[v].name, bad); return 1; }
                if (variants[v].lanes_per_tile) { // and the capture is complete
                    std::vector<uint64_t> w(ib.num_words);
                    CK(cudaMemcpy(w.data(), ib.device, w.size() * 8, cudaMemcpyDeviceToHost));
                    ikp_capture *cap_ = NULL;
                    if (ikp_capture_open(w.data(), w.size(), NULL, &cap_, NULL) != IKP_OK ||
                        ikp_capture_get_info(cap_)->dropped || ikp_capture_get_info(cap_)->active_lanes != lanes / 3 * variants[v].lanes_per_tile) {
                        fprintf(stderr, "%s: incomplete capture\n", variants[v].name);
                        return 1;
                    }
                    // events, not records: anchors are records too
                    ikp_stats *st_ = NULL;
                    if (ikp_stats_compute(cap_, &st_, NULL) != IKP_OK) return 1;
                    const unsigned long long nrec = st_->regions + st_->instants + st_->unmatched_begin + st_->unmatched_end;
                    ikp_stats_free(st_);
                    printf("%s: %llu events decoded\n", variants[v].name, nrec);
                    if (variants[v].all_events) { // staged or not, every full capture has the same events
                        if (!full_records) full_records = nrec;
                        else if (nrec != full_records) {
                            fprintf(stderr, "%s: %llu events, another full capture had %llu\n", variants[v].name, nrec, full_records);
                            return 1;
                        }
                    }
                    ikp_capture_free(cap_);
                }
            }
        }
    if (only >= 0) return 0;
    double base;
    for (int v = 0; v <= NV; v++) std::sort(t[v].begin(), t[v].end());
    base = t[0][t[0].size() / 2];
    printf("\ndevice: %s; %d x %d x %d bf16 GEMM (C = A B^T, fp32 out); median of %d rounds, variants interleaved\n\n",
           p.name, M, N, K, rounds - 1);
    printf("| kernel | time (ms) | TFLOP/s | vs IKP_ENABLE=0 |\n| --- | --- | --- | --- |\n");
    for (int v = 0; v <= NV; v++) {
        double m = t[v][t[v].size() / 2];
        printf("| %s | %.3f | %.0f | %+.2f%% |\n", variants[v].name, m, flop / (m * 1e-3) / 1e12, (m / base - 1) * 100);
    }
    std::sort(t_sampled.begin(), t_sampled.end());
    const double ms_s = t_sampled[t_sampled.size() / 2];
    printf("| %s, SM clocks sampled by the download (%u samples in the last round) | %.3f | %.0f | %+.2f%% |\n",
           variants[1].name, samples, ms_s, flop / (ms_s * 1e-3) / 1e12, (ms_s / base - 1) * 100);
    cublasDestroy(h);
    gemm_problem_free(g);
    return 0;
}
