/* With IKP_NO_MERGE merged timelines are not declared: this must not compile. */
#define IKP_IMPLEMENTATION
#include "ikp.h"
int main(void) { return (int)ikp_write_merged(0, 0, 0, 0, 0, 0, 0); }
