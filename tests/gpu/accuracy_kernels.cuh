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

// Polls %globaltimer until it reads t or later; returns that read
__device__ __forceinline__ unsigned long long wait_until(unsigned long long t)
{
    unsigned long long g;
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g)); } while (g < t);
    return g;
}

// The truth for a moment: this SM's view of a %globaltimer tick, located
// to a few cycles. %globaltimer's ticks reach every SM together (an H100,
// 2026-11-23: 132 SMs located the same 400 ticks this way, each SM within
// 1.3-1.5 ns rms of the others once its own clock line was taken out), so
// a tick is one moment on every SM. Polls until two ticks before `from`,
// then reads (clock64, globaltimer) pairs in batches of eight until a tick
// at or after `from` falls between two pairs of one batch (one between
// batches is passed over for the next). Out: the tick, the cycle midway
// between the two pairs around it, and their distance in cycles. With
// max_width, a tick whose pairs came farther apart (other warps issued
// between them) is passed over for the next one, up to 64 ticks; then the
// narrowest of them stands.
struct edge_t { unsigned long long g, c, width; };
__device__ __forceinline__ edge_t edge_truth(unsigned long long from, unsigned long long max_width = ~0ull)
{
    unsigned long long cc[8], gg[8];
    edge_t best{0, 0, ~0ull};
    int seen = 0;
    wait_until(from - 64);
    for (;;) {
#pragma unroll
        for (int i = 0; i < 8; i++)
            asm volatile("mov.u64 %0, %%clock64;\n\tmov.u64 %1, %%globaltimer;" : "=l"(cc[i]), "=l"(gg[i]) :: "memory");
#pragma unroll
        for (int i = 1; i < 8; i++)
            if (gg[i] != gg[i - 1] && gg[i] >= from) {
                const edge_t e{gg[i], cc[i - 1] + (cc[i] - cc[i - 1]) / 2, cc[i] - cc[i - 1]};
                if (e.width <= max_width) return e;
                if (e.width < best.width) best = e;
                if (++seen == 64) return best;
                from = gg[i] + 1;
            }
    }
}

// A moment's truth as the kernels keep it: the tick, the cycles from it to
// a clock64 read just before the stamp, the bracket's width (3 words)
__device__ __forceinline__ void keep_truth(unsigned long long *t, const edge_t &e, unsigned long long before_stamp)
{
    t[0] = e.g;
    t[1] = before_stamp - e.c;
    t[2] = e.width;
}

