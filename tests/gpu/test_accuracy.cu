// make gpu-test: timing accuracy of the decoded timelines, in both timer kinds.
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "../../ikp.h"
#include "../check.h"
#include "lane_events.h"
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <climits>
#include <cstring>
#include <vector>
namespace ikp_cy {
#include "../../ikp_cuda.cuh"
#include "accuracy_kernels.cuh"
}
void gt_known_length(const long long *ks, int nk, long long *truth, uint64_t *prof);
void gt_same_moment(unsigned long long *deadline, int blocks, int reps, int anchors, uint64_t *prof);
void gt_long_run(int n, long long busy, long long idle, long long *truth, uint64_t *prof, cudaStream_t s);
void st_known_length(const long long *ks, int nk, long long *truth, uint64_t *prof);
void nw_known_length(const long long *ks, int nk, long long *truth, uint64_t *prof);
void st_same_moment(unsigned long long *deadline, int blocks, int reps, int anchors, uint64_t *prof);
void st_anchored_moment(unsigned long long *deadline, int blocks, int reps, unsigned long long *truth, uint64_t *prof);
void st_cross_sm(unsigned long long *start, int blocks, unsigned long long lane_ns, int moments, long long region_cycles,
                 unsigned long long *truth, uint64_t *prof);
void au_cross_sm(unsigned long long *start, int blocks, unsigned long long lane_ns, int moments, long long region_cycles,
                 unsigned long long *truth, uint64_t *prof);
void au_fill_sm(unsigned long long *start, int blocks, size_t smem, unsigned long long lane_ns, int moments,
                long long region_cycles, unsigned long long *truth, uint64_t *prof, int shape);

void nt_truth_regions(int blocks, const long long *ks, int nk, long long gap, long long stagger, long long *out,
                      uint64_t *prof);
void st_truth_regions(int blocks, const long long *ks, int nk, long long gap, long long stagger, long long *out,
                      uint64_t *prof);
void au_truth_regions(int blocks, const long long *ks, int nk, long long gap, long long stagger, long long *out,
                      uint64_t *prof);

enum { CYCLES, GLOBALTIMER, CYCLES_STAGED, CYCLES_NOW, CYCLES_AUTO, CYCLES_NOTICKS };
static const char *const kind_name[] = {"cycles     ", "globaltimer", "cyc.staged ", "cyc.now    ", "cyc.auto   ",
                                        "cyc.noticks"};

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

static double g_rate = 0; // cycles per ns, from the cycle-mode anchors
static double g_step = 32; // largest %globaltimer step seen in this run (ns), at least 32

// How %globaltimer advances: one thread reads it 16 times back to back (the
// reads issue a few cycles apart), so a change between two of them is one
// step of the timer, seen whole; for `ms` milliseconds. Counts the steps by
// size (32, 64, 96 or more ns).
__global__ void globaltimer_steps(int ms, unsigned long long *out)
{
    unsigned long long g0, g[16], n32 = 0, n64 = 0, n96 = 0, maxstep = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    do {
#pragma unroll
        for (int i = 0; i < 16; i++) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g[i]));
#pragma unroll
        for (int i = 0; i < 15; i++) {
            unsigned long long d = g[i + 1] - g[i];
            if (d == 0) continue;
            if (d <= 32) n32++; else if (d <= 64) n64++; else n96++;
            if (d > maxstep) maxstep = d;
        }
    } while (g[15] - g0 < (unsigned long long)ms * 1000000ull);
    out[0] = n32; out[1] = n64; out[2] = n96; out[3] = maxstep;
}

static void timer_steps()
{
    unsigned long long *d, h[4];
    CK(cudaMalloc(&d, sizeof h));
    globaltimer_steps<<<1, 1>>>(50, d);
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    // steps were seen, 32 ns ones among them (runs have seen 7,000 to 76,000 whole steps)
    CHECK(h[0] + h[1] + h[2] > 1000 && h[0] > 0);
    g_step = std::max(32.0, (double)h[3]);
    printf("  globaltimer steps seen whole over 50 ms: %llu of 32 ns, %llu of 64 ns, %llu longer; largest %llu ns\n", h[0], h[1], h[2], h[3]);
}

// The buffer's words, once the kernel has finished
static void copy_words(const ikp_cuda_buffer &b, std::vector<uint64_t> &w)
{
    w.resize(b.num_words);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(w.data(), b.device, w.size() * 8, cudaMemcpyDeviceToHost));
}

static ikp_capture *fetch(ikp_cuda_buffer &b, std::vector<uint64_t> &w)
{
    copy_words(b, w);
    ikp_capture *cap = NULL;
    ikp_error e;
    if (ikp_capture_open(w.data(), w.size(), NULL, &cap, &e) != IKP_OK) { fprintf(stderr, "decode: %s\n", e.message); return NULL; }
    return cap;
}

/* median duration of the lane's empty regions (id 2): the stamps' own skew, ns */
static double empty_skew(const ikp_capture *cap, uint32_t lane, double *lo, double *hi)
{
    std::vector<ikp_event> z = events(cap, lane, 2);
    std::vector<double> d;
    for (const ikp_event &e : z) d.push_back((e.end_ps - e.start_ps) / 1000.0);
    std::sort(d.begin(), d.end());
    if (d.empty()) return 0;
    *lo = d[0];
    *hi = d.back();
    return d[d.size() / 2];
}

/* The regions of known_length again, downloaded as README's example does
   (SM clock samples taken while the kernel runs) and decoded with and
   without the samples: the samples place the lanes on the ns axis, they
   must not bend a region. Regions of up to 1000 cycles decode within 8
   cycles of each other (a stretch between two close samples bent them by
   ~16); longer ones follow the SM clock's own changes of speed within the
   lane (up to ~3e-4 seen), which the lane's two anchors average out: they
   are reported. */
