// Ring-mode kernel staged in shared memory (IKP_RING=1, IKP_STAGED=1), its
// own translation unit.
#include <stdint.h>
namespace ikp_ring_staged { // a different configuration of the same inline functions
#define IKP_RING 1
#define IKP_STAGED 1
#include "../../ikp_cuda.cuh"
// 2 records per instant into a shared-memory ring of stage_records (rounded
// down to a power of two), flushed every flush_every instants (0: at the end);
// with pads, an instant and a region, as in ring.cu
__global__ void ring_staged_kernel(int events, int pads, unsigned stage_records, int flush_every, uint64_t *prof)
{
    extern __shared__ unsigned long long stage[];
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_STAGE(lane, stage, stage_records);
    for (int i = 0; i < events; i++) {
        IKP_INSTANT(lane, 4);
        if (pads) {
            IKP_BEGIN(lane, 5);
            IKP_END(lane, 5);
        } else
            IKP_DATA(lane, 4, i);
        if (flush_every && (i + 1) % flush_every == 0) IKP_FLUSH(lane);
    }
    IKP_FINALIZE(lane);
}
}
void launch_ring_staged(int blocks, int events, int pads, unsigned stage_records, int flush_every, uint64_t *prof)
{
    ikp_ring_staged::ring_staged_kernel<<<blocks, 32, IKP_STAGE_WORDS(stage_records) * 8>>>(events, pads, stage_records, flush_every, prof);
}
