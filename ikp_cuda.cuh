/* ikp_cuda.cuh - v0.14.0 - IKP intra-kernel profiler, device recorder - MIT licence (end of file)

   Records region begin/end timestamps from inside CUDA kernels into a
   profile buffer that ikp.h allocates, copies back and decodes. Header
   only; no standard library in device code (NVRTC-safe).

   ARCHITECTURES
       Default build: sm_75 and newer (the oldest CUDA 13 targets; checked
       by compiling for sm_75, 80, 86, 89, 90, 100 and 120).
       IKP_STAGED=1: sm_90 and newer (the stage is copied out with
       cp.async.bulk); for an older target it is a compile error that says so.
       ikp.h and this header must be of the same version (checked when both
       are included in one file).

   QUICK START (tests/test_snippets.py compiles both kernels as written, and
   with ikp.h's host quick start in one file; uint64_t: <cstdint>)
       enum { EV_LOAD, EV_MATH, EV_DONE };              // event ids, named on the host
       __global__ void k(float *x, uint64_t *prof)    // profile buffer (ikp_cuda_buffer.device): last
       {
           IKP_LANE(lane);                              // per-thread recorder
           IKP_INIT(lane, prof, threadIdx.x / 32, blockDim.x / 32, threadIdx.x % 32 == 0);
           IKP_BEGIN(lane, EV_LOAD);
           float v = x[threadIdx.x];
           IKP_END(lane, EV_LOAD);
           {
               IKP_SCOPE(lane, EV_MATH);                // ends with the C++ scope
               v = v * v + 1.0f;
           }
           x[threadIdx.x] = v;
           IKP_INSTANT(lane, EV_DONE);
           IKP_FINALIZE(lane);
       }
   Staged (-DIKP_STAGED=1, sm_90 and newer: records kept in shared memory
   until a flush, so each record is a store to shared memory, see GUIDE.md
   "Staging"):
       __global__ void ks(float *x, uint64_t *prof)   // 4 warps a block
       {
           IKP_SHARED_STAGE(stage, 4, 1024);            // block scope, static
           IKP_LANE(lane);
           unsigned g = threadIdx.x / 32;
           IKP_INIT(lane, prof, g, 4, threadIdx.x % 32 == 0);
           IKP_STAGE(lane, stage[g], 1024);
           IKP_BEGIN(lane, EV_MATH);
           x[threadIdx.x] *= 2.0f;
           IKP_END(lane, EV_MATH);
           IKP_FINALIZE(lane);                          // flushes, then closes
       }
   Host (ikp.h): ikp_cuda_buffer_create(&buf, blocks * groups, capacity,
   NULL); ikp_cuda_buffer_reset(&buf, stream, NULL); launch with
   buf.device; ikp_cuda_dump(&buf, stream, &desc, NULL).

   BUILD
       nvcc -O2 -gencode=arch=compute_90,code=sm_90 app.cu -o app
   with `#define IKP_IMPLEMENTATION` before `#include "ikp.h"` in one .cu
   file; nvcc links the CUDA runtime itself, nothing else is needed. For
   production builds add -DIKP_ENABLE=0: every macro compiles to nothing.

   HELPERS AND COST
   A lane has the type ikp_lane (an empty struct with IKP_ENABLE=0, so the
   same code compiles); __device__ helpers take it by reference:
       __device__ void load_tile(ikp_lane &lane, const float *src) { IKP_SCOPE(lane, EV_LOAD); ... }
   Names that start with ikpd__ or IKP__ are internal (ikpd__, not ikp.h's
   ikp__, so that the two headers' internals never share a name).
   Records, which the capacity per lane counts: a region (BEGIN/END or a
   SCOPE) 2, an INSTANT 1, a DATA payload 1, an ANCHOR 2, an automatic
   anchor 1. A region (begin and end), in the leader thread: two timer
   reads, each after a store that never executes (so that a stamp right
   after __syncthreads() waits for it), two tags, two stores, one compare,
   one decrement and the ticks (GUIDE.md "Cost" says why; the count and
   what it costs: BENCHMARKS.md "Cost per event").

   One leader thread per (block, group) writes; every other thread runs the
   same macros with its writes predicated off, so macros can sit in
   warp-uniform code without branches.

   IN A KERNEL YOU DID NOT WRITE
       Early returns: IKP_INIT before them, IKP_FINALIZE on every path out
       (a lane that returns before IKP_INIT is absent; one without
       IKP_FINALIZE keeps its records and is counted unfinalized).
       A NULL buffer disarms the recorder (nothing written): time benchmark
       repeats that way and record one launch outside the timed window. A
       launch on a buffer not reset since the last one records nothing (each
       leader finds its lane taken: one compare-and-swap on its lane's
       header, and one atomic add on a header word every leader adds to,
       counted as claimed_twice).
       With -DIKP_ENABLE=0 on the command line ikp.h's CUDA helpers take and
       write nothing, so the host code needs no #if.
       README.md "Instrument a kernel" and GUIDE.md "Someone else's kernel".

   CONFIGURATION (define before including)
       IKP_ENABLE   1 (default) records; 0 compiles every macro to nothing:
                    the kernel's machine code is identical to the kernel
                    without IKP lines (only the unused buffer parameter stays)
       IKP_TIMER    IKP_TIMER_CYCLES (default): the SM cycle counter, placed
                    on the global ns axis by per-lane anchors;
                    IKP_TIMER_GLOBAL: %globaltimer_lo, in ns but coarser
                    (its step is the GPU's). See GUIDE.md "Timer kinds".
       IKP_RING     0 (default): a full lane keeps its first records and
                    counts the rest as dropped; 1: it keeps its newest
                    records (ring of the largest power of two <= capacity
                    slots, filled two records at a time: a record with no
                    partner before the next begin takes two; GUIDE.md)
       IKP_STAGED   0 (default): records are stored straight into the profile
                    buffer; 1: into a stage in shared memory that each lane
                    is given with IKP_STAGE, copied to the buffer by
                    IKP_FLUSH / IKP_FINALIZE, so a record in a pipelined
                    main loop is a store to shared memory, not to global
                    memory (GUIDE.md "Staging"; measured: BENCHMARKS.md).
                    With 0 the staging macros compile to no code, and
                    still check their arguments.
       IKP_DEFER_BEGIN 1 (default): a begin keeps its stamp in registers
                    and the lane's next record stores it, so nothing of the
                    profiler runs inside a region; 0: a begin stores its
                    record at once (in a ring, with the record before or
                    after it), a little cheaper in tight loops, but the
                    store and its wait fall inside every region.
                    Measured: BENCHMARKS.md.
       IKP_TICKS    1 (default in cycle mode, but for rings and
                    IKP_DEFER_BEGIN=0): each end and instant reads
                    %globaltimer right after its stamp and the lane's next
                    begin carries 14 bits of it (FORMAT.md "Ticks"), from
                    which the decoder places the SM clock on the ns axis
                    all along the lane: kernels that fill every SM (no SM
                    clock sample can run beside them) are placed across
                    SMs within a tick or two however long they run. One
                    read and two instructions a region, no branch; 0: none
                    (measured: BENCHMARKS.md).
       IKP_ANCHOR_EVERY 0 (default): a lane is placed on the ns axis by its
                    start and end anchors, any IKP_ANCHOR, and the SM clock
                    samples that ikp.h's download takes beside the kernel
                    (at no cost to the recorder); N > 0 (cycle mode): an
                    end or instant at least N cycles after the lane's last
                    anchor takes an anchor itself (a located %globaltimer
                    tick, one more record), for kernels that fill every SM
                    (no samples can run beside them) and captures
                    downloaded without samples: 65536 places such kernels
                    across SMs within 100 ns however long they run. It
                    costs a compare and a branch per end, 1.4-4x the cost
                    of an event in tight loops. GUIDE.md "Anchors"
                    says when to use it; measured: BENCHMARKS.md.

   MACROS
       IKP_LANE(name)                         declare a recorder
       IKP_INIT(lane, buf, group, num_groups, is_leader)
       IKP_BEGIN(lane, event)  IKP_END(lane, event)  IKP_INSTANT(lane, event)
       IKP_DATA(lane, event, u32)             attach a payload to the previous record
       IKP_SCOPE(lane, event)                 begin now, end at the end of the scope
       IKP_PIN(value)                         keep the computation of value inside
                                              the region (see GUIDE.md "Meaning")
       IKP_FINALIZE(lane)                     end anchors and counts; call once at the end
       IKP_ANCHOR(lane)                       cycle mode: one more (globaltimer, cycles)
                                              pair, for long lanes (GUIDE.md "Anchors");
                                              slow: it waits for a globaltimer tick
       IKP_SHARED_STAGE(name, lanes, records) declare __shared__ staging for `lanes` lanes
                                              (IKP_STAGED=0: a null pointer, no memory)
       IKP_STAGE(lane, words, records)        after IKP_INIT: records go to shared memory
                                              words (IKP_STAGE_WORDS(records) of them);
                                              again, bounded: flushes the lane, keeps its stage
       IKP_FLUSH(lane)                        copy staged records to the profile buffer
   Events are integers 0..16383 (names are given on the host).
*/
#ifndef IKP_CUDA_CUH
#define IKP_CUDA_CUH

