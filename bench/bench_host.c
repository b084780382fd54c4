/* make bench: host decoder throughput on synthetic captures of >= 20 M
   records.
   1. In process: an IKP buffer (4096 lanes, SM-cycle stamps, nested and
      sequential regions): decode + Chrome JSON to /dev/null, and decode +
      statistics; records/s, output MB/s and peak memory against the raw
      buffer size.
      The same for the Perfetto protobuf writer, run alternately with the
      JSON writer (which of the two goes first alternates too): wall and
      process CPU seconds and bytes of each, the ratio of the two writers'
      times within each repetition, and their gzip sizes (gzip -6 of the
      files written to build/).
   2. The whole tool as a process, file read included: `ikp trace FILE -o
      /dev/null` (JSON and Perfetto) on a 20 M-record TIRx buffer (4096
      lanes, one event open at a time), on a 20 M-record TIRx buffer of 4224
      lanes (132 blocks x 32 groups) whose three events nest, tile { load {
      mma } } repeated, and on the IKP buffer as a bare file; wall time,
      records/s and the process's peak memory against the file's size. The
      tool's path is the first argument. Then the bytes
      ikp_export_parquet_files holds exporting the IKP buffer's file.
   3. Merges of many small captures (ikp_write_merged).
   4. `ikp export` of 1,000 capture files (20 M records) in one call, beside
      the previous release's `ikp export` (the third argument, when there)
      and `ikp merge` of them to JSON; peak memory, of the process and as
      the library counts it; a DuckDB query over the table.
   Arguments: TOOL [BASELINE_TOOL for 2 ("": none) [PREVIOUS_TOOL for 4]]. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double peak_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

#define REPS 7
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct counter { FILE *f; uint64_t bytes; } counter;
static int count_write(void *u, const void *d, size_t n)
{
    counter *c = (counter *)u;
    c->bytes += n;
    return fwrite(d, 1, n, c->f) == n ? 0 : 1;
}

/* runs args (NULL-terminated; stderr discarded) in a child of this
   process: 1 when it exits 0, with its wall seconds and peak RSS (MB) */
static int spawn(char **args, double *secs, double *rss_mb)
{
    struct rusage ru;
    int status;
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(126);
        execv(args[0], args);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
    *secs = now() - t0;
    *rss_mb = ru.ru_maxrss / 1024.0;
    return 1;
}

/* The commands run from a small process forked first thing (runner_start):
   a child's peak RSS counts the pages of the process it was forked from,
   until its exec, and this one is large by then (every command it forked
   itself peaked at 7.5 MB, --version too). Requests: the arguments' bytes
   (NUL after each) behind their length; replies: ok, seconds, RSS MB. */
static int runner_in = -1, runner_out = -1;
static int io_all(int fd, void *p, size_t n, int writing)
{
    char *c = (char *)p;
    while (n) {
        ssize_t k = writing ? write(fd, c, n) : read(fd, c, n);
        if (k <= 0) return 0;
        c += k;
        n -= (size_t)k;
    }
    return 1;
}
static void runner_loop(int in, int out)
{
    uint32_t len;
    while (io_all(in, &len, sizeof len, 0)) {
        char *buf = (char *)malloc((size_t)len + 1), **args = (char **)calloc((size_t)len + 2, sizeof *args);
        double r[3] = {0, 0, 0};
        uint32_t i, n = 0;
        if (!buf || !args || !io_all(in, buf, len, 0)) _exit(1);
        for (i = 0; i < len; i += (uint32_t)strlen(buf + i) + 1) args[n++] = buf + i;
        args[n] = NULL;
        r[0] = spawn(args, &r[1], &r[2]);
        free(buf);
        free(args);
        if (!io_all(out, r, sizeof r, 1)) _exit(1);
    }
    _exit(0);
}
static void runner_start(void)
{
    int req[2], rep[2];
    pid_t pid;
    if (pipe(req) != 0) return;
    if (pipe(rep) != 0) { close(req[0]); close(req[1]); return; }
    if ((pid = fork()) == 0) {
        close(req[1]);
        close(rep[0]);
        runner_loop(req[0], rep[1]);
    }
    close(req[0]);
    close(rep[1]);
    if (pid < 0) { close(req[1]); close(rep[0]); return; }
    runner_in = req[1];
    runner_out = rep[0];
}

/* runs tool with args (NULL-terminated; output to stderr discarded),
   through the runner when it started: wall seconds and peak RSS (MB); 0 on
   failure */
