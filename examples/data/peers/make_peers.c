/* The small buffers of other tools' formats in this folder, written by the
   project's own encoders (tests/encoder.h), from the formats' descriptions
   (FORMAT.md "Peer formats"), not by those tools: a pipeline of 8 blocks,
   a producer lane (event 0, "load", 4 tiles) and a consumer lane (event 1,
   "compute", after each load) a block, on %globaltimer ns.

       make_peers DIR          writes the five files into DIR
       make_peers --check DIR  checks that DIR's files are what it writes

   tirx.bin and flashinfer.bin are bare little-endian words (what
   tensor.cpu().numpy().tofile() writes); the others are NumPy .npy files of
   int64 (numpy.save of the tensor), as those tools' users save them. */
#include "../../../tests/encoder.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NB 8
#define TILES 4
static const uint64_t T0 = 1763000000000000000ull; /* a globaltimer reading */

/* both lanes of block b: loads of 300-328 ns, 400 ns apart; each compute 500 ns,
   starting when its load ends */
static void pipeline(uint32_t b, enc_rec *p, enc_rec *c)
{
    uint64_t t = T0 + 1000 * (uint64_t)b, u = t;
    int k;
    for (k = 0; k < TILES; k++) {
        uint64_t ld = t + 400 * (uint64_t)k, done = ld + 300 + 7 * (uint64_t)((b + k) % 5);
        p[2 * k].kind = ENC_B; p[2 * k].id = 0; p[2 * k].t = ld;
        p[2 * k + 1].kind = ENC_E; p[2 * k + 1].id = 0; p[2 * k + 1].t = done;
        if (u < done) u = done;
        c[2 * k].kind = ENC_B; c[2 * k].id = 1; c[2 * k].t = u;
        u += 500 + 11 * (uint64_t)((3 * b + k) % 7);
        c[2 * k + 1].kind = ENC_E; c[2 * k + 1].id = 1; c[2 * k + 1].t = u;
    }
}

typedef struct file { const char *name; int npy; uint64_t *w; size_t n; } file;

/* the .npy bytes of n int64 words: header, then the words */
static size_t npy_header(char *h, size_t n)
{
    int k = snprintf(h, 128, "\x93NUMPY\x01%c%c{'descr': '<i8', 'fortran_order': False, 'shape': (%zu,), }", 0, 0, n);
    while ((k + 1) % 64) h[k++] = ' ';
    h[k++] = '\n';
    h[8] = (char)((k - 10) & 0xFF);
    h[9] = (char)((k - 10) >> 8);
    return (size_t)k;
}

