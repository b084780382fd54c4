/* Writes the committed seed corpora fuzz/corpus/<target>/ from the test
   encoder: small valid buffers and capture files of every format, plus name
   lists. Run by `make fuzz-seeds`; the seeds are committed. */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include "../tests/encoder.h"
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function" /* the test helpers it does not use */
#endif
#include "../tests/check.h"
#include "../tests/helpers.h"
#include <stdlib.h>

static void put(const char *dir, const char *name, const void *d, size_t n)
{
    char p[512];
    FILE *f;
    snprintf(p, sizeof p, "fuzz/corpus/%s/%s", dir, name);
    f = fopen(p, "wb");
    if (!f) { fprintf(stderr, "cannot write %s\n", p); exit(1); }
    fwrite(d, 1, n, f);
    fclose(f);
}

/* an .ikp capture file of the words, with names (tests/helpers.h) */
static void capture(const char *dir, const char *name, const uint64_t *w, size_t n, ikp_format f)
{
    const char *ev[3] = {"load", "mma \"x\"", NULL};
    const char *gr[2] = {"producer", "consumer"};
    char p[512];
    snprintf(p, sizeof p, "fuzz/corpus/%s/%s", dir, name);
    if (save_words(p, w, n, f, ev, 3, gr, 2) != IKP_OK) { fprintf(stderr, "cannot write %s\n", p); exit(1); }
}

