/* Functional tests of ikp.h: decode buffers made by tests/encoder.h in every
   format and check what comes out against what was encoded. */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include "check.h"
#include "encoder.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static void test_nesting_overlap_instants(void)
{
    /* lane 0: A{ B{ } } C-instant ; lane 1: A{ B{ A} B} (overlap, not nested) */
    static const enc_rec r0[] = {{ENC_B, 0, 1000, 0}, {ENC_B, 1, 1100, 0}, {ENC_E, 1, 1300, 0},
                                 {ENC_E, 0, 1500, 0}, {ENC_I, 2, 1600, 0}};
    static const enc_rec r1[] = {{ENC_B, 0, 2000, 0}, {ENC_B, 1, 2100, 0}, {ENC_E, 0, 2200, 0},
                                 {ENC_E, 1, 2400, 0}};
    enc_lane L[2];
    uint64_t w[8 + 2 * (9 + 16)];
    ikp_capture *cap;
    ikp_event ev[16];
    size_t n;
    char *js;
    memset(L, 0, sizeof L);
    L[0].block = 0; L[0].group = 0; L[0].started = L[0].finalized = 1; L[0].recs = r0; L[0].n = 5;
    L[0].g0 = 900; L[0].g1 = 1700;
    L[1].block = 0; L[1].group = 1; L[1].started = L[1].finalized = 1; L[1].recs = r1; L[1].n = 4;
    L[1].g0 = 900; L[1].g1 = 2500; L[1].sm = 3;
    enc_ikp(w, 2, 16, 2, 1, 1, 1, L, 2);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_IKP);
    CHECK_EQ(ikp_capture_get_info(cap)->records, 9);
    CHECK_EQ(ikp_capture_get_info(cap)->span_ps, 1400 * NS);
    n = regions(cap, 0, ev, 16);
    CHECK_EQ(n, 3);
    CHECK_EQ(ev[0].kind, IKP_EVENT_REGION); CHECK_EQ(ev[0].id, 0);
    CHECK_EQ(ev[0].start_ps, 0); CHECK_EQ(ev[0].end_ps, 500 * NS);
    CHECK_EQ(ev[1].id, 1); CHECK_EQ(ev[1].start_ps, 100 * NS); CHECK_EQ(ev[1].end_ps, 300 * NS);
    CHECK_EQ(ev[0].track, 0); CHECK_EQ(ev[1].track, 0);
    CHECK_EQ(ev[2].kind, IKP_EVENT_INSTANT); CHECK_EQ(ev[2].start_ps, 600 * NS);
    n = regions(cap, 1, ev, 16);
    CHECK_EQ(n, 2);
    CHECK_EQ(ev[0].start_ps, 1000 * NS); CHECK_EQ(ev[0].end_ps, 1200 * NS);
    CHECK_EQ(ev[1].start_ps, 1100 * NS); CHECK_EQ(ev[1].end_ps, 1400 * NS);
    CHECK(ev[0].track != ev[1].track);
    CHECK(nesting_ok(cap));
    js = chrome(cap, IKP_BY_BLOCK);
    CHECK(js && strncmp(js, "{\"traceEvents\":[", 16) == 0);
    CHECK_EQ(count_str(js, "\"ph\":\"X\""), 4);
    CHECK_EQ(count_str(js, "\"ph\":\"i\""), 1);
    CHECK(strstr(js, "\"name\":\"event 0\",\"pid\":1,\"tid\":1,\"ts\":0.000,\"dur\":0.500") != NULL);
    CHECK(strstr(js, "\"ts\":0.100,\"dur\":0.200") != NULL);
    /* lane 1's second region goes on an extra track: tid = 1 + group + 2 * track */
    CHECK(strstr(js, "\"pid\":1,\"tid\":4,\"ts\":1.100,\"dur\":0.300") != NULL);
    CHECK(strstr(js, "\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"block 0\"}") != NULL);
    CHECK(strstr(js, "\"name\":\"group 1 [1]\"") != NULL);
    free(js);
    js = chrome(cap, IKP_BY_SM);
    CHECK(js && strstr(js, "\"name\":\"SM 3\"") != NULL);
    free(js);
    ikp_capture_free(cap);
}

static void test_globaltimer_wrap(void)
{
    /* regions straddling several 2^32 ns wraps; gaps < 2^32 between records */
    enc_rec r[12];
    enc_lane L;
    uint64_t w[8 + 9 + 16], base = (1ull << 32) * 7 - 300, t = base;
    ikp_capture *cap;
    ikp_event ev[8];
    int i;
    for (i = 0; i < 6; i++) {
        r[2 * i].kind = ENC_B; r[2 * i].id = 5; r[2 * i].t = t;
        r[2 * i + 1].kind = ENC_E; r[2 * i + 1].id = 5; r[2 * i + 1].t = t + 1000 + (uint64_t)i;
        t += 3000000000ull; /* 3 s: the next region is past a wrap */
    }
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 12; L.g0 = base - 5; L.g1 = t;
    enc_ikp(w, 1, 16, 1, 1, 1, 1, &L, 1);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(regions(cap, 0, ev, 8), 6);
    for (i = 0; i < 6; i++) {
        CHECK_EQ(ev[i].start_ps, (int64_t)i * 3000000000ll * NS);
        CHECK_EQ(ev[i].end_ps - ev[i].start_ps, (1000 + i) * NS);
    }
    CHECK_EQ(ikp_capture_get_info(cap)->backwards, 0);
    ikp_capture_free(cap);
}

/* Lanes of one SM read one clock: three lanes of SM 7 whose anchors come
   at different times (one starts 1 ms after the others, one never ends)
   and are each a few cycles off, as anchors are (+3, -4, +2 cycles on a
   clock of 1.7 cycles/ns), and a fourth lane on SM 8 whose anchors are
   20 ns off. Records of one SM keep their cycle order and distance
   exactly, whichever lane holds them: records at one cycle decode to one
   time, and the distance of two is their cycle distance at one rate. Each
   lane mapped by its own anchors would place them up to 7 cycles apart.
   The lane on SM 8 is mapped by its own readings: its record at the same
   cycle count is not moved onto SM 7's axis. */
static void test_one_mapping_per_sm(void)
{
    const double rate = 1.7; /* cycles per ns */
    const uint64_t g0 = 7000000000ull, c0 = 900000000ull;
    /* the clock at ns t from g0: c0 + rate * t */
#define SMC(t_ns) (c0 + (uint64_t)((t_ns) * rate))
    enc_rec ra[3], rb[2], rc[2], rd[1];
    enc_lane L[4];
    uint64_t w[8 + 4 * (9 + 8)];
    ikp_capture *cap;
    ikp_event ev[4];
    const uint64_t x = SMC(1500000); /* 1.5 ms */
    memset(L, 0, sizeof L);
    ra[0].kind = ENC_I; ra[0].id = 1; ra[0].t = x;
    ra[1].kind = ENC_I; ra[1].id = 2; ra[1].t = x + 1000;
    ra[2].kind = ENC_I; ra[2].id = 3; ra[2].t = x + 400000;
    rb[0].kind = ENC_I; rb[0].id = 1; rb[0].t = x;         /* the same cycle as lane A's first */
    rb[1].kind = ENC_I; rb[1].id = 2; rb[1].t = x + 500;   /* halfway between A's first two */
    rc[0].kind = ENC_I; rc[0].id = 2; rc[0].t = x + 250;
    rc[1].kind = ENC_I; rc[1].id = 3; rc[1].t = x + 400000; /* the same cycle as A's third */
    rd[0].kind = ENC_I; rd[0].id = 1; rd[0].t = x;
    /* lane A: 0 .. 3 ms, its anchors 3 cycles late */
    L[0].started = L[0].finalized = 1; L[0].cycles = 1; L[0].sm = 7; L[0].recs = ra; L[0].n = 3;
    L[0].g0 = g0; L[0].c0 = SMC(0) + 3; L[0].g1 = g0 + 3000000; L[0].c1 = SMC(3000000) + 3;
    /* lane B: 1 .. 2.5 ms, 4 cycles early */
    L[1].block = 1; L[1].started = L[1].finalized = 1; L[1].cycles = 1; L[1].sm = 7; L[1].recs = rb; L[1].n = 2;
    L[1].g0 = g0 + 1000000; L[1].c0 = SMC(1000000) - 4; L[1].g1 = g0 + 2500000; L[1].c1 = SMC(2500000) - 4;
    /* lane C: from 0.5 ms, never finalized, 2 cycles late */
    L[2].block = 2; L[2].started = 1; L[2].cycles = 1; L[2].sm = 7; L[2].recs = rc; L[2].n = 2;
    L[2].g0 = g0 + 500000; L[2].c0 = SMC(500000) + 2;
    /* lane D, SM 8: the same clock values, its anchors 20 ns late */
    L[3].block = 3; L[3].started = L[3].finalized = 1; L[3].cycles = 1; L[3].sm = 8; L[3].recs = rd; L[3].n = 1;
    L[3].g0 = g0 + 20; L[3].c0 = SMC(0); L[3].g1 = g0 + 3000020; L[3].c1 = SMC(3000000);
    enc_ikp(w, 4, 8, 1, 4, 1, 1, L, 4);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    {
        int64_t a0, a1, a2, b0, b1, c0p, c1p, d0;
        double per_cycle;
        CHECK_EQ(regions(cap, 0, ev, 4), 3);
        a0 = ev[0].start_ps; a1 = ev[1].start_ps; a2 = ev[2].start_ps;
        CHECK_EQ(regions(cap, 1, ev, 4), 2);
        b0 = ev[0].start_ps; b1 = ev[1].start_ps;
        CHECK_EQ(regions(cap, 2, ev, 4), 2);
        c0p = ev[0].start_ps; c1p = ev[1].start_ps;
        CHECK_EQ(regions(cap, 3, ev, 4), 1);
        d0 = ev[0].start_ps;
        per_cycle = (double)(a1 - a0) / 1000.0;
        CHECK_NEAR(per_cycle, 1000.0 / rate, 0.01);        /* ps per cycle: the clock's rate */
        CHECK_EQ(b0, a0);                                  /* one cycle, one time, across lanes */
        CHECK_NEAR((double)(b1 - a0), 500 * per_cycle, 1); /* distance in cycles, across lanes */
        CHECK_NEAR((double)(c0p - a0), 250 * per_cycle, 1);
        CHECK_NEAR((double)(c1p - a2), 0, 1);              /* the unfinalized lane too */
        CHECK(a0 < c0p && c0p < b1 && b1 < a1);            /* cycle order across lanes */
        CHECK_NEAR((double)(d0 - a0), 20000.0, 4500);      /* SM 8: its own readings, 20 ns later (give or
                                                              take SM 7's anchors, which disagree by 7
                                                              cycles: 4.1 ns) */
    }
    {
        char t[512];
        ikp_capture_placement(ikp_capture_get_info(cap), t, sizeof t, NULL);
        CHECK(strstr(t, "within an SM: exact") != NULL);
    }
    ikp_capture_free(cap);
    {
        /* 24 short lanes on one SM starting 1 ns apart, their anchors 3
           cycles off either way in turn (readings a few ns the wrong way
           round): the SM's mapping still rises with the ticks, so each
           lane's regions keep their order, nesting and length */
        enum { NL = 24 };
        enc_lane M[NL];
        enc_rec rr[NL][4];
        uint64_t w2[8 + NL * (9 + 8)];
        int i, bad_len = 0;
        memset(M, 0, sizeof M);
        for (i = 0; i < NL; i++) {
            const uint64_t s0 = SMC(1000 + i);
            const int off = i % 2 ? -3 : 3;
            rr[i][0].kind = ENC_B; rr[i][0].id = 1; rr[i][0].t = s0 + 20;
            rr[i][1].kind = ENC_B; rr[i][1].id = 2; rr[i][1].t = s0 + 30;
            rr[i][2].kind = ENC_E; rr[i][2].id = 2; rr[i][2].t = s0 + 40;
            rr[i][3].kind = ENC_E; rr[i][3].id = 1; rr[i][3].t = s0 + 120;
            M[i].block = (uint32_t)i; M[i].sm = 3; M[i].cycles = 1; M[i].started = M[i].finalized = 1;
            M[i].recs = rr[i]; M[i].n = 4;
            M[i].g0 = g0 + 1000 + (uint64_t)i; M[i].c0 = (uint64_t)((int64_t)SMC(1000 + i) + off);
            M[i].g1 = g0 + 1200 + (uint64_t)i; M[i].c1 = (uint64_t)((int64_t)SMC(1200 + i) - off);
        }
        enc_ikp(w2, NL, 8, 1, NL, 1, 1, M, NL);
        cap = open_fmt(w2, sizeof w2 / 8, IKP_FORMAT_AUTO, IKP_OK);
        if (cap) {
            CHECK(nesting_ok(cap));
            for (i = 0; i < NL; i++)
                if (regions(cap, (uint32_t)i, ev, 4) != 2 || ev[0].id != 1 || ev[1].id != 2 ||
                    (double)(ev[1].end_ps - ev[1].start_ps) < 0.95 * 10 * 1000.0 / rate ||
                    (double)(ev[1].end_ps - ev[1].start_ps) > 1.05 * 10 * 1000.0 / rate)
                    bad_len++;
            CHECK_EQ(bad_len, 0);
            ikp_capture_free(cap);
        }
    }
#undef SMC
}

static void test_cycles(void)
{
    /* two lanes on SMs whose clock64 differ by 17 ms: one moment decodes to one time */
    const double rate = 1.98; /* cycles per ns */
    enc_rec r0[4], r1[2];
    enc_lane L[2];
    uint64_t w[8 + 2 * (9 + 8)];
    uint64_t g0 = 5000000000ull, c0a = 123456789ull, c0b = 123456789ull + 33660000ull; /* +17 ms of cycles */
    uint64_t span_ns = 200000; /* 200 us lanes: own rate */
    ikp_capture *cap;
    ikp_event ev[4];
    memset(L, 0, sizeof L);
    /* lane 0: region of 1980 cycles (1000 ns) at +10 us; an instant at +100 us */
    r0[0].kind = ENC_B; r0[0].id = 1; r0[0].t = c0a + 19800;
    r0[1].kind = ENC_E; r0[1].id = 1; r0[1].t = c0a + 19800 + 1980;
    r0[2].kind = ENC_I; r0[2].id = 2; r0[2].t = c0a + 198000;
    r0[3].kind = ENC_D; r0[3].id = 2; r0[3].data = 77;
    /* lane 1: instant at the same moment, +100 us */
    r1[0].kind = ENC_I; r1[0].id = 2; r1[0].t = c0b + 198000;
    r1[1].kind = ENC_B; r1[1].id = 3; r1[1].t = c0b + 198000 + 40; /* 40 cycles = 20.2 ns */
    L[0].started = L[0].finalized = 1; L[0].cycles = 1; L[0].recs = r0; L[0].n = 4;
    L[0].g0 = g0; L[0].c0 = c0a; L[0].g1 = g0 + span_ns; L[0].c1 = c0a + (uint64_t)(span_ns * rate);
    L[1].block = 1; L[1].sm = 1; L[1].started = L[1].finalized = 1; L[1].cycles = 1; L[1].recs = r1; L[1].n = 2;
    L[1].g0 = g0; L[1].c0 = c0b; L[1].g1 = g0 + span_ns; L[1].c1 = c0b + (uint64_t)(span_ns * rate);
    enc_ikp(w, 2, 8, 1, 2, 1, 1, L, 2);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK(ikp_capture_get_info(cap)->timer_cycles);
    CHECK_NEAR(lane_info(cap, 0).cycles_per_ns, rate, 1e-6);
    CHECK_EQ(regions(cap, 0, ev, 4), 2);
    CHECK_EQ(ev[0].start_ps, 0);
    CHECK_NEAR((double)(ev[0].end_ps - ev[0].start_ps), 1000.0 * NS, 1);
    CHECK_EQ(ev[1].kind, IKP_EVENT_INSTANT);
    CHECK(ev[1].flags & IKP_EVENT_HAS_BEGIN_DATA);
    CHECK_EQ(ev[1].begin_data, 77);
    {
        int64_t t_a = ev[1].start_ps;
        CHECK_EQ(regions(cap, 1, ev, 4), 2);
        CHECK_NEAR((double)ev[0].start_ps, (double)t_a, 1); /* same moment, different SM clocks */
        CHECK_EQ(ev[1].kind, IKP_EVENT_UNMATCHED_BEGIN);
        CHECK_NEAR((double)(ev[1].start_ps - ev[0].start_ps), 40 / rate * NS, 1);
    }
    ikp_capture_free(cap);
}