#define IKP_CUDA_VERSION_MAJOR 0
#define IKP_CUDA_VERSION_MINOR 14
#define IKP_CUDA_VERSION_PATCH 0
#if defined(IKP_VERSION_MAJOR) && (IKP_CUDA_VERSION_MAJOR != IKP_VERSION_MAJOR || \
    IKP_CUDA_VERSION_MINOR != IKP_VERSION_MINOR || IKP_CUDA_VERSION_PATCH != IKP_VERSION_PATCH)
#error "ikp.h and ikp_cuda.cuh are from different IKP versions: copy both headers from one release"
#endif

#ifndef IKP_ENABLE
#define IKP_ENABLE 1
#endif
#define IKP_TIMER_CYCLES 1
#define IKP_TIMER_GLOBAL 2
#ifndef IKP_TIMER
#define IKP_TIMER IKP_TIMER_CYCLES
#endif
#ifndef IKP_RING
#define IKP_RING 0
#endif
#ifndef IKP_STAGED
#define IKP_STAGED 0
#endif
#ifndef IKP_DEFER_BEGIN
#define IKP_DEFER_BEGIN 1
#endif
#ifndef IKP_ANCHOR_EVERY
#define IKP_ANCHOR_EVERY 0
#endif
#ifndef IKP_TICKS
#define IKP_TICKS (IKP_TIMER == IKP_TIMER_CYCLES && !IKP_RING && IKP_DEFER_BEGIN)
#endif
#if IKP_TICKS && (IKP_TIMER != IKP_TIMER_CYCLES || IKP_RING || !IKP_DEFER_BEGIN)
#error "IKP_TICKS=1 needs the cycle timer, a bounded lane (IKP_RING=0) and deferred begins (IKP_DEFER_BEGIN=1)"
#endif
#if IKP_ENABLE && IKP_STAGED && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "IKP_STAGED=1 needs sm_90 or newer (the stage is copied out with cp.async.bulk): build this file for sm_90+, or with -DIKP_STAGED=0 for older GPUs"
#endif

/* wire format (FORMAT.md); kept identical in ikp.h */
#ifndef IKP_WIRE_DEFINED
#define IKP_WIRE_DEFINED
#define IKP_WIRE_MAGIC 0x31504B49u
#define IKP_WIRE_VERSION 1u
#define IKP_WIRE_HEADER_WORDS 8u
#define IKP_WIRE_LANE_WORDS 8u
#define IKP_WIRE_SINK_SLOTS 1u
#define IKP_WIRE_LANE_MAGIC 0x4C41u
#define IKP_WIRE_LANE_CYCLES 0x1u
#define IKP_WIRE_LANE_RING 0x2u
#define IKP_WIRE_LANE_PAIRS 0x4u
#define IKP_WIRE_LANE_TICKS 0x8u
#define IKP_WIRE_LANE_ITICKS 0x10u
#define IKP_WIRE_TICKS_SHIFT 16u
#define IKP_WIRE_TICKS_MASK 0x3FFFu
#define IKP_WIRE_TICK_NS_SHIFT 5u
#define IKP_WIRE_FINALIZED (1ull << 63)
#define IKP_WIRE_KIND_DATA 0u
#define IKP_WIRE_KIND_BEGIN 1u
#define IKP_WIRE_KIND_END 2u
#define IKP_WIRE_KIND_INSTANT 3u
#define IKP_WIRE_DATA_MARK 0x80000000u
#define IKP_WIRE_ANCHOR 0x40000000u
#define IKP_WIRE_MAX_EVENTS 16384u
#define IKP_WIRE_KIND_MASK 0x3u
#define IKP_WIRE_EVENT_SHIFT 2u
#define IKP_WIRE_EVENT_MASK 0x3FFFu
#define IKP_WIRE_AUTO_ANCHOR_ID 2u
#define IKP_WIRE_AUTO_WIDTH_MAX 0x3FFDu
#define IKP_WIRE_AUTO_DELTA_SHIFT 16u
#define IKP_WIRE_AUTO_DELTA_MAX 0x3FFFu
#define IKP_WIRE_LANE_FLAGS_SHIFT 16u
#define IKP_WIRE_TAG(event, kind) ((((unsigned)(event) & IKP_WIRE_EVENT_MASK) << IKP_WIRE_EVENT_SHIFT) | (kind))
#endif
#if IKP_WIRE_VERSION != 1
#error "ikp_cuda.cuh writes IKP wire format version 1; an ikp.h of another version was included first"
#endif

/* shared-memory staging (IKP_STAGE): a header, the records, a sink, a spare word */
#define IKP_STAGE_HEADER_WORDS 5u
#define IKP_STAGE_WORDS(records) ((records) + IKP_STAGE_HEADER_WORDS + 2u) /* + sink, spare */

#define IKP__CAT2(a, b) a##b
#define IKP__CAT(a, b) IKP__CAT2(a, b)

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

#define IKP_LANE(name) ikp_lane name
#define IKP_INIT(lane, buf, group, num_groups, is_leader) \
    ikpd__init(lane, (unsigned long long *)(buf), (unsigned)(group), (unsigned)(num_groups), (is_leader))
#define IKP_BEGIN(lane, event) ikpd__begin(lane, IKP_WIRE_TAG(event, IKP_WIRE_KIND_BEGIN))
#define IKP_END(lane, event) ikpd__record(lane, IKP_WIRE_TAG(event, IKP_WIRE_KIND_END))
#define IKP_INSTANT(lane, event) ikpd__record(lane, IKP_WIRE_TAG(event, IKP_WIRE_KIND_INSTANT))
#define IKP_DATA(lane, event, value) \
    ikpd__data(lane, IKP_WIRE_TAG(event, IKP_WIRE_DATA_MARK), (unsigned)(value))
#define IKP_SCOPE(lane, event) ikpd__scope IKP__CAT(ikpd__scope_, __LINE__)(lane, (unsigned)(event))
#define IKP_PIN(value) ikpd__pin(value)
#define IKP_FINALIZE(lane) ikpd__finalize(lane)
#define IKP_ANCHOR(lane) ikpd__anchor_record(lane)
#if !(IKP_ENABLE && IKP_STAGED)
/* a null pointer of the stage's row type stands for the array, so that the
   arguments are checked as in a staged build; sizeof emits no code */
