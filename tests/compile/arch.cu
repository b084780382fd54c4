// Every recorder feature in one kernel, for the architecture checks: the
// default build must compile for sm_75 and newer, IKP_STAGED=1 for sm_90
// and newer, and IKP_STAGED=1 below sm_90 must stop with its #error.
#include <cstdint>
#include "ikp_cuda.cuh"
__global__ void k(float *x, uint64_t *prof)
{
    IKP_SHARED_STAGE(stage, 1, 64);
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_STAGE(lane, stage[0], 64);
    IKP_BEGIN(lane, 1);
    x[threadIdx.x] *= 2.f;
    IKP_END(lane, 1);
    IKP_DATA(lane, 1, 7u);
    IKP_INSTANT(lane, 2);
    IKP_ANCHOR(lane);
    IKP_FLUSH(lane);
    IKP_FINALIZE(lane);
}