// A %globaltimer value `ahead` ns from now that block 0 publishes in *at
// and every block waits for and returns (with `ahead` of a millisecond or
// more, every block is resident by then)
__device__ __forceinline__ unsigned long long common_deadline(volatile unsigned long long *at, unsigned long long ahead)
{
    unsigned long long t;
    if (blockIdx.x == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        *at = t + ahead;
        __threadfence();
    }
    while ((t = *at) == 0) {}
    return t;
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
        const unsigned long long t = common_deadline(deadline, 2000000);
        for (int r = 0; r < reps; r++) {
            const unsigned long long target = t + (unsigned long long)r * 100000;
            if (anchors) IKP_ANCHOR(lane);
            const unsigned long long g = wait_until(target);
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
// locates a %globaltimer tick (edge_truth), stamps an instant right after,
// and keeps the truth (keep_truth).
// The lane of cross_sm and fill_sm: 64 steps of region_cycles, then the
// moment, `moments` times. A step is a region (shape LANE_REGIONS), an
// instant after the spin (LANE_INSTANTS), or in turn a region, an instant,
// a region with one inside it and an instant (LANE_MIXED). With quiet
// (fill_sm), *quiet is 1 while the truth is taken and the instant stamped.
enum { LANE_REGIONS, LANE_INSTANTS, LANE_MIXED };
__device__ __forceinline__ void spin(long long cycles)
{
    const long long c0 = clock64();
    while (clock64() - c0 < cycles) {}
}
template <bool Quiet>
__device__ __forceinline__ void lane_moments(ikp_lane &lane, volatile unsigned long long *start, unsigned long long lane_ns,
                                             int moments, long long region_cycles, unsigned long long *truth,
                                             volatile int *quiet, int shape = LANE_REGIONS)
{
    const unsigned long long t0 = common_deadline(start, 1000000);
    wait_until(t0);
    for (int m = 0; m < moments; m++) {
        const unsigned long long target = t0 + (unsigned long long)(m + 1) * lane_ns / moments;
        for (int r = 0; r < 64; r++) {
            const int step = shape == LANE_REGIONS ? 0 : shape == LANE_INSTANTS ? 1 : r % 4;
            if (step == 0) {
                IKP_BEGIN(lane, 5);
                spin(region_cycles);
                IKP_END(lane, 5);
            } else if (step == 2) {
                IKP_BEGIN(lane, 8);
                spin(region_cycles / 2);
                IKP_BEGIN(lane, 9);
                spin(region_cycles / 2);
                IKP_END(lane, 9);
                IKP_END(lane, 8);
            } else {
                spin(region_cycles);
                IKP_INSTANT(lane, 6);
            }
        }
        if (Quiet) *quiet = 1;
        const edge_t e = edge_truth(target, Quiet ? 24 : ~0ull); // (fill_sm: a tick the other warps let be located)
        const unsigned long long c = clock64();
        IKP_INSTANT(lane, 3);
        if (Quiet) *quiet = 0;
        keep_truth(truth + 3 * ((size_t)blockIdx.x * moments + m), e, c);
        if (!Quiet) IKP_FLUSH(lane);
    }
}
__global__ void cross_sm(volatile unsigned long long *start, unsigned long long lane_ns, int moments,
                         long long region_cycles, unsigned long long *truth, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    IKP_SHARED_STAGE(stage, 1, 256);
    IKP_STAGE(lane, stage[0], 256);
    if (threadIdx.x == 0) lane_moments<false>(lane, start, lane_ns, moments, region_cycles, truth, NULL);
    IKP_FINALIZE(lane);
}

// cross_sm's lane in a block that fills its SM (launched with 1,024
// threads and all the shared memory a block may have, so nothing else, SM
// clock samples included, runs beside it), the other 31 warps issuing
// FMAs while the lane's regions run: the automatic anchors that its ends
// take compete for issue slots, as in a real kernel. The truth is taken
// while those warps sleep (quiet), so that it is located as precisely as
// in cross_sm and the spread measured is the decoder's, not the truth's.
__global__ void fill_sm(volatile unsigned long long *start, unsigned long long lane_ns, int moments,
                        long long region_cycles, unsigned long long *truth, uint64_t *prof, int shape)
{
    __shared__ volatile int done, quiet;
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    if (threadIdx.x == 0) done = 0, quiet = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        lane_moments<true>(lane, start, lane_ns, moments, region_cycles, truth, &quiet, shape);
        done = 1;
    } else if (threadIdx.x >= 32 && threadIdx.x % 32 == 0) {
        float x = (float)threadIdx.x;
        while (!done) {
            if (quiet) {
                __nanosleep(64);
                continue;
            }
#pragma unroll
            for (int i = 0; i < 32; i++) x = x * 0.999f + 0.5f;
        }
        if (x == -1.0f) truth[0] = 0; /* never: keeps the FMAs */
    }
    __syncthreads();
    IKP_FINALIZE(lane);
}

// One moment on many SMs, each lane placed by an IKP_ANCHOR taken shortly
// before it, at a phase of the globaltimer tick that differs from lane to
// lane (as it would in a kernel): every block waits for the same deadline
// tick, spins a block-dependent 0..127 cycles, takes the anchor, locates the
// moment's tick (edge_truth) and stamps an instant right after it; the truth
// is kept as in cross_sm. reps moments, 100 us apart.
__global__ void anchored_moment(volatile unsigned long long *deadline, int reps, unsigned long long *truth, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    ACC_STAGE(lane);
    if (threadIdx.x == 0) {
        const unsigned long long t = common_deadline(deadline, 2000000);
        for (int r = 0; r < reps; r++) {
            const unsigned long long target = t + (unsigned long long)r * 100000;
            wait_until(target - 1000);
            const long long w = clock64(), d = (blockIdx.x * 37 + r * 53) % 128;
            while (clock64() - w < d) {}
            IKP_ANCHOR(lane);
            const edge_t e = edge_truth(target);
            const unsigned long long c = clock64();
            IKP_INSTANT(lane, 3);
            keep_truth(truth + 3 * ((size_t)blockIdx.x * reps + r), e, c);
        }
    }
    IKP_FINALIZE(lane);
}

// The truth kernel of region lengths: two lanes a block (groups 0 and 1,
// each warp's lane 0 the leader), nk regions a lane of ks[i] spin cycles,
// gap cycles apart; each bracketed by the leader's own clock64 reads just
// outside and just inside IKP_BEGIN .. IKP_END, and by the %globaltimer
// ticks located just before and just after (edge_truth): the region's
// time in ns, whatever the SM clock's speed. out, 10 a region (outer begin,
// inner begin, inner end, outer end; the tick before: its ns, cycle and
// width; the tick after: the same), lane by lane. stagger: group 1 starts
// this many cycles after group 0, as a block's producer and consumer warps
// stamp at different moments, so that one lane's readings fall into the
// other's gaps (0: both in step, each region's begin gap cycles from the
// nearest reading of its SM).
#define ACC_STAGE2(lane, g)                                                                          \
    IKP_SHARED_STAGE(acc_stage2, 2, 64);                                                             \
    IKP_STAGE(lane, acc_stage2[g], 64)
#define TRUTH_WORDS 10
__global__ void truth_regions(const long long *ks, int nk, long long gap, long long stagger, long long *out,
                              uint64_t *prof)
{
    const int g = threadIdx.x / 32;
    IKP_LANE(lane);
    IKP_INIT(lane, prof, g, 2, threadIdx.x % 32 == 0);
    ACC_STAGE2(lane, g);
    if (threadIdx.x % 32 == 0) {
        long long *o = out + ((size_t)blockIdx.x * 2 + g) * nk * TRUTH_WORDS;
        for (int i = 0; i < nk; i++) {
            const long long k = ks[i];
            long long w = clock64();
            while (clock64() - w < gap + (i ? 0 : g * stagger)) {}
            unsigned long long now;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            const edge_t eb = edge_truth(now + 32);
            const long long ob = clock64();
            IKP_BEGIN(lane, 1);
            const long long ib = clock64();
            long long c = ib;
            while (c - ib < k) c = clock64();
            const long long ie = clock64();
            IKP_END(lane, 1);
            const long long oe = clock64();
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            const edge_t ee = edge_truth(now + 32);
            long long *t = o + TRUTH_WORDS * i;
            t[0] = ob; t[1] = ib; t[2] = ie; t[3] = oe;
            t[4] = (long long)eb.g; t[5] = (long long)eb.c; t[6] = (long long)eb.width;
            t[7] = (long long)ee.g; t[8] = (long long)ee.c; t[9] = (long long)ee.width;
        }
    }
    IKP_FINALIZE(lane);
}
