// Example 1: load / compute / store regions in a simple kernel, one lane per warp.
#include "../ikp_cuda.cuh"
#include "common.h"
#include <cmath>
#include <vector>

enum { EV_LOAD, EV_COMPUTE, EV_STORE };

__global__ void saxpy_poly(const float *x, float *y, int n, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, threadIdx.x / 32, blockDim.x / 32, threadIdx.x % 32 == 0);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    IKP_BEGIN(lane, EV_LOAD);
    float v = i < n ? x[i] : 0.f;
    IKP_PIN(v); // the load must have returned before the region ends
    IKP_END(lane, EV_LOAD);
    IKP_BEGIN(lane, EV_COMPUTE);
    IKP_PIN(v);
    for (int k = 0; k < 256; k++) v = fmaf(v, 0.999f, 0.001f);
    IKP_PIN(v);
    IKP_END(lane, EV_COMPUTE);
    IKP_BEGIN(lane, EV_STORE);
    if (i < n) y[i] = v;
    IKP_END(lane, EV_STORE);
    IKP_FINALIZE(lane);
}

int main(int argc, char **argv)
{
    const int n = 1 << 20, threads = 256, blocks = (n + threads - 1) / threads;
    const char *out = argc > 1 ? argv[1] : "minimal";
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; i++) hx[i] = (float)(i % 1000) / 1000.f;
    float *x, *y;
    CK(cudaMalloc(&x, n * sizeof(float)));
    CK(cudaMalloc(&y, n * sizeof(float)));
    CK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    ikp_cuda_buffer buf;
    ikp_error err;
    if (ikp_cuda_buffer_create(&buf, blocks * (threads / 32), example_capacity(8), &err) != IKP_OK ||
        ikp_cuda_buffer_reset(&buf, 0, &err) != IKP_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    saxpy_poly<<<blocks, threads>>>(x, y, n, buf.device);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i += 977) {
        float v = hx[i];
        for (int k = 0; k < 256; k++) v = fmaf(v, 0.999f, 0.001f);
        if (std::fabs(v - hy[i]) > 1e-5f) { fprintf(stderr, "wrong result at %d\n", i); return 1; }
    }
    const char *names[] = {"load", "compute", "store"};
    example_dump(&buf, out, names, 3, NULL, 0);
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaFree(x));
    CK(cudaFree(y));
    return 0;
}
