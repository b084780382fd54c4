/* The host API keeps no global state: threads decoding and writing different
   captures at once (and the same capture, which is read-only once opened)
   give the same bytes as one at a time. Run under ThreadSanitizer. */
#define _POSIX_C_SOURCE 200809L
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include "check.h"
#include "encoder.h"
#include <pthread.h>
#include <stdlib.h>

typedef struct membuf { char *p; size_t n, cap; } membuf;
static int mem_write(void *u, const void *d, size_t n)
{
    membuf *m = (membuf *)u;
    if (m->n + n > m->cap) {
        size_t c = (m->n + n) * 2;
        char *np = (char *)realloc(m->p, c);
        if (!np) return 1;
        m->p = np;
        m->cap = c;
    }
    memcpy(m->p + m->n, d, n);
    m->n += n;
    return 0;
}

#define NCAP 4
static uint64_t *bufs[NCAP];
static size_t nwords[NCAP];
static ikp_capture *shared_cap; /* opened once, read by every thread */

/* everything a capture produces: trace, both stats forms */
static int render(const ikp_capture *cap, membuf *out)
{
    ikp_stats *st = NULL;
    if (ikp_write_chrome(cap, NULL, mem_write, out, NULL) != IKP_OK) return 0;
    if (ikp_stats_compute(cap, &st, NULL) != IKP_OK) return 0;
    ikp_stats_write_text(st, mem_write, out, NULL);
    ikp_stats_write_json(st, mem_write, out, NULL);
    ikp_stats_free(st);
    return 1;
}
static int render_words(int i, membuf *out)
{
    ikp_capture *cap = NULL;
    int ok;
    if (ikp_capture_open(bufs[i], nwords[i], NULL, &cap, NULL) != IKP_OK) return 0;
    ok = render(cap, out);
    ikp_capture_free(cap);
    return ok;
}

static membuf ref[NCAP + 1];

typedef struct job { int id; int ok; } job;
static void *worker(void *arg)
{
    job *j = (job *)arg;
    int r, i;
    j->ok = 1;
    for (r = 0; r < 3; r++)
        for (i = 0; i < NCAP + 1; i++) {
            int c = (i + j->id) % (NCAP + 1);
            membuf m = {0, 0, 0};
            int ok = c < NCAP ? render_words(c, &m) : render(shared_cap, &m);
            if (!ok || m.n != ref[c].n || memcmp(m.p, ref[c].p, m.n) != 0) j->ok = 0;
            free(m.p);
        }
    return NULL;
}

static void make_buffers(void)
{
    int c;
    for (c = 0; c < NCAP; c++) {
        enum { LANES = 24, RECS = 60 };
        static enc_rec recs[LANES][RECS];
        enc_lane L[LANES];
        int l, k;
        memset(L, 0, sizeof L);
        for (l = 0; l < LANES; l++) {
            uint64_t t = 1000 + (uint64_t)l * 37 + (uint64_t)c * 5;
            for (k = 0; k < RECS; k++) {
                recs[l][k].kind = k % 3 == 2 ? ENC_I : (k % 3 == 0 ? ENC_B : ENC_E);
                recs[l][k].id = (unsigned)(k % 5 + c);
                recs[l][k].t = t;
                t += 17 + (uint64_t)((k * 7 + l + c) % 13);
            }
            L[l].block = (uint32_t)l / 2; L[l].group = (uint32_t)l % 2; L[l].sm = (uint32_t)l;
            L[l].started = L[l].finalized = 1; L[l].cycles = c & 1;
            L[l].recs = recs[l]; L[l].n = RECS;
            L[l].g0 = 900; L[l].c0 = 900; L[l].g1 = t + 10; L[l].c1 = t + 10;
        }
        if (c < 2) {
            nwords[c] = enc_ikp_words(LANES, 64);
            bufs[c] = (uint64_t *)malloc(nwords[c] * 8);
            enc_ikp(bufs[c], LANES, 64, 2, LANES / 2, 1, 1, L, LANES);
        } else {
            nwords[c] = 1 + (size_t)LANES * RECS;
            bufs[c] = (uint64_t *)malloc(nwords[c] * 8);
            if (c == 2) enc_tirx(bufs[c], nwords[c], LANES / 2, 2, LANES, L, LANES);
            else enc_flashinfer(bufs[c], nwords[c], LANES / 2, 2, L, LANES);
        }
    }
}

int main(void)
{
    enum { THREADS = 8 };
    pthread_t th[THREADS];
    job jobs[THREADS];
    int i;
    make_buffers();
    CHECK_EQ(ikp_capture_open_path("examples/data/sample.ikp", NULL, &shared_cap, NULL), IKP_OK);
    if (!shared_cap) return check_report();
    for (i = 0; i < NCAP; i++) CHECK(render_words(i, &ref[i]) && ref[i].n > 1000);
    CHECK(render(shared_cap, &ref[NCAP]) && ref[NCAP].n > 1000);
    for (i = 0; i < THREADS; i++) {
        jobs[i].id = i;
        CHECK_EQ(pthread_create(&th[i], NULL, worker, &jobs[i]), 0);
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK(jobs[i].ok);
    }
    ikp_capture_free(shared_cap);
    for (i = 0; i < NCAP + 1; i++) free(ref[i].p);
    for (i = 0; i < NCAP; i++) free(bufs[i]);
    return check_report();
}
