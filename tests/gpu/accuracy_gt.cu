// The accuracy kernels with the %globaltimer timer kind (own namespace: a
// different configuration of the same inline functions).
#include <stdint.h>
namespace ikp_gt {
#define IKP_TIMER IKP_TIMER_GLOBAL
#include "../../ikp_cuda.cuh"
#include "accuracy_kernels.cuh"
}
void gt_known_length(const long long *ks, int nk, long long *truth, uint64_t *prof)
{
    ikp_gt::known_length<<<2, 32>>>(ks, nk, truth, prof);
}
void gt_same_moment(unsigned long long *deadline, int blocks, int reps, int anchors, uint64_t *prof)
{
    ikp_gt::same_moment<<<blocks, 32>>>(deadline, reps, anchors, prof);
}
void gt_long_run(int n, long long busy, long long idle, long long *truth, uint64_t *prof, cudaStream_t s)
{
    ikp_gt::long_run<<<1, 32, 0, s>>>(n, busy, idle, truth, prof);
}