static int run_argv(char **args, double *secs, double *rss_mb)
{
    int ok;
    if (runner_in < 0) ok = spawn(args, secs, rss_mb);
    else {
        uint32_t len = 0;
        double r[3];
        char *buf;
        int i;
        for (i = 0; args[i]; i++) len += (uint32_t)strlen(args[i]) + 1;
        if (!(buf = (char *)malloc(len ? len : 1))) return 0;
        for (i = 0, len = 0; args[i]; i++) {
            memcpy(buf + len, args[i], strlen(args[i]) + 1);
            len += (uint32_t)strlen(args[i]) + 1;
        }
        ok = io_all(runner_in, &len, sizeof len, 1) && io_all(runner_in, buf, len, 1) &&
             io_all(runner_out, r, sizeof r, 0) && r[0] != 0;
        free(buf);
        if (ok) { *secs = r[1]; *rss_mb = r[2]; }
    }
    if (!ok) fprintf(stderr, "bench: %s %s %s failed\n", args[0], args[1], args[2] ? args[2] : "");
    return ok;
}

/* runs args reps (<= REPS) times: the median seconds and the peak RSS (MB)
   over them; 0 on failure */
static int run_reps(char **args, int reps, double *secs, double *rss_mb)
{
    double t[REPS], rss;
    int rep;
    *rss_mb = 0;
    for (rep = 0; rep < reps && rep < REPS; rep++) {
        if (!run_argv(args, &t[rep], &rss)) return 0;
        if (rss > *rss_mb) *rss_mb = rss;
    }
    qsort(t, (size_t)rep, sizeof(double), cmp_d);
    *secs = t[rep / 2];
    return 1;
}

/* runs `tool trace path -o /dev/null [--output-format perfetto]` REPS times: median
   seconds, peak RSS (MB) */
static int run_tool(const char *tool, const char *path, const char *fmt, double *secs, double *rss_mb)
{
    /* JSON is the default for /dev/null; older tools know no --output-format */
    char *args[] = {(char *)tool, (char *)"trace", (char *)path, (char *)"-o", (char *)"/dev/null",
                    strcmp(fmt, "json") ? (char *)"--output-format" : NULL, (char *)fmt, NULL};
    return run_reps(args, REPS, secs, rss_mb);
}

/* gzip -6 size of a file, 0 if gzip is not there */
static double gzip_mb(const char *path)
{
    char cmd[512];
    double bytes = 0;
    FILE *p;
    snprintf(cmd, sizeof cmd, "gzip -6 -c '%s' | wc -c", path);
    p = popen(cmd, "r");
    if (!p) return 0;
    if (fscanf(p, "%lf", &bytes) != 1) bytes = 0;
    pclose(p);
    return bytes / 1048576.0;
}

static int save(const char *path, const uint64_t *w, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(w, 8, n, f) == n;
    if (f && fclose(f) != 0) ok = 0;
    return ok;
}

/* TIRx: 2048 blocks x 2 groups, stride = lanes, 4884 records a lane (the
   last a finalize), globaltimer ns stamps crossing 2^32 */
static uint64_t *tirx_buffer(size_t *nw, uint64_t *records)
{
    const uint32_t nb = 2048, ng = 2, lanes = nb * ng, per = 4884;
    uint64_t *w;
    uint32_t l, k;
    *nw = 1 + (size_t)lanes * per;
    w = (uint64_t *)calloc(*nw, 8);
    if (!w) return NULL;
    w[0] = ((uint64_t)ng << 32) | nb;
    for (l = 0; l < lanes; l++) {
        uint64_t t = 0xFFF00000ull + (uint64_t)l * 37;
        uint32_t seed = l * 2654435761u;
        for (k = 0; k < per; k++) {
            uint32_t ev, type;
            seed = seed * 1103515245u + 12345u;
            if (k == per - 1) { ev = 0; type = 3; }
            else { ev = (k / 2) % 3; type = k % 2; } /* begin/end pairs of 3 events */
            w[1 + l + (uint64_t)k * lanes] = ((t & 0xFFFFFFFFu) << 32) | ((uint64_t)l << 12) | (ev << 2) | type;
            t += 200 + (seed >> 24);
        }
    }
    *records = (uint64_t)lanes * per;
    return w;
}

/* TIRx: 132 blocks x 32 groups, stride = lanes, 789 x tile { load { mma } }
   a lane then a finalize (4735 records, 20,000,640 in all), globaltimer ns
   stamps crossing 2^32 */
