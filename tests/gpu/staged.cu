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
// half the events, with a global pointer (it flushes the stage and keeps
// it: the refused pointer does not close the lane)
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
        if (where == 2 && i == events / 2) IKP_STAGE(lane, (unsigned long long *)prof + 8, stage_records);
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
// records after IKP_FINALIZE write nothing: one lane staged in dynamic
// shared memory after a canary of 512 words (shared addresses counted from
// 0 by the records after the finalize would reach it), 10 instants, the
// finalize, 600 more instants; then every canary word is checked (*bad
// counts the changed ones)
__global__ void staged_after_finalize_kernel(unsigned *bad, uint64_t *prof)
{
    extern __shared__ unsigned long long dyn[];
    for (unsigned i = threadIdx.x; i < 512; i += blockDim.x) dyn[i] = 0x5A5A5A5A00000000ull | i;
    __syncthreads();
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_STAGE(lane, dyn + 512, 512);
    for (int i = 0; i < 10; i++) IKP_INSTANT(lane, 1);
    IKP_FINALIZE(lane);
    for (int i = 0; i < 600; i++) IKP_INSTANT(lane, 2);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < 512; i += blockDim.x)
        if (dyn[i] != (0x5A5A5A5A00000000ull | i)) atomicAdd(bad, 1u);
}
// past 2^29 records between two flushes (the count of a staged bounded lane
// wraps there): block b's lane makes n[b] instants, 8 to a loop iteration,
// with a stage of 64 records (none: where[b] 1, a global pointer, refused),
// then, where where[b] is 2, a flush and 5 more instants; then the finalize
__global__ void staged_wrap_kernel(const unsigned long long *n, const int *where, uint64_t *prof)
{
    __shared__ unsigned long long st[IKP_STAGE_WORDS(64)];
    const unsigned long long count = n[blockIdx.x];
    const int w = where[blockIdx.x];
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_STAGE(lane, w == 1 ? (unsigned long long *)prof + 8 : st, 64);
    unsigned long long i = 0;
    for (; i + 8 <= count; i += 8) {
#pragma unroll
        for (int k = 0; k < 8; k++) IKP_INSTANT(lane, 1);
    }
    for (; i < count; i++) IKP_INSTANT(lane, 1);
    if (w == 2) {
        IKP_FLUSH(lane);
        for (int k = 0; k < 5; k++) IKP_INSTANT(lane, 1);
    }
    IKP_FINALIZE(lane);
}
}
void launch_staged_wrap(int blocks, const unsigned long long *n, const int *where, uint64_t *prof)
{
    ikp_staged::staged_wrap_kernel<<<blocks, 32>>>(n, where, prof);
}
void launch_staged(int blocks, int events, unsigned stage_records, int flush_every, int where, uint64_t *prof)
{
    ikp_staged::staged_kernel<<<blocks, 64, 2 * IKP_STAGE_WORDS(stage_records) * 8>>>(events, stage_records, flush_every, where, prof);
}
void launch_staged_after_finalize(unsigned *bad, uint64_t *prof)
{
    ikp_staged::staged_after_finalize_kernel<<<1, 32, (512 + IKP_STAGE_WORDS(512)) * 8>>>(bad, prof);
}
