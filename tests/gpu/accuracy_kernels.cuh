// Accuracy kernels, included inside a namespace after ikp_cuda.cuh with the
// timer kind under test (test_accuracy.cu: cycles; accuracy_gt.cu:
// globaltimer; accuracy_staged.cu: cycles, staged in shared memory, where
// the ACC_STAGE lines take effect; elsewhere they compile to nothing).
#define ACC_STAGE(lane)                                                                              \
    IKP_SHARED_STAGE(acc_stage, 1, 256);                                                             \
    IKP_STAGE(lane, acc_stage[0], 256)

// The ground truth in the lane's own timer units, read next to the stamps:
// 64-bit %clock64 (cycles) or 64-bit %globaltimer (ns).
__device__ __forceinline__ long long truth_now()
{
#if IKP_TIMER == IKP_TIMER_GLOBAL
    unsigned long long g;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g) :: "memory");
    return (long long)g;
#else
    return clock64();
#endif
}

// Regions of known length: spin ks[i] cycles between the stamps. The exact
// length is measured in the kernel by 64-bit timer reads just inside the
// stamps (truth[i]); the decoded duration must match it.
__global__ void known_length(const long long *ks, int nk, long long *truth, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    ACC_STAGE(lane);
    for (int i = 0; i < nk; i++) {
        long long k = ks[i];
        IKP_BEGIN(lane, 1);
        long long t0 = truth_now(), c0 = clock64(), c1 = c0;
        while (c1 - c0 < k) c1 = clock64();
        long long t1 = truth_now();
        IKP_END(lane, 1);
        if (threadIdx.x == 0) truth[blockIdx.x * nk + i] = t1 - t0;
    }
    // empty regions: the stamps' own skew
    for (int i = 0; i < 16; i++) { IKP_BEGIN(lane, 2); IKP_END(lane, 2); }
    IKP_FINALIZE(lane);
}

// Every block waits for the same %globaltimer tick (a deadline block 0
// publishes), then stamps an instant: one moment, seen on many SMs. With
// anchors, each lane takes an IKP_ANCHOR before each wait (cycle mode).
__global__ void same_moment(volatile unsigned long long *deadline, int reps, int anchors, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    ACC_STAGE(lane);
    if (threadIdx.x == 0) {
        if (blockIdx.x == 0) {
            unsigned long long g;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
            *deadline = g + 2000000; // 2 ms from now: every block is resident by then
            __threadfence();
        }
        unsigned long long t;
        while ((t = *deadline) == 0) {}
        for (int r = 0; r < reps; r++) {
            unsigned long long target = t + (unsigned long long)r * 100000, g;
            if (anchors) IKP_ANCHOR(lane);
            do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); } while (g < target);
            IKP_INSTANT(lane, 3);
            IKP_DATA(lane, 3, (unsigned)g); // this SM's globaltimer at the moment (diagnostic)
        }
    }
    IKP_FINALIZE(lane);
}

// A long lane: n regions of `busy` cycles, `idle` cycles apart (both 32-bit
// stamps wrap when n * (busy + idle) is over 4.3 s).
__global__ void long_run(int n, long long busy, long long idle, long long *truth, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    ACC_STAGE(lane);
    long long start = truth_now();
    for (int i = 0; i < n; i++) {
        IKP_BEGIN(lane, 4);
        long long t0 = truth_now(), c0 = clock64(), c1 = c0;
        while (c1 - c0 < busy) c1 = clock64();
        long long t1 = truth_now();
        IKP_END(lane, 4);
        if (threadIdx.x == 0) { truth[2 * i] = t0 - start; truth[2 * i + 1] = t1 - t0; }
        long long w = clock64();
        while (clock64() - w < idle) {}
    }
    for (int i = 0; i < 16; i++) { IKP_BEGIN(lane, 2); IKP_END(lane, 2); }
    IKP_FINALIZE(lane);
}

// Lanes of lane_ns on every SM with no IKP_ANCHOR: `moments` moments spread
// evenly over the lane, and between two of them 64 regions of busy work (the
// lane's records, and the points where its automatic anchors fall). A moment
// waits for a %globaltimer tick, stamps an instant, and keeps the tick read
// next to the stamp (64 bits) as the truth.
__global__ void cross_sm(volatile unsigned long long *start, unsigned long long lane_ns, int moments,
                         long long region_cycles, unsigned long long *truth, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_SHARED_STAGE(stage, 1, 256);
    IKP_STAGE(lane, stage[0], 256);
    if (threadIdx.x == 0) {
        unsigned long long g, t0, prev;
        if (blockIdx.x == 0) {
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
            *start = g + 1000000; // 1 ms from now: every block is resident by then
            __threadfence();
        }
        while ((t0 = *start) == 0) {}
        do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); } while (g < t0);
        for (int m = 0; m < moments; m++) {
            const unsigned long long target = t0 + (unsigned long long)(m + 1) * lane_ns / moments;
            for (int r = 0; r < 64; r++) {
                IKP_BEGIN(lane, 5);
                long long c0 = clock64();
                while (clock64() - c0 < region_cycles) {}
                IKP_END(lane, 5);
            }
            do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); } while (g < target);
            prev = g;
            do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); } while (g == prev);
            IKP_INSTANT(lane, 3);
            truth[(size_t)blockIdx.x * moments + m] = g;
            IKP_FLUSH(lane);
        }
    }
    IKP_FINALIZE(lane);
}
