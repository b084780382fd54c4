// Stamps after waits, timed as users write them: the stamp right after the
// wait in source. Included inside a namespace after ikp_cuda.cuh with the
// build under test (tests/gpu/waits_*.cu), by tests/gpu/test_waits.cu's
// launchers. One block a multiprocessor; in a block, a releasing side and a
// waiting side:
// - the releaser (warp 0, group 0; with __syncwarp lanes 0..15 of warp 1,
//   group 2) spins S cycles and arrives in a W_REL region: its begin, whose
//   record is stored later (a begin's stamp waits in registers), so nothing
//   but the stamp's own store stands between the stamp and the arrival; the
//   region ends after the phase;
// - the waiter (warp 1, group 1; with __syncwarp lane 16 of warp 1) waits
//   four times, the releaser arriving after S cycles each time:
//     IKP_BEGIN(W_WAIT); wait; IKP_END(W_WAIT)        the end after a wait
//     wait; IKP_BEGIN(W_AFTER); IKP_END(W_AFTER)      a begin after a wait
//     wait; IKP_INSTANT(W_INST)                       an instant after a wait
//     { IKP_SCOPE(W_SCOPE); wait; }                   a scope's end after a wait
// Both sides are on one multiprocessor, so their records are on one clock:
// each stamp after a wait must come a fixed time after the release (the
// wait instruction's own latency), whatever S is.
// staged builds: each lane's stage (elsewhere these compile to nothing)
#define W_STAGE(lane, groups, group)                                                                  \
    IKP_SHARED_STAGE(w_stage, groups, 64);                                                          \
    IKP_STAGE(lane, w_stage[group], 64)

enum { W_REL, W_WAIT, W_AFTER, W_INST, W_SCOPE, W_ASYNC, W_EVENTS };
enum { WK_SYNC, WK_NAMED, WK_RED, WK_CLUSTER, WK_WARP, WK_MBAR, WK_BARRIER_KINDS };

__device__ __forceinline__ void w_spin(unsigned long long cycles)
{
    const unsigned long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}

// the wait of kind K, by every thread that takes part in it; releaser:
// this thread's side releases (spun already)
template <int K> __device__ __forceinline__ void w_wait(unsigned long long *mbar, unsigned phase, bool releaser, int *sink)
{
    if (K == WK_SYNC) __syncthreads();
    if (K == WK_NAMED) asm volatile("bar.sync 1, 64;" ::: "memory");
    if (K == WK_RED) *sink += __syncthreads_count(threadIdx.x & 1);
    if (K == WK_CLUSTER) asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
    if (K == WK_WARP) __syncwarp();
    if (K == WK_MBAR) {
        const unsigned a = (unsigned)__cvta_generic_to_shared(mbar);
        if (releaser) {
            if (threadIdx.x == 0) asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(a) : "memory");
        } else {
            unsigned done;
            do {
                asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                             : "=r"(done) : "r"(a), "r"(phase) : "memory");
            } while (!done);
        }
    }
}

