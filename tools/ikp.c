/* ikp - command-line front end of ikp.h: decode a capture, write a Chrome
   or Perfetto trace, print statistics, compare two captures, write a
   report. See README.md. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* and madvise: ikp.h reads a large capture into huge pages */
#define _XOPEN_SOURCE 700 /* realpath */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include "into.h"
#include "sass.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* after a usage error: one line, then where the help is */
static const char *see_help = "(ikp --help lists every command and option)\n";
/* the formats the library reads, by name, between sep; the characters written */
static int put_formats(FILE *f, const char *sep)
{
    int k, n = 0;
    for (k = 0; k < (int)IKP_FORMAT_COUNT; k++) n += fprintf(f, "%s%s", k ? sep : "", ikp_format_name((ikp_format)k));
    return n;
}
/* The help: each command's synopsis and notes are in its row of the
   command table, each option's line in its row of the option table
   (below); this is the part every command shares. */
static const char *help_tail =
    "IN is an .ikp capture, a NumPy .npy array or a bare buffer of little-endian\n"
    "64-bit words; - reads one from standard input. -o - writes to standard output.\n"
    "Exit status: 0 ok, 1 bad input or a failed write, 2 bad usage, 3 (diff\n"
    "--fail-if-slower) slower or incomplete, (check-sass) an empty region.\n";

/* The temporary output file, removed if SIGINT or SIGTERM stops the tool. */
static char cleanup_path[IKP_OUTPUT_PATH_MAX];
static volatile sig_atomic_t cleanup_armed;

static void on_signal(int sig)
{
    if (cleanup_armed) unlink(cleanup_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The flags that set the options the library's messages and texts ask
   for: every capture the tool opens names them so (open_input) */
static const ikp_option_names tool_names = {"--format", "--units", "--timer-unit", "--keep-after-finalize",
                                            "ikp merge --align start"};

static int fail(const char *in, const ikp_error *e)
{
    const char *m = e->message[0] ? e->message : ikp_result_string(e->code);
    fprintf(stderr, "ikp: error: %s: %s", in, m);
    if (e->offset >= 0) fprintf(stderr, " (at byte offset %lld)", (long long)e->offset);
    if (e->lane >= 0) fprintf(stderr, " (lane %lld)", (long long)e->lane);
    fprintf(stderr, "\n");
    return 1;
}

/* a warning when the lanes of IN line up poorly across SMs */
static void warn_placement(const char *in, const ikp_capture_info *ci)
{
    char pl[640];
    int poor;
    ikp_capture_placement(ci, pl, sizeof pl, &poor);
    if (poor) {
        fprintf(stderr, "ikp: warning: %s: %s\n", in, pl);
    }
}

/* 1 if text holds 'word' (in single quotes), as the library names files */
static int quotes(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (; (text = strchr(text, '\'')) != NULL; text++)
        if (!strncmp(text + 1, word, n) && text[n + 1] == '\'') return 1;
    return 0;
}

/* "a,b,c" or "@file" (one name per line): 0 ok, 1 bad file, 2 usage. A
   list given again replaces the earlier one. A bad file is said on one
   line naming it (unless the library's message quotes it already). */
static int parse_names(const char *arg, const char *what, ikp_name_list *out)
{
    ikp_name_list list;
    ikp_error e;
    if (arg[0] == '@') {
        if (ikp_name_list_parse_path(arg + 1, NULL, &list, &e) != IKP_OK) {
            const char *m = e.message[0] ? e.message : ikp_result_string(e.code);
            int named = quotes(m, arg + 1);
            fprintf(stderr, "ikp: error: %s file%s%s: %s", what, named ? "" : " ", named ? "" : arg + 1, m);
            if (e.offset >= 0 && !strstr(m, "offset")) fprintf(stderr, " (at byte offset %lld)", (long long)e.offset);
            fputc('\n', stderr);
            return 1;
        }
    } else if (ikp_name_list_parse(arg, strlen(arg), ',', NULL, &list, &e) != IKP_OK) {
        fprintf(stderr, "ikp: error: %s: %s\n", what, e.message);
        return 2;
    }
    ikp_name_list_free(out);
    *out = list;
    return 0;
}

/* the decimal digits that start a (no sign, no space), *end after them;
   0 if there are none or they overflow */
static unsigned long long lead_number(const char *a, char **end)
{
    unsigned long long v;
    errno = 0;
    if (a[0] < '0' || a[0] > '9') return 0;
    v = strtoull(a, end, 10);
    return errno ? 0 : v;
}

/* "10ns", "500ps", "1us" -> ps (1 .. 1000000); 0 if malformed */
static uint32_t parse_tick(const char *a)
{
    char *end;
    unsigned long long v = lead_number(a, &end);
    if (v == 0 || v > 1000000) return 0;
    if (!strcmp(end, "ps")) return (uint32_t)v;
    if (!strcmp(end, "ns") && v <= 1000) return (uint32_t)(v * 1000);
    if (!strcmp(end, "us") && v <= 1) return (uint32_t)(v * 1000000);
    return 0;
}

/* a positive count below 2^32, digits only; 0 if malformed */
static uint32_t parse_count(const char *a)
{
    char *end;
    unsigned long long v = lead_number(a, &end);
    if (v == 0 || *end || v > 0xFFFFFFFFull) return 0;
    return (uint32_t)v;
}

/* an event by name, or by id in decimal */
static uint32_t event_arg(const ikp_capture *cap, const char *a)
{
    char *end;
    unsigned long long v;
    uint32_t id = ikp_event_id(cap, a);
    if (id != IKP_NO_EVENT) return id;
    v = lead_number(a, &end);
    if (a[0] == '0' && a[1] == 0) return 0;
    return v && !*end && v < IKP_WIRE_MAX_EVENTS ? (uint32_t)v : IKP_NO_EVENT;
}

/* "a:b,c:d" -> flow pairs; "a,b" -> counter ids. 0 ok, 2 usage */
static int parse_events(const ikp_capture *cap, const char *opt, const char *arg, int pairs, uint32_t **out, uint32_t *n)
{
    size_t len = strlen(arg), i = 0;
    char *copy = (char *)malloc(len + 1), *tok, *save = NULL;
    if (!copy) { fprintf(stderr, "ikp: error: out of memory\n"); return 2; }
    memcpy(copy, arg, len + 1);
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = pairs ? strchr(tok, ':') : NULL;
        uint32_t *grown = (uint32_t *)realloc(*out, (*n + 2) * sizeof(uint32_t));
        if (!grown) { free(copy); fprintf(stderr, "ikp: error: out of memory\n"); return 2; }
        *out = grown;
        if (pairs && !colon) {
            fprintf(stderr, "ikp: error: %s takes FROM:TO event pairs, not '%s'\n", opt, tok);
            free(copy);
            return 2;
        }
        if (colon) *colon = 0;
        for (i = 0; i < (pairs ? 2u : 1u); i++) {
            const char *name = i ? colon + 1 : tok;
            uint32_t id = event_arg(cap, name);
            if (id == IKP_NO_EVENT) {
                fprintf(stderr, "ikp: error: %s: no event '%s' in this capture (give a name or an id)\n", opt, name);
                free(copy);
                return 2;
            }
            (*out)[(*n)++] = id;
        }
        if (pairs && (*out)[*n - 2] == (*out)[*n - 1]) {
            fprintf(stderr, "ikp: error: %s: '%s' links an event to itself\n", opt, arg);
            free(copy);
            return 2;
        }
    }
    free(copy);
    if (*n == 0) { fprintf(stderr, "ikp: error: %s needs at least one event\n", opt); return 2; }
    return 0;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* What a command writes, through the library's writers. */
typedef ikp_result (*body_fn)(const void *ctx, ikp_write_fn fn, void *user, ikp_error *e);

/* Writes to path through a temporary file and a rename (removed if SIGINT
   or SIGTERM stops the tool), or to standard output for "-". 0 ok, 1 failed
   (said on stderr). */
static int write_out(const char *path, body_fn body, const void *ctx, const char *what)
{
    ikp_output o;
    ikp_error e;
    ikp_result r;
    sigset_t stop, old;
    memset(&e, 0, sizeof e);
    if (!strcmp(path, "-")) {
        errno = 0;
        if (body(ctx, ikp_file_writer, stdout, &e) != IKP_OK || fflush(stdout) != 0) {
            fprintf(stderr, "ikp: error: cannot write the %s to standard output: %s\n", what,
                    errno ? strerror(errno) : e.message);
            return 1;
        }
        return 0;
    }
    /* SIGINT/SIGTERM held from before the temporary file exists until its
       removal is armed: one arriving in between is handled then */
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    sigprocmask(SIG_BLOCK, &stop, &old);
    if (ikp_output_open(&o, path, &e) != IKP_OK) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return fail(path, &e);
    }
    snprintf(cleanup_path, sizeof cleanup_path, "%s", ikp_output_temp_path(&o));
    cleanup_armed = cleanup_path[0] != 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    r = ikp_output_end(&o, body(ctx, ikp_output_write, &o, &e), &e); /* e says what went wrong */
    cleanup_armed = 0;
    return r != IKP_OK ? fail(path, &e) : 0;
}

typedef struct trace_job {
    const ikp_capture *cap;
    const ikp_trace_options *opt;
    int perfetto;
} trace_job;
static ikp_result trace_body(const void *ctx, ikp_write_fn fn, void *user, ikp_error *e)
{
    const trace_job *j = (const trace_job *)ctx;
    return (j->perfetto ? ikp_write_perfetto : ikp_write_chrome)(j->cap, j->opt, fn, user, e);
}

typedef struct report_job {
    const ikp_report *rep;
    const ikp_report_md_options *md; /* the Markdown; NULL: the picture */
    int json;                        /* the JSON instead (md->baseline: its comparison) */
} report_job;
static ikp_result report_body(const void *ctx, ikp_write_fn fn, void *user, ikp_error *e)
{
    const report_job *j = (const report_job *)ctx;
    if (j->json) return ikp_report_write_json(j->rep, j->md->baseline, fn, user, e);
    return j->md ? ikp_report_write_markdown(j->rep, j->md, fn, user, e) : ikp_report_write_svg(j->rep, fn, user, e);
}

/* a percentage: digits with at most one '.', 0 .. 100000; -1 if malformed */
static double parse_pct(const char *a)
{
    double v = 0, scale = 0;
    const char *p = a;
    int digits = 0;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            digits = 1;
            if (scale) { v += (*p - '0') * scale; scale /= 10; }
            else v = v * 10 + (*p - '0');
            if (v > 100000) return -1;
        } else if (*p == '.' && !scale) scale = 0.1;
        else return -1;
    }
    return digits ? v : -1;
}

/* device, peer clock and SM clock lines of `ikp info` */
static void print_device(const ikp_capture *cap)
{
    const ikp_device_id *d = ikp_capture_device(cap);
    const ikp_peer_clock *p = NULL;
    const ikp_capture_info *in = ikp_capture_get_info(cap);
    uint32_t n = ikp_capture_peers(cap, &p), k;
    if (d) {
        char t[256];
        printf("device      %s\n", ikp_device_text(d, t, sizeof t));
    }
    for (k = 0; k < n; k++)
        printf("peer clock  GPU-%02x%02x%02x%02x...: %+.3f us from this GPU's, +- %.3f us (%s%.3f us)\n",
               p[k].peer_uuid[0], p[k].peer_uuid[1], p[k].peer_uuid[2], p[k].peer_uuid[3], (double)p[k].offset_ns / 1e3,
               (double)p[k].uncertainty_ns / 1e3, p[k].round_trip_ns ? "over peer memory, round trip " : "through the host",
               p[k].round_trip_ns ? (double)p[k].round_trip_ns / 1e3 : 0.0);
    if (in->sm_clocks)
        printf("SM clocks   %u samples on %u SMs; %u cycle lanes placed through them\n", in->sm_clocks,
               in->sm_clock_sms, in->sampled_lanes);
}

static const char *const via_name[IKP_ALIGN_COUNT] = {"reference", "same GPU", "peer memory", "host clock", "raw",
                                                      "first record"};

/* every capture's label, 128 bytes each: the given ones (labels, may be
   NULL or hold NULLs), else ikp_merge_labels'; NULL when out of memory */
static char *all_labels(const ikp_capture *const *caps, uint32_t n, const char *const *labels)
{
    char *l = (char *)malloc((size_t)n * 128);
    ikp_error e;
    uint32_t k;
    if (!l || ikp_merge_labels(caps, n, l, 128, &e) != IKP_OK) {
        free(l);
        fprintf(stderr, "ikp: error: out of memory\n");
        return NULL;
    }
    for (k = 0; labels && k < n; k++)
        if (labels[k]) snprintf(l + (size_t)k * 128, 128, "%s", labels[k]);
    return l;
}

