/* libFuzzer harnesses for every entry point of ikp.h that reads outside data.
   Built once; the program's name picks the target (build/fuzz_<name>, links
   to one binary: see Makefile `fuzz`), or FUZZ_TARGET=<name> in the
   environment:
     1 ikp        IKP buffer decoder (forced format), then JSON + statistics
     2 tirx       TIRx decoder (forced), then JSON + statistics
     3 flashinfer flashinfer decoder (forced), then JSON + statistics
     4 capture    .ikp capture / bare buffer reader (auto-detect), then JSON + statistics
     5 names      name-list parser (comma and newline lists)
     6 e2e        auto-detect + every writer, --by block and --by sm
     7 apinames   event and group names given through ikp_decode_options (any
                  bytes, any length: NUL-separated in the input), then every writer
     8 tritondist Triton-distributed decoder (forced; 1 ns or 10 ns ticks by the
                  first byte), then JSON + statistics
     9 nuggets    transformer_nuggets legacy decoder (forced); the first byte
                  gives --units (0: inferred), the words follow
    10 nuggetscompact  the same for the compact layout
   Every call must return a result code; ASan/UBSan/LSan catch the rest.
   Every target writes JSON and Perfetto traces, plain and with flows and
   counters, and a Parquet table; every Perfetto trace is read back
   (check_perfetto) and must parse, and so must the table's frame and footer
   (check_parquet). */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sink(void *u, const void *d, size_t n)
{
    size_t *total = (size_t *)u;
    const unsigned char *p = (const unsigned char *)d;
    if (n) *total += p[0] + p[n - 1]; /* touch the output */
    return 0;
}

/* ---- a reader of the Perfetto traces written: every output must parse ----
   The wire format message by message (the fields the writer uses, each with
   its wire type), strings valid UTF-8, and what the trace processor needs:
   events on a cleared sequence, a clock before timestamps, names and
   annotation names interned before use, slice ends matching begins, and
   every track an event names described. A violation aborts (a finding). */
typedef struct mem { unsigned char *p; size_t n, cap; } mem;
static int mem_sink(void *u, const void *d, size_t n)
{
    mem *m = (mem *)u;
    if (m->n + n > m->cap) {
        size_t c = (m->n + n) * 2;
        unsigned char *np = (unsigned char *)realloc(m->p, c);
        if (!np) return 1;
        m->p = np; m->cap = c;
    }
    memcpy(m->p + m->n, d, n);
    m->n += n;
    return 0;
}
#define REQUIRE(c) do { if (!(c)) { fprintf(stderr, "perfetto trace: %s (line %d)\n", #c, __LINE__); abort(); } } while (0)
typedef struct fld { unsigned f, wt; const struct fld *sub; } fld; /* sub: a message's fields, {0} ends */
static const fld f_clock[] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {0, 0, 0}};
static const fld f_snapshot[] = {{1, 2, f_clock}, {0, 0, 0}};
static const fld f_te_def[] = {{11, 0, 0}, {0, 0, 0}};
static const fld f_defaults[] = {{58, 0, 0}, {11, 2, f_te_def}, {0, 0, 0}};
static const fld f_iname[] = {{1, 0, 0}, {2, 2, 0}, {0, 0, 0}};
static const fld f_interned[] = {{2, 2, f_iname}, {3, 2, f_iname}, {0, 0, 0}};
static const fld f_ann[] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {6, 2, 0}, {0, 0, 0}};
static const fld f_event[] = {{4, 2, f_ann}, {9, 0, 0}, {10, 0, 0}, {11, 0, 0}, {30, 0, 0}, {47, 1, 0}, {48, 1, 0}, {0, 0, 0}};
static const fld f_proc[] = {{1, 0, 0}, {6, 2, 0}, {0, 0, 0}};
static const fld f_thread[] = {{1, 0, 0}, {2, 0, 0}, {5, 2, 0}, {0, 0, 0}};
static const fld f_counter[] = {{0, 0, 0}};
static const fld f_desc[] = {{1, 0, 0}, {2, 2, 0}, {3, 2, f_proc}, {4, 2, f_thread}, {5, 0, 0}, {8, 2, f_counter},
                             {11, 0, 0}, {12, 0, 0}, {0, 0, 0}};
