// ikp.h of another version seen first: ikp_cuda.cuh must refuse to compile.
#define IKP_VERSION_MAJOR 0
#define IKP_VERSION_MINOR 1
#define IKP_VERSION_PATCH 0
#include "ikp_cuda.cuh"
__global__ void k(unsigned long long *prof) { IKP_LANE(l); IKP_INIT(l, prof, 0, 1, threadIdx.x == 0); IKP_FINALIZE(l); }
