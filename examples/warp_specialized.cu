// Example 2: a warp-specialized producer/consumer kernel. Warp 0 (group
// "producer") copies tiles from global memory into a 4-stage shared-memory
// ring; warps 1..3 (group "consumer") wait for each stage, compute on it and
// hand the stage back. Named barriers FULL[s] (producer arrives, consumers
// wait) and EMPTY[s] (both sides wait, 128 threads each) carry the hand-offs.
// The trace shows the two groups overlapping.
#include "../ikp_cuda.cuh"
#include "common.h"
#include <cmath>
#include <vector>

enum { EV_LOAD, EV_WAIT_EMPTY, EV_WAIT_FULL, EV_COMPUTE, EV_TILE };
#define STAGES 4
#define TILE 768     /* floats per stage: 8 per consumer thread */
#define THREADS 128  /* 1 producer warp + 3 consumer warps */

__device__ __forceinline__ void bar_sync(int id) { asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(THREADS) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id) { asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(THREADS) : "memory"); }
#define FULL(s) (1 + (s))
#define EMPTY(s) (1 + STAGES + (s))

__global__ void __launch_bounds__(THREADS) pipeline(const float *in, float *out, int tiles, uint64_t *prof)
{
    __shared__ float4 ring[STAGES][TILE / 4];
    const int warp = threadIdx.x / 32, l = threadIdx.x % 32;
    IKP_LANE(lane);
    IKP_INIT(lane, prof, warp == 0 ? 0 : 1, 2, l == 0 && warp <= 1);
    const float4 *src = reinterpret_cast<const float4 *>(in) + (size_t)blockIdx.x * tiles * (TILE / 4);
    if (warp == 0) {
        for (int t = 0; t < tiles; t++) {
            int s = t % STAGES;
            if (t >= STAGES) {
                IKP_BEGIN(lane, EV_WAIT_EMPTY);
                bar_sync(EMPTY(s));
                IKP_END(lane, EV_WAIT_EMPTY);
            }
            IKP_BEGIN(lane, EV_LOAD);
            IKP_DATA(lane, EV_LOAD, t);
            for (int j = l; j < TILE / 4; j += 32) ring[s][j] = src[(size_t)t * (TILE / 4) + j];
            IKP_END(lane, EV_LOAD);
            bar_arrive(FULL(s)); // the barrier orders the shared stores before the consumers' reads
        }
    } else {
        const int c = threadIdx.x - 32; // 0..95
        float acc = 0.f;
        for (int t = 0; t < tiles; t++) {
            int s = t % STAGES;
            IKP_BEGIN(lane, EV_TILE);
            IKP_BEGIN(lane, EV_WAIT_FULL);
            bar_sync(FULL(s));
            IKP_END(lane, EV_WAIT_FULL);
            IKP_BEGIN(lane, EV_COMPUTE);
            const float *tile = reinterpret_cast<const float *>(ring[s]);
            for (int j = 0; j < 8; j++) {
                float v = tile[c * 8 + j];
                for (int k = 0; k < 24; k++) v = fmaf(v, 0.99f, 0.01f);
                acc += v;
            }
            IKP_PIN(acc);
            IKP_END(lane, EV_COMPUTE);
            // hand the stage back; a full bar.sync (the producer waits on it before
            // refilling the stage), so the release orders these reads before the refill
            if (t + STAGES < tiles) bar_sync(EMPTY(s));
            IKP_END(lane, EV_TILE);
        }
        out[blockIdx.x * 96 + c] = acc;
    }
    IKP_FINALIZE(lane);
}

int main(int argc, char **argv)
{
    int dev = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int blocks = sms * 2, tiles = 64;
    const size_t n = (size_t)blocks * tiles * TILE;
    const char *out = argc > 1 ? argv[1] : "warp_specialized";
    std::vector<float> hin(n), hout(blocks * 96);
    for (size_t i = 0; i < n; i++) hin[i] = (float)((i * 2654435761u) % 1000) / 1000.f;
    float *din, *dout;
    CK(cudaMalloc(&din, n * sizeof(float)));
    CK(cudaMalloc(&dout, hout.size() * sizeof(float)));
    CK(cudaMemcpy(din, hin.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    ikp_cuda_buffer buf;
    ikp_error err;
    // lanes: 2 groups per block; capacity: 4 records per tile per lane + slack
    if (ikp_cuda_buffer_create(&buf, blocks * 2, tiles * 6 + 16, &err) != IKP_OK ||
        ikp_cuda_buffer_reset(&buf, 0, &err) != IKP_OK) { fprintf(stderr, "%s\n", err.message); return 1; }
    pipeline<<<blocks, THREADS>>>(din, dout, tiles, buf.device);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hout.data(), dout, hout.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b += 7)
        for (int c = 0; c < 96; c += 13) {
            float acc = 0.f;
            for (int t = 0; t < tiles; t++)
                for (int j = 0; j < 8; j++) {
                    float v = hin[((size_t)b * tiles + t) * TILE + c * 8 + j];
                    for (int k = 0; k < 24; k++) v = fmaf(v, 0.99f, 0.01f);
                    acc += v;
                }
            if (std::fabs(acc - hout[b * 96 + c]) > 1e-3f * std::fabs(acc) + 1e-3f) {
                fprintf(stderr, "wrong result at block %d thread %d: %f vs %f\n", b, c, hout[b * 96 + c], acc);
                return 1;
            }
        }
    const char *names[] = {"load", "wait_empty", "wait_full", "compute", "tile"};
    const char *groups[] = {"producer", "consumer"};
    example_dump(&buf, out, names, 5, groups, 2);
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaFree(din));
    CK(cudaFree(dout));
    return 0;
}
