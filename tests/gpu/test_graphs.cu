// make gpu-test: IKP in CUDA graphs and beside another stream.
//  - A reset captured with the kernel into a CUDA graph: the capture ends
//    with a graph, every replay starts from a reset buffer and is numbered;
//    three replays, each dumped, give three captures with their own records
//    (each lane's payload is the replay's number, counted by a kernel of the
//    graph) and clock readings. A download inside the capture is refused.
//  - A graph of the kernel alone, replayed after: the buffer still holds the
//    last replay's records, and the capture says it is stale.
//  - Many replays, one dump: the last replay's records and number.
//  - Two recorded kernels at once on two streams, each with its buffer:
//    merged by the GPU's clock, each kernel's regions fit its own CUDA event
//    window (one shift of the merged axis fits both windows), and the two
//    overlap as the events say.
// Usage: test_graphs [output directory]
/* ikp.h's implementation: build/ikp_impl.o (tests/gpu/ikp_impl.cu) */
#include "../../ikp.h"
#include "../../ikp_cuda.cuh"
#include "../check.h"
#include <cstdlib>
#include <cstring>
#include <string>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

enum { EV_WORK = 1 };
#define WARPS 4 // lanes a block

__global__ void bump(unsigned long long *epoch) { *epoch += 1; }

// every warp a lane: `rounds` regions of `spin` cycles; the last region's
// end carries the epoch read at the start (which launch this is)
__global__ void recorded(uint64_t *prof, const unsigned long long *epoch, int rounds, long long spin)
{
    IKP_LANE(lane);
    IKP_INIT(lane, prof, threadIdx.x / 32, blockDim.x / 32, threadIdx.x % 32 == 0);
    const unsigned e = (unsigned)*epoch;
    for (int r = 0; r < rounds; r++) {
        IKP_BEGIN(lane, EV_WORK);
        const long long t0 = clock64();
        while (clock64() - t0 < spin) {}
        IKP_END(lane, EV_WORK);
    }
    IKP_DATA(lane, EV_WORK, e);
    IKP_FINALIZE(lane);
}

static std::string out_dir = "build/gpu-out";

static ikp_capture *dump(ikp_cuda_buffer *buf, cudaStream_t s, const char *name)
{
    std::string path = out_dir + "/" + name + ".ikp";
    ikp_dump_desc d;
    ikp_error err;
    ikp_capture *cap = NULL;
    memset(&d, 0, sizeof d);
    d.capture_path = path.c_str();
    if (ikp_cuda_dump(buf, s, &d, &err) != IKP_OK || ikp_capture_open_path(path.c_str(), NULL, &cap, &err) != IKP_OK) {
        fprintf(stderr, "%s: %s\n", name, err.message);
        CHECK(!"dumped and opened");
        return NULL;
    }
    return cap;
}

// the capture is launch `launch` of its buffer, its lanes hold `rounds`
// regions each ending with payload `epoch`; stale or not
static void check_launch(const char *what, const ikp_capture *cap, uint64_t launch, unsigned epoch, uint32_t lanes,
                         int rounds, int stale)
{
    ikp_lane_events ev;
    uint32_t i, regions_ok = 0, payload_ok = 0;
    char st[512];
    if (!cap) return;
    const ikp_capture_info *in = ikp_capture_get_info(cap);
    printf("%s: launch %llu, %u lanes, %llu records, %llu dropped, %llu opened again, host time %s\n", what,
           (unsigned long long)in->launch, in->active_lanes, (unsigned long long)in->records,
           (unsigned long long)in->dropped, (unsigned long long)in->claimed_twice, in->host_time_known ? "known" : "not known");
    CHECK_EQ(in->launch, launch);
    CHECK_EQ(in->active_lanes, lanes);
    CHECK_EQ(in->dropped, 0);
    CHECK_EQ(in->unfinalized_lanes, 0);
    CHECK_EQ(in->claimed_twice, stale ? lanes : 0);
    CHECK_EQ(ikp_capture_stale(in, st, sizeof st) != 0, stale);
    CHECK(in->host_time_known); // the download's reading places it
    memset(&ev, 0, sizeof ev);
    for (i = 0; i < in->num_lanes; i++) {
        if (ikp_decode_lane(cap, i, &ev, NULL) != IKP_OK) continue;
        regions_ok += ev.count == (size_t)rounds;
        payload_ok += ev.count && (ev.events[ev.count - 1].flags & IKP_EVENT_HAS_END_DATA) &&
                      ev.events[ev.count - 1].end_data == epoch;
    }
    ikp_lane_events_free(cap, &ev);
    CHECK_EQ(regions_ok, lanes);
    CHECK_EQ(payload_ok, lanes); // the records are that launch's
}

