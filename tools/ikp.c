/* ikp - command-line front end of ikp.h: decode a capture, write a Chrome
   trace, print statistics. See README.md. */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: ikp trace   IN [-o OUT.json] [options] [--by block|sm]\n"
    "       ikp summary IN [options] [--json]\n"
    "       ikp info    IN [options]\n"
    "options: --names a,b,c | --names @file   event names by id (one per line in file)\n"
    "         --groups x,y  | --groups @file  group names by index\n"
    "         --format auto|ikp|tirx|flashinfer\n"
    "IN is an .ikp capture or a bare buffer of little-endian 64-bit words.\n";

static int fail(const char *in, const ikp_error *e)
{
    fprintf(stderr, "ikp: error: %s: %s", in, e->message[0] ? e->message : ikp_result_string(e->code));
    if (e->offset >= 0) fprintf(stderr, " (at byte offset %lld)", (long long)e->offset);
    if (e->lane >= 0) fprintf(stderr, " (lane %lld)", (long long)e->lane);
    fprintf(stderr, "\n");
    return 1;
}

/* "a,b,c" or "@file" (one name per line) */
static int parse_names(const char *arg, const char *what, ikp_name_list *out)
{
    ikp_error e;
    ikp_result r;
    if (arg[0] == '@') {
        FILE *f = fopen(arg + 1, "rb");
        char *buf = NULL;
        size_t n = 0, cap = 0, got;
        if (!f) { fprintf(stderr, "ikp: error: cannot open %s file '%s'\n", what, arg + 1); return 0; }
        for (;;) {
            if (n + 4096 > cap) {
                char *nb = (char *)realloc(buf, cap = (n + 4096) * 2);
                if (!nb) { free(buf); fclose(f); fprintf(stderr, "ikp: error: out of memory\n"); return 0; }
                buf = nb;
            }
            got = fread(buf + n, 1, cap - n, f);
            n += got;
            if (!got) break;
        }
        fclose(f);
        r = ikp_name_list_parse(buf, n, '\n', NULL, out, &e);
        free(buf);
        if (r != IKP_OK) return !fail(arg + 1, &e);
        return 1;
    }
    r = ikp_name_list_parse(arg, strlen(arg), ',', NULL, out, &e);
    if (r != IKP_OK) { fprintf(stderr, "ikp: error: %s: %s\n", what, e.message); return 0; }
    return 1;
}

int main(int argc, char **argv)
{
    const char *cmd, *in = NULL, *out = "trace.json";
    ikp_name_list names, groups;
    ikp_decode_options opt;
    ikp_chrome_options copt;
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
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-o") && has && !strcmp(cmd, "trace")) out = argv[++i];
        else if (!strcmp(a, "--names") && has) { if (!parse_names(argv[++i], "--names", &names)) return 2; }
        else if (!strcmp(a, "--groups") && has) { if (!parse_names(argv[++i], "--groups", &groups)) return 2; }
        else if (!strcmp(a, "--format") && has) {
            opt.format = ikp_format_from_name(argv[++i]);
            if (opt.format == IKP_FORMAT_COUNT) {
                fprintf(stderr, "ikp: error: unknown format '%s' (auto, ikp, tirx, flashinfer)\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--by") && has && !strcmp(cmd, "trace")) {
            const char *b = argv[++i];
            if (!strcmp(b, "block")) copt.by = IKP_BY_BLOCK;
            else if (!strcmp(b, "sm")) copt.by = IKP_BY_SM;
            else { fprintf(stderr, "ikp: error: --by takes block or sm, not '%s'\n", b); return 2; }
        } else if (!strcmp(a, "--json") && !strcmp(cmd, "summary")) json = 1;
        else if (a[0] != '-' && !in) in = a;
        else { fprintf(stderr, "ikp: error: unexpected argument '%s'\n%s", a, usage); return 2; }
    }
    if (!in) { fprintf(stderr, "ikp: error: no input file\n%s", usage); return 2; }
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
        if (ikp_write_chrome_path(cap, &copt, out, &e) != IKP_OK) { rc = fail(out, &e); goto done; }
        fprintf(stderr, "ikp: wrote %s (%s, %u active lanes, %llu records)\n", out,
                ikp_format_name(ci->format), ci->active_lanes, (unsigned long long)ci->records);
        if (ci->dropped || ci->invalid || ci->backwards || ci->unfinalized_lanes || ci->corrupt_lanes ||
            ci->refused_lanes || ci->claimed_twice || ci->out_of_range)
            fprintf(stderr, "ikp: warning: %s has dropped, invalid or damaged records: see `ikp info %s`\n", in, in);
        goto done;
    }
    if (ikp_stats_compute(cap, &st, &e) != IKP_OK) { rc = fail(in, &e); goto done; }
    if (!strcmp(cmd, "info")) rc = ikp_info_write_text(st, ikp_file_writer, stdout) != IKP_OK;
    else if (json) rc = ikp_stats_write_json(st, ikp_file_writer, stdout) != IKP_OK;
    else rc = ikp_stats_write_text(st, ikp_file_writer, stdout) != IKP_OK;
    if (fflush(stdout) != 0) rc = 1;
    if (rc) fprintf(stderr, "ikp: error: cannot write to standard output\n");
done:
    ikp_stats_free(st);
    ikp_capture_free(cap);
    ikp_name_list_free(&names);
    ikp_name_list_free(&groups);
    return rc;
}