/* The lane of the anchor tests: its SM clock runs at 2.0 cycles/ns for
   100 us, then 1.9; its end anchor is 200 us and 390000 cycles after its
   start anchor (ANCHOR_G0, ANCHOR_C0). Encodes the n records r into w (one
   lane of 8 slots, 8 + 9 + 8 words). */
#define ANCHOR_C0 7000000000ull
#define ANCHOR_G0 3000000000ull
static void clock_change_lane(const enc_rec *r, size_t n, uint64_t *w)
{
    enc_lane L;
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.cycles = 1; L.recs = r; L.n = n;
    L.g0 = ANCHOR_G0; L.c0 = ANCHOR_C0; L.g1 = L.g0 + 200000; L.c1 = L.c0 + 390000;
    enc_ikp(w, 1, 8, 1, 1, 1, 1, &L, 1);
}

/* IKP_ANCHOR on that lane: with the anchor between, stamps land exactly;
   bad anchors are ignored. */
static void anchored_lane(enc_rec *r, int variant)
{
    const uint64_t c0 = ANCHOR_C0, g0 = ANCHOR_G0;
    int n = 0;
    r[n].kind = ENC_I; r[n].id = 1; r[n].t = c0; n++;                       /* t = 0 */
    r[n].kind = ENC_I; r[n].id = 2; r[n].t = c0 + 100000; n++;              /* t = 50 us */
    r[n].kind = ENC_D; r[n].id = 2; r[n].data = 5; n++;
    r[n].kind = ENC_AG; r[n].id = 0; n++;                                   /* t = 100 us */
    r[n - 1].data = (uint32_t)(g0 + 100000 + (variant == 1 ? 1000000000u : 0)); /* 1: a second off */
    r[n].kind = variant == 2 ? ENC_I : ENC_AC; r[n].id = 0; r[n].t = c0 + 200000; n++; /* 2: no clock half */
    r[n].kind = ENC_I; r[n].id = 3; r[n].t = c0 + 295000; n++;              /* t = 150 us */
}
static void test_anchors(void)
{
    enc_rec r[6];
    uint64_t w[8 + 1 * (9 + 8)];
    ikp_capture *cap;
    ikp_event ev[6];
    int variant;
    for (variant = 0; variant < 3; variant++) {
        double want1 = variant ? 100000 / 1.95 : 50000, want3 = variant ? 295000 / 1.95 : 150000; /* ns */
        anchored_lane(r, variant);
        clock_change_lane(r, 6, w);
        cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
        if (!cap) return;
        CHECK_NEAR(lane_info(cap, 0).cycles_per_ns, 1.95, 1e-9);
        CHECK_EQ(lane_info(cap, 0).records, 6);
        CHECK_EQ(lane_info(cap, 0).invalid, 0);
        CHECK_EQ(regions(cap, 0, ev, 6), variant == 2 ? 4 : 3); /* anchor halves are not events */
        CHECK_NEAR((double)(ev[1].start_ps - ev[0].start_ps), want1 * NS, 1);
        CHECK_EQ(ev[1].begin_data, 5);
        CHECK_NEAR((double)(ev[variant == 2 ? 3 : 2].start_ps - ev[0].start_ps), want3 * NS, 1);
        if (variant == 0) CHECK_NEAR((double)(lane_info(cap, 0).last_ps - lane_info(cap, 0).first_ps), 150000.0 * NS, 1);
        ikp_capture_free(cap);
    }
}

/* Automatic anchors (IKP_ANCHOR_EVERY): the same lane, the anchor
   right after an end record, at the cycles it names after that record's
   stamp. Variant 1: after a data record, which has no stamp: ignored.
   Variant 2: tag bits 16..29 on an IKP_ANCHOR half: an invalid record.
   Variant 3: the anchor states a width of 400 cycles (event id 402): placed
   the same, and the lane's stated placement grows by half of it (100-103
   ns at the lane's 1.95-2 cycles/ns). Variant 4: that anchor with kind bits set: invalid. */
static void test_auto_anchors(void)
{
    const uint64_t c0 = ANCHOR_C0, g0 = ANCHOR_G0;
    enc_rec r[6];
    uint64_t w[8 + 1 * (9 + 8)];
    ikp_capture *cap;
    ikp_event ev[6];
    uint32_t place0 = 0;
    int variant;
    for (variant = 0; variant < 5; variant++) {
        int bad = variant == 2 || variant == 4;
        double want = variant == 0 || variant == 3 ? 150000 : 295000 / 1.95; /* ns */
        int n = 0;
        r[n].kind = ENC_I; r[n].id = 1; r[n].t = c0; n++;                     /* t = 0 */
        r[n].kind = ENC_B; r[n].id = 2; r[n].t = c0 + 100000; n++;            /* t = 50 us */
        r[n].kind = ENC_E; r[n].id = 2; r[n].t = c0 + 200000 - 40; n++;       /* 20 ns before 100 us */
        if (variant == 1) { r[n].kind = ENC_D; r[n].id = 2; r[n].data = 9; n++; }
        r[n].kind = variant == 2 ? ENC_AG : ENC_AA; r[n].id = variant >= 3 ? 400 : 0; r[n].t = 40; /* the tick at 100 us */
        r[n].data = (uint32_t)(g0 + 100000);
        n++;
        r[n].kind = ENC_I; r[n].id = 3; r[n].t = c0 + 295000; n++;            /* t = 150 us */
        clock_change_lane(r, (size_t)n, w);
        if (variant == 2) w[8 + 8 + 3] |= 40ull << 16; /* the delta bits on a globaltimer half */
        if (variant == 4) w[8 + 8 + 3] |= 2;           /* kind bits on an automatic anchor */
        cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
        if (!cap) return;
        CHECK_EQ(lane_info(cap, 0).records, (uint64_t)n);
        CHECK_EQ(lane_info(cap, 0).anchors, bad ? 0u : 1u);
        CHECK_EQ(ikp_capture_get_info(cap)->anchors, bad ? 0u : 1u);
        CHECK_EQ(lane_info(cap, 0).invalid, bad ? 1u : 0u);
        if (variant == 0) place0 = lane_info(cap, 0).placement_ns;
        if (variant == 3) {
            CHECK(place0 > 0);
            /* the anchor's reading is wider by half of 400 cycles (100 ns at 2 cycles/ns): the lines
               that pass within every reading spread at least that much more around it */
            printf("  automatic anchor of width 400: stated %u ns (width 0: %u ns)\n", lane_info(cap, 0).placement_ns, place0);
            CHECK(lane_info(cap, 0).placement_ns >= place0 + 100);
        }
        CHECK_EQ(regions(cap, 0, ev, 6), 3);
        /* before the anchor: the lane's mean rate either way (the segment to the anchor is
           2.0 cycles/ns, as the mean over its two stretches would not be) */
        CHECK_NEAR((double)(ev[1].start_ps - ev[0].start_ps), (variant == 0 || variant == 3 ? 50000 : 100000 / 1.95) * NS, 1);
        CHECK_NEAR((double)(ev[2].start_ps - ev[0].start_ps), want * NS, 1);
        ikp_capture_free(cap);
    }
}

/* The GPU clock against the host's: a capture's time 0 on CLOCK_REALTIME
   (readings interpolated; outside them, the nearest plus drift), traces on
   host time, capture files with a clock section, and bad readings. */
