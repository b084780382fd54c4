// Example 6: CUTLASS's own sm90 ping-pong warp-specialized GEMM, recorded
// by IKP. The kernel is CUTLASS's: its header is copied at build time with
// IKP's macros inserted (examples/cutlass_patch.py), and that copy's folder
// comes first among -I, so that CUTLASS includes it instead of its own
// (Makefile, build/cutlass_gemm). Nothing here changes CUTLASS's launch: the
// profile buffer reaches the kernel through cutlass_ikp_buffer below, a
// __constant__ pointer set before each launch.
//
//   build/cutlass_gemm [OUT [M [N [K]]]]   D = A B^T, bf16 in and out, fp32
//       accumulate (default 4096^3): one recorded launch, OUT.json, OUT.ikp,
//       then the checks (the product, and what the capture says about the
//       ping-pong schedule), ending with "N passed, N failed"
//   build/cutlass_gemm --overhead [--rounds R] [SIZE...]   recording armed
//       against disarmed (a NULL buffer), launches interleaved and timed one
//       at a time, 20 a side a round (default sizes 4096 and 8192)
//
// CUTLASS's headers come from `make deps` (tests/get_cutlass.sh: the
// nvidia-cutlass wheel, pinned, into build/cutlass).
#include "../ikp_cuda.cuh"
#include <cstdint>

// The profile buffer of the recorded launch, read by IKP_INIT in the edited
// kernel header: declared before CUTLASS's headers, set with
// cudaMemcpyToSymbolAsync on the launch's stream; NULL records nothing.
__constant__ uint64_t *cutlass_ikp_buffer;

#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

#include "common.h"
#include <algorithm>
#include <cstdarg>
#include <cstring>
#include <vector>

using namespace cute;

// bf16 A (M x K, row-major) times bf16 B (N x K: column-major K x N), fp32
// accumulate, bf16 D (M x N, row-major); 128x128x64 tiles, clusters of two
// CTAs along M, CUTLASS's ping-pong kernel with its TMA epilogue.
using Element = cutlass::bfloat16_t;
using TileShape = Shape<_128, _128, _64>;
using ClusterShape = Shape<_2, _1, _1>;
constexpr int kAlign = 8; // elements: 16 bytes, what TMA needs
using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    void, cutlass::layout::RowMajor, kAlign,           // no C: D = A B^T
    Element, cutlass::layout::RowMajor, kAlign,
    cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    Element, cutlass::layout::RowMajor, kAlign, Element, cutlass::layout::ColumnMajor, kAlign, float,
    TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedPingpong>::CollectiveOp;
using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

// the events of the edited header (examples/cutlass_patch.py) and its groups
enum { EV_LOAD, EV_WAIT, EV_MMA, EV_TAIL, EV_EPILOGUE, EV_COUNT };
static const char *const event_names[EV_COUNT] = {"load", "wait", "mma", "tail", "epilogue"};
static const char *const group_names[3] = {"producer", "consumer 0", "consumer 1"};
enum { GROUPS = 3 };

static int checks_passed, checks_failed;
static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s ", ok ? "ok  " : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    (ok ? checks_passed : checks_failed)++;
}

// ---- the problem: inputs whose products and sums are exact in fp32 ---------

// multiples of 1/8 in [-0.5, 0.5]: products are multiples of 1/64 and every
// partial sum of K < 2^20 of them is exact in fp32, in any order, so CUTLASS's
// accumulator and the reference below hold the same value and D is that
// value rounded once to bf16
__global__ void fill(Element *x, size_t n, uint32_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        x[i] = Element((float)((int)(h % 9u) - 4) * 0.125f);
    }
}

