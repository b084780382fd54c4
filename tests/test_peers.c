/* Tests of the Triton-distributed and transformer_nuggets decoders: buffers
   written by tests/encoder.h (from the formats' notes, not from ikp.h) are
   decoded and every region is checked against what was encoded. */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include "check.h"
#include "encoder.h"
#include "helpers.h"

#define T0 1763000000000000000ull /* a globaltimer reading (ns since 1970) */

static ikp_capture *open_opt(const uint64_t *w, size_t n, ikp_format f, uint32_t units, uint32_t tick_ps,
                             ikp_result want, ikp_error *e)
{
    ikp_capture *cap = NULL;
    ikp_decode_options o;
    ikp_result r;
    memset(&o, 0, sizeof o);
    o.format = f;
    o.num_units = units;
    o.timer_unit_ps = tick_ps;
    r = ikp_capture_open(w, n, &o, &cap, e);
    CHECK_EQ(r, want);
    if (r != want) fprintf(stderr, "  error: %s\n", e->message);
    if (r != IKP_OK) CHECK(cap == NULL && e->message[0] != 0);
    return cap;
}

/* a region of lane `lane` with id, start and end in ns after the capture start */
static int has_region(const ikp_capture *cap, uint32_t lane, uint32_t id, int64_t s_ns, int64_t e_ns)
{
    ikp_event ev[64];
    size_t n = regions(cap, lane, ev, 64), k;
    for (k = 0; k < n; k++)
        if (ev[k].kind == IKP_EVENT_REGION && ev[k].id == id && ev[k].start_ps == s_ns * NS && ev[k].end_ps == e_ns * NS)
            return 1;
    return 0;
}

/* ---- Triton-distributed ---- */

/* 3 blocks x 2 groups; block 2 never ran (its lanes and block word stay empty) */
static void td_buffer(uint64_t *w, size_t n, uint64_t empty, uint64_t base)
{
    /* lane (0,0): task 3 { task 5 { } }  nested
       lane (0,1): task 1 [10, 50] and task 2 [30, 80] overlap (two tracks)
       lane (1,0): task 4 across the 2^32 wrap of globaltimer_lo
       lane (1,1): one region, then a begin with no end */
    static enc_rec r00[4], r01[4], r10[2], r11[3];
    enc_lane L[4];
    enc_rec a00[4] = {{ENC_B, 3, 0, 0}, {ENC_B, 5, 10, 0}, {ENC_E, 5, 50, 0}, {ENC_E, 3, 100, 0}};
    enc_rec a01[4] = {{ENC_B, 1, 10, 0}, {ENC_B, 2, 30, 0}, {ENC_E, 1, 50, 0}, {ENC_E, 2, 80, 0}};
    enc_rec a11[3] = {{ENC_B, 6, 200, 0}, {ENC_E, 6, 260, 0}, {ENC_B, 7, 300, 0}};
    size_t i;
    for (i = 0; i < 4; i++) { r00[i] = a00[i]; r00[i].t += base; r01[i] = a01[i]; r01[i].t += base; }
    for (i = 0; i < 3; i++) { r11[i] = a11[i]; r11[i].t += base; }
    /* starts 1000 ns before the low half wraps, ends 500 ns after */
    r10[0].kind = ENC_B; r10[0].id = 4; r10[0].t = ((base >> 32) + 1) * 0x100000000ull - 1000;
    r10[1].kind = ENC_E; r10[1].id = 4; r10[1].t = ((base >> 32) + 1) * 0x100000000ull + 500;
    memset(L, 0, sizeof L);
    L[0].block = 0; L[0].group = 0; L[0].sm = 7; L[0].recs = r00; L[0].n = 4;
    L[1].block = 0; L[1].group = 1; L[1].sm = 7; L[1].recs = r01; L[1].n = 4;
    L[2].block = 1; L[2].group = 0; L[2].sm = 3; L[2].recs = r10; L[2].n = 2;
    L[3].block = 1; L[3].group = 1; L[3].sm = 3; L[3].recs = r11; L[3].n = 3;
    enc_triton_dist(w, n, 3, 2, empty, L, 4);
}

