// wgmma.wait_group after a chain of N warpgroup matrix multiplies (sm_90a;
// the default build): IKP_BEGIN(W_ASYNC) after the commit, IKP_END right
// after the wait. The region must cover the chain: it grows with N.
#include <stdint.h>
#include <cuda_bf16.h>
namespace ikp_w_wgmma {
#include "../../ikp_cuda.cuh"
enum { W_ASYNC = 5 };
// a shared-memory matrix descriptor: no swizzle, K-major core matrices of
// 8 rows x 16 bytes, 128 bytes apart along K and 256 along M or N
__device__ __forceinline__ unsigned long long desc(const void *smem)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(smem);
    return (unsigned long long)((a & 0x3FFFFu) >> 4) | (unsigned long long)(128 >> 4) << 16 |
           (unsigned long long)(256 >> 4) << 32;
}
template <int N> __global__ void __launch_bounds__(128) wgmma_waits(float *sink, uint64_t *prof)
{
    __shared__ __align__(128) __nv_bfloat16 a[64 * 16], b[8 * 16];
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    for (int i = threadIdx.x; i < 64 * 16; i += 128) a[i] = __float2bfloat16(0.001f * (i % 7));
    if (threadIdx.x < 8 * 16) b[threadIdx.x] = __float2bfloat16(0.002f * (threadIdx.x % 5));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
    const unsigned long long da = desc(a), db = desc(b);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;"
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    IKP_BEGIN(lane, W_ASYNC);
    asm volatile("wgmma.wait_group.sync.aligned 0;" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) :: "memory");
    IKP_END(lane, W_ASYNC);
    sink[blockIdx.x * 128 + threadIdx.x] = d0 + d1 + d2 + d3;
    IKP_FINALIZE(lane);
}
}
cudaError_t waits_wgmma(int n, int blocks, float *sink, uint64_t *prof)
{
    if (n == 1) ikp_w_wgmma::wgmma_waits<1><<<blocks, 128>>>(sink, prof);
    else ikp_w_wgmma::wgmma_waits<32><<<blocks, 128>>>(sink, prof);
    return cudaGetLastError();
}