#define IKP_SHARED_STAGE(name, lanes, records)                                                     \
    static_assert((lanes) > 0 && (records) > 0, "IKP_SHARED_STAGE: lanes and records are positive constants"); \
    unsigned long long(*name __attribute__((unused)))[IKP_STAGE_WORDS(records)] = 0
#define IKP_STAGE(lane, words, records) ((void)(lane), (void)sizeof(words), (void)sizeof((unsigned)(records)))
#define IKP_FLUSH(lane) ((void)(lane))
#else
#define IKP_SHARED_STAGE(name, lanes, records) __shared__ __align__(16) unsigned long long name[lanes][IKP_STAGE_WORDS(records)]
#define IKP_STAGE(lane, words, records) ikpd__stage(lane, (unsigned long long *)(words), (unsigned)(records))
#define IKP_FLUSH(lane) ikpd__flush(lane)
#endif

#if IKP_ENABLE

/* A record slot's address: a pointer into the profile buffer, or with
   IKP_STAGED a shared-memory address (32 bits), which one st.shared takes */
#if !IKP_STAGED
typedef unsigned long long *ikpd__slot_t;
#define IKP__SLOT_STEP 1u
#else
typedef unsigned ikpd__slot_t;
#define IKP__SLOT_STEP 8u
#endif
/* bounded: a record is stored while the slots left exceed this: staged,
   left is the stage's free slots plus one, so that, saturating at 0, it
   ends at 1 on a stage that filled and at 0 on one that overflowed */
#define IKP__LEFT_EXTRA (IKP_STAGED ? 1 : 0)

/* Per-thread recorder state: lives in registers. A storage mode uses the
   fields of its column; the others keep what IKP_INIT put there (0; on:
   1). C: the lane's record slots in the profile buffer; S: its stage's
   (IKP_STAGE); R: a ring's, the largest power of two <= C (staged, once
   staged: <= S).

   field  bounded             staged                           ring (staged: rec, on as staged)
   rec    first slot          first slot: the buffer's, once   first slot
                              staged the stage's (its shared-
                              memory address)
   p      next record's slot  -                                -
   left   slots left          the stage's slots left, plus 1   -
   n      -                   8 bytes for each record taken    slots taken (staged: since the
                              since the flush or stage         flush or stage)
   pads   -                   records dropped while the lane   pad slots taken
                              had no stage
   cap    C                   C; once staged S, 0 once the     R - 1, the slot mask (staged: the
                              stage overflowed                 buffer's, once staged the stage's)
   on     (1, not read)       1: writes; 2: waits for its      (1, not read)
                              stage; 0: closed
   Slots left saturate at 0. Staged, the one more (IKP__LEFT_EXTRA) makes
   them 1 on a full stage and on a lane not staged, and 0 once more
   records were taken than the stage holds, however many more. */
struct ikp_lane {
    unsigned long long *rec; /* first record slot (0: this thread writes nothing) */
    ikpd__slot_t p;          /* bounded: the next record's slot */
    int left;                /* bounded, staged: slots left */
    unsigned n;              /* staged: 8 bytes a record taken; ring: slots taken */
    unsigned pads;           /* staged: records dropped without a stage; ring: pad slots taken */
    unsigned cap;            /* bounded: C; staged: C, then S; ring: R - 1 */
    unsigned on;             /* staged: 1: this thread writes (leader of an open lane);
                                0: closed; 2: claimed, waiting for its stage */
    unsigned bt, bk;         /* the pending record (a begin; in a ring, any record that
                                starts a pair): its stamp or value and tag (bk 0: none) */
    unsigned due;            /* cycle mode: the stamp from which the next end or instant
                                takes an anchor (IKP_ANCHOR_EVERY) */
    unsigned gq;             /* IKP_TICKS: %globaltimer's low word after the last end or
                                instant's stamp, for the next begin's tag */
};

__device__ __forceinline__ unsigned ikpd__smid()
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

/* One (clock64, globaltimer) pair, read back to back (two CS2R). */
__device__ __forceinline__ void ikpd__pair(unsigned long long *c, unsigned long long *g)
{
    asm volatile("mov.u64 %0, %%clock64;\n\tmov.u64 %1, %%globaltimer;" : "=l"(*c), "=l"(*g) :: "memory");
}

/* An anchor: a globaltimer tick and the SM cycle at which it came, to
   within a few cycles. A poll of %globaltimer (read, compare, read again)
   takes about as long as one 32 ns tick, so it sees a tick up to a poll
   late, differently on every SM. Here six (clock, globaltimer) pairs are
   read in a burst, back to back, so that together they span nearly one
   tick; the first tick between two pairs of the burst is kept, with the
   cycle midway between them (their low words, widened by one more pair).
   A burst without a tick inside is read again, up to IKP__ANCHOR_BURSTS
   times (then the last pair stands). %globaltimer's
   ticks reach all SMs together, so the pair names one instant on every SM
   alike. An IKP_ANCHOR waits for a tick and reads its bursts: hundreds of
   cycles, not a record's few (measured: BENCHMARKS.md, "Cost per
   event"). */
#define IKP__ANCHOR_BURSTS 64
/* A pair's two low words. The reads are predicated on `on` (never 0, but
   not known to the compiler to be the same on every thread), which keeps
   them per-thread CS2R: unpredicated, the compiler may read some through
   the warp's uniform datapath (S2UR, another pipe), and a pair's two reads
   would no longer be back to back. */
__device__ __forceinline__ void ikpd__pair32(unsigned on, unsigned *c, unsigned *g)
{
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %2, 0;\n\t@q mov.u32 %0, %%clock;\n\t@q mov.u32 %1, %%globaltimer_lo;\n\t}"
                 : "+r"(*c), "+r"(*g) : "r"(on) : "memory");
}
/* the burst's pairs a (earlier) and b: a tick between them ends the search */
#define IKP__ANCHOR_CHECK(ca, ga, cb, gb)                                                          \
    if (ga != gb) {                                                                                  \
        c0 = ca, c1 = cb, gt = gb;                                                                   \
        break;                                                                                       \
    }
__device__ __forceinline__ void ikpd__anchor(unsigned long long *g, unsigned long long *c)
{
    unsigned on, a0 = 0, b0 = 0, a1 = 0, b1 = 0, a2 = 0, b2 = 0, a3 = 0, b3 = 0, a4 = 0, b4 = 0, a5 = 0, b5 = 0;
    unsigned c0 = 0, c1 = 0, gt = 0;
    asm volatile("{\n\t.reg .u32 t;\n\tmov.u32 t, %%laneid;\n\tadd.u32 %0, t, 1;\n\t}" : "=r"(on));
#pragma unroll 1
    for (int i = 0; i < IKP__ANCHOR_BURSTS; i++) {
        ikpd__pair32(on, &a0, &b0);
        ikpd__pair32(on, &a1, &b1);
        ikpd__pair32(on, &a2, &b2);
        ikpd__pair32(on, &a3, &b3);
        ikpd__pair32(on, &a4, &b4);
        ikpd__pair32(on, &a5, &b5);
        c0 = c1 = a5, gt = b5; /* if none is found */
        IKP__ANCHOR_CHECK(a0, b0, a1, b1);
        IKP__ANCHOR_CHECK(a1, b1, a2, b2);
        IKP__ANCHOR_CHECK(a2, b2, a3, b3);
        IKP__ANCHOR_CHECK(a3, b3, a4, b4);
        IKP__ANCHOR_CHECK(a4, b4, a5, b5);
    }
    unsigned long long cn, gn;
    ikpd__pair(&cn, &gn);
    *g = gn - (unsigned)((unsigned)gn - gt);
    *c = cn - (unsigned)((unsigned)cn - (c0 + (c1 - c0) / 2));
}
/* ring masks: the largest power of two <= x (x > 0), minus one */
__device__ __forceinline__ unsigned ikpd__ring_mask(unsigned x) { return (1u << (31 - __clz(x))) - 1; }

