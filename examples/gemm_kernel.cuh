// A warp-specialized, pipelined bf16 GEMM for Hopper (C = A * B^T; A: M x K,
// B: N x K, both row-major bf16; C: M x N fp32), instrumented on every k-tile
// of its producer and its consumers. Include after ikp_cuda.cuh; build for
// sm_90a (wgmma, setmaxnreg). GEMM_RECORDER picks the recorder behind the
// REC_* lines: 1 = IKP (default; with -DIKP_ENABLE=0 it compiles to nothing),
// 2 = a flashinfer/TIRx-style recorder (store + __threadfence_block on every
// thread that records), for comparison.
//
// CTA tile 128 x 256, k-tile 64, 4 shared-memory stages of 48 KB. Warpgroup
// 0 produces: one thread issues two bulk tensor copies (TMA, 128-byte
// swizzle) per k-tile, completing on the stage's "full" mbarrier. Warpgroups
// 1 and 2 consume, each a 64 x 256 half of the tile with four wgmma
// m64n256k16 per k-tile straight from shared memory (one k-tile kept in
// flight while the next is issued), and hand each stage back on its "empty"
// mbarrier once its wgmma are complete. Tiles are visited in groups of 8
// tile rows so that the blocks in flight share their A and B tiles in L2.
#ifndef GEMM_RECORDER
#define GEMM_RECORDER 1
#endif
#ifndef GEMM_PROF_RECORDS
#define GEMM_PROF_RECORDS 1024 /* IKP records staged per lane (IKP_STAGED=1): 3 x 8 KB of shared memory */
#endif
#ifndef GEMM_REC_WAITS
#define GEMM_REC_WAITS 1 /* 0: only load and mma regions, no wait regions or payload (bench breakdown) */
#endif
#ifndef GEMM_REC_SIDES
#define GEMM_REC_SIDES 3 /* which leaders record: 1 producer, 2 consumers (bench breakdown) */
#endif
#include <stdint.h>
#include <cuda.h>         /* CUtensorMap: types only, nothing is linked */
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */

#define GEMM_BM 128
#define GEMM_BN 256
#define GEMM_BK 64
#define GEMM_STAGES 4
#define GEMM_GROUP_M 8
#define GEMM_THREADS 384 /* three warpgroups */
#define GEMM_A_BYTES (GEMM_BM * GEMM_BK * 2)
#define GEMM_STAGE_BYTES (GEMM_A_BYTES + GEMM_BN * GEMM_BK * 2)
#define GEMM_SMEM (GEMM_STAGES * GEMM_STAGE_BYTES + 1024 + 2 * GEMM_STAGES * 8) /* + alignment slack, barriers */

enum { GEV_WAIT_EMPTY, GEV_LOAD, GEV_WAIT_FULL, GEV_MMA_EVEN, GEV_MMA_ODD, GEV_EPILOGUE, GEV_COUNT };
static const char *const gemm_event_names[] = {"wait_empty", "load", "wait_full", "mma_even", "mma_odd", "epilogue"};

#if GEMM_RECORDER == 2
// flashinfer/TIRx-style: begin = leader store then a fence on every thread;
// end = fence then store; interleaved layout (record k of lane L at 1 + L + k * lanes)
struct fi_rec {
    unsigned long long *p;
    unsigned stride, tag_base;
    bool lead;
};
__device__ __forceinline__ unsigned fi_now()
{
    unsigned t;
    asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(t) :: "memory");
    return t;
}
#define REC_STATE fi_rec rec
#define REC_INIT(buf, group, groups, leader)                                                        \
    do {                                                                                            \
        unsigned lanes_ = gridDim.x * (groups), lane_ = blockIdx.x * (groups) + (group);            \
        if (blockIdx.x == 0 && threadIdx.x == 0)                                                    \
            (buf)[0] = ((unsigned long long)(groups) << 32) | gridDim.x;                            \
        rec.p = (unsigned long long *)(buf) + 1 + lane_;                                            \
        rec.stride = lanes_;                                                                        \
        rec.tag_base = (blockIdx.x & 0xFFFu) << 12;                                                 \
        rec.lead = (leader);                                                                        \
    } while (0)