static void launch_known_length(int kind, const long long *dks, int nk, long long *dtruth, uint64_t *prof)
{
    if (kind == CYCLES) ikp_cy::known_length<<<2, 32>>>(dks, nk, dtruth, prof);
    else if (kind == GLOBALTIMER) gt_known_length(dks, nk, dtruth, prof);
    else if (kind == CYCLES_STAGED) st_known_length(dks, nk, dtruth, prof);
    else nw_known_length(dks, nk, dtruth, prof);
    CK(cudaGetLastError());
}
static void sampled_lengths(int kind, ikp_cuda_buffer &b, const std::vector<long long> &ks, long long *dks,
                            long long *dtruth)
{
    const int nk = (int)ks.size();
    std::vector<uint64_t> w(b.num_words);
    ikp_error e;
    ikp_capture *cap = NULL, *sampled = NULL;
    ikp_decode_options so;
    CHECK_EQ(ikp_cuda_buffer_reset(&b, 0, NULL), IKP_OK);
    launch_known_length(kind, dks, nk, dtruth, b.device);
    CHECK_EQ(ikp_cuda_buffer_download(&b, 0, w.data(), &e), IKP_OK);
    memset(&so, 0, sizeof so);
    so.sm_clock = b.sm_clock;
    so.num_sm_clock = b.num_sm_clock;
    CHECK(ikp_capture_open(w.data(), w.size(), NULL, &cap, &e) == IKP_OK);
    CHECK(ikp_capture_open(w.data(), w.size(), &so, &sampled, &e) == IKP_OK);
    if (cap && sampled) {
        for (uint32_t l = 0; l < 2; l++) {
            const double rate = lane_info(cap, l).cycles_per_ns;
            std::vector<ikp_event> r0 = events(cap, l, 1), r1 = events(sampled, l, 1);
            CHECK(r0.size() == r1.size() && r1.size() == (size_t)nk);
            printf("  %s lane %u (SM %u), %u SM clock samples, lengths with - without, cycles:", kind_name[kind], l,
                   lane_info(sampled, l).sm, b.num_sm_clock);
            for (size_t i = 0; i < r0.size() && i < r1.size() && i < (size_t)nk; i++) {
                const double d = (double)((r1[i].end_ps - r1[i].start_ps) - (r0[i].end_ps - r0[i].start_ps)) / 1000.0 * rate;
                if (ks[i] <= 1000) CHECK(std::fabs(d) <= 8.0);
                printf(" K=%lld %+.1f", ks[i], d);
            }
            printf(" (checked: 8 cycles up to K = 1000)\n");
            fflush(stdout);
        }
    }
    ikp_capture_free(cap);
    ikp_capture_free(sampled);
}

/* Regions of known length, up to 5 ms, on two lanes. Cycle mode: the
   decoded duration, at the lane's mean rate, within max(1%, 8 cycles) of
   the truth: the loose check of every build (the SM clock's rate moves by
   a few 1e-4 within a lane; truth_lengths checks lengths at the rate
   there to 8 cycles + 1e-4 K); the empty region (the stamps' own
   skew) is reported. With IKP_DEFER_BEGIN=0 (CYCLES_NOW) the begin's store
   is inside every region: there the empty region is only bounded (64
   cycles) and the duration minus it is checked. Globaltimer mode: with the
   truth, as the 32 ns steps allow (below). */
static void known_length(int kind)
{
    const bool cycles = kind != GLOBALTIMER;
    const std::vector<long long> ks = {16, 32, 100, 1000, 10000, 100000, 1000000, 10000000};
    const int nk = (int)ks.size();
    long long *dks, *dtruth;
    CK(cudaMalloc(&dks, nk * 8));
    CK(cudaMalloc(&dtruth, 2 * nk * 8));
    CK(cudaMemcpy(dks, ks.data(), nk * 8, cudaMemcpyHostToDevice));
    ikp_cuda_buffer b;
    CHECK_EQ(ikp_cuda_buffer_create(&b, 2, 64, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&b, 0, NULL), IKP_OK);
    launch_known_length(kind, dks, nk, dtruth, b.device);
    std::vector<uint64_t> w;
    ikp_capture *cap = fetch(b, w);
    std::vector<long long> truth(2 * nk);
    CK(cudaMemcpy(truth.data(), dtruth, truth.size() * 8, cudaMemcpyDeviceToHost));
    CHECK(cap != NULL);
    if (cap) {
        CHECK_EQ(ikp_capture_get_info(cap)->timer_cycles, cycles ? 1 : 0);
        for (uint32_t l = 0; l < 2; l++) {
            double rate = cycles ? lane_info(cap, l).cycles_per_ns : g_rate, lo = 0, hi = 0;
            if (kind == CYCLES && l == 0) g_rate = rate;
            double skew = empty_skew(cap, l, &lo, &hi);
            std::vector<ikp_event> r = events(cap, l, 1);
            CHECK_EQ(r.size(), (size_t)nk);
            // the skew itself: a few cycles (the median: one of the 16 empty regions read up to
            // 15 cycles in every run so far), or one timer step
            const double skew_max = kind == CYCLES_NOW ? 64.0 / rate : cycles ? 8.0 / rate : g_step;
            CHECK(lo >= 0 && skew <= skew_max && hi <= (cycles ? 64.0 / rate : g_step));
            if (l == 0)
                printf("  %s empty region (stamp skew): median %.2f ns = %.1f cycles (min %.2f, max %.2f ns)\n",
                       kind_name[kind], skew, skew * g_rate, lo, hi);
            for (size_t i = 0; i < r.size() && i < (size_t)nk; i++) {
                double dec_ns = (r[i].end_ps - r[i].start_ps) / 1000.0, tru = (double)truth[l * nk + i];
                if (cycles) {
                    double dec = dec_ns * rate, tol = std::max(0.01 * tru, 8.0), sk = kind == CYCLES_NOW ? skew * rate : 0;
                    CHECK(std::fabs(dec - sk - tru) <= tol);
                    if (l == 0) {
                        printf("  %s  K=%9lld  truth %10.0f cycles  decoded %12.1f  error %+6.1f cycles", kind_name[kind], ks[i], tru, dec, dec - tru);
                        if (kind == CYCLES_NOW) printf(", minus the empty region %+6.1f", dec - sk - tru);
                        printf("\n");
                    }
                } else {
                    // stamps b, e and truth reads t0, t1 with b < t0 < t1 < e, all from the timer
                    // that steps by exactly g_step: decoded - truth = (e - t1) + (t0 - b) rounded to
                    // steps, so 0, 1 or 2 steps; anything else is a decoding error
                    const double err = dec_ns - tru;
                    CHECK(err >= 0 && err <= 2 * g_step && std::fmod(err, g_step) == 0);
                    if (l == 0) printf("  globaltimer  K=%9lld  truth %10.0f ns      decoded %12.0f  decoded - truth %+4.0f ns\n", ks[i], tru, dec_ns, err);
                }
            }
        }
        ikp_capture_free(cap);
    }
    if (cycles) sampled_lengths(kind, b, ks, dks, dtruth);
    ikp_cuda_buffer_destroy(&b);
    CK(cudaFree(dks));
    CK(cudaFree(dtruth));
}