// the earliest start and latest end of a capture's records, ns after its time 0
static void span_ns(const ikp_capture *cap, double *lo, double *hi)
{
    ikp_lane_events ev;
    memset(&ev, 0, sizeof ev);
    *lo = 1e300;
    *hi = -1e300;
    for (uint32_t i = 0; i < ikp_capture_get_info(cap)->num_lanes; i++) {
        if (ikp_decode_lane(cap, i, &ev, NULL) != IKP_OK) continue;
        for (size_t k = 0; k < ev.count; k++) {
            if (ev.events[k].start_ps / 1e3 < *lo) *lo = ev.events[k].start_ps / 1e3;
            if (ev.events[k].end_ps / 1e3 > *hi) *hi = ev.events[k].end_ps / 1e3;
        }
    }
    ikp_lane_events_free(cap, &ev);
}

static void test_graph(unsigned long long *epoch)
{
    const int blocks = 132, rounds = 20;
    const uint32_t lanes = blocks * WARPS;
    ikp_cuda_buffer buf;
    ikp_error err;
    cudaStream_t s;
    cudaGraph_t g = NULL, g2 = NULL;
    cudaGraphExec_t x = NULL, x2 = NULL;
    cudaStreamCaptureStatus cs;
    char name[64];
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_EQ(ikp_cuda_buffer_create(&buf, lanes, 2 * rounds + 4, &err), IKP_OK);
    uint64_t *host = (uint64_t *)calloc(buf.num_words, 8);

    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, s, &err), IKP_OK);
    bump<<<1, 1, 0, s>>>(epoch);
    recorded<<<blocks, WARPS * 32, 0, s>>>(buf.device, epoch, rounds, 2000);
    CHECK_EQ(ikp_cuda_buffer_download(&buf, s, host, &err), IKP_ERR_CUDA);
    CHECK(strstr(err.message, "capturing a CUDA graph") != NULL);
    CK(cudaStreamIsCapturing(s, &cs));
    CHECK_EQ(cs, cudaStreamCaptureStatusActive); // nothing IKP did invalidated the capture
    cudaError_t e = cudaStreamEndCapture(s, &g);
    CHECK_EQ(e, cudaSuccess);
    if (e != cudaSuccess) { fprintf(stderr, "cudaStreamEndCapture: %s\n", cudaGetErrorString(e)); return; }
    CK(cudaGraphInstantiate(&x, g, 0));

    for (unsigned r = 1; r <= 3; r++) { // replays, each dumped
        CK(cudaGraphLaunch(x, s));
        snprintf(name, sizeof name, "graph-replay%u", r);
        ikp_capture *cap = dump(&buf, s, name);
        check_launch(name, cap, r, r, lanes, rounds, 0);
        ikp_capture_free(cap);
    }
    // the kernel alone, without the reset: launch 3's records stay, flagged stale
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    bump<<<1, 1, 0, s>>>(epoch);
    recorded<<<blocks, WARPS * 32, 0, s>>>(buf.device, epoch, rounds, 2000);
    CK(cudaStreamEndCapture(s, &g2));
    CK(cudaGraphInstantiate(&x2, g2, 0));
    CK(cudaGraphLaunch(x2, s));
    ikp_capture *cap = dump(&buf, s, "graph-no-reset");
    check_launch("graph-no-reset", cap, 3, 3, lanes, rounds, 1);
    ikp_capture_free(cap);
    // many replays, one dump: the last one's records (epoch 4 + 50)
    for (int r = 0; r < 50; r++) CK(cudaGraphLaunch(x, s));
    cap = dump(&buf, s, "graph-last-of-50");
    check_launch("graph-last-of-50", cap, 53, 54, lanes, rounds, 0);
    ikp_capture_free(cap);

    CK(cudaGraphExecDestroy(x));
    CK(cudaGraphExecDestroy(x2));
    CK(cudaGraphDestroy(g));
    CK(cudaGraphDestroy(g2));
    free(host);
    ikp_cuda_buffer_destroy(&buf);
    CK(cudaStreamDestroy(s));
}