static void test_triton_dist(void)
{
    static const uint64_t empties[3] = {0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0};
    uint64_t w[1 + 3 + 6 * 5];
    const size_t n = sizeof w / 8;
    /* the capture starts at base; the wrap region 5000 ns later, 1000 ns before
       the low half of globaltimer wraps */
    const uint64_t base = 0x12345700000000ull - 1000 - 5000;
    int v;
    for (v = 0; v < 3; v++) {
        ikp_error e;
        ikp_capture *cap;
        const ikp_capture_info *in;
        ikp_lane_info li;
        char *j;
        td_buffer(w, n, empties[v], base);
        cap = open_opt(w, n, IKP_FORMAT_AUTO, 0, 0, IKP_OK, &e);
        if (!cap) continue;
        in = ikp_capture_get_info(cap);
        CHECK_EQ(in->format, IKP_FORMAT_TRITON_DIST);
        CHECK_EQ(in->detect_tie, 0);
        CHECK_EQ(in->num_blocks, 3);
        CHECK_EQ(in->num_groups, 2);
        CHECK_EQ(in->num_lanes, 6);
        CHECK_EQ(in->active_lanes, 4);
        CHECK_EQ(in->records, 13);
        CHECK_EQ(in->invalid, 0);
        CHECK_EQ(in->drops_known, 0);
        check_peer_totals(cap);
        CHECK(nesting_ok(cap));
        /* the wrap: 1500 ns long, not 2^32 - 1500 */
        CHECK(has_region(cap, 2, 4, 5000, 6500));
        CHECK(has_region(cap, 0, 3, 0, 100));
        CHECK(has_region(cap, 0, 5, 10, 50));
        CHECK(has_region(cap, 1, 1, 10, 50));
        CHECK(has_region(cap, 1, 2, 30, 80));
        CHECK(has_region(cap, 3, 6, 200, 260));
        li = lane_info(cap, 0);
        CHECK_EQ(li.sm, 7);
        CHECK_EQ(li.block, 0);
        CHECK_EQ(li.group, 0);
        li = lane_info(cap, 3);
        CHECK_EQ(li.sm, 3);
        CHECK_EQ(li.block, 1);
        CHECK_EQ(li.group, 1);
        li = lane_info(cap, 4); /* block 2 never ran */
        CHECK_EQ(li.sm, IKP_NO_SM);
        CHECK_EQ(li.flags & IKP_LANE_STARTED, 0);
        {
            ikp_lane_events ev;
            memset(&ev, 0, sizeof ev);
            CHECK_EQ(ikp_decode_lane(cap, 1, &ev, NULL), IKP_OK);
            CHECK_EQ(ev.num_tracks, 2); /* 1 and 2 overlap without nesting */
            CHECK_EQ(ikp_decode_lane(cap, 3, &ev, NULL), IKP_OK);
            CHECK_EQ(ev.unmatched_begin, 1);
            CHECK_EQ(ev.regions, 1);
            ikp_lane_events_free(cap, &ev);
        }
        j = chrome(cap, IKP_BY_SM);
        CHECK(j && strstr(j, "\"name\":\"SM 7\"") && strstr(j, "\"name\":\"SM 3\""));
        free(j);
        ikp_capture_free(cap);
        /* the same words forced, and in 10 ns ticks (AMD): every time x10 */
        cap = open_opt(w, n, IKP_FORMAT_TRITON_DIST, 0, 10000, IKP_OK, &e);
        if (cap) {
            CHECK_EQ(ikp_capture_get_info(cap)->timer_unit_ps, 10000);
            CHECK(has_region(cap, 2, 4, 50000, 65000));
            CHECK(has_region(cap, 1, 2, 300, 800));
            check_peer_totals(cap);
            ikp_capture_free(cap);
        }
    }
    /* a record whose tag names another lane is counted, not shown */
    td_buffer(w, n, empties[0], base);
    w[1 + 3 + 0] ^= (uint64_t)5 << 12; /* lane 0's first record now says lane 5 */
    {
        ikp_error e;
        ikp_capture *cap = open_opt(w, n, IKP_FORMAT_TRITON_DIST, 0, 0, IKP_OK, &e);
        if (cap) {
            CHECK_EQ(ikp_capture_get_info(cap)->invalid, 1);
            CHECK_EQ(lane_info(cap, 0).invalid, 1);
            check_peer_totals(cap);
            ikp_capture_free(cap);
        }
    }
    /* truncated: the header's blocks and lanes do not fit */
    {
        ikp_error e;
        uint64_t t[6] = {(2ull << 32) | 3, 0, 1, 2, 0, 0};
        CHECK(open_opt(t, 6, IKP_FORMAT_TRITON_DIST, 0, 0, IKP_ERR_TRUNCATED, &e) == NULL);
        CHECK(strstr(e.message, "3 block words") != NULL);
    }
}