// The reference: R = A B^T in fp32, 32x32 outputs a block of 32x8 threads
__global__ void reference_gemm(const Element *A, const Element *B, float *R, int M, int N, int K)
{
    __shared__ float as[32][33], bs[32][33];
    const int tx = threadIdx.x, ty = threadIdx.y, m0 = blockIdx.y * 32, n0 = blockIdx.x * 32;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < K; k0 += 32) {
        for (int r = ty; r < 32; r += 8) {
            const int k = k0 + tx;
            as[r][tx] = m0 + r < M && k < K ? static_cast<float>(A[(size_t)(m0 + r) * K + k]) : 0.f;
            bs[r][tx] = n0 + r < N && k < K ? static_cast<float>(B[(size_t)(n0 + r) * K + k]) : 0.f;
        }
        __syncthreads();
        for (int kk = 0; kk < 32; kk++) {
            const float b = bs[tx][kk];
            for (int i = 0; i < 4; i++) acc[i] += as[ty + 8 * i][kk] * b;
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        if (m0 + ty + 8 * i < M && n0 + tx < N) R[(size_t)(m0 + ty + 8 * i) * N + n0 + tx] = acc[i];
}

// D against R: D must be R rounded to bf16, within half a bf16 step
// (2^-8 of |R|); NaN (an element never written: D is poisoned) fails
__global__ void compare(const Element *D, const float *R, size_t n, unsigned long long *bad, unsigned long long *first)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float d = static_cast<float>(D[i]), r = R[i];
        if (!(fabsf(d - r) <= fabsf(r) * 0.00390625f)) {
            atomicAdd(bad, 1ull);
            atomicMin(first, (unsigned long long)i);
        }
    }
}

struct Problem {
    int M, N, K;
    Element *A = nullptr, *B = nullptr, *D = nullptr;
    uint8_t *workspace = nullptr;
    Gemm gemm;
    dim3 grid;
    uint32_t ctas = 0, tiles_m = 0, tiles_n = 0;
};

static bool problem_init(Problem &p, int M, int N, int K)
{
    p.M = M; p.N = N; p.K = K;
    CK(cudaMalloc(&p.A, (size_t)M * K * sizeof(Element)));
    CK(cudaMalloc(&p.B, (size_t)N * K * sizeof(Element)));
    CK(cudaMalloc(&p.D, (size_t)M * N * sizeof(Element)));
    fill<<<1024, 256>>>(p.A, (size_t)M * K, 1u);
    fill<<<1024, 256>>>(p.B, (size_t)N * K, 2u);
    CK(cudaGetLastError());
    int dev = 0;
    CK(cudaGetDevice(&dev));
    typename Gemm::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {M, N, K, 1},
        {p.A, cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, {M, K, 1}),
         p.B, cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, {N, K, 1})},
        {{1.0f, 0.0f}, nullptr, cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, {M, N, 1}),
         p.D, cutlass::make_cute_packed_stride(typename Kernel::StrideD{}, {M, N, 1})},
        cutlass::KernelHardwareInfo::make_kernel_hardware_info<Kernel>(dev)};
    if (p.gemm.can_implement(args) != cutlass::Status::kSuccess) {
        fprintf(stderr, "CUTLASS cannot run %dx%dx%d (M, N and K must be multiples of %d)\n", M, N, K, kAlign);
        return false;
    }
    const size_t ws = Gemm::get_workspace_size(args);
    if (ws) CK(cudaMalloc(&p.workspace, ws));
    if (p.gemm.initialize(args, p.workspace) != cutlass::Status::kSuccess) {
        fprintf(stderr, "CUTLASS: initialize failed\n");
        return false;
    }
    p.grid = Gemm::get_grid_shape(args, p.workspace);
    p.ctas = p.grid.x * p.grid.y * p.grid.z;
    // the scheduler's tiles: along M a whole number of clusters (a tile
    // past the edge computes nothing that is stored)
    p.tiles_m = ((uint32_t)(M + 127) / 128 + 1) / 2 * 2;
    p.tiles_n = (uint32_t)(N + 127) / 128;
    return true;
}

static void problem_free(Problem &p)
{
    CK(cudaFree(p.A));
    CK(cudaFree(p.B));
    CK(cudaFree(p.D));
    if (p.workspace) CK(cudaFree(p.workspace));
}

// The buffer the next launches on stream record into (NULL: disarmed).
static void set_buffer(uint64_t *buf, cudaStream_t stream)
{
    CK(cudaMemcpyToSymbolAsync(cutlass_ikp_buffer, &buf, sizeof buf, 0, cudaMemcpyHostToDevice, stream));
}

static void run_gemm(Problem &p, cudaStream_t stream)
{
    if (p.gemm.run(stream) != cutlass::Status::kSuccess) {
        fprintf(stderr, "CUTLASS: run failed (%s)\n", cudaGetErrorString(cudaGetLastError()));
        exit(1);
    }
}

