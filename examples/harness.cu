// Example 5: IKP in someone else's benchmark harness. A row-wise layernorm,
// one warp a row, in the shape of a third-party benchmark: the kernel
// returns early for rows past the end, and the harness times the kernel in a
// repeat loop. The repeats run disarmed (a NULL buffer: the recorder writes
// nothing, and the timings are the kernel's); one launch outside the timed
// window is recorded, on a buffer reset just before it.
//     nvcc -O3 -arch=sm_90 harness.cu -o harness && ./harness [OUT]
// writes OUT.json and OUT.ikp. A production build (-DIKP_ENABLE=0) is the
// same file: the macros vanish, and ikp.h's helpers take nothing, record
// nothing and write nothing (they say so), so the host code has no #if.
#include "../ikp_cuda.cuh"
#include "common.h"
#include <cmath>
#include <vector>

enum { EV_MEAN, EV_RSTD, EV_NORM };

__global__ void layernorm(float *out, const float *in, const float *w, int rows, int cols, uint64_t *prof)
{
    const int warp = threadIdx.x / 32, lane_id = threadIdx.x % 32, warps = blockDim.x / 32;
    const int row = blockIdx.x * warps + warp;
    IKP_LANE(lane);
    // before the early return, so that every lane of the grid is opened and
    // closed (a lane that returns before IKP_INIT is simply absent)
    IKP_INIT(lane, prof, warp, warps, lane_id == 0);
    if (row >= rows) { // the harness's own bounds check: close the lane on this path too
        IKP_FINALIZE(lane);
        return;
    }
    const float *x = in + (size_t)row * cols;
    IKP_BEGIN(lane, EV_MEAN);
    float s = 0.f;
    for (int c = lane_id; c < cols; c += 32) s += x[c];
    for (int o = 16; o; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    float mean = s / cols;
    IKP_PIN(mean); // the reduction's result: computed inside the region, not after its end
    IKP_END(lane, EV_MEAN);
    IKP_BEGIN(lane, EV_RSTD);
    float v = 0.f;
    for (int c = lane_id; c < cols; c += 32) v += (x[c] - mean) * (x[c] - mean);
    for (int o = 16; o; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    float rstd = rsqrtf(v / cols + 1e-5f);
    IKP_PIN(rstd);
    IKP_END(lane, EV_RSTD);
    IKP_BEGIN(lane, EV_NORM);
    for (int c = lane_id; c < cols; c += 32) out[(size_t)row * cols + c] = (x[c] - mean) * rstd * w[c];
    // the stores are issued, not landed, when the region ends: that is what
    // it measures (to include their arrival, end it after a __threadfence())
    IKP_END(lane, EV_NORM);
    IKP_FINALIZE(lane);
}

int main(int argc, char **argv)
{
    const int rows = 3999, cols = 768, threads = 256, warps = threads / 32;
    const int blocks = (rows + warps - 1) / warps, repeats = 50; // the last block has rows past the end
    const char *out = argc > 1 ? argv[1] : "harness";
    std::vector<float> hin((size_t)rows * cols), hw(cols), hout((size_t)rows * cols);
    for (size_t i = 0; i < hin.size(); i++) hin[i] = (float)((i * 2654435761u) % 1000) / 500.f - 1.f;
    for (int c = 0; c < cols; c++) hw[c] = 1.f + c * 1e-3f;
    float *din, *dw, *dout;
    CK(cudaMalloc(&din, hin.size() * sizeof(float)));
    CK(cudaMalloc(&dw, hw.size() * sizeof(float)));
    CK(cudaMalloc(&dout, hout.size() * sizeof(float)));
    CK(cudaMemcpy(din, hin.data(), hin.size() * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dw, hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));

    // the harness's timed loop: disarmed (prof = NULL), so no reset is needed
    // between repeats and nothing is recorded
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    layernorm<<<blocks, threads>>>(dout, din, dw, rows, cols, nullptr); // warm-up
    CK(cudaEventRecord(t0));
    for (int r = 0; r < repeats; r++) layernorm<<<blocks, threads>>>(dout, din, dw, rows, cols, nullptr);
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    float ms = 0.f;
    CK(cudaEventElapsedTime(&ms, t0, t1));
    printf("layernorm %dx%d: %.2f us a launch (%d launches, not recorded)\n", rows, cols, 1000.f * ms / repeats, repeats);

    // one recorded launch, outside the timed window: lanes = blocks x warps,
    // 2 records a region x 3 regions (anchors and FINALIZE take no slots)
    ikp_cuda_buffer buf;
    ikp_error err;
    if (ikp_cuda_buffer_create(&buf, (uint32_t)blocks * warps, example_capacity(6), &err) != IKP_OK ||
        ikp_cuda_buffer_reset(&buf, 0, &err) != IKP_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    layernorm<<<blocks, threads>>>(dout, din, dw, rows, cols, buf.device);
    CK(cudaGetLastError());
    const char *names[] = {"mean", "rstd", "norm"};
    example_dump(&buf, out, names, 3, NULL, 0); // right after the launch: it waits for the kernel
    ikp_cuda_buffer_destroy(&buf);

    CK(cudaMemcpy(hout.data(), dout, hout.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; r += 97) { // the harness's own correctness check
        double m = 0, v = 0;
        for (int c = 0; c < cols; c++) m += hin[(size_t)r * cols + c];
        m /= cols;
        for (int c = 0; c < cols; c++) v += (hin[(size_t)r * cols + c] - m) * (hin[(size_t)r * cols + c] - m);
        const double rstd = 1.0 / std::sqrt(v / cols + 1e-5);
        for (int c = 0; c < cols; c += 31) {
            const double want = (hin[(size_t)r * cols + c] - m) * rstd * hw[c];
            if (std::fabs(want - hout[(size_t)r * cols + c]) > 1e-3 * std::fabs(want) + 1e-3) {
                fprintf(stderr, "wrong result at row %d col %d: %f vs %f\n", r, c, hout[(size_t)r * cols + c], want);
                return 1;
            }
        }
    }
    CK(cudaFree(din));
    CK(cudaFree(dw));
    CK(cudaFree(dout));
    return 0;
}
