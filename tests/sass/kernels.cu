// Three kernels written with IKP lines. Built three ways by check_sass.py:
//   -DIKP_PLAIN      every IKP line removed (the kernel as written without IKP)
//   -DIKP_ENABLE=0   IKP lines present, profiling compiled out
//   (default)        profiling on
// With IKP_ENABLE=0 the .text of each kernel must equal the IKP_PLAIN one.
#include <stdint.h>
#ifdef IKP_PLAIN
#define P(...)
#define PROF_PARAM
#else
#include "../../ikp_cuda.cuh"
#define P(...) __VA_ARGS__
#define PROF_PARAM , uint64_t *prof
#endif

enum { EV_LOAD, EV_COMPUTE, EV_STORE, EV_TILE, EV_WAIT };

extern "C" __global__ void simple_kernel(const float *in, float *out, int n PROF_PARAM)
{
    P(IKP_LANE(lane);)
    P(IKP_INIT(lane, prof, threadIdx.x / 32, blockDim.x / 32, threadIdx.x % 32 == 0);)
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    P(IKP_BEGIN(lane, EV_LOAD);)
    float x = i < n ? in[i] : 0.f;
    P(IKP_END(lane, EV_LOAD);)
    P(IKP_BEGIN(lane, EV_COMPUTE);)
    for (int k = 0; k < 32; k++) x = fmaf(x, 1.0001f, 0.5f);
    P(IKP_END(lane, EV_COMPUTE);)
    P(IKP_BEGIN(lane, EV_STORE);)
    if (i < n) out[i] = x;
    P(IKP_END(lane, EV_STORE);)
    P(IKP_FINALIZE(lane);)
}

// Warp 0 produces tiles into a shared-memory ring, warps 1..3 consume them.
extern "C" __global__ void warp_specialized_kernel(const float *in, float *out, int tiles PROF_PARAM)
{
    __shared__ float ring[4][128];
    __shared__ int ready[4];
    P(IKP_LANE(lane);)
    const int warp = threadIdx.x / 32, l = threadIdx.x % 32;
    P(IKP_INIT(lane, prof, warp == 0 ? 0 : 1, 2, l == 0 && warp <= 1);)
    if (threadIdx.x < 4) ready[threadIdx.x] = -1;
    __syncthreads();
    float acc = 0.f;
    for (int t = 0; t < tiles; t++) {
        int s = t % 4;
        if (warp == 0) {
            P(IKP_BEGIN(lane, EV_LOAD);)
            for (int j = l; j < 128; j += 32) ring[s][j] = in[(blockIdx.x * tiles + t) * 128 + j];
            __syncwarp();
            if (l == 0) atomicExch(&ready[s], t);
            P(IKP_END(lane, EV_LOAD);)
        } else {
            P(IKP_BEGIN(lane, EV_WAIT);)
            while (atomicAdd(&ready[s], 0) != t) {}
            P(IKP_END(lane, EV_WAIT);)
            P(IKP_SCOPE(lane, EV_COMPUTE);)
            acc += ring[s][threadIdx.x % 128];
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    P(IKP_FINALIZE(lane);)
}

// One block per SM looping over tiles, nested regions.
extern "C" __global__ void persistent_kernel(const float *in, float *out, int tiles PROF_PARAM)
{
    P(IKP_SHARED_STAGE(stage, 1, 256);)
    P(IKP_LANE(lane);)
    P(IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);)
    P(IKP_STAGE(lane, stage[0], 256);)
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        P(IKP_ANCHOR(lane);)
        P(IKP_BEGIN(lane, EV_TILE);)
        P(IKP_DATA(lane, EV_TILE, t);)
        P(IKP_BEGIN(lane, EV_LOAD);)
        float x = in[t * blockDim.x + threadIdx.x];
        P(IKP_END(lane, EV_LOAD);)
        P(IKP_BEGIN(lane, EV_COMPUTE);)
        for (int k = 0; k < 16; k++) x = x * x + 0.25f;
        P(IKP_END(lane, EV_COMPUTE);)
        out[t * blockDim.x + threadIdx.x] = x;
        P(IKP_END(lane, EV_TILE);)
        P(IKP_FLUSH(lane);)
    }
    P(IKP_FINALIZE(lane);)
}