/* detection: triton-dist against tirx and flashinfer, both ways */
static void test_triton_dist_detection(void)
{
    enc_rec r[2] = {{ENC_B, 1, T0 + 10, 0}, {ENC_E, 1, T0 + 20, 0}};
    enc_lane L[4];
    uint64_t w[1 + 4 + 4 * 2 + 6];
    int i, v;
    ikp_error e;
    memset(L, 0, sizeof L);
    for (i = 0; i < 4; i++) { L[i].block = (uint32_t)i; L[i].sm = 20 + (uint32_t)i; L[i].recs = r; L[i].n = 2; }
    for (v = 0; v < 3; v++) { /* 4 blocks x 1 group, filled, zeroed, first release */
        ikp_capture *cap;
        enc_triton_dist(w, sizeof w / 8, 4, 1, v == 0 ? 0x7FFFFFFFFFFFFFFFull : v == 1 ? 0 : ~0ull, L, 4);
        cap = open_opt(w, sizeof w / 8, IKP_FORMAT_AUTO, 0, 0, IKP_OK, &e);
        if (!cap) continue;
        CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_TRITON_DIST);
        CHECK_EQ(ikp_capture_get_info(cap)->detect_tie, 0);
        CHECK_EQ(ikp_capture_get_info(cap)->records, 8);
        CHECK(has_region(cap, 3, 1, 0, 10));
        ikp_capture_free(cap);
    }
    /* the same lanes as tirx and flashinfer buffers stay what they are */
    enc_tirx(w, sizeof w / 8, 4, 1, 4, L, 4);
    {
        ikp_capture *cap = open_opt(w, sizeof w / 8, IKP_FORMAT_AUTO, 0, 0, IKP_OK, &e);
        if (cap) { CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_TIRX); ikp_capture_free(cap); }
    }
    enc_flashinfer(w, sizeof w / 8, 4, 1, L, 4);
    {
        ikp_capture *cap = open_opt(w, sizeof w / 8, IKP_FORMAT_AUTO, 0, 0, IKP_OK, &e);
        if (cap) { CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_FLASHINFER); ikp_capture_free(cap); }
    }
    /* one block only: its block word is the only evidence, and it is said to be a guess */
    enc_triton_dist(w, 1 + 1 + 2, 1, 1, 0, L, 1);
    {
        ikp_capture *cap = open_opt(w, 1 + 1 + 2, IKP_FORMAT_AUTO, 0, 0, IKP_OK, &e);
        if (cap) {
            ikp_stats *st = NULL;
            membuf m = {0, 0, 0};
            CHECK_EQ(ikp_capture_get_info(cap)->format, IKP_FORMAT_TRITON_DIST);
            CHECK_EQ(ikp_capture_get_info(cap)->detect_tie, 1);
            CHECK_EQ(ikp_stats_compute(cap, &st, NULL), IKP_OK);
            CHECK_EQ(ikp_info_write_text(st, mem_write, &m, NULL), IKP_OK);
            CHECK(m.p && strstr(m.p, "the choice is a guess; pass format)") != NULL);
            CHECK(m.p && strstr(m.p, "--") == NULL); /* the library speaks of options, not flags */
            free(m.p);
            ikp_stats_free(st);
            ikp_capture_free(cap);
        }
    }
    /* one block on SM 0 (its block word reads 0, like an empty word), every
       slot written: tirx fits every record as well, and nothing says which:
       a guess, said so whichever wins */
    L[0].sm = 0;
    enc_triton_dist(w, 1 + 1 + 2, 1, 1, 0, L, 1);
    CHECK_EQ(w[1], 0);
    {
        ikp_capture *cap = open_opt(w, 1 + 1 + 2, IKP_FORMAT_AUTO, 0, 0, IKP_OK, &e);
        if (cap) {
            CHECK_EQ(ikp_capture_get_info(cap)->detect_fit[IKP_FORMAT_TRITON_DIST],
                     ikp_capture_get_info(cap)->detect_fit[IKP_FORMAT_TIRX]);
            CHECK_EQ(ikp_capture_get_info(cap)->detect_tie, 1);
            ikp_capture_free(cap);
        }
        cap = open_opt(w, 1 + 1 + 2, IKP_FORMAT_TRITON_DIST, 0, 0, IKP_OK, &e); /* named: read as told */
        if (cap) {
            CHECK_EQ(ikp_capture_get_info(cap)->detect_tie, 0);
            CHECK(has_region(cap, 0, 1, 0, 10));
            ikp_capture_free(cap);
        }
    }
}

