/* Writes examples/data/sample.ikp with the test encoder: a synthetic
   warp-specialized GEMM-like capture (8 blocks x 2 groups, SM-cycle stamps).
   Used until a real GPU capture replaces it (see README). */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include "encoder.h"

#include <stdlib.h>

enum { EV_TILE, EV_LOAD, EV_WAIT, EV_MMA, EV_EPILOGUE, EV_COUNT };

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "examples/data/sample.ikp";
    const char *names[EV_COUNT] = {"tile", "load", "wait", "mma", "epilogue"};
    const char *groups[2] = {"producer", "consumer"};
    const uint32_t blocks = 8, ng = 2, cap = 512, ktiles = 16;
    const double rate = 1.98; /* cycles per ns */
    enc_lane L[16];
    enc_rec *recs = (enc_rec *)calloc(16 * cap, sizeof(enc_rec));
    uint64_t *w = (uint64_t *)malloc(enc_ikp_words(blocks * ng, cap) * 8);
    uint32_t b, g, k, seed = 12345;
    ikp_error e;
    if (!recs || !w) return 1;
    for (b = 0; b < blocks; b++)
        for (g = 0; g < ng; g++) {
            enc_lane *l = &L[b * ng + g];
            enc_rec *r = recs + (b * ng + g) * cap;
            size_t n = 0;
            uint64_t c0 = 1000000ull * (b + 1) * 37, t; /* per-SM clock offsets */
            uint64_t g0 = 1700000000000000000ull + 150 * b;
            t = c0 + 200 + (uint64_t)g * 300;
            for (k = 0; k < ktiles; k++) {
                seed = seed * 1103515245u + 12345u;
                if (g == 0) { /* producer: load tile k ahead of the consumer */
                    r[n].kind = ENC_B; r[n].id = EV_LOAD; r[n].t = t; n++;
                    t += 1400 + (seed >> 24);
                    r[n].kind = ENC_E; r[n].id = EV_LOAD; r[n].t = t; n++;
                    r[n].kind = ENC_D; r[n].id = EV_LOAD; r[n].data = k; n++;
                    t += 60;
                } else { /* consumer: tile { wait, mma } */
                    r[n].kind = ENC_B; r[n].id = EV_TILE; r[n].t = t; n++;
                    r[n].kind = ENC_D; r[n].id = EV_TILE; r[n].data = k; n++;
                    r[n].kind = ENC_B; r[n].id = EV_WAIT; r[n].t = t + 10; n++;
                    t += 10 + (k == 0 ? 1500 : 80 + (seed >> 26));
                    r[n].kind = ENC_E; r[n].id = EV_WAIT; r[n].t = t; n++;
                    r[n].kind = ENC_B; r[n].id = EV_MMA; r[n].t = t + 8; n++;
                    t += 8 + 1300 + (seed >> 25);
                    r[n].kind = ENC_E; r[n].id = EV_MMA; r[n].t = t; n++;
                    r[n].kind = ENC_E; r[n].id = EV_TILE; r[n].t = t + 6; n++;
                    t += 20;
                }
            }
            if (g == 1) {
                r[n].kind = ENC_B; r[n].id = EV_EPILOGUE; r[n].t = t; n++;
                t += 3000;
                r[n].kind = ENC_E; r[n].id = EV_EPILOGUE; r[n].t = t; n++;
            }
            memset(l, 0, sizeof *l);
            l->block = b; l->group = g; l->sm = b * 16 + 3; l->cycles = 1;
            l->started = l->finalized = 1; l->recs = r; l->n = n;
            l->c0 = c0; l->g0 = g0;
            l->c1 = t + 100; l->g1 = g0 + (uint64_t)((double)(l->c1 - c0) / rate);
        }
    enc_ikp(w, blocks * ng, cap, ng, blocks, 1, 1, L, blocks * ng);
    if (ikp_capture_save(out, w, enc_ikp_words(blocks * ng, cap), IKP_FORMAT_IKP, names, EV_COUNT,
                         groups, 2, &e) != IKP_OK) {
        fprintf(stderr, "gen_sample: %s\n", e.message);
        return 1;
    }
    free(recs);
    free(w);
    return 0;
}
