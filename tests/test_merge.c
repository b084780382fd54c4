/* Tests of merged timelines: captures of two GPUs whose clocks differ,
   placed by host readings, by a GPU-GPU measurement or by a shared GPU;
   the device and peer sections of capture files; and the bad inputs
   (missing, contradictory or implausible calibrations, a capture given
   twice). Then the SM clock samples that place a cycle lane while its
   clock changes speed, their file section and their bad inputs. The clocks are made up here with exact offsets, so every
   placement is known to the nanosecond. Also writes build/test-out/
   merge_a.ikp, merge_b.ikp, launch1.ikp and launch2.ikp for
   tests/test_perfetto.py. */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include "check.h"
#include "encoder.h"

#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* GPU A's clock at the start of its lane; GPU B's clock reads 100 us
   more than A's at any moment, the host's 40 us less than A's. */
#define G0 1795000000000000000ull
#define B_AHEAD 100000
#define HOST_BEHIND 40000
static const char *const ev_names[] = {"", "raise", "work", "seen"};

static void device(ikp_device_id *d, uint8_t tag, int ordinal, const char *host)
{
    memset(d, 0, sizeof *d);
    memset(d->uuid, tag, 16);
    snprintf(d->host, sizeof d->host, "%s", host);
    d->ordinal = ordinal;
    d->rank = -1;
    d->pci_bus = 0x1b + (uint32_t)ordinal;
}

/* A: "raise" at 1000 ns after its lane start, "work" 2000..3000.
   B: "seen" 1600 ns after A's lane start (on B's clock: + B_AHEAD), its
   lane started 500 ns after A's. w: 8 + 9 + 4 words. */
static ikp_capture *gpu_capture(uint64_t *w, int is_b, const ikp_device_id *dev, const ikp_clock_sync *cs,
                                uint32_t ncs, const ikp_peer_clock *pc, uint32_t npc, ikp_result want, ikp_error *e)
{
    enc_rec r[3];
    enc_lane L;
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    memset(&L, 0, sizeof L);
    memset(r, 0, sizeof r);
    if (!is_b) {
        r[0].kind = ENC_I; r[0].id = 1; r[0].t = G0 + 1000;
        r[1].kind = ENC_B; r[1].id = 2; r[1].t = G0 + 2000;
        r[2].kind = ENC_E; r[2].id = 2; r[2].t = G0 + 3000;
        L.n = 3;
        L.g0 = G0;
    } else {
        r[0].kind = ENC_I; r[0].id = 3; r[0].t = G0 + B_AHEAD + 1600;
        L.n = 1;
        L.g0 = G0 + B_AHEAD + 500;
    }
    L.started = L.finalized = 1;
    L.recs = r;
    L.g1 = L.g0 + 5000;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    memset(&o, 0, sizeof o);
    o.event_names = ev_names;
    o.num_event_names = 4;
    o.device = dev;
    o.clock = cs;
    o.num_clock = ncs;
    o.peers = pc;
    o.num_peers = npc;
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 4, &o, &cap, e), want);
    if (want != IKP_OK && cap == NULL && strlen(e->message) == 0) CHECK(0);
    return cap;
}

/* readings of each GPU against the host, 1 ms apart around the kernel */
static void host_readings(ikp_clock_sync *cs, int is_b, uint32_t unc)
{
    int k;
    memset(cs, 0, 2 * sizeof *cs);
    for (k = 0; k < 2; k++) {
        uint64_t a = G0 - 500000 + (uint64_t)k * 1000000; /* A's clock at the reading */
        cs[k].gpu_ns = a + (is_b ? B_AHEAD : 0);
        cs[k].host_ns = (int64_t)(a - HOST_BEHIND);
        cs[k].uncertainty_ns = unc;
    }
}

static void peer_of(ikp_peer_clock *p, uint8_t tag, uint64_t gpu_ns, int64_t offset, uint32_t unc)
{
    memset(p, 0, sizeof *p);
    memset(p->peer_uuid, tag, 16);
    p->gpu_ns = gpu_ns;
    p->offset_ns = offset;
    p->uncertainty_ns = unc;
    p->round_trip_ns = 2 * unc;
}

static void test_host_placement(void)
{
    uint64_t wa[21], wb[21];
    ikp_device_id da, db;
    ikp_clock_sync ca[2], cb[2];
    ikp_capture *caps[2];
    ikp_alignment al[2];
    ikp_error e;
    int64_t h = 0;
    uint32_t u = 0;
    device(&da, 0xA0, 0, "node1");
    device(&db, 0xB0, 1, "node1");
    host_readings(ca, 0, 700);
    host_readings(cb, 1, 500);
    caps[0] = gpu_capture(wa, 0, &da, ca, 2, NULL, 0, IKP_OK, &e);
    caps[1] = gpu_capture(wb, 1, &db, cb, 2, NULL, 0, IKP_OK, &e);
    if (!caps[0] || !caps[1]) { ikp_capture_free(caps[0]); ikp_capture_free(caps[1]); return; }
    CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_OK);
    CHECK_EQ(al[0].via, IKP_ALIGN_REFERENCE);
    CHECK_EQ(al[0].zero_ns, 0);
    CHECK_EQ(al[1].via, IKP_ALIGN_HOST);
    CHECK_EQ(al[1].offset_ns, B_AHEAD);
    CHECK_EQ(al[1].uncertainty_ns, 700 + 500);
    CHECK_EQ(al[1].zero_ns, 600); /* B's first record, 1600 ns after A's lane start; A's at 1000 */
    CHECK_EQ(al[1].from, 0);
    CHECK_EQ(al[1].links, 1);
    /* host time of the merged time 0: A's host time of its first record (B's path is less exact) */
    CHECK_EQ(ikp_merge_host_zero((const ikp_capture *const *)caps, 2, al, &h, &u, &e), IKP_OK);
    CHECK_EQ(h, (int64_t)(G0 + 1000 - HOST_BEHIND));
    CHECK_EQ(u, 700);
    /* raw: B's records 100 us late, as if the clocks were one */
    CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 1, al, &e), IKP_OK);
    CHECK_EQ(al[1].via, IKP_ALIGN_RAW);
    CHECK_EQ(al[1].zero_ns, B_AHEAD + 600);
    /* the same GPUs on two hosts: their host clocks are not one, nothing links them */
    ikp_capture_free(caps[1]);
    device(&db, 0xB0, 1, "node2");
    caps[1] = gpu_capture(wb, 1, &db, cb, 2, NULL, 0, IKP_OK, &e);
    if (caps[1]) {
        char lab[128];
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_ERR_EMPTY);
        CHECK(strstr(e.message, "node2 GPU 1 cannot be placed against node1 GPU 0") != NULL);
        ikp__merge_label((const ikp_capture *const *)caps, 2, 1, lab, sizeof lab);
        CHECK(strcmp(lab, "node2 GPU 1") == 0);
    }
    ikp_capture_free(caps[0]);
    ikp_capture_free(caps[1]);
}

/* B's host readings six days before its kernel: its uncertainty against
   A (10 ns of drift per ms) passes 32 bits of ns; it is IKP_MORE_NS, said
   "more than", not 4294967.295 us (0xFFFFFFFF: not known) */
static void test_uncertainty_past_32_bits(void)
{
    uint64_t wa[21], wb[21];
    ikp_device_id da, db;
    ikp_clock_sync ca[2], cb[2];
    ikp_capture *caps[2];
    ikp_alignment al[2];
    ikp_merge_options mo;
    membuf m = {0, 0, 0};
    ikp_error e;
    int k;
    device(&da, 0xA0, 0, "node1");
    device(&db, 0xB0, 1, "node1");
    host_readings(ca, 0, 700);
    host_readings(cb, 1, 500);
    for (k = 0; k < 2; k++) { /* 500,000 s earlier on both clocks */
        cb[k].gpu_ns -= 500000000000000ull;
        cb[k].host_ns -= 500000000000000ll;
    }
    caps[0] = gpu_capture(wa, 0, &da, ca, 2, NULL, 0, IKP_OK, &e);
    caps[1] = gpu_capture(wb, 1, &db, cb, 2, NULL, 0, IKP_OK, &e);
    if (!caps[0] || !caps[1]) { ikp_capture_free(caps[0]); ikp_capture_free(caps[1]); return; }
    memset(&mo, 0, sizeof mo);
    mo.alignment = al;
    CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, IKP_TRACE_JSON, mem_write, &m, &e), IKP_OK);
    CHECK_EQ(al[1].via, IKP_ALIGN_HOST);
    CHECK_EQ(al[1].uncertainty_ns, IKP_MORE_NS);
    CHECK(m.p && strstr(m.p, "+- more than 4294967.294 us") != NULL && strstr(m.p, "4294967.295") == NULL);
    free(m.p);
    ikp_capture_free(caps[0]);
    ikp_capture_free(caps[1]);
}

