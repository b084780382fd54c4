/* Shared host code of the examples: error checks and the one-call dump. */
#ifndef IKP_EXAMPLE_COMMON_H
#define IKP_EXAMPLE_COMMON_H
#define IKP_IMPLEMENTATION
#include "../ikp.h"
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

/* Records per lane: the example's own figure, or IKP_EXAMPLE_CAPACITY from
   the environment (the tests use a tiny one to overflow every lane). */
static inline uint32_t example_capacity(uint32_t want)
{
    const char *e = getenv("IKP_EXAMPLE_CAPACITY");
    return e && atoi(e) >= 0 ? (uint32_t)atoi(e) : want;
}

/* Copies the buffer back, writes OUT.json and OUT.ikp, prints the summary. */
static inline void example_dump(ikp_cuda_buffer *buf, const char *out, const char *const *names,
                                uint32_t nnames, const char *const *groups, uint32_t ngroups)
{
    char trace[512], capture[512];
    ikp_dump_desc d = {};
    ikp_error err;
    snprintf(trace, sizeof trace, "%s.json", out);
    snprintf(capture, sizeof capture, "%s.ikp", out);
    d.trace_path = trace;
    d.capture_path = capture;
    d.summary = stdout;
    d.decode.event_names = names;
    d.decode.num_event_names = nnames;
    d.decode.group_names = groups;
    d.decode.num_group_names = ngroups;
    if (ikp_cuda_dump(buf, 0, &d, &err) != IKP_OK) {
        fprintf(stderr, "ikp: %s\n", err.message);
        exit(1);
    }
#if !defined(IKP_ENABLE) || IKP_ENABLE
    printf("wrote %s and %s\n", trace, capture);
#endif
}
#endif