// 64 threads a block (with WK_CLUSTER: clusters of two blocks, whose second
// block only arrives and waits)
template <int K> __global__ void __launch_bounds__(64) barrier_waits(unsigned long long spin, int *sink, uint64_t *prof)
{
    __shared__ unsigned long long mbar;
    const unsigned warp = threadIdx.x / 32, l = threadIdx.x % 32;
    unsigned rank = 0;
    if (K == WK_CLUSTER) asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    // the releasing and the waiting thread: with __syncwarp, two halves of warp 1
    const bool releaser = K == WK_WARP ? warp == 1 && l < 16 : warp == 0 && rank == 0;
    IKP_LANE(lane);
    const unsigned group = K == WK_WARP ? (l < 16 ? 2u : 1u) : warp;
    IKP_INIT(lane, prof, group, 3, K == WK_WARP ? warp == 1 && (l == 0 || l == 16) : l == 0);
    W_STAGE(lane, 3, group);
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(&mbar)));
    __syncthreads();
    int acc = 0;
    if (K == WK_WARP && warp == 0) { // not part of the test
        IKP_FINALIZE(lane);
        return;
    }
    for (unsigned phase = 0; phase < 4; phase++) {
        if (releaser) {
            w_spin(spin);
            IKP_BEGIN(lane, W_REL);
            w_wait<K>(&mbar, phase & 1, true, &acc);
        } else if (phase == 0) {
            IKP_BEGIN(lane, W_WAIT);
            w_wait<K>(&mbar, phase & 1, false, &acc);
            IKP_END(lane, W_WAIT);
        } else if (phase == 1) {
            w_wait<K>(&mbar, phase & 1, false, &acc);
            IKP_BEGIN(lane, W_AFTER);
            IKP_END(lane, W_AFTER);
        } else if (phase == 2) {
            w_wait<K>(&mbar, phase & 1, false, &acc);
            IKP_INSTANT(lane, W_INST);
        } else {
            IKP_SCOPE(lane, W_SCOPE);
            w_wait<K>(&mbar, phase & 1, false, &acc);
        }
        // the region ends after the phase, so that with __syncwarp the
        // releasing half runs no record of its own while the waiting half
        // resumes (the two halves of a warp take turns)
        if (K == WK_WARP) __syncwarp(); else __syncthreads();
        if (releaser) IKP_END(lane, W_REL);
    }
    if (acc == 12345) *sink = acc;
    IKP_FINALIZE(lane);
}

// Asynchronous waits: the wait ends when the copy has landed. One warp a
// block copies n 16-byte pieces a thread from global to shared memory
// (cp.async) and waits for them: IKP_BEGIN(W_ASYNC); wait; IKP_END(W_ASYNC);
// then stamps W_INST right after a second wait for a second copy. Its
// region must cover the copy: the stamp after the wait comes after the
// data are there, as a read of the last piece shows.
__global__ void __launch_bounds__(32) cp_async_waits(const int4 *src, int n, int *sink, uint64_t *prof)
{
    __shared__ __align__(16) int4 buf[32 * 32];
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    W_STAGE(lane, 1, 0);
    const int4 *s = src + (size_t)blockIdx.x * 32 * 32;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < n; i++)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((unsigned)__cvta_generic_to_shared(&buf[i * 32 + threadIdx.x])),
                         "l"(s + i * 32 + threadIdx.x) : "memory");
        asm volatile("cp.async.commit_group;" ::: "memory");
        if (round == 0) {
            IKP_BEGIN(lane, W_ASYNC);
            asm volatile("cp.async.wait_group 0;" ::: "memory");
            IKP_END(lane, W_ASYNC);
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
            IKP_INSTANT(lane, W_INST);
        }
        if (buf[(n - 1) * 32 + threadIdx.x].x == 12345) *sink = 1;
        __syncwarp();
    }
    IKP_FINALIZE(lane);
}

// Bulk copies: one thread stores n KiB (n <= 32) of shared memory to global memory
// (cp.async.bulk, a bulk group) and the warp waits for the group
__global__ void __launch_bounds__(32) bulk_waits(int4 *dst, int n, uint64_t *prof)
{
    __shared__ __align__(128) int4 buf[32 * 64];
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    W_STAGE(lane, 1, 0);
    for (int i = threadIdx.x; i < 32 * 64; i += 32) buf[i] = make_int4(i, i, i, i);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncwarp();
    if (threadIdx.x == 0)
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n\tcp.async.bulk.commit_group;"
                     ::"l"(dst + (size_t)blockIdx.x * 32 * 64), "r"((unsigned)__cvta_generic_to_shared(buf)), "r"(n * 1024)
                     : "memory");
    IKP_BEGIN(lane, W_ASYNC);
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    IKP_END(lane, W_ASYNC);
    IKP_FINALIZE(lane);
}