/* the placement table of `ikp info A B ...` and `ikp merge` */
static void print_alignment(FILE *f, const ikp_capture *const *caps, const char *const *files, uint32_t n,
                            const ikp_alignment *al, const char *const *labels)
{
    uint32_t k;
    char *lab = all_labels(caps, n, labels);
    if (!lab) return;
    fprintf(f, "alignment   %u captures on one time axis (time 0 = the earliest capture's start)\n", n);
    for (k = 0; k < n; k++) {
        const char *from = lab + (size_t)al[k].from * 128;
        fprintf(f, "  %-16s %s: starts at %.3f us; ", lab + (size_t)k * 128, files[k], (double)al[k].zero_ns / 1e3);
        if (al[k].via == IKP_ALIGN_REFERENCE) fprintf(f, "the reference\n");
        else if (al[k].via == IKP_ALIGN_RAW) fprintf(f, "raw GPU clock, not aligned (uncertainty unknown)\n");
        else if (al[k].via == IKP_ALIGN_START) fprintf(f, "placed by its first record (--align start; uncertainty unknown)\n");
        else
            fprintf(f, "clock %+.3f us from the reference's, +- %.3f us (%s, from %s)\n", (double)al[k].offset_ns / 1e3,
                    (double)al[k].uncertainty_ns / 1e3, via_name[al[k].via], from);
        if (al[k].disagreement_ns) {
            const char *with = lab + (size_t)al[k].disagree_with * 128;
            fprintf(f, "  %-16s   disagreement: the %s link with %s is %.3f us off beyond its uncertainty%s\n", "",
                    via_name[al[k].disagree_via], with, (double)al[k].disagreement_ns / 1e3,
                    al[k].left_out ? " (this capture's measurement, left out: every other link agrees without it)"
                    : al[k].disagree_via == IKP_ALIGN_HOST ? " (host time uncertainty widened)" : "");
        }
    }
    if (n > 1 && n <= 1024) { /* the widest pair, by every chain of links between them */
        uint64_t *pb = (uint64_t *)malloc((size_t)n * n * sizeof *pb), most = 0;
        uint32_t i, j, wi = 0, wj = 0;
        ikp_error e;
        if (pb && ikp_merge_pair_bounds(caps, n, al, pb, &e) == IKP_OK) {
            for (i = 0; i < n; i++)
                for (j = i + 1; j < n; j++)
                    if (pb[(size_t)i * n + j] != UINT64_MAX && pb[(size_t)i * n + j] >= most) {
                        most = pb[(size_t)i * n + j];
                        wi = i;
                        wj = j;
                    }
            if (wj) /* (j > i: found) */
                fprintf(f, "  any two captures within +- %s%.3f us of each other (the widest pair: %s and %s; by "
                        "every chain of links between them)\n", most >= ((uint64_t)1 << 61) ? "more than " : "",
                        (double)most / 1e3, lab + (size_t)wi * 128, lab + (size_t)wj * 128);
        }
        free(pb);
    }
    free(lab);
}

/* one warning line for each pair of captures whose links disagree, each
   named by its label (caps) or its file (files, when caps is NULL) */
static void warn_disagreements(const ikp_capture *const *caps, const char *const *files, uint32_t n,
                               const ikp_alignment *al)
{
    uint32_t k;
    char *lab = NULL;
    for (k = 0; k < n; k++) {
        const char *a, *b;
        const uint32_t w = al[k].disagree_with;
        if (!al[k].disagreement_ns || w > k) continue;
        if (caps && !lab && !(lab = all_labels(caps, n, NULL))) return;
        a = caps ? lab + (size_t)k * 128 : files[k];
        b = caps ? lab + (size_t)w * 128 : files[w];
        fprintf(stderr, "ikp: warning: the %s link between %s and %s is %.3f us off their placement beyond the "
                "stated uncertainties; %s\n", via_name[al[k].disagree_via], b, a, (double)al[k].disagreement_ns / 1e3,
                al[k].left_out || (w < n && al[w].left_out && al[w].disagree_with == k)
                    ? "every other link agrees without it: it is left out (measure again)"
                : al[k].disagree_via == IKP_ALIGN_HOST && al[k].via == IKP_ALIGN_SAME_GPU
                    ? "one GPU's clock places them exactly; host times are this much less certain"
                    : "the placement's uncertainty is widened to cover it");
    }
    free(lab);
}

typedef struct merge_job {
    const ikp_capture *const *caps;
    uint32_t n;
    const ikp_merge_options *opt;
    int perfetto, zip;
} merge_job;
static ikp_result merge_body(const void *ctx, ikp_write_fn fn, void *user, ikp_error *e)
{
    const merge_job *j = (const merge_job *)ctx;
    if (j->zip) return ikp_write_merged_zip(j->caps, j->n, j->opt, fn, user, e);
    return ikp_write_merged(j->caps, j->n, j->opt, j->perfetto ? IKP_TRACE_PERFETTO : IKP_TRACE_JSON, fn, user, e);
}

/* Text the library writes, held to be printed in the tool's words. */
typedef struct text_buf {
    char *p;
    size_t n, cap;
} text_buf;
static int text_write(void *user, const void *data, size_t size)
{
    text_buf *b = (text_buf *)user;
    if (b->n + size > b->cap) {
        size_t cap = (b->n + size) * 2 + 256;
        char *p = (char *)realloc(b->p, cap);
        if (!p) return 1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, size);
    b->n += size;
    return 0;
}

/* A capture's information (`ikp info`) or summary text on standard output. */
static int print_stats_text(const ikp_stats *st, int info_only, const char *in)
{
    text_buf b = {NULL, 0, 0};
    ikp_error e;
    ikp_result r = (info_only ? ikp_info_write_text : ikp_stats_write_text)(st, text_write, &b, &e);
    if (r == IKP_OK && b.n) fwrite(b.p, 1, b.n, stdout);
    free(b.p);
    return r == IKP_OK ? 0 : fail(in, &e);
}

/* what a file that is not a regular one is, for a message */
static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO (pipe)" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : "not a regular file";
}

/* Opens a regular file to read; anything else (a directory, a FIFO, a
   device such as /dev/zero) is refused at once, a FIFO without waiting for
   a writer, as the library's inputs are. NULL after saying why, the
   message led by what (the command or option). */
static FILE *open_regular(const char *path, const char *what)
{
    struct stat sb;
    FILE *f;
    int fd = open(path, O_RDONLY | O_NONBLOCK), fl, st;
    if (fd < 0) {
        fprintf(stderr, "ikp: error: %s%s: cannot open: %s\n", what, path, strerror(errno));
        return NULL;
    }
    if ((st = fstat(fd, &sb)) != 0 || !S_ISREG(sb.st_mode)) {
        fprintf(stderr, "ikp: error: %s%s is %s: give a regular file\n", what, path,
                st != 0 ? "not readable" : file_kind(sb.st_mode));
        close(fd);
        return NULL;
    }
    if ((fl = fcntl(fd, F_GETFL)) >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (!(f = fdopen(fd, "rb"))) {
        fprintf(stderr, "ikp: error: %s%s: %s\n", what, path, strerror(errno));
        close(fd);
    }
    return f;
}

/* 1 if a names an input: a file, or - for standard input */
static int is_input(const char *a) { return a[0] != '-' || !strcmp(a, "-"); }

/* Opens an input: a file, or "-": standard input read whole (an .ikp
   capture, a .npy array or bare words, as in a file). */
static ikp_result open_input(const char *path, const ikp_decode_options *given, ikp_capture **cap, ikp_error *e)
{
    char *buf = NULL;
    size_t n = 0, cap_n = 0;
    ikp_result r;
    ikp_decode_options o = *given, *opt = &o;
    o.option_names = &tool_names;
    if (strcmp(path, "-")) return ikp_capture_open_path(path, opt, cap, e);
    {   /* a device, or a directory, never ends: refused before a byte is read */
        struct stat sb;
        if (fstat(0, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) || S_ISDIR(sb.st_mode))) {
            e->code = IKP_ERR_IO;
            e->offset = e->lane = -1;
            snprintf(e->message, sizeof e->message, "standard input is %s: give a file, or pipe the data in",
                     file_kind(sb.st_mode));
            return IKP_ERR_IO;
        }
    }
    for (;;) {
        size_t k;
        if (n == cap_n) {
            char *q = (char *)realloc(buf, cap_n = cap_n ? 2 * cap_n : 1 << 20);
            if (!q) {
                free(buf);
                e->code = IKP_ERR_OUT_OF_MEMORY;
                e->offset = e->lane = -1;
                snprintf(e->message, sizeof e->message, "out of memory reading standard input");
                return IKP_ERR_OUT_OF_MEMORY;
            }
            buf = q;
        }
        k = fread(buf + n, 1, cap_n - n, stdin);
        n += k;
        if (k == 0) break;
    }
    if (ferror(stdin)) {
        free(buf);
        e->code = IKP_ERR_IO;
        e->offset = e->lane = -1;
        snprintf(e->message, sizeof e->message, "cannot read standard input: %s", strerror(errno));
        return IKP_ERR_IO;
    }
    r = ikp_capture_open_data(buf, n, opt, cap, e);
    free(buf);
    return r;
}

/* The option families: the options a command takes (command.options) are
   those of its families (tool_option.family). */
enum { OPT_COMMON = 1,   /* how to decode captures: every command that reads them */
       OPT_LAYOUT = 2,   /* how a trace is laid out (trace, merge) */
       OPT_TRACE = 4,    /* trace */
       OPT_JSON = 8,     /* --json of summary and diff */
       OPT_DIFF = 16,    /* diff */
       OPT_REPORT = 32,  /* report */
       OPT_PLACE = 64,   /* how captures are placed on one time axis (merge, info of several) */
       OPT_MERGE = 128,  /* merge */
       OPT_EXPORT = 256, /* export */
       OPT_SASS = 512,   /* check-sass */
       OPT_ALL = 2 * OPT_SASS - 1 };
struct command;

/* What a command was asked: its inputs and every option's value. */
typedef struct args {
    const struct command *c;
    const char **files;   /* the inputs, in the order given (argc entries) */
    uint32_t n;
    const char *in, *in2; /* files[0], files[1] (BASE NEW for diff) */
    const char *out, *flow_arg, *counter_arg;
    const char *svg_arg, *base_arg, *wait_arg, *device, *into_arg, *kernel_arg;
    ikp_name_list names, groups, labels;
    ikp_decode_options opt;
    ikp_trace_options copt;
    ikp_diff_options dopt;
    ikp_report_options ropt;
    ikp_merge_options mo;  /* --raw, --align (mo.raw is export's --raw too) */
    ikp_export_options eo; /* --row-group, --plain */
    int64_t *start_ns;     /* --align start=T,T,...: n entries */
    int out_format;        /* -1: from the name, 0 JSON, 1 Perfetto */
    int host_time;         /* --time host */
    int json;
    int no_fit;            /* --no-fit: --into keeps IKP's own placement */
    int list, mangled;     /* check-sass */
    double fail_pct;       /* --fail-if-slower; -1: none */
} args;
static void trace_notes(const args *g, const ikp_capture_info *ci, const ikp_trace_stats *tst);

/* One row per command: a new command is a row and its function. */
typedef struct command {
    const char *name;
    const char *operands;  /* after "ikp NAME" in the usage (its options follow, from their rows) */
    const char *notes;     /* what it does, for the help: "NAME: ...", lines after the first indented */
    unsigned options;      /* the option families it takes (OPT_*) */
    unsigned several_options; /* and those it also takes with several inputs */
    int inputs;            /* the captures it reads: 1, or 2 (BASE NEW) */
    int (*run)(args *g, const ikp_capture *cap, const ikp_capture *cap2);
    /* else: a command that reads its own arguments */
    int (*own)(const struct command *c, int argc, char **argv);
    /* with several inputs: this instead of run */
    int (*several)(const struct command *c, int argc, char **argv);
} command;

/* One row per option of the tool, as git's struct option tables: the
   parsers and the help read these rows only. */
typedef struct tool_option tool_option;
/* stores an option's value (v; NULL for one that takes none) in g: 0 ok,
   1 a bad file, 2 a bad value (said on stderr) */
typedef int (*option_fn)(args *g, const tool_option *o, const char *v);
struct tool_option {
    const char *flag;
    const char *value; /* its value, as its family's list shows it (a %s: the formats); NULL: it takes none */
    unsigned family;   /* the families it is in (OPT_*) */
    option_fn set;
    size_t at;         /* the field of args that set_text, set_flag, set_list or set_choice sets (offsetof) */
    const char *help;  /* its line in the help, lines after the first indented to the column */
};
#define AT(field) offsetof(args, field)
#define FIELD(g, o, type) ((type *)(void *)((char *)(g) + (o)->at))

static int set_text(args *g, const tool_option *o, const char *v)
{
    *FIELD(g, o, const char *) = v;
    return 0;
}
static int set_flag(args *g, const tool_option *o, const char *v)
{
    (void)v;
    *FIELD(g, o, int) = 1;
    return 0;
}
static int set_list(args *g, const tool_option *o, const char *v)
{
    return parse_names(v, o->flag, FIELD(g, o, ikp_name_list));
}

/* one of the two words of o's value "w0|w1": *out = 0 or 1; else says so and returns 2 */
static int parse_choice(const tool_option *o, const char *v, int *out)
{
    const char *bar = strchr(o->value, '|');
    int n0 = (int)(bar - o->value);
    if (!strncmp(v, o->value, (size_t)n0) && !v[n0]) *out = 0;
    else if (!strcmp(v, bar + 1)) *out = 1;
    else {
        fprintf(stderr, "ikp: error: %s takes %.*s or %s, not '%s'\n", o->flag, n0, o->value, bar + 1, v);
        return 2;
    }
    return 0;
}
static int set_choice(args *g, const tool_option *o, const char *v) { return parse_choice(o, v, FIELD(g, o, int)); }
static int set_by(args *g, const tool_option *o, const char *v)
{
    int sm = 0, rc = parse_choice(o, v, &sm);
    g->copt.by = sm ? IKP_BY_SM : IKP_BY_BLOCK;
    return rc;
}

