// Both headers in one file, either order, same version: compiles.
#include <cstdint>
#include "ikp_cuda.cuh"
#define IKP_IMPLEMENTATION
#include "ikp.h"
__global__ void k(uint64_t *prof) { IKP_LANE(l); IKP_INIT(l, prof, 0, 1, threadIdx.x == 0); IKP_FINALIZE(l); }
int main() { return IKP_HAS_CUDA ? 0 : 1; }