static void test_peer_placement(void)
{
    uint64_t wa[21], wb[21];
    ikp_device_id da, db;
    ikp_clock_sync ca[2], cb[2];
    ikp_peer_clock pc[2];
    ikp_capture *caps[2];
    ikp_alignment al[2];
    ikp_error e;
    device(&da, 0xA0, 0, "node1");
    device(&db, 0xB0, 1, "node1");
    host_readings(ca, 0, 700);
    host_readings(cb, 1, 500);
    /* A measured B 30 ns further ahead than the host readings say, +- 100 ns: within both */
    peer_of(&pc[0], 0xB0, G0 - 400000, B_AHEAD + 30, 100);
    peer_of(&pc[1], 0xB0, G0 + 400000, B_AHEAD + 30, 100);
    caps[0] = gpu_capture(wa, 0, &da, ca, 2, pc, 2, IKP_OK, &e);
    caps[1] = gpu_capture(wb, 1, &db, cb, 2, NULL, 0, IKP_OK, &e);
    if (caps[0] && caps[1]) {
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_OK);
        CHECK_EQ(al[1].via, IKP_ALIGN_PEER);
        CHECK_EQ(al[1].offset_ns, B_AHEAD + 30);
        CHECK_EQ(al[1].uncertainty_ns, 100);
        CHECK_EQ(al[1].zero_ns, 570);
        /* the other order: B the reference, the measurement held by A read backwards */
        {
            const ikp_capture *rev[2];
            rev[0] = caps[1];
            rev[1] = caps[0];
            CHECK_EQ(ikp_merge_align(rev, 2, 0, al, &e), IKP_OK);
            CHECK_EQ(al[1].via, IKP_ALIGN_PEER);
            CHECK_EQ(al[1].offset_ns, -(B_AHEAD + 30));
            CHECK_EQ(al[1].zero_ns, 0); /* A's first record is still the earliest */
            CHECK_EQ(al[0].zero_ns, 570);
        }
    }
    ikp_capture_free(caps[0]);
    /* a measurement 5 us off what the host readings say, +- 100 ns: they
       disagree; placed by the measurement, the disagreement said on both
       and B's uncertainty grown by exactly it, not refused */
    peer_of(&pc[0], 0xB0, G0 - 400000, B_AHEAD + 5000, 100);
    peer_of(&pc[1], 0xB0, G0 + 400000, B_AHEAD + 5000, 100);
    caps[0] = gpu_capture(wa, 0, &da, ca, 2, pc, 2, IKP_OK, &e);
    if (caps[0] && caps[1]) {
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_OK);
        CHECK_EQ(al[1].via, IKP_ALIGN_PEER);
        CHECK_EQ(al[1].offset_ns, B_AHEAD + 5000);
        CHECK_EQ(al[1].disagree_via, IKP_ALIGN_HOST);
        CHECK_EQ(al[1].disagree_with, 0);
        CHECK_EQ(al[0].disagree_with, 1);
        CHECK_EQ(al[0].disagreement_ns, al[1].disagreement_ns);
        /* the host link says B_AHEAD within its uncertainty h: 5000 = h + 100 + the excess */
        CHECK(al[1].disagreement_ns > 3000 && al[1].disagreement_ns < 4900);
        /* B's bound grown to hold what the host link says: 5000 + h = 9900 - the excess */
        CHECK_EQ(al[1].uncertainty_ns, 9900 - al[1].disagreement_ns);
        CHECK_EQ(al[0].uncertainty_ns, 0);
    }
    ikp_capture_free(caps[0]);
    /* only a peer measurement, no host readings: placed by it alone */
    caps[0] = gpu_capture(wa, 0, &da, NULL, 0, pc, 1, IKP_OK, &e);
    if (caps[0] && caps[1]) {
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_OK);
        CHECK_EQ(al[1].via, IKP_ALIGN_PEER);
        /* one measurement 400 us before time 0: + 10 ns per ms of drift allowance (4 ns) */
        CHECK_EQ(al[1].uncertainty_ns, 100 + 4);
    }
    ikp_capture_free(caps[0]);
    ikp_capture_free(caps[1]);
    /* bad peer measurements: of the capture's own GPU, contradicting, implausible, missing */
    peer_of(&pc[0], 0xA0, G0, 5, 100);
    CHECK(gpu_capture(wa, 0, &da, NULL, 0, pc, 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    CHECK(strstr(e.message, "own GPU") != NULL);
    peer_of(&pc[0], 0xB0, G0, B_AHEAD, 100);
    peer_of(&pc[1], 0xB0, G0 + 1000000, B_AHEAD + 2000, 100);
    CHECK(gpu_capture(wa, 0, &da, NULL, 0, pc, 2, IKP_ERR_BAD_HEADER, &e) == NULL);
    CHECK(strstr(e.message, "contradict") != NULL);
    peer_of(&pc[0], 0x00, G0, B_AHEAD, 100);
    CHECK(gpu_capture(wa, 0, &da, NULL, 0, pc, 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    CHECK(strstr(e.message, "names no peer") != NULL);
    peer_of(&pc[0], 0xB0, 12345, B_AHEAD, 100);
    CHECK(gpu_capture(wa, 0, &da, NULL, 0, pc, 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    peer_of(&pc[0], 0xB0, G0, B_AHEAD, 1000000000u);
    CHECK(gpu_capture(wa, 0, &da, NULL, 0, pc, 1, IKP_ERR_BAD_HEADER, &e) == NULL);
    CHECK(gpu_capture(wa, 0, &da, NULL, 0, NULL, 1, IKP_ERR_INVALID_ARGUMENT, &e) == NULL);
    {
        ikp_device_id bad;
        device(&bad, 0xA0, 0, "node1");
        memset(bad.host, 'x', sizeof bad.host); /* no terminating NUL */
        CHECK(gpu_capture(wa, 0, &bad, NULL, 0, NULL, 0, IKP_ERR_BAD_HEADER, &e) == NULL);
        CHECK(strstr(e.message, "host name") != NULL);
        device(&bad, 0xA0, -2, "node1");
        CHECK(gpu_capture(wa, 0, &bad, NULL, 0, NULL, 0, IKP_ERR_BAD_HEADER, &e) == NULL);
    }
}

static void test_same_gpu_and_twice(void)
{
    uint64_t wa[21], wb[21], wc[21];
    ikp_device_id da, db;
    ikp_capture *caps[3];
    ikp_alignment al[3];
    ikp_error e;
    char lab[128];
    device(&da, 0xA0, 0, "node1");
    device(&db, 0xB0, 1, "node1");
    /* two launches on GPU A (the second is B's buffer, named as A): one clock, placed exactly */
    caps[0] = gpu_capture(wa, 0, &da, NULL, 0, NULL, 0, IKP_OK, &e);
    caps[1] = gpu_capture(wb, 1, &da, NULL, 0, NULL, 0, IKP_OK, &e);
    caps[2] = gpu_capture(wc, 0, &db, NULL, 0, NULL, 0, IKP_OK, &e);
    if (caps[0] && caps[1] && caps[2]) {
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_OK);
        CHECK_EQ(al[1].via, IKP_ALIGN_SAME_GPU);
        CHECK_EQ(al[1].uncertainty_ns, 0);
        CHECK_EQ(al[1].zero_ns, B_AHEAD + 600);
        ikp__merge_label((const ikp_capture *const *)caps, 2, 1, lab, sizeof lab);
        CHECK(strcmp(lab, "GPU 0 #2") == 0);
        /* a third capture of another GPU with no readings: nothing places it */
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 3, 0, al, &e), IKP_ERR_EMPTY);
        CHECK(strstr(e.message, "GPU 1 cannot be placed") != NULL);
        /* the same capture twice */
        ikp_capture_free(caps[1]);
        caps[1] = caps[0];
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "again") != NULL);
        caps[1] = NULL;
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 0, 0, al, &e), IKP_ERR_INVALID_ARGUMENT);
        /* one capture alone: the reference */
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 1, 0, al, &e), IKP_OK);
        CHECK_EQ(al[0].zero_ns, 0);
        CHECK_EQ(al[0].disagreement_ns, 0);
    }
    ikp_capture_free(caps[0]);
    ikp_capture_free(caps[2]);
    /* placed by their first records (align_start): at the times given, the
       earliest at 0, no clock involved; bad times refused */
    caps[0] = gpu_capture(wa, 0, &da, NULL, 0, NULL, 0, IKP_OK, &e);
    caps[1] = gpu_capture(wb, 1, &db, NULL, 0, NULL, 0, IKP_OK, &e);
    if (caps[0] && caps[1]) {
        const int64_t at[2] = {0, -5000}, far[2] = {0, (int64_t)1 << 62};
        CHECK_EQ(ikp_merge_align_start((const ikp_capture *const *)caps, 2, at, al, &e), IKP_OK);
        CHECK(al[0].zero_ns == 5000 && al[1].zero_ns == 0);
        CHECK(al[0].via == IKP_ALIGN_REFERENCE && al[1].via == IKP_ALIGN_START);
        CHECK_EQ(al[1].uncertainty_ns, 0xFFFFFFFFu);
        CHECK_EQ(ikp_merge_align_start((const ikp_capture *const *)caps, 2, NULL, al, &e), IKP_OK);
        CHECK(al[0].zero_ns == 0 && al[1].zero_ns == 0);
        CHECK_EQ(ikp_merge_align_start((const ikp_capture *const *)caps, 2, far, al, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "out of range") != NULL);
        CHECK_EQ(ikp_merge_align_start((const ikp_capture *const *)caps, 0, NULL, al, &e), IKP_ERR_INVALID_ARGUMENT);
    }
    ikp_capture_free(caps[0]);
    ikp_capture_free(caps[1]);
    /* two launches on GPU A whose host readings disagree by 5 us (taken in
       two processes, the host clock drifting against the GPU's): placed by
       the GPU's one clock, exactly, never refused; the host time of the
       merged axis is that much less certain */
    {
        ikp_clock_sync c1[2], c2[2];
        int64_t hz = 0, hz1 = 0;
        uint32_t hu = 0, hu1 = 0;
        host_readings(c1, 0, 700);
        host_readings(c2, 0, 700);
        c2[0].host_ns += 5000;
        c2[1].host_ns += 5000;
        caps[0] = gpu_capture(wa, 0, &da, c1, 2, NULL, 0, IKP_OK, &e);
        caps[1] = gpu_capture(wb, 1, &da, c2, 2, NULL, 0, IKP_OK, &e);
        if (caps[0] && caps[1]) {
            CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_OK);
            CHECK_EQ(al[1].via, IKP_ALIGN_SAME_GPU);
            CHECK_EQ(al[1].uncertainty_ns, 0);
            CHECK_EQ(al[1].zero_ns, B_AHEAD + 600);
            CHECK_EQ(al[1].disagree_via, IKP_ALIGN_HOST);
            CHECK(al[1].disagreement_ns > 2000 && al[1].disagreement_ns < 5000);
            CHECK_EQ(ikp_merge_host_zero((const ikp_capture *const *)caps, 2, al, &hz, &hu, &e), IKP_OK);
            al[2] = al[0]; /* capture 0 placed alone, no disagreement */
            al[2].disagreement_ns = 0;
            al[2].disagree_via = IKP_ALIGN_REFERENCE;
            CHECK_EQ(ikp_merge_host_zero((const ikp_capture *const *)caps, 1, al + 2, &hz1, &hu1, &e), IKP_OK);
            CHECK_EQ(hz, hz1); /* from capture 0's readings */
            CHECK_EQ(hu, hu1 + al[1].disagreement_ns);
            /* for tests/test_perfetto.py: the tool warns and merges them */
            CHECK_EQ(ikp_capture_write_path(caps[0], "build/test-out/launch1.ikp", &e), IKP_OK);
            CHECK_EQ(ikp_capture_write_path(caps[1], "build/test-out/launch2.ikp", &e), IKP_OK);
        }
        ikp_capture_free(caps[0]);
        ikp_capture_free(caps[1]);
    }
    /* captures that name no device: placed by host readings, labelled by position */
    {
        ikp_clock_sync ca[2], cb[2];
        host_readings(ca, 0, 700);
        host_readings(cb, 1, 500);
        caps[0] = gpu_capture(wa, 0, NULL, ca, 2, NULL, 0, IKP_OK, &e);
        caps[1] = gpu_capture(wb, 1, NULL, cb, 2, NULL, 0, IKP_OK, &e);
        if (caps[0] && caps[1]) {
            CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 0, al, &e), IKP_OK);
            CHECK_EQ(al[1].via, IKP_ALIGN_HOST);
            CHECK_EQ(al[1].zero_ns, 600);
            ikp__merge_label((const ikp_capture *const *)caps, 2, 1, lab, sizeof lab);
            CHECK(strcmp(lab, "capture 2") == 0);
        }
        ikp_capture_free(caps[0]);
        ikp_capture_free(caps[1]);
    }
    /* a peer-format capture gives no GPU time: it cannot be merged with others */
    {
        uint64_t w[64];
        ikp_decode_options o;
        ikp_capture *t = NULL;
        static const enc_rec fr[2] = {{ENC_B, 1, 1000, 0}, {ENC_E, 1, 2000, 0}};
        enc_lane fl;
        memset(&fl, 0, sizeof fl);
        fl.started = 1; fl.recs = fr; fl.n = 2;
        enc_flashinfer(w, 64, 1, 1, &fl, 1);
        memset(&o, 0, sizeof o);
        o.format = IKP_FORMAT_FLASHINFER;
        caps[0] = gpu_capture(wa, 0, &da, NULL, 0, NULL, 0, IKP_OK, &e);
        if (ikp_capture_open(w, 64, &o, &t, &e) == IKP_OK && caps[0]) {
            caps[1] = t;
            CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, 2, 1, al, &e), IKP_ERR_INVALID_ARGUMENT);
            CHECK(strstr(e.message, "does not give its GPU's time") != NULL);
        } else CHECK(0);
        ikp_capture_free(t);
        ikp_capture_free(caps[0]);
    }
}

