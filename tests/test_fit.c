/* The SM clock's mapping against a known truth: synthetic lanes whose SM
   clocks run at known rates (steady, or changing speed once), read by the
   readings a device gives (start and end anchors at a globaltimer tick,
   tick counts on begins, SM clock samples with +-16 ns of noise a few us
   apart), decoded, and every record checked against the truth:
   - a region's length within 8 cycles + 1e-4 of its cycles (0.5 ms and
     more from a change of speed: the mapping bends to follow one within
     that, as it follows the SM clock's own wander);
   - every record within the placement its lane states (and, where the
     readings are honest and the clock steady, the statement at most 3x
     the misfit + 64 ns, two steps of the globaltimer; placed by tick
     counts, 3x + 32 ns, one step);
   - readings that contradict the others are counted.
   The truth is written with tests/encoder.h, from FORMAT.md. */
#define IKP_IMPLEMENTATION
#include "../ikp.h"
#include "check.h"
#include "encoder.h"
#include <math.h>
#include <stdlib.h>

#define G0 1795000000000000000ull /* the globaltimer at t = 0 (ns since 1970, a multiple of 32) */

typedef struct scen {
    const char *name;
    uint32_t sms, lanes;   /* SMs, lanes on each */
    double span_ns;        /* each lane's length */
    double step_ns, r1, r2;/* the clock runs at r1 cycles/ns until step_ns, then r2 */
    int ticks;             /* begins carry tick counts */
    double late_ns;        /* tick reads wait after their stamp by up to this (else 0 .. 2 ns) */
    double shift_ns;       /* tick counts read this much before the truth (a reading that lies) */
    double sample_ns;      /* SM clock samples this far apart (0: none), each +-16 ns off */
    int instants;          /* instants every 20 us instead of regions */
    int tight;             /* the stated placement at most 3x the misfit + 64 ns (2: + 32 ns) */
    uint32_t clocks;       /* SM i on clock i % clocks, each at its own rate (1e-4 apart) and wandering
                              around it by wander cycles with its own phase (0: one steady clock) */
    double wander, gap_ns; /* ... and gap_ns between regions, SM i starting i / sms of a gap late */
    int placement_only;    /* its records' placement checked alone, and said only where it fails */
    double auto_cyc;       /* IKP_ANCHOR_EVERY: an automatic anchor after the first end or instant this
                              many cycles after the last (0: none), its tick located to within 56 cycles */
} scen;

static uint64_t rng = 88172645463325252ull;
static double urand(void) /* [0, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* the SM clock (cycles since its offset) at t ns, and back; clock q of s->clocks (a GPC's): its rate
   (q + 1) 1e-4 above r1 and, over 600 us, wander cycles either way of it (its rate then at most
   4.2e-4 off at 80 cycles: an H200's SM clocks move by 3-5e-4 over tens of us) */
#define WANDER_NS 600000.0
static double wander_at(const scen *s, uint32_t q, double t)
{
    const double pi2 = 6.283185307179586, x = pi2 * (t / WANDER_NS + q / 3.0), y = x - pi2 * floor(x / pi2) - pi2 / 2;
    double r = 0, term = y;
    int k;
    if (!s->clocks) return 0;
    for (k = 1; k < 30; k++) { /* sin y, |y| <= pi: its Taylor series (no libm; the fold shifts the phase) */
        r += term;
        term *= -y * y / ((2.0 * k) * (2.0 * k + 1));
    }
    return s->wander * r;
}
static double cyc_on(const scen *s, uint32_t q, double t)
{
    const double r1 = s->r1 * (1 + (s->clocks ? (q + 1) * 1e-4 : 0));
    return (t < s->step_ns ? r1 * t : r1 * s->step_ns + s->r2 * (t - s->step_ns)) + wander_at(s, q, t);
}
static double t_on(const scen *s, uint32_t q, double c)
{
    double t = c / s->r1;
    int k;
    for (k = 0; k < 60; k++) { /* Newton: the clock runs forward at least at 0.99 of its rate */
        const double f = cyc_on(s, q, t) - c, d = (cyc_on(s, q, t + 1) - cyc_on(s, q, t - 1)) / 2;
        t -= f / d;
        if (f < 1e-7 && f > -1e-7) break;
    }
    return t;
}

