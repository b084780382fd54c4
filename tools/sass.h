/* ikp check-sass: reads a SASS listing (cuobjdump -sass or nvdisasm) and
   finds the IKP regions whose begin and end stamps have none of the
   kernel's own instructions between them. See README.md. */
#ifndef IKP_TOOL_SASS_H
#define IKP_TOOL_SASS_H

#include <stddef.h>
#include <stdio.h>

typedef struct ikp_sass_summary {
    size_t kernels;      /* functions read (the user's: not IKP's own) */
    size_t helpers;      /* ikp.h's own kernels (ikp__*: the CUDA helpers' header, clock and
                            SM-sample kernels), read and left out of the count */
    size_t instructions; /* instructions read */
    size_t records;      /* IKP record stores found */
    size_t regions;      /* begin-end pairs found */
    size_t empty;        /* of those, with no instruction of the kernel's between the stamps */
    size_t unpaired;     /* begins and ends whose partner was not found */
} ikp_sass_summary;

/* Reads the listing from in (label names it in messages), writes one line
   a kernel and event whose regions are empty to out; with list, also one
   line a region (its stamps and the kernel's instructions between them)
   and a line for each begin or end left unpaired. names[i] names event i
   (may be NULL). Each line begins with the kernel's name, demangled as
   c++filt shows it (a name that does not demangle as it is), or with
   mangled as the listing has it. Returns 0, or 1 with a message in err
   when the input cannot be read or is not a SASS listing. */
int ikp_sass_check(FILE *in, const char *label, const char *const *names, size_t num_names, int list, int mangled,
                   FILE *out, ikp_sass_summary *sum, char *err, size_t err_size);

#endif
