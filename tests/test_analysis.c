/* Diff and report (ikp_diff_*, ikp_report_*) on captures made by the test
   encoder, with answers known from how they were made: overlap fractions,
   the bounding group, the tail, waits, a 10% change among unchanged events
   with noise, identical distributions (verdict `same` in at least 95 of
   100 seeded trials), different event sets, bad arguments.
   With IKP_ANALYSIS_OUT=DIR it also saves the captures it makes there, for
   tests/test_report_tool.py. */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include "check.h"
#include "encoder.h"
#include "helpers.h"

#include <stdlib.h>

static void save_as(const char *name, const uint64_t *w, size_t n, const char *const *names, uint32_t nn)
{
    const char *dir = getenv("IKP_ANALYSIS_OUT");
    const char *groups[] = {"producer", "consumer", "epilogue"};
    char path[512];
    if (!dir) return;
    snprintf(path, sizeof path, "%s/%s.ikp", dir, name);
    CHECK_EQ(save_words(path, w, n, IKP_FORMAT_IKP, names, nn, groups, 3), IKP_OK);
}

/* ---- a capture from lanes of (event, begin ns, end ns) regions ---- */
typedef struct span3 { unsigned id; uint64_t b, e; } span3;
typedef struct lanedesc { uint32_t block, group, sm; const span3 *r; size_t n; } lanedesc;

/* each region a begin and an end record, sorted by time (stable: at equal
   times the order given, so an end given before a begin stays first) */
static uint64_t *build(const lanedesc *d, size_t nl, uint32_t nb, uint32_t ng, size_t *nw)
{
    uint32_t cap = 0, lanes = nb * ng;
    size_t i, k;
    enc_lane *L = (enc_lane *)calloc(nl, sizeof *L);
    enc_rec **recs = (enc_rec **)calloc(nl, sizeof *recs);
    uint64_t *w;
    for (i = 0; i < nl; i++) if (2 * d[i].n + 2 > cap) cap = (uint32_t)(2 * d[i].n + 2);
    for (i = 0; i < nl; i++) {
        size_t n = 0, a, b;
        recs[i] = (enc_rec *)calloc(2 * d[i].n + 1, sizeof(enc_rec));
        for (k = 0; k < d[i].n; k++) {
            recs[i][n].kind = ENC_B; recs[i][n].id = d[i].r[k].id; recs[i][n++].t = d[i].r[k].b;
            recs[i][n].kind = ENC_E; recs[i][n].id = d[i].r[k].id; recs[i][n++].t = d[i].r[k].e;
        }
        for (a = 1; a < n; a++) /* insertion sort: stable */
            for (b = a; b > 0 && recs[i][b].t < recs[i][b - 1].t; b--) {
                enc_rec x = recs[i][b - 1];
                recs[i][b - 1] = recs[i][b];
                recs[i][b] = x;
            }
        L[i].block = d[i].block; L[i].group = d[i].group; L[i].sm = d[i].sm;
        L[i].started = L[i].finalized = 1;
        L[i].recs = recs[i]; L[i].n = n;
        L[i].g0 = n ? recs[i][0].t : 0;
        L[i].g1 = n ? recs[i][n - 1].t : 0;
    }
    *nw = (size_t)enc_ikp_words(lanes, cap);
    w = (uint64_t *)malloc(*nw * 8);
    enc_ikp(w, lanes, cap, ng, nb, 1, 1, L, nl);
    for (i = 0; i < nl; i++) free(recs[i]);
    free(recs);
    free(L);
    return w;
}

static ikp_capture *open_names(const uint64_t *w, size_t n, const char *const *names, uint32_t nn)
{
    static const char *const groups[] = {"producer", "consumer", "epilogue"};
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    ikp_error e;
    memset(&o, 0, sizeof o);
    o.event_names = names; o.num_event_names = nn;
    o.group_names = groups; o.num_group_names = 3;
    CHECK_EQ(ikp_capture_open(w, n, &o, &cap, &e), IKP_OK);
    return cap;
}

static const ikp_report_group *rgroup(const ikp_report *r, uint32_t g)
{
    uint32_t i;
    for (i = 0; i < r->num_groups; i++) if (r->groups[i].group == g) return &r->groups[i];
    return NULL;
}

/* one block: producer works [0, 700) ns, consumer [500, 1000): both busy
   200 of 1000 ns, producer alone 500, consumer alone 300 */
static void test_overlap_and_bound(void)
{
    static const char *const names[] = {"load", "mma"};
    static const span3 p[] = {{0, 0, 300}, {0, 300, 700}}, c[] = {{1, 500, 1000}};
    lanedesc d[2] = {{0, 0, 5, p, 2}, {0, 1, 5, c, 1}};
    size_t nw;
    uint64_t *w = build(d, 2, 1, 2, &nw);
    ikp_capture *cap = open_names(w, nw, names, 2);
    ikp_report *r = NULL;
    ikp_error e;
    const ikp_report_group *gp, *gc;
    save_as("overlap", w, nw, names, 2);
    CHECK_EQ(ikp_report_compute(cap, NULL, &r, &e), IKP_OK);
    if (!r) { ikp_capture_free(cap); free(w); return; }
    gp = rgroup(r, 0); gc = rgroup(r, 1);
    CHECK(gp && gc);
    if (gp && gc) {
        CHECK_NEAR(gp->busy_fraction, 0.7, 1e-9);
        CHECK_NEAR(gc->busy_fraction, 0.5, 1e-9);
        CHECK_NEAR(gp->idle_fraction, 0.3, 1e-9);
        CHECK_NEAR(gp->alone_ns, 500, 1e-6);
        CHECK_NEAR(gc->alone_ns, 300, 1e-6);
        CHECK_EQ(gp->blocks_bound, 1);
        CHECK_EQ(gc->blocks_bound, 0);
    }
    CHECK_EQ(r->num_pairs, 1);
    if (r->num_pairs == 1) {
        CHECK_NEAR(r->pairs[0].both, 0.2, 1e-9);
        CHECK_NEAR(r->pairs[0].a_only, 0.5, 1e-9);
        CHECK_NEAR(r->pairs[0].b_only, 0.3, 1e-9);
        CHECK_NEAR(r->pairs[0].neither, 0.0, 1e-9);
        CHECK_NEAR(r->pairs[0].span_ns, 1000, 1e-6);
    }
    /* stages: the producer's two loads, 700 ns of its 700 ns in regions */
    CHECK_EQ(r->num_stages, 2);
    if (r->num_stages == 2) {
        CHECK_EQ(r->stages[0].group, 0); CHECK_EQ(r->stages[0].id, 0); CHECK_EQ(r->stages[0].count, 2);
        CHECK_NEAR(r->stages[0].total_ns, 700, 1e-6);
        CHECK_NEAR(r->stages[0].share, 1.0, 1e-9);
        CHECK(strcmp(r->stages[0].name, "load") == 0 && strcmp(r->stages[0].group_name, "producer") == 0);
        CHECK_EQ(r->stages[1].group, 1); CHECK_NEAR(r->stages[1].p50_ns, 500, 1e-6);
    }
    /* the picture: one SM, two rows, bars in load's and mma's colours */
    CHECK_EQ(r->num_rows, 2);
    CHECK(r->row_by_sm);
    CHECK_EQ(r->num_sms, 1);
    CHECK(r->num_rects >= 2);
    {
        membuf m = {0, 0, 0};
        CHECK_EQ(ikp_report_write_svg(r, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "<svg") && strstr(m.p, "</svg>\n"));
        CHECK(m.p && strstr(m.p, ">load</text>") && strstr(m.p, ">mma</text>"));
        CHECK(m.p && strstr(m.p, "SM 5 producer") && strstr(m.p, "SM 5 consumer"));
        free(m.p);
    }
    ikp_report_free(r);
    ikp_capture_free(cap);
    free(w);
}

/* waits are idle even inside an enclosing region: consumer tile [0, 1000)
   holds wait [0, 600) and mma [600, 1000) */
