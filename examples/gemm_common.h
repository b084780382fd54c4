// Host helpers shared by examples/gemm.cu and bench/gemm_bench.cu.
#ifndef GEMM_COMMON_H
#define GEMM_COMMON_H
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
