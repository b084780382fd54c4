// Ring-mode kernel, its own translation unit (IKP_RING is per compile).
#include <stdint.h>
namespace ikp_ring { // a different configuration of the same inline functions
#define IKP_RING 1
#include "../../ikp_cuda.cuh"
// events x (an instant and its payload: one pair of slots), or with pads
// (an instant, then a region: the instant's pair has a pad, as a begin follows)
__global__ void ring_kernel(int events, int pads, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    for (int i = 0; i < events; i++) {
        IKP_INSTANT(lane, 4);
        if (pads) {
            IKP_BEGIN(lane, 5);
            IKP_END(lane, 5);
        } else
            IKP_DATA(lane, 4, i);
    }
    IKP_FINALIZE(lane);
}
}
void launch_ring(int blocks, int events, int pads, uint64_t *prof) { ikp_ring::ring_kernel<<<blocks, 32>>>(events, pads, prof); }