static uint64_t *tirx_nested_buffer(size_t *nw, uint64_t *records)
{
    const uint32_t nb = 132, ng = 32, lanes = nb * ng, per = 6 * 789 + 1;
    static const uint32_t ev[6] = {0, 1, 2, 2, 1, 0}, type[6] = {0, 0, 0, 1, 1, 1};
    uint64_t *w;
    uint32_t l, k;
    *nw = 1 + (size_t)lanes * per;
    w = (uint64_t *)calloc(*nw, 8);
    if (!w) return NULL;
    w[0] = ((uint64_t)ng << 32) | nb;
    for (l = 0; l < lanes; l++) {
        uint64_t t = 0xFFF00000ull + (uint64_t)l * 37;
        uint32_t seed = l * 2654435761u;
        for (k = 0; k < per; k++) {
            uint32_t e = 0, ty = 3; /* the last: a finalize */
            if (k < per - 1) { e = ev[k % 6]; ty = type[k % 6]; }
            w[1 + l + (uint64_t)k * lanes] = ((t & 0xFFFFFFFFu) << 32) | ((uint64_t)l << 12) | (e << 2) | ty;
            seed = seed * 1103515245u + 12345u;
            t += k % 6 == 2 ? 300 + (seed >> 24) : 10 + (seed >> 28); /* mma long, the rest short */
        }
    }
    *records = (uint64_t)lanes * per;
    return w;
}

/* one lane's buffer (words at w, 8 + 9 + 8): a region and an instant,
   stamped in globaltimer ns from g0 */
static void merge_lane(uint64_t *w, uint64_t g0)
{
    uint64_t *h = w + 8, *r = h + 8;
    memset(w, 0, (8 + 9 + 8) * 8);
    ikp_buffer_header(w, 1, 8, 1980000, NULL);
    h[0] = IKP_WIRE_LANE_MAGIC;
    h[1] = 1ull << 48;
    h[2] = 1 | (1ull << 32) | (1ull << 48);
    h[3] = g0;
    r[0] = ((g0 + 100) & 0xFFFFFFFFu) << 32 | (1u << 2) | IKP_WIRE_KIND_BEGIN;
    r[1] = ((g0 + 900) & 0xFFFFFFFFu) << 32 | (1u << 2) | IKP_WIRE_KIND_END;
    r[2] = ((g0 + 950) & 0xFFFFFFFFu) << 32 | (2u << 2) | IKP_WIRE_KIND_INSTANT;
    h[5] = g0 + 1000;
    h[7] = IKP_WIRE_FINALIZED | 3;
}

/* a capture's GPU, of host node0 (host readings link captures of one host
   only): UUID from gpu, ordinal gpu % 8, rank as given; its two readings
   of the host's clock, apart ns apart, the host's clock skew ns off its
   usual distance; o (zeroed) points at them */
static void node0_gpu(ikp_decode_options *o, ikp_device_id *d, ikp_clock_sync cs[2], uint32_t gpu, int32_t rank,
                      uint64_t g0, uint64_t apart, int64_t skew)
{
    int j;
    memset(d, 0, sizeof *d);
    memcpy(d->uuid, &gpu, sizeof gpu);
    d->uuid[15] = 0x5a;
    snprintf(d->host, sizeof d->host, "node0");
    d->ordinal = (int32_t)(gpu % 8);
    d->rank = rank;
    for (j = 0; j < 2; j++) {
        cs[j].gpu_ns = g0 - 500000 + (uint64_t)j * apart;
        cs[j].host_ns = (int64_t)cs[j].gpu_ns - 123456789 + skew;
        cs[j].uncertainty_ns = 400;
        cs[j].reserved = 0;
    }
    memset(o, 0, sizeof *o);
    o->device = d;
    o->clock = cs;
    o->num_clock = 2;
}

/* section 3: n captures merged and written; seconds (median of 3), or < 0 */
static double merge_seconds(uint32_t n)
{
    uint64_t *w = (uint64_t *)malloc((size_t)n * 25 * 8);
    ikp_capture **caps = (ikp_capture **)calloc(n, sizeof *caps);
    double t[3], r = -1;
    uint32_t k;
    int rep;
    ikp_error e;
    counter c;
    c.f = fopen("/dev/null", "wb");
    if (!w || !caps || !c.f) goto end;
    for (k = 0; k < n; k++) {
        ikp_decode_options o;
        ikp_device_id d;
        ikp_clock_sync cs[2];
        uint64_t g0 = 1795776733000000000ull + (uint64_t)k * 7919; /* ns since 1970; each GPU its own clock */
        merge_lane(w + (size_t)k * 25, g0);
        node0_gpu(&o, &d, cs, k, (int32_t)k, g0, 1000000, (int64_t)(k % 8) * 1000);
        if (ikp_capture_open(w + (size_t)k * 25, 25, &o, &caps[k], &e) != IKP_OK) {
            fprintf(stderr, "bench: %s\n", e.message);
            goto end;
        }
    }
    for (rep = 0; rep < 3; rep++) {
        double t0 = now();
        if (ikp_write_merged((const ikp_capture *const *)caps, n, NULL, IKP_TRACE_JSON, count_write, &c, &e) != IKP_OK) {
            fprintf(stderr, "bench: merge: %s\n", e.message);
            goto end;
        }
        t[rep] = now() - t0;
    }
    qsort(t, 3, sizeof(double), cmp_d);
    r = t[1];
end:
    for (k = 0; caps && k < n; k++) ikp_capture_free(caps[k]);
    free(caps);
    free(w);
    if (c.f) fclose(c.f);
    return r;
}

