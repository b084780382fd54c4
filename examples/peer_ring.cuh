/* A ring step on two GPUs through peer memory, instrumented on both sides:
   each GPU writes a tile into the other's inbox, raises a flag there, then
   waits for the other's flag and consumes the tile it received. Used by
   examples/peer_ring.cu and tests/gpu/test_multi.cu. Needs ikp.h (with its
   implementation) and ikp_cuda.cuh included before it. */
#ifndef IKP_EXAMPLE_PEER_RING_CUH
#define IKP_EXAMPLE_PEER_RING_CUH
#include <cstring>
#include <vector>

enum { RING_SEND, RING_RAISE, RING_WAIT, RING_SEEN, RING_CONSUME, RING_EVENTS };
static const char *const ring_names[RING_EVENTS] = {"send", "flag raised", "wait", "flag seen", "consume"};
#define RING_TILE 4096 /* floats per tile */

/* One block: its 256 threads copy the tile; thread 0 raises and waits on
   the flags and is the lane's leader. "flag raised" is stamped before the
   flag's store and "flag seen" after the load that saw it, so a true
   timeline puts every raise before its sighting by at least the flag's
   travel time. Both carry the step as payload. */
__global__ void ring_kernel(int steps, const float *tile, float *peer_inbox, volatile unsigned *peer_flags,
                            const float *inbox, volatile unsigned *flags, float *sums, uint64_t *prof)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    for (int s = 0; s < steps; s++) {
        IKP_BEGIN(lane, RING_SEND);
        for (int i = threadIdx.x; i < RING_TILE; i += blockDim.x)
            peer_inbox[(size_t)s * RING_TILE + i] = tile[i] + (float)s;
        __syncthreads();
        IKP_END(lane, RING_SEND);
        if (threadIdx.x == 0) {
            __threadfence_system(); /* the tile before the flag */
            IKP_INSTANT(lane, RING_RAISE);
            IKP_DATA(lane, RING_RAISE, (uint32_t)s);
            peer_flags[s] = 1u;
            IKP_BEGIN(lane, RING_WAIT);
            while (flags[s] == 0u) {}
            IKP_INSTANT(lane, RING_SEEN);
            IKP_DATA(lane, RING_SEEN, (uint32_t)s);
            IKP_END(lane, RING_WAIT);
            __threadfence_system();
        }
        __syncthreads();
        IKP_BEGIN(lane, RING_CONSUME);
        float acc = 0.f;
        for (int i = threadIdx.x; i < RING_TILE; i += blockDim.x) acc += inbox[(size_t)s * RING_TILE + i];
        IKP_PIN(acc);
        atomicAdd(&sums[s], acc);
        IKP_END(lane, RING_CONSUME);
    }
    IKP_FINALIZE(lane);
}

typedef struct ring_gpu {
    float *tile, *inbox, *sums;
    unsigned *flags;
    ikp_cuda_buffer buf;
    cudaStream_t stream;
} ring_gpu;

/* What a run leaves: each GPU's buffer words, and its readings and peer
   measurements (before and after the kernels) to decode them with. */
typedef struct ring_result {
    std::vector<uint64_t> words[2];
    ikp_device_id device[2];
    ikp_clock_sync clock[2][2];
    uint32_t num_clock[2];
    ikp_peer_clock peers[2][2];
    uint32_t num_peers[2];
    int sums_ok;
} ring_result;

#define RING_CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

/* Runs steps exchanges between GPUs 0 and 1 (peer access needed).
   Returns 0, or 1 after saying why. */
