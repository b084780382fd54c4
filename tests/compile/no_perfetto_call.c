/* With IKP_NO_PERFETTO the Perfetto writer is not declared: this must not compile. */
#define IKP_IMPLEMENTATION
#include "ikp.h"
int main(void) { return (int)ikp_write_perfetto(0, 0, 0, 0, 0); }