static const fld f_packet[] = {{6, 2, f_snapshot}, {8, 0, 0}, {10, 0, 0}, {11, 2, f_event}, {12, 2, f_interned},
                               {13, 0, 0}, {59, 2, f_defaults}, {60, 2, f_desc}, {0, 0, 0}};
static const fld f_trace[] = {{1, 2, f_packet}, {0, 0, 0}};

static const unsigned char *rd_var(const unsigned char *p, const unsigned char *e, uint64_t *v)
{
    int i;
    *v = 0;
    for (i = 0; i < 10; i++) {
        REQUIRE(p < e);
        *v |= (uint64_t)(*p & 0x7F) << (7 * i);
        if (!(*p++ & 0x80)) return p;
    }
    REQUIRE(0);
    return p;
}

static int utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t k = ikp__utf8_len(s + i, n - i);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

/* one message: calls back on each field (for the packet's semantics) */
typedef void (*on_field)(void *ctx, unsigned f, uint64_t v, const unsigned char *d, size_t n);
static void walk(const unsigned char *p, size_t n, const fld *spec, on_field cb, void *ctx)
{
    const unsigned char *e = p + n;
    while (p < e) {
        uint64_t tag, v = 0;
        const fld *s;
        const unsigned char *d = NULL;
        p = rd_var(p, e, &tag);
        for (s = spec; s->f && s->f != (unsigned)(tag >> 3); s++) {}
        REQUIRE(s->f != 0);          /* a field the writer uses */
        REQUIRE((tag & 7) == s->wt); /* with its wire type */
        if (s->wt == 0) p = rd_var(p, e, &v);
        else if (s->wt == 1) { int i; REQUIRE(e - p >= 8); for (i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i); p += 8; }
        else {
            p = rd_var(p, e, &v);
            REQUIRE(v <= (uint64_t)(e - p));
            d = p;
            p += v;
            if (s->sub) walk(d, (size_t)v, s->sub, NULL, NULL);
            else REQUIRE(utf8_ok(d, (size_t)v));
        }
        if (cb) cb(ctx, s->f, v, d, d ? (size_t)v : 0);
    }
}

/* A set of 64-bit values, of any size: open addressing in a table at most
   half full (cap 0 or a power of 2), a 0 slot empty, the value 0 kept aside. */
typedef struct u64set { uint64_t *v; size_t n, cap; int zero; } u64set;
static size_t set_at(const u64set *s, uint64_t x) { return (size_t)((x * 0x9E3779B97F4A7C15ull) >> 32) & (s->cap - 1); }
static int set_has(const u64set *s, uint64_t x)
{
    size_t i;
    if (!x) return s->zero;
    if (!s->cap) return 0;
    for (i = set_at(s, x); s->v[i]; i = (i + 1) & (s->cap - 1))
        if (s->v[i] == x) return 1;
    return 0;
}
static void set_put(u64set *s, uint64_t x) /* x nonzero, not in s, room for it */
{
    size_t i;
    for (i = set_at(s, x); s->v[i]; i = (i + 1) & (s->cap - 1)) {}
    s->v[i] = x;
    s->n++;
}
static void set_add(u64set *s, uint64_t x)
{
    if (!x) { s->zero = 1; return; }
    if (set_has(s, x)) return;
    if (2 * (s->n + 1) > s->cap) {
        u64set g;
        size_t i;
        memset(&g, 0, sizeof g);
        g.cap = s->cap ? 2 * s->cap : 64;
        g.v = (uint64_t *)calloc(g.cap, sizeof(uint64_t));
        g.zero = s->zero;
        REQUIRE(g.v != NULL);
        for (i = 0; i < s->cap; i++)
            if (s->v[i]) set_put(&g, s->v[i]);
        free(s->v);
        *s = g;
    }
    set_put(s, x);
}
static void set_free(u64set *s) { free(s->v); memset(s, 0, sizeof *s); }

