/* IKP_CUDA: the CUDA helpers are compiled; links with -lcudart. */
#define IKP_CUDA
#define IKP_IMPLEMENTATION
#include "ikp.h"
int main(void)
{
    ikp_cuda_buffer b;
    memset(&b, 0, sizeof b);
    ikp_cuda_buffer_destroy(&b);
    return IKP_HAS_CUDA ? 0 : 1;
}