int main(void)
{
    static const enc_rec r0[] = {{ENC_B, 0, 0xFFFFFF00ull, 0}, {ENC_D, 0, 0, 7}, {ENC_B, 1, 0xFFFFFF40ull, 0},
                                 {ENC_E, 1, 0x100000010ull, 0}, {ENC_E, 0, 0x100000050ull, 0}, {ENC_I, 2, 0x100000060ull, 0}};
    static const enc_rec r1[] = {{ENC_B, 0, 100, 0}, {ENC_B, 1, 110, 0}, {ENC_E, 0, 120, 0}, {ENC_E, 1, 130, 0}, {ENC_E, 2, 140, 0}};
    enc_lane L[4];
    uint64_t w[8 + 4 * (9 + 8)], t[1 + 4 * 6];
    memset(L, 0, sizeof L);
    L[0].started = L[0].finalized = 1; L[0].recs = r0; L[0].n = 6; L[0].g0 = 0xFFFFFE00ull; L[0].g1 = 0x100000100ull;
    L[1] = L[0]; L[1].group = 1; L[1].recs = r1; L[1].n = 5; L[1].cycles = 1; L[1].sm = 7;
    L[1].c0 = 50; L[1].c1 = 200; L[1].g0 = 1000; L[1].g1 = 1100;
    L[2] = L[1]; L[2].block = 1; L[2].group = 0; L[2].ring = 1; L[2].finalized = 1;
    L[3] = L[1]; L[3].block = 1; L[3].group = 1; L[3].finalized = 0;
    enc_ikp(w, 4, 8, 2, 2, 1, 1, L, 4);
    put("ikp", "two_blocks", w, sizeof w);
    put("e2e", "ikp_bare", w, sizeof w);
    capture("capture", "ikp", w, sizeof w / 8, IKP_FORMAT_IKP);
    capture("e2e", "ikp_capture", w, sizeof w / 8, IKP_FORMAT_IKP);
    enc_ikp(w, 1, 2, 1, 1, 1, 1, L, 1); /* overflowing lane: 6 records, 2 slots */
    put("ikp", "overflow", w, (8 + 11) * 8);
    { /* a cycle lane with IKP_ANCHOR records (one good, one a second off, one half alone) */
        static const enc_rec ra[] = {{ENC_I, 0, 1000, 0}, {ENC_AG, 0, 0, 1100}, {ENC_AC, 0, 1200, 0},
                                     {ENC_B, 1, 1300, 0}, {ENC_AG, 0, 0, 1000001200u}, {ENC_AC, 0, 1400, 0},
                                     {ENC_AG, 0, 0, 1250}, {ENC_E, 1, 1500, 0}, {ENC_D, 1, 0, 9}};
        enc_lane A;
        uint64_t wa[8 + 1 * (9 + 12)];
        memset(&A, 0, sizeof A);
        A.started = A.finalized = 1; A.cycles = 1; A.recs = ra; A.n = 9;
        A.g0 = 1000; A.c0 = 900; A.g1 = 1400; A.c1 = 1700;
        enc_ikp(wa, 1, 12, 1, 1, 1, 1, &A, 1);
        put("ikp", "anchored", wa, sizeof wa);
        put("e2e", "ikp_anchored", wa, sizeof wa);
    }
    { /* a ring of pairs (the ring builds): lone records with pads, wrapped */
        uint64_t wp[8 + 2 * (9 + 8)];
        enc_ring_pairs_example(wp);
        put("ikp", "ring_pairs", wp, sizeof wp);
        put("e2e", "ikp_ring_pairs", wp, sizeof wp);
    }
    enc_tirx(t, sizeof t / 8, 2, 2, 4, L, 4);
    put("tirx", "two_by_two", t, sizeof t);
    put("e2e", "tirx_bare", t, sizeof t);
    capture("capture", "tirx", t, sizeof t / 8, IKP_FORMAT_TIRX);
    enc_flashinfer(t, sizeof t / 8, 2, 2, L, 4);
    put("flashinfer", "two_by_two", t, sizeof t);
    put("e2e", "flashinfer_bare", t, sizeof t);
    capture("capture", "flashinfer", t, sizeof t / 8, IKP_FORMAT_FLASHINFER);
    put("names", "plain", "load,mma,epilogue", 17);
    put("names", "odd", "a\"b,\\c,,\x01\n\xff\xfe\r\ntab\t", 22);
    put("names", "empty", "", 0);
    { /* tirx: a stale launch after a finalize; a stray record naming lane 4096 + its slot */
        static const enc_rec rs[] = {{ENC_B, 1, 5000, 0}, {ENC_E, 1, 5400, 0}, {'F', 0, 5500, 0},
                                     {ENC_B, 1, 1000, 0}, {ENC_E, 1, 1100, 0}};
        enc_lane S;
        uint64_t ts[1 + 2 * 5];
        memset(&S, 0, sizeof S);
        S.recs = rs; S.n = 5;
        enc_tirx(ts, 11, 2, 1, 2, &S, 1);
        ts[2] = (6000ull << 32) | ((4096u + 1u) << 12) | 2u;
        put("tirx", "stale_and_stray", ts, sizeof ts);
        put("e2e", "tirx_stale_and_stray", ts, sizeof ts);
    }
    { /* a .npy file (format 1.0) holding an IKP buffer */
        unsigned char np[128 + sizeof w];
        const char *dict = "{'descr': '<u8', 'fortran_order': False, 'shape': (25,), }";
        size_t hl = strlen(dict), pad = 128 - 10 - hl - 1;
        enc_ikp(w, 1, 8, 1, 1, 1, 1, L, 1);
        memcpy(np, "\x93NUMPY\x01\x00", 8);
        np[8] = (unsigned char)(128 - 10);
        np[9] = 0;
        memcpy(np + 10, dict, hl);
        memset(np + 10 + hl, ' ', pad);
        np[127] = '\n';
        memcpy(np + 128, w, 25 * 8);
        put("capture", "npy", np, 128 + 25 * 8);
        put("e2e", "npy", np, 128 + 25 * 8);
    }
    { /* names through the API: NUL-separated, odd bytes, the longest allowed, one too long */
        static unsigned char nm[2 * 256 + 300];
        memset(nm, 1, 255);
        nm[255] = 0;
        memset(nm + 256, 0xFF, 255);
        nm[511] = 0;
        memset(nm + 512, 'x', 299);
        put("apinames", "plain", "load\0mma \"x\"\0\0epilogue", 23);
        put("apinames", "longest", nm, 511);
        put("apinames", "too_long", nm, sizeof nm - 1);
    }
    { /* Triton-distributed (filled, zeroed), transformer_nuggets (both layouts);
         fuzz seeds carry an 8-byte prefix: byte 0 = units or tick choice */
        static enc_rec tr[3] = {{ENC_B, 3, 0xFFFFFFF0ull, 0}, {ENC_E, 3, 0x100000010ull, 0}, {ENC_B, 2, 0x100000020ull, 0}};
        enc_lane TL[3];
        uint64_t td[8 + 1 + 2 + 4 * 3], *tw = td + 8;
        const uint64_t T = 1763000000000000000ull;
        const enc_region u0[2] = {{T, 1000, 1, 0, 0}, {T + 100, 200, 2, 0, 1}}, u1[1] = {{T + 50, 30, 1, 1, 0}};
        const enc_region *regs[3] = {u0, u1, NULL};
        const size_t nreg[3] = {2, 1, 0};
        const uint64_t count[3] = {2, 5, 0}, anchor[3] = {T - 10, T + 40, 0};
        uint64_t nl[8 + 3 * 9], nc[8 + 3 * 3];
        memset(TL, 0, sizeof TL);
        TL[0].recs = tr; TL[0].n = 3; TL[0].sm = 5;
        TL[1] = TL[0]; TL[1].group = 1;
        TL[2] = TL[0]; TL[2].block = 1; TL[2].sm = 9; TL[2].n = 2;
        memset(td, 0, 8 * 8);
        enc_triton_dist(tw, 1 + 2 + 4 * 3, 2, 2, 0x7FFFFFFFFFFFFFFFull, TL, 3);
        put("tritondist", "filled", td, sizeof td);
        put("e2e", "triton_dist_filled", tw, (1 + 2 + 4 * 3) * 8);
        td[0] = 1; /* 10 ns ticks */
        enc_triton_dist(tw, 1 + 2 + 4 * 3, 2, 2, 0, TL, 3);
        put("tritondist", "zeroed_10ns", td, sizeof td);
        put("e2e", "triton_dist_zeroed", tw, (1 + 2 + 4 * 3) * 8);
        memset(nl, 0, 8 * 8);
        enc_nuggets(nl + 8, 3, 2, count, regs, nreg);
        put("nuggets", "inferred", nl, sizeof nl);
        nl[0] = 3;
        put("nuggets", "units3", nl, sizeof nl);
        put("e2e", "nuggets", nl + 8, 3 * 9 * 8);
        memset(nc, 0, 8 * 8);
        enc_nuggets_compact(nc + 8, 3, 2, anchor, regs, nreg);
        put("nuggetscompact", "inferred", nc, sizeof nc);
        nc[0] = 3;
        put("nuggetscompact", "units3", nc, sizeof nc);
        put("e2e", "nuggets_compact", nc + 8, 3 * 3 * 8);
    }
    { /* beyond the sizes the Perfetto reader once held in fixed tables:
         one lane of 300 nested regions, each of its own event (300 names
         and 300 open slices on one track); 2100 TIRx blocks (4201 tracks) */
        static enc_rec deep[600];
        static enc_rec one[2] = {{ENC_B, 0, 1000, 0}, {ENC_E, 0, 1100, 0}};
        static enc_lane many[2100];
        static uint64_t wd[8 + 9 + 600], tm[1 + 2 * 2100];
        enc_lane D;
        unsigned k;
        for (k = 0; k < 300; k++) {
            deep[k].kind = ENC_B; deep[k].id = k; deep[k].t = 1000 + 10 * k;
            deep[599 - k].kind = ENC_E; deep[599 - k].id = k; deep[599 - k].t = 20000 - 10 * k;
        }
        memset(&D, 0, sizeof D);
        D.started = D.finalized = 1; D.recs = deep; D.n = 600; D.g0 = 900; D.g1 = 30000;
        enc_ikp(wd, 1, 600, 1, 1, 1, 1, &D, 1);
        put("ikp", "deep_many_names", wd, sizeof wd);
        put("e2e", "ikp_deep_many_names", wd, sizeof wd);
        for (k = 0; k < 2100; k++) { many[k].block = k; many[k].recs = one; many[k].n = 2; }
        enc_tirx(tm, sizeof tm / 8, 2100, 1, 2100, many, 2100);
        put("tirx", "many_lanes", tm, sizeof tm);
        put("e2e", "tirx_many_lanes", tm, sizeof tm);
    }
    return 0;
}
