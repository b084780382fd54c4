// Example 2: a warp-specialized producer/consumer kernel with a 4-stage
// shared-memory pipeline. Warp 0 (group "producer") copies tile t+3 from
// global memory into stage (t+3) % 4 while warps 1..3 (group "consumer")
// compute on tile t in stage t % 4; one block barrier per step hands the
// stages over. The trace shows the two groups overlapping: loads run under
// the consumers' compute, and the "wait" regions show who waits for whom.
#include "../ikp_cuda.cuh"
#include "common.h"
#include <cmath>
#include <vector>

enum { EV_LOAD, EV_WAIT, EV_COMPUTE, EV_STEP };
#define STAGES 4
#define TILE 768     /* floats per stage: 8 per consumer thread */
#define THREADS 128  /* 1 producer warp + 3 consumer warps */

__global__ void __launch_bounds__(THREADS) pipeline(const float *in, float *out, int tiles, uint64_t *prof)
{
    __shared__ float4 ring[STAGES][TILE / 4];
    const int warp = threadIdx.x / 32, l = threadIdx.x % 32;
    const bool producer = warp == 0;
    IKP_LANE(lane);
    IKP_INIT(lane, prof, producer ? 0 : 1, 2, l == 0 && warp <= 1);
    const float4 *src = reinterpret_cast<const float4 *>(in) + (size_t)blockIdx.x * tiles * (TILE / 4);
    if (producer) { // prologue: the first STAGES-1 tiles
        for (int t = 0; t < STAGES - 1 && t < tiles; t++) {
            IKP_BEGIN(lane, EV_LOAD);
            IKP_DATA(lane, EV_LOAD, t);
            for (int j = l; j < TILE / 4; j += 32) ring[t][j] = src[(size_t)t * (TILE / 4) + j];
            IKP_END(lane, EV_LOAD);
        }
    }
    IKP_BEGIN(lane, EV_WAIT);
    __syncthreads();
    IKP_END(lane, EV_WAIT);
    float acc = 0.f;
    const int c = threadIdx.x - 32; // consumer index 0..95
    for (int t = 0; t < tiles; t++) {
        IKP_BEGIN(lane, EV_STEP);
        if (producer) {
            int f = t + STAGES - 1; // the tile to fetch: its stage was consumed at step t-1
            if (f < tiles) {
                IKP_BEGIN(lane, EV_LOAD);
                IKP_DATA(lane, EV_LOAD, f);
                for (int j = l; j < TILE / 4; j += 32) ring[f % STAGES][j] = src[(size_t)f * (TILE / 4) + j];
                IKP_END(lane, EV_LOAD);
            }
        } else {
            IKP_BEGIN(lane, EV_COMPUTE);
            const float *tile = reinterpret_cast<const float *>(ring[t % STAGES]);
            for (int j = 0; j < 8; j++) {
                float v = tile[c * 8 + j];
                for (int k = 0; k < 24; k++) v = fmaf(v, 0.99f, 0.01f);
                acc += v;
            }
            IKP_PIN(acc);
            IKP_END(lane, EV_COMPUTE);
        }
        IKP_BEGIN(lane, EV_WAIT); // stage t is free and stage t+3 is full after this
        __syncthreads();
        IKP_END(lane, EV_WAIT);
        IKP_END(lane, EV_STEP);
    }
    if (!producer) out[blockIdx.x * 96 + c] = acc;
    IKP_FINALIZE(lane);
}

int main(int argc, char **argv)
{
    int dev = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // IKP_EXAMPLE_TILES: fewer tiles a block (the shipped captures: 16)
    const char *tiles_env = getenv("IKP_EXAMPLE_TILES");
    const int blocks = sms * 2, tiles = tiles_env && atoi(tiles_env) > 0 && atoi(tiles_env) <= 64 ? atoi(tiles_env) : 64;
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
    // lanes: 2 groups per block; capacity: up to 7 records per tile per lane + prologue
    if (ikp_cuda_buffer_create(&buf, blocks * 2, example_capacity(tiles * 7 + 32), &err) != IKP_OK ||
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
    const char *names[] = {"load", "wait", "compute", "step"};
    const char *groups[] = {"producer", "consumer"};
    example_dump(&buf, out, names, 4, groups, 2);
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaFree(din));
    CK(cudaFree(dout));
    return 0;
}
