/* The core without the Perfetto writer and merged timelines
   (IKP_NO_PERFETTO, IKP_NO_MERGE): a JSON trace is written as ever; a
   .pftrace path is refused before anything is written, the capture file
   included, with a message that says why; so is a merged trace (when
   merged timelines are compiled). Exit 0 when all holds. */
#define IKP_IMPLEMENTATION
#include "ikp.h"
#include <stdio.h>
#include <string.h>

static int exists(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (f) fclose(f);
    return f != NULL;
}

int main(int argc, char **argv)
{
    static uint64_t w[64];
    char cap_path[512], json[512], pf[512];
    ikp_dump_desc d;
    ikp_error e;
    const char *dir = argc > 1 ? argv[1] : ".";
    int bad = 0;
    snprintf(cap_path, sizeof cap_path, "%s/np.ikp", dir);
    snprintf(json, sizeof json, "%s/np.json", dir);
    snprintf(pf, sizeof pf, "%s/np.pftrace", dir);
    remove(cap_path); remove(json); remove(pf);
    if (ikp_buffer_words(1, 8) > 64 || ikp_buffer_header(w, 1, 8, 0, NULL) != IKP_OK) return 2;
    memset(&d, 0, sizeof d);
    d.trace_path = json;
    if (ikp_dump_words(w, ikp_buffer_words(1, 8), &d, &e) != IKP_OK || !exists(json)) {
        printf("a JSON trace: %s\n", e.message);
        bad++;
    }
    d.trace_path = pf;
    d.capture_path = cap_path;
    if (ikp_dump_words(w, ikp_buffer_words(1, 8), &d, &e) != IKP_ERR_INVALID_ARGUMENT ||
        !strstr(e.message, "IKP_NO_PERFETTO") || exists(pf) || exists(cap_path)) {
        printf("a .pftrace path is not refused cleanly: %s\n", e.message);
        bad++;
    }
#ifndef IKP_NO_MERGE
    { /* a merged trace to a .pftrace path: refused, nothing written */
        ikp_capture *cap = NULL;
        const ikp_capture *caps[1];
        if (ikp_capture_open(w, ikp_buffer_words(1, 8), NULL, &cap, &e) != IKP_OK) return 3;
        caps[0] = cap;
        if (ikp_write_merged_path(caps, 1, NULL, pf, &e) != IKP_ERR_INVALID_ARGUMENT ||
            !strstr(e.message, "IKP_NO_PERFETTO") || exists(pf)) {
            printf("a merged .pftrace is not refused cleanly: %s\n", e.message);
            bad++;
        }
        ikp_capture_free(cap);
    }
#endif
    return bad;
}