/* the merged Chrome trace: pids apart, names with the GPU, B's event placed */
/* 1 if the n bytes at p (NUL bytes among them) hold the text s */
static int bytes_hold(const char *p, size_t n, const char *s)
{
    const size_t k = strlen(s);
    size_t i;
    for (i = 0; p && i + k <= n; i++)
        if (!memcmp(p + i, s, k)) return 1;
    return 0;
}

static void test_merged_trace(void)
{
    uint64_t wa[21], wb[21];
    ikp_device_id da, db;
    ikp_clock_sync ca[2], cb[2];
    ikp_peer_clock pc;
    ikp_capture *caps[2];
    ikp_merge_options mo;
    ikp_alignment al[2];
    ikp_trace_stats st;
    membuf m = {0, 0, 0};
    ikp_error e;
    device(&da, 0xA0, 0, "node1");
    device(&db, 0xB0, 1, "node1");
    db.rank = 1;
    host_readings(ca, 0, 700);
    host_readings(cb, 1, 500);
    peer_of(&pc, 0xA0, G0 + B_AHEAD, -(B_AHEAD + 30), 100); /* held by B this time */
    caps[0] = gpu_capture(wa, 0, &da, ca, 2, NULL, 0, IKP_OK, &e);
    caps[1] = gpu_capture(wb, 1, &db, cb, 2, &pc, 1, IKP_OK, &e);
    if (!caps[0] || !caps[1]) { ikp_capture_free(caps[0]); ikp_capture_free(caps[1]); return; }
    memset(&mo, 0, sizeof mo);
    mo.alignment = al;
    mo.trace.stats = &st;
    CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, IKP_TRACE_JSON, mem_write, &m, &e), IKP_OK);
    CHECK_EQ(al[1].via, IKP_ALIGN_PEER);
    CHECK_EQ(al[1].zero_ns, 570);
    if (m.p) {
        CHECK(strstr(m.p, "\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"GPU 0 block 0\"}") != NULL);
        CHECK(strstr(m.p, "\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":\"rank 1 GPU 1 block 0\"}") != NULL);
        CHECK(strstr(m.p, "\"name\":\"raise\",\"pid\":1,\"tid\":1,\"ts\":0.000") != NULL);
        CHECK(strstr(m.p, "\"name\":\"seen\",\"pid\":2,\"tid\":1,\"ts\":0.570") != NULL);
        CHECK(strstr(m.p, "\"name\":\"work\",\"pid\":1,\"tid\":1,\"ts\":1.000,\"dur\":1.000") != NULL);
        CHECK(strstr(m.p, "\"ikp_merged\":\"2 captures\"") != NULL);
        CHECK(strstr(m.p, "\"ikp_capture_2\":\"rank 1 GPU 1 (GPU-b0b0b0b0-b0b0-b0b0-b0b0-b0b0b0b0b0b0 on node1): "
                          "time 0 at 0.000570 ms; clock +100.030 us from the reference's, +- 0.100 us, by a "
                          "measurement over peer memory from GPU 0\"") != NULL);
        CHECK_EQ(count_str(m.p, "\"ph\":\"M\",\"name\":\"process_name\""), 2);
        CHECK(m.n > 2 && m.p[m.n - 1] == '\n' && m.p[m.n - 2] == '}');
        free(m.p);
    } else CHECK(0);
    /* a note longer than a name is refused; labels of bytes that are not UTF-8 (each
       written as 3 bytes) fit the Perfetto writer's buffers */
    {
        static char longnote[IKP_MAX_NAME_BYTES + 2], bad[128], bad2[128];
        const char *labels[2] = {bad, bad2};
        membuf r = {0, 0, 0};
        memset(longnote, 'n', IKP_MAX_NAME_BYTES + 1);
        memset(bad, 0xFF, sizeof bad - 1);
        memset(bad2, 0xFE, sizeof bad2 - 1); /* (two labels the same are refused) */
        mo.trace.time_note = longnote;
        CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, IKP_TRACE_PERFETTO, mem_write, &r, &e),
                 IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "time_note") != NULL && r.n == 0);
        mo.trace.time_note = NULL;
        labels[1] = bad; /* one label for both captures: refused, nothing written */
        mo.labels = labels;
        CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, IKP_TRACE_PERFETTO, mem_write, &r, &e),
                 IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "captures 1 and 2 are both labelled") != NULL && r.n == 0);
        labels[1] = bad2;
        CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, IKP_TRACE_PERFETTO, mem_write, &r, &e), IKP_OK);
        free(r.p);
        mo.labels = NULL;
    }
    /* the format is a value: one that names no writer is refused, by its
       value, before anything is written; the 0 and 1 of an int flag (what
       callers passed before the enum) still read as JSON and Perfetto */
    {
        membuf r = {0, 0, 0};
        int flag;
        CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, (ikp_trace_format)2, mem_write, &r, &e),
                 IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "unknown trace format 2") != NULL && r.n == 0);
        CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, (ikp_trace_format)-1, mem_write, &r, &e),
                 IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "unknown trace format -1") != NULL && r.n == 0);
        CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, IKP_TRACE_FORMAT_COUNT, mem_write, &r, &e),
                 IKP_ERR_INVALID_ARGUMENT);
        CHECK(r.n == 0);
        for (flag = 0; flag <= 1; flag++) {
            CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, flag, mem_write, &r, &e), IKP_OK);
            CHECK(r.p && (flag ? r.p[0] != '{' : !strncmp(r.p, "{\"traceEvents\":[", 16)));
            free(r.p);
            r.p = NULL; r.n = r.cap = 0;
        }
    }
    /* labels given; raw; the Perfetto form writes without error */
    {
        const char *labels[2] = {"left", NULL};
        membuf r = {0, 0, 0};
        mo.labels = labels;
        mo.raw = 1;
        CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, IKP_TRACE_JSON, mem_write, &r, &e), IKP_OK);
        CHECK(r.p && strstr(r.p, "\"args\":{\"name\":\"left block 0\"}") != NULL);
        CHECK(r.p && strstr(r.p, "\"name\":\"seen\",\"pid\":2,\"tid\":1,\"ts\":100.600") != NULL);
        CHECK(r.p && strstr(r.p, "raw %globaltimer, not aligned") != NULL);
        free(r.p);
        r.p = NULL; r.n = r.cap = 0;
        CHECK_EQ(ikp_write_merged((const ikp_capture *const *)caps, 2, &mo, IKP_TRACE_PERFETTO, mem_write, &r, &e), IKP_OK);
        CHECK(r.p && r.n > 100);
        free(r.p);
    }
    CHECK_EQ(ikp_write_merged_path((const ikp_capture *const *)caps, 2, NULL, "build/test-out/merged.json", &e), IKP_OK);
    /* the archive: the manifest puts both files on one machine, GPU 1's states its placement; a time base refused; the
       ZIP's end record counts three entries and points at the directory (tests/test_perfetto.py
       reads the whole of it with Python's zipfile) */
    {
        membuf r = {0, 0, 0};
        memset(&mo, 0, sizeof mo);
        CHECK_EQ(ikp_write_merged_zip((const ikp_capture *const *)caps, 2, &mo, mem_write, &r, &e), IKP_OK);
        CHECK(r.p && r.n > 22 && !memcmp(r.p, "PK\3\4", 4) && !memcmp(r.p + r.n - 22, "PK\5\6", 4));
        if (r.p && r.n > 22) {
            const unsigned char *end = (const unsigned char *)r.p + r.n - 22;
            const uint32_t cd = (uint32_t)end[16] | (uint32_t)end[17] << 8 | (uint32_t)end[18] << 16 |
                                (uint32_t)end[19] << 24;
            CHECK_EQ(end[8] | end[9] << 8, 3);
            CHECK(cd < r.n && !memcmp(r.p + cd, "PK\1\2", 4));
        }
        CHECK(bytes_hold(r.p, r.n, "{\"path\":\"gpu-0.pftrace\",\"machine\":{\"name\":\"GPUs (IKP captures)\"}},\n"
                                   "{\"path\":\"rank-1-gpu-1.pftrace\",\"machine\":{\"name\":\"GPUs (IKP captures)\"}}"));
        CHECK(bytes_hold(r.p, r.n, "rank 1 GPU 1 (GPU-b0b0b0b0-b0b0-b0b0-b0b0-b0b0b0b0b0b0 on node1): time 0 at 0.000570 ms"));
        free(r.p);
        r.p = NULL; r.n = r.cap = 0;
        mo.trace.time_base_ns = 5;
        CHECK_EQ(ikp_write_merged_zip((const ikp_capture *const *)caps, 2, &mo, mem_write, &r, &e),
                 IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "time_base_ns") != NULL);
        free(r.p);
    }
    /* for tests/test_perfetto.py: the two captures as files */
    CHECK_EQ(ikp_capture_write_path(caps[0], "build/test-out/merge_a.ikp", &e), IKP_OK);
    CHECK_EQ(ikp_capture_write_path(caps[1], "build/test-out/merge_b.ikp", &e), IKP_OK);
    ikp_capture_free(caps[0]);
    ikp_capture_free(caps[1]);
}