__device__ __forceinline__ void ikpd__init(ikp_lane &l, unsigned long long *buf, unsigned group,
                                          unsigned num_groups, bool is_leader)
{
    l.rec = 0;
    l.p = 0;
    l.left = 0;
    l.n = 0;
    l.pads = 0;
    l.cap = 0;
    l.on = 0;
    l.bt = 0;
    l.bk = 0;
    l.due = 0;
    l.gq = 0;
    if (!is_leader || buf == 0) return;
    unsigned long long h0 = buf[0], h1 = buf[1];
    if ((unsigned)h0 != IKP_WIRE_MAGIC || (unsigned)(h0 >> 32 & 0xFFFFu) != IKP_WIRE_VERSION)
        return; /* never initialised: write nothing at all */
    unsigned long long lanes = h1 & 0xFFFFFFFFull, cap = h1 >> 32;
    unsigned long long block = blockIdx.x + (unsigned long long)gridDim.x *
                                                (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    unsigned long long lane = block * num_groups + group;
    if (group >= num_groups || num_groups > 0xFFFFu || lane >= lanes) {
        atomicAdd(&buf[3], 1ull); /* refused: the host reports the grid too large */
        atomicMax(&buf[4], lane + 1);
        return;
    }
    unsigned long long *h = buf + IKP_WIRE_HEADER_WORDS + lane * (IKP_WIRE_LANE_WORDS + cap + IKP_WIRE_SINK_SLOTS);
    unsigned long long flags = (IKP_TIMER == IKP_TIMER_CYCLES ? IKP_WIRE_LANE_CYCLES : 0u) |
                               (IKP_RING ? IKP_WIRE_LANE_RING | IKP_WIRE_LANE_PAIRS : 0u) |
                               (IKP_TICKS ? IKP_WIRE_LANE_TICKS | IKP_WIRE_LANE_ITICKS : 0u);
    unsigned long long l0 = IKP_WIRE_LANE_MAGIC | flags << IKP_WIRE_LANE_FLAGS_SHIFT | (unsigned long long)ikpd__smid() << 32;
    if (atomicCAS(&h[0], 0ull, l0) != 0ull) {
        atomicAdd(&buf[5], 1ull); /* claimed twice: not reset, or two leaders */
        return;
    }
    h[1] = block | (unsigned long long)group << 32 | (unsigned long long)num_groups << 48;
    h[2] = gridDim.x | (unsigned long long)(gridDim.y & 0xFFFFu) << 32 |
           (unsigned long long)(gridDim.z & 0xFFFFu) << 48;
    unsigned long long g, c;
    ikpd__anchor(&g, &c);
    h[3] = g;
    h[4] = c;
    l.due = (unsigned)c + IKP_ANCHOR_EVERY;
#if !IKP_RING && !IKP_STAGED /* bounded */
    l.cap = (unsigned)(cap > 0x7FFFFFFFull ? 0x7FFFFFFFull : cap);
    l.p = h + IKP_WIRE_LANE_WORDS;
    l.left = (int)l.cap;
#elif !IKP_RING /* staged */
    l.cap = (unsigned)(cap > 0x7FFFFFFFull ? 0x7FFFFFFFull : cap);
    l.left = IKP__LEFT_EXTRA; /* no stage yet: no slot */
#else /* ring, staged or not */
    if (cap < 2) return; /* no room for a pair: the lane stays closed */
    l.cap = ikpd__ring_mask((unsigned)(cap > 0x80000000ull ? 0x80000000ull : cap));
#endif
    l.rec = h + IKP_WIRE_LANE_WORDS;
    l.on = IKP_STAGED ? 2 : 1;
}

/* The hot path. On the writing thread (the leader of an open lane) a
   record is one timer read and one 8-byte store (v2.u32: tag, then stamp).
   Bounded mode keeps the next record's slot p (staged: a count of 8 bytes
   a record since the flush, ikpd__slot) and the slots left; a record
   is stored when any are left (one compare), so the stored records are the
   lane's first ones. A begin keeps its stamp in registers and the lane's
   next record stores it beside its own, on one compare: when only one slot
   is left, the second lands in the lane's sink (slot C), which the decoder
   ignores. p advances by a constant for every record, whether stored or
   not (it counts them for the drops), so the compiler folds the slots of a
   loop iteration into constant offsets from one address, and the compares
   into compares with constants: per region (begin and end) two timer
   reads, two tag moves, one compare, one saturating decrement and two
   stores (tests/sass/check_sass.py counts them). The slots left saturate
   at 0, so they hold however many records a lane attempts (staged, n
   wraps at 2^29 records, and the slots left, 0 once more records were
   taken than the stage holds, let the flush tell a count that wrapped
   from a small one: ikpd__least).
   Ring mode takes slots two at a time, at n mod R with n even: a record
   waits in registers for the lane's next one and the two are stored
   together (one slot address for both); a record that no partner follows
   before a begin, an IKP_ANCHOR, a flush or the finalize takes its pair
   alone, its second slot a pad (a zero word, which the decoder skips; the
   finalize writes the pads' count in the word after the ring, so the
   decoder counts records, not slots).
   Each store is one asm statement that tests its predicate itself: the
   compiler cannot turn the stores into branches around several events (a
   branch on a lane-dependent value would make the warp diverge). The
   timer read is one asm statement too, read on every thread: it compiles
   to a per-thread CS2R (tests/sass/check_sass.py checks that no record
   reads it through the warp's uniform datapath, S2UR, which measured
   slower). Its "memory" clobber keeps memory operations on their side of
   the stamp. A begin's stamp is stored by the next record
   because a store reads its registers late, and the first later
   instruction that writes one of them waits for that: stored at once,
   that wait fell inside the region (measured: BENCHMARKS.md). */
/* A stamp is read after every wait its warp issued before it. A warp
   that reaches bar.sync (__syncthreads, a named barrier) goes on issuing
   the instructions after it and stops only at the first one the barrier
   must order: a memory access (or an instruction of the warp's uniform
   datapath). A clock read is not one, so a stamp read right after
   __syncthreads() read the time before the warp waited. So each stamp is
   one store and then the timer read, in one asm statement: a store that
   never executes (its predicate is false on every thread: a kernel's
   dynamic shared memory is never over 4 GiB - 64 KiB, a bound the
   compiler cannot see; the compare is made here, outside the asm
   statements, and the compiler keeps its predicate across loops, where
   made inside each statement it was made again before every stamp) still
   stops the warp there, and the compiler keeps memory operations and
   clock reads in their order. It moves no data; it costs one issue slot a
   stamp (measured: BENCHMARKS.md, "Stamps after a wait").
   w, the record's check, is an input so that it is computed before the
   stamp: a begin's check is its end's too, and nothing but the next
   stamp's store then stands between the two stamps of an empty region */
__device__ __forceinline__ unsigned ikpd__never()
{
    unsigned z;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(z)); /* not volatile: read once */
    return z > 0xFFFF0000u;
}
#if IKP_TIMER != IKP_TIMER_GLOBAL
#define IKP__TIMER_READ "mov.u32 %0, %%clock;"
#else
#define IKP__TIMER_READ "mov.u32 %0, %%globaltimer_lo;"
#endif
/* the store that never executes, its operands %z (ikpd__never()) and %a
   (an address) */