/* the state a packet sequence carries; every table grows as needed */
typedef struct pstate {
    int cleared, clock;
    u64set names, anns;       /* interned event and annotation name iids */
    u64set uuids;             /* described tracks */
    u64set used;              /* tracks events name */
    uint64_t *open, nopen, open_cap; /* open slices: their track, oldest first */
} pstate;
typedef struct pkt { int has_seq, has_ts, flags, event, interned, snapshot, defaults, desc; const unsigned char *te, *in, *dd; size_t nte, nin, ndd; } pkt;
static void on_packet(void *ctx, unsigned f, uint64_t v, const unsigned char *d, size_t n)
{
    pkt *k = (pkt *)ctx;
    if (f == 10) k->has_seq = 1;
    if (f == 8) k->has_ts = 1;
    if (f == 13) k->flags = (int)v;
    if (f == 11) { k->event = 1; k->te = d; k->nte = n; }
    if (f == 12) { k->interned = 1; k->in = d; k->nin = n; }
    if (f == 6) k->snapshot = 1;
    if (f == 59) { k->defaults = 1; k->dd = d; k->ndd = n; }
    if (f == 60) { k->desc = 1; k->dd = d; k->ndd = n; }
}
typedef struct kv { uint64_t v[64]; int have[64]; } kv; /* field -> last varint */
static void on_kv(void *ctx, unsigned f, uint64_t v, const unsigned char *d, size_t n)
{
    kv *x = (kv *)ctx;
    (void)d; (void)n;
    if (f < 64) { x->v[f] = v; x->have[f] = 1; }
}
/* TracePacketDefaults: its varints, and for field 11 the track_uuid inside */
static void on_defaults(void *ctx, unsigned f, uint64_t v, const unsigned char *d, size_t n)
{
    kv *x = (kv *)ctx, y;
    if (f != 11) { on_kv(ctx, f, v, d, n); return; }
    memset(&y, 0, sizeof y);
    walk(d, n, f_te_def, on_kv, &y);
    x->have[11] = y.have[11];
    x->v[11] = y.v[11];
}
static pstate *g_ps;
static void on_interned(void *ctx, unsigned f, uint64_t v, const unsigned char *d, size_t n)
{
    kv x;
    (void)ctx; (void)v;
    memset(&x, 0, sizeof x);
    walk(d, n, f_iname, on_kv, &x);
    REQUIRE(x.have[1] && x.have[2]);
    if (f == 2) set_add(&g_ps->names, x.v[1]);
    if (f == 3) set_add(&g_ps->anns, x.v[1]);
}
static void on_ann(void *ctx, unsigned f, uint64_t v, const unsigned char *d, size_t n)
{
    kv x;
    (void)ctx; (void)v;
    if (f != 4) return;
    memset(&x, 0, sizeof x);
    walk(d, n, f_ann, on_kv, &x);
    REQUIRE(x.have[1] && set_has(&g_ps->anns, x.v[1])); /* annotation name interned */
}
static void check_perfetto(const unsigned char *p, size_t n)
{
    pstate ps;
    const unsigned char *e;
    uint64_t def_track = 0, i;
    if (n == 0) return; /* nothing to show: an empty trace */
    e = p + n;
    memset(&ps, 0, sizeof ps);
    g_ps = &ps;
    walk(p, n, f_trace, NULL, NULL); /* the whole file, field by field */
    while (p < e) {
        uint64_t tag, len;
        pkt k;
        p = rd_var(p, e, &tag);
        p = rd_var(p, e, &len);
        memset(&k, 0, sizeof k);
        walk(p, (size_t)len, f_packet, on_packet, &k);
        p += len;
        if (k.desc) {
            kv x;
            memset(&x, 0, sizeof x);
            walk(k.dd, k.ndd, f_desc, on_kv, &x);
            REQUIRE(x.have[1] && !set_has(&ps.uuids, x.v[1]));
            set_add(&ps.uuids, x.v[1]);
            continue;
        }
        REQUIRE(k.has_seq);
        if (k.flags & 1) {
            REQUIRE(ps.nopen == 0); /* a lane's slices all closed before the next */
            ps.cleared = 1; set_free(&ps.names); set_free(&ps.anns); ps.clock = 0; def_track = 0;
        }
        REQUIRE(ps.cleared);
        if (k.defaults) {
            kv x;
            memset(&x, 0, sizeof x);
            walk(k.dd, k.ndd, f_defaults, on_defaults, &x);
            REQUIRE(x.have[58] && x.v[58] == 64);
            def_track = x.have[11] ? x.v[11] : 0; /* track_event_defaults.track_uuid */
        }
        if (k.snapshot) ps.clock = 1;
        if (k.interned) walk(k.in, k.nin, f_interned, on_interned, NULL);
        if (k.event) {
            kv x;
            uint64_t track;
            REQUIRE(k.has_ts && ps.clock);
            memset(&x, 0, sizeof x);
            walk(k.te, k.nte, f_event, on_kv, &x);
            walk(k.te, k.nte, f_event, on_ann, NULL);
            REQUIRE(x.have[9] && x.v[9] >= 1 && x.v[9] <= 4);
            track = x.have[11] ? x.v[11] : def_track;
            REQUIRE(track != 0);
            set_add(&ps.used, track);
            if (x.v[9] == 1 || x.v[9] == 3) REQUIRE(x.have[10] && set_has(&ps.names, x.v[10]));
            if (x.v[9] == 1) {
                if (ps.nopen == ps.open_cap) {
                    ps.open_cap = ps.open_cap ? 2 * ps.open_cap : 256;
                    ps.open = (uint64_t *)realloc(ps.open, (size_t)ps.open_cap * sizeof(uint64_t));
                    REQUIRE(ps.open != NULL);
                }
                ps.open[ps.nopen++] = track;
            }
            if (x.v[9] == 2) {
                for (i = ps.nopen; i > 0 && ps.open[i - 1] != track; i--) {}
                REQUIRE(i > 0); /* an end closes an open slice of its track */
                memmove(ps.open + i - 1, ps.open + i, (size_t)(ps.nopen - i) * sizeof(uint64_t));
                ps.nopen--;
            }
            if (x.v[9] == 4) REQUIRE(x.have[30]);
        }
    }
    REQUIRE(ps.nopen == 0);
    for (i = 0; i < ps.used.cap; i++) REQUIRE(!ps.used.v[i] || set_has(&ps.uuids, ps.used.v[i]));
    set_free(&ps.names); set_free(&ps.anns); set_free(&ps.uuids); set_free(&ps.used);
    free(ps.open);
}

