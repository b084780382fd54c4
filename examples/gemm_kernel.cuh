// A warp-specialized, pipelined bf16 GEMM (C = A * B^T; A: M x K, B: N x K,
// both row-major bf16; C: M x N fp32), instrumented on every k-tile of its
// producer and its consumers. Include after ikp_cuda.cuh. GEMM_RECORDER
// picks the recorder behind the REC_* lines: 1 = IKP (default; with
// -DIKP_ENABLE=0 it compiles to nothing), 2 = a flashinfer/TIRx-style
// recorder (store + __threadfence_block on every thread), for comparison.
//
// CTA tile 128 x 128, k-tile 32, 4 shared-memory stages; warp 0 produces
// (cp.async, completion signalled on a per-stage mbarrier), warps 1..4
// consume (ldmatrix + mma.sync m16n8k16, a 2 x 2 grid of 64 x 64 warp tiles)
// and hand each stage back on a second mbarrier.
#ifndef GEMM_RECORDER
#define GEMM_RECORDER 1
#endif
#include <stdint.h>

#define GEMM_BM 128
#define GEMM_BN 128
#define GEMM_BK 32
#define GEMM_STAGES 4
#define GEMM_CONSUMERS 4
#define GEMM_THREADS (32 * (1 + GEMM_CONSUMERS))
#define GEMM_STAGE_BYTES (GEMM_BM * GEMM_BK * 2)
#define GEMM_SMEM (2 * GEMM_STAGES * GEMM_STAGE_BYTES + 2 * GEMM_STAGES * 8)

enum { GEV_WAIT_EMPTY, GEV_LOAD, GEV_WAIT_FULL, GEV_MMA, GEV_EPILOGUE };
static const char *const gemm_event_names[] = {"wait_empty", "load", "wait_full", "mma", "epilogue"};

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
        unsigned lanes_ = gridDim.x * gridDim.y * (groups);                                         \
        unsigned lane_ = (blockIdx.y * gridDim.x + blockIdx.x) * (groups) + (group);                \
        if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0)                                 \
            (buf)[0] = ((unsigned long long)(groups) << 32) | (gridDim.x * gridDim.y);              \
        rec.p = (unsigned long long *)(buf) + 1 + lane_;                                            \
        rec.stride = lanes_;                                                                        \
        rec.tag_base = ((blockIdx.y * gridDim.x + blockIdx.x) & 0xFFFu) << 12;                      \
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
#define REC_INIT(buf, group, groups, leader) IKP_INIT(rec, buf, group, groups, leader)
#define REC_BEGIN(e) IKP_BEGIN(rec, e)
#define REC_END(e) IKP_END(rec, e)
#define REC_DATA(e, v) IKP_DATA(rec, e, v)
#define REC_FINALIZE() IKP_FINALIZE(rec)
#endif

__device__ __forceinline__ unsigned gemm_smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
// byte offset of 16-byte chunk ch (0..3) of row r in a 128 x 32 bf16 tile, XOR-swizzled
// so that the 8 rows an ldmatrix reads fall in different banks
__device__ __forceinline__ unsigned gemm_swz(unsigned r, unsigned ch) { return r * 64 + ((ch ^ ((r >> 1) & 3)) << 4); }

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

__global__ void __maxnreg__(200)
gemm_kernel(const uint16_t *__restrict__ A, const uint16_t *__restrict__ B, float *__restrict__ C,
            int M, int N, int K, uint64_t *prof)
{
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char *sa = smem, *sb = smem + GEMM_STAGES * GEMM_STAGE_BYTES;
    unsigned long long *bars = (unsigned long long *)(smem + 2 * GEMM_STAGES * GEMM_STAGE_BYTES);
    const unsigned full0 = gemm_smem(bars), empty0 = gemm_smem(bars + GEMM_STAGES);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int m0 = blockIdx.y * GEMM_BM, n0 = blockIdx.x * GEMM_BN, KT = K / GEMM_BK;
    REC_STATE;
    REC_INIT(prof, warp == 0 ? 0 : 1, 2, lane == 0 && warp <= 1);
    if (threadIdx.x == 0)
        for (int s = 0; s < GEMM_STAGES; s++) {
            mbar_init(full0 + 8 * s, 32);            // the producer's 32 lanes, when their copies land
            mbar_init(empty0 + 8 * s, 32 * GEMM_CONSUMERS); // every consumer thread releases its reads
        }
    __syncthreads();

    if (warp == 0) {
        // producer: each lane copies 16 of the 512 16-byte chunks of A's and of B's tile
        for (int kt = 0; kt < KT; kt++) {
            const int s = kt % GEMM_STAGES;
            if (kt >= GEMM_STAGES) {
                REC_BEGIN(GEV_WAIT_EMPTY);
                mbar_wait(empty0 + 8 * s, ((kt / GEMM_STAGES) + 1) & 1);
                REC_END(GEV_WAIT_EMPTY);
            }
            // "load" brackets the issue of the copies; they land later, when the
            // full barrier completes: the consumers' "wait_full" ends there
            REC_BEGIN(GEV_LOAD);
            REC_DATA(GEV_LOAD, kt);
            const unsigned da = gemm_smem(sa + s * GEMM_STAGE_BYTES), db = gemm_smem(sb + s * GEMM_STAGE_BYTES);
#pragma unroll
            for (int i = 0; i < 16; i++) {
                const int c = lane + 32 * i, r = c >> 2, ch = c & 3;
                const uint16_t *ga = A + (size_t)(m0 + r) * K + kt * GEMM_BK + ch * 8;
                const uint16_t *gb = B + (size_t)(n0 + r) * K + kt * GEMM_BK + ch * 8;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(da + gemm_swz(r, ch)), "l"(ga) : "memory");
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(db + gemm_swz(r, ch)), "l"(gb) : "memory");
            }
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(full0 + 8 * s) : "memory");
            REC_END(GEV_LOAD);
        }
    } else {
        const int cw = warp - 1, wm = cw / 2, wn = cw % 2;
        float acc[4][8][4];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 8; j++)