static int ring_run(int steps, ring_result *res)
{
    ring_gpu g[2];
    ikp_error err;
    std::vector<float> host(RING_TILE);
    memset(g, 0, sizeof g);
    for (int d = 0; d < 2; d++) {
        RING_CK(cudaSetDevice(d));
        cudaError_t e = cudaDeviceEnablePeerAccess(1 - d, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) RING_CK(e);
        cudaGetLastError();
        for (int i = 0; i < RING_TILE; i++) host[i] = (float)(d + 1) * (float)(i % 7);
        RING_CK(cudaMalloc(&g[d].tile, RING_TILE * sizeof(float)));
        RING_CK(cudaMalloc(&g[d].inbox, (size_t)steps * RING_TILE * sizeof(float)));
        RING_CK(cudaMalloc(&g[d].sums, (size_t)steps * sizeof(float)));
        RING_CK(cudaMalloc(&g[d].flags, (size_t)steps * sizeof(unsigned)));
        RING_CK(cudaMemcpy(g[d].tile, host.data(), RING_TILE * sizeof(float), cudaMemcpyHostToDevice));
        RING_CK(cudaMemset(g[d].sums, 0, (size_t)steps * sizeof(float)));
        RING_CK(cudaMemset(g[d].flags, 0, (size_t)steps * sizeof(unsigned)));
        RING_CK(cudaStreamCreateWithFlags(&g[d].stream, cudaStreamNonBlocking));
        if (ikp_cuda_buffer_create(&g[d].buf, 1, (uint32_t)(12 * steps + 16), &err) != IKP_OK) {
            fprintf(stderr, "GPU %d: %s\n", d, err.message);
            return 1;
        }
        RING_CK(cudaDeviceSynchronize());
    }
    /* the GPUs' clocks against each other before, then (below) after */
    for (int d = 0; d < 2; d++) {
        res->num_peers[d] = 0;
        if (ikp_cuda_peer_clock(d, 1 - d, &res->peers[d][0], &err) != IKP_OK) {
            fprintf(stderr, "peer clock %d-%d: %s\n", d, 1 - d, err.message);
            return 1;
        }
        res->num_peers[d] = 1;
    }
    for (int d = 1; d >= 0; d--) { /* each waits on the other: both resident at once */
        RING_CK(cudaSetDevice(d));
        if (ikp_cuda_buffer_reset(&g[d].buf, g[d].stream, &err) != IKP_OK) {
            fprintf(stderr, "GPU %d: %s\n", d, err.message);
            return 1;
        }
        ring_kernel<<<1, 256, 0, g[d].stream>>>(steps, g[d].tile, g[1 - d].inbox, g[1 - d].flags, g[d].inbox,
                                                g[d].flags, g[d].sums, g[d].buf.device);
        RING_CK(cudaGetLastError());
    }
    res->sums_ok = 1;
    for (int d = 0; d < 2; d++) {
        RING_CK(cudaSetDevice(d));
        RING_CK(cudaStreamSynchronize(g[d].stream));
        res->words[d].resize(g[d].buf.num_words);
        if (ikp_cuda_buffer_download(&g[d].buf, g[d].stream, res->words[d].data(), &err) != IKP_OK) {
            fprintf(stderr, "GPU %d: %s\n", d, err.message);
            return 1;
        }
        std::vector<float> sums((size_t)steps);
        RING_CK(cudaMemcpy(sums.data(), g[d].sums, sums.size() * sizeof(float), cudaMemcpyDeviceToHost));
        double one = 0; /* what the other GPU's tile sums to, before its step is added */
        for (int i = 0; i < RING_TILE; i++) one += (double)(2 - d) * (double)(i % 7);
        for (int s = 0; s < steps; s++)
            if (std::fabs((double)sums[(size_t)s] - (one + (double)s * RING_TILE)) > 1e-3 * (one + s * RING_TILE))
                res->sums_ok = 0;
    }
    for (int d = 0; d < 2; d++) {
        if (ikp_cuda_peer_clock(d, 1 - d, &res->peers[d][1], &err) != IKP_OK) {
            fprintf(stderr, "peer clock %d-%d: %s\n", d, 1 - d, err.message);
            return 1;
        }
        res->num_peers[d] = 2;
        res->device[d] = g[d].buf.gpu;
        res->num_clock[d] = g[d].buf.num_clock;
        memcpy(res->clock[d], g[d].buf.clock, sizeof res->clock[d]);
        RING_CK(cudaSetDevice(d));
        ikp_cuda_buffer_destroy(&g[d].buf);
        cudaFree(g[d].tile); cudaFree(g[d].inbox); cudaFree(g[d].sums); cudaFree(g[d].flags);
        cudaStreamDestroy(g[d].stream);
    }
    RING_CK(cudaSetDevice(0));
    return 0;
}

/* Opens GPU d's capture; peers: with the GPU-GPU measurements (else the
   host readings alone place it). */
static ikp_capture *ring_open(const ring_result *res, int d, int peers, ikp_error *err)
{
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    memset(&o, 0, sizeof o);
    o.event_names = ring_names;
    o.num_event_names = RING_EVENTS;
    o.device = &res->device[d];
    o.clock = res->clock[d];
    o.num_clock = res->num_clock[d];
    if (peers) { o.peers = res->peers[d]; o.num_peers = res->num_peers[d]; }
    if (ikp_capture_open(res->words[d].data(), res->words[d].size(), &o, &cap, err) != IKP_OK) return NULL;
    return cap;
}
#endif