// One moment on every SM. Cycle mode is checked with an IKP_ANCHOR before
// each moment (GUIDE.md "Anchors"); without them (anchors = 0) the spread is
// only reported: the SM clock drifts between a lane's two own anchors.
static void same_moment(int kind, int sms, int anchors)
{
    const int reps = 8;
    unsigned long long *dl;
    CK(cudaMalloc(&dl, 8));
    CK(cudaMemset(dl, 0, 8));
    ikp_cuda_buffer b;
    CHECK_EQ(ikp_cuda_buffer_create(&b, sms, 48, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&b, 0, NULL), IKP_OK);
    if (kind == CYCLES) ikp_cy::same_moment<<<sms, 32>>>(dl, reps, anchors, b.device);
    else if (kind == GLOBALTIMER) gt_same_moment(dl, sms, reps, anchors, b.device);
    else st_same_moment(dl, sms, reps, anchors, b.device);
    CK(cudaGetLastError());
    std::vector<uint64_t> w;
    ikp_capture *cap = fetch(b, w);
    CHECK(cap != NULL);
    if (cap) {
        std::vector<unsigned> sm_ids;
        double worst = 0;
        std::vector<std::vector<ikp_event>> inst(sms);
        for (int l = 0; l < sms; l++) {
            inst[l] = events(cap, (uint32_t)l, 3);
            CHECK_EQ(inst[l].size(), (size_t)reps);
            sm_ids.push_back(lane_info(cap, (uint32_t)l).sm);
        }
        std::sort(sm_ids.begin(), sm_ids.end());
        size_t distinct = std::unique(sm_ids.begin(), sm_ids.end()) - sm_ids.begin();
        CHECK(distinct >= 2);
        for (int r = 0; r < reps; r++) {
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            for (int l = 0; l < sms; l++)
                if ((int)inst[l].size() > r) { lo = std::min(lo, inst[l][r].start_ps); hi = std::max(hi, inst[l][r].start_ps); }
            double spread = (hi - lo) / 1000.0;
            if (anchors || kind == GLOBALTIMER) CHECK(spread <= 64.0);
            worst = std::max(worst, spread);
        }
        printf("  %s one moment on %d lanes, %zu SMs: worst spread %.1f ns over %d moments%s\n",
               kind_name[kind], sms, distinct, worst, reps,
               kind == GLOBALTIMER ? "" : anchors ? ", IKP_ANCHOR before each" : ", lane anchors only (not checked)");
        { // where the error sits: each stamp against the globaltimer its SM read at the moment (the
          // payload), relative to the median of all; a lane whose error grows away from its anchors
          // saw its SM clock change speed between them
            std::vector<double> errs;
            for (int l = 0; l < sms; l++)
                for (const ikp_event &e : inst[l]) errs.push_back(e.start_ps / 1000.0 - (double)e.begin_data);
            std::vector<double> sorted = errs;
            std::sort(sorted.begin(), sorted.end());
            const double med = sorted.empty() ? 0 : sorted[sorted.size() / 2];
            int wl = 0;
            double we = 0;
            for (int l = 0; l < sms; l++)
                for (size_t r = 0; r < inst[l].size(); r++) {
                    double e = std::fabs(inst[l][r].start_ps / 1000.0 - inst[l][r].begin_data - med);
                    if (e > we) { we = e; wl = l; }
                }
            printf("  %s worst lane %d (SM %u): stamp - its globaltimer, ns, moments 0..%d:", kind_name[kind], wl,
                   lane_info(cap, (uint32_t)wl).sm, reps - 1);
            for (const ikp_event &e : inst[wl]) printf(" %+.1f", e.start_ps / 1000.0 - e.begin_data - med);
            printf("\n");
        }
        if (kind != GLOBALTIMER) { // how far apart the lanes' clock rates are (anchor to anchor)
            double rlo = 1e9, rhi = 0;
            for (int l = 0; l < sms; l++) {
                double r = lane_info(cap, (uint32_t)l).cycles_per_ns;
                rlo = std::min(rlo, r);
                rhi = std::max(rhi, r);
            }
            printf("  %s lane clock rates %.6f .. %.6f cycles/ns\n", kind_name[kind], rlo, rhi);
        }
        ikp_capture_free(cap);
    }
    ikp_cuda_buffer_destroy(&b);
    CK(cudaFree(dl));
}

// The first word of every started lane's start anchor: the capture's time zero
static long long capture_zero(const std::vector<uint64_t> &w, uint32_t lanes, uint32_t cap)
{
    unsigned long long z = ~0ull;
    const size_t stride = IKP_WIRE_LANE_WORDS + cap + IKP_WIRE_SINK_SLOTS;
    for (uint32_t l = 0; l < lanes; l++) {
        const uint64_t *h = w.data() + IKP_WIRE_HEADER_WORDS + l * stride;
        if (h[0] && h[3] < z) z = h[3];
    }
    return (long long)z;
}

// A moment's truth (keep_truth: tick, cycles from it to just before the
// stamp, bracket) in ps after time zero, at the lane's clock rate; 64-bit
// integers up to the division (a globaltimer value in a double is only 256
// ns fine). The bracket's width goes to *width.
static long long truth_ps(const unsigned long long *t, long long zero, double cycles_per_ns, unsigned long long *width)
{
    *width = std::max(*width, t[2]);
    return ((long long)t[0] - zero) * 1000 + (long long)llround((double)(long long)t[1] * 1000.0 / cycles_per_ns);
}