/* One lane of cycle records at its header h, lane l of lanes (blocks of
   two lanes), on SM sm: cap records, tile { load } { mma } of 6 records
   with lengths drawn from seed, the rest instants; its anchors at
   globaltimer g0 and cycle c0 (cycles taken as 1.98 a ns) */
static void tile_lane(uint64_t *h, uint32_t cap, uint32_t l, uint32_t lanes, uint32_t sm, uint64_t g0, uint64_t c0,
                      uint32_t seed)
{
    uint64_t *r = h + 8, t = c0 + 100;
    uint32_t k;
    h[0] = IKP_WIRE_LANE_MAGIC | ((uint64_t)IKP_WIRE_LANE_CYCLES << 16) | ((uint64_t)sm << 32);
    h[1] = (l / 2) | ((uint64_t)(l % 2) << 32) | (2ull << 48);
    h[2] = (lanes / 2) | (1ull << 32) | (1ull << 48);
    h[3] = g0;
    h[4] = c0;
    for (k = 0; k + 6 <= cap; k += 6) {
        seed = seed * 1103515245u + 12345u;
        r[k + 0] = ((t & 0xFFFFFFFFu) << 32) | (0u << 2) | IKP_WIRE_KIND_BEGIN; t += 10;
        r[k + 1] = ((t & 0xFFFFFFFFu) << 32) | (1u << 2) | IKP_WIRE_KIND_BEGIN; t += 500 + (seed >> 24);
        r[k + 2] = ((t & 0xFFFFFFFFu) << 32) | (1u << 2) | IKP_WIRE_KIND_END; t += 8;
        r[k + 3] = ((t & 0xFFFFFFFFu) << 32) | (2u << 2) | IKP_WIRE_KIND_BEGIN; t += 700 + (seed >> 25);
        r[k + 4] = ((t & 0xFFFFFFFFu) << 32) | (2u << 2) | IKP_WIRE_KIND_END; t += 6;
        r[k + 5] = ((t & 0xFFFFFFFFu) << 32) | (0u << 2) | IKP_WIRE_KIND_END; t += 20;
    }
    for (; k < cap; k++) { r[k] = ((t & 0xFFFFFFFFu) << 32) | (3u << 2) | IKP_WIRE_KIND_INSTANT; t += 5; }
    h[5] = g0 + (uint64_t)((t - c0) / 1.98) + 10;
    h[6] = t + 20;
    h[7] = IKP_WIRE_FINALIZED | cap;
}

/* section 4: n capture files (.ikp) of 8 lanes x 2,500 records each (SM
   cycles; tile { load } { mma } as in section 1), a GPU each of 8 on one
   host, launch k / 8 of it, with two host readings: paths into paths[k]
   (under build/bench-export/); 0 on failure */
static int export_inputs(uint32_t n, char **paths, uint64_t *records, double *largest_mb)
{
    const uint32_t lanes = 8, cap = 2500;
    size_t nw = ikp_buffer_words(lanes, cap);
    uint64_t *w = (uint64_t *)malloc(nw * 8);
    const char *names[4] = {"tile", "load", "mma", "epilogue"};
    uint32_t k, l;
    *records = 0;
    *largest_mb = 0;
    if (!w) return 0;
    for (k = 0; k < n; k++) {
        ikp_decode_options o;
        ikp_device_id d;
        ikp_clock_sync cs[2];
        ikp_capture *c = NULL;
        ikp_error e;
        struct stat sb;
        uint64_t g0 = 1795776733000000000ull + (uint64_t)(k / 8) * 10000000ull + (uint64_t)(k % 8) * 7919;
        memset(w, 0, nw * 8);
        ikp_buffer_header(w, lanes, cap, 1980000, NULL);
        for (l = 0; l < lanes; l++)
            tile_lane(w + 8 + (uint64_t)l * (9 + cap), cap, l, lanes, l * 16, g0, 1000000ull * l + 0xFFF00000ull,
                      (k * lanes + l) * 2654435761u);
        node0_gpu(&o, &d, cs, k % 8, (int32_t)(k % 8), g0, 4000000, -(int64_t)(k % 8) * 7919);
        o.event_names = names;
        o.num_event_names = 4;
        if (!(paths[k] = (char *)malloc(64))) break;
        snprintf(paths[k], 64, "build/bench-export/c%04u.ikp", k);
        if (ikp_capture_open(w, nw, &o, &c, &e) != IKP_OK || ikp_capture_write_path(c, paths[k], &e) != IKP_OK) {
            fprintf(stderr, "bench: %s: %s\n", paths[k], e.message);
            ikp_capture_free(c);
            break;
        }
        *records += ikp_capture_get_info(c)->records;
        ikp_capture_free(c);
        if (stat(paths[k], &sb) == 0 && sb.st_size / 1048576.0 > *largest_mb) *largest_mb = sb.st_size / 1048576.0;
    }
    free(w);
    return k == n;
}

