// The ring tests' kernel, included by ring.cu (IKP_RING=1) and ring_staged.cu
// (IKP_RING=1, IKP_STAGED=1) inside their namespaces, after ikp_cuda.cuh;
// without IKP_STAGED the staging macros compile to nothing.
// Per iteration an instant and its payload (2 records, one pair of slots),
// or with pads an instant and then a region (the instant's pair has a pad,
// as a begin follows). Staged: a shared-memory ring of stage_records (rounded
// down to a power of two), flushed every flush_every iterations (0: at the end).
__global__ void ring_kernel(int events, int pads, unsigned stage_records, int flush_every, uint64_t *prof)
{
    extern __shared__ unsigned long long stage[];
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_STAGE(lane, &stage[0], stage_records); /* a pointer: the unstaged macro takes its size */
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