#define IKP__NEVER_STORE(z, a) "{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %" #z ", 0;\n\t@q st.global.u32 [%" #a "], 0;\n\t}\n\t"
/* the stamp; with g (IKP_TICKS), %globaltimer's low word into *g right
   after it */
__device__ __forceinline__ unsigned ikpd__stamp(const ikp_lane &l, unsigned w, unsigned *g = 0)
{
    unsigned t;
    if (g) {
        /* %globaltimer read whole, its low word kept: read as its low word
           alone, ptxas at times takes it through the warp's uniform
           datapath (S2UR, and a move that waits for it) */
        unsigned long long g64;
        asm volatile(IKP__NEVER_STORE(3, 4) IKP__TIMER_READ "\n\tmov.u64 %1, %%globaltimer;"
                     : "=r"(t), "=l"(g64) : "r"(w), "r"(ikpd__never()), "l"(l.rec) : "memory");
        *g = (unsigned)g64;
    } else
        asm volatile(IKP__NEVER_STORE(2, 3) IKP__TIMER_READ : "=r"(t) : "r"(w), "r"(ikpd__never()), "l"(l.rec) : "memory");
    return t;
}
/* the record (tag, v) at slot s, where w */
__device__ __forceinline__ void ikpd__st(unsigned w, ikpd__slot_t s, unsigned tag, unsigned v)
{
#if !IKP_STAGED
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %0, 0;\n\t@q st.global.v2.u32 [%1], {%2, %3};\n\t}"
                 :: "r"(w), "l"(s), "r"(tag), "r"(v) : "memory");
#else
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %0, 0;\n\t@q st.shared.v2.u32 [%1], {%2, %3};\n\t}"
                 :: "r"(w), "r"(s), "r"(tag), "r"(v) : "memory");
#endif
}
/* 1 on the writing thread, opaque to the optimiser at each event: a flag
   that it could see is loop-invariant would let it unswitch a loop on it,
   which makes the warp diverge */
__device__ __forceinline__ unsigned ikpd__writes(const ikp_lane &l)
{
#if !IKP_STAGED
    unsigned w = l.rec != 0;
#else
    unsigned w = l.on == 1u;
#endif
    asm volatile("" : "+r"(w));
    return w;
}

/* The storage modes, one block each, define
       ikpd__room(l)     1 where the next record is stored (0 on any thread
                         but the writing one)
       ikpd__slot(l)     the next record's slot (ring: the next pair's)
       ikpd__take(l, k)  k records (1 or 2) taken
       ikpd__closing(l, &h, &stored, &dropped)
                         at the finalize: the lane's header h, its records
                         stored and dropped (a staged lane flushed first)
   and the functions below that store records take slots only through
   these. */
#if IKP_STAGED
__device__ __forceinline__ void ikpd__flush(ikp_lane &l);
__device__ __forceinline__ unsigned long long *ikpd__stage_slots(const ikp_lane &l);
#endif
#if !IKP_RING && !IKP_STAGED /* bounded */
/* Bounded: the next record's slot is p, and a record is stored while slots
   are left, which saturate at 0 */
__device__ __forceinline__ unsigned ikpd__room(const ikp_lane &l) { return l.left > IKP__LEFT_EXTRA; }
__device__ __forceinline__ ikpd__slot_t ikpd__slot(const ikp_lane &l) { return l.p; }
__device__ __forceinline__ void ikpd__take(ikp_lane &l, int k)
{
    l.p += k * IKP__SLOT_STEP;
    l.left = __viaddmax_s32(l.left, -k, 0); /* max(left - k, 0) in one instruction (sm_90) */
}
/* stored: the slots taken of the C; dropped: every record taken past them */
__device__ __forceinline__ void ikpd__closing(ikp_lane &l, unsigned long long **hp, unsigned *sp, unsigned long long *dp)
{
    unsigned long long *h, dropped;
    unsigned stored;
    h = l.rec - IKP_WIRE_LANE_WORDS;
    stored = l.cap - (unsigned)l.left;
    dropped = (unsigned long long)(l.p - l.rec) - stored;
    *hp = h;
    *sp = stored;
    *dp = dropped;
}
#elif !IKP_RING /* staged */
/* Staged (bounded): as bounded, in the stage; the slots left are the
   stage's free slots plus one (IKP__LEFT_EXTRA) */
__device__ __forceinline__ unsigned ikpd__room(const ikp_lane &l) { return l.left > IKP__LEFT_EXTRA; }
/* the next record's slot: the stage's first slot plus n, a count of 8
   bytes a record taken since the flush, which is also the next record's
   byte offset from that slot (counted in records, the loop would keep
   both, one more instruction a loop iteration).
   Every thread takes the same records (but
   automatic anchors, which only the writing thread takes), so that count
   is the same on all of them: the compiler keeps it in a uniform
   register, and a loop iteration adds it to the stage's address once, for
   stores at constant offsets from that sum. A per-thread slot address
   advanced right after the stores that read it (as without staging)
   likely makes the advance wait for them (a store reads its registers
   late), in every loop iteration; counted, an event costs 0.81-0.91x as
   much at 4 warps/SM (measured in one run).
   The empty asm keeps the compiler from turning base + n
   back into such an address. Stores stay inside the stage: they are
   predicated on slots left. */
__device__ __forceinline__ ikpd__slot_t ikpd__slot(const ikp_lane &l)
{
    unsigned b = (unsigned)(unsigned long long)l.rec;
    asm("" : "+r"(b));
    return b + l.n;
}
__device__ __forceinline__ void ikpd__take(ikp_lane &l, int k)
{
    l.n += k * IKP__SLOT_STEP;
    l.left = __viaddmax_s32(l.left, -k, 0); /* max(left - k, 0) in one instruction (sm_90) */
}
/* the records taken since the flush (or the stage), modulo 2^29: n counts
   their bytes in 32 bits */
__device__ __forceinline__ unsigned ikpd__taken(const ikp_lane &l) { return l.n / IKP__SLOT_STEP; }
/* m = ikpd__taken(l) read as a count: the slots left, saturating at 0, say
   whether more records were taken than the s slots of the stage (0 before
   it); the count returned is the fewest that both allow: exact up to
   s + 2^29 records, a lower bound past that, and never 0 once a record was
   taken. (Computed where it is used, after the flush's branch: computed
   once before it, ptxas kept the loops' count n in a per-thread register
   instead of a uniform one.) */
__device__ __forceinline__ unsigned ikpd__least(const ikp_lane &l, unsigned m, unsigned s)
{
    return l.left > 0 || m > s ? m : m + (1u << 29);
}
/* a lane not staged (yet): its m = ikpd__taken(l) records since the flush
   dropped, counted in pads (which saturate rather than wrap), and its
   slots left restarted with the count (the caller zeroes n) */
__device__ __forceinline__ void ikpd__drop_unstaged(ikp_lane &l, unsigned m)
{
    const unsigned k = ikpd__least(l, m, 0);
    l.pads += k < ~l.pads ? k : ~l.pads;
    l.left = IKP__LEFT_EXTRA;
}
/* a staged lane flushed, its counts read from the stage; one never staged
   dropped every record */
__device__ __forceinline__ void ikpd__closing(ikp_lane &l, unsigned long long **hp, unsigned *sp, unsigned long long *dp)
{
    unsigned long long *h, dropped;
    unsigned stored;
    if (l.on == 1u) {
        ikpd__flush(l);
        const unsigned long long *hd = (const unsigned long long *)ikpd__stage_slots(l)[-1];
        h = (unsigned long long *)hd[0] - IKP_WIRE_LANE_WORDS;
        stored = (unsigned)(hd[1] >> 32);
        dropped = hd[2];
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); /* the copies have landed */
    } else {
        h = l.rec - IKP_WIRE_LANE_WORDS;
        stored = 0;
        dropped = (unsigned long long)l.pads + ikpd__least(l, ikpd__taken(l), 0);
    }
    *hp = h;
    *sp = stored;
    *dp = dropped;
}
#else /* ring, staged or not */
/* Ring, staged or not: slots are taken two at a time, at n mod R, on the
   writing thread */