static ikp_capture *clock_capture(const ikp_clock_sync *cs, uint32_t n, ikp_result want, ikp_error *e)
{
    static uint64_t w[8 + 9 + 4];
    enc_rec r[2];
    enc_lane L;
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    memset(&L, 0, sizeof L);
    r[0].kind = ENC_B; r[0].id = 1; r[0].t = 1795000000000001000ull; /* 1 us after the start anchor */
    r[1].kind = ENC_E; r[1].id = 1; r[1].t = 1795000000000003000ull;
    L.started = L.finalized = 1; L.recs = r; L.n = 2;
    L.g0 = 1795000000000000000ull; L.g1 = L.g0 + 5000;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    memset(&o, 0, sizeof o);
    o.clock = cs;
    o.num_clock = n;
    CHECK_EQ(ikp_capture_open(w, sizeof w / 8, &o, &cap, e), want);
    return cap;
}
static void test_host_clock(void)
{
    const uint64_t g0 = 1795000000000000000ull, zero = g0 + 1000; /* time 0: the first record */
    ikp_clock_sync cs[3];
    ikp_capture *cap, *back = NULL;
    ikp_error e;
    int64_t h = 0;
    uint32_t u = 0;
    memset(cs, 0, sizeof cs);
    /* GPU - host = 40,000 ns before (+- 700), 40,800 ns 1 ms later (+- 500): at time 0, 1 us
       after the first reading, 40,000.8 ns, rounded; given out of order */
    cs[1].gpu_ns = zero - 1000; cs[1].host_ns = (int64_t)(cs[1].gpu_ns - 40000); cs[1].uncertainty_ns = 700;
    cs[0].gpu_ns = zero - 1000 + 1000000; cs[0].host_ns = (int64_t)(cs[0].gpu_ns - 40800); cs[0].uncertainty_ns = 500;
    cap = clock_capture(cs, 2, IKP_OK, &e);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->gpu_time_known, 1);
    CHECK_EQ(ikp_capture_get_info(cap)->gpu_zero_ns, zero);
    CHECK_EQ(ikp_capture_get_info(cap)->gpu_zero_ps, 0);
    CHECK_EQ(ikp_capture_host_zero(cap, &h, &u, &e), IKP_OK);
    CHECK_EQ(h, (int64_t)(zero - 40001));
    CHECK_EQ(u, 700);
    CHECK(ikp_capture_get_info(cap)->host_time_known && ikp_capture_get_info(cap)->host_zero_ns == h);
    {
        const ikp_clock_sync *got = NULL;
        CHECK_EQ(ikp_capture_clock(cap, &got), 2);
        CHECK(got && got[0].gpu_ns < got[1].gpu_ns); /* sorted */
    }
    { /* the trace on host time: every ts moves by the base, exactly; past
         2^53 ns (where a double stops holding whole ns) the JSON's ts are
         less the base's whole seconds, stated as ikp_ts_offset_ns */
        membuf m = {0, 0, 0};
        ikp_trace_options o;
        char want[96];
        const long long off = h - h % 1000000000, rel = h - off;
        memset(&o, 0, sizeof o);
        o.time_base_ns = (uint64_t)h;
        o.time_note = "host \"time\"";
        CHECK(h > (1ll << 53));
        CHECK_EQ(ikp_write_chrome(cap, &o, mem_write, &m, &e), IKP_OK);
        snprintf(want, sizeof want, "\"ts\":%lld.%03lld,\"dur\":2.000", rel / 1000, rel % 1000);
        CHECK(m.p && strstr(m.p, want) != NULL);
        snprintf(want, sizeof want, "\"ikp_ts_offset_ns\":\"%lld\"", off);
        CHECK(m.p && strstr(m.p, want) != NULL);
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
        o.time_base_ns = (uint64_t)rel; /* below 2^53: as given, no offset */
        CHECK_EQ(ikp_write_chrome(cap, &o, mem_write, &m, &e), IKP_OK);
        snprintf(want, sizeof want, "\"ts\":%lld.%03lld,\"dur\":2.000", rel / 1000, rel % 1000);
        CHECK(m.p && strstr(m.p, want) != NULL && strstr(m.p, "ikp_ts_offset_ns") == NULL);
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
        o.time_base_ns = (uint64_t)h;
        CHECK_EQ(ikp_write_chrome(cap, &o, mem_write, &m, &e), IKP_OK);
        CHECK(m.p && strstr(m.p, "\"otherData\":{\"ikp_time\":\"host \\\"time\\\"\"") != NULL);
        free(m.p);
        { /* a note longer than a name is refused by both writers (none written) */
            static char longnote[IKP_MAX_NAME_BYTES + 2];
            membuf n2 = {0, 0, 0};
            memset(longnote, 0xFF, IKP_MAX_NAME_BYTES + 1);
            o.time_note = longnote;
            CHECK_EQ(ikp_write_chrome(cap, &o, mem_write, &n2, &e), IKP_ERR_INVALID_ARGUMENT);
            CHECK(strstr(e.message, "time_note of 256 bytes") != NULL);
            CHECK_EQ(ikp_write_perfetto(cap, &o, mem_write, &n2, &e), IKP_ERR_INVALID_ARGUMENT);
            CHECK(n2.n == 0);
            longnote[IKP_MAX_NAME_BYTES] = 0; /* 255 bytes, none valid UTF-8: written */
            CHECK_EQ(ikp_write_perfetto(cap, &o, mem_write, &n2, &e), IKP_OK);
            free(n2.p);
            o.time_note = "host \"time\"";
        }
    }
    { /* a capture file keeps the readings (version 2), and reads back the same */
        const char *path = "build/test-out/clock.ikp";
        CHECK_EQ(ikp_capture_write_path(cap, path, &e), IKP_OK);
        CHECK_EQ(ikp_capture_open_path(path, NULL, &back, &e), IKP_OK);
        if (back) {
            int64_t h2 = 0;
            CHECK_EQ(ikp_capture_get_info(back)->clock_syncs, 2);
            CHECK_EQ(ikp_capture_host_zero(back, &h2, NULL, &e), IKP_OK);
            CHECK_EQ(h2, h);
            ikp_capture_free(back);
        }
        { /* the file cut inside its clock section; version 2 without the section */
            FILE *f = fopen(path, "rb");
            unsigned char buf[4096];
            size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
            if (f) fclose(f);
            CHECK(n > 64 && memcmp(buf + n - 80, "IKPCLOCK", 8) == 0);
            back = NULL;
            CHECK_EQ(ikp_capture_open_data(buf, n - 1, NULL, &back, &e), IKP_ERR_TRUNCATED);
            CHECK(strstr(e.message, "clock section") != NULL && e.offset == (int64_t)(n - 72));
            CHECK_EQ(ikp_capture_open_data(buf, n - 80, NULL, &back, &e), IKP_ERR_BAD_HEADER);
            CHECK(strstr(e.message, "no clock section") != NULL);
            buf[n - 80] = 'X';
            CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
            buf[n - 80] = 'I';
            buf[n - 64 + 32 + 8 + 6] ^= 0x01; /* reading 1's GPU time 2^48 ns off: they contradict */
            CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
            CHECK(strstr(e.message, "contradict") != NULL);
            if (!strstr(e.message, "contradict")) fprintf(stderr, "  %s\n", e.message);
            CHECK(back == NULL);
        }
    }
    ikp_capture_free(cap);
    /* one reading: its offset, outside it drift is added (10 ns per ms) */
    cs[0] = cs[1];
    cs[0].gpu_ns -= 100000000; /* 100 ms before time 0 */
    cs[0].host_ns -= 100000000;
    cap = clock_capture(cs, 1, IKP_OK, &e);
    if (cap) {
        CHECK_EQ(ikp_capture_host_zero(cap, &h, &u, &e), IKP_OK);
        CHECK_EQ(h, (int64_t)(zero - 40000));
        CHECK_EQ(u, 700 + 1000);
        ikp_capture_free(cap);
    }
    /* contradictory readings: 40 us apart in offset, 1 ms apart in time */
    cs[0].gpu_ns = zero; cs[0].host_ns = (int64_t)(zero - 40000); cs[0].uncertainty_ns = 500;
    cs[1].gpu_ns = zero + 1000000; cs[1].host_ns = (int64_t)(zero + 1000000 - 80000); cs[1].uncertainty_ns = 500;
    CHECK(clock_capture(cs, 2, IKP_ERR_BAD_HEADER, &e) == NULL);
    CHECK(strstr(e.message, "contradict") != NULL);
    /* within uncertainty plus drift: accepted */
    cs[1].host_ns = (int64_t)(zero + 1000000 - 41099);
    cap = clock_capture(cs, 2, IKP_OK, &e);
    ikp_capture_free(cap);
    /* implausible readings: a host time of 0, an uncertainty of a second */
    cs[0].host_ns = 0;
    CHECK(clock_capture(cs, 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    CHECK(strstr(e.message, "reading 0 is not plausible") != NULL);
    /* host times near 2^63 (they wrapped to negative times in the export's
       sums): bounded as GPU times are, at 2^62 ns */
    cs[0].host_ns = INT64_MAX - 1000;
    CHECK(clock_capture(cs, 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    CHECK(strstr(e.message, "reading 0 is not plausible") != NULL);
    cs[0].host_ns = ((int64_t)1 << 62) + 1;
    CHECK(clock_capture(cs, 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    cs[0].host_ns = (int64_t)1 << 62;
    cap = clock_capture(cs, 1, IKP_OK, &e);
    if (cap) {
        CHECK_EQ(ikp_capture_host_zero(cap, &h, &u, &e), IKP_OK);
        CHECK(h > 0);
        ikp_capture_free(cap);
    }
    cs[0].host_ns = (int64_t)(zero - 40000); cs[0].uncertainty_ns = 1000000000u;
    CHECK(clock_capture(cs, 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    CHECK(clock_capture(cs, IKP_MAX_CLOCK_SYNCS + 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    /* no readings: host time is not known, and says why */
    cap = clock_capture(cs, 0, IKP_OK, &e);
    if (cap) {
        CHECK_EQ(ikp_capture_get_info(cap)->host_time_known, 0);
        CHECK_EQ(ikp_capture_host_zero(cap, &h, &u, &e), IKP_ERR_EMPTY);
        CHECK(strstr(e.message, "no reading") != NULL);
        ikp_capture_free(cap);
    }
}

static void test_cycles_wrap(void)
{
    /* a 6.5e9-cycle lane (3 wraps of the 32-bit stamp), a record every 1e9 cycles */
    enc_rec r[16];
    enc_lane L;
    uint64_t w[8 + 9 + 16], c0 = 0xFFFFFF00ull, g0 = 1000;
    double rate = 1.5;
    ikp_capture *cap;
    ikp_event ev[16];
    int i;
    for (i = 0; i < 7; i++) {
        r[2 * i].kind = ENC_B; r[2 * i].id = 0; r[2 * i].t = c0 + 100 + (uint64_t)i * 1000000000ull;
        r[2 * i + 1].kind = ENC_E; r[2 * i + 1].id = 0; r[2 * i + 1].t = r[2 * i].t + 3000;
    }
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.cycles = 1; L.recs = r; L.n = 14;
    L.g0 = g0; L.c0 = c0; L.c1 = c0 + 6500000000ull; L.g1 = g0 + (uint64_t)(6500000000.0 / rate);
    enc_ikp(w, 1, 16, 1, 1, 1, 1, &L, 1);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(regions(cap, 0, ev, 16), 7);
    for (i = 0; i < 7; i++) {
        /* the encoder's anchors are whole ns: the rate is exact to 1e-10 */
        CHECK_NEAR((double)ev[i].start_ps, (double)i * 1e9 / rate * NS, 1e-10 * i * 1e9 / rate * NS + 2);
        CHECK_NEAR((double)(ev[i].end_ps - ev[i].start_ps), 2000.0 * NS, 1);
    }
    CHECK_EQ(ikp_capture_get_info(cap)->backwards, 0);
    ikp_capture_free(cap);
}

static void test_dropped_ring_unmatched(void)
{
    enc_rec r[10];
    enc_lane L[3];
    uint64_t w[8 + 3 * (9 + 4)];
    ikp_capture *cap;
    ikp_event ev[8];
    ikp_stats *st;
    int i;
    for (i = 0; i < 10; i++) { r[i].kind = i % 2 ? ENC_E : ENC_B; r[i].id = 4; r[i].t = 100 + 10 * (uint64_t)i; }
    memset(L, 0, sizeof L);
    /* lane 0 bounded (keeps the first 4), lane 1 ring (keeps the last 4), lane 2 unfinalized */
    L[0].started = L[0].finalized = 1; L[0].recs = r; L[0].n = 10; L[0].g0 = 100; L[0].g1 = 300;
    L[1] = L[0]; L[1].block = 1; L[1].ring = 1;
    L[2] = L[0]; L[2].block = 2; L[2].finalized = 0; L[2].n = 3;
    enc_ikp(w, 3, 4, 1, 3, 1, 1, L, 3);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->dropped, 12);
    CHECK_EQ(lane_info(cap, 0).dropped, 6);
    CHECK_EQ(lane_info(cap, 1).dropped, 6);
    CHECK(lane_info(cap, 1).flags & IKP_LANE_RING);
    CHECK_EQ(ikp_capture_get_info(cap)->unfinalized_lanes, 1);
    CHECK_EQ(regions(cap, 0, ev, 8), 2);
    CHECK_EQ(ev[0].start_ps, 0); CHECK_EQ(ev[1].start_ps, 20 * NS);
    CHECK_EQ(regions(cap, 1, ev, 8), 2);
    CHECK_EQ(ev[0].start_ps, 60 * NS); CHECK_EQ(ev[1].start_ps, 80 * NS);
    CHECK_EQ(ev[1].end_ps, 90 * NS);
    CHECK_EQ(regions(cap, 2, ev, 8), 2); /* B E B: one region, one unmatched begin */
    CHECK_EQ(ev[1].kind, IKP_EVENT_UNMATCHED_BEGIN);
    CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
    CHECK_EQ(st->unmatched_begin, 1);
    CHECK_EQ(st->unmatched_end, 0);
    CHECK_EQ(st->regions, 5);
    ikp_stats_free(st);
    ikp_capture_free(cap);
    /* a staged ring lane that kept only its newest 2 records intact (its
       stage ring overflowed): stored 2, dropped 8; they are records 8 and 9,
       in slots 0 and 1 (8 mod 4), found from dropped, not from the ring end */
    w[8 + 13 + 7] = (1ull << 63) | 2u | (8ull << 32);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(lane_info(cap, 1).records, 2);
    CHECK_EQ(lane_info(cap, 1).dropped, 8);
    CHECK_EQ(regions(cap, 1, ev, 8), 1);
    CHECK_EQ(ev[0].start_ps, 80 * NS);
    CHECK_EQ(ev[0].end_ps, 90 * NS);
    ikp_capture_free(cap);
}

/* A ring of pairs (the device's ring build): a record shares a pair of
   slots with the next unless that is a begin (or an IKP_ANCHOR); else it
   takes the pair alone, the second slot a zero pad. The lane header's
   counts are slots, and the word after the ring counts the pads, so that
   the decoder can say how many records (not slots) were overwritten.
   12 records in 16 slots (4 pads: after I2, D3, B4 and I7) into a ring of
   8: the newest 8 slots hold 6 records and 2 pads, so 6 records were
   overwritten (8 slots less 2 pads). */
static void test_ring_pairs(void)
{
    uint64_t w[8 + 2 * (9 + 8)];
    uint64_t *pads_word = w + 8 + 8 + 8; /* lane 0's word after its 8-slot ring */
    ikp_capture *cap;
    ikp_event ev[8];
    enc_ring_pairs_example(w); /* those records; lane 1 unfinalized after B E I B E: slots 0-5, a pad at 3 */
    CHECK_EQ(*pads_word, 4);
    CHECK_EQ(w[8 + 7] >> 32 & 0x7FFFFFFFu, 8); /* the header's dropped count: slots */
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(lane_info(cap, 0).records, 6);
    CHECK_EQ(lane_info(cap, 0).dropped, 6);
    CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 0);
    CHECK_EQ(ikp_capture_get_info(cap)->invalid, 0);
    CHECK_EQ(regions(cap, 0, ev, 8), 4); /* B4..E4, B5..E5, the instants I6 and I7 */
    CHECK_EQ(ev[0].id, 4); CHECK_EQ(ev[0].start_ps, 50 * NS); CHECK_EQ(ev[0].end_ps, 80 * NS);
    CHECK_EQ(ev[1].id, 5); CHECK_EQ(ev[1].start_ps, 60 * NS); CHECK_EQ(ev[1].end_ps, 70 * NS);
    CHECK_EQ(ev[2].id, 6); CHECK_EQ(ev[2].kind, IKP_EVENT_INSTANT);
    CHECK_EQ(ev[3].id, 7); CHECK_EQ(ev[3].start_ps, 100 * NS);
    /* unfinalized: read up to the first pair that was never written, past the pad */
    CHECK_EQ(lane_info(cap, 1).records, 5);
    CHECK_EQ(regions(cap, 1, ev, 8), 3);
    ikp_capture_free(cap);
    /* a pads word that cannot be true (fewer than the 2 pads kept): the lane
       is counted corrupt, its records stay, its count stays in slots */
    *pads_word = 1;
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 1);
    CHECK_EQ(lane_info(cap, 0).records, 6);
    CHECK_EQ(lane_info(cap, 0).dropped, 8);
    ikp_capture_free(cap);
    /* more pads overwritten than half the slots overwritten (each
       overwritten pair held a record): the same */
    *pads_word = 7;
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 1);
    CHECK_EQ(lane_info(cap, 0).dropped, 8);
    ikp_capture_free(cap);
    /* half exactly (4 pairs of a record and a pad): true */
    *pads_word = 6;
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 0);
    CHECK_EQ(lane_info(cap, 0).dropped, 4);
    ikp_capture_free(cap);
    /* a pads word so large that twice what it says was overwritten wraps
       past 2^64 to nothing (2^63 + the 2 kept): corrupt, not a count of
       2^63 records less */
    *pads_word = (1ull << 63) + 2;
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 1);
    CHECK_EQ(lane_info(cap, 0).dropped, 8);
    CHECK_EQ(ikp_capture_get_info(cap)->dropped, 8);
    ikp_capture_free(cap);
    /* a stored count past the ring and a false pads word: one corrupt lane */
    *pads_word = 1;
    w[8 + 7] = (w[8 + 7] & ~0xFFFFFFFFull) | 9u;
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 1);
    ikp_capture_free(cap);
}

static void test_header_counters(void)
{
    enc_lane L;
    uint64_t w[8 + 4 * (9 + 2)];
    static const enc_rec r[] = {{ENC_E, 1, 50, 0}, {ENC_B, 1, 60, 0}};
    ikp_capture *cap;
    ikp_stats *st;
    membuf m = {0, 0, 0};
    memset(&L, 0, sizeof L);
    L.block = 2; L.started = L.finalized = 1; L.recs = r; L.n = 2; L.g0 = 10; L.g1 = 70;
    enc_ikp(w, 4, 2, 1, 4, 1, 1, &L, 1);
    w[3] = 5;  /* device: 5 lanes refused */
    w[4] = 9;  /* device: grid needs 9 */
    w[5] = 1;  /* a lane claimed twice */
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_IKP, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->active_lanes, 1);
    CHECK_EQ(ikp_capture_get_info(cap)->refused_lanes, 5);
    CHECK_EQ(ikp_capture_get_info(cap)->lanes_needed, 9);
    CHECK_EQ(ikp_capture_get_info(cap)->claimed_twice, 1);
    CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
    CHECK_EQ(st->unmatched_begin, 1);
    CHECK_EQ(st->unmatched_end, 1);
    CHECK_EQ(ikp_info_write_text(st, mem_write, &m, NULL), IKP_OK);
    CHECK(m.p && strstr(m.p, "buffer too small for the grid: 5 lanes not recorded (9 needed, 4 in buffer)"));
    CHECK(m.p && strstr(m.p, "1 begins, 1 ends"));
    free(m.p);
    ikp_stats_free(st);
    ikp_capture_free(cap);
}

static void test_stats(void)
{
    /* 100 regions of 1..100 ns, then 50% busy over the lane */
    enc_rec r[200];
    enc_lane L;
    uint64_t *w = (uint64_t *)malloc(enc_ikp_words(1, 256) * 8), t = 1000;
    ikp_capture *cap;
    ikp_stats *st;
    membuf m = {0, 0, 0};
    int i;
    for (i = 0; i < 100; i++) {
        uint64_t d = (uint64_t)(i * 37 % 100) + 1; /* a permutation of 1..100 */
        r[2 * i].kind = ENC_B; r[2 * i].id = 3; r[2 * i].t = t;
        r[2 * i + 1].kind = ENC_E; r[2 * i + 1].id = 3; r[2 * i + 1].t = t + d;
        t += 2 * d; /* busy d, idle d */
    }
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 200; L.g0 = 1000; L.g1 = t;
    enc_ikp(w, 1, 256, 1, 1, 1, 1, &L, 1);
    cap = open_fmt(w, enc_ikp_words(1, 256), IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        const char *nm[4] = {"a", "b", "c", "tile \"x\""};
        ikp_capture_free(cap);
        {
            ikp_decode_options o;
            memset(&o, 0, sizeof o);
            o.event_names = nm; o.num_event_names = 4;
            CHECK_EQ(ikp_capture_open(w, enc_ikp_words(1, 256), &o, &cap, NULL), IKP_OK);
        }
        CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
        CHECK_EQ(st->num_events, 1);
        CHECK(strcmp(st->events[0].name, "tile \"x\"") == 0);
        CHECK_EQ(st->events[0].count, 100);
        CHECK_NEAR(st->events[0].total_ns, 5050, 1e-9);
        CHECK_NEAR(st->events[0].min_ns, 1, 1e-9);
        CHECK_NEAR(st->events[0].max_ns, 100, 1e-9);
        CHECK_NEAR(st->events[0].mean_ns, 50.5, 1e-9);
        CHECK_NEAR(st->events[0].p50_ns, 50, 1e-9);
        CHECK_NEAR(st->events[0].p90_ns, 90, 1e-9);
        CHECK_NEAR(st->events[0].p99_ns, 99, 1e-9);
        CHECK_EQ(st->num_groups, 1);
        /* span = first begin to last end: all but the last idle gap (99*37%100+1 = 64) */
        CHECK_NEAR(st->groups[0].busy_fraction, 5050.0 / (2 * 5050 - 64), 1e-9);
        CHECK_EQ(ikp_stats_write_json(st, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "\"name\":\"tile \\\"x\\\"\",\"id\":3,\"count\":100,\"total_ns\":5050.000,\"min_ns\":1.000,\"mean_ns\":50.500,\"p50_ns\":50.000,\"p90_ns\":90.000,\"p99_ns\":99.000,\"max_ns\":100.000"));
        free(m.p);
        ikp_stats_free(st);
        ikp_capture_free(cap);
    }
    free(w);
}

static void test_tirx(void)
{
    /* 3 blocks x 2 groups; timer near the 2^32 wrap; a finalize record */
    enc_rec r[6][4];
    enc_lane L[6];
    uint64_t w[1 + 6 * 4], base = 0xFFFFFF00ull;
    ikp_capture *cap;
    ikp_event ev[4];
    int i;
    memset(L, 0, sizeof L);
    for (i = 0; i < 6; i++) {
        uint64_t t = base + (uint64_t)i * 100;
        r[i][0].kind = ENC_B; r[i][0].id = (unsigned)i; r[i][0].t = t;
        r[i][1].kind = ENC_E; r[i][1].id = (unsigned)i; r[i][1].t = t + 300 + (uint64_t)i;
        r[i][2].kind = ENC_I; r[i][2].id = 9; r[i][2].t = t + 400;
        r[i][3].kind = 'F'; r[i][3].id = 0; r[i][3].t = t + 500;
        L[i].block = (uint32_t)i / 2; L[i].group = (uint32_t)i % 2; L[i].recs = r[i]; L[i].n = 4;
    }
    enc_tirx(w, sizeof w / 8, 3, 2, 6, L, 6);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_TIRX);
    check_peer_totals(cap);
    CHECK_EQ(ikp_capture_get_info(cap)->num_blocks, 3);
    CHECK_EQ(ikp_capture_get_info(cap)->num_groups, 2);
    for (i = 0; i < 6; i++) {
        CHECK_EQ(lane_info(cap, (uint32_t)i).block, i / 2);
        CHECK_EQ(lane_info(cap, (uint32_t)i).group, i % 2);
        CHECK_EQ(regions(cap, (uint32_t)i, ev, 4), 2);
        CHECK_EQ(ev[0].id, i);
        CHECK_EQ(ev[0].start_ps, (int64_t)i * 100 * NS);
        CHECK_EQ(ev[0].end_ps - ev[0].start_ps, (300 + i) * NS);
        CHECK_EQ(ev[1].kind, IKP_EVENT_INSTANT);
    }
    ikp_capture_free(cap);
    /* persistent layout: write_stride (8) > lanes (6) */
    {
        uint64_t w2[1 + 8 * 4];
        enc_tirx(w2, sizeof w2 / 8, 3, 2, 8, L, 6);
        cap = open_fmt(w2, sizeof w2 / 8, IKP_FORMAT_TIRX, IKP_OK);
        if (cap) {
            CHECK_EQ(regions(cap, 5, ev, 4), 2);
            CHECK_EQ(ev[0].id, 5);
            CHECK_EQ(ev[0].end_ps - ev[0].start_ps, 305 * NS);
            ikp_capture_free(cap);
        }
    }
    /* out-of-range lane in a tag: counted, skipped */
    w[1] |= (uint64_t)40 << 12;
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_TIRX, IKP_OK);
    if (cap) { CHECK_EQ(ikp_capture_get_info(cap)->out_of_range, 1); ikp_capture_free(cap); }
}