#pragma unroll
                for (int k = 0; k < 4; k++) acc[i][j][k] = 0.f;
        for (int kt = 0; kt < KT; kt++) {
            const int s = kt % GEMM_STAGES;
            REC_BEGIN(GEV_WAIT_FULL);
            mbar_wait(full0 + 8 * s, (kt / GEMM_STAGES) & 1);
            REC_END(GEV_WAIT_FULL);
            // "mma" brackets the issue of this k-tile's ldmatrix and mma.sync
            // (asm volatile: they stay between the stamps)
            REC_BEGIN(GEV_MMA);
            const unsigned ta = gemm_smem(sa + s * GEMM_STAGE_BYTES), tb = gemm_smem(sb + s * GEMM_STAGE_BYTES);
#pragma unroll
            for (int kk = 0; kk < 2; kk++) {
                unsigned a[4][4];
#pragma unroll
                for (int mt = 0; mt < 4; mt++) {
                    const unsigned r = wm * 64 + mt * 16 + (lane % 16), ch = kk * 2 + lane / 16;
                    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                                 : "=r"(a[mt][0]), "=r"(a[mt][1]), "=r"(a[mt][2]), "=r"(a[mt][3])
                                 : "r"(ta + gemm_swz(r, ch)));
                }
                // B fragments one pair of n8 tiles at a time: 4 registers live, not 16
#pragma unroll
                for (int np = 0; np < 4; np++) {
                    unsigned b[2][2];
                    const unsigned mi = lane / 8, r = wn * 64 + np * 16 + (mi / 2) * 8 + lane % 8, ch = kk * 2 + mi % 2;
                    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                                 : "=r"(b[0][0]), "=r"(b[0][1]), "=r"(b[1][0]), "=r"(b[1][1])
                                 : "r"(tb + gemm_swz(r, ch)));
#pragma unroll
                    for (int mt = 0; mt < 4; mt++)
#pragma unroll
                        for (int j = 0; j < 2; j++)
                            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                                         : "+f"(acc[mt][2 * np + j][0]), "+f"(acc[mt][2 * np + j][1]),
                                           "+f"(acc[mt][2 * np + j][2]), "+f"(acc[mt][2 * np + j][3])
                                         : "r"(a[mt][0]), "r"(a[mt][1]), "r"(a[mt][2]), "r"(a[mt][3]),
                                           "r"(b[j][0]), "r"(b[j][1]));
                }
            }
            REC_END(GEV_MMA);
            mbar_arrive(empty0 + 8 * s); // this thread is done reading stage s
        }
        REC_BEGIN(GEV_EPILOGUE);
#pragma unroll
        for (int mt = 0; mt < 4; mt++)
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                const int r = m0 + wm * 64 + mt * 16 + lane / 4, c = n0 + wn * 64 + nt * 8 + (lane % 4) * 2;
                *reinterpret_cast<float2 *>(C + (size_t)r * N + c) = make_float2(acc[mt][nt][0], acc[mt][nt][1]);
                *reinterpret_cast<float2 *>(C + (size_t)(r + 8) * N + c) = make_float2(acc[mt][nt][2], acc[mt][nt][3]);
            }
        REC_END(GEV_EPILOGUE);
    }
    REC_FINALIZE();
}

// M, N multiples of 128, K a multiple of 32. prof: profile buffer of
// (M/128)*(N/128)*2 lanes (or the flashinfer-style buffer), may be null.
static inline cudaError_t gemm_launch(const uint16_t *A, const uint16_t *B, float *C, int M, int N, int K,
                                      uint64_t *prof, cudaStream_t stream)
{
    cudaError_t e = cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, GEMM_SMEM);
    if (e != cudaSuccess) return e;
    gemm_kernel<<<dim3(N / GEMM_BN, M / GEMM_BM), GEMM_THREADS, GEMM_SMEM, stream>>>(A, B, C, M, N, K, prof);
    return cudaGetLastError();
}
