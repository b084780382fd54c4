// The wait tests' kernels in the staged build (own namespace: a different
// configuration of the same inline functions; tests/gpu/waits_kernels.cuh).
#include <stdint.h>
namespace ikp_w_staged {
#define IKP_STAGED 1
#include "../../ikp_cuda.cuh"
#include "waits_kernels.cuh"
}
cudaError_t waits_staged(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch, uint64_t *prof)
{
    return ikp_w_staged::waits_run(what, kind, spin, n, blocks, scratch, prof);
}
