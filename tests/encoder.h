/* Test encoder: writes IKP, TIRx, flashinfer, Triton-distributed and
   transformer_nuggets buffers from a description of
   what each lane recorded. Written from FORMAT.md and peer-formats notes, on
   purpose without ikp.h, so that the decoder is checked against an
   independent reading of the formats. Times are absolute 64-bit ticks
   (ns or cycles); the encoder truncates them to 32 bits as a device does. */
#ifndef IKP_TEST_ENCODER_H
#define IKP_TEST_ENCODER_H
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#if defined(__GNUC__)
#define ENC_FN static __attribute__((unused))
#else
#define ENC_FN static
#endif

/* ENC_AG / ENC_AC: the two halves of an IKP_ANCHOR (globaltimer low 32 bits
   in data; clock tick in t). ENC_AA: an automatic anchor (globaltimer low 32
   bits in data; in t, the cycles after the record before, < 2^14; in id,
   its width in cycles, 0: not said) */
enum { ENC_B = 'B', ENC_E = 'E', ENC_I = 'I', ENC_D = 'D', ENC_AG = 'G', ENC_AC = 'C', ENC_AA = 'A' };

typedef struct enc_rec {
    int kind;          /* ENC_B, ENC_E, ENC_I, ENC_D (payload) */
    unsigned id;
    uint64_t t;        /* ticks; ignored for ENC_D */
    uint32_t data;     /* ENC_D; ENC_B of a lane with ticks, ENC_I of a lane with ticks
                          on instants: the tick count (14 bits) read at the end or
                          instant before */
} enc_rec;

typedef struct enc_lane {
    uint32_t block, group, sm;
    int cycles;        /* records stamp cycles */
    int ticks;         /* ends and instants read globaltimer ticks for the next begin (lane flag 8);
                          2: and for the next instant (flags 8 and 16) */
    int ring;          /* ring mode */
    int pairs;         /* with ring: a ring of pairs, as the device writes it: a
                          record shares its pair with the record after it unless
                          that is a begin or an IKP_ANCHOR (an IKP_ANCHOR's two
                          halves share one); else, and last, a zero pad beside
                          it; the word after the ring counts the pads. The
                          model of a lane finalized with IKP_DEFER_BEGIN=1 and
                          no flush: it knows no IKP_FLUSH/IKP_STAGE (which
                          pad the record held back), no begin stored at once,
                          and writes an unfinalized lane's last record too */
    int started;       /* lane header written (IKP_INIT ran) */
    int finalized;     /* IKP_FINALIZE ran */
    uint64_t g0, c0, g1, c1; /* anchors */
    const enc_rec *recs;
    size_t n;
} enc_lane;

/* lane slice: 8 header words, cap record slots, 1 sink slot */
ENC_FN uint64_t enc_ikp_words(uint32_t lanes, uint32_t cap) { return 8 + (uint64_t)lanes * (9 + cap); }

/* IKP buffer: lanes x cap; grid gx,gy,gz; ng groups. out must hold enc_ikp_words(). */
ENC_FN void enc_ikp(uint64_t *out, uint32_t lanes, uint32_t cap, uint32_t ng, uint32_t gx, uint32_t gy,
                    uint32_t gz, const enc_lane *L, size_t nl)
{
    size_t i, k;
    memset(out, 0, enc_ikp_words(lanes, cap) * 8);
    out[0] = 0x31504B49ull | (1ull << 32) | (8ull << 48) | (8ull << 56);
    out[1] = lanes | ((uint64_t)cap << 32);
    out[2] = 1980000; /* clock kHz */
    for (i = 0; i < nl; i++) {
        const enc_lane *l = &L[i];
        uint32_t lane = l->block * ng + l->group, n = 0, mask = 0, stored, dropped, pads = 0;
        uint64_t *h = out + 8 + (uint64_t)lane * (9 + cap), *rec = h + 8;
        if (!l->started) continue;
        if (l->ring) { mask = 1; while (mask * 2 <= cap) mask *= 2; mask -= 1; }
        h[0] = 0x4C41u | ((uint64_t)((l->cycles ? 1 : 0) | (l->ring ? 2 : 0) | (l->ring && l->pairs ? 4 : 0) | (l->ticks ? 8 : 0) | (l->ticks == 2 ? 16 : 0)) << 16) |
               ((uint64_t)l->sm << 32);
        h[1] = l->block | ((uint64_t)l->group << 32) | ((uint64_t)ng << 48);
        h[2] = gx | ((uint64_t)gy << 32) | ((uint64_t)gz << 48);
        h[3] = l->g0;
        h[4] = l->c0;
        for (k = 0; k < l->n; k++) {
            const enc_rec *r = &l->recs[k];
            uint32_t tag, hi;
            if (r->kind == ENC_D) { tag = 0x80000000u | (r->id << 2); hi = r->data; }
            else if (r->kind == ENC_AG) { tag = 0xC0000000u; hi = r->data; }
            else if (r->kind == ENC_AC) { tag = 0xC0000004u; hi = (uint32_t)r->t; }
            else if (r->kind == ENC_AA) { tag = 0xC0000000u | (2u + r->id) << 2 | (uint32_t)r->t << 16; hi = r->data; }
            else {
                tag = (r->id << 2) | (r->kind == ENC_B ? 1u : r->kind == ENC_E ? 2u : 3u);
                if ((l->ticks && r->kind == ENC_B) || (l->ticks == 2 && r->kind == ENC_I)) tag |= (r->data & 0x3FFFu) << 16;
                hi = (uint32_t)r->t;
            }
            if (l->ring) rec[n & mask] = ((uint64_t)hi << 32) | tag;
            else rec[n < cap ? n : cap] = ((uint64_t)hi << 32) | tag; /* past capacity: the sink */
            n++;
            if (l->ring && l->pairs && (n & 1)) { /* the pair's first: its partner, or a pad */
                const enc_rec *x = k + 1 < l->n ? &l->recs[k + 1] : NULL;
                int shared = x && (r->kind == ENC_AG ? x->kind == ENC_AC : x->kind != ENC_B && x->kind != ENC_AG);
                if (!shared) { rec[n & mask] = 0; n++; pads++; }
            }
        }
        if (l->finalized) {
            uint32_t room = l->ring ? mask + 1 : cap;
            stored = n < room ? n : room;
            dropped = n - stored;
            h[5] = l->g1;
            h[6] = l->c1;
            h[7] = (1ull << 63) | stored | ((uint64_t)dropped << 32);
            if (l->ring && l->pairs) rec[mask + 1] = pads; /* the word after the ring */
        }
    }
}

