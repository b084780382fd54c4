// Example 1: load / compute / store regions in a simple kernel, one lane per
// warp. Complete on its own: nvcc -O3 -arch=sm_90 minimal.cu -o minimal
// (with ikp.h and ikp_cuda.cuh one directory up), then ./minimal [OUT]
// writes OUT.json (open it in ui.perfetto.dev) and OUT.ikp (for `ikp`).
#define IKP_IMPLEMENTATION // the host library's code, in this one file
#include "../ikp.h"
#include "../ikp_cuda.cuh"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

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
    // one lane per warp, 6 records each (3 regions); the tests shrink it with
    // IKP_EXAMPLE_CAPACITY to make every lane overflow
    const char *cap_env = getenv("IKP_EXAMPLE_CAPACITY");
    const uint32_t capacity = cap_env && atoi(cap_env) >= 0 ? (uint32_t)atoi(cap_env) : 8;
    ikp_cuda_buffer buf;
    ikp_error err;
    if (ikp_cuda_buffer_create(&buf, blocks * (threads / 32), capacity, &err) != IKP_OK ||
        ikp_cuda_buffer_reset(&buf, 0, &err) != IKP_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    saxpy_poly<<<blocks, threads>>>(x, y, n, buf.device);
    CK(cudaGetLastError());
    // right after the launch: the dump waits for the kernel, sampling the SM
    // clocks meanwhile, then writes the trace, the capture and a summary
    char trace[512], capture[512];
    snprintf(trace, sizeof trace, "%s.json", out);
    snprintf(capture, sizeof capture, "%s.ikp", out);
    const char *names[] = {"load", "compute", "store"};
    ikp_dump_desc d = {};
    d.trace_path = trace;
    d.capture_path = capture;
    d.summary = stdout;
    d.decode.event_names = names;
    d.decode.num_event_names = 3;
    if (ikp_cuda_dump(&buf, 0, &d, &err) != IKP_OK) { fprintf(stderr, "ikp: %s\n", err.message); return 1; }
    printf("wrote %s and %s\n", trace, capture);
    CK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i += 977) {
        float v = hx[i];
        for (int k = 0; k < 256; k++) v = fmaf(v, 0.999f, 0.001f);
        if (std::fabs(v - hy[i]) > 1e-5f) { fprintf(stderr, "wrong result at %d\n", i); return 1; }
    }
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaFree(x));
    CK(cudaFree(y));
    return 0;
}
