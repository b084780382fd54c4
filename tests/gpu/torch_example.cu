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

// The same kernel in a CUDA graph (torch.cuda.graph): the buffer is made
// before the capture (cudaMalloc cannot be captured), the reset and the
// launch are captured into the graph on `stream` (the capture's), and
// each replay is dumped after it, on the stream it was replayed on.
static ikp_cuda_buffer graph_buf;

extern "C" int ikp_torch_graph_buffer(int n)
{
    const int threads = 256, blocks = (n + threads - 1) / threads;
    ikp_error err;
    if (ikp_cuda_buffer_create(&graph_buf, (uint32_t)blocks * (threads / 32), 8, &err) != IKP_OK) {
        fprintf(stderr, "ikp: %s\n", err.message);
        return 1;
    }
    return 0;
}

extern "C" int ikp_torch_graph_capture(const float *x, float *y, int n, int rounds, void *stream)
{
    const int threads = 256, blocks = (n + threads - 1) / threads;
    ikp_error err;
    if (ikp_cuda_buffer_reset(&graph_buf, (cudaStream_t)stream, &err) != IKP_OK) {
        fprintf(stderr, "ikp: %s\n", err.message);
        return 1;
    }
    ikp_torch_saxpy<<<blocks, threads, 0, (cudaStream_t)stream>>>(x, y, n, rounds, graph_buf.device);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) fprintf(stderr, "launch: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}

extern "C" int ikp_torch_graph_dump(const char *capture_path, void *stream)
{
    static const char *const names[] = {"load", "compute", "store"};
    ikp_dump_desc d = {};
    ikp_error err;
    d.capture_path = capture_path;
    d.decode.event_names = names;
    d.decode.num_event_names = 3;
    int rc = ikp_cuda_dump(&graph_buf, (cudaStream_t)stream, &d, &err) != IKP_OK;
    if (rc) fprintf(stderr, "ikp: %s\n", err.message);
    return rc;
}

extern "C" void ikp_torch_graph_free(void) { ikp_cuda_buffer_destroy(&graph_buf); }