static void test_flashinfer(void)
{
    /* 2 blocks x 3 groups; group only recoverable from position */
    enc_rec r[6][3];
    enc_lane L[6];
    uint64_t w[1 + 6 * 3];
    ikp_capture *cap;
    ikp_event ev[4];
    int i;
    memset(L, 0, sizeof L);
    for (i = 0; i < 6; i++) {
        uint64_t t = 5000 + (uint64_t)i * 10;
        r[i][0].kind = ENC_B; r[i][0].id = 7; r[i][0].t = t;
        r[i][1].kind = ENC_I; r[i][1].id = 8; r[i][1].t = t + 5; /* overwritten, as flashinfer does */
        r[i][2].kind = ENC_E; r[i][2].id = 7; r[i][2].t = t + 100 + (uint64_t)i;
        L[i].block = (uint32_t)i / 3; L[i].group = (uint32_t)i % 3; L[i].sm = 10 + (uint32_t)i;
        L[i].recs = r[i]; L[i].n = 3;
    }
    enc_flashinfer(w, sizeof w / 8, 2, 3, L, 6);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_FLASHINFER);
    check_peer_totals(cap);
    for (i = 0; i < 6; i++) {
        const ikp_lane_info li_v = lane_info(cap, (uint32_t)i), *li = &li_v;
        CHECK_EQ(li->block, i / 3);
        CHECK_EQ(li->group, i % 3);
        CHECK_EQ(li->sm, 10 + i);
        CHECK_EQ(regions(cap, (uint32_t)i, ev, 4), 1);
        CHECK_EQ(ev[0].end_ps - ev[0].start_ps, (100 + i) * NS);
    }
    ikp_capture_free(cap);
    /* no SM bits set (all on SM 0): told apart from TIRx by positions */
    for (i = 0; i < 6; i++) L[i].sm = 0;
    enc_flashinfer(w, sizeof w / 8, 2, 3, L, 6);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_FLASHINFER);
        CHECK_EQ(lane_info(cap, 4).group, 1);
        ikp_capture_free(cap);
    }
}

static void test_flashinfer_4096(void)
{
    /* 4096 lanes: cannot be flashinfer when auto-detected; forced flashinfer still decodes */
    const uint32_t nb = 2048, ng = 2, lanes = nb * ng;
    size_t words = 1 + (size_t)lanes * 2, i;
    uint64_t *w = (uint64_t *)malloc(words * 8);
    enc_lane *L = (enc_lane *)calloc(lanes, sizeof(enc_lane));
    enc_rec *r = (enc_rec *)calloc((size_t)lanes * 2, sizeof(enc_rec));
    ikp_capture *cap;
    ikp_event ev[2];
    for (i = 0; i < lanes; i++) {
        r[2 * i].kind = ENC_B; r[2 * i].id = 1; r[2 * i].t = 100;
        r[2 * i + 1].kind = ENC_E; r[2 * i + 1].id = 1; r[2 * i + 1].t = 150 + i % 7;
        L[i].block = (uint32_t)i / ng; L[i].group = (uint32_t)i % ng; L[i].recs = r + 2 * i; L[i].n = 2;
    }
    enc_tirx(w, words, nb, ng, lanes, L, lanes);
    cap = open_fmt(w, words, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_TIRX);
        CHECK_EQ(ikp_capture_get_info(cap)->num_lanes, 4096);
        CHECK_EQ(regions(cap, 4095, ev, 2), 1);
        CHECK_EQ(ev[0].end_ps - ev[0].start_ps, (50 + 4095 % 7) * NS);
        ikp_capture_free(cap);
    }
    enc_flashinfer(w, words, nb, ng, L, lanes);
    cap = open_fmt(w, words, IKP_FORMAT_FLASHINFER, IKP_OK);
    if (cap) {
        CHECK_EQ(lane_info(cap, 4095).group, 1);
        CHECK_EQ(lane_info(cap, 4095).block, 2047);
        CHECK_EQ(regions(cap, 4095, ev, 2), 1);
        CHECK_EQ(ev[0].end_ps - ev[0].start_ps, (50 + 4095 % 7) * NS);
        ikp_capture_free(cap);
    }
    free(w); free(L); free(r);
}

static void test_bad_input(void)
{
    uint64_t w[8 + 9 + 4];
    static const enc_rec r[] = {{ENC_B, 0, 100, 0}, {ENC_E, 0, 90, 0}, {ENC_B, 1, 200, 0}, {ENC_E, 1, 300, 0}};
    enc_lane L;
    ikp_capture *cap;
    ikp_error e;
    size_t n;
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 4; L.g0 = 50; L.g1 = 400;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    /* every truncation of the buffer: an error, never a crash */
    for (n = 0; n < sizeof w / 8; n++)
        CHECK(ikp_capture_open(w, n, NULL, &cap, &e) != IKP_OK && cap == NULL);
    CHECK_EQ(ikp_capture_open(w, 0, NULL, &cap, &e), IKP_ERR_EMPTY);
    CHECK_EQ(ikp_capture_open(w, 4, NULL, &cap, &e), IKP_ERR_TRUNCATED);
    CHECK_EQ(ikp_capture_open(w, 20, NULL, &cap, &e), IKP_ERR_TRUNCATED);
    CHECK(strstr(e.message, "claims 1 lanes x 4 records = 21 words, buffer holds 20") != NULL);
    /* time backwards: counted, the region kept with zero length */
    cap = open_fmt(w, 21, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        ikp_event ev[4];
        CHECK_EQ(ikp_capture_get_info(cap)->backwards, 1);
        CHECK_EQ(regions(cap, 0, ev, 4), 2);
        CHECK_EQ(ev[0].end_ps, ev[0].start_ps);
        CHECK_EQ(ev[1].end_ps - ev[1].start_ps, 100 * NS);
        CHECK(nesting_ok(cap));
        ikp_capture_free(cap);
    }
    /* reserved tag bits and a zero word inside the count: invalid, counted */
    w[8 + 8 + 2] |= 1ull << 20;
    w[8 + 8 + 3] = 0;
    cap = open_fmt(w, 21, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) { CHECK_EQ(ikp_capture_get_info(cap)->invalid, 2); ikp_capture_free(cap); }
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    /* stored count beyond capacity: clamped, lane counted as damaged */
    w[8 + 7] = (1ull << 63) | 1000;
    cap = open_fmt(w, 21, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        CHECK_EQ(lane_info(cap, 0).records, 4);
        CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 1);
        ikp_capture_free(cap);
    }
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    /* header field errors */
    w[1] = 0 | (4ull << 32);
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
    w[1] = 0xFFFFFFFFull | (0xFFFFFFFFull << 32);
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_ERR_SIZE_OVERFLOW);
    w[1] = 1000 | (4ull << 32);
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_ERR_TRUNCATED);
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    w[0] += 1ull << 32; /* version 2 */
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_ERR_BAD_VERSION);
    /* lane header damage: group >= groups -> lane skipped and counted */
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    w[8 + 1] |= 5ull << 32;
    cap = open_fmt(w, 21, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) { CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 1); CHECK_EQ(ikp_capture_get_info(cap)->records, 0); ikp_capture_free(cap); }
    /* all-zero, all-ones, 0x7FFF.. filled buffers */
    memset(w, 0, sizeof w);
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_ERR_BAD_MAGIC);
    memset(w, 0xFF, sizeof w);
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_ERR_UNKNOWN_FORMAT);
    for (n = 0; n < 21; n++) w[n] = 0x7FFFFFFFFFFFFFFFull;
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_ERR_UNKNOWN_FORMAT);
    /* a buffer of one format forced through another's decoder */
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    CHECK(ikp_capture_open(w, 21, NULL, &cap, &e) == IKP_OK);
    ikp_capture_free(cap);
    {
        ikp_decode_options o;
        memset(&o, 0, sizeof o);
        o.format = IKP_FORMAT_TIRX; /* lanes beyond the 20-bit lane field */
        CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_BAD_HEADER);
        o.format = IKP_FORMAT_FLASHINFER;
        CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_TRUNCATED);
        w[0] = (2ull << 32) | 3; /* a tirx header forced as IKP */
        o.format = IKP_FORMAT_IKP;
        CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_BAD_MAGIC);
        o.format = (ikp_format)99;
        CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
    }
    CHECK_EQ(ikp_capture_open(NULL, 3, NULL, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(ikp_result_string(IKP_ERR_TRUNCATED), "input truncated") == 0);
}

static int file_bytes(const char *path, unsigned char **out, size_t *n)
{
    FILE *f = fopen(path, "rb");
    long sz;
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = (unsigned char *)malloc((size_t)sz + 1);
    *n = fread(*out, 1, (size_t)sz, f);
    fclose(f);
    return *n == (size_t)sz;
}

static void test_capture_file(void)
{
    static const enc_rec r[] = {{ENC_B, 0, 100, 0}, {ENC_E, 0, 190, 0}, {ENC_I, 1, 200, 0}};
    const char *ev_names[2] = {"load \"tile\"", "done\x01"};
    const char *gr_names[1] = {"producer"};
    enc_lane L;
    uint64_t w[8 + 9 + 4];
    ikp_capture *cap;
    ikp_error e;
    unsigned char *bytes;
    size_t n, cut;
    const char *path = "build/test-out/roundtrip.ikp";
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 3; L.g0 = 50; L.g1 = 400;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    CHECK_EQ(save_words(path, w, 21, IKP_FORMAT_IKP, ev_names, 2, gr_names, 1), IKP_OK);
    CHECK_EQ(ikp_capture_open_path(path, NULL, &cap, &e), IKP_OK);
    if (cap) {
        char *js;
        CHECK(strcmp(ikp_event_name(cap, 0), "load \"tile\"") == 0);
        CHECK(strcmp(ikp_group_name(cap, 0), "producer") == 0);
        CHECK(ikp_event_name(cap, 2) == NULL);
        CHECK_EQ(ikp_capture_get_info(cap)->records, 3);
        js = chrome(cap, IKP_BY_BLOCK);
        CHECK(js && strstr(js, "\"name\":\"load \\\"tile\\\"\"") != NULL);
        CHECK(js && strstr(js, "\"name\":\"done\\u0001\"") != NULL);
        CHECK(js && strstr(js, "\"name\":\"producer\"") != NULL);
        free(js);
        ikp_capture_free(cap);
    }
    /* the file cut at every length: an error naming an offset, never a crash */
    if (file_bytes(path, &bytes, &n)) {
        int all = 1;
        for (cut = 0; cut < n; cut++) {
            ikp_result rr = ikp_capture_open_data(bytes, cut, NULL, &cap, &e);
            if (rr == IKP_OK) { all = 0; ikp_capture_free(cap); }
            else if (cut > 0 && e.offset < 0) all = 0;
        }
        CHECK(all);
        /* names section claiming more than the file holds */
        bytes[24] = 0xFF; bytes[25] = 0xFF;
        CHECK_EQ(ikp_capture_open_data(bytes, n, NULL, &cap, &e), IKP_ERR_TRUNCATED);
        CHECK_EQ(e.offset, 24);
        free(bytes);
    } else CHECK(0);
    /* bare buffer file, not a whole number of words */
    {
        unsigned char b[20];
        memcpy(b, w, 20);
        CHECK_EQ(ikp_capture_open_data(b, 21, NULL, &cap, &e), IKP_ERR_TRUNCATED);
        CHECK_EQ(e.offset, 16);
        CHECK_EQ(ikp_capture_open_data(w, 168, NULL, &cap, &e), IKP_OK);
        ikp_capture_free(cap);
    }
    /* an output path that cannot be written: error, nothing left behind */
    cap = open_fmt(w, 21, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        FILE *f;
        CHECK_EQ(ikp_write_chrome_path(cap, NULL, "build/test-out/no/such/dir/t.json", &e), IKP_ERR_IO);
        /* a directory in the way: the rename fails, the temporary file is removed */
        CHECK_EQ(ikp_write_chrome_path(cap, NULL, "build/test-out", &e), IKP_ERR_IO);
        f = fopen("build/test-out.ikp-tmp", "rb");
        CHECK(f == NULL);
        if (f) fclose(f);
        /* a full disk: written in place (a device), the error is reported */
        CHECK_EQ(ikp_write_chrome_path(cap, NULL, "/dev/full", &e), IKP_ERR_IO);
        f = fopen("/dev/full", "wb");
        if (f) {
            CHECK_EQ(ikp_write_chrome_file(cap, NULL, f, &e), IKP_ERR_IO);
            fclose(f);
        }
        ikp_capture_free(cap);
    }
}

static void *plain_alloc(size_t n, void *u)
{
    (void)u;
    return malloc(n);
}

static int refuse_write(void *u, const void *d, size_t n)
{
    (void)u; (void)d; (void)n;
    return 1;
}

/* Every call that can fail says why in its ikp_error; a capture is written
   from the capture object, the same bytes to a callback, a FILE* and a path. */
