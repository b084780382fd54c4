/* Only one allocator macro: must not compile. */
#define IKP_MALLOC(n) 0
#define IKP_IMPLEMENTATION
#include "ikp.h"
int main(void) { return 0; }
