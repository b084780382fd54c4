// Staged kernels (IKP_STAGED=1), their own translation unit.
#include <stdint.h>
namespace ikp_staged { // a different configuration of the same inline functions
#define IKP_STAGED 1
#include "../../ikp_cuda.cuh"
// two lanes per block (one per warp), each staged in dynamic shared memory
// (lane 1's stage starts IKP_STAGE_WORDS(stage_records) words in, an odd
// number for an even stage_records, so both alignments of the bulk copy
// are exercised; so are flushes of an odd number of records); per event:
// begin, payload i, end; a flush every flush_every events (0: only the one
// in IKP_FINALIZE; negative: every -flush_every events, twice, the second
// with nothing to move). where: 0 shared memory, 1 a global pointer
// (refused: the lane drops every record), 2 shared memory after two
// instants and a flush (both dropped, counted), and IKP_STAGE again after
// half the events (it flushes the stage and keeps it)
__global__ void staged_kernel(int events, unsigned stage_records, int flush_every, int where, uint64_t *prof)
{
    extern __shared__ unsigned long long dyn[];
    __shared__ unsigned long long *stage;
    const unsigned g = threadIdx.x / 32;
    const int every = flush_every < 0 ? -flush_every : flush_every;
    if (threadIdx.x == 0) stage = where == 1 ? (unsigned long long *)prof + 8 : dyn;
    __syncthreads();
    IKP_LANE(lane);
    IKP_INIT(lane, prof, g, 2, threadIdx.x % 32 == 0);
    if (where == 2) {
        IKP_INSTANT(lane, 2);
        IKP_INSTANT(lane, 2);
        IKP_FLUSH(lane);
    }
    IKP_STAGE(lane, stage + g * IKP_STAGE_WORDS(stage_records), stage_records);
    for (int i = 0; i < events; i++) {
        if (where == 2 && i == events / 2) IKP_STAGE(lane, stage + g * IKP_STAGE_WORDS(stage_records), stage_records);
        IKP_BEGIN(lane, 1);
        IKP_DATA(lane, 1, i);
        IKP_END(lane, 1);
        if (every && (i + 1) % every == 0) {
            IKP_FLUSH(lane);
            if (flush_every < 0) IKP_FLUSH(lane);
        }
    }
    IKP_FINALIZE(lane);
}
}
void launch_staged(int blocks, int events, unsigned stage_records, int flush_every, int where, uint64_t *prof)
{
    ikp_staged::staged_kernel<<<blocks, 64, 2 * IKP_STAGE_WORDS(stage_records) * 8>>>(events, stage_records, flush_every, where, prof);
}