/* version 3 files: device and peers sections, and their damage */
static void test_file_sections(void)
{
    ikp_capture *back = NULL;
    ikp_error e;
    unsigned char buf[8192];
    size_t n;
    FILE *f;
    const ikp_device_id *d;
    const ikp_peer_clock *p = NULL;
    if (ikp_capture_open_path("build/test-out/merge_b.ikp", NULL, &back, &e) != IKP_OK) { CHECK(0); return; }
    d = ikp_capture_device(back);
    CHECK(d != NULL);
    if (d) {
        CHECK_EQ(d->uuid[0], 0xB0);
        CHECK_EQ(d->ordinal, 1);
        CHECK_EQ(d->rank, 1);
        CHECK_EQ(d->pci_bus, 0x1c);
        CHECK(strcmp(d->host, "node1") == 0);
    }
    { /* the device in one line: every field it knows, and cut to the room given */
        char t[256], small[12];
        ikp_device_id x;
        CHECK(strcmp(ikp_device_text(d, t, sizeof t), "GPU-b0b0b0b0-b0b0-b0b0-b0b0-b0b0b0b0b0b0, CUDA device 1, "
                                                      "rank 1, PCI 0000:1c:00, host node1") == 0);
        device(&x, 0x0a, -1, ""); /* no ordinal, rank or host; bus 0x1b - 1 */
        CHECK(strcmp(ikp_device_text(&x, t, sizeof t), "GPU-0a0a0a0a-0a0a-0a0a-0a0a-0a0a0a0a0a0a, PCI 0000:1a:00") == 0);
        CHECK(strcmp(ikp_device_text(d, small, sizeof small), "GPU-b0b0b0b") == 0);
        CHECK(strcmp(ikp_device_text(NULL, t, sizeof t), "") == 0);
    }
    CHECK_EQ(ikp_capture_peers(back, &p), 1);
    CHECK(p && p->offset_ns == -(B_AHEAD + 30) && p->uncertainty_ns == 100 && p->round_trip_ns == 200 &&
          p->gpu_ns == G0 + B_AHEAD && p->peer_uuid[15] == 0xA0);
    CHECK_EQ(ikp_capture_get_info(back)->clock_syncs, 2);
    CHECK_EQ(ikp_capture_get_info(back)->device_known, 1);
    ikp_capture_free(back);
    f = fopen("build/test-out/merge_b.ikp", "rb");
    n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    /* layout from the end: clock (16 + 2 x 32), device (16 + 104), peers (16 + 40) */
    CHECK(n > 300 && buf[8] == 3);
    if (n < 300) return;
    CHECK(memcmp(buf + n - 56, "IKPPEERS", 8) == 0);
    CHECK(memcmp(buf + n - 56 - 120, "IKPDEVIC", 8) == 0);
    CHECK(memcmp(buf + n - 56 - 120 - 80, "IKPCLOCK", 8) == 0);
    back = NULL;
    CHECK_EQ(ikp_capture_open_data(buf, n - 1, NULL, &back, &e), IKP_ERR_TRUNCATED);
    CHECK(strstr(e.message, "peers section") != NULL && e.offset == (int64_t)(n - 48));
    CHECK_EQ(ikp_capture_open_data(buf, n - 50, NULL, &back, &e), IKP_ERR_TRUNCATED);
    CHECK(strstr(e.message, "section header needs 16") != NULL);
    /* without the peers section: still a good file */
    CHECK_EQ(ikp_capture_open_data(buf, n - 56, NULL, &back, &e), IKP_OK);
    CHECK(back && ikp_capture_peers(back, NULL) == 0 && ikp_capture_device(back) != NULL);
    ikp_capture_free(back);
    back = NULL;
    buf[n - 56] = 'X'; /* an unknown section */
    CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "unknown section \"XKPPEERS\"") != NULL && e.offset == (int64_t)(n - 56));
    memcpy(buf + n - 56, "IKPDEVIC", 8); /* a second device section */
    CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "second device section") != NULL);
    memcpy(buf + n - 56, "IKPPEERS", 8);
    buf[n - 56 + 12] = 1; /* the reserved word */
    CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
    buf[n - 56 + 12] = 0;
    buf[n - 56 - 120 + 16 + 16 + 5] = 'x'; /* the host name: "node1x" */
    memset(buf + n - 56 - 120 + 16 + 16, 'y', 64); /* no end to it */
    CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "host name") != NULL && e.offset == (int64_t)(n - 56 - 120 + 16 + 16));
    buf[n - 56 - 120 + 16 + 16] = 0;
    buf[8] = 2; /* version 2 holds the clock section only */
    CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "version 2: unknown section \"IKPDEVIC\"") != NULL);
    buf[8] = 5;
    CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_VERSION);
    CHECK(back == NULL);
}

/* The SM clock of SM 7 runs at 2.0 cycles/ns for 525 us, then at 1.9
   (it changes speed at a sample). cycles at ns t after the lane start: */
#define C0 5000000000000ull
static uint64_t sm7_cycles(uint64_t t) { return C0 + (t <= 525000 ? 2 * t : 1050000 + (t - 525000) * 19 / 10); }

/* instants at 100, 300, 500, 700, 900 us on a 1 ms cycle lane of SM 7 */
static void sm_lane(uint64_t *w)
{
    enc_rec r[5];
    enc_lane L;
    int k;
    memset(&L, 0, sizeof L);
    memset(r, 0, sizeof r);
    for (k = 0; k < 5; k++) { r[k].kind = ENC_I; r[k].id = 3; r[k].t = sm7_cycles(100000 + 200000 * (uint64_t)k); }
    L.sm = 7;
    L.cycles = 1;
    L.started = L.finalized = 1;
    L.recs = r;
    L.n = 5;
    L.g0 = G0;
    L.c0 = C0;
    L.g1 = G0 + 1000000;
    L.c1 = sm7_cycles(1000000);
    enc_ikp(w, 1, 8, 1, 1, 1, 1, &L, 1);
}

/* the instants' errors against the truth, ns (max |error|): 200 us apart
   (time 0 is the first one's) */
static int64_t sm_lane_error(const ikp_capture *cap)
{
    ikp_lane_events ev;
    int64_t worst = -1;
    size_t k;
    memset(&ev, 0, sizeof ev);
    if (ikp_decode_lane(cap, 0, &ev, NULL) != IKP_OK || ev.count != 5) { CHECK(0); return INT64_MAX; }
    for (k = 0; k < 5; k++) {
        int64_t d = ev.events[k].start_ps - (int64_t)(200000 * k) * NS;
        if (d < 0) d = -d;
        if (d > worst) worst = d;
    }
    ikp_lane_events_free(cap, &ev);
    return worst / NS;
}

/* SM clock samples do not bend regions: SM 5 runs at exactly 2.0 cycles/ns
   for 2 ms; its samples, every 25 us, each locate their tick up to 8 cycles
   off (as brackets of up to 16 cycles allow), and at 1 ms two come 100 ns
   apart, 8 cycles off either way (a segment between them would run 8%
   fast). Lane k holds one region of LEN[k] cycles across 1 ms. Decoded
   through the samples, each region's length is the one decoded from the
   anchors alone (a straight line: exact here) within 8 cycles, and within
   1e-4 of it beyond 100000 cycles. */
#define SM5_C0 7000000000000ull
static void test_sm_clock_lengths(void)
{
    static const uint64_t LEN[6] = {10, 1000, 10000, 40000, 100000, 1000000};
    enum { NL = 6, CAP = 4 };
    uint64_t w[8 + NL * (9 + CAP)];
    enc_rec r[NL][2];
    enc_lane L[NL];
    ikp_sm_clock s[90];
    ikp_decode_options o;
    ikp_capture *plain = NULL, *sampled = NULL;
    ikp_error e;
    uint32_t k, ns = 0;
    memset(L, 0, sizeof L);
    memset(r, 0, sizeof r);
    for (k = 0; k < NL; k++) {
        uint64_t b = SM5_C0 + 2000000 - LEN[k] / 3; /* a third of it before 1 ms */
        r[k][0].kind = ENC_B; r[k][0].id = 1 + k; r[k][0].t = b;
        r[k][1].kind = ENC_E; r[k][1].id = 1 + k; r[k][1].t = b + LEN[k];
        L[k].block = k; L[k].sm = 5; L[k].cycles = 1; L[k].started = L[k].finalized = 1;
        L[k].recs = r[k]; L[k].n = 2;
        L[k].g0 = G0; L[k].c0 = SM5_C0; L[k].g1 = G0 + 2000000; L[k].c1 = SM5_C0 + 4000000;
    }
    enc_ikp(w, NL, CAP, 1, NL, 1, 1, L, NL);
    for (k = 0; k <= 80; k++) {
        int64_t noise = ((int64_t)((k * 7) % 5) - 2) * 4; /* -8 .. +8 cycles */
        uint64_t t = 25000 * (uint64_t)k; /* ns after the lane start */
        s[ns].gpu_ns = G0 + t;
        s[ns].cycles = (uint64_t)((int64_t)(SM5_C0 + 2 * t) + noise);
        s[ns].sm = 5;
        s[ns].reserved = 0;
        ns++;
        if (t == 1000000) { /* the close pair */
            s[ns - 1].cycles = SM5_C0 + 2 * t + 8;
            s[ns].gpu_ns = G0 + t + 100;
            s[ns].cycles = SM5_C0 + 2 * (t + 100) - 8;
            s[ns].sm = 5;
            s[ns].reserved = 0;
            ns++;
        }
    }
    memset(&o, 0, sizeof o);
    CHECK_EQ(ikp_capture_open(w, sizeof w / 8, &o, &plain, &e), IKP_OK);
    o.sm_clock = s;
    o.num_sm_clock = ns;
    CHECK_EQ(ikp_capture_open(w, sizeof w / 8, &o, &sampled, &e), IKP_OK);
    if (plain && sampled) {
        CHECK_EQ(ikp_capture_get_info(sampled)->sampled_lanes, NL);
        for (k = 0; k < NL; k++) {
            ikp_lane_events a, b;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            if (ikp_decode_lane(plain, k, &a, NULL) == IKP_OK && ikp_decode_lane(sampled, k, &b, NULL) == IKP_OK &&
                a.count == 1 && b.count == 1) {
                /* ps; 8 cycles at 2.0 cycles/ns are 4000 ps */
                int64_t la = a.events[0].end_ps - a.events[0].start_ps, lb = b.events[0].end_ps - b.events[0].start_ps;
                int64_t d = la > lb ? la - lb : lb - la, lim = 4000;
                if (LEN[k] > 100000 && (int64_t)LEN[k] * 500 / 10000 > lim) lim = (int64_t)LEN[k] * 500 / 10000;
                CHECK(la == (int64_t)LEN[k] * 500);
                if (d > lim) fprintf(stderr, "  a region of %llu cycles: %lld ps with samples, %lld without\n",
                                     (unsigned long long)LEN[k], (long long)lb, (long long)la);
                CHECK(d <= lim);
            } else CHECK(0);
            ikp_lane_events_free(plain, &a);
            ikp_lane_events_free(sampled, &b);
        }
    }
    ikp_capture_free(plain);
    ikp_capture_free(sampled);
}

/* How well lanes line up, as the capture states it (ikp_capture_info
   cross_sm_ns, placement; ikp_capture_placement): a record lies off by at
   most how far the lines that pass within every reading of its SM (each
   +-20 ns) spread there, plus 4 ns, plus the rate's wander, 1e-4 of half
   the longest distance between two readings; two lanes twice that apart.
   Lanes of 2 ms (2 cycles a ns), regions around their middle: by their
   anchors only, 2 ms between readings; with samples every 25 us. A
   globaltimer capture: one 32 ns tick. */
static double test_placement_expect(double gap_ns, int hi)
{
    return 2 * (4 + 1e-4 * gap_ns / 2 + (hi ? 20 : 0)) + (hi ? 2 : 0);
}

