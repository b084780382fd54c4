// The wait tests' kernels in the default build (own namespace: a different
// configuration of the same inline functions; tests/gpu/waits_kernels.cuh).
#include <stdint.h>
namespace ikp_w_default {

#include "../../ikp_cuda.cuh"
#include "waits_kernels.cuh"
}
cudaError_t waits_default(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch, uint64_t *prof)
{
    return ikp_w_default::waits_run(what, kind, spin, n, blocks, scratch, prof);
}