static int set_output(args *g, const tool_option *o, const char *v)
{
    (void)o;
    g->out = v;
    if (v[0]) return 0;
    fprintf(stderr, "ikp: error: -o needs a file name (or - for standard output)\n");
    return 2;
}

static int set_format(args *g, const tool_option *o, const char *v)
{
    (void)o;
    g->opt.format = ikp_format_from_name(v);
    if (g->opt.format != IKP_FORMAT_COUNT) return 0;
    fprintf(stderr, "ikp: error: unknown format '%s' (", v);
    put_formats(stderr, ", ");
    fputs(")\n", stderr);
    return 2;
}

static int set_units(args *g, const tool_option *o, const char *v)
{
    if ((g->opt.num_units = parse_count(v)) != 0) return 0;
    fprintf(stderr, "ikp: error: %s takes a count of units from 1 to 4294967295, not '%s'\n", o->flag, v);
    return 2;
}

static int set_timer_unit(args *g, const tool_option *o, const char *v)
{
    if ((g->opt.timer_unit_ps = parse_tick(v)) != 0) return 0;
    fprintf(stderr, "ikp: error: %s takes a tick such as 10ns, 1ns or 500ps (1ps .. 1us), not '%s'\n", o->flag, v);
    return 2;
}

/* the percentage v, or -1 after saying it is not one */
static double pct_value(const tool_option *o, const char *v)
{
    double p = parse_pct(v);
    if (p < 0) fprintf(stderr, "ikp: error: %s takes a percentage such as 5 or 2.5, not '%s'\n", o->flag, v);
    return p;
}
static int set_threshold(args *g, const tool_option *o, const char *v)
{
    double p = pct_value(o, v);
    if (p < 0) return 2;
    g->dopt.threshold = p / 100;
    if (p > 0) return 0;
    fprintf(stderr, "ikp: error: %s must be above 0\n", o->flag);
    return 2;
}
static int set_fail_pct(args *g, const tool_option *o, const char *v)
{
    g->fail_pct = pct_value(o, v);
    return g->fail_pct < 0 ? 2 : 0;
}

static int set_min_change(args *g, const tool_option *o, const char *v)
{
    g->dopt.min_change_ns = parse_pct(v);
    if (g->dopt.min_change_ns > 0) return 0;
    fprintf(stderr, "ikp: error: %s takes a duration in ns above 0 such as 5 or 0.5, not '%s'\n", o->flag, v);
    return 2;
}

static int set_rate(args *g, const tool_option *o, const char *v)
{
    const double r = parse_pct(v);
    if (r >= IKP_MIN_CYCLES_PER_NS && r <= IKP_MAX_CYCLES_PER_NS) {
        g->opt.cycles_per_ns = r;
        return 0;
    }
    fprintf(stderr, "ikp: error: %s takes the SM clock in cycles a ns, 0.05 .. 20 (1.98 for 1980 MHz), not '%s'\n",
            o->flag, v);
    return 2;
}

static int set_device(args *g, const tool_option *o, const char *v)
{
    (void)o;
    g->device = v;
    g->opt.gpu_name = v;
    return 0;
}

static int set_sms(args *g, const tool_option *o, const char *v)
{
    g->ropt.timeline_sms = parse_count(v);
    if (g->ropt.timeline_sms && g->ropt.timeline_sms <= 256) return 0;
    fprintf(stderr, "ikp: error: %s takes a count from 1 to 256, not '%s'\n", o->flag, v);
    return 2;
}

static int set_row_group(args *g, const tool_option *o, const char *v)
{
    g->eo.row_group_rows = parse_count(v);
    if (g->eo.row_group_rows && g->eo.row_group_rows <= 0x7FFFFFFFu) return 0;
    fprintf(stderr, "ikp: error: %s takes a number of rows from 1 to 2147483647, not '%s'\n", o->flag, v);
    return 2;
}

/* --align clocks | start | start=T1,T2,... (ns; one a capture): 0 ok, 2 usage.
   mo.align_start holds 1 + the number of times given, checked against n later. */
static int set_align(args *m, const tool_option *o, const char *v)
{
    const char *p;
    int k = 0;
    (void)o;
    if (!strcmp(v, "clocks")) { m->mo.align_start = 0; return 0; }
    if (!strcmp(v, "start")) { m->mo.align_start = 1; return 0; }
    if (strncmp(v, "start=", 6) != 0 || !v[6]) {
        fprintf(stderr, "ikp: error: --align takes clocks, start or start=T1,T2,... (ns, one per capture), not '%s'\n", v);
        return 2;
    }
    free(m->start_ns);
    m->start_ns = (int64_t *)calloc(strlen(v), sizeof *m->start_ns);
    if (!m->start_ns) { fprintf(stderr, "ikp: error: out of memory\n"); return 2; }
    for (p = v + 6;; p++) {
        char *end;
        long long t;
        errno = 0;
        t = strtoll(p, &end, 10);
        if (end == p || errno || (*end != ',' && *end)) {
            fprintf(stderr, "ikp: error: --align start= takes whole ns, one per capture, comma-separated; '%s' is not\n", p);
            return 2;
        }
        m->start_ns[k++] = t;
        p = end;
        if (!*p) break;
    }
    m->mo.align_start = 1 + k;
    return 0;
}

/* Every option. The help lists them in this order: the options every
   command that reads captures takes (OPT_COMMON), then each command's own
   under its notes, flag and value in a column HELP_COLUMN wide. A flag
   whose meaning differs between commands (-o, --json) has a row for each. */
static const tool_option options[] = {
    /* OPT_COMMON: the list after "options:" */
    {"--names", "a,b,c | --names @file", OPT_COMMON | OPT_SASS, set_list, AT(names),
     "event names by id (one per line in file)"},
    {"--groups", "x,y  | --groups @file", OPT_COMMON, set_list, AT(groups), "group names by index"},
    {"--format", "%s", OPT_COMMON, set_format, 0, "the capture's format (default auto: told by its bytes)"},
    {"--units", "N", OPT_COMMON, set_units, 0, "nuggets: units in the buffer (inferred if left out)"},
    {"--timer-unit", "T", OPT_COMMON, set_timer_unit, 0,
     "peer formats: one timer tick, e.g. 10ns (AMD\n"
     "triton-dist captures), 1ns (the default), 500ps"},
    {"--keep-after-finalize", NULL, OPT_COMMON, set_flag, AT(opt.keep_after_finalize),
     "tirx: also show records after a lane's finalize"},
    {"--cycles-per-ns", "R", OPT_COMMON, set_rate, 0,
     "the SM clock, e.g. 1.98: a Proton trace's cycles\n"
     "read at it; cycle lanes of other captures run at\n"
     "it (not fit to their readings)"},
    {"--device", "NAME", OPT_COMMON | OPT_REPORT, set_device, 0,
     "the GPU (a100, h100, h100-pcie, h200, or CUDA's\n"
     "name of one): a Proton trace's cycles read at its\n"
     "boost clock; report: its name in the configuration"},
    /* trace */
    {"-o", "OUT.json|OUT.pftrace", OPT_TRACE, set_output, 0, "the trace (default trace.json)"},
    {"--by", "block|sm", OPT_LAYOUT, set_by, 0,
     "a track (JSON: a process) per block (default)\n"
     "or per SM"},
    {"--output-format", "json|perfetto", OPT_LAYOUT, set_choice, AT(out_format),
     "the trace's format (default: from the name of OUT:\n"
     ".pftrace and .perfetto-trace are Perfetto's\n"
     "protobuf, anything else Chrome JSON)"},
    {"--time", "capture|host", OPT_LAYOUT, set_choice, AT(host_time),
     "times from the capture's start (default), or host\n"
     "CLOCK_REALTIME ns (captures with clock readings)"},
    {"--flow", "FROM:TO[,FROM:TO...]", OPT_TRACE, set_text, AT(flow_arg),
     "arrows from each FROM event to its TO event in the\n"
     "same block (by payload, else by order); a Proton\n"
     "trace's cross-warp pairs are drawn without it"},
    {"--counter", "EVENT[,EVENT...]", OPT_TRACE, set_text, AT(counter_arg),
     "per block, a counter of EVENT regions in flight"},
    {"--into", "TRACE.json", OPT_TRACE, set_text, AT(into_arg),
     "the capture laid into a torch.profiler (Kineto)\n"
     "trace of the same run: OUT is TRACE with the\n"
     "lanes added on its time axis (host time), then\n"
     "moved the least that puts them all inside their\n"
     "kernel's slice (both are timed by the GPU's clock;\n"
     "IKP's and CUPTI's conversions to host time differ\n"
     "by about 1 us): the kernel slice at least as long\n"
     "as the capture (less a 32 ns tick a side) that\n"
     "overlaps it most, else is nearest, if the move is\n"
     "at most IKP's stated uncertainty + 5 us"},
    {"--kernel", "NAME", OPT_TRACE, set_text, AT(kernel_arg), "--into: only kernel slices whose name holds NAME"},
    {"--no-fit", NULL, OPT_TRACE, set_flag, AT(no_fit), "--into: IKP's own placement, not moved"},
    /* summary and diff */
    {"--json", NULL, OPT_JSON, set_flag, AT(json), "the figures as one JSON document (GUIDE.md)"},
    /* merge, and info of several captures */
    {"-o", "OUT.json|OUT.pftrace|OUT.zip", OPT_MERGE, set_output, 0,
     "the trace (default merged.json); OUT.zip: a\n"
     "Perfetto trace a capture and the manifest\n"
     "perfetto_manifest.json, one timeline in\n"
     "Perfetto v58+"},
    {"--raw", NULL, OPT_PLACE | OPT_EXPORT, set_flag, AT(mo.raw),
     "each GPU on its own clock (wrong across GPUs; a\n"
     "check)"},
    {"--align", "clocks|start|start=T1,T2,...", OPT_PLACE, set_align, 0,
     "clocks: by the best clock measurements the\n"
     "captures hold (default); start: each capture's\n"
     "first record at 0, or at T1, T2, ... ns (captures\n"
     "whose stamps give no GPU time: tirx, flashinfer,\n"
     "triton-dist)"},
    {"--labels", "a,b,...", OPT_MERGE | OPT_EXPORT, set_list, AT(labels),
     "names of the captures (default: rank and GPU)"},
    /* export */
    {"-o", "OUT.parquet|DIR/", OPT_EXPORT, set_output, 0,
     "the table (default ikp.parquet); DIR/: a file a\n"
     "capture, DIR/capture_index=K/ikp.parquet (Hive-\n"
     "style: read them all with one glob), DIR replaced\n"
     "whole or, if anything fails, left as it was"},
    {"--row-group", "ROWS", OPT_EXPORT, set_row_group, 0,
     "rows a row group at most (65536; a group also ends\n"
     "once its pages hold half the largest capture's\n"
     "buffer)"},
    {"--plain", NULL, OPT_EXPORT, set_flag, AT(eo.plain),
     "numbers PLAIN, not delta-encoded, for readers\n"
     "without DELTA_BINARY_PACKED (Spark before 3.3\n"
     "with its vectorized reader; the table about 9x\n"
     "larger)"},
    /* diff */
    {"--threshold", "PCT", OPT_DIFF, set_threshold, 0, "how much a measure must change to move, percent\n"
                                                        "(default 2)"},
    {"--min-change", "NS", OPT_DIFF, set_min_change, 0, "how much a measure must change to move, ns\n"
                                                         "(default 5)"},
    {"--fail-if-slower", "PCT", OPT_DIFF, set_fail_pct, 0,
     "exit status 3 when an event or the span is slower\n"
     "by a measure that moved more than PCT percent, or\n"
     "the new capture cannot stand in for the base\n"
     "(verdict incomplete: no records, an event missing,\n"
     "under half the count)"},
    /* report */
    {"-o", "REPORT.md", OPT_REPORT, set_output, 0,
     "the report (default: standard output), and beside\n"
     "it its picture, REPORT.svg"},
    {"--svg", "FILE.svg", OPT_REPORT, set_text, AT(svg_arg), "the picture, to FILE.svg"},
    {"--base", "BASE", OPT_REPORT, set_text, AT(base_arg), "adds a comparison with the capture BASE"},
    {"--wait", "EVENT,...|none", OPT_REPORT, set_text, AT(wait_arg),
     "the events that are waiting, not work (default:\n"
     "those named with the word wait, barrier, sync or\n"
     "stall; none: no event); the report says which it\n"
     "took"},
    {"--sms", "N", OPT_REPORT, set_sms, 0, "SMs in the timeline (default 8)"},
    {"--json", NULL, OPT_REPORT, set_flag, AT(json),
     "the report's facts as one JSON document, no\n"
     "picture (GUIDE.md)"},
    /* check-sass, and --names above */
    {"--list", NULL, OPT_SASS, set_flag, AT(list), "every region and the kernel's instructions in it"},
    {"--mangled", NULL, OPT_SASS, set_flag, AT(mangled), "kernels named as the listing has them, not\n"
                                                          "demangled"},
};
#define NUM_OPTIONS (sizeof options / sizeof options[0])
#define HELP_COLUMN 41

/* the option a names among the families; NULL if none */
static const tool_option *find_option(const char *a, unsigned families)
{
    size_t k;
    for (k = 0; k < NUM_OPTIONS; k++)
        if ((options[k].family & families) && !strcmp(a, options[k].flag)) return &options[k];
    return NULL;
}

