/* A decoder as a new user writes it: no CUDA flags, no CUDA library. It must
   link and run with only libc, even where the CUDA headers are on the
   include path (the CUDA helpers are opt-in). */
#include <stdio.h>
#include <string.h>
#define IKP_IMPLEMENTATION
#include "ikp.h"
int main(void)
{
    uint64_t words[8 + 9 + 1];
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    ikp_error err;
    memset(words, 0, sizeof words);
    memset(&o, 0, sizeof o);
    ikp_buffer_header(words, 1, 1, 0, NULL);
    if (ikp_capture_open(words, 18, &o, &cap, &err) != IKP_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    ikp_capture_free(cap);
#if IKP_HAS_CUDA
    return 2; /* the helpers must be off here */
#else
    return 0;
#endif
}