/* random triton-dist buffers: the open-time pass and the walks agree */
static void test_triton_dist_random(void)
{
    uint64_t w[1 + 3 + 64];
    uint32_t seed = 777;
    int round, k;
    for (round = 0; round < 300; round++) {
        ikp_capture *cap;
        ikp_error e;
        uint32_t nb = 1 + round % 3, ng = 1 + round % 2, n = 1 + nb + 48;
        w[0] = ((uint64_t)ng << 32) | nb;
        for (k = 0; k < (int)nb; k++) w[1 + k] = ((uint64_t)(round % 9) << 32) | (uint32_t)k;
        for (k = 1 + (int)nb; k < (int)n; k++) {
            uint32_t lane = (uint32_t)(k - 1 - (int)nb) % (nb * ng), t;
            seed = seed * 1103515245u + 12345u;
            if (round % 4 == 0 && (seed >> 28) == 0) lane ^= 1; /* a misfiled record */
            t = 1000 + (uint32_t)k * 40 - ((seed >> 20) & 3) * 300 + (round % 5 == 0 ? (seed & 0x80000000u) : 0);
            w[k] = ((seed >> 4) & 7) == 0 ? 0x7FFFFFFFFFFFFFFFull
                   : ((uint64_t)t << 32) | (lane << 12) | (((seed >> 12) & 7) << 1) | ((seed >> 16) & 1);
        }
        cap = open_opt(w, n, IKP_FORMAT_TRITON_DIST, 0, round % 3 ? 0 : 10000, IKP_OK, &e);
        if (cap) {
            check_peer_totals(cap);
            CHECK(nesting_ok(cap));
            ikp_capture_free(cap);
        }
    }
}

/* ---- transformer_nuggets ---- */