/* A ring of pairs that wraps, in enc_ikp_words(2, 8) words: two lanes of
   capacity 8 (a ring of 8 slots), block 0 finalized after the 12 records
   B1 E1 I2 B3 E3 D3 B4 B5 E5 E4 I6 I7 (16 slots: pads after I2, D3, B4 and
   I7), block 1 unfinalized after the first 5; cycle stamps 100, 110, ...
   (tests/test_host.c says what a decoder must read; a fuzz seed) */
ENC_FN void enc_ring_pairs_example(uint64_t *out)
{
    static const enc_rec r[] = {
        {ENC_B, 1, 100, 0}, {ENC_E, 1, 110, 0}, {ENC_I, 2, 120, 0}, {ENC_B, 3, 130, 0},
        {ENC_E, 3, 140, 0}, {ENC_D, 3, 0, 7},   {ENC_B, 4, 150, 0}, {ENC_B, 5, 160, 0},
        {ENC_E, 5, 170, 0}, {ENC_E, 4, 180, 0}, {ENC_I, 6, 190, 0}, {ENC_I, 7, 200, 0}};
    enc_lane L[2];
    memset(L, 0, sizeof L);
    L[0].started = L[0].finalized = 1;
    L[0].ring = L[0].pairs = 1;
    L[0].recs = r;
    L[0].n = 12;
    L[0].g0 = 100;
    L[0].g1 = 300;
    L[1] = L[0];
    L[1].block = 1;
    L[1].finalized = 0;
    L[1].n = 5;
    enc_ikp(out, 2, 8, 1, 2, 1, 1, L, 2);
}

/* TIRx: record k of lane L at 1 + L + k*stride; type 0 begin 1 end 2 instant 3 finalize.
   out must hold 1 + stride * maxrecs words. */
ENC_FN void enc_tirx(uint64_t *out, size_t words, uint32_t nb, uint32_t ng, uint32_t stride,
                     const enc_lane *L, size_t nl)
{
    size_t i, k;
    memset(out, 0, words * 8);
    out[0] = ((uint64_t)ng << 32) | nb;
    for (i = 0; i < nl; i++) {
        uint32_t lane = L[i].block * ng + L[i].group;
        for (k = 0; k < L[i].n; k++) {
            const enc_rec *r = &L[i].recs[k];
            uint32_t type = r->kind == ENC_B ? 0 : r->kind == ENC_E ? 1 : r->kind == ENC_I ? 2 : 3;
            uint64_t pos = 1 + lane + k * (uint64_t)stride;
            if (pos < words) out[pos] = ((uint64_t)(uint32_t)r->t << 32) | (lane << 12) | (r->id << 2) | type;
        }
    }
}

/* flashinfer: stride num_blocks*num_groups; tag = sm<<24 | block<<12 | id<<2 | type.
   Like flashinfer, an instant does not advance the write position. */