/* 1 if option a takes a value (it is an error to end the line with it) */
static int takes_value(const char *a)
{
    const tool_option *o = find_option(a, OPT_ALL);
    return o && o->value;
}

/* says argv[i] is not taken: an option without its value, or not the command's, or an input too many; 2 */
static int refuse(int argc, char **argv, int i)
{
    fprintf(stderr, "ikp: error: %s '%s'\n%s", takes_value(argv[i]) && i + 1 >= argc ? "no value after" :
            "unexpected argument", argv[i], see_help);
    return 2;
}

/* Reads argv[2..] into g: the options of the families, and up to max
   inputs into g->files (standard input, -, among them only if stdin_ok).
   0 ok, 1 a bad file, 2 bad usage (said on stderr), at the first fault. */
static int parse_options(int argc, char **argv, args *g, unsigned families, uint32_t max, int stdin_ok)
{
    int rc = 0, i;
    for (i = 2; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        const tool_option *o = find_option(a, families);
        if (o && (!o->value || i + 1 < argc)) rc = o->set(g, o, o->value ? argv[++i] : NULL);
        else if (is_input(a) && g->n < max && (stdin_ok || strcmp(a, "-"))) g->files[g->n++] = a;
        else rc = refuse(argc, argv, i);
    }
    return rc;
}

/* g, before command c reads its arguments: 0, or 1 out of memory (said) */
static int args_init(args *g, const struct command *c, int argc)
{
    memset(g, 0, sizeof *g);
    g->c = c;
    g->out_format = -1;
    g->fail_pct = -1;
    g->files = (const char **)calloc((size_t)argc, sizeof *g->files);
    if (g->files) return 0;
    fprintf(stderr, "ikp: error: out of memory\n");
    return 1;
}

static void args_free(args *g)
{
    free(g->files);
    free(g->start_ns);
    ikp_name_list_free(&g->names);
    ikp_name_list_free(&g->groups);
    ikp_name_list_free(&g->labels);
}

/* the names --names and --groups gave, for decoding the captures */
static void decode_names(args *g)
{
    g->opt.event_names = (const char *const *)g->names.names;
    g->opt.num_event_names = g->names.count;
    g->opt.group_names = (const char *const *)g->groups.names;
    g->opt.num_group_names = g->groups.count;
}

/* ikp merge, and ikp info of several captures (which also takes how they
   are placed): 0 ok, 1 a bad file, 2 usage (said on stderr) */
static int parse_merge(int argc, char **argv, int info, args *m)
{
    int rc = parse_options(argc, argv, m, m->c->options | m->c->several_options, (uint32_t)argc, 1);
    uint32_t k;
    if (rc == 0 && m->n < 2 && !info) {
        fprintf(stderr, "ikp: error: merge needs at least two captures\n%s", see_help);
        rc = 2;
    }
    if (rc == 0 && m->start_ns && m->mo.align_start != (int)m->n + 1) {
        fprintf(stderr, "ikp: error: --align start= gives %d start times, %u captures are given\n",
                m->mo.align_start - 1, m->n);
        rc = 2;
    }
    if (rc == 0 && m->mo.align_start && m->mo.raw) {
        fprintf(stderr, "ikp: error: --raw and --align start place captures two ways: choose one\n");
        rc = 2;
    }
    if (m->mo.align_start) m->mo.align_start = 1;
    m->mo.start_ns = m->start_ns;
    m->mo.trace.by = m->copt.by; /* --by */
    if (rc == 0 && m->labels.count && m->labels.count != m->n) {
        fprintf(stderr, "ikp: error: --labels names %u captures, %u are given\n", m->labels.count, m->n);
        rc = 2;
    }
    if (!m->out) m->out = "merged.json";
    for (k = 0; k < m->n && rc == 0 && !info; k++)
        if (strcmp(m->out, "-") && same_file(m->files[k], m->out)) {
            fprintf(stderr, "ikp: error: -o %s names an input file: choose another output\n", m->out);
            rc = 2;
        }
    return rc;
}

/* the captures on one axis: by their clocks (--raw: raw ones), or by their first records */
static ikp_result place(const args *m, const ikp_capture *const *caps, ikp_alignment *al, ikp_error *e)
{
    if (m->mo.align_start) return ikp_merge_align_start(caps, m->n, m->mo.start_ns, al, e);
    return ikp_merge_align(caps, m->n, m->mo.raw, al, e);
}

/* `ikp info A B ...`: each capture, then how they are placed */
static int merge_info(args *m, ikp_capture **caps, ikp_alignment *al)
{
    ikp_stats *st = NULL;
    ikp_error e;
    uint32_t k;
    int rc = 0;
    for (k = 0; k < m->n && rc == 0; k++) {
        if (m->n > 1) printf("%s== %s\n", k ? "\n" : "", m->files[k]);
        if (ikp_stats_compute(caps[k], &st, &e) != IKP_OK) return fail(m->files[k], &e);
        rc = print_stats_text(st, 1, m->files[k]);
        ikp_stats_free(st);
        print_device(caps[k]);
    }
    if (rc == 0 && m->n > 1) {
        printf("\n");
        if (place(m, (const ikp_capture *const *)caps, al, &e) != IKP_OK)
            printf("alignment   none: %s\n", e.message);
        else print_alignment(stdout, (const ikp_capture *const *)caps, m->files, m->n, al, NULL);
    }
    if (fflush(stdout) != 0) { fprintf(stderr, "ikp: error: cannot write to standard output: %s\n", strerror(errno)); rc = 1; }
    return rc;
}

/* `ikp merge`: place the captures, then write one trace */
static int merge_write(args *m, ikp_capture **caps, ikp_alignment *al)
{
    const ikp_capture *const *cc = (const ikp_capture *const *)caps;
    char note[256];
    merge_job job;
    ikp_error e;
    int rc;
    job.zip = strlen(m->out) >= 4 && !strcmp(m->out + strlen(m->out) - 4, ".zip"); /* as ikp_write_merged_path */
    if (job.zip && m->out_format == 0) {
        fprintf(stderr, "ikp: error: -o %s: an archive holds Perfetto traces (leave out --output-format json)\n",
                m->out);
        return 2;
    }
    if (job.zip && m->host_time) {
        fprintf(stderr, "ikp: error: -o %s: an archive's traces are each on its own capture's time, placed by its "
                "manifest (leave out --time host)\n", m->out);
        return 2;
    }
    if (place(m, cc, al, &e) != IKP_OK) return fail("merge", &e);
    warn_disagreements(cc, NULL, m->n, al);
    if (m->host_time) {
        int64_t hz;
        uint32_t hu;
        if (ikp_merge_host_zero(cc, m->n, al, &hz, &hu, &e) != IKP_OK) {
            fprintf(stderr, "ikp: error: --time host: %s\n", e.message);
            return 1;
        }
        snprintf(note, sizeof note, "IKP: times are host CLOCK_REALTIME ns; time 0 of the merged trace is "
                 "%lld ns +- %u ns", (long long)hz, hu);
        m->mo.trace.time_base_ns = (uint64_t)hz;
        m->mo.trace.time_note = note;
    }
    m->mo.labels = m->labels.count ? (const char *const *)m->labels.names : NULL;
    job.caps = cc;
    job.n = m->n;
    job.opt = &m->mo;
    job.perfetto = m->out_format < 0 ? ikp_is_perfetto_path(m->out) : m->out_format;
    if ((rc = write_out(m->out, merge_body, &job, "trace"))) return rc;
    if (job.zip)
        fprintf(stderr, "ikp: wrote %s (a ZIP of %u Perfetto traces, one a capture, on one time axis, and "
                "perfetto_manifest.json)\n", m->out, m->n);
    else
        fprintf(stderr, "ikp: wrote %s (%s trace of %u captures)\n", strcmp(m->out, "-") ? m->out : "standard output",
                job.perfetto ? "Perfetto" : "Chrome JSON", m->n);
    print_alignment(stderr, cc, m->files, m->n, al, m->mo.labels);
    return 0;
}

/* ikp merge, and ikp info of several captures */
static int cmd_merge(const command *c, int argc, char **argv, int info)
{
    ikp_capture **caps = NULL;
    ikp_alignment *al = NULL;
    args m;
    ikp_error e;
    uint32_t k;
    int rc;
    if (args_init(&m, c, argc)) return 1;
    rc = parse_merge(argc, argv, info, &m);
    caps = (ikp_capture **)calloc(m.n ? m.n : 1, sizeof *caps);
    al = (ikp_alignment *)calloc(m.n ? m.n : 1, sizeof *al);
    if (rc == 0 && (!caps || !al)) { fprintf(stderr, "ikp: error: out of memory\n"); rc = 1; }
    decode_names(&m);
    for (k = 0; k < m.n && rc == 0; k++)
        if (open_input(m.files[k], &m.opt, &caps[k], &e) != IKP_OK) rc = fail(m.files[k], &e);
    if (rc == 0) rc = info ? merge_info(&m, caps, al) : merge_write(&m, caps, al);
    for (k = 0; caps && k < m.n; k++) ikp_capture_free(caps[k]);
    free(caps);
    free(al);
    args_free(&m);
    return rc;
}

/* ikp export: 0 ok, 1 a bad file, 2 usage (said on stderr) */
static int parse_export(int argc, char **argv, args *g)
{
    int rc = parse_options(argc, argv, g, g->c->options, (uint32_t)argc, 0); /* each read twice: no - */
    if (rc == 0 && g->n == 0) {
        fprintf(stderr, "ikp: error: export needs at least one capture file\n%s", see_help);
        rc = 2;
    }
    if (rc == 0 && g->labels.count && g->labels.count != g->n) {
        fprintf(stderr, "ikp: error: --labels names %u captures, %u are given\n", g->labels.count, g->n);
        rc = 2;
    }
    if (rc == 0 && !strcmp(g->out, "-")) g->out = "/dev/stdout";
    return rc;
}

/* -o DIR/: the export is written into a new directory beside DIR (DIR's
   name + ".ikp-tmp-XXXXXX"), a folder capture_index=K a capture (K from 1),
   and put in DIR's place only when every file of it is written: DIR is
   replaced whole (an earlier export's folders leave with it) or not at all.
   DIR may be new, empty or an earlier export (folders capture_index=K, each
   holding ikp.parquet alone); anything else in it is refused, as is an
   input inside it. */
typedef struct dir_export {
    char *final;   /* DIR, its trailing '/' dropped (resolved when it exists) */
    char *tmp;     /* the new directory beside it */
    char **outs;   /* the file of capture k: tmp/capture_index=K/ikp.parquet */
    uint32_t n;
    int existed;   /* DIR was there (empty, or an earlier export) */
    mode_t mode;   /* DIR's permissions: its own, or a new directory's */
    uint32_t replaced; /* the earlier export's folders */
} dir_export;