static void test_placement(void)
{
    enum { NL = 3, CAP = 4 };
    uint64_t w[8 + NL * (9 + CAP)];
    enc_rec r[NL][2];
    enc_lane L[NL];
    ikp_sm_clock s[81];
    ikp_decode_options o;
    ikp_capture *plain = NULL, *sampled = NULL, *gt = NULL;
    ikp_error e;
    char text[700];
    int poor = -1;
    uint32_t k;
    memset(L, 0, sizeof L);
    memset(r, 0, sizeof r);
    for (k = 0; k < NL; k++) {
        uint64_t b = SM5_C0 + 1700000 + 310000 * k; /* 0.85 .. 1.16 ms into the lane */
        r[k][0].kind = ENC_B; r[k][0].id = 1; r[k][0].t = b;
        r[k][1].kind = ENC_E; r[k][1].id = 1; r[k][1].t = b + 4321;
        L[k].block = k; L[k].sm = 5; L[k].cycles = 1; L[k].started = L[k].finalized = 1;
        L[k].recs = r[k]; L[k].n = 2;
        L[k].g0 = G0; L[k].c0 = SM5_C0; L[k].g1 = G0 + 2000000; L[k].c1 = SM5_C0 + 4000000;
    }
    enc_ikp(w, NL, CAP, 1, NL, 1, 1, L, NL);
    for (k = 0; k <= 80; k++) {
        s[k].gpu_ns = G0 + 25000 * (uint64_t)k;
        s[k].cycles = SM5_C0 + 50000 * (uint64_t)k + (k % 3); /* a cycle or two of noise */
        s[k].sm = 5;
        s[k].reserved = 0;
    }
    memset(&o, 0, sizeof o);
    CHECK_EQ(ikp_capture_open(w, sizeof w / 8, &o, &plain, &e), IKP_OK);
    o.sm_clock = s;
    o.num_sm_clock = 81;
    CHECK_EQ(ikp_capture_open(w, sizeof w / 8, &o, &sampled, &e), IKP_OK);
    if (plain && sampled) {
        const ikp_capture_info *a = ikp_capture_get_info(plain), *b = ikp_capture_get_info(sampled);
        const double ea = test_placement_expect(2e6, 0), ea_hi = test_placement_expect(2e6, 1),
                     eb = test_placement_expect(25000, 0), eb_hi = test_placement_expect(25000, 1);
        ikp_lane_info li;
        CHECK_EQ(a->placement, IKP_PLACED_ANCHORS);
        CHECK(a->cross_sm_ns >= ea && a->cross_sm_ns <= ea_hi);
        CHECK(a->reading_gap_ns >= 840000 && a->reading_gap_ns <= 1000000); /* the region nearest the middle */
        CHECK_EQ(b->placement, IKP_PLACED_SAMPLES);
        CHECK(b->cross_sm_ns >= eb && b->cross_sm_ns <= eb_hi);
        CHECK(b->reading_gap_ns <= 12500);
        if (a->cross_sm_ns < ea || a->cross_sm_ns > ea_hi || b->cross_sm_ns < eb || b->cross_sm_ns > eb_hi)
            fprintf(stderr, "  placement %u ns (want %.1f .. %.1f), sampled %u ns (want %.1f .. %.1f)\n", a->cross_sm_ns,
                    ea, ea_hi, b->cross_sm_ns, eb, eb_hi);
        CHECK_EQ(ikp_capture_lane(sampled, b->worst_lane, &li, &e), IKP_OK);
        CHECK(2 * li.placement_ns == b->cross_sm_ns);
        /* the text: poor without samples (and what to do), not with them */
        CHECK(ikp_capture_placement(a, text, sizeof text, &poor) == strlen(text));
        CHECK(poor == 1 && strstr(text, "anchors only") && strstr(text, "poor") && strstr(text, "IKP_ANCHOR"));
        ikp_capture_placement(b, text, sizeof text, &poor);
        CHECK(poor == 0 && strstr(text, "SM clock samples on 1 SMs placed 3 lanes") && !strstr(text, "poor"));
        CHECK(ikp_capture_placement(b, text, 8, NULL) == 7 && strlen(text) == 7); /* cut to size */
    } else CHECK(0);
    /* %globaltimer stamps: one clock, one tick */
    for (k = 0; k < NL; k++) {
        L[k].cycles = 0;
        r[k][0].t = G0 + 1000 * k;
        r[k][1].t = G0 + 1000 * k + 500;
    }
    enc_ikp(w, NL, CAP, 1, NL, 1, 1, L, NL);
    memset(&o, 0, sizeof o);
    CHECK_EQ(ikp_capture_open(w, sizeof w / 8, &o, &gt, &e), IKP_OK);
    if (gt) {
        CHECK_EQ(ikp_capture_get_info(gt)->placement, IKP_PLACED_GLOBALTIMER);
        CHECK_EQ(ikp_capture_get_info(gt)->cross_sm_ns, 32);
        ikp_capture_placement(ikp_capture_get_info(gt), text, sizeof text, &poor);
        CHECK(poor == 0 && strstr(text, "globaltimer"));
    }
    ikp_capture_free(plain);
    ikp_capture_free(sampled);
    ikp_capture_free(gt);
}

static void test_sm_clock(void)
{
    uint64_t w[8 + 9 + 8];
    ikp_sm_clock s[24], bad[2];
    ikp_decode_options o;
    ikp_capture *cap = NULL, *back = NULL;
    const ikp_sm_clock *got = NULL;
    ikp_error e;
    unsigned char buf[4096];
    size_t n;
    FILE *f;
    uint32_t k, ns = 0;
    sm_lane(w);
    /* every 50 us on SM 7 from before the lane to after it; SM 3 runs 1 ms ahead */
    for (k = 0; k < 22; k++) {
        uint64_t t = 50000 * (uint64_t)k;
        s[ns].gpu_ns = G0 + t - 25000;
        s[ns].cycles = t < 25000 ? C0 - 50000 + 2 * t : sm7_cycles(t - 25000);
        s[ns].sm = 7;
        s[ns].reserved = 0;
        ns++;
    }
    s[ns].gpu_ns = G0 + 300000; s[ns].cycles = C0 + 7777777; s[ns].sm = 3; s[ns].reserved = 0; ns++;
    s[ns].gpu_ns = G0 + 600000; s[ns].cycles = C0 + 8377777; s[ns].sm = 3; s[ns].reserved = 0; ns++;
    /* without samples: a straight line between the two anchors, off by ~10 us at 500 us */
    memset(&o, 0, sizeof o);
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_OK);
    if (cap) {
        CHECK(sm_lane_error(cap) > 5000);
        CHECK_EQ(ikp_capture_get_info(cap)->sampled_lanes, 0);
        ikp_capture_free(cap);
    }
    cap = NULL;
    o.sm_clock = s;
    o.num_sm_clock = ns;
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_OK);
    if (!cap) return;
    CHECK(sm_lane_error(cap) <= 1);
    CHECK_EQ(ikp_capture_get_info(cap)->sampled_lanes, 1);
    CHECK_EQ(ikp_capture_get_info(cap)->sm_clocks, ns);
    CHECK_EQ(ikp_capture_get_info(cap)->sm_clock_sms, 2);
    CHECK_EQ(ikp_capture_sm_clock(cap, &got), ns);
    CHECK(got && got[0].sm == 3 && got[2].sm == 7 && got[2].cycles < got[3].cycles);
    /* the capture file keeps them (version 4), and places the lane the same way */
    CHECK_EQ(ikp_capture_write_path(cap, "build/test-out/smclock.ikp", &e), IKP_OK);
    ikp_capture_free(cap);
    CHECK_EQ(ikp_capture_open_path("build/test-out/smclock.ikp", NULL, &back, &e), IKP_OK);
    if (back) {
        CHECK(sm_lane_error(back) <= 1);
        CHECK_EQ(ikp_capture_get_info(back)->sm_clocks, ns);
        ikp_capture_free(back);
    }
    back = NULL;
    f = fopen("build/test-out/smclock.ikp", "rb");
    n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    CHECK(n == 48 + (8 + 9 + 8) * 8 + 16 + 24 * ns && buf[8] == 4);
    if (n != 48 + (8 + 9 + 8) * 8 + 16 + 24 * ns) return;
    CHECK(memcmp(buf + n - 16 - 24 * ns, "IKPSMCLK", 8) == 0);
    CHECK_EQ(ikp_capture_open_data(buf, n - 1, NULL, &back, &e), IKP_ERR_TRUNCATED);
    CHECK(strstr(e.message, "SM clock section") != NULL);
    buf[n - 4] = 1; /* the last sample's reserved word */
    CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "SM clock sample 23 is not plausible") != NULL && e.offset == (int64_t)(n - 24));
    buf[n - 4] = 0;
    buf[8] = 3; /* version 3 has no SM clock section */
    CHECK_EQ(ikp_capture_open_data(buf, n, NULL, &back, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "version 3: unknown section \"IKPSMCLK\"") != NULL);
    CHECK(back == NULL);
    /* two samples taken at once (cycles 3 apart) whose means read 8 ns back:
       accepted, as two sampling blocks on one SM give them */
    bad[0] = s[4];
    bad[1] = s[4];
    bad[1].cycles = bad[0].cycles + 3;
    bad[1].gpu_ns = bad[0].gpu_ns - 8;
    o.sm_clock = bad;
    o.num_sm_clock = 2;
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_OK);
    ikp_capture_free(cap);
    cap = NULL;
    /* given samples: contradicting (the globaltimer goes back on SM 7 by more
       than two ticks), implausible, missing */
    bad[1] = s[5];
    bad[1].gpu_ns = bad[0].gpu_ns - 65;
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "SM clock samples of SM 7 contradict") != NULL);
    bad[1] = s[5];
    bad[1].cycles = bad[0].cycles + 100000000; /* 2000 cycles/ns over 50 us */
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "contradict") != NULL);
    bad[1] = s[5];
    bad[1].gpu_ns = 12345; /* 1970 */
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_ERR_BAD_HEADER);
    CHECK(strstr(e.message, "SM clock sample 1 is not plausible") != NULL);
    bad[1] = s[5];
    bad[1].sm = 70000;
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_ERR_BAD_HEADER);
    o.sm_clock = NULL;
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "num_sm_clock without") != NULL && cap == NULL);
    /* samples of another SM only: the lane keeps its two anchors */
    o.sm_clock = s + 22;
    o.num_sm_clock = 2;
    CHECK_EQ(ikp_capture_open(w, 8 + 9 + 8, &o, &cap, &e), IKP_OK);
    if (cap) {
        CHECK(sm_lane_error(cap) > 5000);
        CHECK_EQ(ikp_capture_get_info(cap)->sampled_lanes, 0);
        ikp_capture_free(cap);
    }
}

/* 300 captures of 100 GPUs (three launches each) on two hosts, each GPU
   with host readings: every batch label is the one-capture labeller's (ikp__merge_label); every
   capture of one host is placed, each GPU's launches on one clock; a
   buffer given twice, late in the list, is named with the first it
   repeats. */
