/* All three allocator macros. */
#include <stdlib.h>
#define IKP_MALLOC(n) malloc(n)
#define IKP_REALLOC(p, n) realloc(p, n)
#define IKP_FREE(p) free(p)
#define IKP_IMPLEMENTATION
#include "ikp.h"
int main(void) { return 0; }
