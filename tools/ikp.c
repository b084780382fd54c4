/* ikp - command-line front end of ikp.h: decode a capture, write a Chrome
   trace, print statistics. See README.md. */
#define _POSIX_C_SOURCE 200809L
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *usage =
    "usage: ikp trace   IN [-o OUT.json|OUT.pftrace | -o -] [options] [trace options]\n"
    "       ikp summary IN [options] [--json]\n"
    "       ikp info    IN [options]\n"
    "options: --names a,b,c | --names @file   event names by id (one per line in file)\n"
    "         --groups x,y  | --groups @file  group names by index\n"
    "         --format auto|ikp|tirx|flashinfer|triton-dist|nuggets|nuggets-compact\n"
    "         --units N                       nuggets: units in the buffer (inferred if left out)\n"
    "         --timer-unit T                  peer formats: one timer tick, e.g. 10ns (AMD\n"
    "                                         triton-dist captures), 1ns (the default), 500ps\n"
    "         --keep-after-finalize           tirx: also show records after a lane's finalize\n"
    "trace options:\n"
    "         --by block|sm                   a process per block (default) or per SM\n"
    "         --output-format json|perfetto   the trace's format (default: from the name of OUT:\n"
    "                                         .pftrace and .perfetto-trace are Perfetto's\n"
    "                                         protobuf, anything else Chrome JSON)\n"
    "         --flow FROM:TO[,FROM:TO...]     arrows from each FROM event to its TO event in the\n"
    "                                         same block (by payload, else by order)\n"
    "         --counter EVENT[,EVENT...]      per block, a counter of EVENT regions in flight\n"
    "IN is an .ikp capture, a NumPy .npy array or a bare buffer of little-endian\n"
    "64-bit words. -o - writes the trace to standard output.\n";

/* The temporary output file, removed if SIGINT or SIGTERM stops the tool. */
static char cleanup_path[sizeof(((ikp_output *)0)->tmp_path)];
static volatile sig_atomic_t cleanup_armed;