// one launch timed alone: the ms between two events recorded around it
static float timed_gemm(Problem &p, cudaStream_t stream, cudaEvent_t a, cudaEvent_t b)
{
    CK(cudaEventRecord(a, stream));
    run_gemm(p, stream);
    CK(cudaEventRecord(b, stream));
    CK(cudaEventSynchronize(b));
    float t;
    CK(cudaEventElapsedTime(&t, a, b));
    return t;
}

static void die_ikp(const ikp_error &err)
{
    fprintf(stderr, "ikp: %s\n", err.message);
    exit(1);
}

// ---- the checks on the capture ---------------------------------------------
#if IKP_ENABLE

struct Lane {
    std::vector<ikp_event> ev[EV_COUNT];
};

static bool overlap(const ikp_event &a, const ikp_event &b) { return a.start_ps < b.end_ps && b.start_ps < a.end_ps; }

static void check_capture(const char *path, const Problem &p)
{
    ikp_decode_options opt;
    memset(&opt, 0, sizeof opt);
    opt.event_names = event_names;
    opt.num_event_names = EV_COUNT;
    opt.group_names = group_names;
    opt.num_group_names = GROUPS;
    ikp_capture *cap = NULL;
    ikp_error err;
    if (ikp_capture_open_path(path, &opt, &cap, &err) != IKP_OK) die_ikp(err);
    const ikp_capture_info *info = ikp_capture_get_info(cap);
    const uint32_t lanes = p.ctas * GROUPS, tiles = p.tiles_m * p.tiles_n;
    check(info->num_lanes == lanes && info->active_lanes == lanes,
          "a lane per warp group and CTA: %u of %u lanes active (%u CTAs x 3)", info->active_lanes, lanes, p.ctas);
    check(info->dropped == 0 && info->invalid == 0 && info->backwards == 0 && info->unfinalized_lanes == 0 &&
              info->claimed_twice == 0 && info->refused_lanes == 0 && info->corrupt_lanes == 0,
          "a clean capture: %llu records, %llu dropped, %llu unfinalized lanes, %llu claimed twice",
          (unsigned long long)info->records, (unsigned long long)info->dropped,
          (unsigned long long)info->unfinalized_lanes, (unsigned long long)info->claimed_twice);

    // every lane's events by id, checked against its place in the grid
    std::vector<Lane> L(lanes);
    ikp_lane_events le;
    memset(&le, 0, sizeof le);
    uint64_t unmatched = 0, misplaced = 0;
    for (uint32_t l = 0; l < lanes; l++) {
        ikp_lane_info li;
        if (ikp_capture_lane(cap, l, &li, &err) != IKP_OK || ikp_decode_lane(cap, l, &le, &err) != IKP_OK) die_ikp(err);
        misplaced += li.block != l / GROUPS || li.group != l % GROUPS;
        unmatched += le.unmatched_begin + le.unmatched_end;
        for (size_t k = 0; k < le.count; k++)
            if (le.events[k].kind == IKP_EVENT_REGION && le.events[k].id < EV_COUNT)
                L[l].ev[le.events[k].id].push_back(le.events[k]);
    }
    ikp_lane_events_free(cap, &le);
    check(unmatched == 0 && misplaced == 0, "every region closed (%llu unmatched), every lane where its block and group say (%llu not)",
          (unsigned long long)unmatched, (unsigned long long)misplaced);

    // each output tile loaded once and multiplied once, in the CTA that loaded it
    std::vector<uint32_t> loaded(tiles, 0), multiplied(tiles, 0);
    uint64_t wrong_cta = 0, bad_payload = 0, bad_shape = 0;
    for (uint32_t b = 0; b < p.ctas; b++) {
        const Lane &pr = L[b * GROUPS], &c0 = L[b * GROUPS + 1], &c1 = L[b * GROUPS + 2];
        std::vector<uint32_t> mine;
        for (const ikp_event &e : pr.ev[EV_LOAD]) {
            const uint32_t m = e.begin_data >> 16, n = e.begin_data & 0xFFFF;
            if (!(e.flags & IKP_EVENT_HAS_BEGIN_DATA) || m >= p.tiles_m || n >= p.tiles_n) { bad_payload++; continue; }
            loaded[m * p.tiles_n + n]++;
            mine.push_back(e.begin_data);
        }
        for (const Lane *c : {&c0, &c1}) {
            for (const ikp_event &e : c->ev[EV_MMA]) {
                const uint32_t m = e.begin_data >> 16, n = e.begin_data & 0xFFFF;
                if (!(e.flags & IKP_EVENT_HAS_BEGIN_DATA) || m >= p.tiles_m || n >= p.tiles_n) { bad_payload++; continue; }
                multiplied[m * p.tiles_n + n]++;
                wrong_cta += std::find(mine.begin(), mine.end(), e.begin_data) == mine.end();
            }
            // a consumer's tile: wait, mma, tail, wait, epilogue
            bad_shape += c->ev[EV_TAIL].size() != c->ev[EV_MMA].size() || c->ev[EV_EPILOGUE].size() != c->ev[EV_MMA].size() ||
                         c->ev[EV_WAIT].size() != 2 * c->ev[EV_MMA].size();
        }
    }
    uint32_t once_l = 0, once_m = 0;
    for (uint32_t t = 0; t < tiles; t++) { once_l += loaded[t] == 1; once_m += multiplied[t] == 1; }
    check(once_l == tiles && once_m == tiles && bad_payload == 0,
          "each of the %u tiles loaded once (%u) and multiplied once (%u), payloads its (M, N) index (%llu not)", tiles,
          once_l, once_m, (unsigned long long)bad_payload);
    check(wrong_cta == 0 && bad_shape == 0,
          "each tile multiplied in the CTA that loaded it (%llu not), each consumer's tile a wait, mma, tail, wait, epilogue (%llu lanes not)",
          (unsigned long long)wrong_cta, (unsigned long long)bad_shape);

    // (b) per CTA the consumers' mma regions take turns, consumer 0 first, and never overlap
    // (c) each mma overlaps the epilogue of the tile before it (the other consumer's)
    // (d) the producer runs ahead: every tile's load ends before its mma does, and
    //     the loads of most tiles (but each CTA's first, whose load and mma start
    //     together) begin before their mma: the median by a margin. Not every one:
    //     the producer starts a tile's loads when it has issued the last k-tile of the
    //     tile before, a pipeline's depth before that tile's mma ends, and the other
    //     consumer's mma of the next tile begins right after (the order barrier), so
    //     the two starts are close and may come either way (an H100 had 131 of 892
    //     tiles' loads begin after their mma did, by the consumer's wait for data)
    uint64_t turns = 0, not_alternating = 0, overlapping = 0, hidden = 0, pairs = 0, late = 0, ahead = 0, loads_checked = 0,
             ends_late = 0;
    std::vector<double> lead_us;
    for (uint32_t b = 0; b < p.ctas; b++) {
        const Lane &pr = L[b * GROUPS];
        const Lane *c[2] = {&L[b * GROUPS + 1], &L[b * GROUPS + 2]};
        struct Turn { int who; size_t k; };
        std::vector<Turn> order;
        size_t i0 = 0, i1 = 0;
        while (i0 < c[0]->ev[EV_MMA].size() || i1 < c[1]->ev[EV_MMA].size()) {
            const bool take0 = i1 >= c[1]->ev[EV_MMA].size() ||
                               (i0 < c[0]->ev[EV_MMA].size() && c[0]->ev[EV_MMA][i0].start_ps <= c[1]->ev[EV_MMA][i1].start_ps);
            order.push_back(take0 ? Turn{0, i0++} : Turn{1, i1++});
        }
        for (size_t i = 0; i < order.size(); i++) {
            const ikp_event &m = c[order[i].who]->ev[EV_MMA][order[i].k];
            turns++;
            not_alternating += order[i].who != (int)(i % 2);
            if (i + 1 < order.size()) overlapping += m.end_ps > c[order[i + 1].who]->ev[EV_MMA][order[i + 1].k].start_ps;
            if (i > 0 && order[i].who != order[i - 1].who && order[i - 1].k < c[order[i - 1].who]->ev[EV_EPILOGUE].size()) {
                pairs++;
                hidden += overlap(m, c[order[i - 1].who]->ev[EV_EPILOGUE][order[i - 1].k]);
            }
            for (size_t j = 0; j < pr.ev[EV_LOAD].size(); j++) {
                const ikp_event &ld = pr.ev[EV_LOAD][j];
                if (ld.begin_data != m.begin_data) continue;
                ends_late += ld.end_ps >= m.end_ps;
                if (j == 0) break;
                loads_checked++;
                ahead += ld.start_ps < m.start_ps;
                late += ld.start_ps >= m.start_ps;
                lead_us.push_back((double)(m.start_ps - ld.start_ps) / 1e6);
                break;
            }
        }
    }
    check(turns == tiles && not_alternating == 0 && overlapping == 0,
          "(b) per CTA the consumers' mma regions take turns, consumer 0 first (%llu of %llu out of turn), never overlapping (%llu overlap the next)",
          (unsigned long long)not_alternating, (unsigned long long)turns, (unsigned long long)overlapping);
    if (p.K / 64 >= 16)
        check(pairs > 0 && hidden == pairs,
              "(c) each consumer's mma overlaps the other's epilogue of the tile before: %llu of %llu", (unsigned long long)hidden,
              (unsigned long long)pairs);
    else
        printf("skip (c) mma over the other's epilogue: K = %d is %d k-tiles, fewer than 16, so an mma may end before the epilogue it hides begins\n",
               p.K, p.K / 64);
    std::sort(lead_us.begin(), lead_us.end());
    const double lead_median = lead_us.empty() ? 0.0 : lead_us[lead_us.size() / 2];
    check(ends_late == 0 && (loads_checked > 0 || tiles <= p.ctas) && 2 * ahead >= loads_checked && (lead_us.empty() || lead_median > 0),
          "(d) the producer runs ahead: every tile's load ended before its mma (%llu not); %llu of %llu tiles after each CTA's "
          "first began loading before their mma began (at least half; %llu after), the median %.2f us before",
          (unsigned long long)ends_late, (unsigned long long)ahead, (unsigned long long)loads_checked,
          (unsigned long long)late, lead_median);

    // (e) the report's bound: at every moment one consumer holds the MMA turn (the
    // tensor cores are the limit), so a block waits on its consumers, never on the
    // producer, whose load region is busy almost throughout but mostly waiting for
    // free stages (those waits are inside CUTLASS's collective, left alone). The
    // consumers' waits at the order barrier are waits: the report's default
    // takes them by their name (wait), as ikp report does.
    ikp_report *rep = NULL;
    if (ikp_report_compute(cap, NULL, &rep, &err) != IKP_OK) die_ikp(err);
    check(rep->waits == 1 && rep->wait_ids[0] == EV_WAIT && rep->waits_by_name == 1,
          "(e) the report takes the order barrier's wait as the one wait, by its name (%u waits)", rep->waits);
    const ikp_report_group *best = NULL, *by[GROUPS] = {NULL, NULL, NULL};
    uint32_t bound_blocks = 0;
    for (uint32_t i = 0; i < rep->num_groups; i++) {
        const ikp_report_group *g = &rep->groups[i];
        if (!best || g->alone_ns > best->alone_ns) best = g;
        if (g->group < GROUPS) by[g->group] = g;
        bound_blocks += g->blocks_bound;
    }
    if (by[0] && by[1] && by[2]) {
        printf("report (waits by name): bound by %s; alone busy %.1f / %.1f / %.1f us, bounding %u / %u / %u blocks "
               "(producer / consumer 0 / consumer 1)\n",
               best->name, by[0]->alone_ns / 1e3, by[1]->alone_ns / 1e3, by[2]->alone_ns / 1e3, by[0]->blocks_bound,
               by[1]->blocks_bound, by[2]->blocks_bound);
        check(best->group != 0 && by[1]->blocks_bound + by[2]->blocks_bound >= 9 * by[0]->blocks_bound,
              "(e) ikp report names a consumer as the bound (%s), and the consumers bound %u of the %u blocks with a bound",
              best->name, by[1]->blocks_bound + by[2]->blocks_bound, bound_blocks);
    } else {
        check(false, "(e) the report has the 3 groups (%u)", rep->num_groups);
    }
    ikp_report_free(rep);
    ikp_capture_free(cap);
}
#endif