static void test_many_captures(void)
{
    enum { N = 300 };
    static uint64_t w[N][8 + 9 + 4];
    static ikp_capture *caps[N];
    static ikp_alignment al[N];
    static char labels[N][128];
    ikp_error e;
    uint32_t k, placed = 0, same = 0, equal = 0, ok_open = 0;
    for (k = 0; k < N; k++) {
        enc_rec r[1];
        enc_lane L;
        ikp_decode_options o;
        ikp_device_id d;
        ikp_clock_sync cs[2];
        uint64_t g0 = G0 + (uint64_t)(k % 100) * 7919 + (uint64_t)(k / 100) * 10000000; /* launch k/100 of GPU k%100 */
        int j;
        memset(&L, 0, sizeof L);
        memset(r, 0, sizeof r);
        r[0].kind = ENC_I; r[0].id = 1; r[0].t = g0 + 100;
        L.n = 1; L.g0 = g0; L.g1 = g0 + 1000; L.started = L.finalized = 1; L.recs = r;
        enc_ikp(w[k], 1, 4, 1, 1, 1, 1, &L, 1);
        device(&d, (uint8_t)(k % 100 + 1), (int)(k % 100 % 8), k % 100 < 50 ? "node1" : "node2");
        for (j = 0; j < 2; j++) {
            cs[j].gpu_ns = g0 - 500000 + (uint64_t)j * 1000000;
            cs[j].host_ns = (int64_t)(cs[j].gpu_ns - HOST_BEHIND - (k % 100) * 3);
            cs[j].uncertainty_ns = 500;
            cs[j].reserved = 0;
        }
        memset(&o, 0, sizeof o);
        o.device = &d;
        o.clock = cs;
        o.num_clock = 2;
        ok_open += ikp_capture_open(w[k], sizeof w[k] / 8, &o, &caps[k], &e) == IKP_OK;
    }
    CHECK_EQ(ok_open, N);
    if (ok_open != N) goto end;
    CHECK_EQ(ikp_merge_labels((const ikp_capture *const *)caps, N, labels[0], sizeof labels[0], &e), IKP_OK);
    for (k = 0; k < N; k++) {
        char one[128];
        ikp__merge_label((const ikp_capture *const *)caps, N, k, one, sizeof one);
        equal += strcmp(one, labels[k]) == 0;
    }
    CHECK_EQ(equal, N);
    CHECK(strcmp(labels[0], "node1 GPU 0 #1") == 0 && strcmp(labels[299], "node2 GPU 3 #300") == 0);
    CHECK_EQ(ikp_merge_labels((const ikp_capture *const *)caps, N, labels[0], 8, &e), IKP_ERR_INVALID_ARGUMENT);
    /* two hosts with no link between them: the second host's GPUs cannot be placed */
    CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, N, 0, al, &e), IKP_ERR_EMPTY);
    CHECK(strstr(e.message, "node2") != NULL);
    /* the first host's 150 captures: all placed, each GPU's three launches exactly */
    {
        static ikp_capture *one_host[150];
        uint32_t m = 0;
        for (k = 0; k < N; k++) if (k % 100 < 50) one_host[m++] = caps[k];
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)one_host, m, 0, al, &e), IKP_OK);
        for (k = 0; k < m; k++) {
            placed += al[k].via == IKP_ALIGN_REFERENCE || al[k].via == IKP_ALIGN_HOST || al[k].via == IKP_ALIGN_SAME_GPU;
            same += al[k].via == IKP_ALIGN_SAME_GPU && al[k].uncertainty_ns == al[al[k].from].uncertainty_ns;
        }
        CHECK_EQ(placed, m);
        CHECK_EQ(same, 2); /* the reference GPU's other two launches; the rest as near by host readings */
        for (k = 0, same = 0; k < m; k++) /* each GPU's launches 10 ms apart on one clock */
            same += al[k].offset_ns == al[k % 50].offset_ns && al[k].zero_ns - al[k % 50].zero_ns == (int64_t)(k / 50) * 10000000;
        CHECK_EQ(same, m);
        CHECK_EQ(al[0].disagreement_ns, 0);
        /* capture 120 given again as capture 140: named, with the one it repeats */
        one_host[140] = one_host[120];
        CHECK_EQ(ikp_merge_align((const ikp_capture *const *)one_host, m, 0, al, &e), IKP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(e.message, "#141 is ") != NULL && strstr(e.message, "#121 again") != NULL);
    }
end:
    for (k = 0; k < N; k++) ikp_capture_free(caps[k]);
}

/* The placement by every pair of captures, as ikp_merge_align made it
   before its links were indexed (O(n^2)): Dijkstra taking the capture of
   least dist not yet taken (the lower index on ties) and relaxing every
   link from it on a strictly smaller dist, then each pair's links of each
   kind (by i, then j, then kind) against the placement, with the same
   link rule (ikp__merge_link). The reference for ikp_merge_align on sets
   small enough; IKP_OK, or IKP_ERR_EMPTY when a capture is not reached. */
static ikp_result pairwise_align(const ikp_capture *const *caps, uint32_t n, ikp_alignment *out)
{
    ikp__link_data *ld = (ikp__link_data *)calloc(n, sizeof *ld);
    uint64_t *dist = (uint64_t *)malloc(n * sizeof *dist);
    uint8_t *done = (uint8_t *)calloc(n, 1);
    uint32_t i, j, k;
    int64_t zmin = INT64_MAX;
    ikp_result r = IKP_OK;
    int oom = 0;
    memset(out, 0, n * sizeof *out);
    for (i = 0; i < n; i++) {
        oom |= ikp__link_data_of(caps[i], &caps[0]->alloc, &ld[i], 1);
        dist[i] = i ? UINT64_MAX : 0;
    }
    CHECK_EQ(oom | ikp__number_devices(&caps[0]->alloc, n, ld), 0);
    for (k = 0; k < n; k++) {
        uint32_t m = n;
        for (i = 0; i < n; i++)
            if (!done[i] && dist[i] != UINT64_MAX && (m == n || dist[i] < dist[m])) m = i;
        if (m == n) break;
        done[m] = 1;
        for (j = 0; j < n; j++) {
            int64_t val;
            uint64_t unc;
            int via = done[j] ? IKP_ALIGN_COUNT : ikp__merge_link(ld, m, j, IKP_ALIGN_COUNT, &val, &unc);
            if (via == IKP_ALIGN_COUNT || dist[m] + unc >= dist[j]) continue;
            dist[j] = dist[m] + unc;
            out[j].offset_ns = out[m].offset_ns + val;
            out[j].via = (ikp_align_via)via;
            out[j].from = m;
            out[j].links = out[m].links + 1;
        }
    }
    for (i = 0; i < n; i++)
        if (dist[i] == UINT64_MAX) r = IKP_ERR_EMPTY;
    for (i = 0; i < n && r == IKP_OK; i++)
        for (j = i + 1; j < n; j++) {
            int kind;
            for (kind = 0; kind < IKP__LINKS_EACH; kind++) { /* each link, each peer measurement its own */
                int64_t val, d;
                uint64_t unc, ad, tol;
                int via = ikp__merge_link_each(ld, i, j, kind, &val, &unc);
                if (via == IKP_ALIGN_COUNT) continue;
                d = out[j].offset_ns - out[i].offset_ns - val;
                ad = (uint64_t)(d < 0 ? -d : d);
                tol = unc + dist[i] + dist[j];
                if (ad <= tol) continue;
                ikp__disagree(&out[i], ad - tol, (ikp_align_via)via, j);
                ikp__disagree(&out[j], ad - tol, (ikp_align_via)via, i);
                if (dist[i] + dist[j]) {
                    const uint64_t di = dist[i], dj = dist[j];
                    if (dj) dist[j] = ikp__merge_grown(ad, unc, di);
                    if (di) dist[i] = ikp__merge_grown(ad, unc, dj);
                }
            }
        }
    for (i = 0; i < n && r == IKP_OK; i++) {
        int64_t z = (int64_t)(caps[i]->info.gpu_zero_ns - caps[0]->info.gpu_zero_ns) - out[i].offset_ns;
        out[i].zero_ns = z;
        out[i].uncertainty_ns = dist[i] > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)dist[i];
        if (z < zmin) zmin = z;
    }
    for (i = 0; i < n && r == IKP_OK; i++) out[i].zero_ns -= zmin;
    for (i = 0; i < n; i++) ikp__free(&caps[0]->alloc, ld[i].peers);
    free(ld);
    free(dist);
    free(done);
    return r;
}

static int same_alignment(const ikp_alignment *a, const ikp_alignment *b)
{
    return a->zero_ns == b->zero_ns && a->offset_ns == b->offset_ns && a->uncertainty_ns == b->uncertainty_ns &&
           a->via == b->via && a->from == b->from && a->links == b->links && a->disagreement_ns == b->disagreement_ns &&
           a->disagree_via == b->disagree_via && a->disagree_with == b->disagree_with;
}

/* GPU g's clock minus GPU 0's, in a job */
static int64_t job_clock(uint32_t g) { return (int64_t)(g * 2654435761u % 1000003u) * 97; }

/* Capture k of a job of ng GPUs, 8 a host (host g / 8, one clock for all
   hosts): launch k / ng of GPU k % ng, 10 ms after the one before, with
   two host readings. The first launch of each host's GPU 0 measures the
   host's other GPUs over peer memory (100 ns); the last launch of GPU 0
   of every host but the first names no host (readings of 2 us). seed 0:
   every reading exact; else, by seed, one reading or measurement in 6 off
   by up to 1 us, uncertainties of 0, 100 or 500 ns, the host named but
   one time in 8, each of the host's other GPUs measured one time in 4. */
static ikp_result job_capture(uint64_t *w, uint32_t k, uint32_t ng, uint32_t launches, uint32_t seed,
                              ikp_capture **cap, ikp_error *e)
{
    static const uint32_t unc3[3] = {0, 100, 500};
    uint32_t g = k % ng, l = k / ng, h = g / 8, np = 0, j, x = seed * 747796405u + k * 2891336453u + 1;
    uint64_t g0 = G0 + (uint64_t)l * 10000000 + (uint64_t)job_clock(g);
    int64_t noise;
    enc_rec r[1];
    enc_lane L;
    ikp_decode_options o;
    ikp_device_id d;
    ikp_clock_sync cs[2];
    ikp_peer_clock pc[8];
    int unnamed = g % 8 == 0 && l == launches - 1 && h > 0;
#define JOB_RAND() (x = x * 1664525u + 1013904223u, x >> 8)
    memset(&L, 0, sizeof L);
    memset(r, 0, sizeof r);
    r[0].kind = ENC_I; r[0].id = 1; r[0].t = g0 + 100;
    L.n = 1; L.g0 = g0; L.g1 = g0 + 1000; L.started = L.finalized = 1; L.recs = r;
    enc_ikp(w, 1, 4, 1, 1, 1, 1, &L, 1);
    memset(&d, 0, sizeof d);
    memcpy(d.uuid, &g, sizeof g);
    d.uuid[15] = 0x77;
    if (seed) unnamed = JOB_RAND() % 8 == 0;
    if (!unnamed) snprintf(d.host, sizeof d.host, "node%04u", h);
    d.ordinal = (int32_t)(g % 8);
    d.rank = (int32_t)g;
    noise = seed && JOB_RAND() % 6 == 0 ? (int64_t)(JOB_RAND() % 2001) - 1000 : 0;
    for (j = 0; j < 2; j++) {
        cs[j].gpu_ns = g0 - 500000 + (uint64_t)j * 1000000;
        cs[j].host_ns = (int64_t)cs[j].gpu_ns - job_clock(g) - HOST_BEHIND + noise;
        cs[j].uncertainty_ns = seed ? unc3[JOB_RAND() % 3] : unnamed ? 2000 : 500;
        cs[j].reserved = 0;
    }
    cs[1].uncertainty_ns = cs[0].uncertainty_ns;
    for (j = 1; j < 8; j++) { /* the host's other GPUs */
        uint32_t q = h * 8 + (g % 8 + j) % 8;
        if (q >= ng || (seed ? JOB_RAND() % 4 != 0 : g % 8 != 0 || l != 0)) continue;
        memset(&pc[np], 0, sizeof pc[np]);
        memcpy(pc[np].peer_uuid, &q, sizeof q);
        pc[np].peer_uuid[15] = 0x77;
        pc[np].gpu_ns = g0;
        pc[np].offset_ns = job_clock(q) - job_clock(g) + (seed && JOB_RAND() % 6 == 0 ? (int64_t)(JOB_RAND() % 2001) - 1000 : 0);
        pc[np].uncertainty_ns = seed ? unc3[JOB_RAND() % 3] : 100;
        pc[np].round_trip_ns = 2 * pc[np].uncertainty_ns;
        np++;
    }
#undef JOB_RAND
    memset(&o, 0, sizeof o);
    o.device = &d;
    o.clock = cs;
    o.num_clock = 2;
    o.peers = pc;
    o.num_peers = np;
    return ikp_capture_open(w, 8 + 9 + 4, &o, cap, e);
}