__device__ __forceinline__ unsigned ikpd__room(const ikp_lane &l) { return ikpd__writes(l); }
__device__ __forceinline__ ikpd__slot_t ikpd__slot(const ikp_lane &l)
{
#if !IKP_STAGED
    return l.rec + (l.n & l.cap);
#else
    return (unsigned)(unsigned long long)l.rec + (l.n & l.cap) * 8u;
#endif
}
__device__ __forceinline__ void ikpd__take(ikp_lane &l, int k) { l.n += k; }
/* stored: the newest slots, at most R; staged, a staged lane flushed and
   its counts read from the stage, one never staged dropped every record.
   Then the word after the ring: the pads taken, so that the decoder counts
   the records overwritten, not the slots */
__device__ __forceinline__ void ikpd__closing(ikp_lane &l, unsigned long long **hp, unsigned *sp, unsigned long long *dp)
{
    unsigned long long *h, dropped;
    unsigned stored;
    unsigned ring_mask = l.cap; /* the profile buffer's ring (staged: read from the stage) */
#if !IKP_STAGED
    h = l.rec - IKP_WIRE_LANE_WORDS;
    stored = l.n < l.cap + 1 ? l.n : l.cap + 1;
    dropped = l.n - stored;
#else
    if (l.on == 1u) {
        ikpd__flush(l);
        const unsigned long long *hd = (const unsigned long long *)ikpd__stage_slots(l)[-1];
        h = (unsigned long long *)hd[0] - IKP_WIRE_LANE_WORDS;
        stored = (unsigned)(hd[2] >> 32);
        dropped = (unsigned)(hd[1] >> 32) - stored;
        ring_mask = (unsigned)hd[1];
    } else {
        h = l.rec - IKP_WIRE_LANE_WORDS;
        stored = 0;
        dropped = l.n;
    }
#endif
    h[IKP_WIRE_LANE_WORDS + ring_mask + 1] = l.pads;
    *hp = h;
    *sp = stored;
    *dp = dropped;
}
#endif

/* two records in lane order, (t0, v0) then (t1, v1), on one check w, in
   two neighbouring slots: the later record first: a store reads its
   registers late, and the next begin's and end's stamps wait for the
   stores that read their registers; this way the begin's waits for the
   later one and the end's stamp follows it at once (an empty region reads
   only the two stamps' own distance; measured: BENCHMARKS.md) */
__device__ __forceinline__ void ikpd__put2(ikp_lane &l, unsigned w, unsigned t0, unsigned v0, unsigned t1, unsigned v1)
{
    const ikpd__slot_t s = ikpd__slot(l);
    ikpd__st(w, s + IKP__SLOT_STEP, t1, v1);
    ikpd__st(w, s, t0, v0);
    ikpd__take(l, 2);
}
/* one record, (tag, v), where w; in a ring, with a pad (a zero word) in the
   pair's second slot */
__device__ __forceinline__ void ikpd__put1(ikp_lane &l, unsigned w, unsigned tag, unsigned v)
{
#if !IKP_RING
    ikpd__st(w, ikpd__slot(l), tag, v);
    ikpd__take(l, 1);
#else
    ikpd__put2(l, w, tag, v, 0u, 0u);
    l.pads++;
#endif
}
/* Ticks (IKP_TICKS: cycle mode, bounded or staged bounded, begins
   deferred): an end or instant reads %globaltimer's low word right after
   its stamp and keeps it in l.gq; the lane's next begin or instant
   carries bits 5..18 of it (32 ns ticks, wrapping every 524 us) in its
   tag's bits 16..29 (FORMAT.md "Ticks"), put in when that record is
   stored, when the read is long done: a read, a shift and one LOP3 that
   masks the bits and ors in the tag, a region or instant, no branch, no
   wait (in the end's own tag, the end's stores would wait for the read).
   Not before the begin's stamp, though that frees the read's register
   sooner (a loop then carries no move for it): there the begin's record,
   ready early, is stored first and the end's last, and the next end's
   stamp, not the next begin's, waits for that store to read its
   registers, inside the region, for as long as the store takes to read
   them (BENCHMARKS.md "Cost per event"). Each is a reading of
   the SM's clock to within a tick: the decoder places the SM's clock from
   many of them, in lanes of regions and in lanes of instants alike. (A
   ring's pending record is not always a begin or an instant: rings carry
   none.) The LOP3 is written out: from C, ptxas made the mask and the or
   two instructions where the tag is a constant. */
__device__ __forceinline__ unsigned ikpd__ticked(const ikp_lane &l, unsigned tag)
{
#if IKP_TICKS
    unsigned t;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;"
        : "=r"(t)
        : "r"(l.gq << (IKP_WIRE_TICKS_SHIFT - IKP_WIRE_TICK_NS_SHIFT)), "n"(IKP_WIRE_TICKS_MASK << IKP_WIRE_TICKS_SHIFT),
          "r"(tag));
    return t;
#else
    (void)l;
    return tag;
#endif
}
/* the pending record, if any, then (tag, v): in lane order, on one check w.
   In a ring, (tag, v) with nothing pending becomes the pending record, so
   that a lane's records fill pairs: a region, an instant and its payload,
   an end and the next end */
__device__ __forceinline__ void ikpd__put(ikp_lane &l, unsigned w, unsigned tag, unsigned v)
{
    if (l.bk) {
        ikpd__put2(l, w, ikpd__ticked(l, l.bk), l.bt, tag, v);
        l.bk = 0;
    } else {
#if !IKP_RING
        ikpd__put1(l, w, tag, v);
#else
        l.bk = tag;
        l.bt = v;
        (void)w;
#endif
    }
}
/* stores the pending record, if any (in a ring, with a pad) */
__device__ __forceinline__ void ikpd__settle(ikp_lane &l)
{
    if (l.bk) ikpd__put1(l, ikpd__room(l), ikpd__ticked(l, l.bk), l.bt);
    l.bk = 0;
}
/* Automatic anchors (cycle mode, IKP_ANCHOR_EVERY > 0): an end or instant
   whose stamp t has reached l.due is followed by one more record, taken
   like the lane's own anchors (a globaltimer tick, located): the tick's
   low 32 bits, and in tag bits 16..29 the cycles from t to that tick (the
   decoder adds them to t). The next one is due IKP_ANCHOR_EVERY cycles
   later. The pairs are read one at a time, as few as find a tick; where
   none came among them, nothing is stored and the lane's next end tries
   again. The record's event id says
   the anchor's width (2 + the cycles between the pairs around the tick;
   FORMAT.md), which the decoder adds to the placement it states, so that
   an anchor taken while other warps crowd the SM's issue slots widens the
   bound rather than breaking it. The decoder maps cycles to time
   piecewise between anchors, so a lane follows its SM clock when that
   changes speed, as SM clocks do within milliseconds (measured:
   BENCHMARKS.md, "SM clocks across SMs"). A tick that came too late to
   say in 14 bits stores nothing either. */