static void test_nuggets_legacy(void)
{
    /* unit 0: outer [0, 1000] holds inner [100, 300] (static mode: slots in reverse)
       unit 1: tags 1 [10, 60] and 2 [40, 90] overlap
       unit 2: never ran
       unit 3: atomic mode, asked to keep 6 regions in 4 slots */
    const enc_region u0[2] = {{T0 + 100, 200, 2, 40, 0}, {T0 + 0, 1000, 1, 40, 1}};
    const enc_region u1[2] = {{T0 + 10, 50, 1, 1, 0}, {T0 + 40, 50, 2, 1, 1}};
    const enc_region u3[4] = {{T0 + 500, 5, 3, 3, 0}, {T0 + 510, 5, 3, 3, 1}, {T0 + 520, 5, 3, 3, 2}, {T0 + 530, 5, 3, 3, 3}};
    const enc_region *regs[4] = {u0, u1, NULL, u3};
    const size_t nreg[4] = {2, 2, 0, 4};
    const uint64_t count[4] = {0, 0, 0, 6};
    uint64_t w[4 * 17];
    int pass;
    enc_nuggets(w, 4, 4, count, regs, nreg);
    for (pass = 0; pass < 2; pass++) { /* units inferred, then given */
        ikp_error e;
        ikp_capture *cap = open_opt(w, 68, IKP_FORMAT_AUTO, pass ? 4 : 0, 0, IKP_OK, &e);
        const ikp_capture_info *in;
        ikp_event ev[8];
        size_t nev;
        char *j;
        if (!cap) continue;
        in = ikp_capture_get_info(cap);
        CHECK_EQ(in->format, IKP_FORMAT_NUGGETS);
        CHECK_EQ(in->units_inferred, !pass);
        CHECK_EQ(in->num_lanes, 4);
        CHECK_EQ(in->unit_words, 17);
        CHECK_EQ(in->active_lanes, 3);
        CHECK_EQ(in->records, 8);
        CHECK_EQ(in->drops_known, 1);
        CHECK_EQ(in->dropped, 2);
        CHECK_EQ(lane_info(cap, 3).dropped, 2);
        CHECK_EQ(lane_info(cap, 2).flags & IKP_LANE_STARTED, 0);
        CHECK_EQ(in->span_ps, 1000 * NS);
        /* the stamps are %globaltimer ns: the GPU time of time 0 is the first start */
        CHECK_EQ(in->gpu_time_known, 1);
        CHECK_EQ(in->gpu_zero_ns, T0);
        check_peer_totals(cap);
        CHECK(nesting_ok(cap));
        nev = regions(cap, 0, ev, 8);
        CHECK_EQ(nev, 2);
        if (nev == 2) { /* sorted by start; nested on one track; the tid kept */
            CHECK(ev[0].id == 1 && ev[0].start_ps == 0 && ev[0].end_ps == 1000 * NS && ev[0].track == 0);
            CHECK(ev[1].id == 2 && ev[1].start_ps == 100 * NS && ev[1].end_ps == 300 * NS && ev[1].track == 0);
            CHECK((ev[1].flags & IKP_EVENT_HAS_TID) && ev[1].tid == 40);
        }
        nev = regions(cap, 1, ev, 8);
        CHECK(nev == 2 && ev[0].track != ev[1].track);
        CHECK(has_region(cap, 3, 3, 530, 535));
        j = chrome(cap, IKP_BY_BLOCK);
        CHECK(j && strstr(j, "\"name\":\"unit 3\"") && strstr(j, "\"tid\":40}"));
        free(j);
        ikp_capture_free(cap);
    }
    { /* another tick than 1 ns: the stamps are not GPU time */
        ikp_error e;
        ikp_capture *cap = open_opt(w, 68, IKP_FORMAT_NUGGETS, 4, 10000, IKP_OK, &e);
        if (cap) CHECK_EQ(ikp_capture_get_info(cap)->gpu_time_known, 0);
        ikp_capture_free(cap);
    }
    /* bad records are counted and never stretch the time axis */
    w[17 + 1 + 2] = 20000;             /* unit 1, slot 0: a tag past the id range */
    w[17 + 5 + 1] = (uint64_t)-5;      /* unit 1, slot 1: a negative duration */
    w[0 + 9] = 12345;                  /* unit 0, slot 2: a start nowhere near the others */
    w[0 + 10] = 1;
    {
        ikp_error e;
        ikp_capture *cap = open_opt(w, 68, IKP_FORMAT_NUGGETS, 4, 0, IKP_OK, &e);
        if (cap) {
            CHECK_EQ(ikp_capture_get_info(cap)->invalid, 3);
            CHECK_EQ(ikp_capture_get_info(cap)->span_ps, 1000 * NS);
            check_peer_totals(cap);
            ikp_capture_free(cap);
        }
    }
    /* atomic mode: slots past the count hold an earlier launch's records
       (unit 3 counts 2 this time; slots 2 and 3 are a second older): left
       out and counted, the span stays this launch's */
    w[3 * 17] = 2;
    w[3 * 17 + 1 + 4 * 2] -= 1000000000;
    w[3 * 17 + 1 + 4 * 3] -= 1000000000;
    {
        ikp_error e;
        ikp_capture *cap = open_opt(w, 68, IKP_FORMAT_NUGGETS, 4, 0, IKP_OK, &e);
        if (cap) {
            const ikp_capture_info *in = ikp_capture_get_info(cap);
            CHECK_EQ(in->past_count, 2);
            CHECK_EQ(lane_info(cap, 3).past_count, 2);
            CHECK_EQ(lane_info(cap, 3).records, 2);
            CHECK_EQ(lane_info(cap, 3).dropped, 0);
            CHECK_EQ(in->span_ps, 1000 * NS);
            CHECK(has_region(cap, 3, 3, 510, 515) && !has_region(cap, 3, 3, 530, 535));
            check_peer_totals(cap);
            ikp_capture_free(cap);
        }
    }
    /* wrong num_units: not a divisor, or slices that cannot be legacy ones */
    {
        ikp_error e;
        CHECK(open_opt(w, 68, IKP_FORMAT_NUGGETS, 3, 0, IKP_ERR_BAD_HEADER, &e) == NULL);
        CHECK(strstr(e.message, "does not divide into 3 units") != NULL);
        CHECK(open_opt(w, 68, IKP_FORMAT_NUGGETS, 17, 0, IKP_ERR_BAD_HEADER, &e) == NULL);
        CHECK(strstr(e.message, "1 count + 4 x max_events") != NULL);
        /* truncated: a slice cut off, so no unit count fits */
        CHECK(open_opt(w, 67, IKP_FORMAT_NUGGETS, 0, 0, IKP_ERR_UNKNOWN_FORMAT, &e) == NULL);
        CHECK(strstr(e.message, "pass num_units") != NULL && strstr(e.message, "--") == NULL);
        CHECK(open_opt(w, 68, IKP_FORMAT_TIRX, 4, 0, IKP_ERR_INVALID_ARGUMENT, &e) == NULL);
    }
}