/* the region lengths the lanes cycle through (cycles) */
static const double region_k[] = {0, 100, 1000, 5000, 33333, 250000, 2000, 500};
#define NK (sizeof region_k / sizeof region_k[0])

typedef struct truth {
    double cb, ce;         /* a region's begin and end, cycles since the SM's offset (ce: instant: -1) */
} truth;

static void run(const scen *s)
{
    const uint32_t nl = s->sms * s->lanes, cap = 4096;
    enc_lane *L = (enc_lane *)calloc(nl, sizeof *L);
    enc_rec *rec = (enc_rec *)calloc((size_t)nl * cap, sizeof *rec);
    truth *tr = (truth *)calloc((size_t)nl * cap, sizeof *tr);
    size_t *nt = (size_t *)calloc(nl, sizeof *nt);
    uint64_t *w = (uint64_t *)calloc((size_t)enc_ikp_words(nl, cap), 8);
    ikp_sm_clock *smp = (ikp_sm_clock *)calloc(s->sms * 4096, sizeof *smp);
    uint32_t nsmp = 0, i, sm;
    double off[64];
    ikp_decode_options o;
    ikp_capture *cap_ = NULL;
    ikp_error e;
    double misfit = 0, stated = 0, worst_len = -1e300;
    uint64_t lens = 0;
    int placed_ok = 1;
    if (!L || !rec || !tr || !nt || !w || !smp || s->sms > 64) { CHECK(0); goto out; }
    for (sm = 0; sm < s->sms; sm++) off[sm] = 1.0e9 * (sm + 1) + 12345.0 * sm; /* each SM's clock offset */
    for (i = 0; i < nl; i++) {
        enc_lane *l = &L[i];
        enc_rec *r = rec + (size_t)i * cap;
        truth *t = tr + (size_t)i * cap;
        const uint32_t smi = i / s->lanes, q = s->clocks ? smi % s->clocks : 0;
        const double o_ = off[smi];
        double t0 = 32.0 * (40 + 37 * (i % s->lanes)) + s->gap_ns * smi / s->sms, t1 = t0 + s->span_ns, c,
               next_i = t0 + 20000;
        size_t n = 0, m = 0;
        uint32_t prevq = 0;
        int have_q = 0, k = 0;
        double due = cyc_on(s, q, t0) + s->auto_cyc;
        t1 = 32.0 * floor(t1 / 32.0);
        l->block = i;
        l->sm = 2 * smi + 1;
        l->started = l->finalized = 1;
        l->cycles = 1;
        l->ticks = s->ticks && s->instants ? 2 : s->ticks; /* instants carry ticks themselves */
        l->g0 = G0 + (uint64_t)t0;
        l->c0 = (uint64_t)(o_ + cyc_on(s, q, t0));
        l->g1 = G0 + (uint64_t)t1;
        l->c1 = (uint64_t)(o_ + cyc_on(s, q, t1));
        c = cyc_on(s, q, t0) + 300;
        while (n + 3 < cap) {
            double ce, te, tq;
            if (s->instants) {
                c = cyc_on(s, q, next_i);
                if (t_on(s, q, c) > t1 - 2000) break;
                r[n].kind = ENC_I; r[n].id = 3; r[n].t = (uint64_t)(o_ + c); r[n].data = have_q ? prevq : 0; n++;
                t[m].cb = floor(c); t[m].ce = -1; m++;
                next_i += 20000 + urand() * 200; /* at phases of the 32 ns step that differ */
                ce = c;
            } else {
                const double kc = region_k[k++ % NK];
                ce = c + kc;
                if (t_on(s, q, ce) > t1 - 2000) break;
                r[n].kind = ENC_B; r[n].id = 1; r[n].t = (uint64_t)(o_ + c); r[n].data = prevq;
                if (!have_q) r[n].data = 0;
                n++;
                r[n].kind = ENC_E; r[n].id = 1; r[n].t = (uint64_t)(o_ + ce); n++;
                t[m].cb = floor(o_ + c) - o_; t[m].ce = floor(o_ + ce) - o_; m++;
                c = ce + 200 + s->gap_ns * s->r1;
            }
            /* the globaltimer read right after this end's (or instant's) stamp */
            te = t_on(s, q, floor(o_ + ce) - o_);
            tq = te + (s->late_ns > 0 ? urand() * s->late_ns : urand() * 2.0) - s->shift_ns;
            prevq = (uint32_t)((G0 + (uint64_t)tq) >> 5);
            have_q = 1;
            if (s->auto_cyc > 0 && ce >= due) { /* IKP_ANCHOR_EVERY: the next tick, between two reads 56 cycles apart */
                const double tk = 32.0 * ceil((te + 4.0) / 32.0), w = 56;
                const double cm = cyc_on(s, q, tk) + (urand() - 0.5) * w; /* the reads' midpoint */
                const double d = floor(o_ + cm) - floor(o_ + ce);
                if (d >= 0 && d <= 16383) {
                    r[n].kind = ENC_AA; r[n].id = (uint32_t)w; r[n].t = (uint64_t)d;
                    r[n].data = (uint32_t)(G0 + (uint64_t)tk); n++;
                    due = ce + d + s->auto_cyc;
                    c += d + 100; /* the anchor's reads (instants: the next is set by the time) */
                }
            }
        }
        l->recs = r;
        l->n = n;
        nt[i] = m;
    }
    if (s->sample_ns > 0)
        for (sm = 0; sm < s->sms; sm++) {
            double ts;
            for (ts = 2000 + 64.0 * sm; ts < s->span_ns && nsmp < s->sms * 4096; ts += s->sample_ns) {
                const double g = 32.0 * floor(ts / 32.0), noise = (urand() * 2 - 1) * 16.0;
                smp[nsmp].gpu_ns = G0 + (uint64_t)g;
                smp[nsmp].cycles = (uint64_t)(off[sm] + cyc_on(s, s->clocks ? sm % s->clocks : 0, g + noise));
                smp[nsmp].sm = 2 * sm + 1;
                nsmp++;
            }
        }
    enc_ikp(w, nl, cap, 1, nl, 1, 1, L, nl);
    memset(&o, 0, sizeof o);
    o.sm_clock = nsmp ? smp : NULL;
    o.num_sm_clock = nsmp;
    if (ikp_capture_open(w, (size_t)enc_ikp_words(nl, cap), &o, &cap_, &e) != IKP_OK) {
        fprintf(stderr, "  %s: %s\n", s->name, e.message);
        CHECK(0);
        goto out;
    }
    for (i = 0; i < nl; i++) {
        const ikp_capture_info *in = ikp_capture_get_info(cap_);
        const uint32_t smi = i / s->lanes, q = s->clocks ? smi % s->clocks : 0;
        const double o_ = off[smi];
        const ikp_lane_info li = lane_info(cap_, i);
        ikp_lane_events ev;
        size_t k, m = 0;
        memset(&ev, 0, sizeof ev);
        CHECK_EQ(ikp_decode_lane(cap_, i, &ev, NULL), IKP_OK);
        CHECK_EQ(li.invalid, 0);
        if (li.placement_ns > stated) stated = li.placement_ns;
        for (k = 0; k < ev.count && m < nt[i]; k++, m++) {
            const ikp_event *x = &ev.events[k];
            const truth *t = &tr[(size_t)i * cap + m];
            /* the record's time on the truth's axis (ns since G0) */
            const double at = (double)(in->gpu_zero_ns - G0) + ((double)in->gpu_zero_ps + (double)x->start_ps) / 1000.0;
            const double tb = t_on(s, q, t->cb), err = fabs(at - tb);
            (void)o_;
            if (err > misfit) misfit = err;
            if (err > li.placement_ns + 1.0) {
                if (placed_ok) fprintf(stderr, "  %s: lane %u record %zu at %.1f ns off by %.1f ns, stated %u\n",
                                       s->name, i, k, tb, at - tb, li.placement_ns);
                placed_ok = 0;
            }
            if (t->ce >= 0) {
                const double te = t_on(s, q, t->ce), kc = t->ce - t->cb;
                const double got = (double)(x->end_ps - x->start_ps) / 1000.0;
                const double erre = fabs(at + got - te);
                if (erre > misfit) misfit = erre;
                if (erre > li.placement_ns + 1.0) {
                    if (placed_ok) fprintf(stderr, "  %s: lane %u end %zu at %.1f ns off by %.1f ns, stated %u\n",
                                           s->name, i, k, te, at + got - te, li.placement_ns);
                    placed_ok = 0;
                }
                /* its length in cycles, at the rate there, 0.5 ms and more from the change of speed (the
                   mapping follows a change within that: the SM clock's wander is of the same kind) */
                if (s->step_ns > s->span_ns || tb > s->step_ns + 500000 || te < s->step_ns - 500000) {
                    /* the rate there: its cycles over its ns */
                    const double rate = kc > 0 ? kc / (te - tb) : te < s->step_ns ? s->r1 : s->r2,
                                 dc = fabs(got * rate - kc),
                                 over = dc - (8 + 1e-4 * kc);
                    if (over > worst_len) worst_len = over;
                    lens++;
                }
            }
        }
        CHECK_EQ(m, nt[i]);
        ikp_lane_events_free(cap_, &ev);
    }
    CHECK(placed_ok); /* every record within its lane's stated placement */
    if (s->placement_only) goto out;
    if (s->late_ns == 0 && s->shift_ns == 0) /* every length within 8 cycles + 1e-4 of it (instants: none) */
        CHECK((lens > 0 || s->instants) && worst_len <= 0);
    if (s->tight) CHECK(stated <= 3 * misfit + (s->tight == 2 ? 32 : 64));
    if (s->shift_ns > 0 || s->late_ns > 0) /* readings that lie are seen */
        CHECK(ikp_capture_get_info(cap_)->readings_left_out + ikp_capture_get_info(cap_)->speed_changes > 0 ||
              stated >= misfit);
    printf("  %-34s records within %7.1f ns, stated %6.0f ns; lengths %s (%llu, the worst %+.1f cycles past it); "
           "%u left out, %u speed changes\n",
           s->name, misfit, stated, worst_len <= 0 ? "within 8 + 1e-4 K" : "OFF", (unsigned long long)lens,
           lens ? worst_len : 0.0, ikp_capture_get_info(cap_)->readings_left_out,
           ikp_capture_get_info(cap_)->speed_changes);
out:
    ikp_capture_free(cap_);
    free(L);
    free(rec);
    free(tr);
    free(nt);
    free(w);
    free(smp);
}