/* 65,536 captures of a job: 1,024 hosts of 8 GPUs, 8 launches each
   (job_capture). The placement by every pair looks at ~2 n^2 links
   (about 9 * 10^9 here: minutes); ikp_merge_align places them from links
   indexed by GPU and host. Every capture placed exactly (each GPU's
   clock, each launch's time 0), none disagreeing, each with its chain:
   GPU 0 the reference; its host's GPUs by its peer measurements, 100 ns;
   every other host's GPU 0 by its unnamed launch's host readings and GPU
   0's (500 ns + 2 us); that host's other GPUs by peer memory from there,
   2.6 us. The first 4 hosts alone, exact and with readings off by up to
   1 us (links then disagree), give what the pairwise placement gives,
   field by field. */
static void test_captures_of_a_job(void)
{
    enum { HOSTS = 1024, NG = HOSTS * 8, L = 8, N = NG * L, SUB = 32 };
    uint64_t *w = (uint64_t *)malloc((size_t)N * 21 * 8);
    ikp_capture **caps = (ikp_capture **)calloc(N, sizeof *caps);
    ikp_alignment *al = (ikp_alignment *)malloc(N * sizeof *al), ref[SUB * L], got[SUB * L];
    ikp_capture *sub[SUB * L];
    ikp_error e;
    uint32_t k, ok_open = 0, exact = 0, chain = 0, seed, same = 0;
    if (!w || !caps || !al) { CHECK(0); goto end; }
    for (k = 0; k < N; k++) ok_open += job_capture(w + (size_t)k * 21, k, NG, L, 0, &caps[k], &e) == IKP_OK;
    CHECK_EQ(ok_open, N);
    if (ok_open != N) goto end;
    CHECK_EQ(ikp_merge_align((const ikp_capture *const *)caps, N, 0, al, &e), IKP_OK);
    for (k = 0; k < N; k++) {
        uint32_t g = k % NG, l = k / NG, h = g / 8, u = 8 * h + (L - 1) * NG; /* its host's unnamed launch */
        ikp_align_via via = !k ? IKP_ALIGN_REFERENCE : !h ? (g ? IKP_ALIGN_PEER : IKP_ALIGN_SAME_GPU)
                            : g % 8 ? IKP_ALIGN_PEER : k == u ? IKP_ALIGN_HOST : IKP_ALIGN_SAME_GPU;
        uint32_t from = !h || k == u ? 0 : g % 8 ? 8 * h : u;
        uint32_t links = !k ? 0 : !h || k == u ? 1 : g % 8 ? 3 : 2;
        uint32_t unc = !h ? (g ? 100 : 0) : g % 8 ? 2600 : 2500;
        exact += al[k].offset_ns == job_clock(g) && al[k].zero_ns == (int64_t)l * 10000000 && al[k].disagreement_ns == 0;
        chain += al[k].via == via && al[k].from == from && al[k].links == links && al[k].uncertainty_ns == unc;
        same += al[k].offset_ns == al[g].offset_ns;
    }
    CHECK_EQ(exact, N);
    CHECK_EQ(chain, N);
    CHECK_EQ(same, N);
    /* the first 4 hosts, all launches: as the pairwise placement */
    for (seed = 0; seed < 8; seed++) {
        static uint64_t sw[SUB * L][21];
        uint32_t m = 0, opened = 0, equal = 0, disagree = 0;
        ikp_result want, r;
        for (k = 0; k < N && m < SUB * L; k++) {
            if (k % NG >= SUB) continue;
            sub[m] = seed ? NULL : caps[k]; /* else the same captures with readings off: a job of SUB GPUs */
            opened += !seed || job_capture(sw[m], m, SUB, L, seed, &sub[m], &e) == IKP_OK;
            m++;
        }
        CHECK_EQ(opened, SUB * L);
        want = opened == SUB * L ? pairwise_align((const ikp_capture *const *)sub, m, ref) : IKP_ERR_EMPTY;
        r = opened == SUB * L ? ikp_merge_align((const ikp_capture *const *)sub, m, 0, got, &e) : IKP_ERR_EMPTY;
        CHECK_EQ(r, want);
        CHECK_EQ(r, IKP_OK);
        for (k = 0; k < m && r == IKP_OK; k++) {
            equal += same_alignment(&ref[k], &got[k]);
            disagree += got[k].disagreement_ns != 0;
        }
        CHECK_EQ(equal, m);
        if (seed == 0) CHECK_EQ(disagree, 0);
        else CHECK(disagree > 0);
        for (k = 0; seed && k < m; k++) ikp_capture_free(sub[k]);
    }
end:
    for (k = 0; caps && k < N; k++) ikp_capture_free(caps[k]);
    free(caps);
    free(al);
    free(w);
}

/* Two, four and eight GPUs of one node, one capture each, placed by peer measurements
   alone (+-600 ns, about what one over NVLink says: half its best round
   trip), each off the truth by up to its uncertainty: measured between
   neighbours of a ring only (GPU g measures g + 1), from one hub (GPU 0,
   the reference, or GPU 3) to every other, or by every GPU of every
   other; and each of those with one measurement that lies (20 us off,
   far past its width). Checked: every capture's placement within what it
   states of the truth, every pair within the sum of both, and what each
   states: a hub's chain's sum (one measurement, 600 ns, for a GPU the
   reference measured or was measured by; 1.2 us through a hub not the
   reference); where independent chains link them, each is placed for
   every pair's bound, not only the reference's: in a ring at most the
   farthest GPU's nearer side (600 ns a hop, up to 2.4 us), with all
   pairs at most 750 ns. A lie that another path shows is said
   (disagreement_ns) on both captures of the link that shows it. With all
   pairs measured the others outvote it: it is left out (left_out on the
   capture that holds it) and the bounds are those without it. A ring
   cannot say which of its links lies (leaving out any one mends it):
   the bounds of both captures of the link grow to hold it, and so do
   those of every capture on the cycle it closes and of those placed
   through them, and the truth is held. A hub's lie has no other path:
   nothing shows it. node_case returns the placements and pairs off the
   truth by more than stated, and the worst pair's stated bound in
   *worst_pair. */
static int64_t node_clock(uint32_t g) { return (int64_t)(g * 2654435761u % 1000003u) * 31 - 15000000; }
static int64_t node_err(uint32_t g, uint32_t q, uint32_t seed)
{
    uint32_t x = (g * 8 + q + 1) * 2891336453u + seed * 747796405u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (int64_t)(x % 1201) - 600;
}
enum { NODE_RING, NODE_HUB0, NODE_HUB3, NODE_ALL };
static uint32_t node_case(uint32_t NG, int topo, int lie, uint32_t seed, uint32_t *worst_pair, uint32_t *said,
                          uint64_t *worst_paths, uint32_t *bad_paths, uint32_t *worst_ref)
{
    enum { MOST = 8 };
    static uint64_t w[MOST][21];
    ikp_capture *caps[MOST];
    ikp_alignment al[MOST];
    const uint32_t hub = topo == NODE_HUB3 ? (NG > 3 ? 3 : NG - 1) : 0; /* the hub, a liar's GPU */
    const uint32_t liar = topo == NODE_RING ? 2 % NG : hub;
    ikp_error e;
    uint32_t g, q, opened = 0, bad = 0;
    *worst_pair = 0;
    *said = 0;
    for (g = 0; g < NG; g++) {
        ikp_peer_clock pc[MOST];
        ikp_device_id d;
        ikp_decode_options o;
        enc_rec r[1];
        enc_lane L;
        uint32_t np = 0;
        const uint64_t g0 = G0 + (uint64_t)node_clock(g) + 1000 * g;
        memset(&L, 0, sizeof L);
        memset(r, 0, sizeof r);
        r[0].kind = ENC_I; r[0].id = 1; r[0].t = g0 + 100;
        L.n = 1; L.g0 = g0; L.g1 = g0 + 1000; L.started = L.finalized = 1; L.recs = r;
        enc_ikp(w[g], 1, 4, 1, 1, 1, 1, &L, 1);
        memset(&d, 0, sizeof d);
        memset(d.uuid, 0x40 + (int)g, 16);
        snprintf(d.host, sizeof d.host, "node0");
        d.ordinal = (int32_t)g;
        d.rank = (int32_t)g;
        for (q = 0; q < NG; q++) {
            int meas = q != g && (topo == NODE_RING ? q == (g + 1) % NG : topo == NODE_ALL || g == hub);
            if (!meas) continue;
            peer_of(&pc[np], (uint8_t)(0x40 + q), g0, node_clock(q) - node_clock(g) + node_err(g, q, seed), 600);
            if (lie && np == 0 && g == liar)
                pc[np].offset_ns += 20000; /* the lie: the first measurement of one capture, 20 us off */
            np++;
        }
        memset(&o, 0, sizeof o);
        o.device = &d;
        o.peers = pc;
        o.num_peers = np;
        caps[g] = NULL;
        opened += ikp_capture_open(w[g], 8 + 9 + 4, &o, &caps[g], &e) == IKP_OK;
    }
    CHECK_EQ(opened, NG);
    *worst_paths = 0;
    *bad_paths = 0;
    *worst_ref = 0;
    if (opened == NG && ikp_merge_align((const ikp_capture *const *)caps, NG, 0, al, &e) == IKP_OK) {
        uint64_t pb[MOST * MOST];
        CHECK_EQ(ikp_merge_pair_bounds((const ikp_capture *const *)caps, NG, al, pb, &e), IKP_OK);
        for (g = 0; g < NG; g++) {
            const int64_t off = al[g].offset_ns - (node_clock(g) - node_clock(0)); /* placed less true */
            bad += (uint64_t)(off < 0 ? -off : off) > al[g].uncertainty_ns;
            if (al[g].uncertainty_ns > *worst_ref) *worst_ref = al[g].uncertainty_ns;
            *said += al[g].disagreement_ns != 0;
            /* the lie left out where every other link outvotes it (all pairs of more than two GPUs: GPU 0's
               of GPU 1), only there */
            CHECK_EQ(al[g].left_out, (uint32_t)(lie && topo == NODE_ALL && NG > 2 && g == 0));
            if (al[g].left_out) CHECK_EQ(al[g].disagree_with, 1u);
            for (q = g + 1; q < NG; q++) {
                const int64_t d = (al[q].offset_ns - al[g].offset_ns) - (node_clock(q) - node_clock(g));
                const uint32_t b = al[g].uncertainty_ns + al[q].uncertainty_ns;
                bad += (uint64_t)(d < 0 ? -d : d) > b;
                if (b > *worst_pair) *worst_pair = b;
                /* by every path: at most the sum, the same both ways, and holding the truth */
                CHECK(pb[g * NG + q] <= b && pb[g * NG + q] == pb[q * NG + g]);
                *bad_paths += (uint64_t)(d < 0 ? -d : d) > pb[g * NG + q];
                if (pb[g * NG + q] > *worst_paths) *worst_paths = pb[g * NG + q];
            }
            if (!lie) { /* what each states: one chain's sum where one chain links it (a hub), less where
                           independent chains narrow it (the ring's two ways round, all pairs) */
                uint32_t hops = topo == NODE_RING ? (g < NG - g ? g : NG - g) : topo == NODE_HUB3 ? (g == hub || !g ? 1 : 2) : 1;
                if (!g) hops = 0;
                if (topo == NODE_HUB0 || topo == NODE_HUB3) CHECK_EQ(al[g].uncertainty_ns, 600 * hops);
                else /* placed for every pair's bound, not the reference's: the ring's farthest hop, 750 ns */
                    CHECK(al[g].uncertainty_ns <= (topo == NODE_RING ? 600 * (NG / 2) : 750));
            }
        }
    } else CHECK(0);
    for (g = 0; g < NG; g++) ikp_capture_free(caps[g]);
    return bad;
}
/* Link data made by hand (ikp__align's input), for placements that
   captures would take many words to set up: capture k on GPU lg[k], whose
   clock is lt[GPU] ns from the reference's */