/* Thrift's compact protocol, skipped: one value of type t at *p (< e);
   0 if it does not parse */
static int tc_skip(const unsigned char **p, const unsigned char *e, int t, int depth);
static int tc_var(const unsigned char **p, const unsigned char *e, uint64_t *v)
{
    int s = 0;
    *v = 0;
    while (*p < e && s < 64) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7F) << s;
        if (!(b & 0x80)) return 1;
        s += 7;
    }
    return 0;
}
static int tc_skip(const unsigned char **p, const unsigned char *e, int t, int depth)
{
    uint64_t v, n, i;
    if (depth > 16) return 0;
    switch (t) {
    case 1: case 2: return 1;                 /* a bool in its field header */
    case 3: if (*p >= e) return 0; (*p)++; return 1;
    case 4: case 5: case 6: return tc_var(p, e, &v);
    case 7: if (e - *p < 8) return 0; *p += 8; return 1;
    case 8: if (!tc_var(p, e, &n) || n > (uint64_t)(e - *p)) return 0; *p += n; return 1;
    case 9: case 10:
        if (*p >= e) return 0;
        v = *(*p)++;
        n = v >> 4;
        if (n == 15 && !tc_var(p, e, &n)) return 0;
        for (i = 0; i < n; i++)
            if (!tc_skip(p, e, (int)(v & 15) == 1 ? 3 : (int)(v & 15), depth + 1)) return 0;
        return 1;
    case 12:
        for (;;) {
            if (*p >= e) return 0;
            v = *(*p)++;
            if (!v) return 1;
            if (!(v >> 4) && !tc_var(p, e, &n)) return 0;
            if (!tc_skip(p, e, (int)(v & 15), depth + 1)) return 0;
        }
    default: return 0;
    }
}

