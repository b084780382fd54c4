// Ring-mode kernel, its own translation unit (IKP_RING is per compile).
#include <stdint.h>
namespace ikp_ring { // a different configuration of the same inline functions
#define IKP_RING 1
#include "../../ikp_cuda.cuh"
#include "ring_kernel.cuh"
}
void launch_ring(int blocks, int events, int pads, uint64_t *prof)
{
    ikp_ring::ring_kernel<<<blocks, 32>>>(events, pads, 0, 0, prof);
}