enum { LMAX = 48 };
static ikp__link_data lk_ld[LMAX];
static ikp__peer_off lk_po[LMAX][LMAX];
static int64_t lt[LMAX];
static uint32_t lg[LMAX];
static void lk_init(uint32_t n)
{
    uint32_t k;
    memset(lk_ld, 0, sizeof lk_ld);
    for (k = 0; k < n; k++) {
        lk_ld[k].uuid[0] = (uint8_t)(lg[k] + 1);
        lk_ld[k].device_known = lk_ld[k].gpu_time_known = 1;
        lk_ld[k].host_name = "";
        lk_ld[k].align_start = "";
        lk_ld[k].gpu_zero_ns = 1000000 + (uint64_t)k * 1000;
        lk_ld[k].hash = 1000 + k; /* told apart: not a buffer given twice */
        lk_ld[k].num_words = 10;
        lk_ld[k].peers = lk_po[k];
        lk_ld[k].rank = -1;
    }
}
/* capture x's measurement of capture y's GPU, err off the truth, +- unc (kept sorted by UUID) */
static void lk_meas(uint32_t x, uint32_t y, int64_t err, uint64_t unc)
{
    uint32_t e, m;
    for (e = 0; e < lk_ld[x].num_peers && memcmp(lk_ld[x].peers[e].uuid, lk_ld[y].uuid, 16) < 0; e++) {}
    if (e == lk_ld[x].num_peers || memcmp(lk_ld[x].peers[e].uuid, lk_ld[y].uuid, 16)) {
        for (m = lk_ld[x].num_peers++; m > e; m--) lk_ld[x].peers[m] = lk_ld[x].peers[m - 1];
        memcpy(lk_ld[x].peers[e].uuid, lk_ld[y].uuid, 16);
    }
    lk_ld[x].peers[e].off = lt[lg[x]] - lt[lg[y]] + err;
    lk_ld[x].peers[e].unc = unc;
}
static void lk_host(uint32_t k, int64_t err, uint64_t unc)
{
    lk_ld[k].clock_syncs = 2;
    lk_ld[k].host_off = lt[lg[k]] + 5000 + err;
    lk_ld[k].host_unc = unc;
}
static uint64_t lk_rnd(uint64_t *r)
{
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    return *r;
}
/* placed: the captures off the truth by more than they state (-1: not placed); *apart: pairs of
   one GPU placed apart; *left: measurements left out */
static int lk_place(uint32_t n, ikp_alignment *out, uint32_t *apart, uint32_t *left)
{
    const ikp_allocator a = ikp__allocator(NULL);
    ikp_error e;
    uint32_t k, j;
    int bad = 0;
    if (ikp__align(&a, lk_ld, n, 0, out, &e) != IKP_OK) return -1;
    for (k = 0; k < n; k++) {
        const int64_t d = out[k].offset_ns - lt[lg[k]];
        bad += (uint64_t)(d < 0 ? -d : d) > out[k].uncertainty_ns;
        *left += out[k].left_out;
        for (j = k + 1; j < n; j++) *apart += lg[j] == lg[k] && out[j].offset_ns != out[k].offset_ns;
    }
    return bad;
}
/* The placement made for every pair, the measurement left out, by hand:
   a capture of the reference's GPU among peer-measured GPUs stays at 0
   +- 0 (the centring once let one GPU's captures apart); a host reading
   10 us off (within what drift does) that contradicts an honest peer
   measurement leaves nothing out (that measurement was once left out and
   the truth missed); and random links, all honest, then with one GPU's
   later launches' host readings drifting up to 10 us past their widths:
   every capture within what it states of the truth, and with honest
   links one GPU's captures on one offset (where host readings drift and
   links disagree, the chains may place one GPU's launches a few ns apart,
   each within its bound, as they did before the placement for every
   pair: counted, not checked). */
static void test_placed_by_hand(void)
{
    static const uint32_t g8[6] = {0, 1, 2, 3, 4, 0};
    static const int64_t t8[5] = {0, -366700, 901836, 740037, 855082};
    ikp_alignment out[LMAX];
    uint32_t k, apart = 0, drift_apart = 0, left = 0, iter, runs = 0, mode;
    uint64_t r = 88172645463325252ull;
    int64_t same_off;
    uint32_t same_unc;
    for (k = 0; k < 6; k++) lg[k] = g8[k];
    for (k = 0; k < 5; k++) lt[k] = t8[k];
    lk_init(6);
    lk_meas(0, 2, 33000, 47351); lk_meas(1, 3, -10000, 93491); lk_meas(2, 1, 300, 872); lk_meas(2, 3, -200, 12837);
    lk_meas(3, 0, 100, 744); lk_meas(3, 1, -300, 744); lk_meas(3, 2, 500, 826); lk_meas(3, 4, -50, 569);
    lk_meas(4, 0, 12000, 19215); lk_meas(5, 2, 37, 78); lk_meas(5, 4, 347, 394);
    lk_host(0, 0, 12022); lk_host(1, 20000, 43206); lk_host(4, 1000, 40370); lk_host(5, 600, 44757);
    CHECK_EQ(lk_place(6, out, &apart, &left), 0);
    CHECK_EQ(out[5].offset_ns, 0);
    CHECK_EQ(out[5].uncertainty_ns, 0u);
    CHECK_EQ(apart, 0u);
    same_off = out[5].offset_ns;
    same_unc = out[5].uncertainty_ns;
    lg[0] = 0; lg[1] = 1; lg[2] = 2; lt[0] = 0; lt[1] = 100000; lt[2] = -50000;
    lk_init(3);
    lk_host(0, 0, 2000); lk_host(1, 10000, 2000); lk_host(2, 0, 2000);
    lk_meas(0, 1, 50, 500);
    CHECK_EQ(lk_place(3, out, &apart, &left), 0);
    CHECK_EQ(left, 0u);
    for (mode = 0; mode < 2; mode++)
        for (iter = 0; iter < 400; iter++) {
            uint32_t n, ngpu, j, bad_before = 0;
            int b;
            n = 2 + (uint32_t)(lk_rnd(&r) % 39);
            ngpu = 1 + (uint32_t)(lk_rnd(&r) % n);
            for (k = 0; k < n; k++) lg[k] = k < ngpu ? k : (uint32_t)(lk_rnd(&r) % ngpu);
            for (k = 0; k < ngpu; k++) lt[k] = k ? (int64_t)(lk_rnd(&r) % 2000000) - 1000000 : 0;
            lk_init(n);
            for (k = 0; k < n; k++) {
                if (lk_rnd(&r) % 3 == 0) {
                    const uint64_t u = 1 + lk_rnd(&r) % 50000;
                    int64_t err = (int64_t)(lk_rnd(&r) % (2 * u + 1)) - (int64_t)u;
                    if (mode && lg[k] != k) err += (int64_t)(lk_rnd(&r) % 20001) - 10000; /* a later launch's drift */
                    lk_host(k, err, u);
                }
                for (j = 0; j < n; j++)
                    if (lg[j] != lg[k] && lk_rnd(&r) % 3 == 0) {
                        const uint64_t most = lk_rnd(&r) & 1 ? 1000 : 100000, u = 1 + lk_rnd(&r) % most;
                        lk_meas(k, j, (int64_t)(lk_rnd(&r) % (2 * u + 1)) - (int64_t)u, u);
                    }
            }
            b = lk_place(n, out, mode ? &drift_apart : &apart, &bad_before);
            if (b < 0) continue; /* nothing links some capture */
            runs++;
            CHECK_EQ(b, 0);
            CHECK_EQ(bad_before, 0u); /* honest peer measurements: none left out */
        }
    CHECK(runs > 600);
    CHECK_EQ(apart, 0u);
    printf("placed by hand: a capture of the reference's GPU at %lld +- %u ns; %u random sets of links (honest, "
           "then with later launches' host readings drifting) held the truth, one GPU's captures on one offset "
           "where honest (drifting: %u pairs of one GPU apart)\n", (long long)same_off, same_unc, runs, drift_apart);
}

static void test_node_gpus(void)
{
    static const char *const name[4] = {"neighbours in a ring", "a hub (the reference)", "a hub (not the reference)",
                                         "all pairs"};
    static const uint32_t sizes[3] = {2, 4, 8};
    uint32_t z;
    int topo, lie;
    for (z = 0; z < 3; z++)
        for (topo = 0; topo < 4; topo++)
            for (lie = 0; lie < 2; lie++) {
                const uint32_t ng = sizes[z], pairs = ng * (ng - 1) / 2;
                uint32_t seed, bad = 0, worst = 0, said = 0, bad_paths = 0, worst_ref = 0;
                uint64_t worst_paths = 0;
                for (seed = 0; seed < 16; seed++) {
                    uint32_t wp, sd, bp, wr;
                    uint64_t wpp;
                    bad += node_case(ng, topo, lie, seed, &wp, &sd, &wpp, &bp, &wr);
                    if (wr > worst_ref) worst_ref = wr;
                    if (wp > worst) worst = wp;
                    if (wpp > worst_paths) worst_paths = wpp;
                    bad_paths += bp;
                    said += sd != 0;
                }
                /* pairs by every path: the truth held wherever the sums hold it; at most two measurements'
                   widths (1.2 us) where one hub measured all; where every GPU measured every other, each
                   measurement a bound of its own and each placed at the centre of what they all allow: one
                   measurement's (0.6 us), within 0.75 us (two GPUs with a lie: neither can be left out);
                   the nearer side's hops in a ring; links that contradict each other (a lie another path
                   shows) leave the sums */
                if (!lie || topo == NODE_ALL || topo == NODE_RING) CHECK_EQ(bad_paths, 0);
                if (topo == NODE_HUB3 && !lie) CHECK(worst_paths <= 1200);
                if (topo == NODE_ALL && (!lie || ng > 2)) CHECK(worst_paths <= 750); /* any two within 0.75 us */
                if (topo == NODE_RING && !lie) CHECK(worst_paths <= 1200 * (ng / 2));
                if (!lie || topo == NODE_ALL || topo == NODE_RING) CHECK_EQ(bad, 0); /* the truth held */
                if (lie && (topo == NODE_RING || topo == NODE_ALL)) CHECK_EQ(said, 16); /* the lie said */
                printf("%u GPUs measured by %s%s: against the reference at most %u ns; the worst pair stated %u ns "
                       "(by every path: %llu ns, %u of 16 x %u pairs off the truth by more); %u of 16 x %u "
                       "placements and pairs off the truth by more; disagreement said in %u of 16\n",
                       ng, name[topo], lie ? ", one measurement 20 us off" : "", worst_ref, worst,
                       (unsigned long long)worst_paths, bad_paths, pairs, bad, ng + pairs, said);
            }
}

int main(void)
{
    test_host_placement();
    test_uncertainty_past_32_bits();
    test_peer_placement();
    test_same_gpu_and_twice();
    test_many_captures();
    test_captures_of_a_job();
    test_node_gpus();
    test_placed_by_hand();
    test_merged_trace();
    test_file_sections();
    test_sm_clock();
    test_sm_clock_lengths();
    test_placement();
    return check_report();
}