static void on_signal(int sig)
{
    if (cleanup_armed) unlink(cleanup_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int fail(const char *in, const ikp_error *e)
{
    fprintf(stderr, "ikp: error: %s: %s", in, e->message[0] ? e->message : ikp_result_string(e->code));
    if (e->offset >= 0) fprintf(stderr, " (at byte offset %lld)", (long long)e->offset);
    if (e->lane >= 0) fprintf(stderr, " (lane %lld)", (long long)e->lane);
    fprintf(stderr, "\n");
    return 1;
}

/* "a,b,c" or "@file" (one name per line): 0 ok, 1 bad file, 2 usage */
static int parse_names(const char *arg, const char *what, ikp_name_list *out)
{
    ikp_error e;
    if (arg[0] == '@') {
        if (ikp_name_list_load(arg + 1, NULL, out, &e) != IKP_OK) {
            fprintf(stderr, "ikp: error: %s file: ", what);
            return fail(arg + 1, &e);
        }
        return 0;
    }
    if (ikp_name_list_parse(arg, strlen(arg), ',', NULL, out, &e) != IKP_OK) {
        fprintf(stderr, "ikp: error: %s: %s\n", what, e.message);
        return 2;
    }
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

int main(int argc, char **argv)
{
    const char *cmd, *in = NULL, *out = "trace.json", *flow_arg = NULL, *counter_arg = NULL;
    ikp_name_list names, groups;
    ikp_decode_options opt;
    ikp_trace_options copt;
    ikp_trace_stats tst;
    uint32_t *flow_ids = NULL, nflow = 0, *counter_ids = NULL, ncounter = 0;
    ikp_flow_pair *pairs = NULL;
    int out_format = -1; /* -1: from the name, 0 JSON, 1 Perfetto */
    ikp_capture *cap = NULL;
    ikp_stats *st = NULL;
    ikp_error e;
    int json = 0, rc = 0, i;

    memset(&names, 0, sizeof names);
    memset(&groups, 0, sizeof groups);
    memset(&opt, 0, sizeof opt);
    memset(&copt, 0, sizeof copt);
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) { printf("ikp %s\n", IKP_VERSION_STRING); return 0; }
    cmd = argv[1];
    if (strcmp(cmd, "trace") && strcmp(cmd, "summary") && strcmp(cmd, "info")) {
        fprintf(stderr, "ikp: error: unknown command '%s'\n%s", cmd, usage);
        return 2;
    }
    for (i = 2; i < argc && rc == 0; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-o") && has && !strcmp(cmd, "trace")) {
            out = argv[++i];
            if (!out[0]) { fprintf(stderr, "ikp: error: -o needs a file name (or - for standard output)\n"); rc = 2; }
        } else if (!strcmp(a, "--names") && has) rc = parse_names(argv[++i], "--names", &names);
        else if (!strcmp(a, "--groups") && has) rc = parse_names(argv[++i], "--groups", &groups);
        else if (!strcmp(a, "--format") && has) {
            opt.format = ikp_format_from_name(argv[++i]);
            if (opt.format == IKP_FORMAT_COUNT) {
                fprintf(stderr, "ikp: error: unknown format '%s' (auto, ikp, tirx, flashinfer, triton-dist, "
                        "nuggets, nuggets-compact)\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(a, "--units") && has) {
            if (!(opt.num_units = parse_count(argv[++i]))) {
                fprintf(stderr, "ikp: error: --units takes a count of units from 1 to 4294967295, not '%s'\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(a, "--timer-unit") && has) {
            if (!(opt.timer_unit_ps = parse_tick(argv[++i]))) {
                fprintf(stderr, "ikp: error: --timer-unit takes a tick such as 10ns, 1ns or 500ps "
                        "(1ps .. 1us), not '%s'\n", argv[i]);
                rc = 2;
            }
        } else if (!strcmp(a, "--by") && has && !strcmp(cmd, "trace")) {
            const char *b = argv[++i];
            if (!strcmp(b, "block")) copt.by = IKP_BY_BLOCK;
            else if (!strcmp(b, "sm")) copt.by = IKP_BY_SM;
            else { fprintf(stderr, "ikp: error: --by takes block or sm, not '%s'\n", b); rc = 2; }
        } else if (!strcmp(a, "--output-format") && has && !strcmp(cmd, "trace")) {
            const char *b = argv[++i];
            if (!strcmp(b, "json")) out_format = 0;
            else if (!strcmp(b, "perfetto")) out_format = 1;
            else { fprintf(stderr, "ikp: error: --output-format takes json or perfetto, not '%s'\n", b); rc = 2; }
        } else if (!strcmp(a, "--flow") && has && !strcmp(cmd, "trace")) flow_arg = argv[++i];
        else if (!strcmp(a, "--counter") && has && !strcmp(cmd, "trace")) counter_arg = argv[++i];
        else if (!strcmp(a, "--json") && !strcmp(cmd, "summary")) json = 1;
        else if (!strcmp(a, "--keep-after-finalize")) opt.keep_after_finalize = 1;
        else if (a[0] != '-' && !in) in = a;
        else { fprintf(stderr, "ikp: error: unexpected argument '%s'\n%s", a, usage); rc = 2; }
    }
    if (rc) goto done;
    if (!in) { fprintf(stderr, "ikp: error: no input file\n%s", usage); rc = 2; goto done; }
    if (!strcmp(cmd, "trace") && strcmp(out, "-") && same_file(in, out)) {
        fprintf(stderr, "ikp: error: -o %s names the input file: choose another output\n", out);
        rc = 2;
        goto done;
    }
    opt.event_names = (const char *const *)names.names;
    opt.num_event_names = names.count;
    opt.group_names = (const char *const *)groups.names;
    opt.num_group_names = groups.count;

    if (ikp_capture_load(in, &opt, &cap, &e) != IKP_OK) {
        rc = fail(in, &e);
        goto done;
    }
    if (!strcmp(cmd, "trace")) {
        const ikp_capture_info *ci = ikp_capture_get_info(cap);
        ikp_result (*write)(const ikp_capture *, const ikp_trace_options *, ikp_write_fn, void *, ikp_error *);
        if (out_format < 0) out_format = ikp_is_perfetto_path(out);
        write = out_format ? ikp_write_perfetto : ikp_write_chrome;
        if (flow_arg && (rc = parse_events(cap, "--flow", flow_arg, 1, &flow_ids, &nflow))) goto done;
        if (counter_arg && (rc = parse_events(cap, "--counter", counter_arg, 0, &counter_ids, &ncounter))) goto done;
        if (nflow && !(pairs = (ikp_flow_pair *)malloc(nflow / 2 * sizeof *pairs))) {
            fprintf(stderr, "ikp: error: out of memory\n");
            rc = 1;
            goto done;
        }
        for (i = 0; i < (int)(nflow / 2); i++) { pairs[i].from = flow_ids[2 * i]; pairs[i].to = flow_ids[2 * i + 1]; }
        copt.flows = pairs;
        copt.num_flows = nflow / 2;
        copt.counters = counter_ids;
        copt.num_counters = ncounter;
        copt.stats = &tst;
        if (!strcmp(out, "-")) {
            if (write(cap, &copt, ikp_file_writer, stdout, &e) != IKP_OK || fflush(stdout) != 0) {
                fprintf(stderr, "ikp: error: cannot write the trace to standard output: %s\n",
                        errno ? strerror(errno) : e.message);
                rc = 1;
                goto done;
            }
        } else {
            ikp_output o;
            ikp_result r;
            sigset_t stop, old;
            /* SIGINT/SIGTERM held from before the temporary file exists until
               its removal is armed: one arriving in between is handled then */
            sigemptyset(&stop);
            sigaddset(&stop, SIGINT);
            sigaddset(&stop, SIGTERM);
            signal(SIGINT, on_signal);
            signal(SIGTERM, on_signal);
            sigprocmask(SIG_BLOCK, &stop, &old);
            if (ikp_output_open(&o, out, &e) != IKP_OK) {
                sigprocmask(SIG_SETMASK, &old, NULL);
                rc = fail(out, &e);
                goto done;
            }
            memcpy(cleanup_path, o.tmp_path, sizeof cleanup_path);
            cleanup_armed = o.tmp_path[0] != 0;
            sigprocmask(SIG_SETMASK, &old, NULL);
            r = write(cap, &copt, ikp_output_write, &o, &e);
            if (r != IKP_OK && !o.errno_) ikp_output_abort(&o); /* e says what went wrong */
            else r = ikp_output_commit(&o, &e);                 /* a failed write: with its reason */
            cleanup_armed = 0;
            if (r != IKP_OK) { rc = fail(out, &e); goto done; }
        }
        fprintf(stderr, "ikp: wrote %s (%s trace of a %s capture, %u active lanes, %llu records)\n",
                strcmp(out, "-") ? out : "standard output", out_format ? "Perfetto" : "Chrome JSON",
                ikp_format_name(ci->format), ci->active_lanes, (unsigned long long)ci->records);
        if (nflow)
            fprintf(stderr, "ikp: %llu flows drawn; %llu links not drawn (the TO event does not come after the FROM "
                    "event); %llu events without a partner\n", (unsigned long long)tst.flows,
                    (unsigned long long)tst.flows_unordered, (unsigned long long)tst.flow_unpaired);
        if (ncounter)
            fprintf(stderr, "ikp: %llu counter tracks\n", (unsigned long long)tst.counter_tracks);
        if (ci->dropped || ci->invalid || ci->backwards || ci->unfinalized_lanes || ci->corrupt_lanes ||
            ci->refused_lanes || ci->claimed_twice || ci->out_of_range || ci->after_finalize || ci->duplicate_lanes ||
            ci->may_wrap)
            fprintf(stderr, "ikp: warning: %s has dropped, invalid, damaged or ambiguous records: see `ikp info %s`\n", in, in);
        if (ci->units_inferred)
            fprintf(stderr, "ikp: note: %u units of %u words inferred from the data (--units N to say)\n",
                    ci->num_blocks, ci->unit_words);
        goto done;
    }
    if (ikp_stats_compute(cap, &st, &e) != IKP_OK) { rc = fail(in, &e); goto done; }
    if (!strcmp(cmd, "info")) rc = ikp_info_write_text(st, ikp_file_writer, stdout) != IKP_OK;
    else if (json) rc = ikp_stats_write_json(st, ikp_file_writer, stdout) != IKP_OK;
    else rc = ikp_stats_write_text(st, ikp_file_writer, stdout) != IKP_OK;
    if (fflush(stdout) != 0) rc = 1;
    if (rc) fprintf(stderr, "ikp: error: cannot write to standard output: %s\n", strerror(errno));
done:
    ikp_stats_free(st);
    ikp_capture_free(cap);
    ikp_name_list_free(&names);
    ikp_name_list_free(&groups);
    free(flow_ids);
    free(counter_ids);
    free(pairs);
    return rc;
}