/* a Parquet table: "PAR1", its footer (a Thrift struct of exactly the
   length before the closing "PAR1") */
static void check_parquet(const unsigned char *b, size_t n)
{
    const unsigned char *p, *e;
    uint32_t len;
    REQUIRE(n >= 12 && memcmp(b, "PAR1", 4) == 0 && memcmp(b + n - 4, "PAR1", 4) == 0);
    len = (uint32_t)b[n - 8] | (uint32_t)b[n - 7] << 8 | (uint32_t)b[n - 6] << 16 | (uint32_t)b[n - 5] << 24;
    REQUIRE(len + 12 <= n);
    p = b + n - 8 - len;
    e = b + n - 8;
    REQUIRE(tc_skip(&p, e, 12, 0) && p == e);
}

static void use(ikp_capture *cap, ikp_group_by by)
{
    size_t total = 0;
    ikp_stats *st = NULL;
    ikp_trace_options o;
    ikp_flow_pair fl[2] = {{0, 1}, {2, 0}};
    uint32_t counters[2] = {0, 1};
    mem m = {0, 0, 0};
    memset(&o, 0, sizeof o);
    o.by = by;
    ikp_write_chrome(cap, &o, sink, &total, NULL);
    if (ikp_write_perfetto(cap, &o, mem_sink, &m, NULL) == IKP_OK) check_perfetto(m.p, m.n);
    m.n = 0;
    o.flows = fl; o.num_flows = 2; o.counters = counters; o.num_counters = 2;
    ikp_write_chrome(cap, &o, sink, &total, NULL);
    if (ikp_write_perfetto(cap, &o, mem_sink, &m, NULL) == IKP_OK) check_perfetto(m.p, m.n);
    m.n = 0;
    if (by == IKP_BY_BLOCK) { /* the Parquet export, in row groups of 5 rows, then of 64 bytes */
        ikp_export_options eo;
        const ikp_capture *one = cap;
        memset(&eo, 0, sizeof eo);
        eo.row_group_rows = 5;
        if (ikp_export_parquet(&one, 1, &eo, mem_sink, &m, NULL) == IKP_OK) check_parquet(m.p, m.n);
        m.n = 0;
        eo.plain = 1; /* numbers PLAIN; a row group ends at 64 bytes of pages */
        eo.row_group_rows = 0;
        eo.row_group_bytes = 64;
        if (ikp_export_parquet(&one, 1, &eo, mem_sink, &m, NULL) == IKP_OK) check_parquet(m.p, m.n);
    }
    free(m.p);
    if (ikp_stats_compute(cap, &st, NULL) == IKP_OK) {
        ikp_stats_write_text(st, sink, &total, NULL);
        ikp_stats_write_json(st, sink, &total, NULL);
        ikp_info_write_text(st, sink, &total, NULL);
        ikp_stats_free(st);
    }
    if (by == IKP_BY_BLOCK) { /* the report and a capture against itself */
        ikp_report *rep = NULL;
        ikp_report_options ro;
        ikp_report_md_options md;
        ikp_diff *d = NULL;
        uint32_t i;
        memset(&ro, 0, sizeof ro);
        memset(&md, 0, sizeof md);
        ro.wait_events = counters; ro.num_wait_events = 1; ro.timeline_sms = 3; ro.heat_bins = 7;
        if (ikp_diff_compute(cap, cap, NULL, &d, NULL) == IKP_OK) {
            for (i = 0; i < d->num_events; i++) REQUIRE(d->events[i].test.verdict == IKP_VERDICT_SAME);
            /* against itself: same, or incomplete when it holds no records */
            REQUIRE((d->verdict == IKP_VERDICT_SAME ||
                     (d->verdict == IKP_VERDICT_INCOMPLETE && ikp_diff_incomplete(d, 0, NULL, 0))) &&
                    !ikp_diff_slower_than(d, 0));
            ikp_diff_write_text(d, sink, &total, NULL);
            ikp_diff_write_json(d, sink, &total, NULL);
        }
        if (ikp_report_compute(cap, &ro, &rep, NULL) == IKP_OK) {
            md.baseline = d;
            md.svg_path = "x.svg";
            ikp_report_write_markdown(rep, &md, sink, &total, NULL);
            m.p = NULL; m.n = m.cap = 0;
            REQUIRE(ikp_report_write_svg(rep, mem_sink, &m, NULL) == IKP_OK);
            REQUIRE(m.n > 7 && memcmp(m.p + m.n - 7, "</svg>\n", 7) == 0);
            for (i = 0; i < rep->num_groups; i++)
                REQUIRE(rep->groups[i].busy_fraction >= 0 && rep->groups[i].busy_fraction <= 1);
            free(m.p);
            ikp_report_free(rep);
        }
        ikp_diff_free(d);
    }
}