#define IKP__AUTO_PAIRS 16
#define IKP__AUTO_WIDTH_OK 64
static_assert(IKP__AUTO_WIDTH_OK <= IKP_WIRE_AUTO_WIDTH_MAX, "an automatic anchor's width fits its event id");
/* For the record stamped t: (clock, globaltimer) pairs, one a loop
   iteration (a few instructions of code, not a burst's dozens at every
   end), until a tick falls between two pairs at most IKP__AUTO_WIDTH_OK
   cycles apart (other warps issuing between them widen that; a wider one
   is passed over for the next tick), at most IKP__AUTO_PAIRS pairs. 1
   where one did, in time to say: *g its low 32 bits, *d the cycles from t
   to the midpoint of the two pairs, *w their distance. */
__device__ __forceinline__ bool ikpd__auto_tick(unsigned t, unsigned *g, unsigned *d, unsigned *w)
{
    unsigned on, c0 = 0, g0 = 0, c1 = 0, g1 = 0;
    bool found = false;
    asm volatile("{\n\t.reg .u32 t;\n\tmov.u32 t, %%laneid;\n\tadd.u32 %0, t, 1;\n\t}" : "=r"(on));
    ikpd__pair32(on, &c0, &g0);
#pragma unroll 1
    for (int i = 0; i < IKP__AUTO_PAIRS; i++) {
        ikpd__pair32(on, &c1, &g1);
        if (g1 != g0 && c1 - c0 <= IKP__AUTO_WIDTH_OK) {
            found = true;
            break;
        }
        c0 = c1;
        g0 = g1;
    }
    *g = g1;
    *d = c0 + (c1 - c0) / 2 - t;
    *w = c1 - c0;
    return found && *d <= IKP_WIRE_AUTO_DELTA_MAX;
}
__device__ __forceinline__ void ikpd__auto_anchor(ikp_lane &l, unsigned t)
{
    unsigned g, d, w;
    if (!ikpd__auto_tick(t, &g, &d, &w)) return; /* none: the next end tries again */
    l.due = t + d + IKP_ANCHOR_EVERY;
    ikpd__put(l, ikpd__room(l), IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR | d << IKP_WIRE_AUTO_DELTA_SHIFT |
                                    (IKP_WIRE_AUTO_ANCHOR_ID + w) << IKP_WIRE_EVENT_SHIFT, g);
}
/* A stamped record (end, instant; a begin with IKP_DEFER_BEGIN=0): the
   stamp first, then the stores, so that their cost falls after the stamp,
   outside the region that ends. IKP_TICKS: the stamp followed by a
   %globaltimer read, which the lane's next begin or instant carries (an
   instant carries the read before, put in its tag before its stamp; the
   pending begin stored here gets its own as it is stored). Returns 1
   where it is stored (in a ring, maybe with the lane's next record), with
   its stamp in *t. */
__device__ __forceinline__ bool ikpd__stamped(ikp_lane &l, unsigned tag, unsigned *t)
{
    const unsigned w = ikpd__room(l);
#if IKP_TICKS
    unsigned g;
    const unsigned k = (tag & IKP_WIRE_KIND_MASK) == IKP_WIRE_KIND_INSTANT ? ikpd__ticked(l, tag) : tag;
    *t = ikpd__stamp(l, w, &g);
    ikpd__put(l, w, k, *t);
    l.gq = g;
#else
    *t = ikpd__stamp(l, w);
    ikpd__put(l, w, tag, *t);
#endif
    return w != 0;
}
/* end, instant: after the record, an automatic anchor when one is due
   (never after a begin: the anchor would sit inside the region) */
__device__ __forceinline__ void ikpd__record(ikp_lane &l, unsigned tag)
{
    unsigned t;
    const bool w = ikpd__stamped(l, tag, &t);
#if !(IKP_TIMER == IKP_TIMER_CYCLES && IKP_ANCHOR_EVERY > 0)
    (void)w;
#else
    if (w && (int)(t - l.due) >= 0) ikpd__auto_anchor(l, t);
#endif
}
/* begin: the pending record's store, if any, then the stamp, kept in
   registers and stored by the lane's next record. Nothing of the profiler
   runs between a region's begin stamp and its first instruction. With
   IKP_DEFER_BEGIN=0, a record like the others. */
__device__ __forceinline__ void ikpd__begin(ikp_lane &l, unsigned tag)
{
#if IKP_DEFER_BEGIN
    ikpd__settle(l);
    l.bt = ikpd__stamp(l, ikpd__room(l));
    l.bk = tag;
#else
    unsigned t;
    ikpd__stamped(l, tag, &t); /* stored at once (in a ring, with the record after it) */
#endif
}
__device__ __forceinline__ void ikpd__data(ikp_lane &l, unsigned tag, unsigned value)
{
    ikpd__put(l, ikpd__room(l), tag, value);
}

/* IKP_ANCHOR: a (globaltimer, clock) pair taken like the lane's own anchors,
   stored as two data records marked IKP_WIRE_ANCHOR (event 0: the low 32
   bits of %globaltimer, event 1: the low 32 bits of %clock64). The decoder
   maps cycles to time piecewise between consecutive anchors, so a lane
   follows its SM clock when that changes speed. Nothing in globaltimer
   mode, whose stamps need no mapping. */
__device__ __forceinline__ void ikpd__anchor_record(ikp_lane &l)
{
#if IKP_TIMER == IKP_TIMER_CYCLES
    unsigned long long g = 0, c = 0;
    if (ikpd__writes(l)) ikpd__anchor(&g, &c);
    ikpd__settle(l);
    ikpd__put2(l, ikpd__room(l), IKP_WIRE_TAG(0, IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR), (unsigned)g,
               IKP_WIRE_TAG(1, IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR), (unsigned)c);
#else
    (void)l;
#endif
}

#if IKP_STAGED
/* Staging. A stage is IKP_STAGE_WORDS(S) words of shared memory: a header
   (0: the lane's slots in the profile buffer; 1: their count C, or ring
   mask, low, and the records moved there so far, high (ring: the slots
   so far, pads included); 2: records dropped, and in ring mode, high, how
   many of the newest slots are intact; 3: S; 4: the header's own address),
   then S record slots and a sink, starting one word later when that gives
   them the same address mod 16 as their destination (the word before the
   slots then holds the header's address too). Records land there as they would in
   the profile buffer (same slots, same sink; rec holds the slots' shared-
   memory address), and a flush moves them: in bounded mode as one bulk
   asynchronous copy, in ring mode word by word.
   Bounded mode keeps the profile buffer's invariant that what is stored is
   a prefix of the lane's records: a stage that overflows between flushes
   closes the lane, and every later record is dropped and counted. In ring
   mode the stage is a ring of the largest power of two <= S slots (S >= 2:
   a ring holds pairs) and the buffer keeps the newest slots. Records made
   before IKP_STAGE, and every record of a lane whose stage was not usable,
   are dropped and counted. */
/* the lane's slots start at s (keeps their shared-memory address in rec;
   bounded: the next record goes there, with the stage's S slots left) */
