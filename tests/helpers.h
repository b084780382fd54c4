/* Helpers shared by the host test runners: open a buffer expecting a
   result, decode lanes, write traces to memory, compare pass and walks. */
#ifndef IKP_TEST_HELPERS_H
#define IKP_TEST_HELPERS_H
#include <stdlib.h>
#include <string.h>
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

#define NS 1000 /* ps per ns */

/* Writes words to path as an .ikp capture file, with the format and names
   given: opened as a capture, then written from it. */
static ikp_result save_words(const char *path, const uint64_t *w, size_t n, ikp_format f, const char *const *ev,
                             uint32_t nev, const char *const *gr, uint32_t ngr)
{
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    ikp_result r;
    memset(&o, 0, sizeof o);
    o.format = f;
    o.event_names = ev;
    o.num_event_names = nev;
    o.group_names = gr;
    o.num_group_names = ngr;
    r = ikp_capture_open(w, n, &o, &cap, NULL);
    if (r == IKP_OK) r = ikp_capture_write_path(cap, path, NULL);
    ikp_capture_free(cap);
    return r;
}

/* With IKP_SAVE_CAPTURES=DIR, every buffer open_fmt opens is also saved as
   an .ikp capture there (named by its contents), for test_perfetto.py. */
static void save_capture(const uint64_t *w, size_t n, ikp_format f)
{
    const char *dir = getenv("IKP_SAVE_CAPTURES");
    uint64_t h = 1469598103934665603ull;
    char path[512];
    size_t i;
    if (!dir) return;
    for (i = 0; i < n; i++) h = (h ^ w[i]) * 1099511628211ull;
    snprintf(path, sizeof path, "%s/%016llx-%s.ikp", dir, (unsigned long long)h, ikp_format_name(f));
    save_words(path, w, n, f, NULL, 0, NULL, 0);
}

static ikp_capture *open_fmt(const uint64_t *w, size_t n, ikp_format f, ikp_result want)
{
    ikp_capture *cap = NULL;
    ikp_decode_options o;
    ikp_error e;
    ikp_result r;
    memset(&o, 0, sizeof o);
    o.format = f;
    r = ikp_capture_open(w, n, &o, &cap, &e);
    CHECK_EQ(r, want);
    if (r != want) fprintf(stderr, "  error: %s\n", e.message);
    if (r == IKP_OK) CHECK(cap != NULL);
    else CHECK(cap == NULL && e.message[0] != 0);
    if (r == IKP_OK) save_capture(w, n, f);
    return cap;
}

/* every (track) of every lane holds properly nested regions */
static int nesting_ok(const ikp_capture *cap)
{
    ikp_lane_events ev;
    uint32_t lane, t;
    int ok = 1;
    memset(&ev, 0, sizeof ev);
    for (lane = 0; lane < ikp_capture_get_info(cap)->num_lanes; lane++) {
        if (ikp_decode_lane(cap, lane, &ev, NULL) != IKP_OK) return 0;
        for (t = 0; t < ev.num_tracks; t++) {
            int64_t stack[256];
            int n = 0;
            size_t k;
            int64_t prev_start = INT64_MIN;
            for (k = 0; k < ev.count; k++) {
                const ikp_event *e = &ev.events[k];
                if (e->kind != IKP_EVENT_REGION || e->track != t) continue;
                if (e->start_ps < prev_start) ok = 0;
                prev_start = e->start_ps;
                while (n && stack[n - 1] <= e->start_ps) n--;
                if (n && stack[n - 1] < e->end_ps) ok = 0;
                if (n < 256) stack[n++] = e->end_ps;
            }
        }
    }
    ikp_lane_events_free(cap, &ev);
    return ok;
}

typedef struct membuf { char *p; size_t n, cap; } membuf;
static int mem_write(void *u, const void *d, size_t n)
{
    membuf *m = (membuf *)u;
    if (m->n + n + 1 > m->cap) {
        size_t c = (m->n + n + 1) * 2;
        char *np = (char *)realloc(m->p, c);
        if (!np) return 1;
        m->p = np; m->cap = c;
    }
    memcpy(m->p + m->n, d, n);
    m->n += n;
    m->p[m->n] = 0;
    return 0;
}

static char *chrome(const ikp_capture *cap, ikp_group_by by)
{
    membuf m = {0, 0, 0};
    ikp_trace_options o;
    ikp_error e;
    memset(&o, 0, sizeof o);
    o.by = by;
    CHECK_EQ(ikp_write_chrome(cap, &o, mem_write, &m, &e), IKP_OK);
    return m.p;
}

static size_t count_str(const char *s, const char *sub)
{
    size_t n = 0, l = strlen(sub);
    while ((s = strstr(s, sub)) != NULL) { n++; s += l; }
    return n;
}

/* regions of lane in start order -> (id, start, dur) in ps */
static size_t regions(const ikp_capture *cap, uint32_t lane, ikp_event *out, size_t max)
{
    ikp_lane_events ev;
    size_t k, n = 0;
    memset(&ev, 0, sizeof ev);
    CHECK_EQ(ikp_decode_lane(cap, lane, &ev, NULL), IKP_OK);
    for (k = 0; k < ev.count && n < max; k++) out[n++] = ev.events[k];
    ikp_lane_events_free(cap, &ev);
    return n;
}

/* Peer formats: the open-time pass (ikp_capture_get_info) and the per-lane
   walks (ikp_capture_lane) must agree on every count and on the span. */
static void check_peer_totals(const ikp_capture *cap)
{
    const ikp_capture_info *in = ikp_capture_get_info(cap);
    uint64_t records = 0, invalid = 0, backwards = 0, after = 0, active = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint32_t l;
    for (l = 0; l < in->num_lanes; l++) {
        ikp_lane_info li = lane_info(cap, l);
        if (!(li.flags & IKP_LANE_STARTED)) continue;
        active++;
        records += li.records; invalid += li.invalid; backwards += li.backwards; after += li.after_finalize;
        if (li.first_ps != INT64_MIN) {
            if (li.first_ps < lo) lo = li.first_ps;
            if (li.last_ps > hi) hi = li.last_ps;
        }
    }
    CHECK_EQ(in->active_lanes, active);
    CHECK_EQ(in->records, records);
    CHECK_EQ(in->invalid, invalid);
    CHECK_EQ(in->backwards, backwards);
    CHECK_EQ(in->after_finalize, after);
    if (lo != INT64_MAX) { CHECK_EQ(lo, 0); CHECK_EQ(hi, in->span_ps); }
}

#endif
