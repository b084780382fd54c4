// Kernels for `ikp check-sass` (tests/test_check_sass.py): regions around
// register math, with and without IKP_PIN, with event ids known at compile
// time and computed at run time, a region with nothing in it and one around
// memory operations. Built with the recorder's variants (staged, ring,
// globaltimer stamps, begins stored at once).
#include <stdint.h>
#include "../../ikp_cuda.cuh"

#ifndef STAGE
#define STAGE 256
#endif

#define LANE_SETUP                                                              \
    IKP_SHARED_STAGE(stage, 4, STAGE);                                          \
    IKP_LANE(lane);                                                             \
    IKP_INIT(lane, prof, threadIdx.x / 32, 4, threadIdx.x % 32 == 0);           \
    IKP_STAGE(lane, stage[threadIdx.x / 32], STAGE)

// Four regions an iteration, each around four dependent FMAs: without pins
// the compiler moves the FMAs of the first three past their stamps.
template <bool PIN, bool RUNTIME_IDS>
__global__ void __launch_bounds__(128) fma_regions(float *sink, int k, uint64_t *prof)
{
    LANE_SETUP;
    float x = threadIdx.x * 1e-3f;
#pragma unroll 1
    for (int it = 0; it < k; it++) {
        const unsigned ev0 = RUNTIME_IDS ? (it & 3) * 4 : 0;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            if (PIN) IKP_PIN(x);
            IKP_BEGIN(lane, ev0 + r);
            if (PIN) IKP_PIN(x);
#pragma unroll
            for (int j = 0; j < 4; j++) x = fmaf(x, 1.0001f, 0.5f);
            if (PIN) IKP_PIN(x);
            IKP_END(lane, ev0 + r);
            if (PIN) IKP_PIN(x);
        }
    }
    IKP_FINALIZE(lane);
    if (x == 12345.f) sink[blockIdx.x * 128 + threadIdx.x] = x;
}
template __global__ void fma_regions<false, false>(float *, int, uint64_t *);
template __global__ void fma_regions<true, false>(float *, int, uint64_t *);
template __global__ void fma_regions<false, true>(float *, int, uint64_t *);
template __global__ void fma_regions<true, true>(float *, int, uint64_t *);

// Event 7 holds nothing; event 8 holds a load and a store (memory
// operations stay on their side of a stamp without pins).
extern "C" __global__ void __launch_bounds__(128) empty_and_memory(const float *in, float *out, uint64_t *prof)
{
    LANE_SETUP;
    IKP_BEGIN(lane, 7);
    IKP_END(lane, 7);
    IKP_BEGIN(lane, 8);
    out[blockIdx.x * 128 + threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x] * 2.f;
    IKP_END(lane, 8);
    IKP_FINALIZE(lane);
}

// No IKP record at all.
extern "C" __global__ void plain(float *out) { out[threadIdx.x] = 1.f; }