/* file identities, sorted, for looking up one file among many (stat once each) */
typedef struct file_id { dev_t dev; ino_t ino; } file_id;
static int file_id_cmp(const void *pa, const void *pb)
{
    const file_id *a = (const file_id *)pa, *b = (const file_id *)pb;
    if (a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
    return a->ino < b->ino ? -1 : a->ino > b->ino;
}

/* 1 if s is "capture_index=" and a number */
static int is_capture_folder(const char *s)
{
    const char *p = "capture_index=";
    if (strncmp(s, p, strlen(p))) return 0;
    s += strlen(p);
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* removes dir, its folders and the files in them (what an export writes:
   nothing deeper); 0 when all of it went */
static int remove_export_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t m = strlen(dir) + 600;
    char *p = (char *)malloc(m);
    int bad = !d || !p;
    while (d && p && (de = readdir(d)) != NULL) {
        DIR *sub;
        struct dirent *se;
        size_t at;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        at = (size_t)snprintf(p, m, "%s/%s", dir, de->d_name);
        if (unlink(p) == 0) continue;
        if ((sub = opendir(p)) != NULL) {
            while ((se = readdir(sub)) != NULL)
                if (strcmp(se->d_name, ".") && strcmp(se->d_name, "..")) {
                    snprintf(p + at, m - at, "/%s", se->d_name);
                    if (unlink(p) != 0) bad = 1;
                }
            closedir(sub);
            p[at] = 0;
        }
        if (rmdir(p) != 0) bad = 1;
    }
    if (d) closedir(d);
    free(p);
    return bad | (rmdir(dir) != 0);
}

/* 2, said: DIR holds what (a file or folder of its own) */
static int export_dir_foreign(const char *dir, const char *what, const char *within)
{
    fprintf(stderr, "ikp: error: -o %s/: the directory holds '%s%s%s', which no export wrote: give a new or empty "
            "directory, or an earlier export's (replaced whole)\n", dir, what, within ? "/" : "", within ? within : "");
    return 2;
}

/* Checks what DIR holds (see above) against the inputs. 0 ok; 2 refused
   (said); 1 failed (said). *folders: its capture_index=K folders' count */
static int export_dir_check(const char *dir, const args *g, uint32_t *folders)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    file_id *ids = (file_id *)malloc((g->n ? g->n : 1) * sizeof *ids);
    size_t m = strlen(dir) + 300, nid = 0;
    char *p = (char *)malloc(m);
    uint32_t k;
    int rc = 0;
    *folders = 0;
    if (!d || !ids || !p) {
        if (!d) fprintf(stderr, "ikp: error: %s: cannot read the directory: %s\n", dir, strerror(errno));
        else fprintf(stderr, "ikp: error: out of memory\n");
        if (d) closedir(d);
        free(ids);
        free(p);
        return 1;
    }
    for (k = 0; k < g->n; k++) { /* each input stat'd once */
        struct stat st;
        if (stat(g->files[k], &st) == 0) { ids[nid].dev = st.st_dev; ids[nid].ino = st.st_ino; nid++; }
    }
    qsort(ids, nid, sizeof *ids, file_id_cmp);
    while (rc == 0 && (de = readdir(d)) != NULL) {
        DIR *sub;
        struct dirent *se;
        struct stat st;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        snprintf(p, m, "%s/%s", dir, de->d_name);
        if (!is_capture_folder(de->d_name) || lstat(p, &st) != 0 || !S_ISDIR(st.st_mode) || !(sub = opendir(p))) {
            rc = export_dir_foreign(dir, de->d_name, NULL);
            break;
        }
        (*folders)++;
        while (rc == 0 && (se = readdir(sub)) != NULL) {
            file_id id;
            if (!strcmp(se->d_name, ".") || !strcmp(se->d_name, "..")) continue;
            snprintf(p, m, "%s/%s/%s", dir, de->d_name, se->d_name);
            if (strcmp(se->d_name, "ikp.parquet") || lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
                rc = export_dir_foreign(dir, de->d_name, se->d_name);
            else {
                id.dev = st.st_dev;
                id.ino = st.st_ino;
                if (nid && bsearch(&id, ids, nid, sizeof *ids, file_id_cmp)) {
                    fprintf(stderr, "ikp: error: -o %s/ would replace %s, an input file: choose another output\n",
                            dir, p);
                    rc = 2;
                }
            }
        }
        closedir(sub);
    }
    closedir(d);
    free(ids);
    free(p);
    return rc;
}

/* Makes the new directory and its folders (see above). 0 ok, 1 failed, 2
   refused (said) */
static int export_dirs(const char *out, const args *g, dir_export *x)
{
    size_t len = strlen(out);
    struct stat st;
    uint32_t k;
    int rc;
    memset(x, 0, sizeof *x);
    x->n = g->n;
    while (len > 1 && out[len - 1] == '/') len--;
    if (!(x->final = (char *)malloc(len + 1)) || !(x->outs = (char **)calloc(g->n, sizeof *x->outs))) {
        fprintf(stderr, "ikp: error: out of memory\n");
        return 1;
    }
    memcpy(x->final, out, len);
    x->final[len] = 0;
    x->mode = umask(0);
    umask(x->mode);
    x->mode = 0777 & ~x->mode;
    if (!strcmp(x->final, "/") || !strcmp(x->final, ".") || !strcmp(x->final, "..")) {
        fprintf(stderr, "ikp: error: -o %s: name a directory of its own for the export (it is replaced whole)\n",
                out);
        return 2;
    }
    if (stat(x->final, &st) == 0) {
        char *real;
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "ikp: error: -o %s: %s is not a directory\n", out, x->final);
            return 2;
        }
        if ((rc = export_dir_check(x->final, g, &x->replaced)) != 0) return rc;
        if (!(real = realpath(x->final, NULL))) { /* a link to it: the directory it names is replaced */
            fprintf(stderr, "ikp: error: %s: %s\n", x->final, strerror(errno));
            return 1;
        }
        free(x->final);
        x->final = real;
        x->existed = 1;
        x->mode = st.st_mode & 07777;
    } else if (errno != ENOENT) {
        fprintf(stderr, "ikp: error: -o %s: %s\n", out, strerror(errno));
        return 1;
    }
    len = strlen(x->final);
    if (!(x->tmp = (char *)malloc(len + 24))) { fprintf(stderr, "ikp: error: out of memory\n"); return 1; }
    snprintf(x->tmp, len + 24, "%s.ikp-tmp-XXXXXX", x->final);
    if (!mkdtemp(x->tmp)) {
        fprintf(stderr, "ikp: error: -o %s: cannot make a directory beside it: %s\n", out, strerror(errno));
        free(x->tmp);
        x->tmp = NULL;
        return 1;
    }
    if (chmod(x->tmp, x->mode) != 0) { /* mkdtemp's is 0700 */
        fprintf(stderr, "ikp: error: %s: %s\n", x->tmp, strerror(errno));
        return 1;
    }
    for (k = 0; k < g->n; k++) {
        size_t m = len + 64;
        if (!(x->outs[k] = (char *)malloc(m))) { fprintf(stderr, "ikp: error: out of memory\n"); return 1; }
        snprintf(x->outs[k], m, "%s/capture_index=%u", x->tmp, k + 1);
        if (mkdir(x->outs[k], 0777) != 0) {
            fprintf(stderr, "ikp: error: %s: cannot make the directory: %s\n", x->outs[k], strerror(errno));
            return 1;
        }
        strcat(x->outs[k], "/ikp.parquet");
    }
    return 0;
}

/* Puts the written directory in DIR's place: DIR (when it was there) is
   moved aside first, then removed. 0 ok, 1 failed (said; DIR as it was) */
static int export_dir_commit(dir_export *x)
{
    char *old = NULL;
    size_t len = strlen(x->final) + 24;
    if (x->existed) {
        if (!(old = (char *)malloc(len))) { fprintf(stderr, "ikp: error: out of memory\n"); return 1; }
        snprintf(old, len, "%s.ikp-old-XXXXXX", x->final);
        if (!mkdtemp(old) || rename(x->final, old) != 0) { /* onto the empty directory just made */
            fprintf(stderr, "ikp: error: %s: cannot move the earlier export aside: %s\n", x->final, strerror(errno));
            if (old[0]) rmdir(old);
            free(old);
            return 1;
        }
    }
    if (rename(x->tmp, x->final) != 0) {
        fprintf(stderr, "ikp: error: %s: cannot put the export in place: %s\n", x->final, strerror(errno));
        if (old && rename(old, x->final) != 0)
            fprintf(stderr, "ikp: error: the earlier export is now %s: %s\n", old, strerror(errno));
        free(old);
        return 1;
    }
    free(x->tmp);
    x->tmp = NULL;
    if (old && remove_export_tree(old))
        fprintf(stderr, "ikp: warning: %s (the earlier export, moved aside) could not be removed in full\n", old);
    free(old);
    return 0;
}

/* removes the new directory when it was not put in place; frees x */
static void export_dir_free(dir_export *x)
{
    uint32_t k;
    if (x->tmp) remove_export_tree(x->tmp);
    for (k = 0; x->outs && k < x->n; k++) free(x->outs[k]);
    free(x->outs);
    free(x->final);
    free(x->tmp);
}

/* 2 if the output (one file) is an input file (said), else 0 */
static int export_over_input(const args *g)
{
    struct stat so, si;
    uint32_t k;
    if (stat(g->out, &so) != 0) return 0; /* the output stat'd once */
    for (k = 0; k < g->n; k++)
        if (stat(g->files[k], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
            fprintf(stderr, "ikp: error: -o %s names an input file: choose another output\n", g->out);
            return 2;
        }
    return 0;
}

/* `ikp export`: every region and instant as a Parquet table: one file, or
   with -o DIR/ a file per capture in a Hive-style layout,
   DIR/capture_index=K/ikp.parquet (K from 1, in the order given), all on one
   time axis. The captures are read one at a time (twice). */
static int cmd_export(const command *c, int argc, char **argv)
{
    dir_export x;
    int dir = 0;
    ikp_error e;
    args g;
    int rc;
    memset(&x, 0, sizeof x);
    if (args_init(&g, c, argc)) return 1;
    g.out = "ikp.parquet";
    rc = parse_export(argc, argv, &g);
    if (rc == 0 && g.out[strlen(g.out) - 1] == '/') { /* a file a capture, Hive-style */
        dir = 1;
        rc = export_dirs(g.out, &g, &x);
    } else if (rc == 0) rc = export_over_input(&g);
    decode_names(&g);
    g.opt.option_names = &tool_names;
    g.eo.raw = g.mo.raw;
    g.eo.labels = g.labels.count ? (const char *const *)g.labels.names : NULL;
    if (rc == 0 && !(g.eo.alignment = (ikp_alignment *)calloc(g.n, sizeof *g.eo.alignment))) {
        fprintf(stderr, "ikp: error: out of memory\n");
        rc = 1;
    }
    if (rc == 0) {
        const char *const one[1] = {g.out};
        if (ikp_export_parquet_files(g.files, g.n, &g.opt, &g.eo, dir ? (const char *const *)x.outs : one,
                                     dir ? g.n : 1, &e) != IKP_OK)
            rc = fail("export", &e);
        else if (!dir || (rc = export_dir_commit(&x)) == 0) {
            if (x.replaced)
                fprintf(stderr, "ikp: wrote %s (Parquet: %u capture%s, a file each under capture_index=K/; the "
                        "earlier export there, %u capture%s, replaced)\n", g.out, g.n, g.n == 1 ? "" : "s",
                        x.replaced, x.replaced == 1 ? "" : "s");
            else fprintf(stderr, "ikp: wrote %s (Parquet: %u capture%s%s)\n", g.out, g.n, g.n == 1 ? "" : "s",
                         dir ? ", a file each under capture_index=K/" : "");
            warn_disagreements(NULL, g.files, g.n, g.eo.alignment); /* as merge warns */
        }
    }
    free(g.eo.alignment);
    export_dir_free(&x);
    args_free(&g);
    return rc;
}

/* ikp trace|summary|info|diff|report: 0 ok, 1 a bad file, 2 usage (said on stderr) */
static int parse_args(int argc, char **argv, args *g)
{
    int rc = parse_options(argc, argv, g, g->c->options, (uint32_t)g->c->inputs, 1);
    if (rc) return rc;
    g->in = g->n > 0 ? g->files[0] : NULL;
    g->in2 = g->n > 1 ? g->files[1] : NULL;
    if (!g->in || (g->c->inputs == 2 && !g->in2)) {
        fprintf(stderr, "ikp: error: %s\n%s", g->c->inputs == 2 ? "diff needs two input files: BASE NEW" : "no input file",
                see_help);
        return 2;
    }
    if ((g->kernel_arg || g->no_fit) && !g->into_arg) {
        fprintf(stderr, "ikp: error: %s goes with --into (how the capture is fitted into a torch trace)\n%s",
                g->kernel_arg ? "--kernel" : "--no-fit", see_help);
        return 2;
    }
    if (g->kernel_arg && (g->no_fit || !g->kernel_arg[0])) {
        fprintf(stderr, "ikp: error: %s\n%s", g->no_fit ? "--kernel picks the slice to fit into, --no-fit fits "
                "none: choose one" : "--kernel needs a name (or part of one)", see_help);
        return 2;
    }
    if ((g->c->options & OPT_TRACE) && !g->out) g->out = "trace.json";
    if (g->out && strcmp(g->out, "-") && (same_file(g->in, g->out) || (g->base_arg && same_file(g->base_arg, g->out)))) {
        fprintf(stderr, "ikp: error: -o %s names the input file%s: choose another output\n", g->out,
                same_file(g->in, g->out) ? "" : " given with --base");
        return 2;
    }
    return 0;
}

/* ikp diff BASE NEW */
static int cmd_diff(args *g, const ikp_capture *base, const ikp_capture *next)
{
    ikp_diff *diff = NULL;
    ikp_error e;
    char why[256];
    int rc;
    if (ikp_diff_compute(base, next, &g->dopt, &diff, &e) != IKP_OK) return fail(g->in2, &e);
    if ((g->json ? ikp_diff_write_json : ikp_diff_write_text)(diff, ikp_file_writer, stdout, &e) != IKP_OK ||
        fflush(stdout) != 0) {
        fprintf(stderr, "ikp: error: cannot write to standard output: %s\n", strerror(errno));
        rc = 1;
    } else if (g->fail_pct >= 0 && ikp_diff_incomplete(diff, 0, why, sizeof why)) {
        fprintf(stderr, "ikp: %s cannot stand in for %s: %s (--fail-if-slower)\n", g->in2, g->in, why);
        rc = 3;
    } else if (g->fail_pct >= 0 && ikp_diff_slower_than(diff, g->fail_pct / 100)) {
        fprintf(stderr, "ikp: %s is slower than %s by more than %g%% (--fail-if-slower)\n", g->in2, g->in, g->fail_pct);
        rc = 3;
    } else rc = 0;
    ikp_diff_free(diff);
    return rc;
}

/* where the report's picture goes: --svg, or REPORT.md -> REPORT.svg, or
   none (the report on standard output); *oom when it could not be made */
static char *report_svg_path(const args *g, const char *out, int *oom)
{
    char *svg = NULL;
    size_t n = strlen(out);
    if (g->svg_arg) svg = strdup(g->svg_arg);
    else if (strcmp(out, "-") && (svg = (char *)malloc(n + 5)) != NULL) {
        memcpy(svg, out, n + 1);
        if (n > 3 && !strcmp(out + n - 3, ".md")) svg[n - 3] = 0;
        strcat(svg, ".svg");
    }
    *oom = (g->svg_arg || strcmp(out, "-")) && !svg;
    return svg;
}

/* path with its directory resolved (realpath), malloc'd; NULL when that
   directory does not exist */
static char *resolve_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? (char *)malloc((size_t)(slash - path) + 2) : NULL, *real, *out = NULL;
    if (slash && !dir) return NULL;
    if (dir) {
        memcpy(dir, path, (size_t)(slash - path));
        if (slash == path) dir[0] = '/'; /* "/x": the root */
        dir[slash == path ? 1 : slash - path] = 0;
    }
    real = realpath(dir ? dir : ".", NULL);
    if (real && (out = (char *)malloc(strlen(real) + strlen(path) + 2)) != NULL)
        sprintf(out, "%s/%s", strcmp(real, "/") ? real : "", slash ? slash + 1 : path);
    free(dir);
    free(real);
    return out;
}