// The worst spread over the SMs of one moment, in ps, decoding w with the
// SM clock samples given (or none); *placed: lanes placed through samples.
static long long moment_spread(const std::vector<uint64_t> &w, const ikp_sm_clock *smp, uint32_t nsmp, int sms,
                               int moments, uint32_t capacity, const std::vector<unsigned long long> &truth,
                               uint32_t *placed, long long *band_lo, long long *band_hi, unsigned long long *width,
                               uint32_t *stated = NULL, unsigned long long *anchors = NULL, long long *sure = NULL,
                               long long *most = NULL)
{
    ikp_decode_options o;
    memset(&o, 0, sizeof o);
    o.sm_clock = smp;
    o.num_sm_clock = nsmp;
    ikp_capture *cap = NULL;
    ikp_error e;
    if (ikp_capture_open(w.data(), w.size(), &o, &cap, &e) != IKP_OK) {
        fprintf(stderr, "decode: %s\n", e.message);
        CHECK(0);
        return LLONG_MAX;
    }
    const long long zero = capture_zero(w, (uint32_t)sms, capacity);
    const ikp_capture_info *in = ikp_capture_get_info(cap);
    CHECK_EQ(in->dropped, 0);
    *placed = in->sampled_lanes;
    if (stated) *stated = in->cross_sm_ns; // what the capture says of itself
    if (anchors) *anchors = in->anchors;
    // (with each lane's truth off by up to half its located width: the spread it surely has, *sure, and
    // the most it can have, *most)
    std::vector<long long> lo(moments, LLONG_MAX), hi(moments, LLONG_MIN), lo_in(moments, LLONG_MAX),
        hi_in(moments, LLONG_MIN), lo_out(moments, LLONG_MAX), hi_out(moments, LLONG_MIN);
    *band_lo = LLONG_MAX;
    *band_hi = LLONG_MIN;
    int complete = 1;
    for (int l = 0; l < sms; l++) {
        std::vector<ikp_event> inst = events(cap, (uint32_t)l, 3);
        if ((int)inst.size() != moments) { complete = 0; continue; }
        const double rate = lane_info(cap, (uint32_t)l).cycles_per_ns;
        for (int m = 0; m < moments; m++) {
            const unsigned long long *t = &truth[3 * ((size_t)l * moments + m)];
            const long long err = inst[m].start_ps - truth_ps(t, zero, rate, width), h = llround(t[2] * 500.0 / rate);
            lo[m] = std::min(lo[m], err);
            hi[m] = std::max(hi[m], err);
            lo_in[m] = std::min(lo_in[m], err + h);
            hi_in[m] = std::max(hi_in[m], err - h);
            lo_out[m] = std::min(lo_out[m], err - h);
            hi_out[m] = std::max(hi_out[m], err + h);
            *band_lo = std::min(*band_lo, err);
            *band_hi = std::max(*band_hi, err);
        }
    }
    CHECK(complete);
    long long worst = 0;
    for (int m = 0; m < moments; m++) worst = std::max(worst, hi[m] - lo[m]);
    if (sure) *sure = 0;
    if (most) *most = 0;
    for (int m = 0; m < moments; m++) {
        if (sure) *sure = std::max(*sure, hi_in[m] - lo_in[m]);
        if (most) *most = std::max(*most, hi_out[m] - lo_out[m]);
    }
    ikp_capture_free(cap);
    return worst;
}

// One moment on every SM, each lane with an IKP_ANCHOR shortly before it,
// taken at a phase of the globaltimer tick that differs from lane to lane;
// decoded from the buffer alone (no SM clock samples), against the truth of
// edge_truth. An anchor locates its tick as the truth does, so the moment
// decodes within 32 ns of itself on every SM (checked), the truth's own
// brackets included (checked: within 32 cycles).
static void anchored_moment(int kind, int sms)
{
    const int reps = 8;
    unsigned long long *dl, *dtruth;
    CK(cudaMalloc(&dl, 8));
    CK(cudaMemset(dl, 0, 8));
    CK(cudaMalloc(&dtruth, (size_t)sms * reps * 3 * 8));
    ikp_cuda_buffer b;
    CHECK_EQ(ikp_cuda_buffer_create(&b, sms, 48, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&b, 0, NULL), IKP_OK);
    if (kind == CYCLES) ikp_cy::anchored_moment<<<sms, 32>>>(dl, reps, dtruth, b.device);
    else st_anchored_moment(dl, sms, reps, dtruth, b.device);
    CK(cudaGetLastError());
    std::vector<uint64_t> w;
    copy_words(b, w);
    std::vector<unsigned long long> truth((size_t)sms * reps * 3);
    CK(cudaMemcpy(truth.data(), dtruth, truth.size() * 8, cudaMemcpyDeviceToHost));
    uint32_t placed = 0;
    long long lo = 0, hi = 0;
    unsigned long long width = 0;
    const long long worst = moment_spread(w, NULL, 0, sms, reps, 48, truth, &placed, &lo, &hi, &width);
    CHECK(width <= 32);
    CHECK(worst <= 32000);
    printf("  %s one moment on %d lanes, an IKP_ANCHOR shortly before it at varied phases, no samples: worst spread "
           "%.1f ns over %d moments (checked: 32 ns; stamp - truth %.1f .. %.1f ns; ticks located within %llu "
           "cycles)\n",
           kind_name[kind], sms, worst / 1000.0, reps, lo / 1000.0, hi / 1000.0, width);
    ikp_cuda_buffer_destroy(&b);
    CK(cudaFree(dl));
    CK(cudaFree(dtruth));
}

// Lanes of 10 us, 1 ms and 100 ms on every SM, no IKP_ANCHOR: each of 20
// moments, stamped on every SM, decodes within 64 ns of the others, in the
// default build and staged through the SM clock samples that
// ikp_cuda_buffer_download takes while the kernel runs (every 25 us: a
// lane of 10 us may hold none, and needs none), and with automatic anchors
// (IKP_ANCHOR_EVERY=65536) as well. The truth is the %globaltimer
// tick each lane located just before its stamp (edge_truth, truth_ps);
// errors are computed in 64-bit integers (a globaltimer value in a double
// is only 256 ns fine). The same words decoded without the samples are
// reported beside, not checked: the SM clocks change speed by up to 0.2%
// within milliseconds, each SM pair its own way, and two anchors per lane
// cannot follow that.
// late: the download comes after a cudaDeviceSynchronize and the truth's
// copy, when the kernel has ended (no SM clock samples: the lanes keep
// their anchors). In both orders the capture's own statement of how far
// apart it may place one moment (ikp_capture_info.cross_sm_ns) must bound
// the spread measured against the truth, with the samples and without.
static void cross_sm(int kind, int sms, unsigned long long lane_ns, bool late = false)
{
    const int moments = 20;
    const long long region_cycles = (long long)((double)lane_ns / moments / 64 * 1.2); // ~60% busy at 2 GHz
    const uint32_t capacity = (uint32_t)moments * (64 * 3 + 2) + 16;
    unsigned long long *start, *dtruth;
    CK(cudaMalloc(&start, 8));
    CK(cudaMemset(start, 0, 8));
    CK(cudaMalloc(&dtruth, (size_t)sms * moments * 3 * 8));
    ikp_cuda_buffer b;
    CHECK_EQ(ikp_cuda_buffer_create(&b, sms, capacity, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&b, 0, NULL), IKP_OK);
    // the host array is made before the launch: touching a fresh one of some MB
    // can take longer than a short kernel, which then ends before the download
    // starts and gets no SM clock samples
    std::vector<uint64_t> w(b.num_words);
    if (kind == CYCLES) ikp_cy::cross_sm<<<sms, 32>>>(start, lane_ns, moments, region_cycles, dtruth, b.device);
    else if (kind == CYCLES_STAGED) st_cross_sm(start, sms, lane_ns, moments, region_cycles, dtruth, b.device);
    else au_cross_sm(start, sms, lane_ns, moments, region_cycles, dtruth, b.device);
    CK(cudaGetLastError());
    std::vector<unsigned long long> truth((size_t)sms * moments * 3);
    if (late) {
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(truth.data(), dtruth, truth.size() * 8, cudaMemcpyDeviceToHost));
    }
    CHECK_EQ(ikp_cuda_buffer_download(&b, 0, w.data(), NULL), IKP_OK);
    if (!late) CK(cudaMemcpy(truth.data(), dtruth, truth.size() * 8, cudaMemcpyDeviceToHost));
    uint32_t placed = 0, unplaced = 0, stated = 0, stated0 = 0;
    long long lo = 0, hi = 0, lo0 = 0, hi0 = 0;
    unsigned long long width = 0;
    const long long worst = moment_spread(w, b.sm_clock, b.num_sm_clock, sms, moments, capacity, truth, &placed, &lo, &hi,
                                          &width, &stated);
    const long long worst0 = moment_spread(w, NULL, 0, sms, moments, capacity, truth, &unplaced, &lo0, &hi0, &width,
                                           &stated0);
    if (!late) CHECK(worst <= 64000);
    CHECK(width <= 32); // every moment's tick located to within 32 cycles
    if (lane_ns >= 1000000 && !late) CHECK_EQ(placed, (uint32_t)sms); // every lane of 1 ms or more had samples of its SM
    CHECK_EQ(unplaced, 0u);
    CHECK(worst <= (long long)stated * 1000);
    CHECK(worst0 <= (long long)stated0 * 1000);
    printf("  %s lanes of %8.3f ms on %d SMs, no IKP_ANCHOR%s%s: worst spread of a moment %.1f ns, stated %u ns (stamp - "
           "truth %.1f .. %.1f ns; %u SM clock samples, %u lanes placed through them); without the samples %.1f ns, "
           "stated %u ns; ticks located within %llu cycles\n",
           kind_name[kind], lane_ns / 1e6, sms, kind == CYCLES_AUTO ? ", IKP_ANCHOR_EVERY=65536" : "",
           late ? ", downloaded late" : "", worst / 1000.0, stated, lo / 1000.0, hi / 1000.0, b.num_sm_clock, placed,
           worst0 / 1000.0, stated0, width);
    ikp_cuda_buffer_destroy(&b);
    CK(cudaFree(start));
    CK(cudaFree(dtruth));
}

