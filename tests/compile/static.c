/* IKP_STATIC: the whole API static to this file. */
#define IKP_STATIC
#define IKP_IMPLEMENTATION
#include "ikp.h"
int main(void) { return (int)ikp_buffer_words(1, 1) == 17 ? 0 : 1; }
