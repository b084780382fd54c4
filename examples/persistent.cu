// Example 3: a persistent kernel: one block per SM loops over many tiles;
// each tile has nested regions: tile { load, compute { step x4 }, store }.
// A lane lives as long as the kernel, so each tile starts with an anchor
// (GUIDE.md "Anchors"): its stamps follow the SM clock even if it drifts.
#include "../ikp_cuda.cuh"
#include "common.h"
#include <cmath>
#include <vector>

enum { EV_TILE, EV_LOAD, EV_COMPUTE, EV_STEP, EV_STORE };

__global__ void persistent(const float *in, float *out, int tiles, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        IKP_ANCHOR(lane);
        IKP_BEGIN(lane, EV_TILE);
        IKP_DATA(lane, EV_TILE, t);
        IKP_BEGIN(lane, EV_LOAD);
        float v = in[(size_t)t * blockDim.x + threadIdx.x];
        IKP_PIN(v);
        IKP_END(lane, EV_LOAD);
        IKP_BEGIN(lane, EV_COMPUTE);
        for (int s = 0; s < 4; s++) {
            IKP_SCOPE(lane, EV_STEP);
            IKP_PIN(v);
            for (int k = 0; k < 32; k++) v = fmaf(v, 0.995f, 0.005f);
            IKP_PIN(v);
        }
        IKP_END(lane, EV_COMPUTE);
        IKP_BEGIN(lane, EV_STORE);
        out[(size_t)t * blockDim.x + threadIdx.x] = v;
        IKP_END(lane, EV_STORE);
        IKP_END(lane, EV_TILE);
    }
    IKP_FINALIZE(lane);
}

int main(int argc, char **argv)
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int tiles = sms * 40, threads = 256;
    const size_t n = (size_t)tiles * threads;
    const char *out = argc > 1 ? argv[1] : "persistent";
    std::vector<float> hin(n), hout(n);
    for (size_t i = 0; i < n; i++) hin[i] = (float)(i % 977) / 977.f;
    float *din, *dout;
    CK(cudaMalloc(&din, n * sizeof(float)));
    CK(cudaMalloc(&dout, n * sizeof(float)));
    CK(cudaMemcpy(din, hin.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    ikp_cuda_buffer buf;
    ikp_error err;
    const int per_block = (tiles + sms - 1) / sms;
    if (ikp_cuda_buffer_create(&buf, sms, example_capacity(per_block * 19 + 8), &err) != IKP_OK ||
        ikp_cuda_buffer_reset(&buf, 0, &err) != IKP_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    persistent<<<sms, threads>>>(din, dout, tiles, buf.device);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hout.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i += 4093) {
        float v = hin[i];
        for (int k = 0; k < 128; k++) v = fmaf(v, 0.995f, 0.005f);
        if (std::fabs(v - hout[i]) > 1e-5f) { fprintf(stderr, "wrong result at %zu\n", i); return 1; }
    }
    const char *names[] = {"tile", "load", "compute", "step", "store"};
    example_dump(&buf, out, names, 5, NULL, 0);
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaFree(din));
    CK(cudaFree(dout));
    return 0;
}