static void test_nuggets_compact(void)
{
    /* unit 0: anchor 256 ns before a 2^32 boundary; regions on both sides of it
       unit 1: A lasts 20 ms (kept as 20 ms - 2^24 ns), B starts 25 ms after A: A may have wrapped
       unit 2: never ran */
    const uint64_t X = (T0 | 0xFFFFFFFFull) - 255; /* low half 0xFFFFFF00 */
    const enc_region u0[3] = {{X + 16, 1000, 1, 0, 0}, {X + 300, 100, 2, 0, 1}, {X + 400, 50, 3, 0, 2}};
    const enc_region u1[2] = {{X + 1000, 20000000, 4, 0, 0}, {X + 1000 + 25000000, 10, 5, 0, 1}};
    const enc_region *regs[3] = {u0, u1, NULL};
    const size_t nreg[3] = {3, 2, 0};
    const uint64_t anchor[3] = {X, X + 900, 0};
    uint64_t w[3 * 6];
    int pass;
    enc_nuggets_compact(w, 3, 5, anchor, regs, nreg);
    for (pass = 0; pass < 2; pass++) {
        ikp_error e;
        ikp_capture *cap = open_opt(w, 18, pass ? IKP_FORMAT_NUGGETS_COMPACT : IKP_FORMAT_AUTO, pass ? 3 : 0, 0, IKP_OK, &e);
        const ikp_capture_info *in;
        ikp_event ev[8];
        size_t nev;
        char *j;
        if (!cap) continue;
        in = ikp_capture_get_info(cap);
        CHECK_EQ(in->format, IKP_FORMAT_NUGGETS_COMPACT);
        CHECK_EQ(in->num_lanes, 3);
        CHECK_EQ(in->active_lanes, 2);
        CHECK_EQ(in->records, 5);
        CHECK_EQ(in->may_wrap, 1);
        CHECK_EQ(in->drops_known, 0);
        check_peer_totals(cap);
        CHECK(nesting_ok(cap));
        /* across the boundary: exact starts */
        CHECK(has_region(cap, 0, 1, 0, 1000));
        CHECK(has_region(cap, 0, 2, 284, 384));
        CHECK(has_region(cap, 0, 3, 384, 434));
        nev = regions(cap, 1, ev, 8);
        CHECK_EQ(nev, 2);
        if (nev == 2) {
            CHECK(ev[0].id == 4 && (ev[0].flags & IKP_EVENT_MAY_WRAP));
            CHECK_EQ(ev[0].end_ps - ev[0].start_ps, (20000000 - (1 << 24)) * (int64_t)NS);
            CHECK(ev[1].id == 5 && !(ev[1].flags & IKP_EVENT_MAY_WRAP) && !(ev[1].flags & IKP_EVENT_HAS_TID));
        }
        j = chrome(cap, IKP_BY_BLOCK);
        CHECK(j && count_str(j, "\"may_wrap\":true") == 1);
        free(j);
        ikp_capture_free(cap);
    }
    /* records without an anchor: the unit is corrupt, its records counted */
    w[6] = 0;
    {
        ikp_error e;
        ikp_capture *cap = open_opt(w, 18, IKP_FORMAT_NUGGETS_COMPACT, 3, 0, IKP_OK, &e);
        if (cap) {
            CHECK_EQ(ikp_capture_get_info(cap)->corrupt_lanes, 1);
            CHECK(lane_info(cap, 1).flags & IKP_LANE_CORRUPT);
            CHECK_EQ(lane_info(cap, 1).invalid, 2);
            check_peer_totals(cap);
            ikp_capture_free(cap);
        }
    }
}

/* files that are no format's, auto-detected: a Parquet file and a PNG
   (their magic), and words that fit nuggets-compact by their size alone
   (part of a PNG: random bytes, one "unit" whose anchor is word 0) are
   refused naming what they look like; a compact buffer of many records in
   order still detects, and the same words forced stay readable */
