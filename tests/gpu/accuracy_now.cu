// The accuracy kernels in cycle mode with IKP_DEFER_BEGIN=0 (a begin stores
// its record at once; own namespace: a different configuration of the same
// inline functions). Its empty region is reported, and its regions are
// checked against the truth plus that empty region.
#include <stdint.h>
namespace ikp_nw {
#define IKP_DEFER_BEGIN 0
#include "../../ikp_cuda.cuh"
#include "accuracy_kernels.cuh"
}
void nw_known_length(const long long *ks, int nk, long long *truth, uint64_t *prof)
{
    ikp_nw::known_length<<<2, 32>>>(ks, nk, truth, prof);
}
