// Per-event cost in SASS: HOT_EVENTS back-to-back events between init and
// finalize; check_sass.py compiles it with 16 and 32 (and again with
// -DIKP_STAGED=1) and divides the difference in instruction count by 16.
// REGION_* kernels: a dependent FMA chain between a begin and an end stamp,
// with and without IKP_PIN.
#include <stdint.h>
#include "../../ikp_cuda.cuh"

extern "C" __global__ void hot_kernel(float *out, uint64_t *prof)
{
    IKP_SHARED_STAGE(stage, 1, 64); // staging: only with -DIKP_STAGED=1
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_STAGE(lane, stage[0], 64);
#pragma unroll
    for (int i = 0; i < HOT_EVENTS; i++) {
        if (i % 2 == 0) IKP_BEGIN(lane, 7);
        else IKP_END(lane, 7);
    }
    IKP_FINALIZE(lane);
    out[threadIdx.x] = 0.f;
}

extern "C" __global__ void region_kernel(float *out, float a, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    float x = a + threadIdx.x;
    IKP_BEGIN(lane, 1);
#pragma unroll
    for (int k = 0; k < 64; k++) x = fmaf(x, x, 0.5f);
    IKP_END(lane, 1);
    IKP_FINALIZE(lane);
    out[threadIdx.x] = x;
}

extern "C" __global__ void region_pinned_kernel(float *out, float a, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    float x = a + threadIdx.x;
    IKP_PIN(x);
    IKP_BEGIN(lane, 1);
    IKP_PIN(x);
#pragma unroll
    for (int k = 0; k < 64; k++) x = fmaf(x, x, 0.5f);
    IKP_PIN(x);
    IKP_END(lane, 1);
    IKP_FINALIZE(lane);
    out[threadIdx.x] = x;
}

extern "C" __global__ void region_mem_kernel(const float *in, float *out, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_BEGIN(lane, 1);
    float x = in[threadIdx.x];
    out[threadIdx.x] = x * 2.f;
    out[threadIdx.x + 1024] = x;
    IKP_END(lane, 1);
    IKP_FINALIZE(lane);
}


// Stamps after waits: a region around __syncthreads(), a begin right after a
// named barrier, an instant right after __syncthreads_count (check_sass.py:
// each record stamp comes right after its store that never executes, never
// straight after the BAR.SYNC)
extern "C" __global__ void wait_kernel(float *out, uint64_t *prof)
{
    IKP_SHARED_STAGE(stage, 2, 64); // staging: only with -DIKP_STAGED=1
    IKP_LANE(lane);
    IKP_INIT(lane, prof, threadIdx.x / 32, 2, threadIdx.x % 32 == 0);
    IKP_STAGE(lane, stage[threadIdx.x / 32], 64);
    IKP_BEGIN(lane, 1);
    __syncthreads();
    IKP_END(lane, 1);
    asm volatile("bar.sync 1, 64;" ::: "memory");
    IKP_BEGIN(lane, 2);
    float x = out[threadIdx.x];
    IKP_PIN(x);
    IKP_END(lane, 2);
    int n = __syncthreads_count(x > 0.f);
    IKP_INSTANT(lane, 3);
    IKP_FINALIZE(lane);
    out[threadIdx.x] = x + n;
}