// Programmatic dependent launch: the secondary kernel's blocks start while
// the primary's run (it allows them at once) and wait for the whole primary
// grid with griddepcontrol.wait. Primary blocks spin S cycles and record
// W_REL as they end (group 0); secondary blocks record W_WAIT around the
// wait (group 1), in one buffer.
__global__ void __launch_bounds__(32) grid_primary(unsigned long long spin, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 2, threadIdx.x == 0);
    W_STAGE(lane, 1, 0);
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    w_spin(spin);
    IKP_INSTANT(lane, W_REL);
    IKP_FINALIZE(lane);
}
__global__ void __launch_bounds__(32) grid_secondary(uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 1, 2, threadIdx.x == 0);
    W_STAGE(lane, 1, 0);
    IKP_BEGIN(lane, W_WAIT);
    asm volatile("griddepcontrol.wait;" ::: "memory");
    IKP_END(lane, W_WAIT);
    IKP_FINALIZE(lane);
}

// Two warps of one block take turns through a flag in shared memory for
// `turns` turns each: warp 0's W_WAIT region, then warp 1's, then warp
// 0's... (groups 0 and 1). Records of both are on one clock.
__global__ void __launch_bounds__(64) handshake(int turns, unsigned long long work, uint64_t *prof)
{
    __shared__ volatile int flag;
    const int warp = threadIdx.x / 32;
    IKP_LANE(lane);
    IKP_INIT(lane, prof, warp, 2, threadIdx.x % 32 == 0);
    IKP_SHARED_STAGE(hs_stage, 2, 2048);
    IKP_STAGE(lane, hs_stage[warp], 2048);
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
    for (int i = 0; i < turns; i++) {
        const int mine = 2 * i + warp;
        while (flag != mine) {}
        IKP_BEGIN(lane, W_WAIT);
        w_spin(work);
        IKP_END(lane, W_WAIT);
        if (i % 512 == 511) IKP_FLUSH(lane); /* staged: the stage holds 2048 records */
        __syncwarp();
        if (threadIdx.x % 32 == 0) flag = mine + 1;
    }
    IKP_FINALIZE(lane);
}

// Launches this build's kernels (tests/gpu/test_waits.cu): what 0, the
// barrier kind `kind` (blocks: 64 threads each; with clusters, of two);
// 1, cp.async of n pieces a thread; 2, a bulk store of n KiB; 3, the grid
// dependency after `spin` cycles; 4, the handshake of n turns of `spin`
// cycles. scratch: 16 MiB of device memory (blocks <= 256).
static inline cudaError_t waits_run(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch,
                                    uint64_t *prof)
{
    int *sink = (int *)scratch;
    int4 *data = (int4 *)scratch + 16;
    if (what == 0) {
        void (*k[WK_BARRIER_KINDS])(unsigned long long, int *, uint64_t *) = {
            barrier_waits<WK_SYNC>, barrier_waits<WK_NAMED>, barrier_waits<WK_RED>,
            barrier_waits<WK_CLUSTER>, barrier_waits<WK_WARP>, barrier_waits<WK_MBAR>};
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute at[1];
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(64);
        if (kind == WK_CLUSTER) {
            at[0].id = cudaLaunchAttributeClusterDimension;
            at[0].val.clusterDim.x = 2;
            at[0].val.clusterDim.y = at[0].val.clusterDim.z = 1;
            cfg.attrs = at;
            cfg.numAttrs = 1;
        }
        return cudaLaunchKernelEx(&cfg, k[kind], spin, sink, prof);
    }
    if (what == 1) {
        cp_async_waits<<<blocks, 32>>>(data, n, sink, prof);
        return cudaGetLastError();
    }
    if (what == 2) {
        bulk_waits<<<blocks, 32>>>(data + (size_t)blocks * 1024, n, prof); /* 32 KiB a block */
        return cudaGetLastError();
    }
    if (what == 3) {
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute at[1];
        grid_primary<<<blocks, 32>>>(spin, prof);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return e;
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(32);
        cfg.attrs = at;
        cfg.numAttrs = 1;
        return cudaLaunchKernelEx(&cfg, grid_secondary, prof);
    }
    handshake<<<blocks, 64>>>(n, spin, prof);
    return cudaGetLastError();
}
