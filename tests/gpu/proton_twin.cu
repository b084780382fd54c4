// IKP's own recording of the work tests/gpu/proton_spin.py gives Triton's
// Proton: PROGRAMS blocks of 4 warps, every warp's leader spinning KA SM
// cycles in region "load", then KB in "compute", REPS times (ws: warp 0
// only "load", the others only "compute"; wait: warp 0 spins KA in "load"
// while every warp then waits at __syncthreads in "wait"). Writes OUT.ikp.
// Usage: proton_twin OUT KA KB REPS PROGRAMS [ws|wait]
#define IKP_IMPLEMENTATION
#include "../../ikp.h"
#include "../../ikp_cuda.cuh"
#include <cstdio>
#include <cstdlib>
#include <cstring>

enum { EV_LOAD, EV_COMPUTE, EV_WAIT };

__device__ __forceinline__ void spin(long long k)
{
    const long long c0 = clock64();
    while (clock64() - c0 < k) {}
}

__global__ void twin(long long ka, long long kb, int reps, int ws, uint64_t *prof)
{
    const int warp = threadIdx.x / 32;
    IKP_LANE(lane);
    IKP_INIT(lane, prof, warp, blockDim.x / 32, threadIdx.x % 32 == 0);
    for (int i = 0; i < reps && ws == 2; i++) {
        if (warp == 0) {
            IKP_BEGIN(lane, EV_LOAD);
            spin(ka);
            IKP_END(lane, EV_LOAD);
        }
        IKP_BEGIN(lane, EV_WAIT);
        __syncthreads();
        IKP_END(lane, EV_WAIT);
    }
    for (int i = 0; i < reps && ws != 2; i++) {
        if (!ws || warp == 0) {
            IKP_BEGIN(lane, EV_LOAD);
            spin(ka);
            IKP_END(lane, EV_LOAD);
        }
        if (!ws || warp != 0) {
            IKP_BEGIN(lane, EV_COMPUTE);
            spin(kb);
            IKP_END(lane, EV_COMPUTE);
        }
    }
    IKP_FINALIZE(lane);
}

int main(int argc, char **argv)
{
    if (argc < 6) { fprintf(stderr, "usage: proton_twin OUT KA KB REPS PROGRAMS [ws|wait]\n"); return 2; }
    const long long ka = atoll(argv[2]), kb = atoll(argv[3]);
    const int reps = atoi(argv[4]), programs = atoi(argv[5]);
    const int ws = argc > 6 && !strcmp(argv[6], "ws") ? 1 : argc > 6 && !strcmp(argv[6], "wait") ? 2 : 0;
    char path[512];
    snprintf(path, sizeof path, "%s.ikp", argv[1]);
    ikp_cuda_buffer buf;
    ikp_error err;
    if (ikp_cuda_buffer_create(&buf, (uint32_t)programs * 4, 2 * (uint32_t)reps * 2 + 8, &err) != IKP_OK ||
        ikp_cuda_buffer_reset(&buf, 0, &err) != IKP_OK) { fprintf(stderr, "ikp: %s\n", err.message); return 1; }
    twin<<<programs, 128>>>(ka, kb, reps, ws, buf.device);
    if (cudaGetLastError() != cudaSuccess) { fprintf(stderr, "launch failed\n"); return 1; }
    const char *names[] = {"load", "compute", "wait"};
    ikp_dump_desc d;
    memset(&d, 0, sizeof d);
    d.capture_path = path;
    d.decode.event_names = names;
    d.decode.num_event_names = 3;
    const char *groups[] = {"warp 0", "warp 1", "warp 2", "warp 3"}; /* as Proton names its lanes */
    d.decode.group_names = groups;
    d.decode.num_group_names = 4;
    if (ikp_cuda_dump(&buf, 0, &d, &err) != IKP_OK) { fprintf(stderr, "ikp: %s\n", err.message); return 1; }
    ikp_cuda_buffer_destroy(&buf);
    printf("wrote %s\n", path);
    return 0;
}