/* an allocator that counts the bytes held, and their peak */
typedef struct counted { size_t held, peak; } counted;
static void *counted_alloc(size_t n, void *u)
{
    counted *c = (counted *)u;
    size_t *p = (size_t *)malloc(n + 16);
    if (!p) return NULL;
    p[0] = n;
    c->held += n;
    if (c->held > c->peak) c->peak = c->held;
    return (char *)p + 16;
}
static void counted_free(void *q, void *u)
{
    counted *c = (counted *)u;
    size_t *p = (size_t *)((char *)q - 16);
    if (!q) return;
    c->held -= p[0];
    free(p);
}
static void *counted_realloc(void *q, size_t n, void *u)
{
    void *r = counted_alloc(n, u);
    if (r && q) {
        size_t old = ((size_t *)((char *)q - 16))[0];
        memcpy(r, q, old < n ? old : n);
        counted_free(q, u);
    }
    return r;
}
/* the peak bytes ikp_export_parquet_files holds exporting paths[0..n) to out */
static double export_heap(char **paths, uint32_t n, const char *out)
{
    ikp_decode_options o;
    counted c = {0, 0};
    ikp_error e;
    memset(&o, 0, sizeof o);
    o.allocator.alloc = counted_alloc;
    o.allocator.realloc = counted_realloc;
    o.allocator.free = counted_free;
    o.allocator.user = &c;
    if (ikp_export_parquet_files((const char *const *)paths, n, &o, NULL, &out, 1, &e) != IKP_OK) {
        fprintf(stderr, "bench: export: %s\n", e.message);
        return -1;
    }
    return (double)c.peak;
}

/* section 4: `ikp export` of n capture files in one call, beside `ikp merge`
   of the same files to JSON (every record written as trace events) and the
   previous release's `ikp export` (prev, when given), then a DuckDB query
   over the table (Python, build/pydeps); the bytes the export holds at its
   peak (ikp_export_parquet_files with a counting allocator), against the
   largest file */