// A kernel that fills every SM (one block of 1,024 threads per SM holding
// all the shared memory a block may have, 31 of its warps issuing FMAs
// while the lane's regions run), lanes of 0.5, 2 and 8 ms, no IKP_ANCHOR,
// downloaded right after the launch, the README way: the download's SM
// clock samples cannot run beside it, so the lanes are placed by their
// anchors and the ticks its ends carry. In the default build and with
// automatic anchors (IKP_ANCHOR_EVERY=65536, taken while the other warps
// crowd the issue slots) each of 20 moments, stamped on every SM, decodes
// within 100 ns of the others, whatever the lane's length and whatever it
// records (regions, instants alone, or regions, nested regions and
// instants mixed), and the capture's stated placement (cross_sm_ns) bounds
// that spread and is at most 3x it plus one 32 ns tick. Each truth is a
// tick located to its pairs' width (the lane takes one within 24 cycles,
// up to 64 ticks on): the bound is checked against the spread the moments
// surely have, each truth off by half its width, the 3x against the most
// they can have.
static const char *const shape_name[] = {"regions ", "instants", "mixed   "};
static void fill_sm(int kind, int sms, unsigned long long lane_ns, const cudaDeviceProp &p, int shape)
{
    const int moments = 20;
    const long long region_cycles = (long long)((double)lane_ns / moments / 64 * 1.2);
    const uint32_t capacity = (uint32_t)moments * (64 * 3 + 2) + (uint32_t)(lane_ns / 4000) + 64; // and auto anchors
    const size_t smem = p.sharedMemPerBlockOptin - 16; // what the kernel's own static shared memory leaves
    unsigned long long *start, *dtruth;
    CK(cudaMalloc(&start, 8));
    CK(cudaMemset(start, 0, 8));
    CK(cudaMalloc(&dtruth, (size_t)sms * moments * 3 * 8));
    ikp_cuda_buffer b;
    CHECK_EQ(ikp_cuda_buffer_create(&b, sms, capacity, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&b, 0, NULL), IKP_OK);
    std::vector<uint64_t> w(b.num_words);
    if (kind == CYCLES) {
        CK(cudaFuncSetAttribute(ikp_cy::fill_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        ikp_cy::fill_sm<<<sms, 1024, smem>>>(start, lane_ns, moments, region_cycles, dtruth, b.device, shape);
    } else au_fill_sm(start, sms, smem, lane_ns, moments, region_cycles, dtruth, b.device, shape);
    CK(cudaGetLastError());
    CHECK_EQ(ikp_cuda_buffer_download(&b, 0, w.data(), NULL), IKP_OK);
    std::vector<unsigned long long> truth((size_t)sms * moments * 3);
    CK(cudaMemcpy(truth.data(), dtruth, truth.size() * 8, cudaMemcpyDeviceToHost));
    uint32_t placed = 0, stated = 0;
    long long lo = 0, hi = 0;
    unsigned long long width = 0, anchors = 0;
    long long sure = 0, most = 0;
    const long long worst = moment_spread(w, b.sm_clock, b.num_sm_clock, sms, moments, capacity, truth, &placed, &lo, &hi,
                                          &width, &stated, &anchors, &sure, &most);
    // the automatic anchors' widths (cycles between the reads around their ticks), from the records (FORMAT.md)
    std::vector<unsigned> widths;
    const uint32_t anchor_bits = IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR;
    for (uint32_t l = 0; l < (uint32_t)sms; l++) {
        const uint64_t *slots = w.data() + IKP_WIRE_HEADER_WORDS +
                                (size_t)l * (IKP_WIRE_LANE_WORDS + capacity + IKP_WIRE_SINK_SLOTS) + IKP_WIRE_LANE_WORDS;
        for (uint32_t k = 0; k < capacity; k++) {
            const uint32_t tag = (uint32_t)slots[k], id = tag >> IKP_WIRE_EVENT_SHIFT & IKP_WIRE_EVENT_MASK;
            if ((tag & (anchor_bits | IKP_WIRE_KIND_MASK)) == anchor_bits && id >= IKP_WIRE_AUTO_ANCHOR_ID)
                widths.push_back(id - IKP_WIRE_AUTO_ANCHOR_ID);
        }
    }
    std::sort(widths.begin(), widths.end());
    const unsigned w50 = widths.empty() ? 0 : widths[widths.size() / 2],
                   w99 = widths.empty() ? 0 : widths[widths.size() * 99 / 100], wmax = widths.empty() ? 0 : widths.back();
    if (getenv("IKP_TRUTH_OUT")) { // the words, for a look at what the placement rests on
        char path[512];
        snprintf(path, sizeof path, "%s/fill_%d_%d_%llu.bin", getenv("IKP_TRUTH_OUT"), kind, shape, lane_ns / 1000);
        FILE *f = fopen(path, "wb");
        if (f) {
            const uint64_t n[4] = {w.size(), b.num_sm_clock, truth.size(), (uint64_t)moments};
            fwrite(n, 8, 4, f);
            fwrite(w.data(), 8, w.size(), f);
            fwrite(truth.data(), 8, truth.size(), f);
            if (b.num_sm_clock) fwrite(b.sm_clock, sizeof *b.sm_clock, b.num_sm_clock, f); /* what the decode took */
            fclose(f);
        }
    }
    CHECK_EQ(placed, 0u); // nothing ran beside the kernel: no lane placed through SM clock samples
    // the truth located to half its width either way on each SM: the spread it surely has bounded by what
    // is stated, and what is stated at most 3x the most it can have + one tick
    CHECK(sure <= (long long)stated * 1000); // the stated placement is a bound
    if (kind == CYCLES || kind == CYCLES_AUTO) { // the default build (its ticks), and with automatic anchors
        CHECK(sure <= 100000);
        CHECK((long long)stated * 1000 <= 3 * std::max(most, 1ll) + 32000); // close to it: 3x + one tick
    }
    if (kind == CYCLES_AUTO) {
        CHECK(anchors >= (unsigned long long)sms * (lane_ns / 100000)); // one at least every 100 us of a lane
    }
    printf("  %s fill every SM (%d x 1024 threads, %zu B shared), %s, lanes of %5.2f ms%s: worst spread of a moment "
           "%.1f ns (%.1f .. %.1f with the truth's widths), stated %u ns (%.1fx; stamp - truth %.1f .. %.1f ns); %llu "
           "anchor records in all (widths p50 %u, p99 %u, max %u cycles), %u SM clock samples; truth's ticks located "
           "within %llu cycles\n",
           kind_name[kind], sms, smem, shape_name[shape], lane_ns / 1e6, kind == CYCLES_AUTO ? ", IKP_ANCHOR_EVERY=65536" : "",
           worst / 1000.0, sure / 1000.0, most / 1000.0, stated, stated * 1000.0 / std::max(worst, 1ll), lo / 1000.0,
           hi / 1000.0, anchors, w50,
           w99, wmax, b.num_sm_clock, width);
    ikp_cuda_buffer_destroy(&b);
    CK(cudaFree(start));
    CK(cudaFree(dtruth));
}

/* Region lengths, the truth test: 2 lanes a block on 2 blocks an SM
   (264 blocks on an H200), 12 regions a lane of K = 0 .. 250,000 spin
   cycles, 100,000 cycles apart, each bracketed by the leader's own
   clock64 reads just outside and just inside IKP_BEGIN .. IKP_END, and by
   the %globaltimer ticks located just before and after it; lanes of over
   1 ms; group 1 starts 50,000 cycles after group 0 (IKP_TRUTH_STAGGER
   says otherwise, 0: in step; the build without ticks: in step). A
   region's decoded length, in cycles at the SM clock's rate there, less
   its inner bracket is the recorder's fixed cost: every region's within
   8 cycles + 1e-4 K of its brackets (at least 0, at most its outer
   bracket), and of the median where nothing held its stamps up (neither
   end's share of the outer bracket past its median + 8). The rate there:
   the SM clocks of an H200 run at rates up to 1e-3 apart, one rate for
   the SMs of one clock (a GPC), and that rate moves by a few 1e-4 over
   tens of microseconds. So it is the cycles over the ns between the
   ticks around the region, pooled over every lane of its clock and group
   (the lanes whose mean rates agree within 1e-5: 8 and more); the
   tolerance adds three standard errors of that pooled rate (a few
   cycles). A build with no reading between a lane's anchors (no ticks,
   downloaded without the SM clock samples) knows only the mean rate: its
   lengths are checked at the lane's mean rate. Downloaded three ways:
   right after the launch, so that the download samples the SM clocks
   while the kernel runs (decoded with those samples and without); after
   a synchronize; after copying the results first. */
static void truth_lengths(int kind, int sms)
{
    static const long long ks[] = {0, 100, 1000, 2000, 5000, 33333, 250000, 5000, 250000, 1000, 250000, 250000};
    const int nk = (int)(sizeof ks / sizeof ks[0]), blocks = 2 * sms, lanes = 2 * blocks, tw = 10;
    // (a build without ticks in step: its lanes of one SM then share their anchors' moments, so that the lane's
    // mean rate, against which it is checked where it has no reading between them, is its SM mapping's)
    const long long gap = 100000,
                    stagger = kind == CYCLES_NOTICKS ? 0
                              : getenv("IKP_TRUTH_STAGGER") ? atoll(getenv("IKP_TRUTH_STAGGER"))
                                                            : gap / 2;
    long long *dks, *dout;
    CK(cudaMalloc(&dks, sizeof ks));
    CK(cudaMemcpy(dks, ks, sizeof ks, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&dout, (size_t)lanes * nk * tw * 8));
    ikp_cuda_buffer b;
    CHECK_EQ(ikp_cuda_buffer_create(&b, (uint32_t)lanes, 64, NULL), IKP_OK);
    for (int way = 0; way < 3; way++) {
        std::vector<uint64_t> w(b.num_words);
        std::vector<long long> out((size_t)lanes * nk * tw);
        CHECK_EQ(ikp_cuda_buffer_reset(&b, 0, NULL), IKP_OK);
        if (kind == CYCLES) ikp_cy::truth_regions<<<blocks, 64>>>(dks, nk, gap, stagger, dout, b.device);
        else if (kind == CYCLES_STAGED) st_truth_regions(blocks, dks, nk, gap, stagger, dout, b.device);
        else if (kind == CYCLES_AUTO) au_truth_regions(blocks, dks, nk, gap, stagger, dout, b.device);
        else nt_truth_regions(blocks, dks, nk, gap, stagger, dout, b.device);
        CK(cudaGetLastError());
        if (way == 1) CK(cudaDeviceSynchronize());
        if (way == 2) CK(cudaMemcpy(out.data(), dout, out.size() * 8, cudaMemcpyDeviceToHost));
        CHECK_EQ(ikp_cuda_buffer_download(&b, 0, w.data(), NULL), IKP_OK);
        if (way != 2) CK(cudaMemcpy(out.data(), dout, out.size() * 8, cudaMemcpyDeviceToHost));
        for (int with = way == 0 ? 1 : 0; with >= 0; with--) {
            ikp_decode_options o;
            ikp_capture *cap = NULL;
            ikp_error e;
            memset(&o, 0, sizeof o);
            if (with) {
                o.sm_clock = b.sm_clock;
                o.num_sm_clock = b.num_sm_clock;
            }
            if (ikp_capture_open(w.data(), w.size(), &o, &cap, &e) != IKP_OK) {
                fprintf(stderr, "decode: %s\n", e.message);
                CHECK(0);
                continue;
            }
            // per region: x, decoded less the ticks' ns (at the lane's mean rate; the ticks' own +-20 ns);
            // xm, decoded less the inner bracket at the lane's mean rate; xl, the same at the rate there
            // (terr: three standard errors of it, in cycles); gapo, the outer bracket less the inner; gapb,
            // gape: its begin's and its end's share of that
            std::vector<double> x, xm, xl, terr, gapo, gapb, gape, kk, rate(lanes);
            const int local = !(kind == CYCLES_NOTICKS && !with);
            std::vector<int> sm_seen(65536, 0);
            double ms = 0, terr_max = 0;
            int n_sms = 0, pool_min = 1 << 30;
            for (uint32_t l = 0; l < (uint32_t)lanes; l++) rate[l] = lane_info(cap, l).cycles_per_ns;
            for (uint32_t l = 0; l < (uint32_t)lanes; l++) {
                const ikp_lane_info li = lane_info(cap, l);
                const double r = rate[l];
                const std::vector<ikp_event> ev = events(cap, l, 1);
                CHECK_EQ(ev.size(), (size_t)nk);
                if (li.sm < 65536 && !sm_seen[li.sm]++) n_sms++;
                ms = std::max(ms, (li.last_ps - li.first_ps) / 1e9);
                for (size_t i = 0; i < ev.size() && i < (size_t)nk; i++) {
                    const long long *t = &out[((size_t)l * nk + i) * tw];
                    const double inner = (double)(t[2] - t[1]);
                    const double inner_ns = (double)(t[7] - t[4]) - (double)(t[8] - t[2]) / r - (double)(t[1] - t[5]) / r;
                    const double dec_ns = (ev[i].end_ps - ev[i].start_ps) / 1000.0;
                    double c = 0, g = 0, q1 = 0, q2 = 0;
                    int n = 0;
                    for (uint32_t m = l % 2; m < (uint32_t)lanes; m += 2) // this clock's lanes of its group, here
                        if (std::fabs(rate[m] - r) <= 1e-5 * r) {
                            const long long *u = &out[((size_t)m * nk + i) * tw];
                            const double q = (double)(u[8] - u[5]) / (double)(u[7] - u[4]);
                            c += (double)(u[8] - u[5]);
                            g += (double)(u[7] - u[4]);
                            q1 += q;
                            q2 += q * q;
                            n++;
                        }
                    const double here = c / g, se = n > 1 ? std::sqrt(std::max(0.0, (q2 - q1 * q1 / n) / (n - 1)) / n) : here;
                    x.push_back((dec_ns - inner_ns) * r);
                    xm.push_back(dec_ns * r - inner);
                    xl.push_back(dec_ns * here - inner);
                    terr.push_back(local ? 3 * se / here * inner : 0);
                    gapo.push_back((double)(t[3] - t[0]) - inner);
                    gapb.push_back((double)(t[1] - t[0]));
                    gape.push_back((double)(t[3] - t[2]));
                    kk.push_back((double)ks[i]);
                    pool_min = std::min(pool_min, n);
                    terr_max = std::max(terr_max, terr.back());
                }
            }
            const std::vector<double> &xc = local ? xl : xm; // the lengths checked
            std::vector<double> sorted = x, sc = xc, sb = gapb, se = gape;
            std::sort(sorted.begin(), sorted.end());
            std::sort(sc.begin(), sc.end());
            std::sort(sb.begin(), sb.end());
            std::sort(se.begin(), se.end());
            const double medc = sc.empty() ? 0 : sc[sc.size() / 2], medb = sb.empty() ? 0 : sb[sb.size() / 2],
                         mede = se.empty() ? 0 : se[se.size() / 2];
            double mn = 1e300, mx = -1e300, cmn = 1e300, cmx = -1e300, mmn = 1e300, mmx = -1e300, out_br = -1e300,
                   quiet_over = -1e300;
            size_t quiet = 0;
            for (size_t i = 0; i < x.size(); i++) {
                const double tl = 8 + 1e-4 * kk[i] + terr[i];
                out_br = std::max(out_br, std::max(-xc[i] - tl, xc[i] - gapo[i] - tl)); // within the brackets
                if (gapb[i] <= medb + 8 && gape[i] <= mede + 8) { // stamps nothing held up, at either end (a
                    // lane's first begin, its code not yet in the cache, can take longer inside than outside):
                    // the recorder's fixed cost
                    quiet_over = std::max(quiet_over, std::fabs(xc[i] - medc) - tl);
                    quiet++;
                }
                cmn = std::min(cmn, xc[i]);
                cmx = std::max(cmx, xc[i]);
                mmn = std::min(mmn, xm[i]);
                mmx = std::max(mmx, xm[i]);
                mn = std::min(mn, x[i]);
                mx = std::max(mx, x[i]);
            }
            CHECK(n_sms >= 100 && ms >= 1.0); // every SM, lanes of 1 ms and more
            CHECK(!local || pool_min >= 8);   // the rate there pooled over the lanes of one clock and group
            CHECK(out_br <= 0);
            CHECK(quiet >= x.size() / 2 && quiet_over <= 0);
            const ikp_capture_info *in = ikp_capture_get_info(cap);
            printf("  %s truth lengths, %s%s: %d lanes on %d SMs, %.2f ms; decoded - inner bracket at %s %.1f .. %.1f "
                   "cycles (median %.1f; %zu quiet regions within %+.1f of 8 + 1e-4 K of it; past the brackets by "
                   "%+.1f; the rate's own error %.1f cycles at most, pooled over %d lanes and more); at the lane's mean "
                   "rate %.1f .. %.1f; against the globaltimer's ticks around each (+-20 ns themselves) %.1f .. %.1f "
                   "cycles; stated %u ns; %u readings left out, %u speed changes\n",
                   kind_name[kind], way == 0 ? "downloaded at once" : way == 1 ? "after a synchronize" : "results first",
                   way == 0 ? (with ? ", with its SM clock samples" : ", without them") : "", lanes, n_sms, ms,
                   local ? "the rate there" : "the lane's mean rate (no reading between its anchors)", cmn, cmx, medc,
                   quiet, quiet_over, out_br, terr_max, pool_min, mmn, mmx, mn, mx, in->cross_sm_ns,
                   in->readings_left_out, in->speed_changes);
            fflush(stdout);
            if ((out_br > 0 || quiet_over > 0 || getenv("IKP_TRUTH_ALL")) && getenv("IKP_TRUTH_OUT")) {
                // for a look at what failed (IKP_TRUTH_ALL: at every case)
                char path[512];
                snprintf(path, sizeof path, "%s/truth_%d_%d_%d.bin", getenv("IKP_TRUTH_OUT"), kind, way, with);
                FILE *f = fopen(path, "wb");
                if (f) {
                    const uint64_t n[4] = {w.size(), with ? b.num_sm_clock : 0, out.size(), (uint64_t)nk};
                    fwrite(n, 8, 4, f);
                    fwrite(w.data(), 8, w.size(), f);
                    if (with) fwrite(b.sm_clock, sizeof *b.sm_clock, b.num_sm_clock, f);
                    fwrite(out.data(), 8, out.size(), f);
                    fclose(f);
                }
            }
            ikp_capture_free(cap);
        }
    }
    ikp_cuda_buffer_destroy(&b);
    CK(cudaFree(dks));
    CK(cudaFree(dout));
}

static void long_run(int sms)
{
    (void)sms;
    const int n = 45;
    const long long busy = 100000000, idle = 100000000; // ~50 ms each at 1.98 GHz: ~4.5 s in all
    long long *t1, *t2;
    CK(cudaMalloc(&t1, 2 * n * 8));
    CK(cudaMalloc(&t2, 2 * n * 8));
    ikp_cuda_buffer b1, b2;
    CHECK_EQ(ikp_cuda_buffer_create(&b1, 1, 128, NULL), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_create(&b2, 1, 128, NULL), IKP_OK);
    cudaStream_t s1, s2;
    CK(cudaStreamCreate(&s1));
    CK(cudaStreamCreate(&s2));
    ikp_cuda_buffer_reset(&b1, s1, NULL);
    ikp_cuda_buffer_reset(&b2, s2, NULL);
    ikp_cy::long_run<<<1, 32, 0, s1>>>(n, busy, idle, t1, b1.device);
    gt_long_run(n, busy, idle, t2, b2.device, s2);
    CK(cudaGetLastError());
    for (int kind = 0; kind < 2; kind++) {
        std::vector<uint64_t> w;
        ikp_capture *cap = fetch(kind == 0 ? b1 : b2, w);
        std::vector<long long> truth(2 * n);
        CK(cudaMemcpy(truth.data(), kind == 0 ? t1 : t2, truth.size() * 8, cudaMemcpyDeviceToHost));
        CHECK(cap != NULL);
        if (!cap) continue;
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        double rate = kind == 0 ? lane_info(cap, 0).cycles_per_ns : 1.0; // truth units per ns
        CHECK_EQ(in->backwards, 0);
        CHECK(in->span_ps > 4300000000000ll); // longer than a wrap of both 32-bit stamps
        std::vector<ikp_event> r = events(cap, 0, 4);
        CHECK_EQ(r.size(), (size_t)n);
        double worst_d = 0, worst_s = 0;
        int mono = 1;
        for (size_t i = 0; i < r.size() && i < (size_t)n; i++) {
            double dur = (r[i].end_ps - r[i].start_ps) / 1000.0, tdur = truth[2 * i + 1] / rate;
            double st = (r[i].start_ps - r[0].start_ps) / 1000.0, tst = (truth[2 * i] - truth[0]) / rate;
            if (i && r[i].start_ps <= r[i - 1].end_ps) mono = 0;
            worst_d = std::max(worst_d, std::fabs(dur - tdur));
            worst_s = std::max(worst_s, std::fabs(st - tst));
        }
        CHECK(mono);
        // cycles: exact; globaltimer: stamps and truth both read from the stepping timer, so
        // they may differ by two steps (see known_length)
        CHECK(worst_d <= (kind == 0 ? 8.0 / rate : 2 * g_step));
        CHECK(worst_s <= 1000.0);                          // no region displaced by a wrap (4.29 s / 2.17 s)
        printf("  %s %.3f s lane, %d regions: worst duration error %.1f ns, worst start error %.1f ns\n",
               kind == 0 ? "cycles     " : "globaltimer", in->span_ps / 1e12, n, worst_d, worst_s);
        ikp_capture_free(cap);
    }
    ikp_cuda_buffer_destroy(&b1);
    ikp_cuda_buffer_destroy(&b2);
    CK(cudaFree(t1));
    CK(cudaFree(t2));
}

int main(int argc, char **argv)
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
    const int lengths_only = argc > 1 && !strcmp(argv[1], "lengths");
    for (int shape : {ikp_cy::LANE_REGIONS, ikp_cy::LANE_INSTANTS, ikp_cy::LANE_MIXED})
        for (unsigned long long ns : {500000ull, 2000000ull, 8000000ull}) {
            if (lengths_only) break;
            fill_sm(CYCLES, p.multiProcessorCount, ns, p, shape);
            fill_sm(CYCLES_AUTO, p.multiProcessorCount, ns, p, shape);
        }
    if (argc > 1 && !strcmp(argv[1], "fill")) return check_report(); // these checks alone
    truth_lengths(CYCLES, p.multiProcessorCount);
    truth_lengths(CYCLES_NOTICKS, p.multiProcessorCount);
    truth_lengths(CYCLES_STAGED, p.multiProcessorCount);
    truth_lengths(CYCLES_AUTO, p.multiProcessorCount);
    if (argc > 1 && (!strcmp(argv[1], "truth") || lengths_only)) return check_report(); // these (and fill's) alone
    timer_steps();
    known_length(CYCLES);
    known_length(GLOBALTIMER);
    known_length(CYCLES_STAGED);
    known_length(CYCLES_NOW);
    same_moment(CYCLES, p.multiProcessorCount, 0);
    same_moment(CYCLES, p.multiProcessorCount, 1);
    same_moment(GLOBALTIMER, p.multiProcessorCount, 0);
    same_moment(CYCLES_STAGED, p.multiProcessorCount, 0);
    same_moment(CYCLES_STAGED, p.multiProcessorCount, 1);
    anchored_moment(CYCLES, p.multiProcessorCount);
    anchored_moment(CYCLES_STAGED, p.multiProcessorCount);
    for (unsigned long long ns : {10000ull, 1000000ull, 100000000ull}) {
        cross_sm(CYCLES, p.multiProcessorCount, ns);
        cross_sm(CYCLES_STAGED, p.multiProcessorCount, ns);
        cross_sm(CYCLES_AUTO, p.multiProcessorCount, ns);
    }
    cross_sm(CYCLES, p.multiProcessorCount, 1000000, true);
    cross_sm(CYCLES_STAGED, p.multiProcessorCount, 1000000, true);
    long_run(p.multiProcessorCount);
    return check_report();
}