__device__ __forceinline__ void ikpd__stage_at(ikp_lane &l, unsigned long long *s)
{
    l.rec = (unsigned long long *)(unsigned long long)__cvta_generic_to_shared(s);
#if !IKP_RING
    l.left = (int)(l.cap > 0x7FFFFFFEu ? 0x7FFFFFFEu : l.cap) + IKP__LEFT_EXTRA;
#endif
}
/* bounded mode: the slots start where they have dst's address mod 16 */
__device__ __forceinline__ void ikpd__stage_place(ikp_lane &l, unsigned long long *hd, const unsigned long long *dst)
{
    unsigned long long *s = hd + IKP_STAGE_HEADER_WORDS;
    if (((unsigned long long)s ^ (unsigned long long)dst) & 8u) *s++ = (unsigned long long)hd;
    ikpd__stage_at(l, s);
}
/* the stage's slots as a generic pointer */
__device__ __forceinline__ unsigned long long *ikpd__stage_slots(const ikp_lane &l)
{
    return (unsigned long long *)__cvta_shared_to_generic((size_t)(unsigned long long)l.rec);
}
__device__ __forceinline__ void ikpd__stage(ikp_lane &l, unsigned long long *st, unsigned records)
{
#if !IKP_RING
    /* bounded: the count of records since the flush restarts on every thread
       alike (so that it stays the same on all, see ikpd__slot): a lane
       already staged is flushed first (and keeps its stage); the records of
       a lane not staged yet, a pending begin among them, are dropped,
       counted in pads */
    if (l.on == 1u) ikpd__flush(l);
    ikpd__settle(l);
    if (l.on != 1u) ikpd__drop_unstaged(l, ikpd__taken(l)); /* (a staged lane: its flush restarted the count) */
    l.n = 0;
#endif
    if (l.on != 2u || st == 0 || records < (IKP_RING ? 2u : 1u) || !__isShared(st) || ((unsigned long long)st & 7u))
        return; /* not waiting for a stage, or this one is not usable (a ring holds pairs) */
    ikpd__settle(l); /* a begin before the stage is dropped like the records before it */
    unsigned long long *hd = st;
    hd[0] = (unsigned long long)l.rec;
    hd[3] = records;
    hd[4] = (unsigned long long)hd;
#if !IKP_RING
    hd[1] = l.cap;
    hd[2] = l.pads; /* the records before the stage, dropped */
    l.cap = records;
    ikpd__stage_place(l, hd, l.rec);
#else
    hd[1] = l.cap | (unsigned long long)l.n << 32;
    hd[2] = 0;
    l.cap = ikpd__ring_mask(records);
    ikpd__stage_at(l, hd + IKP_STAGE_HEADER_WORDS);
#endif
    l.n = 0;
    l.on = 1;
}

/* moves the staged records to the profile buffer */
__device__ __forceinline__ void ikpd__flush(ikp_lane &l)
{
    ikpd__settle(l);
#if !IKP_RING
    unsigned m = ikpd__taken(l); /* records since the last flush, counted on every thread */
    l.n = 0;
    if (l.on != 1u) {
        ikpd__drop_unstaged(l, m);
        return;
    }
#else
    if (l.on != 1u) return;
#endif
    unsigned long long *slots = ikpd__stage_slots(l), *hd = (unsigned long long *)slots[-1];
    unsigned long long *out = (unsigned long long *)hd[0];
    unsigned C = (unsigned)hd[1], g = (unsigned)(hd[1] >> 32);
#if !IKP_RING
    /* m records since the last flush, the first min(m, S) of them in the stage */
    m = ikpd__least(l, m, l.cap);
    unsigned k = m < l.cap ? m : l.cap, room = C - g;
    if (k > room) k = room;
    const unsigned moved = k;
    unsigned long long *src = slots, *dst = out + g;
    if (k && ((unsigned long long)dst & 8u)) { *dst++ = *src++; k--; } /* now both 16-byte aligned */
    if (k > 1)
        asm volatile("fence.proxy.async.shared::cta;\n\t"
                     "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n\t"
                     "cp.async.bulk.commit_group;\n\t"
                     "cp.async.bulk.wait_group.read 0;"
                     :: "l"(dst), "r"((unsigned)__cvta_generic_to_shared(src)), "r"((k & ~1u) * 8u) : "memory");
    if (k & 1) dst[k - 1] = src[k - 1];
    hd[1] = C | (unsigned long long)(g + moved) << 32;
    hd[2] += m - moved;
    /* overflowed (now or before: a closed lane stays closed, also through a
       flush with nothing to move): the stored records stay a prefix */
    l.cap = m > moved || l.cap == 0 ? 0u : (unsigned)hd[3];
    ikpd__stage_place(l, hd, out + g + moved);
#else
    unsigned m = l.n, S = l.cap + 1, k = m < S ? m : S, valid = (unsigned)(hd[2] >> 32);
    for (unsigned j = m - k; j < m; j++) out[(g + j) & C] = slots[j & l.cap];
    valid = m > S ? S : valid + m;
    if (valid > C + 1) valid = C + 1;
    hd[1] = C | (unsigned long long)(g + m) << 32;
    hd[2] = (unsigned long long)valid << 32;
#endif
    l.n = 0;
}
#endif /* IKP_STAGED */

__device__ __forceinline__ void ikpd__finalize(ikp_lane &l)
{
#if !IKP_STAGED
    if (!l.rec) return;
#else
    if (!l.on) return;
#endif
    ikpd__settle(l);
    unsigned long long *h, g, c, dropped;
    unsigned stored;
    ikpd__closing(l, &h, &stored, &dropped);
    ikpd__anchor(&g, &c);
    h[5] = g;
    h[6] = c;
    h[7] = IKP_WIRE_FINALIZED | stored | (dropped < 0x7FFFFFFFull ? dropped : 0x7FFFFFFFull) << 32;
    l.on = 0; /* a second finalize, or records after it, write nothing: */
    l.rec = 0;
    l.left = 0; /* no slot left (staged: the flush above reopened the stage) */
}

/* Keeps the computation of a value on its side of the stamps: the compiler
   must produce it before any later stamp and may not start it before an
   earlier one. Costs no instruction. */
template <typename T> __device__ __forceinline__ void ikpd__pin(T &v)
{
    asm volatile("" : "+r"(*reinterpret_cast<unsigned *>(&v)) :: "memory");
}
template <> __device__ __forceinline__ void ikpd__pin<float>(float &v) { asm volatile("" : "+f"(v) :: "memory"); }
template <> __device__ __forceinline__ void ikpd__pin<double>(double &v) { asm volatile("" : "+d"(v) :: "memory"); }
template <> __device__ __forceinline__ void ikpd__pin<unsigned long long>(unsigned long long &v) { asm volatile("" : "+l"(v) :: "memory"); }
template <> __device__ __forceinline__ void ikpd__pin<long long>(long long &v) { asm volatile("" : "+l"(v) :: "memory"); }
template <> __device__ __forceinline__ void ikpd__pin<unsigned long>(unsigned long &v) { asm volatile("" : "+l"(v) :: "memory"); }
template <> __device__ __forceinline__ void ikpd__pin<long>(long &v) { asm volatile("" : "+l"(v) :: "memory"); }

#else /* !IKP_ENABLE: same names and types, empty bodies, no machine code */

struct ikp_lane {};
__device__ __forceinline__ void ikpd__init(ikp_lane &, unsigned long long *, unsigned, unsigned, bool) {}
__device__ __forceinline__ void ikpd__record(ikp_lane &, unsigned) {}
__device__ __forceinline__ void ikpd__begin(ikp_lane &, unsigned) {}
__device__ __forceinline__ void ikpd__data(ikp_lane &, unsigned, unsigned) {}
__device__ __forceinline__ void ikpd__finalize(ikp_lane &) {}
__device__ __forceinline__ void ikpd__anchor_record(ikp_lane &) {}
template <typename T> __device__ __forceinline__ void ikpd__pin(T &) {}

#endif /* IKP_ENABLE */

/* IKP_SCOPE: begin at construction, end at destruction */
struct ikpd__scope {
    ikp_lane &l;
    unsigned tag;
    __device__ __forceinline__ ikpd__scope(ikp_lane &lane, unsigned event)
        : l(lane), tag(IKP_WIRE_TAG(event, 0u))
    {
        ikpd__begin(l, tag | IKP_WIRE_KIND_BEGIN);
    }
    __device__ __forceinline__ ~ikpd__scope() { ikpd__record(l, tag | IKP_WIRE_KIND_END); }
};

#endif /* __CUDACC__ */
#endif /* IKP_CUDA_CUH */

/*
MIT License

Copyright (c) 2026 The IKP authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
*/