static void test_error_convention(void)
{
    static const enc_rec r[] = {{ENC_B, 0, 100, 0}, {ENC_E, 0, 190, 0}};
    const char *ev_names[1] = {"load"};
    enc_lane L;
    uint64_t w[8 + 9 + 4], h[8];
    ikp_capture *cap;
    ikp_stats *st = NULL;
    ikp_lane_info li;
    ikp_error e;
    membuf m = {0, 0, 0};
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 2; L.g0 = 50; L.g1 = 400;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    memset(&e, 0, sizeof e);
    CHECK_EQ(ikp_buffer_header(h, 0, 4, 0, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "at least one lane") != NULL);
    CHECK_EQ(ikp_buffer_header(h, 0xFFFFFFFFu, 0xFFFFFFFFu, 0, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "overflows") != NULL);
    CHECK_EQ(ikp_buffer_header(h, 1, 4, 0, &e), IKP_OK);
    CHECK(e.code == IKP_OK && e.message[0] == 0);
    { /* a partial allocator is refused, never filled in with the default */
        ikp_decode_options o;
        ikp_name_list nl;
        memset(&o, 0, sizeof o);
        o.allocator.alloc = plain_alloc;
        cap = NULL;
        CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(cap == NULL && strstr(e.message, "(alloc set, realloc NULL, free NULL)") != NULL);
        CHECK_EQ(ikp_capture_open_data(w, 168, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK_EQ(ikp_capture_open_path("build/test-out/written.ikp", &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK_EQ(ikp_name_list_parse("a,b", 3, ',', &o.allocator, &nl, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(nl.names == NULL && nl.count == 0);
    }
    cap = open_fmt(w, 21, IKP_FORMAT_IKP, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_lane(cap, 1, &li, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "lane 1 is past the capture's 1 lanes") != NULL && e.lane == 1);
    CHECK_EQ(ikp_capture_lane(cap, 0, &li, &e), IKP_OK);
    CHECK_EQ(ikp_stats_compute(cap, &st, &e), IKP_OK);
    if (st) {
        CHECK_EQ(ikp_stats_write_text(st, refuse_write, NULL, &e), IKP_ERR_WRITE);
        CHECK(e.code == IKP_ERR_WRITE && strstr(e.message, "writing the summary failed") != NULL);
        CHECK_EQ(ikp_stats_write_json(st, refuse_write, NULL, &e), IKP_ERR_WRITE);
        CHECK(strstr(e.message, "writing the statistics failed") != NULL);
        CHECK_EQ(ikp_info_write_text(NULL, refuse_write, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "NULL argument") != NULL);
        ikp_stats_free(st);
    }
    /* capture writing: callback, FILE* and path give the same bytes, which open to the same capture */
    CHECK_EQ(ikp_capture_write(cap, refuse_write, NULL, &e), IKP_ERR_WRITE);
    CHECK(strstr(e.message, "capture header") != NULL);
    CHECK_EQ(ikp_capture_write(NULL, mem_write, &m, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_capture_write_path(cap, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_capture_write_file(cap, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    ikp_capture_free(cap);
    CHECK_EQ(save_words("build/test-out/written.ikp", w, 21, IKP_FORMAT_IKP, ev_names, 1, NULL, 0), IKP_OK);
    CHECK_EQ(ikp_capture_open_path("build/test-out/written.ikp", NULL, &cap, &e), IKP_OK);
    if (cap) {
        unsigned char *bytes = NULL;
        size_t n = 0;
        FILE *f = fopen("build/test-out/written_file.ikp", "wb");
        CHECK_EQ(ikp_capture_write(cap, mem_write, &m, &e), IKP_OK);
        CHECK(f != NULL);
        if (f) {
            CHECK_EQ(ikp_capture_write_file(cap, f, &e), IKP_OK);
            fclose(f);
        }
        CHECK(file_bytes("build/test-out/written.ikp", &bytes, &n) && n == m.n && m.p && !memcmp(bytes, m.p, n));
        free(bytes);
        bytes = NULL;
        CHECK(file_bytes("build/test-out/written_file.ikp", &bytes, &n) && n == m.n && m.p && !memcmp(bytes, m.p, n));
        free(bytes);
        CHECK(strcmp(ikp_event_name(cap, 0), "load") == 0 && ikp_capture_get_info(cap)->records == 2);
        ikp_capture_free(cap);
    }
    free(m.p);
}

static void test_name_list(void)
{
    ikp_name_list l;
    ikp_error e;
    char big[300];
    CHECK_EQ(ikp_name_list_parse("a,,c", 4, ',', NULL, &l, &e), IKP_OK);
    CHECK_EQ(l.count, 3);
    CHECK(strcmp(l.names[0], "a") == 0 && l.names[1] == NULL && strcmp(l.names[2], "c") == 0);
    ikp_name_list_free(&l);
    CHECK_EQ(ikp_name_list_parse("x\r\ny\n", 5, '\n', NULL, &l, &e), IKP_OK);
    CHECK_EQ(l.count, 2);
    CHECK(strcmp(l.names[0], "x") == 0 && strcmp(l.names[1], "y") == 0);
    ikp_name_list_free(&l);
    CHECK_EQ(ikp_name_list_parse("a\0b", 3, ',', NULL, &l, &e), IKP_ERR_BAD_NAMES);
    CHECK_EQ(e.offset, 1);
    memset(big, 'n', sizeof big);
    CHECK_EQ(ikp_name_list_parse(big, sizeof big, ',', NULL, &l, &e), IKP_ERR_BAD_NAMES);
    CHECK_EQ(ikp_name_list_parse("", 0, ',', NULL, &l, &e), IKP_OK);
    CHECK_EQ(l.count, 1);
    ikp_name_list_free(&l);
}

/* a counting allocator: every allocation through it, none left over */
static long live_allocs;
static void *t_alloc(size_t n, void *u) { (void)u; live_allocs++; return malloc(n); }
static void *t_realloc(void *p, size_t n, void *u) { (void)u; if (!p) live_allocs++; return realloc(p, n); }
static void t_free(void *p, void *u) { (void)u; if (p) live_allocs--; free(p); }

static void test_allocator_and_many_tracks(void)
{
    /* 100 regions that all overlap without nesting: tracks beyond the shared ones */
    enc_rec r[200];
    enc_lane L;
    uint64_t *w = (uint64_t *)malloc(enc_ikp_words(1, 256) * 8);
    ikp_decode_options o;
    ikp_capture *cap;
    ikp_stats *st;
    char *js;
    int i;
    for (i = 0; i < 100; i++) {
        r[i].kind = ENC_B; r[i].id = (unsigned)i; r[i].t = 100 + (uint64_t)i;
        r[100 + i].kind = ENC_E; r[100 + i].id = (unsigned)i; r[100 + i].t = 1000 + (uint64_t)i;
    }
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 200; L.g0 = 50; L.g1 = 2000;
    enc_ikp(w, 1, 256, 1, 1, 1, 1, &L, 1);
    memset(&o, 0, sizeof o);
    o.allocator.alloc = t_alloc; o.allocator.realloc = t_realloc; o.allocator.free = t_free;
    CHECK_EQ(ikp_capture_open(w, enc_ikp_words(1, 256), &o, &cap, NULL), IKP_OK);
    if (cap) {
        CHECK(live_allocs > 0);
        CHECK(nesting_ok(cap));
        js = chrome(cap, IKP_BY_BLOCK);
        CHECK_EQ(count_str(js, "\"ph\":\"X\""), 100);
        free(js);
        CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
        CHECK_EQ(st->num_events, 100);
        ikp_stats_free(st);
        ikp_capture_free(cap);
    }
    CHECK_EQ(live_allocs, 0);
    free(w);
}


/* ---- names from the API, totals, locales, duplicates, detection, peer memory, files ---- */

/* a counting allocator that also tracks the peak of live bytes */
typedef struct meter { size_t live, peak, largest, total; } meter;
static void *m_alloc(size_t n, void *u)
{
    meter *m = (meter *)u;
    size_t *p = (size_t *)malloc(n + sizeof(size_t) * 2);
    if (!p) return NULL;
    p[0] = n;
    m->live += n; m->total += n;
    if (m->live > m->peak) m->peak = m->live;
    if (n > m->largest) m->largest = n;
    return p + 2;
}
static void m_free(void *q, void *u)
{
    meter *m = (meter *)u;
    size_t *p;
    if (!q) return;
    p = (size_t *)q - 2;
    m->live -= p[0];
    free(p);
}
static void *m_realloc(void *q, size_t n, void *u)
{
    void *r = m_alloc(n, u);
    if (r && q) {
        size_t old = ((size_t *)q - 2)[0];
        memcpy(r, q, old < n ? old : n);
        m_free(q, u);
    }
    return r;
}
static ikp_allocator metered(meter *m)
{
    ikp_allocator a;
    memset(m, 0, sizeof *m);
    a.alloc = m_alloc; a.realloc = m_realloc; a.free = m_free; a.user = m;
    return a;
}
/* a sink that counts bytes */
static int count_sink(void *u, const void *d, size_t n) { (void)d; *(size_t *)u += n; return 0; }

static void test_api_names(void)
{
    static const enc_rec r[] = {{ENC_B, 0, 100, 0}, {ENC_E, 0, 190, 0}, {ENC_B, 1, 200, 0}, {ENC_E, 1, 250, 0}};
    enc_lane L;
    uint64_t w[8 + 9 + 4];
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    ikp_error e;
    char *big = (char *)malloc(70000), ctl[256], *js;
    const char *names[2];
    const char **many = (const char **)calloc(16385, sizeof(char *));
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 4; L.g0 = 50; L.g1 = 400;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    memset(&o, 0, sizeof o);
    o.event_names = names;
    o.num_event_names = 2;
    /* a 65,000-byte name: refused like a name from a file, nothing opened */
    memset(big, 'x', 65000); big[65000] = 0;
    names[0] = "ok"; names[1] = big;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_BAD_NAMES);
    CHECK(cap == NULL && strstr(e.message, "event name 1 is longer than 255 bytes") != NULL);
    /* 256 bytes: refused; 255: taken */
    big[256] = 0;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_BAD_NAMES);
    big[255] = 0;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_OK);
    ikp_capture_free(cap);
    /* 11,000 control bytes (6 bytes each once escaped): refused */
    memset(big, 1, 11000); big[11000] = 0;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_BAD_NAMES);
    /* group names: the same limit */
    o.group_names = names; o.num_group_names = 2;
    names[1] = "fine";
    big[300] = 0;
    names[0] = big;
    o.event_names = NULL; o.num_event_names = 0;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_BAD_NAMES);
    CHECK(strstr(e.message, "group name 0") != NULL);
    o.group_names = NULL; o.num_group_names = 0;
    /* more names than event ids */
    o.event_names = many; o.num_event_names = 16385;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_BAD_NAMES);
    o.num_event_names = 16384;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_OK);
    ikp_capture_free(cap);
    /* the longest names of the worst bytes: every writer copes, names round-trip */
    memset(ctl, 1, 255); ctl[255] = 0;
    names[0] = ctl; names[1] = ctl;
    o.event_names = names; o.num_event_names = 2;
    o.group_names = names; o.num_group_names = 1;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_OK);
    if (cap) {
        ikp_stats *st;
        size_t n = 0;
        js = chrome(cap, IKP_BY_BLOCK);
        CHECK(js && count_str(js, "\\u0001") == 255 * 3); /* two regions and the group name */
        free(js);
        CHECK_EQ(ikp_stats_compute(cap, &st, &e), IKP_OK);
        CHECK_EQ(ikp_stats_write_json(st, count_sink, &n, NULL), IKP_OK);
        CHECK_EQ(ikp_stats_write_text(st, count_sink, &n, NULL), IKP_OK);
        ikp_stats_free(st);
        ikp_capture_free(cap);
    }
    free(big);
    free(many);
}

static void test_rates_and_totals(void)
{
    /* 1000 nested regions of one event, each 19 hours long, on a
       globaltimer lane whose stamps wrap every 4.29 s (instants keep the
       steps below one wrap): their total, 6.8e19 ps, would wrap 64 bits */
    enum { K = 1000 };
    const uint64_t hours19 = 19ull * 3600 * 1000000000ull, step = 4000000000ull;
    size_t nsteps = (size_t)(hours19 / step), n = 0, i;
    enc_rec *r = (enc_rec *)malloc((2 * K + nsteps + 2) * sizeof(enc_rec));
    uint64_t cap_n = 2 * K + nsteps + 2, *w = (uint64_t *)malloc(enc_ikp_words(1, (uint32_t)cap_n) * 8);
    enc_lane L;
    ikp_decode_options o;
    ikp_capture *cap;
    ikp_stats *st;
    ikp_error e;
    for (i = 0; i < K; i++) { r[n].kind = ENC_B; r[n].id = 3; r[n].t = 1000; n++; }
    for (i = 1; i <= nsteps; i++) { r[n].kind = ENC_I; r[n].id = 4; r[n].t = 1000 + i * step; n++; }
    for (i = 0; i < K; i++) { r[n].kind = ENC_E; r[n].id = 3; r[n].t = 1000 + hours19; n++; }
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = n; L.g0 = 500; L.g1 = 2000 + hours19;
    enc_ikp(w, 1, (uint32_t)cap_n, 1, 1, 1, 1, &L, 1);
    cap = open_fmt(w, enc_ikp_words(1, (uint32_t)cap_n), IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        CHECK_EQ(ikp_stats_compute(cap, &st, &e), IKP_OK);
        if (st) {
            const ikp_event_stats *es = &st->events[0];
            CHECK_EQ(es->id, 3);
            CHECK_EQ(es->count, K);
            CHECK_NEAR(es->total_ns / ((double)K * (double)hours19), 1.0, 1e-12);
            CHECK(es->mean_ns >= es->min_ns && es->mean_ns <= es->max_ns);
            CHECK_NEAR(es->mean_ns, (double)hours19, 1.0);
            { /* the summary's columns never touch, however wide a total */
                membuf m = {0, 0, 0};
                CHECK_EQ(ikp_stats_write_text(st, mem_write, &m, NULL), IKP_OK);
                if (m.p) {
                    const char *line = strstr(m.p, "\nevent");
                    int fields = 0, in = 0;
                    line = line ? strchr(line + 1, '\n') : NULL; /* the event's line after the heading */
                    for (line = line ? line + 1 : NULL; line && *line && *line != '\n'; line++) {
                        if (*line != ' ' && !in) fields++;
                        in = *line != ' ';
                    }
                    CHECK_EQ(fields, 10); /* "event 3", then 8 numbers */
                    free(m.p);
                }
            }
            ikp_stats_free(st);
        }
        ikp_capture_free(cap);
    }
    free(r);
    free(w);
    /* header clocks and forced rates outside 50 MHz .. 20 GHz are refused */
    {
        static const enc_rec rr[] = {{ENC_B, 0, 100, 0}, {ENC_E, 0, 300, 0}};
        uint64_t b[8 + 9 + 2];
        double bad[5], good[3];
        memset(&L, 0, sizeof L);
        L.started = L.finalized = 1; L.cycles = 1; L.recs = rr; L.n = 2; L.g0 = 50; L.g1 = 400; L.c0 = 10; L.c1 = 700;
        enc_ikp(b, 1, 2, 1, 1, 1, 1, &L, 1);
        b[2] = 1; /* 1 kHz */
        CHECK_EQ(ikp_capture_open(b, 19, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
        CHECK(e.offset == 16 && strstr(e.message, "1 kHz") != NULL);
        b[2] = 25000000; /* 25 GHz */
        CHECK_EQ(ikp_capture_open(b, 19, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
        b[2] = 0; /* unknown: fine */
        CHECK_EQ(ikp_capture_open(b, 19, NULL, &cap, &e), IKP_OK);
        ikp_capture_free(cap);
        b[2] = 1980000;
        bad[0] = 1e-9; bad[1] = 1.0 / 0.0; bad[2] = 0.0 / 0.0; bad[3] = -1.0; bad[4] = 21.0;
        good[0] = 0.05; good[1] = 1.98; good[2] = 20.0;
        memset(&o, 0, sizeof o);
        for (i = 0; i < 5; i++) {
            o.cycles_per_ns = bad[i];
            CHECK_EQ(ikp_capture_open(b, 19, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
            CHECK(strstr(e.message, "cycles_per_ns") != NULL);
        }
        /* a huge or tiny value: the message still ends with the range, the value written short */
        o.cycles_per_ns = 1e300;
        CHECK_EQ(ikp_capture_open(b, 19, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "cycles_per_ns 1.000e300 is outside 0.05 .. 20 (") != NULL &&
              strstr(e.message, "0 = from the anchors)") != NULL);
        o.cycles_per_ns = -2.5e-12;
        CHECK_EQ(ikp_capture_open(b, 19, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "cycles_per_ns -2.500e-12 is outside") != NULL);
        for (i = 0; i < 3; i++) {
            ikp_event ev[2];
            o.cycles_per_ns = good[i];
            CHECK_EQ(ikp_capture_open(b, 19, &o, &cap, &e), IKP_OK);
            if (cap) {
                CHECK_EQ(regions(cap, 0, ev, 2), 1);
                CHECK_NEAR((double)(ev[0].end_ps - ev[0].start_ps), 200 * 1000.0 / good[i], 1.0);
                ikp_capture_free(cap);
            }
        }
    }
}

/* Statistics and info under a decimal-comma locale (de_DE, generated into
   build/locale by make test): every number keeps its '.'. */
static void test_locale(void)
{
    static const enc_rec r[] = {{ENC_B, 0, 100, 0}, {ENC_E, 0, 300, 0}, {ENC_B, 0, 400, 0}, {ENC_E, 0, 401, 0}};
    enc_lane L;
    uint64_t w[8 + 9 + 4];
    ikp_capture *cap;
    ikp_stats *st;
    membuf m = {0, 0, 0};
    char t[32];
    const char *loc = setlocale(LC_ALL, "de_DE.UTF-8");
    CHECK(loc != NULL);
    if (!loc) { fprintf(stderr, "  (no de_DE.UTF-8 locale: run through make test, which makes one in build/locale)\n"); return; }
    snprintf(t, sizeof t, "%.1f", 1.5);
    CHECK(strcmp(t, "1,5") == 0); /* the locale really writes a decimal comma */
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 4; L.g0 = 50; L.g1 = 500;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    cap = open_fmt(w, 21, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
        CHECK_EQ(ikp_stats_write_json(st, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "\"span_ns\":301.000,") != NULL);
        CHECK(m.p && strstr(m.p, "\"mean_ns\":100.500,") != NULL);
        CHECK(m.p && strstr(m.p, "\"busy_fraction\":0.667774}") != NULL);
        m.n = 0;
        CHECK_EQ(ikp_stats_write_text(st, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "span        0.301 us") != NULL);
        CHECK(m.p && strstr(m.p, "        100.5") != NULL);
        CHECK(m.p && strstr(m.p, " 66.8%") != NULL);
        {   /* no decimal comma anywhere: no digit, ',', digit */
            const char *q;
            int comma = 0;
            for (q = m.p; q && q[0] && q[1] && q[2]; q++)
                if (q[1] == ',' && q[0] >= '0' && q[0] <= '9' && q[2] >= '0' && q[2] <= '9') comma = 1;
            CHECK(m.p && !comma);
        }
        ikp_stats_free(st);
        free(m.p);
        ikp_capture_free(cap);
    }
    setlocale(LC_ALL, "C");
}

static void test_duplicate_lanes(void)
{
    /* lane 3 = block 1 group 1 of 2 groups; lane 4 = block 1 group 1 of 3
       groups: both headers are self-consistent and claim the same pair. Their
       regions overlap without nesting. */
    static const enc_rec ra[] = {{ENC_B, 0, 1000, 0}, {ENC_E, 0, 2000, 0}};
    static const enc_rec rb[] = {{ENC_B, 1, 1500, 0}, {ENC_E, 1, 2500, 0}};
    enc_lane L[2];
    uint64_t w[8 + 6 * (9 + 4)];
    ikp_capture *cap;
    char *js;
    memset(L, 0, sizeof L);
    L[0].block = 1; L[0].group = 1; L[0].started = L[0].finalized = 1; L[0].recs = ra; L[0].n = 2;
    L[0].g0 = 900; L[0].g1 = 3000;
    L[1] = L[0]; L[1].recs = rb;
    enc_ikp(w, 6, 4, 2, 3, 1, 1, &L[0], 1);
    {   /* the second lane, encoded with 3 groups, copied into slot 4 */
        uint64_t w3[8 + 6 * (9 + 4)];
        enc_ikp(w3, 6, 4, 3, 2, 1, 1, &L[1], 1);
        memcpy(w + 8 + 4 * 13, w3 + 8 + 4 * 13, 13 * 8);
    }
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_AUTO, IKP_OK);
    if (!cap) return;
    CHECK_EQ(ikp_capture_get_info(cap)->duplicate_lanes, 1);
    CHECK(lane_info(cap, 4).flags & IKP_LANE_DUPLICATE);
    CHECK_EQ(lane_info(cap, 4).duplicate_of, 3);
    CHECK(!(lane_info(cap, 3).flags & IKP_LANE_DUPLICATE));
    js = chrome(cap, IKP_BY_BLOCK);
    /* same block, same group: the duplicate's region on the next track */
    CHECK(js && strstr(js, "\"pid\":2,\"tid\":2,\"ts\":0.000,\"dur\":1.000") != NULL);
    CHECK(js && strstr(js, "\"pid\":2,\"tid\":5,\"ts\":0.500,\"dur\":1.000") != NULL);
    CHECK(js && strstr(js, "\"name\":\"group 1 [1] (lane 4, a duplicate of lane 3)\"") != NULL);
    free(js);
    ikp_capture_free(cap);
}

/* a lane header naming SM 2^31 + 1 (a damaged header): the SM unknown and
   counted, not SM 2147483649 in the trace and -2147483647 in the export;
   SM 65,535 is kept */
/* header word 7 (reserved, 0) set: refused at its byte; names given as
   NULL with a count: refused as clock readings, peers and SM samples are */
static void test_reserved_and_null_names(void)
{
    static const enc_rec r[] = {{ENC_B, 0, 1000, 0}, {ENC_E, 0, 2000, 0}};
    enc_lane L;
    uint64_t w[8 + 9 + 4];
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    ikp_error e;
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 2; L.g0 = 900; L.g1 = 3000;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    memset(&o, 0, sizeof o);
    o.num_event_names = 3;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(cap == NULL && strstr(e.message, "num_event_names is 3 without event names") != NULL);
    o.num_event_names = 0;
    o.num_group_names = 2;
    CHECK_EQ(ikp_capture_open(w, 21, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "num_group_names is 2 without group names") != NULL);
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_OK);
    ikp_capture_free(cap);
    cap = NULL;
    w[7] = 1;
    CHECK_EQ(ikp_capture_open(w, 21, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
    CHECK(e.offset == 56 && strstr(e.message, "word 7") != NULL);
}

static void test_bad_sm_lane(void)
{
    static const enc_rec r[] = {{ENC_B, 0, 1000, 0}, {ENC_E, 0, 2000, 0}};
    enc_lane L[2];
    uint64_t w[8 + 2 * (9 + 4)];
    ikp_capture *cap;
    membuf m = {0, 0, 0};
    ikp_stats *st = NULL;
    char *js;
    memset(L, 0, sizeof L);
    L[0].block = 0; L[0].started = L[0].finalized = 1; L[0].recs = r; L[0].n = 2;
    L[0].g0 = 900; L[0].g1 = 3000; L[0].sm = 0x80000001u;
    L[1] = L[0]; L[1].block = 1; L[1].sm = 0xFFFFu;
    enc_ikp(w, 2, 4, 1, 2, 1, 1, L, 2);
    cap = open_fmt(w, sizeof w / 8, IKP_FORMAT_IKP, IKP_OK);
    if (!cap) return;
    CHECK_EQ(lane_info(cap, 0).sm, IKP_NO_SM);
    CHECK_EQ(lane_info(cap, 1).sm, 0xFFFFu);
    CHECK_EQ(ikp_capture_get_info(cap)->bad_sm_lanes, 1);
    js = chrome(cap, IKP_BY_BLOCK);
    CHECK(js && strstr(js, "2147483649") == NULL);
    free(js);
    {   /* by SM: refused, the lane and its damaged header named */
        ikp_trace_options o;
        ikp_error e;
        membuf t = {0, 0, 0};
        memset(&o, 0, sizeof o);
        o.by = IKP_BY_SM;
        CHECK_EQ(ikp_write_chrome(cap, &o, mem_write, &t, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(e.lane == 0 && strstr(e.message, "names no SM (one past 65,535") != NULL &&
              strstr(e.message, "lane") == strstr(e.message, "lane's header"));
        free(t.p);
    }
    CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
    if (st && ikp_info_write_text(st, mem_write, &m, NULL) == IKP_OK)
        CHECK(m.p && strstr(m.p, "1 lanes name an SM past 65,535") != NULL);
    ikp_stats_free(st);
    free(m.p);
    ikp_capture_free(cap);
}

static void test_detection_votes(void)
{
    /* TIRx, 1 block x 2 groups... a real one: 4 blocks x 1 group, no
       finalize records, stride = lanes: every record also reads as
       flashinfer. One stray record names lane 4096 + its position. */
    enc_rec r[4][2];
    enc_lane L[4];
    uint64_t w[1 + 4 * 2];
    ikp_capture *cap;
    ikp_stats *st;
    membuf m = {0, 0, 0};
    int i;
    memset(L, 0, sizeof L);
    for (i = 0; i < 4; i++) {
        r[i][0].kind = ENC_B; r[i][0].id = 1; r[i][0].t = 100 + (uint64_t)i;
        r[i][1].kind = ENC_E; r[i][1].id = 1; r[i][1].t = 200 + (uint64_t)i;
        L[i].block = (uint32_t)i; L[i].recs = r[i]; L[i].n = 2;
    }
    enc_tirx(w, 9, 4, 1, 4, L, 4);
    cap = open_fmt(w, 9, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) { /* a tie: the strided layout decides, and it is said */
        CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_TIRX);
        CHECK_EQ(ikp_capture_get_info(cap)->detect_records, 8);
        CHECK_EQ(ikp_capture_get_info(cap)->detect_fit[IKP_FORMAT_FLASHINFER], 8);
        ikp_capture_free(cap);
    }
    w[1 + 2 + 4] += (uint64_t)4096 << 12; /* lane 2's end now names lane 4098 */
    cap = open_fmt(w, 9, IKP_FORMAT_AUTO, IKP_OK);
    if (cap) {
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        CHECK_EQ(in->format, IKP_FORMAT_TIRX);
        CHECK_EQ(in->out_of_range, 1);
        CHECK_EQ(in->detect_fit[IKP_FORMAT_TIRX], 7);
        check_peer_totals(cap);
        CHECK(in->detect_fit[IKP_FORMAT_FLASHINFER] < 8);
        CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
        CHECK_EQ(ikp_info_write_text(st, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "detected    tirx: 7 of 8 records fit it") != NULL);
        CHECK(m.p && strstr(m.p, "not unanimous: pass format to choose") != NULL);
        CHECK(m.p && strstr(m.p, "1 records name a lane past the header's (skipped)") != NULL);
        CHECK(m.p && strstr(m.p, "dropped     n/a") != NULL);
        free(m.p);
        m.p = NULL; m.n = m.cap = 0;
        CHECK_EQ(ikp_stats_write_json(st, mem_write, &m, NULL), IKP_OK);
        CHECK(m.p && strstr(m.p, "\"dropped\":null") != NULL);
        free(m.p);
        ikp_stats_free(st);
        ikp_capture_free(cap);
    }
}

static void test_tirx_finalize(void)
{
    /* a reused, unzeroed buffer: launch 2 wrote B E F, launch 1's stale
       records (earlier times) follow */
    static const enc_rec r[] = {{ENC_B, 1, 5000, 0}, {ENC_E, 1, 5400, 0}, {'F', 0, 5500, 0},
                                {ENC_B, 1, 1000, 0}, {ENC_E, 1, 1100, 0}, {ENC_B, 2, 1200, 0}};
    enc_lane L;
    uint64_t w[1 + 6];
    ikp_decode_options o;
    ikp_capture *cap;
    ikp_event ev[4];
    memset(&L, 0, sizeof L);
    L.recs = r; L.n = 6;
    enc_tirx(w, 7, 1, 1, 1, &L, 1);
    cap = open_fmt(w, 7, IKP_FORMAT_TIRX, IKP_OK);
    if (cap) {
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        CHECK_EQ(in->after_finalize, 3);
        CHECK_EQ(in->records, 3);
        check_peer_totals(cap);
        CHECK_EQ(lane_info(cap, 0).after_finalize, 3);
        CHECK_EQ(regions(cap, 0, ev, 4), 1);
        CHECK_EQ(ev[0].end_ps - ev[0].start_ps, 400 * NS);
        CHECK_EQ(in->span_ps, 500 * NS); /* the stale records do not stretch the capture */
        ikp_capture_free(cap);
    }
    memset(&o, 0, sizeof o);
    o.format = IKP_FORMAT_TIRX;
    o.keep_after_finalize = 1;
    CHECK_EQ(ikp_capture_open(w, 7, &o, &cap, NULL), IKP_OK);
    if (cap) {
        CHECK_EQ(ikp_capture_get_info(cap)->after_finalize, 3);
        check_peer_totals(cap);
        CHECK_EQ(regions(cap, 0, ev, 4), 3); /* both launches, mixed, as asked */
        ikp_capture_free(cap);
    }
}

/* random words under tirx and flashinfer headers: pass and walks agree */
static void test_peer_pass_vs_walks(void)
{
    uint64_t w[1 + 64];
    uint32_t seed = 12345;
    int round, k;
    for (round = 0; round < 400; round++) {
        ikp_decode_options o;
        ikp_capture *cap;
        uint32_t nb = 1 + round % 4, ng = 1 + round % 3;
        w[0] = ((uint64_t)ng << 32) | nb;
        for (k = 1; k < 65; k++) {
            uint32_t lane, t;
            seed = seed * 1103515245u + 12345u;
            lane = (seed >> 8) % (nb * ng + (round % 5 == 0 ? 3 : 0));
            if (round % 3 == 0) lane = (uint32_t)(k - 1) % (nb * ng); /* strided */
            t = 1000 + (uint32_t)k * 50 - ((seed >> 20) & 3) * 400 + (round % 7 == 0 ? (seed & 0x80000000u) : 0);
            w[k] = ((seed >> 4) & 7) == 0 ? 0 : ((uint64_t)t << 32) | (lane << 12) | (((seed >> 12) & 3) << 2) | ((seed >> 16) & 3);
        }
        memset(&o, 0, sizeof o);
        o.format = round % 2 ? IKP_FORMAT_TIRX : IKP_FORMAT_FLASHINFER;
        o.keep_after_finalize = round % 4 == 1;
        if (ikp_capture_open(w, 65, &o, &cap, NULL) == IKP_OK) {
            check_peer_totals(cap);
            ikp_capture_free(cap);
        }
    }
}

static void test_peer_memory(void)
{
    /* a 32 MiB flashinfer buffer whose header claims one lane per word:
       opening it and writing its trace allocates little (no per-lane state) */
    size_t n = 4u << 20, out = 0;
    uint64_t *w = (uint64_t *)calloc(n, 8);
    meter m;
    ikp_decode_options o;
    ikp_capture *cap;
    memset(&o, 0, sizeof o);
    o.allocator = metered(&m);
    o.format = IKP_FORMAT_FLASHINFER;
    w[0] = (1ull << 32) | (uint64_t)(n - 1);
    w[1 + 7] = (3000ull << 32) | (7u << 12) | (1u << 2) | 0u; /* lane 7: a begin... */
    CHECK_EQ(ikp_capture_open(w, n, &o, &cap, NULL), IKP_OK);
    if (cap) {
        CHECK_EQ(ikp_capture_get_info(cap)->active_lanes, 1);
        CHECK_EQ(ikp_write_chrome(cap, NULL, count_sink, &out, NULL), IKP_OK);
        CHECK(m.peak < (1u << 20));
        ikp_capture_free(cap);
    }
    CHECK_EQ(m.live, 0);
    /* TIRx, 2^20 lanes, one finalize record each and one real region: the
       trace names only the lane that has something to show */
    {
        size_t lanes = 1u << 20, k;
        uint64_t *t = (uint64_t *)calloc(1 + 3 * lanes, 8);
        ikp_capture *c2;
        char *js;
        t[0] = (1ull << 32) | (uint64_t)lanes;
        for (k = 0; k < lanes; k++) t[1 + k] = (5000ull << 32) | (k << 12) | 3u;
        t[1 + 9] = (4000ull << 32) | (9u << 12) | (2u << 2) | 0u;
        t[1 + 9 + lanes] = (4100ull << 32) | (9u << 12) | (2u << 2) | 1u;
        t[1 + 9 + 2 * lanes] = (5000ull << 32) | (9u << 12) | 3u;
        memset(&o, 0, sizeof o);
        o.allocator = metered(&m);
        CHECK_EQ(ikp_capture_open(t, 1 + 3 * lanes, &o, &c2, NULL), IKP_OK);
        if (c2) {
            CHECK_EQ(ikp_capture_get_info(c2)->format, IKP_FORMAT_TIRX);
            CHECK_EQ(ikp_capture_get_info(c2)->active_lanes, lanes);
            js = chrome(c2, IKP_BY_BLOCK);
            CHECK(js && count_str(js, "\"thread_name\"") == 1 && count_str(js, "\"process_name\"") == 1);
            CHECK(js && strlen(js) < 2000);
            free(js);
            CHECK(m.peak < (1u << 20));
            out = 0;
            CHECK_EQ(ikp_write_perfetto(c2, NULL, count_sink, &out, NULL), IKP_OK);
            CHECK(out > 0 && out < 1000);
            CHECK(m.peak < (1u << 20));
            ikp_capture_free(c2);
        }
        free(t);
    }
    free(w);
}

/* ikp_output: a file written through a temporary and a rename; the
   temporary named while open; ikp_output_end commits on success, keeps the
   writer's error and the old file on failure, and says why a write failed */
static void test_output(void)
{
    const char *path = "build/test-out/output.txt";
    ikp_output o;
    ikp_error e;
    char b[64], tmp[IKP_OUTPUT_PATH_MAX];
    const char *tp;
    FILE *f;
    size_t n;
    remove(path);
    CHECK_EQ(ikp_output_open(&o, path, &e), IKP_OK);
    tp = ikp_output_temp_path(&o);
    CHECK(tp[0] != 0 && strcmp(tp, path) != 0 && strstr(tp, ".ikp-tmp") != NULL);
    f = fopen(tp, "rb");
    CHECK(f != NULL); /* it exists while open */
    if (f) fclose(f);
    CHECK_EQ(ikp_output_write(&o, "first", 5), 0);
    CHECK_EQ(ikp_output_end(&o, IKP_OK, &e), IKP_OK);
    CHECK_EQ(ikp_output_temp_path(&o)[0], 0);
    f = fopen(path, "rb");
    n = f ? fread(b, 1, sizeof b, f) : 0;
    if (f) fclose(f);
    CHECK(n == 5 && !memcmp(b, "first", 5));
    /* a writer that failed: the old file stays, the temporary goes, its error is kept */
    CHECK_EQ(ikp_output_open(&o, path, &e), IKP_OK);
    snprintf(tmp, sizeof tmp, "%s", ikp_output_temp_path(&o));
    CHECK_EQ(ikp_output_write(&o, "second", 6), 0);
    snprintf(e.message, sizeof e.message, "the writer's own reason");
    CHECK_EQ(ikp_output_end(&o, IKP_ERR_BAD_HEADER, &e), IKP_ERR_BAD_HEADER);
    CHECK(strcmp(e.message, "the writer's own reason") == 0);
    f = fopen(tmp, "rb");
    CHECK(f == NULL); /* the temporary removed */
    if (f) fclose(f);
    f = fopen(path, "rb");
    n = f ? fread(b, 1, sizeof b, f) : 0;
    if (f) fclose(f);
    CHECK(n == 5 && !memcmp(b, "first", 5));
    /* a failed write (a full device, written in place): the write's reason */
    f = fopen("/dev/full", "wb");
    if (f) {
        fclose(f);
        CHECK_EQ(ikp_output_open(&o, "/dev/full", &e), IKP_OK);
        CHECK_EQ(ikp_output_temp_path(&o)[0], 0); /* a device: in place */
        memset(b, 'x', sizeof b);
        for (n = 0; n < 4096 && ikp_output_write(&o, b, sizeof b) == 0; n++) {}
        CHECK(n < 4096);
        CHECK_EQ(ikp_output_end(&o, IKP_ERR_WRITE, &e), IKP_ERR_IO);
        CHECK(strstr(e.message, "cannot write '/dev/full'") != NULL);
    }
    CHECK_EQ(ikp_output_end(NULL, IKP_OK, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_output_temp_path(NULL)[0], 0);
    remove(path);
}

static void test_files(void)
{
    /* ikp_capture_open_path: one block of the file's size, kept by the capture */
    static const enc_rec r[] = {{ENC_B, 0, 100, 0}, {ENC_E, 0, 190, 0}};
    enc_lane L;
    uint64_t *w;
    uint32_t capn = 100000;
    size_t nw = enc_ikp_words(1, capn), fsz;
    ikp_decode_options o;
    ikp_capture *cap;
    ikp_error e;
    meter m;
    FILE *f;
    const char *path = "build/test-out/big.bin";
    unsigned char b[64];
    w = (uint64_t *)malloc(nw * 8);
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 2; L.g0 = 50; L.g1 = 400;
    enc_ikp(w, 1, capn, 1, 1, 1, 1, &L, 1);
    f = fopen(path, "wb");
    CHECK(f && fwrite(w, 8, nw, f) == nw);
    if (f) fclose(f);
    fsz = nw * 8;
    memset(&o, 0, sizeof o);
    o.allocator = metered(&m);
    CHECK_EQ(ikp_capture_open_path(path, &o, &cap, &e), IKP_OK);
    CHECK_EQ(m.largest, fsz);
    CHECK(m.peak < fsz + fsz / 10);
    ikp_capture_free(cap);
    CHECK_EQ(m.live, 0);
    free(w);
    /* not regular files: refused at once */
    CHECK_EQ(ikp_capture_open_path("/dev/zero", NULL, &cap, &e), IKP_ERR_IO);
    CHECK(strstr(e.message, "character device") != NULL);
    CHECK_EQ(ikp_capture_open_path("build", NULL, &cap, &e), IKP_ERR_IO);
    CHECK(strstr(e.message, "a directory") != NULL);
    CHECK_EQ(ikp_capture_open_path("build/test-out/none.bin", NULL, &cap, &e), IKP_ERR_IO);
    CHECK(strstr(e.message, "No such file or directory") != NULL);
    {
        ikp_name_list nl;
        CHECK_EQ(ikp_name_list_parse_path("/dev/zero", NULL, &nl, &e), IKP_ERR_IO);
        CHECK_EQ(ikp_name_list_parse_path("build", NULL, &nl, &e), IKP_ERR_IO);
    }
    /* wrong things handed to ikp_capture_open: what they are, what to call */
    memset(b, 0, sizeof b);
    memcpy(b, "IKPCAPT1", 8);
    CHECK_EQ(ikp_capture_open((const uint64_t *)(void *)b, 8, NULL, &cap, &e), IKP_ERR_UNKNOWN_FORMAT);
    CHECK(strstr(e.message, ".ikp capture file") && strstr(e.message, "ikp_capture_open_path"));
    {
        ikp_decode_options fo;
        memset(&fo, 0, sizeof fo);
        fo.format = IKP_FORMAT_IKP;
        CHECK_EQ(ikp_capture_open((const uint64_t *)(void *)b, 8, &fo, &cap, &e), IKP_ERR_BAD_MAGIC);
        CHECK(strstr(e.message, "ikp_capture_open_path") != NULL);
    }
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    CHECK_EQ(ikp_capture_open((const uint64_t *)(void *)b, 8, NULL, &cap, &e), IKP_ERR_UNKNOWN_FORMAT);
    CHECK(strstr(e.message, "NumPy .npy") && strstr(e.message, "ikp_capture_open_path"));
    CHECK_EQ(ikp_capture_open_data("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10, NULL, &cap, &e), IKP_ERR_UNKNOWN_FORMAT);
    CHECK(strstr(e.message, "gzip") != NULL);
    /* JSON: read as a Proton trace, refused when it is none */
    CHECK_EQ(ikp_capture_open_data("{\"traceEvents\":[]}\n", 19, NULL, &cap, &e), IKP_ERR_EMPTY);
    CHECK(strstr(e.message, "JSON trace with no events") != NULL);
    CHECK_EQ(ikp_capture_open_data("[{\"ph\":\"X\",\"pid\":1,\"tid\":2,\"ts\":3,\"dur\":4,\"name\":\"k\"}]", 54, NULL,
                                   &cap, &e), IKP_ERR_UNKNOWN_FORMAT);
    CHECK(strstr(e.message, "not a Proton trace") && strstr(e.message, "--into"));
    CHECK_EQ(ikp_capture_open_data("PK\x03\x04....", 8, NULL, &cap, &e), IKP_ERR_UNKNOWN_FORMAT);
    CHECK(strstr(e.message, "zip") != NULL);
}

/* .npy headers written here byte by byte (test_tool.py reads numpy's own) */
static size_t npy(unsigned char *out, const char *dict, const uint64_t *w, size_t n)
{
    size_t hl = strlen(dict), total = 10 + hl, pad = (64 - (total + 1) % 64) % 64;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)((hl + pad + 1) & 0xFF);
    out[9] = (unsigned char)((hl + pad + 1) >> 8);
    memcpy(out + 10, dict, hl);
    memset(out + 10 + hl, ' ', pad);
    out[10 + hl + pad] = '\n';
    memcpy(out + 10 + hl + pad + 1, w, n * 8);
    return 10 + hl + pad + 1 + n * 8;
}

static void test_npy(void)
{
    static const enc_rec r[] = {{ENC_B, 0, 100, 0}, {ENC_E, 0, 190, 0}};
    enc_lane L;
    uint64_t w[8 + 9 + 2];
    unsigned char f[512];
    ikp_capture *cap;
    ikp_error e;
    size_t n;
    char d[160];
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.recs = r; L.n = 2; L.g0 = 50; L.g1 = 400;
    enc_ikp(w, 1, 2, 1, 1, 1, 1, &L, 1);
    n = npy(f, "{'descr': '<u8', 'fortran_order': False, 'shape': (19,), }", w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_OK);
    if (cap) { CHECK_EQ(ikp_capture_get_info(cap)->records, 2); ikp_capture_free(cap); }
    n = npy(f, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 19), }", w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_OK);
    ikp_capture_free(cap);
    n = npy(f, "{'descr': '>u8', 'fortran_order': False, 'shape': (19,), }", w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "big-endian") != NULL);
    n = npy(f, "{'descr': '<f8', 'fortran_order': False, 'shape': (19,), }", w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "'<f8'") && strstr(e.message, "uint64"));
    n = npy(f, "{'descr': '<u8', 'fortran_order': True, 'shape': (19, 2), }", w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "Fortran") != NULL);
    n = npy(f, "{'descr': '<u8', 'fortran_order': False, 'shape': (20,), }", w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_TRUNCATED);
    n = npy(f, "{'descr': '<u8', 'fortran_order': False, 'shape': (18,), }", w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
    n = npy(f, "{'descr': '<u8', 'fortran_order': False, 'shape': (0,), }", w, 0);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_EMPTY);
    snprintf(d, sizeof d, "{'descr': '<u8', 'fortran_order': False, 'shape': (99999999999999999999999,), }");
    n = npy(f, d, w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_SIZE_OVERFLOW);
    n = npy(f, "{'fortran_order': False, 'shape': (19,), }", w, 19);
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_BAD_HEADER);
    f[6] = 9;
    CHECK_EQ(ikp_capture_open_data(f, n, NULL, &cap, &e), IKP_ERR_BAD_VERSION);
    /* cut at every byte: an error, never a crash */
    n = npy(f, "{'descr': '<u8', 'fortran_order': False, 'shape': (19,), }", w, 19);
    {
        size_t cut;
        int all = 1;
        for (cut = 1; cut < n; cut++)
            if (ikp_capture_open_data(f, cut, NULL, &cap, &e) == IKP_OK) { all = 0; ikp_capture_free(cap); }
        CHECK(all);
    }
}

static int fail_sink(void *u, const void *d, size_t n) { (void)u; (void)d; (void)n; return 1; }

/* Flows pair within what the data supports, each `to` event at most once:
   so a block of many lanes that all have both events draws one arrow per
   `to`, not lanes^2 (each lane links to itself); a lane with only `to`
   events links to the block's one `from` lane, or by payload in time order
   when there are several, and without payloads it is not linked at all. */
static void test_flow_pairing(void)
{
    /* lanes 0, 1: load then wait, twice, each on its own lane (no payload);
       lane 2: wait only, twice: two `from` lanes and no payload, unpaired */
    static const enc_rec self[] = {{ENC_B, 0, 1000, 0}, {ENC_E, 0, 1010, 0}, {ENC_B, 1, 1020, 0}, {ENC_E, 1, 1030, 0},
                                   {ENC_B, 0, 1100, 0}, {ENC_E, 0, 1110, 0}, {ENC_B, 1, 1120, 0}, {ENC_E, 1, 1130, 0}};
    static const enc_rec waits[] = {{ENC_B, 1, 1040, 0}, {ENC_E, 1, 1050, 0}, {ENC_B, 1, 1140, 0}, {ENC_E, 1, 1150, 0}};
    /* by payload across lanes: lane 1's load 0 comes first (1000), lane 0's
       second (2000); lane 2 waits for payload 0 at 1500 and 2500 and for
       payload 1 at 2600 (lane 1's load 1 at 1200): linked in time order,
       every arrow drawn (by lane order the first would point back in time) */
    static const enc_rec p0[] = {{ENC_B, 0, 2000, 0}, {ENC_D, 0, 0, 0}, {ENC_E, 0, 2010, 0}};
    static const enc_rec p1[] = {{ENC_B, 0, 1000, 0}, {ENC_D, 0, 0, 0}, {ENC_E, 0, 1010, 0},
                                 {ENC_B, 0, 1200, 0}, {ENC_D, 0, 0, 1}, {ENC_E, 0, 1210, 0}};
    static const enc_rec p2[] = {{ENC_B, 1, 1500, 0}, {ENC_D, 1, 0, 0}, {ENC_E, 1, 1600, 0},
                                 {ENC_B, 1, 2500, 0}, {ENC_D, 1, 0, 0}, {ENC_E, 1, 2550, 0},
                                 {ENC_B, 1, 2600, 0}, {ENC_D, 1, 0, 1}, {ENC_E, 1, 2650, 0}};
    enc_lane L[3];
    uint64_t w[8 + 3 * (9 + 16)];
    ikp_capture *cap;
    ikp_trace_options o;
    ikp_trace_stats st;
    ikp_flow_pair fl = {0, 1};
    ikp_error e;
    size_t n = 0;
    int k;
    memset(&o, 0, sizeof o);
    o.flows = &fl; o.num_flows = 1; o.stats = &st;
    for (k = 0; k < 2; k++) {
        memset(L, 0, sizeof L);
        L[0].started = L[0].finalized = 1; L[0].recs = k ? p0 : self; L[0].n = k ? 3 : 8;
        L[1].started = L[1].finalized = 1; L[1].recs = k ? p1 : self; L[1].n = k ? 6 : 8;
        L[2].started = L[2].finalized = 1; L[2].recs = k ? p2 : waits; L[2].n = k ? 9 : 4;
        L[0].g0 = L[1].g0 = L[2].g0 = 900; L[0].g1 = L[1].g1 = L[2].g1 = 3000;
        L[1].group = 1; L[2].group = 2;
        enc_ikp(w, 3, 16, 3, 1, 1, 1, L, 3);
        CHECK_EQ(ikp_capture_open(w, sizeof w / 8, NULL, &cap, &e), IKP_OK);
        if (!cap) return;
        memset(&st, 0xFF, sizeof st);
        CHECK_EQ(ikp_write_chrome(cap, &o, count_sink, &n, &e), IKP_OK);
        CHECK_EQ(st.flows, k ? 3 : 4);
        CHECK_EQ(st.flows_unordered, 0);
        CHECK_EQ(st.flow_unpaired, k ? 0 : 2);
        memset(&st, 0xFF, sizeof st);
        CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_OK);
        CHECK_EQ(st.flows, k ? 3 : 4);
        CHECK_EQ(st.flows_unordered, 0);
        if (k == 0) { /* on a time base, the arrows move with the slices */
            membuf m = {0, 0, 0};
            const char *fs;
            o.time_base_ns = 5000000;
            CHECK_EQ(ikp_write_chrome(cap, &o, mem_write, &m, &e), IKP_OK);
            fs = m.p ? strstr(m.p, "\"ph\":\"s\"") : NULL;
            fs = fs ? strstr(fs, "\"ts\":") : NULL;
            CHECK(fs && strtod(fs + 5, NULL) >= 5000.0);
            free(m.p);
            o.time_base_ns = 0;
        }
        ikp_capture_free(cap);
    }
    { /* payloads on the `to` side only: paired by order, in start order */
        static const enc_rec one[] = {{ENC_B, 0, 1000, 0}, {ENC_E, 0, 1010, 0}, {ENC_B, 1, 1050, 0}, {ENC_D, 1, 0, 5},
                                      {ENC_E, 1, 1060, 0}, {ENC_B, 0, 1100, 0}, {ENC_E, 0, 1110, 0},
                                      {ENC_B, 1, 1150, 0}, {ENC_D, 1, 0, 1}, {ENC_E, 1, 1160, 0}};
        uint64_t w1[8 + 1 * (9 + 16)];
        memset(L, 0, sizeof L);
        L[0].started = L[0].finalized = 1; L[0].recs = one; L[0].n = 10; L[0].g0 = 900; L[0].g1 = 3000;
        enc_ikp(w1, 1, 16, 1, 1, 1, 1, L, 1);
        CHECK_EQ(ikp_capture_open(w1, sizeof w1 / 8, NULL, &cap, &e), IKP_OK);
        if (cap) {
            memset(&st, 0xFF, sizeof st);
            CHECK_EQ(ikp_write_chrome(cap, &o, count_sink, &n, &e), IKP_OK);
            CHECK_EQ(st.flows, 2);
            CHECK_EQ(st.flows_unordered, 0);
            ikp_capture_free(cap);
        }
    }
}

/* The trace writers' options and the Perfetto writer's API: flows counted
   as drawn, bad options refused with a message, names to ids, output files.
   (test_perfetto.py checks the traces themselves against Perfetto's schema.) */
static void test_trace_options(void)
{
    /* producer: load k (payload k) x3; consumer: wait_full x3 (payload
       k+1 for k = 0, 1: one pairs by payload, the others do not), mma x2 */
    static const enc_rec rp[] = {{ENC_B, 0, 1000, 0}, {ENC_D, 0, 0, 0}, {ENC_E, 0, 1100, 0},
                                 {ENC_B, 0, 1200, 0}, {ENC_D, 0, 0, 1}, {ENC_E, 0, 1300, 0},
                                 {ENC_B, 0, 1400, 0}, {ENC_D, 0, 0, 2}, {ENC_E, 0, 1500, 0}};
    static const enc_rec rc[] = {{ENC_B, 1, 1050, 0}, {ENC_E, 1, 1150, 0}, {ENC_B, 2, 1160, 0}, {ENC_E, 2, 1190, 0},
                                 {ENC_B, 1, 1250, 0}, {ENC_E, 1, 1350, 0}, {ENC_B, 2, 1360, 0}, {ENC_E, 2, 1390, 0},
                                 {ENC_B, 1, 1450, 0}, {ENC_E, 1, 1550, 0}};
    enc_lane L[2];
    uint64_t w[8 + 2 * (9 + 16)];
    ikp_capture *cap;
    ikp_trace_options o;
    ikp_trace_stats st;
    ikp_flow_pair fl[2] = {{0, 1}, {1, 2}};
    uint32_t ctr[2] = {0, 2};
    ikp_error e;
    size_t n = 0;
    const char *names[3] = {"load", "wait_full", NULL};
    ikp_decode_options d;
    membuf m = {0, 0, 0};
    FILE *f;
    char b[4] = {0};
    memset(L, 0, sizeof L);
    L[0].started = L[0].finalized = 1; L[0].recs = rp; L[0].n = 9; L[0].g0 = 900; L[0].g1 = 1600;
    L[1].group = 1; L[1].started = L[1].finalized = 1; L[1].recs = rc; L[1].n = 10; L[1].g0 = 900; L[1].g1 = 1600;
    enc_ikp(w, 2, 16, 2, 1, 1, 1, L, 2);
    memset(&d, 0, sizeof d);
    d.event_names = names;
    d.num_event_names = 3;
    CHECK_EQ(ikp_capture_open(w, sizeof w / 8, &d, &cap, &e), IKP_OK);
    if (!cap) return;
    /* names to ids */
    CHECK_EQ(ikp_event_id(cap, "wait_full"), 1);
    CHECK_EQ(ikp_event_id(cap, "event 2"), 2);          /* unnamed id: its default name */
    CHECK_EQ(ikp_event_id(cap, "event 1"), IKP_NO_EVENT); /* id 1 has a name */
    CHECK_EQ(ikp_event_id(cap, "event 02"), IKP_NO_EVENT);
    CHECK_EQ(ikp_event_id(cap, "event 99999"), IKP_NO_EVENT);
    CHECK_EQ(ikp_event_id(cap, "nope"), IKP_NO_EVENT);
    CHECK_EQ(ikp_event_id(NULL, "load"), IKP_NO_EVENT);
    /* flows: load -> wait_full by order (the wait has no payload): 3;
       wait_full -> event 2 by order: 2, and one wait_full unpaired */
    memset(&o, 0, sizeof o);
    o.flows = fl; o.num_flows = 2; o.counters = ctr; o.num_counters = 2; o.stats = &st;
    memset(&st, 0xFF, sizeof st);
    CHECK_EQ(ikp_write_perfetto(cap, &o, mem_write, &m, &e), IKP_OK);
    CHECK_EQ(st.flows, 5); CHECK_EQ(st.flows_unordered, 0); CHECK_EQ(st.flow_unpaired, 1);
    CHECK_EQ(st.counter_tracks, 2);
    CHECK(m.n > 0 && (unsigned char)m.p[0] == 0x0A); /* Trace.packet, length-delimited */
    memset(&st, 0xFF, sizeof st);
    CHECK_EQ(ikp_write_chrome(cap, &o, count_sink, &n, &e), IKP_OK);
    CHECK_EQ(st.flows, 5); CHECK_EQ(st.flow_unpaired, 1); CHECK_EQ(st.counter_tracks, 2);
    /* a link whose destination ends before its source begins is not drawn */
    /* (event 2 at 1160 and 1360 -> loads ending at 1100 and 1300), in both writers */
    fl[0].from = 2; fl[0].to = 0; o.num_flows = 1;
    CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_OK);
    CHECK_EQ(st.flows, 0); CHECK_EQ(st.flows_unordered, 2); CHECK_EQ(st.flow_unpaired, 1);
    CHECK_EQ(ikp_write_chrome(cap, &o, count_sink, &n, &e), IKP_OK);
    CHECK_EQ(st.flows, 0); CHECK_EQ(st.flows_unordered, 2);
    fl[0].from = 0; fl[0].to = 1;
    /* bad options: refused with a message, nothing written */
    o.num_flows = 1;
    fl[1].from = fl[1].to = 2;
    o.num_flows = 2;
    CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "flow 1") != NULL);
    CHECK_EQ(ikp_write_chrome(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    fl[1].to = IKP_WIRE_MAX_EVENTS;
    CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    fl[1].from = 1; fl[1].to = 2;
    ctr[1] = 70000;
    CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "counter 1") != NULL);
    ctr[1] = 2;
    o.flows = NULL;
    CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    o.flows = fl;
    o.by = IKP_BY_COUNT;
    CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    o.by = IKP_BY_BLOCK;
    /* a time base that would carry timestamps past 2^63 - 1 ns: refused,
       in both writers, before anything is written; the largest that fits
       (2^63 - 1 less the span, 550 ns) is taken */
    o.time_base_ns = UINT64_MAX - 5;
    n = 0;
    CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "time_base_ns 18446744073709551610 plus the capture's span (550 ns) passes 2^63 - 1 ns") != NULL);
    CHECK_EQ(ikp_write_chrome(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(n, 0);
    o.time_base_ns = (uint64_t)INT64_MAX - 549;
    CHECK_EQ(ikp_write_chrome(cap, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    o.time_base_ns = (uint64_t)INT64_MAX - 550;
    CHECK_EQ(ikp_write_chrome(cap, &o, count_sink, &n, &e), IKP_OK);
    CHECK_EQ(ikp_write_perfetto(cap, &o, count_sink, &n, &e), IKP_OK);
    o.time_base_ns = 0;
    CHECK_EQ(ikp_write_perfetto(NULL, &o, count_sink, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_write_perfetto(cap, &o, NULL, &n, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_write_perfetto(cap, NULL, fail_sink, NULL, &e), IKP_ERR_WRITE);
    CHECK_EQ(ikp_write_perfetto_file(cap, NULL, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    /* files: the name picks the format in ikp_dump; a directory is refused */
    CHECK(ikp_is_perfetto_path("a.pftrace") && ikp_is_perfetto_path("a.perfetto-trace"));
    CHECK(!ikp_is_perfetto_path("a.json") && !ikp_is_perfetto_path(".pftrace") && !ikp_is_perfetto_path(NULL));
    CHECK_EQ(ikp_write_perfetto_path(cap, NULL, "build/test-out/t.pftrace", &e), IKP_OK);
    f = fopen("build/test-out/t.pftrace", "rb");
    CHECK(f && fread(b, 1, 1, f) == 1 && (unsigned char)b[0] == 0x0A);
    if (f) fclose(f);
    CHECK_EQ(ikp_write_perfetto_path(cap, NULL, "build/test-out", &e), IKP_ERR_IO);
    {
        ikp_dump_desc dd;
        memset(&dd, 0, sizeof dd);
        dd.trace_path = "build/test-out/dump.pftrace";
        CHECK_EQ(ikp_dump_words(w, sizeof w / 8, &dd, &e), IKP_OK);
        f = fopen("build/test-out/dump.pftrace", "rb");
        CHECK(f && fread(b, 1, 1, f) == 1 && (unsigned char)b[0] == 0x0A);
        if (f) fclose(f);
    }
    free(m.p);
    ikp_capture_free(cap);
}

/* Ticks in end records (IKP_END_TICKS): two lanes on two SMs whose clocks
   slow by 1e-4 halfway through (as SM clocks change speed), lane B
   starting 0.5 ms after lane A, both finalized at 2 ms; a region every
   ~354 ns, its end carrying bits 5..18 of the globaltimer read at its
   stamp; instants at 19 common moments. With the ticks each moment
   decodes within 10 ns of the truth on both lanes (the ticks wrap every
   524 us: four times), and the stated placement bounds it; the same
   words without the lane flag (start and end anchors only) miss the truth
   by tens of ns, which is what the ticks are for. A lane without the flag
   whose end carries ticks has that record invalid. */
static double tk_cycles(double t_ns, double off) /* the SM clock at ns t: 1.98 /ns, 1e-4 slower after 1 ms */
{
    const double r1 = 1.98, r2 = 1.98 * (1 - 1e-4), t1 = 1e6;
    return off + (t_ns < t1 ? r1 * t_ns : r1 * t1 + r2 * (t_ns - t1));
}
/* the invalid records of a one-lane capture of the two records r, its
   lane flagged for ticks as enc_lane.ticks says, with tick bits put in
   record `slot`'s tag (w: room for enc_ikp_words(1, 8)); -1 if it does not open */
static long long tick_bits_invalid(uint64_t *w, const enc_rec *r, int ticks, unsigned slot)
{
    enc_lane L;
    ikp_capture *c;
    long long invalid = -1;
    memset(&L, 0, sizeof L);
    L.started = L.finalized = 1; L.cycles = 1; L.recs = r; L.n = 2; L.ticks = ticks;
    L.g0 = 1000; L.c0 = 900; L.g1 = 3000; L.c1 = 4900;
    enc_ikp(w, 1, 8, 1, 1, 1, 1, &L, 1);
    w[8 + 8 + slot] |= 5u << 16;
    c = open_fmt(w, (size_t)enc_ikp_words(1, 8), IKP_FORMAT_AUTO, IKP_OK);
    if (c) {
        invalid = (long long)lane_info(c, 0).invalid;
        ikp_capture_free(c);
    }
    return invalid;
}
static void test_end_ticks(void)
{
    enum { NR = 5700, NM = 19, CAP = 2 * NR + NM + 8 };
    const uint64_t G0 = 1000000000000ull; /* a multiple of 32 ns */
    const double off[2] = {3.0e9, 7.5e9}, t_start[2] = {0, 500000}, t_end = 2000000;
    enc_rec *rr[2];
    enc_lane L[2];
    uint64_t *w = (uint64_t *)calloc((size_t)enc_ikp_words(2, CAP), 8);
    int flag, i, j;
    rr[0] = (enc_rec *)calloc(CAP, sizeof(enc_rec));
    rr[1] = (enc_rec *)calloc(CAP, sizeof(enc_rec));
    if (!w || !rr[0] || !rr[1]) { CHECK(0); free(w); free(rr[0]); free(rr[1]); return; }
    for (flag = 1; flag >= 0; flag--) {
        double worst = 0, zero = 0; /* zero: the capture's time 0 on the truth's axis, ns */
        uint32_t stated = 0;
        ikp_capture *cap;
        memset(L, 0, sizeof L);
        for (i = 0; i < 2; i++) {
            size_t n = 0;
            int m = 1;
            uint32_t prevq = 0; /* the ticks read at the lane's last end or instant, which its next begin carries */
            for (j = 0; j < NR; j++) {
                const double te = t_start[i] + 100 + j * 353.7;
                if (te >= t_end - 50) break;
                while (m <= NM && m * 100000.0 + 7 < te) { /* the moments that come first */
                    if (m * 100000.0 > t_start[i]) {
                        rr[i][n].kind = ENC_I; rr[i][n].id = 9; rr[i][n].t = (uint64_t)tk_cycles(m * 100000.0 + 7, off[i]);
                        prevq = (uint32_t)((G0 + (uint64_t)(m * 100000.0 + 7)) >> 5);
                        n++;
                    }
                    m++;
                }
                rr[i][n].kind = ENC_B; rr[i][n].id = 1; rr[i][n].t = (uint64_t)tk_cycles(te - 90, off[i]);
                rr[i][n].data = prevq;
                n++;
                rr[i][n].kind = ENC_E; rr[i][n].id = 1; rr[i][n].t = (uint64_t)tk_cycles(te, off[i]); n++;
                prevq = (uint32_t)((G0 + (uint64_t)te) >> 5); /* read at the end's stamp */
            }
            L[i].block = (uint32_t)i; L[i].sm = 3 + 4 * (uint32_t)i; L[i].started = L[i].finalized = 1;
            L[i].cycles = 1; L[i].ticks = flag; L[i].recs = rr[i]; L[i].n = n;
            L[i].g0 = G0 + (uint64_t)t_start[i]; L[i].c0 = (uint64_t)tk_cycles(t_start[i], off[i]);
            L[i].g1 = G0 + (uint64_t)t_end; L[i].c1 = (uint64_t)tk_cycles(t_end, off[i]);
        }
        enc_ikp(w, 2, CAP, 1, 2, 1, 1, L, 2);
        cap = open_fmt(w, (size_t)enc_ikp_words(2, CAP), IKP_FORMAT_AUTO, IKP_OK);
        if (!cap) break;
        for (i = 0; i < 2; i++) {
            ikp_lane_events ev;
            size_t k;
            int moments = 0;
            memset(&ev, 0, sizeof ev);
            CHECK_EQ(ikp_decode_lane(cap, (uint32_t)i, &ev, NULL), IKP_OK);
            CHECK_EQ(lane_info(cap, (uint32_t)i).invalid, 0);
            for (k = 0; k < ev.count; k++) {
                const ikp_event *x = &ev.events[k];
                double err;
                if (i == 0 && k == 0) /* the capture starts at its first record (lane A's first begin, by its anchor) */
                    zero = ((double)rr[0][0].t - off[0]) / 1.98 - (double)x->start_ps / 1000.0;
                if (x->kind != IKP_EVENT_INSTANT) continue;
                /* moment m at m * 100 us + 7 ns */
                err = (double)x->start_ps / 1000.0 + zero - (double)((x->start_ps + 50000000) / 100000000 * 100000 + 7);
                if (err < 0) err = -err;
                if (err > worst) worst = err;
                moments++;
            }
            CHECK_EQ(moments, i == 0 ? NM : NM - 5);
            if (lane_info(cap, (uint32_t)i).placement_ns > stated) stated = lane_info(cap, (uint32_t)i).placement_ns;
            ikp_lane_events_free(cap, &ev);
        }
        CHECK(worst * 1000 <= stated * 1000.0 + 1000); /* the statement bounds it */
        if (flag) CHECK(worst <= 10.0); /* the reading a few ns, the mapping within 8 of it */
        else CHECK(worst >= 20.0);
        printf("  end ticks %s: moments within %.2f ns of the truth, stated %u ns\n", flag ? "on " : "off", worst, stated);
        ikp_capture_free(cap);
    }
    { /* a lane without the flag whose begin carries ticks, or one with it whose end does: that record is invalid */
        static const enc_rec r[] = {{ENC_B, 1, 1000, 0}, {ENC_E, 1, 2000, 0}};
        for (flag = 0; flag < 2; flag++) CHECK_EQ(tick_bits_invalid(w, r, flag, (unsigned)flag), 1); /* begin, then end */
    }
    { /* an instant's ticks: invalid on a lane flagged for begins' ticks alone, read on one flagged for instants' too */
        static const enc_rec r[] = {{ENC_I, 1, 1000, 0}, {ENC_I, 1, 2000, 0}};
        for (flag = 1; flag < 3; flag++) CHECK_EQ(tick_bits_invalid(w, r, flag, 1), flag == 1 ? 1 : 0);
    }
    free(w);
    free(rr[0]);
    free(rr[1]);
}

int main(void)
{
    test_nesting_overlap_instants();
    test_globaltimer_wrap();
    test_cycles();
    test_one_mapping_per_sm();
    test_end_ticks();
    test_cycles_wrap();
    test_anchors();
    test_auto_anchors();
    test_host_clock();
    test_dropped_ring_unmatched();
    test_ring_pairs();
    test_header_counters();
    test_stats();
    test_tirx();
    test_flashinfer();
    test_flashinfer_4096();
    test_bad_input();
    test_capture_file();
    test_error_convention();
    test_name_list();
    test_allocator_and_many_tracks();
    test_api_names();
    test_rates_and_totals();
    test_duplicate_lanes();
    test_bad_sm_lane();
    test_reserved_and_null_names();
    test_detection_votes();
    test_tirx_finalize();
    test_peer_pass_vs_walks();
    test_peer_memory();
    test_files();
    test_output();
    test_npy();
    test_flow_pairing();
    test_trace_options();
    test_locale();
    return check_report();
}
