// Example 4: a warp-specialized, multi-stage bf16 GEMM (examples/gemm_kernel.cuh)
// profiled on every k-tile of its producer and consumers. Prints its
// TFLOP/s, writes gemm.json / gemm.ikp and the summary.
#ifndef IKP_STAGED
#define IKP_STAGED 1 /* records staged in shared memory: GUIDE.md "Staging" */
#endif
#include "../ikp_cuda.cuh"
#include "common.h"
#include "gemm_kernel.cuh"
#include "gemm_common.h"
#include <algorithm>

int main(int argc, char **argv)
{
    const int M = argc > 2 ? atoi(argv[2]) : 4096, N = M, K = M; // a multiple of 256
    const char *out = argc > 1 ? argv[1] : "gemm";
    if (M < 256 || M % 256) { fprintf(stderr, "size must be a multiple of 256\n"); return 2; }
    gemm_problem g;
    CK(gemm_problem_init(g, M, N, K));
    gemm_plan plan;
    CK(gemm_plan_init(&plan, g.A, g.B, M, N, K));
    float *C = g.C;
    std::vector<float> &hC = g.hC;
    CK(cudaMemset(C, 0xFF, hC.size() * 4)); // poison: NaN everywhere
    const uint32_t lanes = gemm_lanes(M, N), cap = 5 * (K / GEMM_BK) + 16;
    ikp_cuda_buffer buf;
    ikp_error err;
    if (ikp_cuda_buffer_create(&buf, lanes, example_capacity(cap), &err) != IKP_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    std::vector<float> ms;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int r = 0; r < 11; r++) {
        if (ikp_cuda_buffer_reset(&buf, 0, &err) != IKP_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
        CK(cudaEventRecord(a));
        CK(gemm_launch(&plan, C, buf.device, 0));
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float t;
        CK(cudaEventElapsedTime(&t, a, b));
        if (r) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    CK(cudaMemcpy(hC.data(), C, hC.size() * 4, cudaMemcpyDeviceToHost));
    int bad = gemm_check(g.hA, g.hB, hC, M, N, K, 256); // and no element left unwritten (NaN poison)
    for (size_t i = 0; i < hC.size(); i += 997) bad += hC[i] != hC[i];
    printf("gemm %dx%dx%d bf16 -> fp32, profiled: %.3f ms, %.1f TFLOP/s; %d of 256 sampled elements wrong\n", M, N, K,
           ms[ms.size() / 2], 2.0 * M * N * K / (ms[ms.size() / 2] * 1e-3) / 1e12, bad);
    if (bad) return 1;
    const char *groups[] = {"producer", "consumer 0", "consumer 1"};
    example_dump(&buf, out, gemm_event_names, GEV_COUNT, groups, 3);
    ikp_cuda_buffer_destroy(&buf);
    gemm_problem_free(g);
    return 0;
}