/* the picture's link in the report: its path relative to the report's
   directory (both resolved), malloc'd; NULL when either directory does
   not exist */
static char *relative_link(const char *report, const char *picture)
{
    char *a = resolve_dir(report), *b = resolve_dir(picture), *out = NULL;
    if (a && b) {
        size_t i = 0, common = 0, up = 0, k;
        for (; a[i] && a[i] == b[i]; i++)
            if (a[i] == '/') common = i + 1; /* after the last '/' both share */
        for (k = common; a[k]; k++) up += a[k] == '/'; /* directories of the report's below it */
        if ((out = (char *)malloc(3 * up + strlen(b + common) + 1)) != NULL) {
            out[0] = 0;
            for (k = 0; k < up; k++) strcat(out, "../");
            strcat(out, b + common);
        }
    }
    free(a);
    free(b);
    return out;
}

/* the whole of the torch trace that --into names, into *m: 0 ok, 1 failed (said) */
static int read_torch(const char *path, membuf_ *m)
{
    FILE *f = open_regular(path, "--into ");
    if (!f) return 1;
    for (;;) {
        char b[65536];
        size_t k = fread(b, 1, sizeof b, f);
        if (k && mem_writer(m, b, k)) { fclose(f); fprintf(stderr, "ikp: error: out of memory\n"); return 1; }
        if (k < sizeof b) break;
    }
    if (ferror(f)) { fclose(f); fprintf(stderr, "ikp: error: --into %s: %s\n", path, strerror(errno)); return 1; }
    fclose(f);
    return 0;
}

/* IKP's own placement of the capture on the torch trace's axis: ns *t0 to
   *t0 + *span after its base (the span as the trace writes its times, in
   whole ns). 0 ok, 1 none (said). */
static int into_place(const args *g, const ikp_capture *cap, uint64_t base, int64_t *t0, int64_t *span)
{
    const ikp_capture_info *ci = ikp_capture_get_info(cap);
    ikp_error e;
    if (!ci->host_time_known) {
        int64_t hz;
        ikp_capture_host_zero(cap, &hz, NULL, &e);
        fprintf(stderr, "ikp: error: --into needs host time: %s: %s\n", g->in, e.message);
        return 1;
    }
    if (ci->host_zero_ns < 0 || (uint64_t)ci->host_zero_ns < base) {
        fprintf(stderr, "ikp: error: --into %s: the capture's time 0 (%lld ns) is before the trace's "
                "baseTimeNanoseconds (%llu): not the same run?\n", g->into_arg, (long long)ci->host_zero_ns,
                (unsigned long long)base);
        return 1;
    }
    *t0 = (int64_t)((uint64_t)ci->host_zero_ns - base);
    *span = ci->span_ps > 0 ? (ci->span_ps + 500) / 1000 : 0;
    return 0;
}

/* What IKP's times are is stated in the trace as a top-level key after
   traceEvents: "ikp_time", or "ikp_time_K" beside those of the captures
   laid in before (bit K of ikp_keys), into key. Each capture laid in gets
   processes of its own: the K-th from 2^30 - (K - 1) 2^24, above any
   process id of the trace's (Linux: < 2^22), into g->copt.pid_base.
   0 ok, 1 no room for it (said). */
static int into_key(args *g, const ikp_capture_info *ci, uint64_t ikp_keys, char *key, size_t size)
{
    int k;
    for (k = 1; k < 64 && (ikp_keys >> k & 1); k++) {}
    if (k == 64) {
        fprintf(stderr, "ikp: error: --into %s: it holds 63 IKP captures already\n", g->into_arg);
        return 1;
    }
    if (k == 1) snprintf(key, size, "ikp_time");
    else snprintf(key, size, "ikp_time_%d", k);
    if (ci->num_blocks >= (1u << 24)) {
        fprintf(stderr, "ikp: error: --into: %s has %u blocks, more processes than a capture laid in may have (2^24)\n",
                g->in, ci->num_blocks);
        return 1;
    }
    g->copt.pid_base = ((uint64_t)1 << 30) - (uint64_t)(k - 1) * ((uint64_t)1 << 24);
    return 0;
}

/* ,"KEY":"NOTE" into *nj, the note saying what the capture's times are
   and how it was placed. 0 ok, 1 out of memory (said). */
static int into_note(const args *g, const ikp_capture_info *ci, uint64_t base, const kernel_fit *fit, const char *key,
                     membuf_ *nj)
{
    char note[640];
    snprintf(note, sizeof note, "%s (%s capture, %u lanes, processes from %llu): times are host CLOCK_REALTIME "
             "ns less the torch.profiler trace's baseTimeNanoseconds %llu; time 0 of the capture is %lld ns +- %u ns "
             "by IKP's clock readings, ", g->in, ikp_format_name(ci->format), ci->active_lanes,
             (unsigned long long)g->copt.pid_base, (unsigned long long)base, (long long)ci->host_zero_ns,
             ci->host_zero_uncertainty_ns);
    if (fit->fitted) snprintf(note + strlen(note), sizeof note - strlen(note), "moved %+lld ns into kernel slice '",
                              (long long)fit->shift);
    else snprintf(note + strlen(note), sizeof note - strlen(note), "not moved (%s)", fit->why);
    if (mem_writer(nj, ",\"", 2) || put_json_text(nj, key) || mem_writer(nj, "\":\"", 3) ||
        put_json_text(nj, note) || (fit->fitted && (put_json_text(nj, fit->name ? fit->name : "") ||
                                                     mem_writer(nj, "'", 1))) ||
        mem_writer(nj, "\"", 1)) {
        fprintf(stderr, "ikp: error: out of memory\n");
        return 1;
    }
    return 0;
}

/* IKP's own Chrome JSON of the capture into *ikp, its time 0 at ns at on
   the trace's axis; job's events: the inside of its traceEvents array.
   0 ok, else the exit status (said). */
static int into_events(args *g, const ikp_capture *cap, int64_t at, membuf_ *ikp, into_job *job)
{
    const char *end;
    ikp_error e;
    g->copt.time_base_ns = (uint64_t)at; /* at >= 0: fit_kernel saw to it */
    g->copt.absolute_ts = 1;             /* on the trace's axis as it is, past 2^53 ns too */
    if (ikp_write_chrome(cap, &g->copt, mem_writer, ikp, &e) != IKP_OK) return fail(g->in, &e);
    if (mem_writer(ikp, "", 1)) { fprintf(stderr, "ikp: error: out of memory\n"); return 1; } /* a C string */
    /* IKP's own JSON: {"traceEvents":[ ... \n],"displayTimeUnit":... */
    end = ikp->p ? strstr(ikp->p, "\n],\"displayTimeUnit\"") : NULL;
    if (!end || ikp->n < 16 || memcmp(ikp->p, "{\"traceEvents\":[", 16)) {
        fprintf(stderr, "ikp: error: internal: unexpected trace layout\n");
        return 1;
    }
    job->events = ikp->p + 16;
    job->events_n = (size_t)(end - job->events);
    return 0;
}

/* what `ikp trace --into` says after writing */
static void into_wrote(const args *g, const ikp_capture_info *ci, const kernel_fit *fit)
{
    fprintf(stderr, "ikp: wrote %s (%s with a %s capture's %u active lanes laid in on its time axis, +- %u ns), ",
            strcmp(g->out, "-") ? g->out : "standard output", g->into_arg, ikp_format_name(ci->format),
            ci->active_lanes, ci->host_zero_uncertainty_ns);
    if (fit->fitted)
        fprintf(stderr, "fitted into kernel slice '%s' (shifted by %+lld ns)\n", fit->name ? fit->name : "",
                (long long)fit->shift);
    else fprintf(stderr, "IKP's own placement (%s)\n", fit->why);
    trace_notes(g, ci, g->copt.stats);
}

/* ikp trace IN --into TORCH.json -o OUT */
static int trace_into(args *g, const ikp_capture *cap)
{
    const ikp_capture_info *ci = ikp_capture_get_info(cap);
    membuf_ torch = {0, 0, 0}, ikp = {0, 0, 0}, nj = {0, 0, 0};
    uint64_t base = 0, ikp_keys = 0;
    const char *why = NULL, *open = NULL;
    int64_t t0, span;
    into_job job;
    kernel_fit fit;
    char key[16];
    int rc = 1;
    memset(&fit, 0, sizeof fit);
    if (read_torch(g->into_arg, &torch)) goto done;
    if (torch_scan(torch.p ? torch.p : "", torch.n, &base, &open, &job.close, &job.empty, &ikp_keys, &why)) {
        fprintf(stderr, "ikp: error: --into %s: %s\n", g->into_arg, why);
        goto done;
    }
    if (into_place(g, cap, base, &t0, &span)) goto done;
    if (g->no_fit) snprintf(fit.why, sizeof fit.why, "--no-fit");
    else if (fit_kernel(open, job.close, t0, span, (int64_t)ci->host_zero_uncertainty_ns + FIT_SLACK_NS,
                        g->kernel_arg, g->into_arg, &fit))
        goto done;
    if (into_key(g, ci, ikp_keys, key, sizeof key) || into_note(g, ci, base, &fit, key, &nj)) goto done;
    job.note = nj.p;
    job.note_n = nj.n;
    if ((rc = into_events(g, cap, t0 + fit.shift, &ikp, &job))) goto done;
    job.torch = torch.p;
    job.torch_n = torch.n;
    if ((rc = write_out(g->out, into_body, &job, "trace"))) goto done;
    into_wrote(g, ci, &fit);
done:
    free(torch.p);
    free(ikp.p);
    free(nj.p);
    free(fit.name);
    return rc;
}

/* ikp report IN [--base BASE] */
static int cmd_report(args *g, const ikp_capture *cap, const ikp_capture *base)
{
    ikp_report_md_options md;
    ikp_report *rep = NULL;
    ikp_diff *diff = NULL;
    uint32_t *wait_ids = NULL, nwait = 0;
    const char *out = g->out ? g->out : "-";
    char *svg_path = NULL, *link = NULL;
    report_job job;
    ikp_error e;
    int rc = 0, oom = 0;
    memset(&md, 0, sizeof md);
    if (g->wait_arg && !strcmp(g->wait_arg, "none")) g->ropt.no_wait_names = 1; /* not even those named so */
    else if (g->wait_arg && (rc = parse_events(cap, "--wait", g->wait_arg, 0, &wait_ids, &nwait))) goto done;
    g->ropt.wait_events = wait_ids;
    g->ropt.num_wait_events = nwait;
    g->ropt.device = g->device;
    if (ikp_report_compute(cap, &g->ropt, &rep, &e) != IKP_OK) { rc = fail(g->in, &e); goto done; }
    if (base && ikp_diff_compute(base, cap, &g->dopt, &diff, &e) != IKP_OK) { rc = fail(g->base_arg, &e); goto done; }
    if (g->json) { /* the facts as JSON: no picture */
        md.baseline = diff;
        job.rep = rep;
        job.md = &md;
        job.json = 1;
        if (g->svg_arg) { fprintf(stderr, "ikp: error: --json writes no picture: leave out --svg\n"); rc = 2; goto done; }
        if ((rc = write_out(out, report_body, &job, "report"))) goto done;
        if (strcmp(out, "-")) fprintf(stderr, "ikp: wrote %s\n", out);
        warn_placement(g->in, ikp_capture_get_info(cap));
        goto done;
    }
    job.json = 0;
    svg_path = report_svg_path(g, out, &oom);
    if (oom) { fprintf(stderr, "ikp: error: out of memory\n"); rc = 1; goto done; }
    if (svg_path && (same_file(g->in, svg_path) || (g->base_arg && same_file(g->base_arg, svg_path)))) {
        fprintf(stderr, "ikp: error: the picture %s would replace an input file: choose another with --svg\n", svg_path);
        rc = 2;
        goto done;
    }
    if (svg_path && strcmp(out, "-")) {
        char *ro = resolve_dir(out), *rs = resolve_dir(svg_path);
        int same = ro && rs && !strcmp(ro, rs);
        free(ro);
        free(rs);
        if (same || same_file(out, svg_path)) {
            fprintf(stderr, "ikp: error: the picture %s and the report %s are one file: choose another with --svg\n",
                    svg_path, out);
            rc = 2;
            goto done;
        }
        /* linked relative to the report, wherever each goes */
        if (!(link = relative_link(out, svg_path))) {
            fprintf(stderr, "ikp: error: cannot write %s and %s: %s\n", out, svg_path, strerror(errno));
            rc = 1;
            goto done;
        }
    }
    md.source = g->in;
    md.baseline = diff;
    md.svg_path = link ? link : svg_path; /* on standard output: as given */
    job.rep = rep;
    job.md = NULL;
    if (svg_path && (rc = write_out(svg_path, report_body, &job, "picture"))) goto done;
    job.md = &md;
    if ((rc = write_out(out, report_body, &job, "report"))) goto done;
    if (strcmp(out, "-")) fprintf(stderr, "ikp: wrote %s%s%s\n", out, svg_path ? " and " : "", svg_path ? svg_path : "");
    else if (svg_path) fprintf(stderr, "ikp: wrote %s\n", svg_path);
    warn_placement(g->in, ikp_capture_get_info(cap));
done:
    ikp_report_free(rep);
    ikp_diff_free(diff);
    free(wait_ids);
    free(svg_path);
    free(link);
    return rc;
}

