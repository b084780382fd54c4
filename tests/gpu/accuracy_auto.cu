// The accuracy kernels in cycle mode with automatic anchors
// (IKP_ANCHOR_EVERY=65536; own namespace: a different configuration of the
// same inline functions).
#include <stdint.h>
namespace ikp_au {
#define IKP_ANCHOR_EVERY 65536
#include "../../ikp_cuda.cuh"
#include "accuracy_kernels.cuh"
}
void au_cross_sm(unsigned long long *start, int blocks, unsigned long long lane_ns, int moments, long long region_cycles,
                 unsigned long long *truth, uint64_t *prof)
{
    ikp_au::cross_sm<<<blocks, 32>>>(start, lane_ns, moments, region_cycles, truth, prof);
}
void au_fill_sm(unsigned long long *start, int blocks, size_t smem, unsigned long long lane_ns, int moments,
                long long region_cycles, unsigned long long *truth, uint64_t *prof, int shape)
{
    cudaFuncSetAttribute(ikp_au::fill_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    ikp_au::fill_sm<<<blocks, 1024, smem>>>(start, lane_ns, moments, region_cycles, truth, prof, shape);
}
void au_truth_regions(int blocks, const long long *ks, int nk, long long gap, long long stagger, long long *out,
                      uint64_t *prof)
{
    ikp_au::truth_regions<<<blocks, 64>>>(ks, nk, gap, stagger, out, prof);
}