// ---- one recorded launch, with its checks -----------------------------------

static int run_checked(const char *out, int M, int N, int K)
{
    Problem p;
    if (!problem_init(p, M, N, K)) return 1;
    const cudaStream_t stream = 0; // the one the dump downloads on (and samples the SM clocks while it runs)
    // capacity: a consumer records 11 a tile (two regions of wait, mma with its
    // payload, tail, epilogue), the producer 3; a CTA's tiles are split by two
    const uint32_t tiles = p.tiles_m * p.tiles_n, per_cta = (tiles + p.ctas - 1) / p.ctas;
    ikp_cuda_buffer buf;
    ikp_error err;
    if (ikp_cuda_buffer_create(&buf, p.ctas * GROUPS, example_capacity(11 * ((per_cta + 1) / 2) + 3 * per_cta + 8), &err) != IKP_OK)
        die_ikp(err);

    // untimed warm-up, then the time of 10 launches not recording (the median)
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    set_buffer(NULL, stream);
    for (int r = 0; r < 11; r++) {
        const float t = timed_gemm(p, stream, a, b);
        if (r) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());

    // the recorded launch, into D poisoned with NaN
    CK(cudaMemsetAsync(p.D, 0xFF, (size_t)M * N * sizeof(Element), stream));
    if (ikp_cuda_buffer_reset(&buf, stream, &err) != IKP_OK) die_ikp(err);
    set_buffer(buf.device, stream);
    run_gemm(p, stream);
    CK(cudaGetLastError());
    example_dump(&buf, out, event_names, EV_COUNT, group_names, GROUPS); // downloads: waits for the kernel
    printf("cutlass ping-pong %dx%dx%d bf16, %u CTAs (clusters of 2) x 3 warp groups, %u tiles of 128x128: "
           "%.3f ms, %.1f TFLOP/s not recording (median of 10)\n",
           M, N, K, p.ctas, tiles, ms[ms.size() / 2], 2.0 * M * N * K / (ms[ms.size() / 2] * 1e-3) / 1e12);

    // (a) the product against the reference
    float *R;
    unsigned long long *cnt, h[2] = {0, ~0ull};
    CK(cudaMalloc(&R, (size_t)M * N * sizeof(float)));
    CK(cudaMalloc(&cnt, sizeof h));
    CK(cudaMemcpy(cnt, h, sizeof h, cudaMemcpyHostToDevice));
    reference_gemm<<<dim3((N + 31) / 32, (M + 31) / 32), dim3(32, 8), 0, stream>>>(p.A, p.B, R, M, N, K);
    compare<<<1024, 256, 0, stream>>>(p.D, R, (size_t)M * N, cnt, cnt + 1);
    CK(cudaGetLastError());
    CK(cudaMemcpy(h, cnt, sizeof h, cudaMemcpyDeviceToHost));
    if (h[0]) {
        Element d;
        float r;
        CK(cudaMemcpy(&d, p.D + h[1], sizeof d, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&r, R + h[1], sizeof r, cudaMemcpyDeviceToHost));
        printf("first wrong element: D[%llu][%llu] = %g, the reference %g\n", h[1] / N, h[1] % N, static_cast<float>(d), r);
    }
    check(h[0] == 0, "(a) D = A B^T: all %lld elements of the recorded launch within half a bf16 step of the fp32 reference (%llu not)",
          (long long)M * N, h[0]);
    CK(cudaFree(R));
    CK(cudaFree(cnt));

#if IKP_ENABLE
    char path[512];
    snprintf(path, sizeof path, "%s.ikp", out);
    check_capture(path, p);
#else
    printf("built with IKP_ENABLE=0: the kernel is CUTLASS's own; nothing recorded, nothing to check in a capture\n");
#endif
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    problem_free(p);
    printf("%d passed, %d failed\n", checks_passed, checks_failed);
    return checks_failed != 0;
}