static void encode(file *f)
{
    static enc_rec recs[NB][2][2 * TILES];
    static enc_region regs[2 * NB][TILES];
    enc_lane L[2 * NB];
    const enc_region *rp[2 * NB];
    size_t nreg[2 * NB];
    uint64_t count[2 * NB], anchor[2 * NB];
    uint32_t b, i;
    memset(L, 0, sizeof L);
    for (b = 0; b < NB; b++) {
        pipeline(b, recs[b][0], recs[b][1]);
        for (i = 0; i < 2; i++) {
            enc_lane *l = &L[2 * b + i];
            uint32_t k;
            l->block = b; l->group = i; l->sm = 2 * b + 1; l->recs = recs[b][i]; l->n = 2 * TILES;
            l->started = l->finalized = 1;
            for (k = 0; k < TILES; k++) { /* a nuggets unit per lane, recorded at each end */
                enc_region *r = &regs[2 * b + i][k];
                r->start = recs[b][i][2 * k].t;
                r->dur = recs[b][i][2 * k + 1].t - r->start;
                r->tag = i;
                r->tid = (int64_t)(32 * i);
                r->slot = k;
            }
            rp[2 * b + i] = regs[2 * b + i];
            nreg[2 * b + i] = TILES;
            count[2 * b + i] = TILES; /* atomic mode */
            anchor[2 * b + i] = recs[b][i][0].t;
        }
    }
    f[0].name = "tirx.bin"; f[0].npy = 0;
    f[0].n = 1 + 2 * NB * (2 * TILES + 1);
    f[0].w = (uint64_t *)calloc(f[0].n, 8);
    { /* tirx closes each lane with a finalize record */
        static enc_rec fin[2 * NB][2 * TILES + 1];
        enc_lane T[2 * NB];
        memcpy(T, L, sizeof T);
        for (i = 0; i < 2 * NB; i++) {
            memcpy(fin[i], L[i].recs, sizeof(enc_rec) * 2 * TILES);
            fin[i][2 * TILES].kind = 'F'; fin[i][2 * TILES].id = 0; fin[i][2 * TILES].t = fin[i][2 * TILES - 1].t + 5;
            T[i].recs = fin[i]; T[i].n = 2 * TILES + 1;
        }
        enc_tirx(f[0].w, f[0].n, NB, 2, 2 * NB, T, 2 * NB);
    }
    f[1].name = "flashinfer.bin"; f[1].npy = 0;
    f[1].n = 1 + 2 * NB * 2 * TILES;
    f[1].w = (uint64_t *)calloc(f[1].n, 8);
    enc_flashinfer(f[1].w, f[1].n, NB, 2, L, 2 * NB);
    f[2].name = "triton-dist.npy"; f[2].npy = 1;
    f[2].n = 1 + NB + 2 * NB * (2 * TILES + 2); /* two empty slots a lane */
    f[2].w = (uint64_t *)calloc(f[2].n, 8);
    enc_triton_dist(f[2].w, f[2].n, NB, 2, 0x7FFFFFFFFFFFFFFFull, L, 2 * NB);
    f[3].name = "nuggets.npy"; f[3].npy = 1;
    f[3].n = 2 * NB * (1 + 4 * TILES);
    f[3].w = (uint64_t *)calloc(f[3].n, 8);
    enc_nuggets(f[3].w, 2 * NB, TILES, count, rp, nreg);
    f[4].name = "nuggets-compact.npy"; f[4].npy = 1;
    f[4].n = 2 * NB * (1 + TILES);
    f[4].w = (uint64_t *)calloc(f[4].n, 8);
    enc_nuggets_compact(f[4].w, 2 * NB, TILES, anchor, rp, nreg);
}

/* the file's bytes (malloc'd) */
static unsigned char *bytes_of(const file *f, size_t *len)
{
    char h[128];
    size_t hn = f->npy ? npy_header(h, f->n) : 0, i;
    unsigned char *p = (unsigned char *)malloc(hn + f->n * 8);
    if (!p) return NULL;
    memcpy(p, h, hn);
    for (i = 0; i < f->n * 8; i++) p[hn + i] = (unsigned char)(f->w[i / 8] >> (8 * (i % 8))); /* little-endian */
    *len = hn + f->n * 8;
    return p;
}

int main(int argc, char **argv)
{
    file f[5];
    int check = argc == 3 && !strcmp(argv[1], "--check"), k, passed = 0, failed = 0;
    const char *dir = check ? argv[2] : argc == 2 ? argv[1] : NULL;
    if (!dir) { fprintf(stderr, "usage: make_peers DIR | make_peers --check DIR\n"); return 2; }
    encode(f);
    for (k = 0; k < 5; k++) {
        char path[1024];
        size_t len, got = 0;
        unsigned char *want = bytes_of(&f[k], &len), *have;
        FILE *fp;
        snprintf(path, sizeof path, "%s/%s", dir, f[k].name);
        if (!want) return 1;
        if (!check) {
            fp = fopen(path, "wb");
            if (!fp || fwrite(want, 1, len, fp) != len || fclose(fp)) { fprintf(stderr, "cannot write %s\n", path); return 1; }
            printf("wrote %s (%zu bytes)\n", path, len);
        } else {
            have = (unsigned char *)malloc(len + 1);
            fp = fopen(path, "rb");
            if (fp && have) got = fread(have, 1, len + 1, fp);
            if (fp) fclose(fp);
            if (have && got == len && !memcmp(have, want, len)) { printf("ok   %s is what the encoders write\n", path); passed++; }
            else { printf("FAIL %s differs from what the encoders write (%zu bytes, %zu expected)\n", path, got, len); failed++; }
            free(have);
        }
        free(want);
        free(f[k].w);
    }
    if (check) printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
