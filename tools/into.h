/* ikp trace --into: reading a torch.profiler (Kineto) Chrome trace,
   fitting a capture into one of its kernel slices, and writing the trace
   back with the capture's events in it. See GUIDE.md "The `ikp` tool in
   full". */
#ifndef IKP_TOOL_INTO_H
#define IKP_TOOL_INTO_H

#include "../ikp.h"

#include <stddef.h>
#include <stdint.h>

/* how far the fit may move a capture beyond IKP's stated uncertainty (ns):
   into.c's "the fit" says why */
#define FIT_SLACK_NS 5000

/* a growing buffer in memory; mem_writer is an ikp_write_fn over one */
typedef struct membuf_ { char *p; size_t n, cap; } membuf_;
int mem_writer(void *u, const void *d, size_t n);
/* text as a JSON string's contents onto m: 0, or 1 out of memory */
int put_json_text(membuf_ *m, const char *text);

/* the torch trace t (n bytes), read as strict JSON: *base its
   baseTimeNanoseconds; *open, *close the '[' and ']' of its traceEvents,
   *empty if that holds nothing; *ikp_keys bit K for each "ikp_time" (K = 1)
   or "ikp_time_K" key that IKP wrote there before. 0 ok, else 1 and a
   message in *why */
int torch_scan(const char *t, size_t n, uint64_t *base, const char **open, const char **close, int *empty,
               uint64_t *ikp_keys, const char **why);

/* what the fit found */
typedef struct kernel_fit {
    int fitted;     /* 1: moved by shift into the slice named name */
    int64_t shift;
    char *name;     /* malloc'd; NULL for a slice without a name */
    char why[160];  /* not fitted: why */
} kernel_fit;

/* picks the kernel slice in traceEvents ([open, close]) to fit the capture
   (ns t0 to t0 + span after the base) into, moved at most bound ns, of
   those whose name holds want (NULL: any). 0 done (into *f), 1 an error
   (said on stderr, torch_path naming the trace). */
int fit_kernel(const char *open, const char *close, int64_t t0, int64_t span, int64_t bound, const char *want,
               const char *torch_path, kernel_fit *f);

/* what trace --into writes: the torch trace with IKP's events and note */
typedef struct into_job {
    const char *torch, *close; /* the torch trace, and where its traceEvents end */
    size_t torch_n;
    int empty;
    const char *events;        /* IKP's events: the inside of its traceEvents array */
    size_t events_n;
    const char *note;          /* ,"ikp_time...":"..." after the array: what IKP's times are */
    size_t note_n;
} into_job;
/* writes the job (ctx) through fn, as write_out's body */
ikp_result into_body(const void *ctx, ikp_write_fn fn, void *user, ikp_error *e);

#endif
