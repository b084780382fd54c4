// Ring-mode kernel, its own translation unit (IKP_RING is per compile).
#include <stdint.h>
namespace ikp_ring { // a different configuration of the same inline functions
#define IKP_RING 1
#include "../../ikp_cuda.cuh"
__global__ void ring_kernel(int events, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    for (int i = 0; i < events; i++) { IKP_INSTANT(lane, 4); IKP_DATA(lane, 4, i); }
    IKP_FINALIZE(lane);
}
}
void launch_ring(int blocks, int events, uint64_t *prof) { ikp_ring::ring_kernel<<<blocks, 32>>>(events, prof); }
