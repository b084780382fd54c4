// One build of the GEMM kernel (examples/gemm_kernel.cuh), chosen by GV:
// 0 IKP_ENABLE=0, 1 IKP cycles, 2 IKP globaltimer (both staged in shared
// memory, the example's default), 3 IKP cycles straight to the profile
// buffer, 4 flashinfer/TIRx-style recorder; the breakdown of 1: 5
// consumers' records only, 6 producer's only, 7 only the load and mma
// regions (no wait regions, no payload). Each build lives in its own
// namespace (a different configuration of the same inline functions);
// bench/gemm_bench.cu links all eight.
#include <stdint.h>
#include <cuda_runtime.h>
#if GV != 3
#define IKP_STAGED 1
#endif
#if GV == 0
#define IKP_ENABLE 0
#elif GV == 2
#define IKP_TIMER IKP_TIMER_GLOBAL
#elif GV == 4
#define GEMM_RECORDER 2
#elif GV == 5
#define GEMM_REC_SIDES 2
#elif GV == 6
#define GEMM_REC_SIDES 1
#elif GV == 7
#define GEMM_REC_WAITS 0
#endif
#define GV_CAT2(a, b) a##b
#define GV_CAT(a, b) GV_CAT2(a, b)
namespace GV_CAT(gemm_v, GV) {
#include "../ikp_cuda.cuh"
#include "../examples/gemm_kernel.cuh"
}
/* the plan (tensor maps) of one problem for this build; NULL on error */
void *GV_CAT(gemm_plan_, GV)(const uint16_t *A, const uint16_t *B, int M, int N, int K)
{
    GV_CAT(gemm_v, GV)::gemm_plan *p = new GV_CAT(gemm_v, GV)::gemm_plan;
    if (GV_CAT(gemm_v, GV)::gemm_plan_init(p, A, B, M, N, K) != cudaSuccess) { delete p; return NULL; }
    return p;
}
cudaError_t GV_CAT(gemm_run_, GV)(const void *plan, float *C, uint64_t *prof, cudaStream_t s)
{
    return GV_CAT(gemm_v, GV)::gemm_launch((const GV_CAT(gemm_v, GV)::gemm_plan *)plan, C, prof, s);
}