static int export_section(const char *tool, const char *prev, uint32_t n)
{
    char **paths = (char **)calloc(n, sizeof *paths), **args = (char **)calloc((size_t)n + 8, sizeof *args);
    char *one[6];
    uint64_t records = 0;
    double largest = 0, te = 0, tp = 0, tm = 0, re = 0, rp = 0, rm = 0, r1 = 0, t1 = 0, r0 = 0, t0 = 0, rows = 0;
    double h1, hn, tsize = 0, psize = 0;
    uint32_t k;
    int ok;
    const char *out = "build/bench-export.parquet", *pout = "build/bench-export-prev.parquet";
    struct stat sb;
    FILE *q;
    if (!paths || !args || (mkdir("build/bench-export", 0777) != 0 && errno != EEXIST)) return 0;
    if (!export_inputs(n, paths, &records, &largest)) { fprintf(stderr, "bench: cannot write the capture files\n"); return 0; }
    args[0] = (char *)tool;
    args[1] = (char *)"export";
    for (k = 0; k < n; k++) args[2 + k] = paths[k];
    args[2 + n] = (char *)"-o";
    args[3 + n] = (char *)out;
    args[4 + n] = NULL;
    ok = run_reps(args, 3, &te, &re);
    if (ok && stat(out, &sb) == 0) tsize = sb.st_size / 1048576.0;
    if (ok && prev) {
        args[0] = (char *)prev;
        args[3 + n] = (char *)pout;
        ok = run_reps(args, 3, &tp, &rp);
        if (ok && stat(pout, &sb) == 0) psize = sb.st_size / 1048576.0;
        remove(pout);
        args[0] = (char *)tool;
    }
    args[1] = (char *)"merge";
    args[3 + n] = (char *)"/dev/null";
    ok = ok && run_reps(args, 3, &tm, &rm);
    one[0] = (char *)tool; /* one capture: the tool's own memory, beside the captures' */
    one[1] = (char *)"export";
    one[2] = paths[0];
    one[3] = (char *)"-o";
    one[4] = (char *)"/dev/null";
    one[5] = NULL;
    ok = ok && run_reps(one, 3, &t1, &r1);
    one[1] = (char *)"--version"; /* the tool doing nothing: its RSS floor */
    one[2] = NULL;
    ok = ok && run_reps(one, 3, &t0, &r0);
    if (!ok) return 0;
    h1 = export_heap(paths, 1, "/dev/null");
    hn = export_heap(paths, n, "/dev/null");
    if (h1 < 0 || hn < 0) return 0;
    q = popen("PYTHONPATH=build/pydeps python3 -c \"import duckdb, time\n"
              "t = time.time(); n = duckdb.sql(\\\"select count(*) from 'build/bench-export.parquet'\\\").fetchall()[0][0]; a = time.time() - t\n"
              "t = time.time(); r = duckdb.sql(\\\"select capture, quantile_cont(duration_ps, 0.99) from 'build/bench-export.parquet' where event = 'mma' group by capture\\\").fetchall(); b = time.time() - t\n"
              "print(n, len(r), a, b)\"", "r");
    printf("\nexport: %u capture files (8 lanes x 2,500 records each, %.1f M records, the largest file %.3f MB), "
           "median of 3\n", n, records / 1e6, largest);
    printf("%-48s %9s %14s %12s %10s\n", "tool", "seconds", "records/s", "peak RSS MB", "table MB");
    printf("%-48s %9.3f %12.1f M %12.1f %10.1f\n", "ikp export (one call, Parquet)", te, records / te / 1e6, re, tsize);
    if (prev)
        printf("%-48s %9.3f %12.1f M %12.1f %10.1f\n", "previous release's ikp export (the same files)", tp,
               records / tp / 1e6, rp, psize);
    printf("%-48s %9.3f %12.1f M %12.1f\n", "ikp merge -o /dev/null (one call, JSON)", tm, records / tm / 1e6, rm);
    printf("%-48s %9.3f %14s %12.1f\n", "ikp export of one capture file", t1, "-", r1);
    printf("%-48s %9.3f %14s %12.1f\n", "ikp --version (the tool's floor)", t0, "-", r0);
    printf("bytes the export holds at its peak (ikp_export_parquet_files, counted by its allocator): "
           "one file %.3f MB (%.2fx the file), %u files %.3f MB (%.2fx the largest)\n",
           h1 / 1048576.0, h1 / 1048576.0 / largest, n, hn / 1048576.0, hn / 1048576.0 / largest);
    if (q) {
        double a = 0, b = 0;
        unsigned long long nrows = 0, groups = 0;
        if (fscanf(q, "%llu %llu %lf %lf", &nrows, &groups, &a, &b) == 4) {
            rows = (double)nrows;
            printf("DuckDB %s: count(*) %.0f rows in %.3f s; p99 of mma per capture (%llu captures) in %.3f s\n",
                   "(build/pydeps)", rows, a, groups, b);
        } else printf("DuckDB: not run (make deps installs it into build/pydeps)\n");
        pclose(q);
    }
    if (!getenv("IKP_BENCH_KEEP")) {
        for (k = 0; k < n; k++) remove(paths[k]);
        remove(out);
    }
    for (k = 0; k < n; k++) free(paths[k]);
    free(paths);
    free(args);
    return 1;
}

