/* ikp_cuda.cuh of another version seen first: ikp.h must refuse to compile. */
#define IKP_CUDA_VERSION_MAJOR 0
#define IKP_CUDA_VERSION_MINOR 1
#define IKP_CUDA_VERSION_PATCH 0
#include "ikp.h"
int main(void) { return 0; }