// ---- --overhead: recording armed against disarmed, in one binary ------------

static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

static int run_overhead(const std::vector<int> &sizes, int rounds)
{
    const int per_side = 20;
    printf("recording armed (buffer set) against disarmed (NULL), one binary: %d rounds of %d launches a side, interleaved "
           "(armed first on even launches), each launch timed alone between two events after a buffer reset and a sync\n",
           rounds, per_side);
    printf("%-6s %-6s %14s %14s %10s\n", "size", "round", "disarmed ms", "armed ms", "overhead");
    std::vector<double> overall;
    for (int s : sizes) {
        Problem p;
        if (!problem_init(p, s, s, s)) return 1;
        cudaStream_t stream;
        CK(cudaStreamCreate(&stream));
        const uint32_t tiles = p.tiles_m * p.tiles_n, per_cta = (tiles + p.ctas - 1) / p.ctas;
        ikp_cuda_buffer buf;
        ikp_error err;
        if (ikp_cuda_buffer_create(&buf, p.ctas * GROUPS, 11 * ((per_cta + 1) / 2) + 3 * per_cta + 8, &err) != IKP_OK) die_ikp(err);
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        auto timed = [&](bool armed) {
            if (ikp_cuda_buffer_reset(&buf, stream, &err) != IKP_OK) die_ikp(err); // both sides alike
            set_buffer(armed ? buf.device : NULL, stream);
            CK(cudaStreamSynchronize(stream));
            return timed_gemm(p, stream, a, b);
        };
        for (int w = 0; w < 3; w++) { timed(true); timed(false); }
        std::vector<float> all_on, all_off;
        for (int r = 0; r < rounds; r++) {
            std::vector<float> on, off;
            for (int i = 0; i < per_side; i++) {
                if (i % 2 == 0) { on.push_back(timed(true)); off.push_back(timed(false)); }
                else { off.push_back(timed(false)); on.push_back(timed(true)); }
            }
            const double mon = median(on), moff = median(off);
            printf("%-6d %-6d %14.4f %14.4f %+9.2f%%\n", s, r + 1, moff, mon, 100.0 * (mon / moff - 1));
            all_on.insert(all_on.end(), on.begin(), on.end());
            all_off.insert(all_off.end(), off.begin(), off.end());
        }
        const double mon = median(all_on), moff = median(all_off);
        printf("%-6d %-6s %14.4f %14.4f %+9.2f%%\n", s, "all", moff, mon, 100.0 * (mon / moff - 1));
        overall.push_back(100.0 * (mon / moff - 1));
#if IKP_ENABLE
        // the last armed launch did record: every lane, nothing dropped
        std::vector<uint64_t> words(buf.num_words);
        if (ikp_cuda_buffer_download(&buf, stream, words.data(), &err) != IKP_OK) die_ikp(err);
        ikp_capture *cap = NULL;
        ikp_decode_options opt;
        memset(&opt, 0, sizeof opt);
        if (ikp_capture_open(words.data(), words.size(), &opt, &cap, &err) != IKP_OK) die_ikp(err);
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        check(in->active_lanes == p.ctas * GROUPS && in->dropped == 0 && in->unfinalized_lanes == 0,
              "%d^3: the last armed launch recorded every lane (%u of %u), nothing dropped (%llu)", s, in->active_lanes,
              p.ctas * GROUPS, (unsigned long long)in->dropped);
        ikp_capture_free(cap);
#endif
        ikp_cuda_buffer_destroy(&buf);
        CK(cudaEventDestroy(a));
        CK(cudaEventDestroy(b));
        CK(cudaStreamDestroy(stream));
        problem_free(p);
    }
    for (size_t i = 0; i < sizes.size(); i++)
        printf("overhead of recording at %d^3: %+.2f%% of the kernel's time (median of all launches; goal: at most 1%%)\n", sizes[i],
               overall[i]);
    printf("%d passed, %d failed\n", checks_passed, checks_failed);
    return checks_failed != 0;
}