int main(int argc, char **argv)
{
    const uint32_t lanes = 4096, cap = 4884; /* 20,004,864 records */
    size_t nw = ikp_buffer_words(lanes, cap);
    uint64_t *w = (uint64_t *)malloc(nw * 8);
    uint32_t l;
    int rep;
    ikp_capture *cap_;
    ikp_stats *st;
    ikp_error e;
    counter c;
    double t0, c0, t1, t2, t3, tj[REPS], tp[REPS], ts[REPS], cj[REPS], cp[REPS], ratio[REPS];
    double raw_mb = nw * 8 / 1048576.0, base_mb, json_mb;
    uint64_t json_bytes = 0, pf_bytes = 0;
    uint64_t records;
    const char *names[4] = {"tile", "load", "mma", "epilogue"};
    ikp_decode_options o;
    (void)argc; (void)argv;
    runner_start(); /* before this process touches its buffers */
    if (!w) { fprintf(stderr, "bench: out of memory\n"); return 1; }
    memset(w, 0, nw * 8);
    ikp_buffer_header(w, lanes, cap, 1980000, NULL);
    for (l = 0; l < lanes; l++) /* tile { load } { mma } ... : 6 records per tile */
        tile_lane(w + 8 + (uint64_t)l * (9 + cap), cap, l, lanes, l % 132, 1ull << 60,
                  1000000ull * (l % 132) + 0xFFF00000ull, l * 2654435761u);
    base_mb = peak_mb();
    memset(&o, 0, sizeof o);
    o.event_names = names; o.num_event_names = 4;

    /* each phase REPS times, JSON and Perfetto alternately; the median is
       reported. The last run of each writes its file for gzip. */
    for (rep = 0; rep < REPS; rep++) {
        int i;
        for (i = 0; i < 2; i++) {
            int fmt = (i + rep) % 2, last = rep == REPS - 1 && argc > 1;
            c.f = fopen(last ? (fmt ? "build/bench-out.pftrace" : "build/bench-out.json") : "/dev/null", "wb");
            c.bytes = 0;
            if (!c.f) return 1;
            t0 = now();
            c0 = cpu_now();
            if (ikp_capture_open(w, nw, &o, &cap_, &e) != IKP_OK) { fprintf(stderr, "bench: %s\n", e.message); return 1; }
            records = ikp_capture_get_info(cap_)->records;
            if ((fmt ? ikp_write_perfetto : ikp_write_chrome)(cap_, NULL, count_write, &c, &e) != IKP_OK) {
                fprintf(stderr, "bench: %s\n", e.message);
                return 1;
            }
            ikp_capture_free(cap_);
            (fmt ? tp : tj)[rep] = now() - t0;
            (fmt ? cp : cj)[rep] = cpu_now() - c0;
            *(fmt ? &pf_bytes : &json_bytes) = c.bytes;
            fclose(c.f);
        }
    }
    for (rep = 0; rep < REPS; rep++) ratio[rep] = tp[rep] / tj[rep];
    json_mb = peak_mb();
    for (rep = 0; rep < REPS; rep++) {
        t0 = now();
        if (ikp_capture_open(w, nw, &o, &cap_, &e) != IKP_OK) return 1;
        if (ikp_stats_compute(cap_, &st, &e) != IKP_OK) { fprintf(stderr, "bench: %s\n", e.message); return 1; }
        ts[rep] = now() - t0;
        ikp_stats_free(st);
        ikp_capture_free(cap_);
    }
    qsort(tj, REPS, sizeof(double), cmp_d);
    qsort(ts, REPS, sizeof(double), cmp_d);
    qsort(tp, REPS, sizeof(double), cmp_d);
    qsort(cj, REPS, sizeof(double), cmp_d);
    qsort(cp, REPS, sizeof(double), cmp_d);
    qsort(ratio, REPS, sizeof(double), cmp_d);
    t1 = tj[REPS / 2];
    t2 = tp[REPS / 2];
    t3 = ts[REPS / 2];
    printf("synthetic capture: %u lanes, %llu records, raw buffer %.1f MB\n", lanes,
           (unsigned long long)records, raw_mb);
    printf("(median of %d runs; fastest in brackets)\n", REPS);
    printf("%-28s %10s %14s %12s %14s\n", "phase", "seconds", "records/s", "output MB/s", "peak RSS/raw");
    printf("%-28s %10.3f %8.1f M [%.1f] %12.1f %14.2f\n", "decode + Chrome JSON", t1, records / t1 / 1e6,
           records / tj[0] / 1e6, c.bytes / 1048576.0 / t1, json_mb / raw_mb);
    printf("%-28s %10.3f %8.1f M [%.1f] %12.1f %14s\n", "decode + Perfetto protobuf", t2, records / t2 / 1e6,
           records / tp[0] / 1e6, pf_bytes / 1048576.0 / t2, "(as above)");
    printf("%-28s %10.3f %8.1f M [%.1f] %12s %14.2f\n", "decode + statistics", t3, records / t3 / 1e6,
           records / ts[0] / 1e6, "-", peak_mb() / raw_mb);
    printf("process CPU seconds (median): JSON %.3f, Perfetto %.3f (%.2fx)\n", cj[REPS / 2], cp[REPS / 2],
           cp[REPS / 2] / cj[REPS / 2]);
    printf("Perfetto/JSON wall time within each repetition: median %.2f, range %.2f-%.2f\n", ratio[REPS / 2],
           ratio[0], ratio[REPS - 1]);
    printf("RSS before decoding %.1f MB\n", base_mb);
    printf("written: JSON %.1f MB, Perfetto %.1f MB: %.3fx the JSON; Perfetto/JSON writing time %.2f\n",
           json_bytes / 1048576.0, pf_bytes / 1048576.0, (double)pf_bytes / (double)json_bytes, t2 / t1);
    if (argc > 1) {
        double gj = gzip_mb("build/bench-out.json"), gp = gzip_mb("build/bench-out.pftrace");
        printf("gzip -6: JSON %.1f MB, Perfetto %.1f MB (%.3fx)\n", gj, gp, gj > 0 ? gp / gj : 0);
        remove("build/bench-out.json");
        remove("build/bench-out.pftrace");
    }

    if (argc > 1) {
        size_t tn, nn;
        uint64_t trec, nrec;
        uint64_t *tw = tirx_buffer(&tn, &trec), *nwords;
        double ts_, tr_, is_, ir_, ns_, nr_;
        const char *fmts[2] = {"json", "perfetto"};
        int f;
        const char *tpath = "build/bench-tirx.bin", *np = "build/bench-tirx-nested.bin", *ip = "build/bench-ikp.bin";
        if (!tw || !save(tpath, tw, tn) || !save(ip, w, nw)) { fprintf(stderr, "bench: cannot write the bench files\n"); return 1; }
        free(tw);
        nwords = tirx_nested_buffer(&nn, &nrec);
        if (!nwords || !save(np, nwords, nn)) { fprintf(stderr, "bench: cannot write the bench files\n"); return 1; }
        free(nwords);
        free(w); /* a child forked while it is held counts it in its peak RSS (Linux keeps the high-water mark across exec) */
        w = NULL;
        int k;
        printf("\nwhole process: TOOL trace FILE -o /dev/null (median of %d runs)\n", REPS);
        printf("%-36s %-28s %8s %9s %12s %14s\n", "tool", "file", "MB", "seconds", "records/s", "peak RSS/file");
        /* argv[2], if given: a baseline tool, run after it in the same process
           (JSON only: older tools write no Perfetto) */
        for (k = 1; k < argc && k < 3 && argv[k][0]; k++)
            for (f = 0; f < (k == 2 ? 1 : 2); f++) {
                char label[600];
                snprintf(label, sizeof label, "%s (%s)", argv[k], fmts[f]);
                if (!run_tool(argv[k], tpath, fmts[f], &ts_, &tr_) || !run_tool(argv[k], np, fmts[f], &ns_, &nr_) ||
                    !run_tool(argv[k], ip, fmts[f], &is_, &ir_))
                    return 1;
                printf("%-36s %-28s %8.1f %9.3f %10.1f M %14.2f\n", label, "tirx, 20.0 M records", tn * 8 / 1048576.0,
                       ts_, trec / ts_ / 1e6, tr_ / (tn * 8 / 1048576.0));
                printf("%-36s %-28s %8.1f %9.3f %10.1f M %14.2f\n", label, "tirx nested, 20.0 M records",
                       nn * 8 / 1048576.0, ns_, nrec / ns_ / 1e6, nr_ / (nn * 8 / 1048576.0));
                printf("%-36s %-28s %8.1f %9.3f %10.1f M %14.2f\n", label, "ikp (bare), 20.0 M records",
                       nw * 8 / 1048576.0, is_, records / is_ / 1e6, ir_ / (nw * 8 / 1048576.0));
            }
        { /* one large capture exported: the bytes held against the file's */
            char *big = (char *)ip;
            double held = export_heap(&big, 1, "/dev/null");
            if (held < 0) return 1;
            printf("\nikp_export_parquet_files of the IKP buffer as a bare file (%.1f MB, one capture): %.1f MB "
                   "held at the peak (%.2fx the file)\n", nw * 8 / 1048576.0, held / 1048576.0,
                   held / (nw * 8.0));
        }
        if (!getenv("IKP_BENCH_KEEP")) { remove(tpath); remove(np); remove(ip); }
    }
    {
        static const uint32_t counts[] = {250, 500, 1000, 2000, 4000};
        double prev = 0;
        size_t i;
        printf("\nmerges: N captures of one lane on one host, 2 host readings each, ikp_write_merged to "
               "/dev/null (median of 3)\n%-10s %10s %18s\n", "captures", "seconds", "time / time at N/2");
        for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            double s_ = merge_seconds(counts[i]);
            if (s_ < 0) return 1;
            if (i) printf("%-10u %10.3f %18.2f\n", counts[i], s_, prev > 0 ? s_ / prev : 0);
            else printf("%-10u %10.3f %18s\n", counts[i], s_, "-");
            prev = s_;
        }
    }
    free(w);
    if (argc > 3 && access(argv[3], X_OK) != 0) printf("\n(%s not found: the previous release's export row is left out)\n", argv[3]);
    if (argc > 1 && !export_section(argv[1], argc > 3 && access(argv[3], X_OK) == 0 ? argv[3] : NULL, 1000)) return 1;
    return 0;
}