static void test_streams(unsigned long long *epoch)
{
    const int blocks = 16, rounds = 50;
    const long long spin = 20000; // about 0.6 ms a kernel
    const uint32_t lanes = blocks * WARPS;
    ikp_cuda_buffer a, b;
    ikp_error err;
    cudaStream_t s1, s2;
    cudaEvent_t a0, a1, b0, b1;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    for (cudaEvent_t *ev : {&a0, &a1, &b0, &b1}) CK(cudaEventCreate(ev));
    CHECK_EQ(ikp_cuda_buffer_create(&a, lanes, 2 * rounds + 4, &err), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_create(&b, lanes, 2 * rounds + 4, &err), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&a, s1, &err), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&b, s2, &err), IKP_OK);
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(a0, s1));
    recorded<<<blocks, WARPS * 32, 0, s1>>>(a.device, epoch, rounds, spin);
    CK(cudaEventRecord(a1, s1));
    CK(cudaEventRecord(b0, s2));
    recorded<<<blocks, WARPS * 32, 0, s2>>>(b.device, epoch, rounds, spin);
    CK(cudaEventRecord(b1, s2));
    ikp_capture *ca = dump(&a, s1, "stream1"), *cb = dump(&b, s2, "stream2");
    float ea1, eb0, eb1;
    CK(cudaEventElapsedTime(&ea1, a0, a1));
    CK(cudaEventElapsedTime(&eb0, a0, b0));
    CK(cudaEventElapsedTime(&eb1, a0, b1));
    if (ca && cb) {
        const ikp_capture *both[2] = {ca, cb};
        ikp_alignment al[2];
        CHECK_EQ(ikp_merge_align(both, 2, 0, al, &err), IKP_OK);
        CHECK_EQ(al[1].via, IKP_ALIGN_SAME_GPU); // placed by the GPU's own clock
        double xa, ya, xb, yb;
        span_ns(ca, &xa, &ya);
        span_ns(cb, &xb, &yb);
        xa += al[0].zero_ns, ya += al[0].zero_ns, xb += al[1].zero_ns, yb += al[1].zero_ns;
        // the events, ns after a0: A in [0, ea1], B in [eb0, eb1]; a shift d of the
        // merged axis puts A's span in A's window for d in [-xa, ea1 - ya], B's in B's
        // for d in [eb0 - xb, eb1 - yb]: one d must do both (events resolve ~0.5 us)
        const double slack = 1000;
        double lo = -xa > eb0 * 1e6 - xb ? -xa : eb0 * 1e6 - xb;
        double hi = ea1 * 1e6 - ya < eb1 * 1e6 - yb ? ea1 * 1e6 - ya : eb1 * 1e6 - yb;
        double ov = (ya < yb ? ya : yb) - (xa > xb ? xa : xb);
        double ev_ov = (ea1 < eb1 ? ea1 : eb1) * 1e6 - (eb0 > 0 ? eb0 : 0) * 1e6;
        printf("two streams: A [%.0f, %.0f] ns, B [%.0f, %.0f] ns on the merged axis (B placed %s, +- %u ns); events "
               "A [0, %.0f], B [%.0f, %.0f] ns; one shift fits both windows: [%.0f, %.0f] ns; overlap %.0f ns "
               "(events: %.0f ns)\n", xa, ya, xb, yb, al[1].via == IKP_ALIGN_SAME_GPU ? "by the same GPU's clock" : "otherwise",
               al[1].uncertainty_ns, ea1 * 1e6, eb0 * 1e6, eb1 * 1e6, lo, hi, ov, ev_ov);
        CHECK(lo <= hi + slack);
        CHECK(ov > 0.5 * (ya - xa < yb - xb ? ya - xa : yb - xb)); // they ran at once, as launched
        CHECK(ev_ov > 0);
        CHECK(ov <= ev_ov + slack);
        std::string merged = out_dir + "/streams-merged.json";
        const ikp_capture *const *cc = both;
        CHECK_EQ(ikp_write_merged_path(cc, 2, NULL, merged.c_str(), &err), IKP_OK);
    }
    ikp_capture_free(ca);
    ikp_capture_free(cb);
    ikp_cuda_buffer_destroy(&a);
    ikp_cuda_buffer_destroy(&b);
    for (cudaEvent_t ev : {a0, a1, b0, b1}) CK(cudaEventDestroy(ev));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
}

int main(int argc, char **argv)
{
    if (argc > 1) out_dir = argv[1];
    unsigned long long *epoch;
    CK(cudaMalloc(&epoch, sizeof *epoch));
    CK(cudaMemset(epoch, 0, sizeof *epoch));
    test_graph(epoch);
    test_streams(epoch);
    CK(cudaFree(epoch));
    return check_report();
}
