// Example 5: two GPUs exchange tiles through peer memory (a ring step),
// both instrumented; each GPU's capture is saved with its clock readings,
// and the two are merged into one timeline on one clock.
//   build/peer_ring [OUT]   writes OUT_gpu0.ikp, OUT_gpu1.ikp and OUT.json
// (then: ikp merge OUT_gpu0.ikp OUT_gpu1.ikp -o OUT.pftrace does the same)
// An anchor every 20000 cycles (~10 us): the SM clock's rate wanders while
// the kernels spin on flags, and two anchors per lane would misplace its
// middle by up to ~1 us, more than the flag's travel time.
#define IKP_ANCHOR_EVERY 20000
#include "../ikp_cuda.cuh"
#include "common.h"
#include <cmath>
#include "peer_ring.cuh"

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "peer_ring";
    int n = 0, ab = 0, ba = 0;
    CK(cudaGetDeviceCount(&n));
    if (n < 2) { fprintf(stderr, "peer_ring needs two GPUs; this machine has %d\n", n); return 2; }
    CK(cudaDeviceCanAccessPeer(&ab, 0, 1));
    CK(cudaDeviceCanAccessPeer(&ba, 1, 0));
    if (!ab || !ba) { fprintf(stderr, "peer_ring needs peer access between GPUs 0 and 1\n"); return 2; }
    static ring_result res;
    if (ring_run(200, &res)) return 1;
    if (!res.sums_ok) { fprintf(stderr, "wrong sums: a tile was read before it arrived\n"); return 1; }
    ikp_capture *caps[2] = {NULL, NULL};
    ikp_error err;
    char path[512];
    for (int d = 0; d < 2; d++) {
        if (!(caps[d] = ring_open(&res, d, 1, &err))) { fprintf(stderr, "GPU %d: %s\n", d, err.message); return 1; }
        snprintf(path, sizeof path, "%s_gpu%d.ikp", out, d);
        if (ikp_capture_write_path(caps[d], path, &err) != IKP_OK) { fprintf(stderr, "%s: %s\n", path, err.message); return 1; }
        printf("wrote %s\n", path);
    }
    ikp_alignment al[2];
    ikp_merge_options mo;
    memset(&mo, 0, sizeof mo);
    mo.alignment = al;
    snprintf(path, sizeof path, "%s.json", out);
    if (ikp_write_merged_path(caps, 2, &mo, path, &err) != IKP_OK) { fprintf(stderr, "%s: %s\n", path, err.message); return 1; }
    printf("wrote %s: GPU 1's clock is %+.3f us from GPU 0's, +- %.3f us (%s)\n", path, al[1].offset_ns / 1e3,
           al[1].uncertainty_ns / 1e3, al[1].via == IKP_ALIGN_PEER ? "over peer memory" : "through the host");
    ikp_capture_free(caps[0]);
    ikp_capture_free(caps[1]);
    return 0;
}
