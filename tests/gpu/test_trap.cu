// make gpu-test: a kernel that traps half way. The profile buffer is mapped
// host memory, so the host can still read it after the trap has killed the
// CUDA context; the decoder must read every lane up to its last record.
// Its own process: nothing CUDA works after the trap.
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "../../ikp.h"
#include "../../ikp_cuda.cuh"
#include "../check.h"
#include <cstdlib>
#include <cstring>

#define LANES 64
#define EVENTS 40      // begin/end pairs per lane
#define TRAP_BLOCK 5
#define TRAP_AFTER 10  // pairs the trapping block records first

__global__ void trapping(uint64_t *prof, volatile int *gate)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, 0, 1, threadIdx.x == 0);
    for (int i = 0; i < EVENTS; i++) {
        IKP_BEGIN(lane, 1);
        IKP_END(lane, 1);
        if (blockIdx.x == TRAP_BLOCK && i + 1 == TRAP_AFTER) {
            __threadfence_system(); // its records have reached host memory
            if (threadIdx.x == 0) *gate = 1;
            __trap();
        }
        if (i == EVENTS / 2) // the others wait here until the trap has fired (or time out)
            for (long long t0 = clock64(); *gate == 0 && clock64() - t0 < 2000000000ll;) {}
    }
    IKP_FINALIZE(lane);
}

int main()
{
    size_t words = ikp_buffer_words(LANES, 2 * EVENTS + 4);
    uint64_t *host = NULL, *dev = NULL;
    int *gate_h = NULL, *gate_d = NULL;
    if (cudaHostAlloc((void **)&host, words * 8, cudaHostAllocMapped) != cudaSuccess ||
        cudaHostAlloc((void **)&gate_h, sizeof(int), cudaHostAllocMapped) != cudaSuccess) {
        fprintf(stderr, "cudaHostAlloc failed\n");
        return 1;
    }
    memset(host, 0, words * 8);
    *gate_h = 0;
    CHECK_EQ(ikp_buffer_header(host, LANES, 2 * EVENTS + 4, 0, NULL), IKP_OK);
    CHECK_EQ(cudaHostGetDevicePointer((void **)&dev, host, 0), cudaSuccess);
    CHECK_EQ(cudaHostGetDevicePointer((void **)&gate_d, gate_h, 0), cudaSuccess);
    trapping<<<LANES, 32>>>(dev, gate_d);
    cudaError_t e = cudaDeviceSynchronize();
    CHECK(e != cudaSuccess); // the kernel trapped
    printf("kernel ended with: %s\n", cudaGetErrorString(e));
    ikp_capture *cap = NULL;
    ikp_error err;
    CHECK_EQ(ikp_capture_open(host, words, NULL, &cap, &err), IKP_OK);
    if (cap) {
        const ikp_capture_info *in = ikp_capture_get_info(cap);
        const ikp_lane_info t_v = lane_info(cap, TRAP_BLOCK), *t = &t_v;
        CHECK(in->unfinalized_lanes >= 1);
        CHECK(!(t->flags & IKP_LANE_FINALIZED));
        CHECK_EQ(t->records - t->anchors, 2 * TRAP_AFTER); // everything the lane wrote before the trap
        CHECK_EQ(in->backwards, 0);
        CHECK_EQ(in->invalid, 0);
        ikp_lane_events ev;
        memset(&ev, 0, sizeof ev);
        int bad = 0;
        for (uint32_t l = 0; l < LANES; l++) {
            const ikp_lane_info li_v = lane_info(cap, l), *li = &li_v;
            if (!(li->flags & IKP_LANE_STARTED)) continue; // a block that never started
            if (ikp_decode_lane(cap, l, &ev, NULL) != IKP_OK) { bad++; continue; }
            // a prefix of what the lane did: whole regions, then at most one open begin
            for (size_t k = 0; k < ev.count; k++)
                if (ev.events[k].kind != IKP_EVENT_REGION && !(k + 1 == ev.count && ev.events[k].kind == IKP_EVENT_UNMATCHED_BEGIN)) bad++;
            if (li->records - li->anchors > 2 * EVENTS) bad++;
        }
        CHECK_EQ(bad, 0);
        printf("decoded after the trap: %u lanes started, %llu unfinalized, %llu records; trapping lane: %llu records\n",
               in->active_lanes, (unsigned long long)in->unfinalized_lanes, (unsigned long long)in->records,
               (unsigned long long)t->records);
        ikp_lane_events_free(cap, &ev);
        ikp_capture_free(cap);
    } else fprintf(stderr, "%s\n", err.message);
    return check_report();
}