static void test_not_a_buffer(void)
{
    static uint64_t w[4096];
    unsigned char *b = (unsigned char *)w;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    ikp_capture *cap;
    ikp_error e;
    size_t i, u, k;
    for (i = 0; i < 4096; i++) { /* xorshift64: bytes that look as compressed data's do */
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        w[i] = x;
    }
    w[0] &= ((uint64_t)1 << 62) - 1; /* a plausible anchor */
    CHECK(open_opt(w, 4096, IKP_FORMAT_AUTO, 0, 0, IKP_ERR_UNKNOWN_FORMAT, &e) == NULL);
    CHECK(strstr(e.message, "look random") != NULL);
    memcpy(b, "PAR1", 4);
    memcpy(b + 4096 * 8 - 4, "PAR1", 4);
    CHECK(open_opt(w, 4096, IKP_FORMAT_AUTO, 0, 0, IKP_ERR_UNKNOWN_FORMAT, &e) == NULL);
    CHECK(strstr(e.message, "Apache Parquet file") != NULL);
    memcpy(b, "\x89PNG\r\n\x1a\n", 8);
    CHECK(open_opt(w, 4096, IKP_FORMAT_AUTO, 0, 0, IKP_ERR_UNKNOWN_FORMAT, &e) == NULL);
    CHECK(strstr(e.message, "a PNG image") != NULL);
    /* 64 units of 64 words, each an anchor and 63 regions ending in order */
    memset(w, 0, sizeof w);
    for (u = 0; u < 64; u++) {
        uint64_t *q = w + u * 64, anchor = 1790000000000000000ull + u * 1000000;
        q[0] = anchor;
        for (k = 1; k < 64; k++)
            q[k] = (uint64_t)(k % 7) << 56 | (uint64_t)(200 + k) << 32 | (uint32_t)(anchor + 1000 * k);
    }
    cap = open_opt(w, 4096, IKP_FORMAT_AUTO, 0, 0, IKP_OK, &e);
    CHECK(cap && ikp_capture_get_info(cap)->format == IKP_FORMAT_NUGGETS_COMPACT &&
          ikp_capture_get_info(cap)->num_lanes == 64 && ikp_capture_get_info(cap)->records == 64 * 63);
    ikp_capture_free(cap);
}