int main(void)
{
    static const scen sc[] = {
        /* steady clocks: lengths exact whatever the readings */
        {"anchors only, 1 ms", 4, 4, 1e6, 1e18, 1.98, 1.98, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"ticks, 1 ms", 4, 4, 1e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0},
        {"samples every 3 us +-16 ns, 1 ms", 4, 2, 1e6, 1e18, 1.98, 1.98, 0, 0, 0, 3000, 0, 1, 0, 0, 0, 0, 0},
        {"ticks and samples every 2 us, 2 ms", 4, 2, 2e6, 1e18, 1.98, 1.98, 1, 0, 0, 2000, 0, 1, 0, 0, 0, 0, 0},
        {"instants with ticks, 2 ms", 4, 2, 2e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0},
        {"instants with ticks, 8 ms", 2, 2, 8e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0},
        /* a clock that changes speed: followed, and the statement covers it */
        {"ticks, step 0.2%", 2, 2, 2e6, 9e5, 1.98, 1.98 * 0.998, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"ticks, step 1%", 2, 2, 2e6, 9e5, 1.98, 1.98 * 0.99, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"ticks, step 4%", 2, 2, 2e6, 9e5, 1.98, 1.98 * 0.96, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"ticks, throttle 1.98 -> 1.755", 2, 2, 2e6, 9e5, 1.98, 1.755, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"ticks, step +50%", 2, 2, 2e6, 9e5, 1.32, 1.98, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"ticks, step -50%", 2, 2, 2e6, 9e5, 1.98, 0.99, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"samples 3 us, throttle 1.98 -> 1.755", 2, 2, 2e6, 9e5, 1.98, 1.755, 0, 0, 0, 3000, 0, 0, 0, 0, 0, 0, 0},
        {"instants with ticks, throttle", 2, 2, 2e6, 9e5, 1.98, 1.755, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
        /* ... where the lane's mean rate is far from the rate after: late in a lane, the clock halved
           (its readings then run at twice the mean's ns a cycle); in a lane of 25 us, a step that its
           few readings show only to 1.5% */
        {"ticks, step -50% at 1.6 of 2 ms", 2, 2, 2e6, 1.6e6, 1.98, 0.99, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"ticks, samples, -44% at 1.1 of 1.5 ms", 4, 2, 1.5e6, 1.1e6, 2.2, 1.24, 1, 0, 0, 10000, 1, 0, 0, 0, 0, 0, 0},
        {"samples 8.7 us, 25 us, -42% at 7 us", 3, 1, 25000, 7000, 2.04, 1.18, 1, 0, 0, 8700, 1, 0, 0, 0, 0, 0, 0},
        /* ... and where a long stretch's band (2e-4 of its length) takes in the first readings after
           the change */
        {"ticks, samples 2 us, -30% at 1.62 of 1.8 ms", 16, 1, 1.8e6, 1.62e6, 1.81, 1.27, 1, 0, 0, 2000, 0, 0, 0, 0, 0, 0, 0},
        {"ticks, samples 2.5 us, -29% at 1.8 of 2 ms", 12, 2, 2e6, 1.8e6, 1.98, 1.4, 1, 0, 0, 2500, 0, 0, 0, 0, 0, 0, 0},
        /* SMs that share a clock (a GPC's) which wanders, regions 50 us apart: each SM's ticks alone
           are too few to follow it, its clock's are not */
        {"8 SMs of one wandering clock", 8, 2, 1e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 0, 0, 1, 80, 50000, 0, 0},
        {"16 SMs of two wandering clocks", 16, 2, 1e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 0, 0, 2, 80, 50000, 0, 0},
        {"24 SMs of three, 2 ms", 24, 2, 2e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 0, 0, 3, 80, 50000, 0, 0},
        /* IKP_ANCHOR_EVERY=65536 in a kernel that fills every SM (no samples): regions, instants;
           the statement at most 3x the misfit + 32 ns, as with ticks alone */
        {"ticks, automatic anchors, 2 ms", 8, 2, 2e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 65536},
        {"instants, automatic anchors, 8 ms", 4, 2, 8e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 65536},
        {"24 SMs of three, automatic anchors, 2 ms", 24, 2, 2e6, 1e18, 1.98, 1.98, 1, 0, 0, 0, 0, 2, 3, 80, 50000, 0, 65536},
        /* readings that lie */
        {"ticks read late by 0..1000 ns", 2, 2, 2e6, 1e18, 1.98, 1.98, 1, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {"ticks 3 us early (against anchors)", 2, 2, 2e6, 1e18, 1.98, 1.98, 1, 0, 3000, 0, 0, 0, 0, 0, 0, 0, 0},
    };
    size_t i;
    for (i = 0; i < sizeof sc / sizeof sc[0]; i++) run(&sc[i]);
    /* Random shapes of a clock that keeps its speed (1-24 SMs of 1-3 lanes, 20 us to 2.6 ms, 1.0 to
       2.2 cycles/ns, regions back to back or up to 3 us apart, or instants; ticks; SM clock samples
       every 1-5 us or none; up to three clocks that wander as an H200's): every record within its
       lane's stated placement (lengths: the cases above; where every lane of every SM runs in
       step, ticks read at one phase of the 32 ns step, and a few of these read 33,333-cycle
       regions up to 5 cycles past 8 + 1e-4 of it: TESTING.md) */
    for (i = 0; i < 200; i++) {
        static char name[160];
        scen r;
        memset(&r, 0, sizeof r);
        r.sms = 1 + (uint32_t)(urand() * 24);
        r.lanes = 1 + (uint32_t)(urand() * 3);
        r.span_ns = urand() < 0.2 ? 20000 + urand() * 80000 : 1e5 + urand() * 2.5e6;
        r.r1 = r.r2 = 1.0 + urand() * 1.2;
        r.step_ns = 1e18;
        r.ticks = 1;
        r.sample_ns = urand() < 0.5 ? 1000 + urand() * 4000 : 0;
        r.instants = urand() < 0.3;
        if (urand() < 0.5) {
            r.clocks = 1 + (uint32_t)(urand() * 3);
            r.wander = urand() * 80 * r.r1 / 1.98;
            r.gap_ns = urand() * 3000;
        }
        r.placement_only = 1;
        snprintf(name, sizeof name, "random %u: %u SMs x %u, %.0f us at %.3f, samples %.0f ns, instants %d, clocks %u",
                 (unsigned)i, r.sms, r.lanes, r.span_ns / 1000, r.r1, r.sample_ns, r.instants, r.clocks);
        r.name = name;
        run(&r);
    }
    printf("  200 random shapes of a steady or wandering clock run\n");
    return check_report();
}
