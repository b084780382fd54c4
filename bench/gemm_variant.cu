// One build of the GEMM kernel (examples/gemm_kernel.cuh), chosen by GV:
// 0 IKP_ENABLE=0, 1 IKP cycles, 2 IKP globaltimer, 3 flashinfer/TIRx-style
// recorder. Each build lives in its own namespace (a different configuration
// of the same inline functions); bench/gemm_bench.cu links all four.
#include <stdint.h>
#include <cuda_runtime.h>
#if GV == 0
#define IKP_ENABLE 0
#elif GV == 2
#define IKP_TIMER IKP_TIMER_GLOBAL
#elif GV == 3
#define GEMM_RECORDER 2
#endif
#define GV_CAT2(a, b) a##b
#define GV_CAT(a, b) GV_CAT2(a, b)
namespace GV_CAT(gemm_v, GV) {
#include "../ikp_cuda.cuh"
#include "../examples/gemm_kernel.cuh"
}
cudaError_t GV_CAT(gemm_run_, GV)(const uint16_t *A, const uint16_t *B, float *C, int M, int N, int K,
                                   uint64_t *prof, cudaStream_t s)
{
    return GV_CAT(gemm_v, GV)::gemm_launch(A, B, C, M, N, K, prof, s);
}
