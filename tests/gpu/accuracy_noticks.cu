// The accuracy kernels in cycle mode without ticks (IKP_TICKS=0; own
// namespace: a different configuration of the same inline functions).
#include <stdint.h>
namespace ikp_nt {
#define IKP_TICKS 0
#include "../../ikp_cuda.cuh"
#include "accuracy_kernels.cuh"
}
void nt_truth_regions(int blocks, const long long *ks, int nk, long long gap, long long stagger, long long *out,
                      uint64_t *prof)
{
    ikp_nt::truth_regions<<<blocks, 64>>>(ks, nk, gap, stagger, out, prof);
}