#define REC_BEGIN(e)                                                                                \
    do {                                                                                            \
        if (rec.lead) { *rec.p = (unsigned long long)fi_now() << 32 | rec.tag_base | (e) << 2; rec.p += rec.stride; } \
        __threadfence_block();                                                                      \
    } while (0)
#define REC_END(e)                                                                                  \
    do {                                                                                            \
        __threadfence_block();                                                                      \
        if (rec.lead) { *rec.p = (unsigned long long)fi_now() << 32 | rec.tag_base | (e) << 2 | 1u; rec.p += rec.stride; } \
    } while (0)
#define REC_DATA(e, v) ((void)0)
#define REC_FINALIZE() ((void)0)
#else
#define REC_STATE IKP_LANE(rec)
// built with IKP_STAGED=1 (the default of examples/gemm.cu), each lane's
// records stay in shared memory until IKP_FINALIZE copies them out (GUIDE.md
// "Staging"): 3 x 8 KB next to the pipeline's 192 KB; otherwise the stage
// lines compile to nothing and records go straight to the profile buffer
#define REC_INIT(buf, group, groups, leader)                                                        \
    IKP_SHARED_STAGE(gemm_prof, 3, GEMM_PROF_RECORDS);                                              \
    IKP_INIT(rec, buf, group, groups, leader);                                                      \
    IKP_STAGE(rec, gemm_prof[group], GEMM_PROF_RECORDS)
#define REC_BEGIN(e) IKP_BEGIN(rec, e)
#define REC_END(e) IKP_END(rec, e)
#define REC_DATA(e, v) IKP_DATA(rec, e, v)
#define REC_FINALIZE() IKP_FINALIZE(rec)
#endif

__device__ __forceinline__ unsigned gemm_smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(unsigned a, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned a, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) : "r"(a), "r"(parity) : "memory");
    } while (!done);
}
__device__ __forceinline__ void mbar_arrive(unsigned a)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(a) : "memory");
}
__device__ __forceinline__ void mbar_expect(unsigned a, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(a), "r"(bytes) : "memory");
}
// one 2-D tile (x = column, y = row) of a tensor map into shared memory at dst,
// counted on the mbarrier bar
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap *map, int x, int y, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory");
}
// wgmma shared-memory descriptor: a K-major tile of 128-byte rows written by
// TMA with 128-byte swizzle (8-row groups 1024 bytes apart)
__device__ __forceinline__ unsigned long long gemm_desc(unsigned addr)
{
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) | 1ull << 16 | (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
}