int main(int argc, char **argv)
{
    bool overhead = false;
    int rounds = 3;
    std::vector<const char *> pos;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--overhead")) overhead = true;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "usage: %s [OUT [M [N [K]]]]\n       %s --overhead [--rounds R] [SIZE...]\n", argv[0], argv[0]);
            return 2;
        } else pos.push_back(argv[i]);
    }
    cudaDeviceProp prop;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    if (prop.major != 9 || prop.minor != 0) {
        fprintf(stderr, "this example is built for sm_90a (H100, H200); device %d is %s, sm_%d%d\n", dev, prop.name, prop.major, prop.minor);
        return 1;
    }
    if (overhead) {
        std::vector<int> sizes;
        for (const char *s : pos) sizes.push_back(atoi(s));
        if (sizes.empty()) sizes = {4096, 8192};
        for (int s : sizes)
            if (s <= 0 || s % kAlign) { fprintf(stderr, "sizes must be positive multiples of %d\n", kAlign); return 2; }
        return run_overhead(sizes, rounds > 0 ? rounds : 3);
    }
    const char *out = pos.size() > 0 ? pos[0] : "cutlass_gemm";
    const int M = pos.size() > 1 ? atoi(pos[1]) : 4096, N = pos.size() > 2 ? atoi(pos[2]) : M, K = pos.size() > 3 ? atoi(pos[3]) : M;
    if (M <= 0 || N <= 0 || K <= 0 || M % kAlign || N % kAlign || K % kAlign) {
        fprintf(stderr, "M, N and K must be positive multiples of %d\n", kAlign);
        return 2;
    }
    return run_checked(out, M, N, K);
}
