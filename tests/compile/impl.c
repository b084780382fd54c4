/* The implementation included twice (the second include must do nothing). */
#define IKP_IMPLEMENTATION
#include "ikp.h"
#include "ikp.h"
int main(void) { return ikp_result_string(IKP_OK)[0] != 0 ? 0 : 1; }