/* what `ikp trace` says after writing: flows, counters, warnings */
static void trace_notes(const args *g, const ikp_capture_info *ci, const ikp_trace_stats *tst)
{
    warn_placement(g->in, ci);
    if (g->copt.num_flows)
        fprintf(stderr, "ikp: %llu flows drawn; %llu links not drawn (the TO event does not come after the FROM "
                "event); %llu events without a partner\n", (unsigned long long)tst->flows,
                (unsigned long long)tst->flows_unordered, (unsigned long long)tst->flow_unpaired);
    if (g->copt.num_counters)
        fprintf(stderr, "ikp: %llu counter tracks\n", (unsigned long long)tst->counter_tracks);
    if (ci->dropped || ci->invalid || ci->backwards || ci->unfinalized_lanes || ci->corrupt_lanes ||
        ci->refused_lanes || ci->claimed_twice || ci->out_of_range || ci->after_finalize || ci->past_count ||
        ci->duplicate_lanes || ci->bad_sm_lanes ||
        ci->may_wrap)
        fprintf(stderr, "ikp: warning: %s has dropped, invalid, damaged or ambiguous records: see `ikp info %s`\n",
                g->in, g->in);
    if (ci->units_inferred)
        fprintf(stderr, "ikp: note: %u units of %u words inferred from the data (--units N to say)\n",
                ci->num_blocks, ci->unit_words);
}

/* a Proton capture's cross-warp pairs: "<scope> (out)" to "<scope> (in)"
   for every scope with both (the reader names them so, the bind_id their
   payload); the ids into *ids as from, to, ... (malloc'ed), 0 ok, 1 out of memory */
static int proton_flows(const ikp_capture *cap, uint32_t **ids, uint32_t *n)
{
    uint32_t i, room = 0;
    *ids = NULL;
    *n = 0;
    for (i = 0; i < IKP_WIRE_MAX_EVENTS; i++) {
        const char *s = ikp_event_name(cap, i);
        const size_t len = s ? strlen(s) : 0;
        char in[IKP_MAX_NAME_BYTES + 8];
        uint32_t to;
        if (len < 6 || strcmp(s + len - 6, " (out)")) continue; /* (names are at most 255 bytes) */
        snprintf(in, sizeof in, "%.*s (in)", (int)(len - 6), s);
        if ((to = ikp_event_id(cap, in)) == IKP_NO_EVENT) continue;
        if (*n + 2 > room) {
            uint32_t *m = (uint32_t *)realloc(*ids, (room = room ? 2 * room : 16) * sizeof *m);
            if (!m) return 1;
            *ids = m;
        }
        (*ids)[(*n)++] = i;
        (*ids)[(*n)++] = to;
    }
    return 0;
}

/* ikp trace IN */
static int cmd_trace(args *g, const ikp_capture *cap, const ikp_capture *none)
{
    const ikp_capture_info *ci = ikp_capture_get_info(cap);
    uint32_t *flow_ids = NULL, nflow = 0, *counter_ids = NULL, ncounter = 0, i;
    ikp_flow_pair *pairs = NULL;
    ikp_trace_stats tst;
    char time_note[256];
    trace_job job;
    ikp_error e;
    int rc = 0;
    (void)none;
    if (g->out_format < 0) g->out_format = ikp_is_perfetto_path(g->out);
    if (g->flow_arg && (rc = parse_events(cap, "--flow", g->flow_arg, 1, &flow_ids, &nflow))) goto done;
    if (!g->flow_arg && ci->format == IKP_FORMAT_PROTON && proton_flows(cap, &flow_ids, &nflow)) {
        fprintf(stderr, "ikp: error: out of memory\n");
        rc = 1;
        goto done;
    }
    if (g->counter_arg && (rc = parse_events(cap, "--counter", g->counter_arg, 0, &counter_ids, &ncounter))) goto done;
    if (nflow && !(pairs = (ikp_flow_pair *)malloc(nflow / 2 * sizeof *pairs))) {
        fprintf(stderr, "ikp: error: out of memory\n");
        rc = 1;
        goto done;
    }
    for (i = 0; i < nflow / 2; i++) { pairs[i].from = flow_ids[2 * i]; pairs[i].to = flow_ids[2 * i + 1]; }
    g->copt.flows = pairs;
    g->copt.num_flows = nflow / 2;
    g->copt.counters = counter_ids;
    g->copt.num_counters = ncounter;
    g->copt.stats = &tst;
    if (g->into_arg) {
        if (g->out_format || g->host_time) {
            fprintf(stderr, "ikp: error: --into writes a Chrome JSON trace on the torch trace's time axis: "
                    "leave out %s\n", g->out_format ? "the Perfetto output" : "--time");
            rc = 2;
        } else rc = trace_into(g, cap);
        goto done;
    }
    if (g->host_time) {
        if (!ci->host_time_known) {
            int64_t hz;
            ikp_capture_host_zero(cap, &hz, NULL, &e);
            fprintf(stderr, "ikp: error: --time host: %s: %s\n", g->in, e.message);
            rc = 1;
            goto done;
        }
        snprintf(time_note, sizeof time_note, "IKP: times are host CLOCK_REALTIME ns; time 0 of the capture is "
                 "%lld ns +- %u ns", (long long)ci->host_zero_ns, ci->host_zero_uncertainty_ns);
        g->copt.time_base_ns = (uint64_t)ci->host_zero_ns;
        g->copt.time_note = time_note;
    }
    job.cap = cap;
    job.opt = &g->copt;
    job.perfetto = g->out_format;
    if ((rc = write_out(g->out, trace_body, &job, "trace"))) goto done;
    fprintf(stderr, "ikp: wrote %s (%s trace of %s %s capture, %u active lanes, %llu records)\n",
            strcmp(g->out, "-") ? g->out : "standard output", g->out_format ? "Perfetto" : "Chrome JSON",
            strchr("aeiou", ikp_format_name(ci->format)[0]) ? "an" : "a", ikp_format_name(ci->format),
            ci->active_lanes, (unsigned long long)ci->records);
    trace_notes(g, ci, &tst);
done:
    free(flow_ids);
    free(counter_ids);
    free(pairs);
    return rc;
}

/* ikp summary IN [--json], ikp info IN */
static int stats(const args *g, const ikp_capture *cap, int info)
{
    ikp_stats *st = NULL;
    ikp_error e;
    int rc;
    int out_failed = 0;
    if (ikp_stats_compute(cap, &st, &e) != IKP_OK) return fail(g->in, &e);
    if (g->json) rc = out_failed = ikp_stats_write_json(st, ikp_file_writer, stdout, &e) != IKP_OK;
    else rc = print_stats_text(st, info, g->in); /* says why it failed */
    if (!rc && info) print_device(cap);
    ikp_stats_free(st);
    if (fflush(stdout) != 0) rc = out_failed = 1;
    if (out_failed) fprintf(stderr, "ikp: error: cannot write to standard output: %s\n", strerror(errno));
    return rc;
}
static int cmd_summary(args *g, const ikp_capture *cap, const ikp_capture *none) { (void)none; return stats(g, cap, 0); }
static int cmd_info(args *g, const ikp_capture *cap, const ikp_capture *none) { (void)none; return stats(g, cap, 1); }
static int cmd_merge_write(const command *c, int argc, char **argv) { return cmd_merge(c, argc, argv, 0); }
static int cmd_merge_info(const command *c, int argc, char **argv) { return cmd_merge(c, argc, argv, 1); }

/* 1 if name is an executable file in a directory of $PATH */
static int on_path(const char *name)
{
    const char *p = getenv("PATH");
    char buf[4096];
    while (p && *p) {
        size_t k = strcspn(p, ":");
        if (k && k + strlen(name) + 2 <= sizeof buf) {
            memcpy(buf, p, k);
            buf[k] = '/';
            strcpy(buf + k + 1, name);
            if (access(buf, X_OK) == 0) return 1;
        }
        p += k + (p[k] == ':');
    }
    return 0;
}

/* cuobjdump: $IKP_CUOBJDUMP, else the one on PATH, else tools/cuobjdump
   beside this executable (where make deps puts one: build/tools) */
static const char *find_cuobjdump(char *buf, size_t size)
{
    const char *env = getenv("IKP_CUOBJDUMP");
    ssize_t n;
    char *slash;
    if (env && env[0]) return env;
    if (on_path("cuobjdump")) return "cuobjdump";
    n = readlink("/proc/self/exe", buf, size - 1);
    if (n > 0 && (size_t)n + 16 < size) {
        buf[n] = 0;
        if ((slash = strrchr(buf, '/')) != NULL) {
            strcpy(slash + 1, "tools/cuobjdump");
            if (access(buf, X_OK) == 0) return buf;
        }
    }
    return "cuobjdump";
}

/* ikp check-sass's arguments: 0 ok, 1 a bad file, 2 usage (said on stderr) */
static int parse_sass_args(int argc, char **argv, args *g)
{
    int i, rc = 0;
    for (i = 2; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        const tool_option *o = find_option(a, g->c->options);
        if (o && o->value && i + 1 >= argc) {
            fprintf(stderr, "ikp: error: %s needs a value\n", a);
            rc = 2;
        } else if (o && o->set == set_list && FIELD(g, o, ikp_name_list)->count) { /* not replaced, as elsewhere */
            fprintf(stderr, "ikp: error: %s given twice\n", a);
            rc = 2;
        } else if (o) rc = o->set(g, o, o->value ? argv[++i] : NULL);
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ikp: error: check-sass: unknown option '%s'\n", a);
            rc = 2;
        } else if (g->in) {
            fprintf(stderr, "ikp: error: check-sass reads one file (got '%s' and '%s')\n", g->in, a);
            rc = 2;
        } else g->in = a;
    }
    if (rc == 0 && !g->in) {
        fprintf(stderr, "ikp: error: check-sass needs a file (a binary, a SASS listing, or - )\n%s", see_help);
        rc = 2;
    }
    return rc;
}

/* tool -sass in, run without a shell: what it writes, *pid its process;
   NULL after saying why */
