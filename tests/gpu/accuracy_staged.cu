// The accuracy kernels in cycle mode, staged in shared memory (own
// namespace: a different configuration of the same inline functions).
#include <stdint.h>
namespace ikp_st {
#define IKP_STAGED 1
#include "../../ikp_cuda.cuh"
#include "accuracy_kernels.cuh"
}
void st_known_length(const long long *ks, int nk, long long *truth, uint64_t *prof)
{
    ikp_st::known_length<<<2, 32>>>(ks, nk, truth, prof);
}
void st_same_moment(unsigned long long *deadline, int blocks, int reps, int anchors, uint64_t *prof)
{
    ikp_st::same_moment<<<blocks, 32>>>(deadline, reps, anchors, prof);
}
void st_cross_sm(unsigned long long *start, int blocks, unsigned long long lane_ns, int moments, long long region_cycles,
                 unsigned long long *truth, uint64_t *prof)
{
    ikp_st::cross_sm<<<blocks, 32>>>(start, lane_ns, moments, region_cycles, truth, prof);
}
void st_anchored_moment(unsigned long long *deadline, int blocks, int reps, unsigned long long *truth, uint64_t *prof)
{
    ikp_st::anchored_moment<<<blocks, 32>>>(deadline, reps, truth, prof);
}
void st_truth_regions(int blocks, const long long *ks, int nk, long long gap, long long stagger, long long *out,
                      uint64_t *prof)
{
    ikp_st::truth_regions<<<blocks, 64>>>(ks, nk, gap, stagger, out, prof);
}