/* what auto-detection says when it cannot decide, and option checks */
static void test_nuggets_detection(void)
{
    uint64_t z[40];
    ikp_error e;
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    memset(z, 0, sizeof z);
    CHECK(open_opt(z, 40, IKP_FORMAT_AUTO, 0, 0, IKP_ERR_BAD_MAGIC, &e) == NULL);
    CHECK(strstr(e.message, "never initialised") && strstr(e.message, "pass format (nuggets or nuggets-compact) and num_units"));
    CHECK(open_opt(z, 40, IKP_FORMAT_NUGGETS_COMPACT, 0, 0, IKP_ERR_UNKNOWN_FORMAT, &e) == NULL);
    CHECK(strstr(e.message, "pass num_units") != NULL);
    memset(&o, 0, sizeof o);
    o.timer_unit_ps = 1000001;
    CHECK_EQ(ikp_capture_open(z, 40, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
    o.timer_unit_ps = 10000;
    z[0] = IKP_WIRE_MAGIC;
    CHECK_EQ(ikp_capture_open(z, 40, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "timer_unit_ps is for peer formats; ikp buffers carry their own clock") != NULL);
    CHECK(cap == NULL);
    /* the caller's names for the options, in messages and in texts */
    {
        static const ikp_option_names tool = {"--format", "--units", "--timer-unit", NULL, NULL};
        o.option_names = &tool;
        CHECK_EQ(ikp_capture_open(z, 40, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "--timer-unit is for peer formats") != NULL && !strstr(e.message, "timer_unit_ps"));
        o.timer_unit_ps = 0;
        z[0] = 0;
        CHECK_EQ(ikp_capture_open(z, 40, &o, &cap, &e), IKP_ERR_BAD_MAGIC);
        CHECK(strstr(e.message, "pass --format (nuggets or nuggets-compact) and --units") != NULL);
        o.format = IKP_FORMAT_NUGGETS_COMPACT;
        CHECK_EQ(ikp_capture_open(z, 40, &o, &cap, &e), IKP_ERR_UNKNOWN_FORMAT);
        CHECK(strstr(e.message, "pass --units (the buffer") != NULL && !strstr(e.message, "num_units"));
        o.format = IKP_FORMAT_TIRX;
        o.num_units = 4;
        CHECK_EQ(ikp_capture_open(z, 40, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "--units is for nuggets buffers") != NULL);
        memset(&o, 0, sizeof o);
    }
    /* names */
    CHECK_EQ(ikp_format_from_name("triton-dist"), IKP_FORMAT_TRITON_DIST);
    CHECK_EQ(ikp_format_from_name("nuggets"), IKP_FORMAT_NUGGETS);
    CHECK_EQ(ikp_format_from_name("nuggets-compact"), IKP_FORMAT_NUGGETS_COMPACT);
    CHECK(!strcmp(ikp_format_name(IKP_FORMAT_NUGGETS_COMPACT), "nuggets-compact"));
}

/* random nuggets buffers of both layouts, inferred and given units: never
   a crash, counts of pass and lanes agree, tracks nest */
static void test_nuggets_random(void)
{
    uint64_t w[4 * 17];
    uint32_t seed = 99;
    int round, k;
    for (round = 0; round < 400; round++) {
        ikp_capture *cap = NULL;
        ikp_decode_options o;
        int compact = round & 1;
        for (k = 0; k < 68; k++) {
            uint32_t r;
            seed = seed * 1103515245u + 12345u;
            r = seed >> 8;
            if (r % 3 == 0) w[k] = 0;
            else if (compact) w[k] = (k % 17 == 0) ? T0 + (r % 5000) : ((uint64_t)(r & 0xFF) << 56) | ((uint64_t)r << 32) | r;
            else w[k] = (k % 17) % 4 == 1 ? T0 + (r % 5000) : (k % 17) % 4 == 2 ? r % 3000 : r % 8;
            if (round % 7 == 0 && r % 11 == 0) w[k] = ((uint64_t)r << 40) ^ r; /* garbage */
        }
        memset(&o, 0, sizeof o);
        o.format = compact ? IKP_FORMAT_NUGGETS_COMPACT : IKP_FORMAT_NUGGETS;
        o.num_units = round % 3 == 0 ? 0 : 4;
        if (ikp_capture_open(w, 68, &o, &cap, NULL) == IKP_OK) {
            check_peer_totals(cap);
            CHECK(nesting_ok(cap));
            ikp_capture_free(cap);
        }
    }
}

/* tirx and flashinfer: a region across a wrap of globaltimer_lo, in 1 ns
   and in 10 ns ticks (timer_unit_ps applies to every peer format) */
static void test_peer_wrap(void)
{
    const uint64_t wrap = 0x5500000000ull;
    enc_rec r[4] = {{ENC_B, 1, wrap - 700, 0}, {ENC_E, 1, wrap + 300, 0}, {ENC_B, 2, wrap + 400, 0}, {ENC_E, 2, wrap + 450, 0}};
    enc_lane L[2];
    uint64_t w[1 + 2 * 4];
    int f, tick;
    memset(L, 0, sizeof L);
    L[0].recs = r; L[0].n = 4;
    L[1] = L[0]; L[1].group = 1;
    for (f = 0; f < 2; f++)
        for (tick = 0; tick < 2; tick++) {
            ikp_error e;
            ikp_capture *cap;
            int64_t m = tick ? 10 : 1;
            if (f) enc_flashinfer(w, 9, 1, 2, L, 2);
            else enc_tirx(w, 9, 1, 2, 2, L, 2);
            cap = open_opt(w, 9, f ? IKP_FORMAT_FLASHINFER : IKP_FORMAT_TIRX, 0, tick ? 10000 : 0, IKP_OK, &e);
            if (!cap) continue;
            CHECK(has_region(cap, 0, 1, 0, 1000 * m));
            CHECK(has_region(cap, 1, 2, 1100 * m, 1150 * m));
            CHECK_EQ(ikp_capture_get_info(cap)->span_ps, 1150 * m * NS);
            check_peer_totals(cap);
            ikp_capture_free(cap);
        }
}

int main(void)
{
    test_peer_wrap();
    test_triton_dist();
    test_triton_dist_detection();
    test_triton_dist_random();
    test_nuggets_legacy();
    test_nuggets_compact();
    test_nuggets_detection();
    test_not_a_buffer();
    test_nuggets_random();
    return check_report();
}