static void test_waits(void)
{
    static const char *const names[] = {"tile", "wait", "mma"};
    static const span3 p[] = {{0, 0, 1000}}, c[] = {{0, 0, 1000}, {1, 0, 600}, {2, 600, 1000}};
    lanedesc d[2] = {{0, 0, 1, p, 1}, {0, 1, 1, c, 3}};
    size_t nw;
    uint64_t *w = build(d, 2, 1, 2, &nw);
    ikp_capture *cap = open_names(w, nw, names, 3);
    ikp_report *r = NULL;
    ikp_report_options o;
    uint32_t wait = 1, bad = IKP_WIRE_MAX_EVENTS;
    ikp_error e;
    int pass;
    memset(&o, 0, sizeof o);
    o.no_wait_names = 1; /* none: the wait is busy inside its tile */
    CHECK_EQ(ikp_report_compute(cap, &o, &r, &e), IKP_OK);
    if (r) {
        CHECK(rgroup(r, 1) && rgroup(r, 1)->busy_fraction > 0.999);
        CHECK(r->waits == 0 && r->waits_by_name == -1);
        ikp_report_free(r);
        r = NULL;
    }
    for (pass = 0; pass < 2; pass++) { /* "wait" taken by its name (none given), then given */
        o.no_wait_names = 0;
        o.wait_events = pass ? &wait : NULL;
        o.num_wait_events = pass ? 1 : 0;
        CHECK_EQ(ikp_report_compute(cap, &o, &r, &e), IKP_OK);
        if (r) {
            CHECK(rgroup(r, 1) && rgroup(r, 1)->busy_fraction > 0.399 && rgroup(r, 1)->busy_fraction < 0.401);
            CHECK(rgroup(r, 0) && rgroup(r, 0)->alone_ns > 599 && rgroup(r, 0)->alone_ns < 601);
            CHECK(r->waits == 1 && r->wait_ids[0] == 1 && r->waits_by_name == !pass);
            ikp_report_free(r);
            r = NULL;
        }
    }
    /* the names taken as waits: a word of them, in any case, camelCase split */
    CHECK(ikp_is_wait_name("wait") && ikp_is_wait_name("order_wait_0") && ikp_is_wait_name("WaitFull") &&
          ikp_is_wait_name("bar.sync") && ikp_is_wait_name("tmaWait") && ikp_is_wait_name("BARRIER") &&
          ikp_is_wait_name("stall x") && ikp_is_wait_name("waiting"));
    CHECK(!ikp_is_wait_name("await") && !ikp_is_wait_name("waitress") && !ikp_is_wait_name("syncthreads") &&
          !ikp_is_wait_name("mma") && !ikp_is_wait_name("") && !ikp_is_wait_name(NULL) &&
          !ikp_is_wait_name("load"));
    o.wait_events = &bad;
    CHECK_EQ(ikp_report_compute(cap, &o, &r, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(r == NULL && strstr(e.message, "wait event") != NULL);
    o.wait_events = NULL;
    CHECK_EQ(ikp_report_compute(cap, &o, &r, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_report_compute(NULL, NULL, &r, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_report_compute(cap, NULL, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    ikp_capture_free(cap);
    free(w);
}

/* 3 groups; 10 blocks on 10 SMs: 9 end at 1000 ns, block 7 at 5000 ns
   (a tail of 4000 ns); group 2 works alone longest in 8 of them */
static void test_tail_and_bottleneck(void)
{
    static const char *const names[] = {"a", "b", "c"};
    span3 r[10][3][1];
    lanedesc d[30];
    size_t nw, i, k = 0;
    uint64_t *w;
    ikp_capture *cap;
    ikp_report *rep = NULL;
    ikp_error e;
    membuf m = {0, 0, 0};
    for (i = 0; i < 10; i++) {
        uint64_t end = i == 7 ? 5000 : 1000;
        int g2_long = i != 3 && i != 4;
        r[i][0][0].id = 0; r[i][0][0].b = 0; r[i][0][0].e = 200;          /* group 0: [0, 200) */
        r[i][1][0].id = 1; r[i][1][0].b = 100; r[i][1][0].e = g2_long ? 400 : 900; /* group 1 */
        r[i][2][0].id = 2; r[i][2][0].b = 300; r[i][2][0].e = end;         /* group 2 to the end */
        if (!g2_long) { r[i][2][0].b = 850; r[i][2][0].e = end; }
        for (k = 0; k < 3; k++) {
            d[i * 3 + k].block = (uint32_t)i; d[i * 3 + k].group = (uint32_t)k; d[i * 3 + k].sm = (uint32_t)(20 + i);
            d[i * 3 + k].r = r[i][k]; d[i * 3 + k].n = 1;
        }
    }
    w = build(d, 30, 10, 3, &nw);
    cap = open_names(w, nw, names, 3);
    save_as("tail", w, nw, names, 3);
    CHECK_EQ(ikp_report_compute(cap, NULL, &rep, &e), IKP_OK);
    if (rep) {
        CHECK_EQ(rep->num_blocks, 10);
        CHECK_EQ(rep->blocks[0].block, 7);
        CHECK_EQ(rep->blocks[0].sm, 27);
        CHECK_EQ(rep->blocks[0].end_ps, 5000 * NS);
        CHECK_EQ(rep->end_p50_ps, 1000 * NS);
        CHECK_EQ(rep->tail_ps, 4000 * NS);
        CHECK_EQ(rep->num_sms, 10);
        CHECK(rgroup(rep, 2) && rgroup(rep, 2)->blocks_bound == 8);
        CHECK(rgroup(rep, 1) && rgroup(rep, 1)->blocks_bound == 2);
        CHECK(rgroup(rep, 0) && rgroup(rep, 0)->blocks_bound == 0);
        CHECK_EQ(rep->num_pairs, 3);
        CHECK_EQ(rep->heat_rows, 10);
        CHECK(rep->heat_max > 0);
        CHECK_EQ(ikp_report_write_markdown(rep, NULL, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "## Configuration") && strstr(m.p, "## Stages") && strstr(m.p, "## Pipeline") &&
              strstr(m.p, "## Balance"));
        CHECK(m.p && strstr(m.p, "a tail of 4.000 us"));
        CHECK(m.p && strstr(m.p, "**Bound by epilogue**"));
        CHECK(m.p && strstr(m.p, "| 7 | 27 | 0.000 | 5.000 | 5.000 |"));
        free(m.p);
        ikp_report_free(rep);
    }
    ikp_capture_free(cap);
    free(w);
}

/* ---- synthetic pipelines for the diff ---- */
static double urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}
/* a duration around mean ns: spread +-25%, 2% outliers at 3x */
static uint64_t noisy(uint64_t *s, double mean)
{
    double v = mean * (0.75 + 0.5 * urand(s));
    if (urand(s) < 0.02) v *= 3;
    return (uint64_t)v + 1;
}

/* nb blocks x 2 groups, `tiles` tiles each: producer `load` (id 0, 400 ns);
   consumer `mma` (id 1, 300 ns) and one `epilogue` (id 2, 200 ns); event
   `extra` (id 3) when with_extra; scale[id] multiplies durations */
static uint64_t *pipeline(uint32_t nb, uint32_t tiles, uint64_t seed, const double *scale, int with_extra,
                          int without_load, size_t *nw)
{
    lanedesc *d = (lanedesc *)calloc(2 * nb, sizeof *d);
    span3 *r = (span3 *)calloc((size_t)2 * nb * (tiles + 2), sizeof *r);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1, *w;
    uint32_t b, k;
    for (b = 0; b < nb; b++) {
        span3 *p = r + (size_t)(2 * b) * (tiles + 2), *c = p + tiles + 2;
        uint64_t t = 1000 + b * 7, u = 1200 + b * 7;
        size_t np = 0, nc = 0;
        for (k = 0; k < tiles; k++) {
            uint64_t dl = noisy(&s, 400 * scale[0]), dm = noisy(&s, 300 * scale[1]);
            if (!without_load) { p[np].id = 0; p[np].b = t; p[np].e = t + dl; np++; }
            t += dl + 20;
            c[nc].id = 1; c[nc].b = u; c[nc].e = u + dm; nc++;
            u += dm + 120;
        }
        c[nc].id = 2; c[nc].b = u; c[nc].e = u + noisy(&s, 200 * scale[2]); nc++;
        if (with_extra) { p[np].id = 3; p[np].b = t; p[np].e = t + noisy(&s, 100); np++; }
        d[2 * b].block = b; d[2 * b].group = 0; d[2 * b].sm = b % 132; d[2 * b].r = p; d[2 * b].n = np;
        d[2 * b + 1].block = b; d[2 * b + 1].group = 1; d[2 * b + 1].sm = b % 132; d[2 * b + 1].r = c; d[2 * b + 1].n = nc;
    }
    w = build(d, 2 * nb, nb, 2, nw);
    free(d);
    free(r);
    return w;
}

static const char *const pnames[] = {"load", "mma", "epilogue", "extra"};

static ikp_diff *diff_of(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, const ikp_diff_options *o)
{
    ikp_capture *ca = open_names(a, na, pnames, 4), *cb = open_names(b, nb, pnames, 4);
    ikp_diff *d = NULL;
    ikp_error e;
    if (ca && cb) CHECK_EQ(ikp_diff_compute(ca, cb, o, &d, &e), IKP_OK);
    ikp_capture_free(ca);
    ikp_capture_free(cb);
    return d;
}

static const ikp_diff_event *devent(const ikp_diff *d, const char *name)
{
    uint32_t i;
    for (i = 0; d && i < d->num_events; i++) if (!strcmp(d->events[i].name, name)) return &d->events[i];
    return NULL;
}

/* mma's verdict under a threshold and a floor (0: the defaults); its p-value in *p */
static ikp_verdict mma_verdict(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, double threshold,
                               double min_change_ns, double *p)
{
    ikp_diff_options o;
    ikp_diff *d;
    const ikp_diff_event *mma;
    ikp_verdict v = IKP_VERDICT_COUNT;
    memset(&o, 0, sizeof o);
    o.threshold = threshold;
    o.min_change_ns = min_change_ns;
    d = diff_of(a, na, b, nb, &o);
    mma = devent(d, "mma");
    if (mma) { v = (ikp_verdict)mma->test.verdict; *p = mma->test.p_value; }
    ikp_diff_free(d);
    return v;
}

/* a 10% slower mma among unchanged load and epilogue, with noise */
static void test_diff_finds_change(void)
{
    static const double one[3] = {1, 1, 1}, slow[3] = {1, 1.10, 1};
    size_t na, nb;
    uint64_t *a = pipeline(64, 32, 1, one, 0, 0, &na), *b = pipeline(64, 32, 2, slow, 0, 0, &nb);
    ikp_diff *d = diff_of(a, na, b, nb, NULL);
    const ikp_diff_event *mma = devent(d, "mma"), *load = devent(d, "load"), *epi = devent(d, "epilogue");
    membuf m = {0, 0, 0};
    double p = 1;
    save_as("base", a, na, pnames, 4);
    save_as("mma10", b, nb, pnames, 4);
    CHECK(d && mma && load && epi);
    if (d && mma && load && epi) {
        CHECK_EQ(mma->test.verdict, IKP_VERDICT_SLOWER);
        CHECK(mma->test.p50_change > 0.07 && mma->test.p50_change < 0.13);
        CHECK(mma->test.z > 0 && mma->test.p_value < 1e-6);
        CHECK_EQ(load->test.verdict, IKP_VERDICT_SAME);
        CHECK_EQ(epi->test.verdict, IKP_VERDICT_SAME);
        CHECK_EQ(mma->base.count, 64 * 32);
        CHECK_EQ(d->tests, 16); /* four measures of three events and of the block spans */
        CHECK(mma->test.measures & IKP_MEASURE_P50);
        CHECK(mma->test.change >= mma->test.p50_change);
        CHECK_NEAR(d->options.threshold, 0.02, 1e-12);
        CHECK_NEAR(d->options.alpha, 0.01, 1e-12);
        CHECK_NEAR(d->options.min_change_ns, 5, 1e-12);
        CHECK_EQ(d->differs, 0);
        CHECK(ikp_diff_slower_than(d, 0.05) == 1);
        CHECK(ikp_diff_slower_than(d, 0.20) == 0);
        /* the consumer's blocks get longer: the span's verdict */
        CHECK_EQ(d->span.test.verdict, IKP_VERDICT_SLOWER);
        CHECK_EQ(d->verdict, IKP_VERDICT_SLOWER);
        CHECK_EQ(d->span.base_blocks.count, 64);
        CHECK_EQ(ikp_diff_write_text(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "slower (p50") && strstr(m.p, "verdict   slower"));
        CHECK(m.p && strstr(m.p, "\nevents    slower: mma +") && !strstr(m.p, "load +")); /* the events summed up */
        free(m.p);
    }
    ikp_diff_free(d);
    /* a second run of the base's distribution: same */
    {
        size_t nc;
        uint64_t *c = pipeline(64, 32, 3, one, 0, 0, &nc);
        save_as("base2", c, nc, pnames, 4);
        d = diff_of(a, na, c, nc, NULL);
        CHECK(d && d->verdict == IKP_VERDICT_SAME && devent(d, "mma") && devent(d, "mma")->test.verdict == IKP_VERDICT_SAME);
        ikp_diff_free(d);
        free(c);
    }
    /* a floor in ns above mma's shift (about 30 ns): same; below it: slower */
    CHECK_EQ(mma_verdict(a, na, b, nb, 0, 50, &p), IKP_VERDICT_SAME);
    CHECK_EQ(mma_verdict(a, na, b, nb, 0, 20, &p), IKP_VERDICT_SLOWER);
    /* the other way round: faster */
    d = diff_of(b, nb, a, na, NULL);
    mma = devent(d, "mma");
    CHECK(mma && mma->test.verdict == IKP_VERDICT_FASTER && mma->test.z < 0);
    CHECK(d && ikp_diff_slower_than(d, 0.0) == 0);
    ikp_diff_free(d);
    /* a threshold above the change: same, however small p is */
    CHECK_EQ(mma_verdict(a, na, b, nb, 0.2, 0, &p), IKP_VERDICT_SAME);
    CHECK(p < 1e-6);
    free(a);
    free(b);
}

/* two runs of one distribution: `same` everywhere in at least 95 of 100 seeded trials */
static void test_diff_same(void)
{
    static const double one[3] = {1, 1, 1};
    int trial, same = 0, any_p_small = 0;
    for (trial = 0; trial < 100; trial++) {
        size_t na, nb;
        uint64_t *a = pipeline(32, 16, 1000 + 2 * (uint64_t)trial, one, 0, 0, &na);
        uint64_t *b = pipeline(32, 16, 1001 + 2 * (uint64_t)trial, one, 0, 0, &nb);
        ikp_diff *d = diff_of(a, na, b, nb, NULL);
        uint32_t i;
        int all = d != NULL && d->verdict == IKP_VERDICT_SAME;
        for (i = 0; d && i < d->num_events; i++) {
            if (d->events[i].test.verdict != IKP_VERDICT_SAME) all = 0;
            if (d->events[i].test.p_value < 0.05) any_p_small = 1;
        }
        same += all;
        ikp_diff_free(d);
        free(a);
        free(b);
    }
    printf("identical distributions: verdict same in %d of 100 trials\n", same);
    CHECK(same >= 95);
    CHECK(any_p_small); /* the test does see noise: some p-values are small; the rules keep them `same` */
}

/* captures of different event sets and grids: matched by name, the rest listed */
static void test_diff_mismatch(void)
{
    static const double one[3] = {1, 1, 1};
    size_t na, nb;
    uint64_t *a = pipeline(16, 8, 5, one, 0, 0, &na), *b = pipeline(24, 8, 6, one, 1, 1, &nb);
    ikp_diff *d = diff_of(a, na, b, nb, NULL);
    const ikp_diff_event *load = devent(d, "load"), *extra = devent(d, "extra"), *mma = devent(d, "mma");
    membuf m = {0, 0, 0};
    save_as("extra", b, nb, pnames, 4);
    CHECK(d && load && extra && mma);
    if (d && load && extra && mma) {
        CHECK_EQ(load->test.verdict, IKP_VERDICT_ONLY_BASE);
        CHECK_EQ(load->next.count, 0);
        CHECK_EQ(extra->test.verdict, IKP_VERDICT_ONLY_NEW);
        CHECK_EQ(extra->base.count, 0);
        /* 24 blocks against 16: as long, 1.5 times as many, so only its total moved */
        CHECK_EQ(mma->test.verdict, IKP_VERDICT_SLOWER);
        CHECK_EQ(mma->test.measures, IKP_MEASURE_TOTAL);
        CHECK_NEAR(mma->test.change, 0.5, 0.05);
        CHECK(d->differs & IKP_DIFF_EVENTS);
        CHECK(d->differs & IKP_DIFF_BLOCKS);
        CHECK(d->differs & IKP_DIFF_GRID);
        CHECK(!(d->differs & IKP_DIFF_FORMAT));
        CHECK_EQ(d->num_events, 4);
        CHECK_EQ(ikp_diff_write_text(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "only in one: load (base) extra (new)"));
        CHECK(m.p && strstr(m.p, "block counts differ: 16 and 24"));
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
        CHECK_EQ(ikp_diff_write_json(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "\"name\":\"load\",\"base\":{") && strstr(m.p, "\"new\":null,\"p50_change\":null,\"verdict\":\"only-base\""));
        CHECK(m.p && strstr(m.p, "\"differs\":[\"block counts\",\"grids\",\"event sets\"]"));
        free(m.p);
    }
    ikp_diff_free(d);
    free(a);
    free(b);
}

/* The gate's other half: a new capture that cannot stand in for the base
   (no records, an event missing, far fewer records of an event) is
   incomplete, with a line saying why; the same shape is not. */
static void test_diff_incomplete(void)
{
    static const double one[3] = {1, 1, 1};
    size_t na, nb, nc, ne;
    uint64_t *a = pipeline(16, 8, 7, one, 0, 0, &na), *b = pipeline(16, 8, 8, one, 0, 0, &nb);
    uint64_t *c = pipeline(16, 8, 9, one, 0, 1, &nc), *f = pipeline(16, 3, 10, one, 0, 0, &ne);
    uint64_t *empty = (uint64_t *)calloc(na, 8);
    char why[256];
    membuf m = {0, 0, 0};
    ikp_diff *d;
    /* the same shape: complete */
    d = diff_of(a, na, b, nb, NULL);
    CHECK(d && ikp_diff_incomplete(d, 0, why, sizeof why) == 0 && why[0] == 0);
    ikp_diff_free(d);
    /* load missing from the new capture */
    d = diff_of(a, na, c, nc, NULL);
    CHECK(d && ikp_diff_incomplete(d, 0, why, sizeof why) == 1);
    CHECK(strstr(why, "event 'load' (128 in the base) is missing from the new capture") != NULL);
    CHECK(d && ikp_diff_slower_than(d, 0.05) == 0); /* not slower: the other half of the gate */
    CHECK(d && ikp_diff_write_text(d, mem_write, &m, NULL) == IKP_OK);
    CHECK(m.p && strstr(m.p, "warning   incomplete: event 'load'"));
    free(m.p);
    m.p = NULL; m.n = m.cap = 0;
    CHECK(d && ikp_diff_write_json(d, mem_write, &m, NULL) == IKP_OK);
    CHECK(m.p && strstr(m.p, "\"incomplete\":\"event 'load' (128 in the base) is missing"));
    free(m.p);
    m.p = NULL; m.n = m.cap = 0;
    ikp_diff_free(d);
    /* a STALE side (lanes opened twice: header word 5), new or base: incomplete, said in text and JSON */
    {
        uint64_t *st = (uint64_t *)malloc(nb * 8);
        int side;
        memcpy(st, b, nb * 8);
        st[5] = 3;
        for (side = 0; side < 2; side++) {
            d = side ? diff_of(st, nb, a, na, NULL) : diff_of(a, na, st, nb, NULL);
            CHECK(d && d->verdict == IKP_VERDICT_INCOMPLETE);
            CHECK(d && ikp_diff_incomplete(d, 0, why, sizeof why) == 1);
            CHECK(strstr(why, side ? "the base capture is STALE (3 lane openings" : "the new capture is STALE (3 lane openings") != NULL);
            CHECK(d && ikp_diff_write_text(d, mem_write, &m, NULL) == IKP_OK);
            CHECK(m.p && strstr(m.p, "warning   incomplete: the ") && strstr(m.p, "capture is STALE"));
            free(m.p);
            m.p = NULL; m.n = m.cap = 0;
            CHECK(d && ikp_diff_write_json(d, mem_write, &m, NULL) == IKP_OK);
            CHECK(m.p && strstr(m.p, "\"verdict\":\"incomplete\",\"incomplete\":\"the ") && strstr(m.p, "capture is STALE"));
            free(m.p);
            m.p = NULL; m.n = m.cap = 0;
            ikp_diff_free(d);
        }
        free(st);
    }
    /* 3 tiles a block against 8: mma 48 against 128 */
    d = diff_of(a, na, f, ne, NULL);
    CHECK(d && ikp_diff_incomplete(d, 0, why, sizeof why) == 1);
    CHECK(strstr(why, "occurs 48 times in the new capture against 128 in the base") != NULL);
    CHECK(d && ikp_diff_incomplete(d, 0.3, NULL, 0) == 0); /* above 30%: complete */
    ikp_diff_free(d);
    /* a buffer of the same size that no kernel wrote: header only */
    memcpy(empty, a, 8 * 8);
    d = diff_of(a, na, empty, na, NULL);
    CHECK(d != NULL);
    if (d) {
        CHECK(ikp_diff_incomplete(d, 0, why, sizeof why) == 1);
        CHECK(strstr(why, "the new capture holds no records") != NULL);
        CHECK_EQ(d->verdict, IKP_VERDICT_INCOMPLETE); /* not `same` for a span of -100% */
        CHECK_EQ(ikp_diff_write_json(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "\"incomplete\":\"the new capture holds no records"));
        CHECK(m.p && strstr(m.p, "},\"verdict\":\"incomplete\""));
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
        CHECK_EQ(ikp_diff_write_text(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "\nverdict   incomplete") && !strstr(m.p, "verdict   same"));
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
        CHECK_EQ(ikp_diff_write_markdown(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "**Verdict: incomplete**"));
        free(m.p);
    }
    CHECK(ikp_diff_incomplete(NULL, 0, why, sizeof why) == 0 && why[0] == 0);
    ikp_diff_free(d);
    d = diff_of(empty, na, empty, na, NULL); /* nothing against nothing: still no records to stand in */
    CHECK(d && ikp_diff_incomplete(d, 0, why, sizeof why) == 1 && strstr(why, "holds no records (the base 0)"));
    ikp_diff_free(d);
    free(a); free(b); free(c); free(f); free(empty);
}

/* One region a block, 100 blocks of 1 us; in the new capture 49 of them
   take 10 us (the median block unchanged), or one block does. Either is a
   slower kernel: the first moves the tail and the total (not the median),
   the second the capture's span. */
static void test_diff_spread(void)
{
    lanedesc ld[100];
    span3 ra[100], rb[100], rc[100];
    size_t na, nb, nc, i;
    uint64_t *a, *b, *c;
    ikp_diff *d;
    membuf m = {0, 0, 0};
    for (i = 0; i < 100; i++) {
        ra[i].id = rb[i].id = rc[i].id = 1;
        ra[i].b = rb[i].b = rc[i].b = 1000 + i; /* blocks start 1 ns apart */
        ra[i].e = rc[i].e = ra[i].b + 1000;
        rb[i].e = rb[i].b + (i % 2 == 0 && i < 98 ? 10000 : 1000);
        ld[i].block = (uint32_t)i; ld[i].group = 0; ld[i].sm = (uint32_t)i; ld[i].n = 1;
    }
    rc[57].e = rc[57].b + 10000; /* one straggler */
    for (i = 0; i < 100; i++) ld[i].r = &ra[i];
    a = build(ld, 100, 100, 1, &na);
    for (i = 0; i < 100; i++) ld[i].r = &rb[i];
    b = build(ld, 100, 100, 1, &nb);
    for (i = 0; i < 100; i++) ld[i].r = &rc[i];
    c = build(ld, 100, 100, 1, &nc);
    save_as("blocks", a, na, pnames, 4);
    save_as("blocks49", b, nb, pnames, 4);
    save_as("straggler", c, nc, pnames, 4);
    d = diff_of(a, na, b, nb, NULL);
    CHECK(d != NULL);
    if (d) {
        const ikp_diff_event *mma = devent(d, "mma");
        CHECK(mma && mma->test.verdict == IKP_VERDICT_SLOWER);
        CHECK(mma && !(mma->test.measures & IKP_MEASURE_P50) && mma->test.p50_change == 0);
        CHECK(mma && (mma->test.measures & IKP_MEASURE_P90) && (mma->test.measures & IKP_MEASURE_TOTAL));
        CHECK(mma && mma->test.p90_p < 1e-9 && mma->test.total_p < 1e-9);
        CHECK(mma && mma->test.change > 8.9 && mma->test.change < 9.1); /* p90: 1 us -> 10 us */
        CHECK_EQ(d->span.test.verdict, IKP_VERDICT_SLOWER);
        CHECK(d->span.test.measures & IKP_MEASURE_SPAN);
        CHECK_EQ(d->verdict, IKP_VERDICT_SLOWER);
        CHECK(ikp_diff_slower_than(d, 0.05) == 1);
        CHECK(ikp_diff_slower_than(d, 8.0) == 1);
        CHECK(ikp_diff_slower_than(d, 9.5) == 0);
        CHECK_EQ(ikp_diff_write_text(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "\nverdict   slower") && strstr(m.p, "slower: mma +900.0% (p90, total)"));
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
        CHECK_EQ(ikp_diff_write_json(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "\"moved\":[\"p90\",\"total\"]"));
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
    }
    ikp_diff_free(d);
    d = diff_of(a, na, c, nc, NULL); /* one block of 100: no test sees it, the span does */
    CHECK(d != NULL);
    if (d) {
        CHECK_EQ(devent(d, "mma") ? devent(d, "mma")->test.verdict : IKP_VERDICT_COUNT, IKP_VERDICT_SAME);
        CHECK_EQ(d->span.test.measures, IKP_MEASURE_SPAN);
        CHECK_EQ(d->verdict, IKP_VERDICT_SLOWER);
        CHECK(ikp_diff_slower_than(d, 0.05) == 1);
        CHECK_EQ(ikp_diff_write_text(d, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "slower (span; past the spread of block ends)"));
        free(m.p);
    }
    ikp_diff_free(d);
    d = diff_of(c, nc, a, na, NULL); /* and back: faster */
    CHECK(d && d->verdict == IKP_VERDICT_FASTER && ikp_diff_slower_than(d, 0) == 0);
    ikp_diff_free(d);
    d = diff_of(a, na, a, na, NULL);
    CHECK(d && d->verdict == IKP_VERDICT_SAME && d->span.test.measures == 0);
    ikp_diff_free(d);
    free(a); free(b); free(c);
}

/* the rank test against a hand computation: 1..10 against 11..20 (no
   overlap) gives U = 0, z = (50 - 0.5) / sqrt(175) = 3.7418, two-sided
   p = erfc(3.7418 / sqrt 2) = 1.827e-4 */
static void test_rank_test(void)
{
    uint64_t a[10], b[10], c[10];
    double z, p;
    int i;
    for (i = 0; i < 10; i++) { a[i] = (uint64_t)(i + 1); b[i] = (uint64_t)(i + 11); c[i] = 5; }
    ikp__rank_test(a, 10, b, 10, &z, &p);
    CHECK_NEAR(z, 3.7418, 1e-3);
    CHECK_NEAR(p * 1e4, 1.827, 0.01);
    ikp__rank_test(b, 10, a, 10, &z, &p);
    CHECK_NEAR(z, -3.7418, 1e-3);
    ikp__rank_test(c, 10, c, 10, &z, &p); /* all tied: no evidence */
    CHECK_NEAR(p, 1.0, 1e-12);
    ikp__rank_test(a, 10, a, 10, &z, &p);
    CHECK_NEAR(z, 0.0, 1e-12);
    CHECK_NEAR(p, 1.0, 1e-6);
    CHECK_NEAR(ikp__sqrt(2.0), 1.41421356237, 1e-10);
    CHECK_NEAR(ikp__exp(-1.0), 0.367879441171, 1e-10);
    CHECK_NEAR(ikp__erfc(0.0), 1.0, 1e-6);
    CHECK_NEAR(ikp__erfc(1.0), 0.157299207050, 1e-7);
}

static int fail_write(void *u, const void *d, size_t n) { (void)u; (void)d; (void)n; return 1; }

static void test_diff_api(void)
{
    static const double one[3] = {1, 1, 1};
    size_t na;
    uint64_t *a = pipeline(4, 4, 9, one, 0, 0, &na);
    ikp_capture *ca = open_names(a, na, pnames, 4);
    ikp_diff *d = NULL;
    ikp_diff_options o;
    ikp_error e;
    memset(&o, 0, sizeof o);
    CHECK_EQ(ikp_diff_compute(NULL, ca, NULL, &d, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_diff_compute(ca, ca, NULL, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    o.threshold = -0.1;
    CHECK_EQ(ikp_diff_compute(ca, ca, &o, &d, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(d == NULL && strstr(e.message, "threshold") != NULL);
    o.threshold = 0; o.alpha = 1.5;
    CHECK_EQ(ikp_diff_compute(ca, ca, &o, &d, &e), IKP_ERR_INVALID_ARGUMENT);
    o.alpha = 0; o.min_change_ns = -1;
    CHECK_EQ(ikp_diff_compute(ca, ca, &o, &d, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "min_change_ns") != NULL);
    o.min_change_ns = 0;
    CHECK_EQ(ikp_diff_compute(ca, ca, &o, &d, &e), IKP_OK);
    if (d) {
        CHECK_EQ(d->verdict, IKP_VERDICT_SAME);
        CHECK_EQ(ikp_diff_write_text(d, fail_write, NULL, NULL), IKP_ERR_WRITE);
        CHECK_EQ(ikp_diff_write_json(d, fail_write, NULL, NULL), IKP_ERR_WRITE);
        CHECK_EQ(ikp_diff_write_markdown(d, fail_write, NULL, NULL), IKP_ERR_WRITE);
        CHECK_EQ(ikp_diff_write_text(NULL, fail_write, NULL, NULL), IKP_ERR_INVALID_ARGUMENT);
    }
    {   /* names that repeat: the k-th of a name pairs with the k-th, so a capture matches itself */
        static const char *const twice[] = {"x", "x", "x"};
        ikp_capture *cx = open_names(a, na, twice, 3);
        uint32_t i;
        ikp_diff_free(d);
        d = NULL;
        CHECK_EQ(ikp_diff_compute(cx, cx, NULL, &d, &e), IKP_OK);
        CHECK(d && d->num_events == 3 && !(d->differs & IKP_DIFF_EVENTS));
        for (i = 0; d && i < d->num_events; i++) CHECK_EQ(d->events[i].test.verdict, IKP_VERDICT_SAME);
        ikp_diff_free(d);
        d = NULL;
        ikp_capture_free(cx);
    }
    CHECK(strcmp(ikp_verdict_name(IKP_VERDICT_ONLY_NEW), "only-new") == 0);
    CHECK(strcmp(ikp_verdict_name(IKP_VERDICT_COUNT), "unknown") == 0);
    ikp_diff_free(d);
    ikp_diff_free(NULL);
    ikp_report_free(NULL);
    {
        ikp_report *r = NULL;
        CHECK_EQ(ikp_report_compute(ca, NULL, &r, &e), IKP_OK);
        CHECK_EQ(ikp_report_write_markdown(r, NULL, fail_write, NULL, NULL), IKP_ERR_WRITE);
        CHECK_EQ(ikp_report_write_svg(r, fail_write, NULL, NULL), IKP_ERR_WRITE);
        CHECK_EQ(ikp_report_write_svg(NULL, fail_write, NULL, NULL), IKP_ERR_INVALID_ARGUMENT);
        ikp_report_free(r);
    }
    ikp_capture_free(ca);
    free(a);
}

/* 1 if p[0 .. n) is UTF-8 (RFC 3629: no overlong forms, no surrogates) */
static int utf8_ok(const char *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i], k, need, cp, min;
        if (c < 0x80) { i++; continue; }
        if ((c & 0xE0) == 0xC0) { need = 1; cp = c & 0x1F; min = 0x80; }
        else if ((c & 0xF0) == 0xE0) { need = 2; cp = c & 0x0F; min = 0x800; }
        else if ((c & 0xF8) == 0xF0) { need = 3; cp = c & 0x07; min = 0x10000; }
        else return 0;
        for (k = 1; k <= need; k++) {
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += need + 1;
    }
    return 1;
}

/* names that need escaping in Markdown and SVG; an empty capture */
static void test_escaping_and_empty(void)
{
    static const char *const names[] = {"a|b<c>&\"", "\xff\xfe bad utf-8"};
    static const span3 p[] = {{0, 0, 300}, {1, 300, 700}};
    lanedesc d[1] = {{0, 0, 0, p, 2}};
    size_t nw;
    uint64_t *w = build(d, 1, 1, 1, &nw);
    ikp_capture *cap = open_names(w, nw, names, 2);
    ikp_report *r = NULL;
    ikp_error e;
    membuf m = {0, 0, 0};
    CHECK_EQ(ikp_report_compute(cap, NULL, &r, &e), IKP_OK);
    if (r) {
        CHECK_EQ(ikp_report_write_svg(r, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, ">a|b&lt;c&gt;&amp;&quot;</text>") && strstr(m.p, ">?? bad utf-8</text>"));
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
        CHECK_EQ(ikp_report_write_markdown(r, NULL, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "| a\\|b&lt;c&gt;&amp;\" |"));
        CHECK(m.p && strstr(m.p, "| ?? bad utf-8 |") && utf8_ok(m.p, m.n));
        free(m.p);
        {   /* the picture's link: spaces and parentheses percent-encoded */
            ikp_report_md_options mo;
            memset(&mo, 0, sizeof mo);
            mo.svg_path = "my pics/p (1)\xc3\xa9.svg";
            m.p = NULL; m.n = m.cap = 0;
            CHECK_EQ(ikp_report_write_markdown(r, &mo, mem_write, &m, NULL), IKP_OK);
            CHECK(m.p && strstr(m.p, "](my%20pics/p%20%281%29%C3%A9.svg)\n"));
            free(m.p);
        }
        {   /* the text writers: valid UTF-8 whatever the names */
            ikp_diff *dd = NULL;
            ikp_stats *st = NULL;
            CHECK_EQ(ikp_diff_compute(cap, cap, NULL, &dd, &e), IKP_OK);
            m.p = NULL; m.n = m.cap = 0;
            CHECK(dd && ikp_diff_write_text(dd, mem_write, &m, NULL) == IKP_OK);
            CHECK(dd && ikp_diff_write_markdown(dd, mem_write, &m, NULL) == IKP_OK);
            CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
            CHECK(st && ikp_stats_write_text(st, mem_write, &m, NULL) == IKP_OK);
            CHECK(m.p && strstr(m.p, "?? bad utf-8") && utf8_ok(m.p, m.n));
            free(m.p);
            ikp_stats_free(st);
            ikp_diff_free(dd);
        }
        CHECK_EQ(r->num_pairs, 0); /* one group */
        ikp_report_free(r);
    }
    ikp_capture_free(cap);
    free(w);
    {   /* lanes opened, nothing recorded */
        lanedesc z[1] = {{0, 0, 0, p, 0}};
        w = build(z, 1, 1, 1, &nw);
        cap = open_names(w, nw, names, 2);
        r = NULL;
        CHECK_EQ(ikp_report_compute(cap, NULL, &r, &e), IKP_OK);
        if (r) {
            CHECK_EQ(r->num_blocks, 0);
            CHECK_EQ(r->num_stages, 0);
            m.p = NULL; m.n = m.cap = 0;
            CHECK_EQ(ikp_report_write_svg(r, mem_write, &m, NULL), IKP_OK);
            CHECK(m.p && strstr(m.p, "</svg>"));
            free(m.p);
            ikp_report_free(r);
        }
        ikp_capture_free(cap);
        free(w);
    }
}

/* Out of memory at every allocation in turn: statistics, report, diff and
   both trace writers fail with IKP_ERR_OUT_OF_MEMORY (or succeed once the
   allocations suffice), and give back everything they took (the ASan
   build also sees no bad free) */
typedef struct oom { long left; long live; } oom;
static void *oom_alloc(size_t n, void *u)
{
    oom *o = (oom *)u;
    void *p;
    if (o->left == 0) return NULL;
    if (o->left > 0) o->left--;
    p = malloc(n ? n : 1);
    if (p) o->live++;
    return p;
}
static void *oom_realloc(void *q, size_t n, void *u)
{
    oom *o = (oom *)u;
    void *p;
    if (o->left == 0) return NULL;
    if (o->left > 0) o->left--;
    p = realloc(q, n ? n : 1);
    if (p && !q) o->live++;
    return p;
}
static void oom_free(void *q, void *u)
{
    if (q) ((oom *)u)->live--;
    free(q);
}
static int count_sink(void *u, const void *d, size_t n) { (void)d; *(size_t *)u += n; return 0; }
static void test_out_of_memory(void)
{
    static const double one[3] = {1, 1, 1};
    size_t na, nb, sunk;
    uint64_t *a = pipeline(8, 4, 1, one, 0, 0, &na), *b = pipeline(8, 4, 2, one, 0, 0, &nb);
    ikp_decode_options o;
    ikp_capture *ca = NULL, *cb = NULL;
    ikp_error e;
    oom m = {-1, 0};
    int step, which, bad = 0, done[6] = {0, 0, 0, 0, 0, 0};
    memset(&o, 0, sizeof o);
    o.allocator.alloc = oom_alloc; o.allocator.realloc = oom_realloc; o.allocator.free = oom_free;
    o.allocator.user = &m;
    CHECK_EQ(ikp_capture_open(a, na, &o, &ca, &e), IKP_OK);
    CHECK_EQ(ikp_capture_open(b, nb, &o, &cb, &e), IKP_OK);
    if (ca && cb)
        for (which = 0; which < 6; which++)
            for (step = 0; step < 400 && !done[which]; step++) {
                long before = m.live;
                ikp_result r;
                ikp_stats *st = NULL;
                ikp_report *rp = NULL;
                ikp_diff *d = NULL;
                m.left = step;
                if (which == 0) r = ikp_stats_compute(ca, &st, &e);
                else if (which == 1) r = ikp_report_compute(ca, NULL, &rp, &e);
                else if (which == 2) r = ikp_diff_compute(ca, cb, NULL, &d, &e);
                else if (which == 5) r = ikp_export_parquet((const ikp_capture *const *)&ca, 1, NULL, count_sink, &sunk, &e);
                else r = (which == 3 ? ikp_write_chrome : ikp_write_perfetto)(ca, NULL, count_sink, &sunk, &e);
                m.left = -1;
                if (r == IKP_OK) done[which] = 1;
                else if (r != IKP_ERR_OUT_OF_MEMORY) bad++;
                ikp_stats_free(st);
                ikp_report_free(rp);
                ikp_diff_free(d);
                if (m.live != before) bad++;
            }
    CHECK_EQ(bad, 0);
    CHECK(done[0] && done[1] && done[2] && done[3] && done[4] && done[5]);
    ikp_capture_free(ca);
    ikp_capture_free(cb);
    CHECK_EQ(m.live, 0);
    free(a);
    free(b);
}

/* a sink that fails once `left` bytes are written */
typedef struct limited { size_t left, n; unsigned char *buf; } limited;
static int limited_sink(void *u, const void *d, size_t n)
{
    limited *l = (limited *)u;
    if (n > l->left) return 1;
    if (l->buf) memcpy(l->buf + l->n, d, n);
    l->left -= n;
    l->n += n;
    return 0;
}

/* The Parquet export's frame: "PAR1", the footer's length before the
   closing "PAR1" pointing inside the file; refused arguments; a write that
   fails at any point reported, nothing leaked (the engines read the tables
   in tests/test_export.py) */
static void test_export_frame(void)
{
    static const double one[3] = {1, 1, 1};
    size_t na, total = 0, cut;
    uint64_t *a = pipeline(8, 4, 1, one, 0, 0, &na);
    ikp_capture *ca = NULL;
    const ikp_capture *cc[2];
    ikp_export_options eo;
    ikp_error e;
    limited l;
    int bad = 0;
    CHECK_EQ(ikp_capture_open(a, na, NULL, &ca, &e), IKP_OK);
    cc[0] = ca;
    cc[1] = NULL;
    CHECK_EQ(ikp_export_parquet(NULL, 1, NULL, count_sink, &total, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_export_parquet(cc, 0, NULL, count_sink, &total, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_export_parquet(cc, 2, NULL, count_sink, &total, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "capture 2 is NULL") != NULL);
    CHECK_EQ(ikp_export_parquet(cc, 1, NULL, NULL, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    memset(&eo, 0, sizeof eo);
    eo.row_group_rows = 7;
    CHECK_EQ(ikp_export_parquet(cc, 1, &eo, count_sink, &total, &e), IKP_OK);
    l.left = total;
    l.n = 0;
    l.buf = (unsigned char *)malloc(total ? total : 1);
    CHECK_EQ(ikp_export_parquet(cc, 1, &eo, limited_sink, &l, &e), IKP_OK);
    if (l.buf && total > 12) {
        uint32_t flen = (uint32_t)l.buf[total - 8] | (uint32_t)l.buf[total - 7] << 8 |
                        (uint32_t)l.buf[total - 6] << 16 | (uint32_t)l.buf[total - 5] << 24;
        CHECK(memcmp(l.buf, "PAR1", 4) == 0 && memcmp(l.buf + total - 4, "PAR1", 4) == 0);
        CHECK(flen > 0 && flen + 12 <= total);
    }
    free(l.buf);
    for (cut = 0; cut < total; cut += 1 + cut / 4) { /* every write fails from some byte on */
        l.left = cut;
        l.n = 0;
        l.buf = NULL;
        if (ikp_export_parquet(cc, 1, &eo, limited_sink, &l, &e) != IKP_ERR_WRITE) bad++;
    }
    CHECK_EQ(bad, 0);
    ikp_capture_free(ca);
    free(a);
}

/* ---- what waits for the footer: a spill, in a temporary file and in memory ---- */
static void test_export_spill(void)
{
    ikp_allocator a = ikp__allocator(NULL);
    unsigned char big[5000], back[5000];
    int mode, i;
    for (i = 0; i < (int)sizeof big; i++) big[i] = (unsigned char)(i * 7 + 3);
    for (mode = 0; mode < 2; mode++) {
        ikp__spill s;
        uint32_t x = 0;
        ikp__spill_open(&s, &a, mode);
        ikp__spill_put(&s, "abc", 3);
        ikp__spill_put(&s, big, sizeof big); /* past a file's buffer */
        ikp__spill_put(&s, "", 0);
        x = 0xDEADBEEFu;
        ikp__spill_put(&s, &x, sizeof x);
        CHECK_EQ(s.failed, 0);
        ikp__spill_rewind(&s);
        memset(back, 0, sizeof back);
        CHECK_EQ(ikp__spill_get(&s, back, 3), 0);
        CHECK(memcmp(back, "abc", 3) == 0);
        CHECK_EQ(ikp__spill_get(&s, back, sizeof back), 0);
        CHECK(memcmp(back, big, sizeof big) == 0);
        x = 0;
        CHECK_EQ(ikp__spill_get(&s, &x, sizeof x), 0);
        CHECK_EQ(x, 0xDEADBEEFu);
        CHECK_EQ(ikp__spill_get(&s, &x, 1), -1); /* past its end */
        CHECK_EQ(s.failed, 1);
        CHECK_EQ(ikp__spill_get(&s, &x, 0), -1); /* and failed from then on */
        ikp__spill_close(&s);
    }
}

/* ---- an IKP file's lanes read again one at a time, and a file changed meanwhile ---- */
static void *no_alloc(size_t n, void *u) { (void)n; (void)u; return NULL; }
static void *no_realloc(void *p, size_t n, void *u) { (void)p; (void)n; (void)u; return NULL; }
static void plain_free(void *p, void *u) { (void)u; free(p); }
static void test_export_lanes_file(void)
{
    static const double one[3] = {1, 1, 1};
    const char *dir = getenv("IKP_ANALYSIS_OUT");
    char path[512];
    size_t nw;
    uint64_t *w = pipeline(6, 5, 3, one, 1, 0, &nw);
    ikp_capture *whole = NULL, *c = NULL;
    ikp_lane_events a, b;
    ikp__lanes_file lf;
    ikp_error e;
    uint64_t hash;
    uint32_t i, events = 0, change;
    int bad = 0;
    snprintf(path, sizeof path, "%s/lanes-file.ikp", dir ? dir : ".");
    CHECK_EQ(save_words(path, w, nw, IKP_FORMAT_IKP, NULL, 0, NULL, 0), IKP_OK);
    CHECK_EQ(ikp_capture_open_path(path, NULL, &whole, &e), IKP_OK);
    for (change = 0; change < 2 && whole; change++) {
        CHECK_EQ(ikp_capture_open_path(path, NULL, &c, &e), IKP_OK);
        if (!c) break;
        hash = ikp__words_hash(c->words, c->num_words);
        CHECK_EQ(ikp__lanes_open(&lf, c, path), 1);
        CHECK(c->words == NULL && c->owned == NULL); /* let go */
        if (change) { /* a word of the last lane's slots, changed on disk */
            FILE *f = fopen(path, "r+b");
            const uint64_t at = whole->words_at + 8 * (whole->lanes[whole->info.num_lanes - 1].base + 1);
            unsigned char x = 0x5A;
            CHECK(f != NULL);
            if (f) {
                CHECK_EQ(fseek(f, (long)at, SEEK_SET), 0);
                CHECK_EQ(fwrite(&x, 1, 1, f), 1);
                fclose(f);
            }
        }
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        for (i = 0; i < c->info.num_lanes && !change; i++) { /* the same events as from the words in memory */
            size_t k;
            CHECK_EQ(ikp__lanes_decode(&lf, c, i, &a, &e), IKP_OK);
            CHECK_EQ(ikp_decode_lane(whole, i, &b, &e), IKP_OK);
            CHECK_EQ(a.count, b.count);
            for (k = 0; k < a.count && k < b.count; k++) {
                const ikp_event *x = &a.events[k], *y = &b.events[k];
                bad += x->start_ps != y->start_ps || x->end_ps != y->end_ps || x->id != y->id || x->kind != y->kind ||
                       x->flags != y->flags || x->track != y->track || x->begin_data != y->begin_data ||
                       x->end_data != y->end_data || x->tid != y->tid;
            }
            events += (uint32_t)a.count;
        }
        for (i = 0; i < c->info.num_lanes && change; i++) CHECK_EQ(ikp__lanes_decode(&lf, c, i, &a, &e), IKP_OK);
        CHECK_EQ(ikp__lanes_close(&lf, &c->alloc, c->num_words, hash, path, &e), change ? IKP_ERR_IO : IKP_OK);
        if (change) CHECK(strstr(e.message, "changed while it was exported") != NULL); /* the change is found */
        ikp_lane_events_free(c, &a);
        ikp_lane_events_free(whole, &b);
        ikp_capture_free(c);
        c = NULL;
    }
    CHECK_EQ(bad, 0);
    CHECK(events > 30);
    if (ikp_capture_open_path(path, NULL, &c, &e) == IKP_OK) { /* no memory to read the rest with: said so */
        ikp_allocator none;
        none.alloc = no_alloc;
        none.realloc = no_realloc;
        none.free = plain_free;
        none.user = NULL;
        CHECK_EQ(ikp__lanes_open(&lf, c, path), 1);
        CHECK_EQ(ikp__lanes_close(&lf, &none, c->num_words, 0, path, &e), IKP_ERR_OUT_OF_MEMORY);
        ikp_capture_free(c);
    }
    ikp_capture_free(whole);
    remove(path);
    free(w);
}

/* the words saved as an IKP file with event names and a device (a GPU on
   host; NULL: none) */
static ikp_result save_with(const char *path, const uint64_t *w, size_t n, const char *const *ev, uint32_t nev,
                            const char *host)
{
    ikp_decode_options o;
    ikp_device_id d;
    ikp_capture *cap = NULL;
    ikp_result r;
    memset(&o, 0, sizeof o);
    memset(&d, 0, sizeof d);
    o.format = IKP_FORMAT_IKP;
    o.event_names = ev;
    o.num_event_names = nev;
    if (host) {
        memset(d.uuid, 0xA5, 16);
        snprintf(d.host, sizeof d.host, "%s", host);
        d.rank = -1;
        o.device = &d;
    }
    r = ikp_capture_open(w, n, &o, &cap, NULL);
    if (r == IKP_OK) r = ikp_capture_write_path(cap, path, NULL);
    ikp_capture_free(cap);
    return r;
}

/* ---- a capture of lanes opened and closed, no record in them: saved as
   noregions.ikp, whose report JSON keeps every balance key (null) ---- */
static void test_save_no_regions(void)
{
    static const char *const names[] = {"", "tick"};
    enc_lane L[2];
    uint64_t w[8 + 2 * (9 + 4)];
    ikp_capture *c = NULL;
    ikp_report *rep = NULL;
    ikp_error e;
    memset(L, 0, sizeof L);
    L[0].started = L[0].finalized = 1; L[0].g0 = 900; L[0].g1 = 3000;
    L[1] = L[0]; L[1].block = 1;
    enc_ikp(w, 2, 4, 1, 2, 1, 1, L, 2);
    save_as("noregions", w, sizeof w / 8, names, 2);
    CHECK_EQ(ikp_capture_open(w, sizeof w / 8, NULL, &c, &e), IKP_OK);
    if (c && ikp_report_compute(c, NULL, &rep, &e) == IKP_OK) {
        membuf m = {0, 0, 0};
        CHECK_EQ(ikp_report_write_json(rep, NULL, mem_write, &m, &e), IKP_OK);
        CHECK(m.p && strstr(m.p, "\"end_p50_ns\":null,\"last_end_ns\":null,\"tail_ns\":null,\"tail_fraction\":null"));
        free(m.p);
        ikp_report_free(rep);
    }
    ikp_capture_free(c);
}

/* ---- names and a host name that are not UTF-8 (a byte 0xFF, a cut
   sequence, a control): saved as badtext.ikp for test_export.py, whose
   Parquet readers need U+FFFD in their place ---- */
static void test_save_bad_text(void)
{
    static const double one[3] = {1, 1, 1};
    static const char *const names[] = {"", "lo\xFF" "ad", "mm\xE2\x82", "ok \xE2\x82\xAC"};
    const char *dir = getenv("IKP_ANALYSIS_OUT");
    char path[512];
    size_t nw;
    uint64_t *w = pipeline(2, 2, 7, one, 0, 0, &nw);
    ikp_capture *c = NULL;
    ikp_error e;
    if (!w) return;
    snprintf(path, sizeof path, "%s/badtext.ikp", dir ? dir : ".");
    CHECK_EQ(save_with(path, w, nw, names, 4, "n\xFFode\x01"), IKP_OK);
    CHECK_EQ(ikp_capture_open_path(path, NULL, &c, &e), IKP_OK);
    if (c) { /* the device text: U+FFFD for the bad byte and the control */
        char t[256];
        CHECK(strstr(ikp_device_text(ikp_capture_device(c), t, sizeof t), "host n\xEF\xBF\xBD" "ode\xEF\xBF\xBD") != NULL);
        ikp_capture_free(c);
    }
    if (!dir) remove(path);
    free(w);
}

/* ---- a file changed between the export's two readings: refused, whether its
   lanes are read again (a word changed), its words are hashed whole (a word
   more), or only its names or device changed (the words the same) ---- */
static void test_export_changed_file(void)
{
    static const double one[3] = {1, 1, 1};
    const char *dir = getenv("IKP_ANALYSIS_OUT");
    char path[512];
    const char *in[1];
    size_t nw;
    uint64_t *w0 = pipeline(4, 3, 5, one, 0, 0, &nw), *w = (uint64_t *)calloc(nw + 1, 8);
    ikp_allocator a = ikp__allocator(NULL);
    int how;
    if (!w0 || !w) { free(w0); free(w); return; }
    memcpy(w, w0, nw * 8); /* and a zero word past the buffer, for the file that grew */
    snprintf(path, sizeof path, "%s/changed.ikp", dir ? dir : ".");
    in[0] = path;
    for (how = 0; how < 5; how++) {
        static const char *const names1[] = {"", "load", "mma"}, *const names2[] = {"", "wait", "mma"};
        ikp__link_data ld;
        ikp__hostset hs;
        ikp__pq_plan p;
        ikp__pq_src src;
        ikp__pq_form form;
        ikp_error e;
        size_t sunk = 0;
        ikp_result r;
        CHECK_EQ(save_with(path, w, nw, names1, 3, "node1"), IKP_OK);
        memset(&ld, 0, sizeof ld);
        memset(&hs, 0, sizeof hs);
        hs.a = &a;
        memset(&p, 0, sizeof p);
        r = ikp__pq_read_links(in, 1, NULL, &a, 0, &ld, &hs, &e);
        if (r == IKP_OK) r = ikp__pq_plan_make(&a, &ld, 1, NULL, 1, &p, &e);
        CHECK_EQ(r, IKP_OK);
        if (how == 1) { /* a word of its last lane */
            ikp_capture *c = NULL;
            FILE *f = fopen(path, "r+b");
            long at = 0;
            CHECK_EQ(ikp_capture_open_path(path, NULL, &c, &e), IKP_OK);
            if (c) at = (long)(c->words_at + 8 * (c->lanes[c->info.num_lanes - 1].base + 1));
            ikp_capture_free(c);
            CHECK(f != NULL && at > 0);
            if (f) {
                CHECK_EQ(fseek(f, at, SEEK_SET), 0);
                CHECK_EQ(fputc(0x5A, f), 0x5A);
                fclose(f);
            }
        } else if (how == 2) /* a word more: its words are hashed whole */
            CHECK_EQ(save_with(path, w, nw + 1, names1, 3, "node1"), IKP_OK);
        else if (how == 3) /* another name: the rows would name events as the file now does */
            CHECK_EQ(save_with(path, w, nw, names2, 3, "node1"), IKP_OK);
        else if (how == 4) /* another host: the rows' host, not the placement's */
            CHECK_EQ(save_with(path, w, nw, names1, 3, "node2"), IKP_OK);
        src.caps = NULL;
        src.paths = in;
        src.dopt = NULL;
        src.a = &a;
        form = ikp__pq_form_of(NULL, nw);
        r = ikp__pq_table(&src, 0, 1, &p, &form, count_sink, &sunk, &e);
        CHECK_EQ(r, how ? IKP_ERR_IO : IKP_OK);
        if (how) CHECK(strstr(e.message, "changed while it was exported") != NULL);
        ikp__pq_plan_free(&p);
        ikp__free(&a, ld.peers);
        ikp__free(&a, hs.names);
        ikp__free(&a, hs.ht);
    }
    remove(path);
    free(w0);
    free(w);
}

/* ---- the table's encodings, on values made here ---- */
static int file_sink(void *u, const void *d, size_t n) { return fwrite(d, 1, n, (FILE *)u) != n; }
static uint64_t enc_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}
/* number column c's value in row r: the extremes in turn, runs, every bit
   width of random deltas, rising times past 2^53; INT32 columns within
   their range. *null: the row has none (optional columns; all of row group
   2 for placement_ns, so that a page has no values) */
static int64_t enc_value(int c, uint32_t r, uint64_t *s, int *null)
{
    static const int64_t ext[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1, INT32_MIN, INT32_MAX};
    static const int64_t ext32[] = {INT32_MIN, INT32_MAX, 0, -1, 1, INT32_MIN + 1};
    const int narrow = ikp__pq_cols[c].type == IKP__PQ_INT32;
    uint64_t u = enc_rand(s);
    int64_t v;
    *null = ikp__pq_cols[c].optional && ((r / 3 + (uint32_t)c) % 4 == 0 || (c == IKP__PQ_PLACEMENT && r / 1000 == 1));
    if (r < 180) v = narrow ? ext32[(r + (uint32_t)c) % 6] : ext[(r + (uint32_t)c) % 9];
    else if (r < 400) v = 42;
    else if (narrow) v = (int64_t)((u >> (r % 32)) & 0xFFFFFFFFu) - 0x80000000ll;
    else if (r < 2000) v = ikp__signed(u >> (r % 64), 1);
    else v = (int64_t)(((uint64_t)1 << 60) + (uint64_t)r * 977 + (u & 0xFF));
    return v;
}
/* a table through the writer's own entry points (plain: numbers PLAIN);
   with IKP_ANALYSIS_OUT=DIR written to DIR/encodings.parquet (or
   encodings-plain.parquet), and its values, a row a line, tab-separated
   ("null"), to DIR/encodings.txt, for tests/test_export.py to compare with
   what pyarrow and DuckDB read */
static void test_export_encodings(int plain)
{
    static const char *const kinds[] = {"region", "instant", "l\xc3\xa4uft \xe7\xad\x89\xe5\xbe\x85", ""};
    const char *dir = getenv("IKP_ANALYSIS_OUT");
    char path[512], text[64];
    ikp_allocator a = ikp__allocator(NULL);
    ikp__pqw *w = (ikp__pqw *)malloc(sizeof *w);
    FILE *f = NULL, *t = NULL;
    uint64_t s = 88172645463325252ull;
    size_t sunk = 0;
    uint32_t r;
    int c;
    ikp_error e;
    if (!w) return;
    if (dir) {
        snprintf(path, sizeof path, "%s/encodings%s.parquet", dir, plain ? "-plain" : "");
        f = fopen(path, "wb");
        snprintf(path, sizeof path, "%s/encodings.txt", dir);
        t = fopen(path, "w");
        CHECK(f != NULL && t != NULL);
        if (!f || !t) {
            if (f) fclose(f);
            if (t) fclose(t);
            free(w);
            return;
        }
    }
    if (f) ikp__pq_init(w, &a, file_sink, f, 1000, 1 << 30, plain); /* its row groups in a temporary file, or memory */
    else ikp__pq_init(w, &a, count_sink, &sunk, 1000, 1 << 30, plain);
    w->plain = plain;
    for (r = 0; r < 3100; r++) {
        for (c = 0; c < IKP__PQ_COLS; c++) {
            if (ikp__pq_cols[c].string) {
                if (c == IKP__PQ_EVENT) snprintf(text, sizeof text, "e%u", r % 300); /* 300 entries: 9 bits */
                else if (c == IKP__PQ_KIND) snprintf(text, sizeof text, "%s", kinds[(r / 7) % 4]);
                else if (c == IKP__PQ_CAPTURE) snprintf(text, sizeof text, "capture %u", r / 500);
                else snprintf(text, sizeof text, "%s", c == IKP__PQ_GPU ? "" : "x");
                ikp__pq_text(w, c, text);
                w->col[c].seen[((size_t)text >> 3) & 7] = NULL; /* text's bytes change */
                if (t) fprintf(t, "%s%s", c ? "\t" : "", text);
            } else {
                int null;
                int64_t v = c == IKP__PQ_LANE ? (int64_t)r : enc_value(c, r, &s, &null);
                if (c == IKP__PQ_LANE) null = 0;
                if (ikp__pq_cols[c].optional) ikp__pq_def(w, c, !null);
                if (!null) ikp__pq_num(w, c, v);
                if (!t) continue;
                if (null) fprintf(t, "\tnull");
                else fprintf(t, "\t%lld", (long long)v);
            }
        }
        if (t) fprintf(t, "\n");
        ikp__pq_row_end(w);
    }
    ikp__pq_flush_group(w);
    ikp__pq_footer_begin(w, 0);
    ikp__pq_footer_end(w);
    CHECK_EQ(ikp__pq_result(w, &e), IKP_OK);
    CHECK_EQ(w->ngroups, 4);
    CHECK(f || sunk > 3100);
    ikp__pq_free(w);
    free(w);
    if (f) fclose(f);
    if (t) fclose(t);
}

int main(void)
{
    test_rank_test();
    test_overlap_and_bound();
    test_waits();
    test_tail_and_bottleneck();
    test_diff_finds_change();
    test_diff_same();
    test_diff_mismatch();
    test_diff_spread();
    test_diff_incomplete();
    test_diff_api();
    test_escaping_and_empty();
    test_out_of_memory();
    test_export_frame();
    test_export_spill();
    test_export_lanes_file();
    test_export_changed_file();
    test_save_bad_text();
    test_save_no_regions();
    test_export_encodings(0);
    test_export_encodings(1);
    return check_report();
}
