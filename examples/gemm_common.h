// Host helpers shared by examples/gemm.cu and bench/gemm_bench.cu.
#ifndef GEMM_COMMON_H
#define GEMM_COMMON_H
#include <cuda_runtime.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

static inline uint16_t gemm_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1); // round to nearest even
    return (uint16_t)(u >> 16);
}
static inline float gemm_from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline void gemm_fill(std::vector<uint16_t> &v, uint32_t seed)
{
    for (auto &x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = gemm_to_bf16(((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f);
    }
}
/* The problem of the example and the benchmark: random bf16 A (M x K) and
   B (N x K) on the host and the device, an fp32 C (M x N) on the device. */
struct gemm_problem {
    int M, N, K;
    std::vector<uint16_t> hA, hB;
    std::vector<float> hC;
    uint16_t *A, *B;
    float *C;
};
static inline cudaError_t gemm_problem_init(gemm_problem &g, int M, int N, int K)
{
    cudaError_t e;
    g.M = M; g.N = N; g.K = K;
    g.hA.resize((size_t)M * K);
    g.hB.resize((size_t)N * K);
    g.hC.resize((size_t)M * N);
    gemm_fill(g.hA, 1);
    gemm_fill(g.hB, 2);
    g.A = g.B = NULL;
    g.C = NULL;
    if ((e = cudaMalloc(&g.A, g.hA.size() * 2)) != cudaSuccess || (e = cudaMalloc(&g.B, g.hB.size() * 2)) != cudaSuccess ||
        (e = cudaMalloc(&g.C, g.hC.size() * 4)) != cudaSuccess ||
        (e = cudaMemcpy(g.A, g.hA.data(), g.hA.size() * 2, cudaMemcpyHostToDevice)) != cudaSuccess ||
        (e = cudaMemcpy(g.B, g.hB.data(), g.hB.size() * 2, cudaMemcpyHostToDevice)) != cudaSuccess)
        return e;
    return cudaSuccess;
}
static inline void gemm_problem_free(gemm_problem &g)
{
    cudaFree(g.A);
    cudaFree(g.B);
    cudaFree(g.C);
}

/* checks n sampled elements of C = A B^T against a double-precision dot
   product; returns the number of wrong ones */
static inline int gemm_check(const std::vector<uint16_t> &A, const std::vector<uint16_t> &B,
                             const std::vector<float> &C, int M, int N, int K, int n)
{
    int bad = 0;
    uint32_t seed = 99;
    for (int i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        int r = (int)(seed % (uint32_t)M);
        seed = seed * 1664525u + 1013904223u;
        int c = (int)(seed % (uint32_t)N);
        double ref = 0, mag = 0;
        for (int k = 0; k < K; k++) {
            double p = (double)gemm_from_bf16(A[(size_t)r * K + k]) * gemm_from_bf16(B[(size_t)c * K + k]);
            ref += p;
            mag += std::fabs(p);
        }
        double got = C[(size_t)r * N + c];
        if (!(std::fabs(got - ref) <= 1e-5 * mag + 1e-4)) {
            if (bad < 5) fprintf(stderr, "C[%d][%d] = %f, expected %f\n", r, c, got, ref);
            bad++;
        }
    }
    return bad;
}
#endif
