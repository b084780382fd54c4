// Must not compile, in any build: IKP_STAGE names an array that does not
// exist (the staging macros check their arguments even when staging is off).
#include <stdint.h>
#include "ikp_cuda.cuh"

__global__ void k(uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_STAGE(lane, no_such_array[0], 64);
    IKP_FINALIZE(lane);
}