ENC_FN void enc_flashinfer(uint64_t *out, size_t words, uint32_t nb, uint32_t ng,
                           const enc_lane *L, size_t nl)
{
    size_t i, k;
    uint64_t stride = (uint64_t)nb * ng;
    memset(out, 0, words * 8);
    out[0] = ((uint64_t)ng << 32) | nb;
    for (i = 0; i < nl; i++) {
        uint32_t lane = L[i].block * ng + L[i].group;
        uint64_t pos = 1 + lane;
        for (k = 0; k < L[i].n; k++) {
            const enc_rec *r = &L[i].recs[k];
            uint32_t type = r->kind == ENC_B ? 0 : r->kind == ENC_E ? 1 : 2;
            uint32_t tag = (L[i].sm << 24) | ((L[i].block & 0xFFFu) << 12) | (r->id << 2) | type;
            if (pos < words) out[pos] = ((uint64_t)(uint32_t)r->t << 32) | tag;
            if (r->kind != ENC_I) pos += stride;
        }
    }
}
/* Triton-distributed: word 0 = ng << 32 | nb; word 1 + b = sm << 32 | b for
   each block whose lanes ran (sm of the block's first lane; blocks that did
   not run keep the fill); record k of lane L at 1 + nb + L + k * nb * ng,
   ((t & 0xFFFFFFFF) << 32) | lane << 12 | task << 1 | is_start (1 = begin).
   The buffer is filled with `empty` (0x7FFF..., 0xFFFF... or 0) first. The
   tag is not masked, as in the kernel: lanes >= 2^20 spill out of 32 bits. */
ENC_FN void enc_triton_dist(uint64_t *out, size_t words, uint32_t nb, uint32_t ng, uint64_t empty,
                            const enc_lane *L, size_t nl)
{
    size_t i, k;
    uint64_t stride = (uint64_t)nb * ng;
    for (i = 0; i < words; i++) out[i] = empty;
    out[0] = ((uint64_t)ng << 32) | nb;
    for (i = 0; i < nl; i++) {
        uint32_t lane = L[i].block * ng + L[i].group;
        if (1 + L[i].block < words) out[1 + L[i].block] = ((uint64_t)L[i].sm << 32) | L[i].block;
        for (k = 0; k < L[i].n; k++) {
            const enc_rec *r = &L[i].recs[k];
            uint64_t pos = 1 + nb + lane + k * stride;
            uint32_t tag = (uint32_t)(lane << 12) | (uint32_t)(r->id << 1) | (r->kind == ENC_B ? 1u : 0u);
            if (pos < words) out[pos] = ((uint64_t)(uint32_t)r->t << 32) | tag;
        }
    }
}

/* transformer_nuggets: one region as a device records it at its end */
typedef struct enc_region {
    uint64_t start, dur;  /* ns (full 64-bit globaltimer); compact keeps dur mod 2^24 */
    uint32_t tag;
    int64_t tid;          /* legacy only */
    uint32_t slot;        /* slot index in its unit (static mode: the kernel chooses) */
} enc_region;

/* legacy: unit u's slice of 1 + 4 * max_events words at u * (1 + 4 * max_events):
   [count][start, dur, tag, tid]...; count = count[u] (atomic mode) or 0 (static) */
ENC_FN void enc_nuggets(uint64_t *out, uint32_t units, uint32_t max_events, const uint64_t *count,
                        const enc_region *const *regions, const size_t *nreg)
{
    uint64_t S = 1 + 4 * (uint64_t)max_events;
    uint32_t u;
    size_t k;
    memset(out, 0, (size_t)(units * S) * 8);
    for (u = 0; u < units; u++) {
        uint64_t *q = out + u * S;
        q[0] = count ? count[u] : 0;
        for (k = 0; k < nreg[u]; k++) {
            const enc_region *r = &regions[u][k];
            if (r->slot >= max_events) continue; /* the bounds check drops it */
            q[1 + 4 * r->slot] = r->start;
            q[2 + 4 * r->slot] = r->dur;
            q[3 + 4 * r->slot] = r->tag;
            q[4 + 4 * r->slot] = (uint64_t)r->tid;
        }
    }
}

/* compact: unit u's slice of 1 + max_events words: [anchor][tag8 | dur24 | start_lo32]...;
   anchor[u] = 0 for a unit that never ran */
ENC_FN void enc_nuggets_compact(uint64_t *out, uint32_t units, uint32_t max_events, const uint64_t *anchor,
                                const enc_region *const *regions, const size_t *nreg)
{
    uint64_t S = 1 + (uint64_t)max_events;
    uint32_t u;
    size_t k;
    memset(out, 0, (size_t)(units * S) * 8);
    for (u = 0; u < units; u++) {
        uint64_t *q = out + u * S;
        q[0] = anchor[u];
        for (k = 0; k < nreg[u]; k++) {
            const enc_region *r = &regions[u][k];
            if (r->slot >= max_events) continue;
            q[1 + r->slot] = ((uint64_t)(r->tag & 0xFFu) << 56) | ((r->dur & 0xFFFFFFull) << 32) |
                             (r->start & 0xFFFFFFFFull);
        }
    }
}
#endif