static void words_opt(const uint8_t *data, size_t size, ikp_format f, uint32_t units, uint32_t tick_ps)
{
    size_t n = size / 8;
    uint64_t *w = (uint64_t *)malloc(n ? n * 8 : 8);
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    const char *names[3] = {"a \"b\"", "\x01", "\xff"};
    if (!w) return;
    memcpy(w, data, n * 8);
    memset(&o, 0, sizeof o);
    o.format = f;
    o.num_units = units;
    o.timer_unit_ps = tick_ps;
    o.event_names = names;
    o.num_event_names = 3;
    if (ikp_capture_open(w, n, &o, &cap, NULL) == IKP_OK) {
        use(cap, IKP_BY_BLOCK);
        ikp_capture_free(cap);
    }
    free(w);
}

static void words(const uint8_t *data, size_t size, ikp_format f) { words_opt(data, size, f, 0, 0); }

/* target 5: the name-list parser, then a capture named by the list */
static void fuzz_names(const uint8_t *data, size_t size)
{
    ikp_name_list l;
    if (ikp_name_list_parse((const char *)data, size, ',', NULL, &l, NULL) == IKP_OK) ikp_name_list_free(&l);
    if (ikp_name_list_parse((const char *)data, size, '\n', NULL, &l, NULL) == IKP_OK) {
        ikp_capture *cap = NULL;
        ikp_decode_options o;
        uint64_t w[8 + 9 + 2];
        memset(&o, 0, sizeof o);
        memset(w, 0, sizeof w);
        ikp_buffer_header(w, 1, 2, 0, NULL);
        w[8] = IKP_WIRE_LANE_MAGIC;
        w[8 + 1] = 1ull << 48;
        w[16] = (5ull << 32) | IKP_WIRE_KIND_BEGIN | (1u << 2);
        w[17] = (9ull << 32) | IKP_WIRE_KIND_END | (1u << 2);
        o.event_names = (const char *const *)l.names;
        o.num_event_names = l.count;
        o.group_names = (const char *const *)l.names;
        o.num_group_names = l.count;
        if (ikp_capture_open(w, 19, &o, &cap, NULL) == IKP_OK) {
            use(cap, IKP_BY_BLOCK);
            ikp_capture_free(cap);
        }
        ikp_name_list_free(&l);
    }
}