// the 128 accumulator registers of a 64 x 256 fp32 wgmma tile, as asm operands
#define GEMM_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define GEMM_F16(i) GEMM_F4(i), GEMM_F4(i + 4), GEMM_F4(i + 8), GEMM_F4(i + 12)
#define GEMM_F64(i) GEMM_F16(i), GEMM_F16(i + 16), GEMM_F16(i + 32), GEMM_F16(i + 48)
#define GEMM_ACC GEMM_F64(0), GEMM_F64(64)
#define GEMM_REGS \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// d = A B + (accumulate ? d : 0)
__device__ __forceinline__ void wgmma_256(float (&d)[128], unsigned long long da, unsigned long long db, int accumulate)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %130, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" GEMM_REGS "}, %128, %129, p, 1, 1, 0, 0;\n\t}"
                 : GEMM_ACC : "l"(da), "l"(db), "r"(accumulate));
}
// the accumulators are operands of the fence and the wait, so that no access
// to them moves across either
__device__ __forceinline__ void wgmma_fence(float (&d)[128])
{
    asm volatile("wgmma.fence.sync.aligned;" : GEMM_ACC :: "memory");
}
__device__ __forceinline__ void wgmma_commit(float (&d)[128])
{
    asm volatile("wgmma.commit_group.sync.aligned;" : GEMM_ACC :: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait(float (&d)[128])
{
    asm volatile("wgmma.wait_group.sync.aligned %128;" : GEMM_ACC : "n"(N) : "memory");
}

__global__ void __launch_bounds__(GEMM_THREADS, 1)
gemm_kernel(const __grid_constant__ CUtensorMap tma, const __grid_constant__ CUtensorMap tmb, float *__restrict__ C,
            int M, int N, int K, uint64_t *prof)
{
    extern __shared__ unsigned char smem_raw[];
    // stage s: A tile at base + s * STAGE_BYTES, B tile GEMM_A_BYTES after it;
    // 1024-byte aligned as the 128-byte swizzle requires
    const unsigned base = (gemm_smem(smem_raw) + 1023u) & ~1023u, bars = base + GEMM_STAGES * GEMM_STAGE_BYTES;
    const unsigned full0 = bars, empty0 = bars + 8 * GEMM_STAGES;
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128, KT = K / GEMM_BK;
    const int tiles_m = M / GEMM_BM, tiles_n = N / GEMM_BN, per_group = GEMM_GROUP_M * tiles_n;
    const int first = (int)blockIdx.x / per_group * GEMM_GROUP_M, gsize = min(tiles_m - first, GEMM_GROUP_M);
    const int tm = first + (int)blockIdx.x % per_group % gsize, tn = (int)blockIdx.x % per_group / gsize;
    REC_STATE;
    REC_INIT(prof, wg, 3, tid == 0 && (GEMM_REC_SIDES >> (wg > 0) & 1)); // lanes: producer, consumer 0, consumer 1
    if (threadIdx.x == 0) {
        for (int s = 0; s < GEMM_STAGES; s++) {
            mbar_init(full0 + 8 * s, 1);  // the producer's expect_tx; the copies' bytes complete it
            mbar_init(empty0 + 8 * s, 8); // one arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0)
            for (int kt = 0; kt < KT; kt++) {
                const int s = kt % GEMM_STAGES;
                if (kt >= GEMM_STAGES) {
                    if (GEMM_REC_WAITS) REC_BEGIN(GEV_WAIT_EMPTY);
                    mbar_wait(empty0 + 8 * s, ((kt / GEMM_STAGES) + 1) & 1);
                    if (GEMM_REC_WAITS) REC_END(GEV_WAIT_EMPTY);
                }
                // "load" brackets the issue of the copies; they land later, when the
                // full barrier completes: the consumers' "wait_full" ends there
                REC_BEGIN(GEV_LOAD);
                const unsigned sa = base + s * GEMM_STAGE_BYTES;
                mbar_expect(full0 + 8 * s, GEMM_STAGE_BYTES);
                tma_load(sa, &tma, kt * GEMM_BK, tm * GEMM_BM, full0 + 8 * s);
                tma_load(sa + GEMM_A_BYTES, &tmb, kt * GEMM_BK, tn * GEMM_BN, full0 + 8 * s);
                if (GEMM_REC_WAITS) REC_DATA(GEV_LOAD, kt); // the k-tile, on the begin record
                REC_END(GEV_LOAD);
            }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int c = wg - 1; // rows 64c .. 64c + 63 of the tile
        // no zeroing: the first wgmma overwrites the accumulators (an ordinary
        // instruction writing them would make ptxas serialize every wgmma)
        float d[128];
        for (int kt = 0; kt < KT; kt++) {
            const int s = kt % GEMM_STAGES;
            if (GEMM_REC_WAITS) REC_BEGIN(GEV_WAIT_FULL);
            mbar_wait(full0 + 8 * s, (kt / GEMM_STAGES) & 1);
            if (GEMM_REC_WAITS) REC_END(GEV_WAIT_FULL);
            // wgmma runs asynchronously, one k-tile in flight while the next is
            // issued. An "mma" region spans the tensor cores' work on one k-tile:
            // it begins before its wgmma are issued and ends after the
            // wgmma.wait_group that proves them complete, one iteration later.
            // Consecutive k-tiles overlap, so even and odd k-tiles are two events.
            REC_BEGIN(GEV_MMA_EVEN + (kt & 1));
            const unsigned long long da = gemm_desc(base + s * GEMM_STAGE_BYTES + c * 64 * 128);
            const unsigned long long db = gemm_desc(base + s * GEMM_STAGE_BYTES + GEMM_A_BYTES);
            wgmma_fence(d);
#pragma unroll
            for (int kk = 0; kk < GEMM_BK / 16; kk++) wgmma_256(d, da + 2 * kk, db + 2 * kk, kt | kk); // +32 bytes per k16
            wgmma_commit(d);
            wgmma_wait<1>(d); // k-tile kt - 1 is done: hand its stage back
            if (kt > 0) {
                if (tid % 32 == 0) mbar_arrive(empty0 + 8 * ((kt - 1) % GEMM_STAGES));
                REC_END(GEV_MMA_EVEN + ((kt - 1) & 1));
            }
        }
        wgmma_wait<0>(d);
        REC_END(GEV_MMA_EVEN + ((KT - 1) & 1));
        REC_BEGIN(GEV_EPILOGUE);
        const int w = tid / 32, l = tid % 32;
        const int r = tm * GEMM_BM + c * 64 + w * 16 + l / 4, col = tn * GEMM_BN + (l % 4) * 2;
#pragma unroll
        for (int j = 0; j < 32; j++) {
            *reinterpret_cast<float2 *>(C + (size_t)r * N + col + 8 * j) = make_float2(d[4 * j], d[4 * j + 1]);
            *reinterpret_cast<float2 *>(C + (size_t)(r + 8) * N + col + 8 * j) = make_float2(d[4 * j + 2], d[4 * j + 3]);
        }
        REC_END(GEV_EPILOGUE);
    }
    REC_FINALIZE();
}

// The tensor maps of one problem. M a multiple of 128, N of 256, K of 64.
struct gemm_plan {
    CUtensorMap ta, tb;
    int M, N, K;
};
// a row-major bf16 matrix of `rows` x K, read in boxes of box_rows x GEMM_BK
// with the 128-byte swizzle the wgmma descriptors expect
static inline bool gemm_map(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap *map, const uint16_t *m,
                            int rows, int K, unsigned box_rows)
{
    const cuuint64_t dim[2] = {(cuuint64_t)K, (cuuint64_t)rows}, stride[1] = {(cuuint64_t)K * 2};
    const cuuint32_t box[2] = {GEMM_BK, box_rows}, es[2] = {1, 1};
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)m, dim, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}
static inline cudaError_t gemm_plan_init(gemm_plan *p, const uint16_t *A, const uint16_t *B, int M, int N, int K)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (M % GEMM_BM || N % GEMM_BN || K % GEMM_BK || M <= 0 || N <= 0 || K <= 0) return cudaErrorInvalidValue;
    if (!encode) { // the driver's encoder, through the runtime: no -lcuda
        void *fn = NULL;
        cudaDriverEntryPointQueryResult q;
        cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
        if (e != cudaSuccess) return e;
        if (q != cudaDriverEntryPointSuccess || !fn) return cudaErrorNotSupported;
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    if (!gemm_map(encode, &p->ta, A, M, K, GEMM_BM) || !gemm_map(encode, &p->tb, B, N, K, GEMM_BN))
        return cudaErrorInvalidValue;
    p->M = M;
    p->N = N;
    p->K = K;
    return cudaSuccess;
}
// prof: a profile buffer of gemm_lanes() lanes (or the flashinfer-style buffer), may be null
static inline unsigned gemm_lanes(int M, int N) { return (unsigned)(M / GEMM_BM) * (unsigned)(N / GEMM_BN) * 3u; }
static inline cudaError_t gemm_launch(const gemm_plan *p, float *C, uint64_t *prof, cudaStream_t stream)
{
    cudaError_t e = cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, GEMM_SMEM);
    if (e != cudaSuccess) return e;
    gemm_kernel<<<(p->M / GEMM_BM) * (p->N / GEMM_BN), GEMM_THREADS, GEMM_SMEM, stream>>>(p->ta, p->tb, C, p->M, p->N, p->K, prof);
    return cudaGetLastError();
}
