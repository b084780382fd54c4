// Ring-mode kernel staged in shared memory (IKP_RING=1, IKP_STAGED=1), its
// own translation unit.
#include <stdint.h>
namespace ikp_ring_staged { // a different configuration of the same inline functions
#define IKP_RING 1
#define IKP_STAGED 1
#include "../../ikp_cuda.cuh"
#include "ring_kernel.cuh"
}
void launch_ring_staged(int blocks, int events, int pads, unsigned stage_records, int flush_every, uint64_t *prof)
{
    ikp_ring_staged::ring_kernel<<<blocks, 32, IKP_STAGE_WORDS(stage_records) * 8>>>(events, pads, stage_records,
                                                                                      flush_every, prof);
}