/* target 7 */
static void fuzz_apinames(const uint8_t *data, size_t size)
{
    /* names split at NUL bytes; every name an event name and a group name
       of a small IKP buffer (2 groups, events 0..3 on both lanes) */
    const char **names = (const char **)malloc((size + 1) * sizeof(char *));
    char *copy = (char *)malloc(size + 1);
    uint32_t n = 0;
    size_t i, start = 0;
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    uint64_t w[8 + 2 * (9 + 8)];
    if (names && copy) {
        int lane, k;
        memcpy(copy, data, size);
        copy[size] = 0;
        for (i = 0; i <= size; i++)
            if (i == size || copy[i] == 0) { names[n++] = copy + start; start = i + 1; }
        memset(w, 0, sizeof w);
        ikp_buffer_header(w, 2, 8, 0, NULL);
        for (lane = 0; lane < 2; lane++) {
            uint64_t *h = w + 8 + lane * 17;
            h[0] = IKP_WIRE_LANE_MAGIC;
            h[1] = (uint64_t)lane << 32 | 2ull << 48;
            h[3] = 100;
            for (k = 0; k < 8; k++)
                h[8 + k] = (uint64_t)(200 + 10 * k) << 32 | (uint32_t)(k / 2 + lane) << 2 |
                           (k % 2 ? IKP_WIRE_KIND_END : IKP_WIRE_KIND_BEGIN);
        }
        memset(&o, 0, sizeof o);
        o.event_names = names;
        o.num_event_names = n;
        o.group_names = names;
        o.num_group_names = n;
        if (ikp_capture_open(w, sizeof w / 8, &o, &cap, NULL) == IKP_OK) {
            use(cap, IKP_BY_BLOCK);
            ikp_capture_free(cap);
        }
    }
    free(names);
    free(copy);
}

static const char *const target_names[] = {"", "ikp", "tirx", "flashinfer", "capture", "names", "e2e", "apinames",
                                           "tritondist", "nuggets", "nuggetscompact"};
static int target;

/* the target from the program's name (fuzz_<name>) or FUZZ_TARGET */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *env = getenv("FUZZ_TARGET"), *name = env;
    int k;
    if (!name && *argc > 0) {
        const char *slash = strrchr((*argv)[0], '/');
        name = slash ? slash + 1 : (*argv)[0];
        if (!strncmp(name, "fuzz_", 5)) name += 5;
    }
    for (k = 1; k < (int)(sizeof target_names / sizeof *target_names); k++)
        if (name && !strcmp(name, target_names[k])) target = k;
    if (!target) {
        fprintf(stderr, "fuzz: no target named '%s' (run it as build/fuzz_<target> or with FUZZ_TARGET=<target>)\n",
                name ? name : "");
        exit(2);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (target == 1) words(data, size, IKP_FORMAT_IKP);
    else if (target == 8) {
        if (size >= 8) words_opt(data + 8, size - 8, IKP_FORMAT_TRITON_DIST, 0, (data[0] & 1) ? 10000 : 0);
    } else if (target == 9 || target == 10) {
        if (size >= 8)
            words_opt(data + 8, size - 8, target == 9 ? IKP_FORMAT_NUGGETS : IKP_FORMAT_NUGGETS_COMPACT, data[0] % 16, 0);
    } else if (target == 2) words(data, size, IKP_FORMAT_TIRX);
    else if (target == 3) words(data, size, IKP_FORMAT_FLASHINFER);
    else if (target == 4) {
        ikp_capture *cap = NULL;
        ikp_decode_options o;
        memset(&o, 0, sizeof o);
        o.gpu_name = "h200"; /* a Proton trace's cycles read at a clock (other files ignore it) */
        if (ikp_capture_open_data(data, size, &o, &cap, NULL) == IKP_OK) {
            use(cap, IKP_BY_BLOCK);
            ikp_capture_free(cap);
        }
    } else if (target == 5) fuzz_names(data, size);
    else if (target == 7) fuzz_apinames(data, size);
    else {
        ikp_capture *cap = NULL;
        if (ikp_capture_open_data(data, size, NULL, &cap, NULL) == IKP_OK) {
            use(cap, IKP_BY_BLOCK);
            use(cap, IKP_BY_SM);
            ikp_capture_free(cap);
        }
    }
    return 0;
}
