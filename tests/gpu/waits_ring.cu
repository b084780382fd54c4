// The wait tests' kernels in the ring build (own namespace: a different
// configuration of the same inline functions; tests/gpu/waits_kernels.cuh).
#include <stdint.h>
namespace ikp_w_ring {
#define IKP_RING 1
#include "../../ikp_cuda.cuh"
#include "waits_kernels.cuh"
}
cudaError_t waits_ring(int what, int kind, unsigned long long spin, int n, int blocks, void *scratch, uint64_t *prof)
{
    return ikp_w_ring::waits_run(what, kind, spin, n, blocks, scratch, prof);
}