static FILE *run_cuobjdump(const char *tool, const char *in, pid_t *pid)
{
    FILE *f;
    int fd[2];
    if (pipe(fd)) { fprintf(stderr, "ikp: error: pipe: %s\n", strerror(errno)); return NULL; }
    fflush(NULL);
    *pid = fork();
    if (*pid < 0) { fprintf(stderr, "ikp: error: fork: %s\n", strerror(errno)); close(fd[0]); close(fd[1]); return NULL; }
    if (*pid == 0) {
        char *av[4];
        av[0] = (char *)tool;
        av[1] = (char *)"-sass";
        av[2] = (char *)in;
        av[3] = NULL;
        close(fd[0]);
        if (dup2(fd[1], 1) < 0) _exit(127);
        close(fd[1]);
        execvp(tool, av);
        fprintf(stderr, "ikp: error: cannot run %s: %s (it comes with the CUDA Toolkit, and make deps puts one in "
                        "build/tools; or set IKP_CUOBJDUMP, or pass the output of cuobjdump -sass)\n", tool,
                strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    if (!(f = fdopen(fd[0], "r"))) { close(fd[0]); fprintf(stderr, "ikp: error: fdopen: %s\n", strerror(errno)); return NULL; }
    return f;
}

/* The listing check-sass reads: standard input, the file in, or, where in
   is a binary (ELF or fatbin), what cuobjdump -sass writes of it (*pid its
   process, *tool the one run). NULL after saying why. */
static FILE *open_listing(const char *in, pid_t *pid, const char **tool, char *tool_buf, size_t size)
{
    char head[4] = {0};
    FILE *f;
    if (!strcmp(in, "-")) {
        struct stat sb;
        if (fstat(0, &sb) == 0 && (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) || S_ISDIR(sb.st_mode))) {
            fprintf(stderr, "ikp: error: check-sass: standard input is %s: give a file, or pipe the listing in\n",
                    file_kind(sb.st_mode));
            return NULL;
        }
        return stdin;
    }
    if (!(f = open_regular(in, "check-sass: "))) return NULL;
    if (fread(head, 1, 4, f) == 4 && (!memcmp(head, "\177ELF", 4) || !memcmp(head, "\x50\xed\x55\xba", 4))) {
        fclose(f);
        *tool = find_cuobjdump(tool_buf, size);
        return run_cuobjdump(*tool, in, pid);
    }
    rewind(f);
    return f;
}

/* After the listing cuobjdump wrote was read (rc, err: what
   ikp_sass_check said of it): waits for cuobjdump; 1 if either failed
   (said), else 0 */
static int wait_cuobjdump(pid_t pid, const char *tool, const char *in, int rc, const char *err)
{
    int status = 0, waited = waitpid(pid, &status, 0) == pid;
    int ran = waited && !(WIFEXITED(status) && WEXITSTATUS(status) == 127); /* 127: it said why */
    if (ran && rc) fprintf(stderr, "ikp: error: %s\n", err); /* the listing's own fault */
    if (ran && !((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                 (rc && WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE)))
        fprintf(stderr, "ikp: error: %s -sass %s failed\n", tool, in);
    if (!ran || !WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
    return rc;
}

/* check-sass's summary line and verdict: 0, 1 no region found, 3 an empty one */
static int sass_verdict(const ikp_sass_summary *sum, const char *in)
{
    char helpers[80] = "";
    if (sum->helpers)
        snprintf(helpers, sizeof helpers, " (and %lu of ikp.h's own, left out)", (unsigned long)sum->helpers);
    printf("ikp check-sass: %lu kernel%s%s, %lu region%s checked, %lu hold%s no instruction of the kernel's, "
           "%lu begin%s or end%s not paired\n",
           (unsigned long)sum->kernels, sum->kernels == 1 ? "" : "s", helpers, (unsigned long)sum->regions,
           sum->regions == 1 ? "" : "s", (unsigned long)sum->empty, sum->empty == 1 ? "s" : "",
           (unsigned long)sum->unpaired, sum->unpaired == 1 ? "" : "s", sum->unpaired == 1 ? "" : "s");
    if (!sum->regions) {
        fprintf(stderr, "ikp: error: %s: no IKP region found (no begin and end stored with a clock stamp; a build with "
                        "-DIKP_ENABLE=0, or without IKP)\n", in);
        return 1;
    }
    if (!sum->empty) return 0;
    printf("the compiler moved their work past the stamps (a stamp orders memory operations, not register "
           "math): pin the values the work reads and computes with IKP_PIN before and after it (README, "
           "\"Instrument a kernel\")\n");
    return 3;
}

/* ikp check-sass: see tools/sass.c. A binary (ELF or fatbin) is read
   through cuobjdump -sass, run without a shell. */
static int cmd_check_sass(const command *c, int argc, char **argv)
{
    const char *tool = NULL;
    ikp_sass_summary sum;
    char err[600], tool_buf[4096];
    FILE *f = NULL;
    pid_t pid = -1;
    args g;
    int rc;
    if (args_init(&g, c, argc)) return 1;
    if ((rc = parse_sass_args(argc, argv, &g))) goto done;
    if (!(f = open_listing(g.in, &pid, &tool, tool_buf, sizeof tool_buf))) { rc = 1; goto done; }
    rc = ikp_sass_check(f, g.in, (const char *const *)g.names.names, g.names.count, g.list, g.mangled, stdout, &sum,
                        err, sizeof err);
    if (pid > 0) {
        fclose(f); /* cuobjdump, if still writing a listing refused here, ends by SIGPIPE: no news */
        f = NULL;
        if ((rc = wait_cuobjdump(pid, tool, g.in, rc, err))) goto done;
    } else if (rc) {
        fprintf(stderr, "ikp: error: %s\n", err);
        goto done;
    }
    rc = sass_verdict(&sum, g.in);
done:
    if (f && f != stdin) fclose(f);
    args_free(&g);
    return rc;
}

static const command commands[] = {
    {"trace", "IN",
     "trace: the capture as a timeline, a track a block (or SM) and in it a row a\n"
     "      group, for Perfetto (ui.perfetto.dev) or chrome://tracing.\n",
     OPT_COMMON | OPT_LAYOUT | OPT_TRACE, 0, 1, cmd_trace, NULL, NULL},
    {"summary", "IN",
     "summary: the capture in brief (as info), then per event its count and\n"
     "      durations (total, min, mean, p50, p90, p99, max) and per group how busy\n"
     "      its lanes are.\n",
     OPT_COMMON | OPT_JSON, 0, 1, cmd_summary, NULL, NULL},
    {"info", "IN [IN2 ...]",
     "info: what the buffer holds: lanes, drops, unmatched records, clocks, and\n"
     "      whatever was wrong with it; with several captures, also how they are\n"
     "      placed on one time axis (as merge places them).\n",
     OPT_COMMON, OPT_PLACE, 1, cmd_info, NULL, cmd_merge_info},
    {"merge", "IN IN2 [...]",
     "merge: one trace of captures of several GPUs, ranks or launches, each under a\n"
     "      track of its own (JSON: in processes of its own), placed on one time\n"
     "      axis by the best clock measurements they hold (same GPU, GPU-GPU,\n"
     "      host). Links that disagree are said, not refused.\n",
     OPT_COMMON | OPT_MERGE | OPT_LAYOUT | OPT_PLACE, 0, 0, NULL, cmd_merge_write, NULL},
    {"export", "IN [IN2 ...]",
     "export: every region and instant of the captures, a row each, as an Apache\n"
     "      Parquet table for DuckDB, Spark, pyarrow and pandas: the captures\n"
     "      placed on one time axis as merge places them (host CLOCK_REALTIME ns\n"
     "      when they hold clock readings), each capture's figures in the file's\n"
     "      metadata (FORMAT.md). Captures are read one at a time.\n",
     OPT_COMMON | OPT_EXPORT, 0, 0, NULL, cmd_export, NULL},
    {"diff", "BASE NEW",
     "diff: per event, both captures' figures and a verdict (same, faster, slower): a\n"
     "      measure (p50, p90, p99, total; for the whole capture also its span)\n"
     "      moved when its own test finds it beyond noise and it changed by at\n"
     "      least --threshold and --min-change.\n",
     OPT_COMMON | OPT_DIFF | OPT_JSON, 0, 2, cmd_diff, NULL, NULL},
    {"report", "IN",
     "report: the capture's stages, waits and load balance as Markdown, and its\n"
     "      picture as SVG.\n",
     OPT_COMMON | OPT_REPORT, 0, 1, cmd_report, NULL, NULL},
    {"check-sass", "BINARY|LISTING|-",
     "check-sass: the regions of a compiled kernel whose stamps have none of the\n"
     "      kernel's instructions between them (the compiler moved the work out;\n"
     "      IKP_PIN keeps register math in place). BINARY: an executable, object or\n"
     "      cubin, read with cuobjdump -sass ($IKP_CUOBJDUMP, else cuobjdump on PATH,\n"
     "      else tools/cuobjdump beside this program: make deps puts one in build/);\n"
     "      LISTING: that output or nvdisasm's, a file or - for standard input. Each\n"
     "      line begins with the kernel's name, demangled as c++filt shows it (one\n"
     "      that does not demangle as it is). Exit status 3 when a region holds\n"
     "      none.\n",
     OPT_SASS, 0, 0, NULL, cmd_check_sass, NULL},
};
#define NUM_COMMANDS (sizeof commands / sizeof commands[0])
#define USAGE_WIDTH 96

/* the i-th option in the order the help shows them: the -o rows first */
static const tool_option *option_at(size_t i)
{
    size_t k, n = 0;
    int pass;
    for (pass = 0; pass < 2; pass++)
        for (k = 0; k < NUM_OPTIONS; k++)
            if ((strcmp(options[k].flag, "-o") != 0) == pass && n++ == i) return &options[k];
    return NULL;
}

/* the rows of c's own options, as its synopsis and its list show them: of
   the families it takes, those of the shared list left to "[options]" */
static int own_option(const command *c, const tool_option *o)
{
    const unsigned fam = c->options | c->several_options;
    return (o->family & fam) && !((fam & OPT_COMMON) && (o->family & OPT_COMMON));
}

/* o's flag and value as the help shows them (%s: the formats); the width */
static int put_flag(FILE *f, const tool_option *o)
{
    const char *v = o->value ? o->value : "", *at = strstr(v, "%s");
    int w = fprintf(f, "%s%s%.*s", o->flag, o->value ? " " : "", at ? (int)(at - v) : (int)strlen(v), v);
    if (at) w += put_formats(f, "|") + fprintf(f, "%s", at + 2);
    return w;
}

/* c's line of the usage: "ikp NAME ARGS [flag value] ... [options]", wrapped */
static void put_synopsis(FILE *f, const command *c, int first)
{
    const int lead = fprintf(f, "%s ikp %-7s ", first ? "usage:" : "      ", c->name);
    int col = lead + fprintf(f, "%s", c->operands);
    size_t k;
    for (k = 0; k <= NUM_OPTIONS; k++) {
        const tool_option *o = k < NUM_OPTIONS ? option_at(k) : NULL;
        char item[128];
        int n;
        if (o && !own_option(c, o)) continue;
        if (o) n = snprintf(item, sizeof item, "[%s%s%s]", o->flag, o->value ? " " : "", o->value ? o->value : "");
        else if (c->options & OPT_COMMON) n = snprintf(item, sizeof item, "[options]");
        else break;
        if (col + 1 + n > USAGE_WIDTH) col = fprintf(f, "\n%*s", lead, "") - 1 + n;
        else col += fprintf(f, " ") + n;
        fputs(item, f);
    }
    fputc('\n', f);
}

/* One line an option (with further lines for its help): lead before the
   first (as much space before the others), its flag and value, then from
   HELP_COLUMN its help, on the next line when the flag reaches the column. */
static void put_option(FILE *f, const tool_option *o, const char *lead, int indent)
{
    const char *h = o->help, *nl;
    int w = indent ? fprintf(f, "%*s", indent, "") : fprintf(f, "%s", lead);
    w += put_flag(f, o);
    if (w < HELP_COLUMN) fprintf(f, "%*s", HELP_COLUMN - w, "");
    else fprintf(f, "\n%*s", HELP_COLUMN, "");
    for (; (nl = strchr(h, '\n')) != NULL; h = nl + 1) fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
    fprintf(f, "%s\n", h);
}

/* the options of c told of under earlier commands: "--a, --b: as for X; ..." */
static void put_told(FILE *f, const command *c, const command *const *told, int indent)
{
    size_t k, j;
    const char *sep = "";
    fprintf(f, "%*s", indent, "");
    for (k = 0; k < NUM_COMMANDS && &commands[k] != c; k++) {
        int n = 0;
        for (j = 0; j < NUM_OPTIONS; j++) {
            const tool_option *o = option_at(j);
            if (own_option(c, o) && told[o - options] == &commands[k]) fprintf(f, "%s%s", n++ ? ", " : sep, o->flag);
        }
        if (n) fprintf(f, ": as for %s", commands[k].name);
        if (n) sep = "; ";
    }
    fputc('\n', f);
}

/* the help: of one command (c), or of all (NULL). Each option is told of
   once: in the help of all, under the first command that takes it; a later
   one's list names it and that command. */
static void put_help(FILE *f, const command *c)
{
    const command *told[NUM_OPTIONS] = {NULL};
    size_t k, j;
    const int n0 = (int)strlen("options: ");
    for (k = 0; k < NUM_COMMANDS; k++)
        if (!c || c == &commands[k]) put_synopsis(f, &commands[k], c || k == 0);
    if (!c || (c->options & OPT_COMMON))
        for (j = 0, k = 0; k < NUM_OPTIONS; k++)
            if (options[k].family & OPT_COMMON) put_option(f, &options[k], "options: ", j++ ? n0 : 0);
    for (k = 0; k < NUM_COMMANDS; k++) {
        const command *ck = &commands[k];
        int later = 0;
        if (c && c != ck) continue;
        fputs(ck->notes, f);
        for (j = 0; j < NUM_OPTIONS; j++) {
            const tool_option *o = option_at(j);
            if (!own_option(ck, o)) continue;
            if (told[o - options]) later++;
            else put_option(f, o, "", n0);
            if (!told[o - options]) told[o - options] = ck;
        }
        if (later) put_told(f, ck, told, n0);
    }
    fputs(help_tail, f);
}

/* the inputs among argv[2..] (the values of options skipped) */
static int count_inputs(int argc, char **argv)
{
    int i, n = 0;
    for (i = 2; i < argc; i++) {
        if (is_input(argv[i])) n++;
        else if (takes_value(argv[i])) i++;
    }
    return n;
}

int main(int argc, char **argv)
{
    ikp_capture *cap = NULL, *cap2 = NULL;
    const command *c = NULL;
    const char *second;
    ikp_error e;
    args g;
    size_t k;
    int rc, i;

    /* past a file-size limit (ulimit -f) a write fails with EFBIG, said as
       any failed write is, its temporary file removed: not a silent death */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        put_help(argc < 2 ? stderr : stdout, NULL);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) { printf("ikp %s\n", IKP_VERSION_STRING); return 0; }
    for (k = 0; k < NUM_COMMANDS && !c; k++)
        if (!strcmp(argv[1], commands[k].name)) c = &commands[k];
    if (!c) {
        fprintf(stderr, "ikp: error: unknown command '%s'\n%s", argv[1], see_help);
        return 2;
    }
    for (i = 2; i < argc; i++) /* ikp COMMAND --help */
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            put_help(stdout, c);
            return 0;
        }
    if (c->own) return c->own(c, argc, argv);
    if (c->several && count_inputs(argc, argv) > 1) return c->several(c, argc, argv);
    if (args_init(&g, c, argc)) return 1;
    if ((rc = parse_args(argc, argv, &g))) goto done;
    decode_names(&g);
    second = g.in2 ? g.in2 : g.base_arg;
    if (second && !strcmp(second, "-") && !strcmp(g.in, "-")) {
        fprintf(stderr, "ikp: error: standard input (-) can be one input only\n%s", see_help);
        rc = 2;
        goto done;
    }
    if (open_input(g.in, &g.opt, &cap, &e) != IKP_OK) { rc = fail(g.in, &e); goto done; }
    if (second && open_input(second, &g.opt, &cap2, &e) != IKP_OK) { rc = fail(second, &e); goto done; }
    rc = c->run(&g, cap, cap2);
done:
    ikp_capture_free(cap);
    ikp_capture_free(cap2);
    args_free(&g);
    return rc;
}
