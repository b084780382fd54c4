// A kernel recorded by IKP inside a PyTorch process: built as a shared
// library (make build/libikp_torch_example.so) that tests/gpu/torch_merge.py
// loads with ctypes and calls under torch.profiler, so that the profiler's
// trace holds the kernel's slice and the capture holds its inside.
#define IKP_IMPLEMENTATION
#include "../../ikp.h"
#include "../../ikp_cuda.cuh"
#include <cstdio>

enum { EV_LOAD, EV_COMPUTE, EV_STORE };

__global__ void ikp_torch_saxpy(const float *x, float *y, int n, int rounds, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, threadIdx.x / 32, blockDim.x / 32, threadIdx.x % 32 == 0);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    IKP_BEGIN(lane, EV_LOAD);
    float v = i < n ? x[i] : 0.f;
    IKP_PIN(v);
    IKP_END(lane, EV_LOAD);
    IKP_BEGIN(lane, EV_COMPUTE);
    IKP_PIN(v);
    for (int k = 0; k < rounds; k++) v = fmaf(v, 0.999f, 0.001f);
    IKP_PIN(v);
    IKP_END(lane, EV_COMPUTE);
    IKP_BEGIN(lane, EV_STORE);
    if (i < n) y[i] = v;
    IKP_END(lane, EV_STORE);
    IKP_FINALIZE(lane);
}

// Launches the kernel on x and y (n floats of device memory, e.g. torch
// tensors' data_ptr()) on the default stream, then writes the capture, with
// the clock readings that place it in host time, to capture_path. 0 on
// success; else a message on stderr.
extern "C" int ikp_torch_example(const float *x, float *y, int n, int rounds, const char *capture_path)
{
    const int threads = 256, blocks = (n + threads - 1) / threads;
    static const char *const names[] = {"load", "compute", "store"};
    ikp_cuda_buffer buf;
    ikp_dump_desc d = {};
    ikp_error err;
    if (ikp_cuda_buffer_create(&buf, (uint32_t)blocks * (threads / 32), 8, &err) != IKP_OK ||
        ikp_cuda_buffer_reset(&buf, 0, &err) != IKP_OK) {
        fprintf(stderr, "ikp: %s\n", err.message);
        return 1;
    }
    ikp_torch_saxpy<<<blocks, threads>>>(x, y, n, rounds, buf.device);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        fprintf(stderr, "launch: %s\n", cudaGetErrorString(e));
        ikp_cuda_buffer_destroy(&buf);
        return 1;
    }
    d.capture_path = capture_path;
    d.decode.event_names = names;
    d.decode.num_event_names = 3;
    int rc = ikp_cuda_dump(&buf, 0, &d, &err) != IKP_OK;
    if (rc) fprintf(stderr, "ikp: %s\n", err.message);
    ikp_cuda_buffer_destroy(&buf);
    return rc;
}
