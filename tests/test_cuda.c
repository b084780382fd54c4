/* ikp.h's CUDA helpers (ikp_cuda_*) against a fake CUDA runtime
   (fake_cuda.h), without a GPU. Built by nvcc (plain and under ASan and
   UBSan), where the helpers' own kernels (clock readings, SM clock
   samples, the GPU-GPU ping-pong) are played by the fake, and by a C
   compiler with IKP_CUDA, where the helpers have no kernels. Checked: what create, reset, download, dump and
   destroy ask of the runtime and leave behind; the clock readings and
   peer offsets they measure against the fake's known clocks; and, with
   every runtime call made to fail in turn, that each failure is reported
   (IKP_ERR_CUDA, with CUDA's own text) or survived with the records
   intact, with nothing leaked and no memory misused.
   Usage: test_cuda [output directory] */
#include "fake_cuda.h"
#define IKP_REALTIME_NS() fake_host_ns() /* the host clock: the fake's, which the test controls */
#define IKP_IMPLEMENTATION
#include "../ikp.h"
#include "check.h"
#include "encoder.h"
#include <stdlib.h>

#if defined(__CUDACC__)
#define KERNELS 1 /* the helpers' kernels exist (compiled by nvcc) */
#else
#define KERNELS 0
#endif

#define LANES 4u
#define CAP 32u
#define T0 1790000000000000000ull /* ns: the records' globaltimer */

static char capture_path[512];

/* the kernel's records, as a device would leave them: 4 ns lanes on
   different SMs; lane i has a region of 250 + i + extra ns and an instant */
static void write_records_x(uint64_t *device, uint32_t extra)
{
    static enc_rec r[LANES][3];
    enc_lane L[LANES];
    uint64_t *w = (uint64_t *)calloc((size_t)enc_ikp_words(LANES, CAP), 8);
    uint32_t i;
    if (!w) { CHECK(!"out of memory"); return; }
    memset(L, 0, sizeof L);
    for (i = 0; i < LANES; i++) {
        enc_rec a = {ENC_B, 1, T0 + 100 * i, 0}, b = {ENC_E, 1, T0 + 100 * i + 250 + i + extra, 0},
                c = {ENC_I, 2, T0 + 1000, 0};
        r[i][0] = a; r[i][1] = b; r[i][2] = c;
        L[i].block = i / 2; L[i].group = i % 2; L[i].sm = 7 * i;
        L[i].started = L[i].finalized = 1;
        L[i].g0 = T0 - 10; L[i].g1 = T0 + 2000;
        L[i].recs = r[i]; L[i].n = 3;
    }
    enc_ikp(w, LANES, CAP, 2, 2, 1, 1, L, LANES);
    /* the lanes only: the header is the one reset wrote */
    memcpy(device + 8, w + 8, (size_t)(enc_ikp_words(LANES, CAP) - 8) * 8);
    free(w);
}
static void write_records(uint64_t *device) { write_records_x(device, 0); }

/* the capture holds every record written (with extra, as written): each
   lane's region, exactly */
static void check_records_x(const ikp_capture *cap, uint32_t extra)
{
    uint32_t i;
    ikp_lane_events ev;
    memset(&ev, 0, sizeof ev);
    CHECK_EQ(ikp_capture_get_info(cap)->active_lanes, LANES);
    for (i = 0; i < LANES; i++) {
        ikp_lane_info li = lane_info(cap, i);
        CHECK_EQ(li.sm, 7 * i);
        CHECK_EQ(li.records, 3);
        CHECK_EQ(li.dropped + li.invalid, 0);
        if (ikp_decode_lane(cap, i, &ev, NULL) != IKP_OK || ev.count != 2) { CHECK(!"lane decodes to 2 events"); continue; }
        CHECK_EQ(ev.events[0].end_ps - ev.events[0].start_ps, (250 + i + extra) * 1000ll);
        CHECK_EQ(ev.events[1].start_ps - ev.events[0].start_ps, (1000 - 100 * i) * 1000ll);
    }
    ikp_lane_events_free(cap, &ev);
}
static void check_records(const ikp_capture *cap) { check_records_x(cap, 0); }

/* |gpu - host - offset| within the stated uncertainty, in integers */
static int reading_holds(const ikp_clock_sync *c, int64_t offset)
{
    int64_t d = (int64_t)c->gpu_ns - c->host_ns - offset;
    return c->uncertainty_ns > 0 && (d < 0 ? -d : d) <= (int64_t)c->uncertainty_ns;
}

/* the peer offset within its stated uncertainty of the fake's */
static int peer_holds(const ikp_peer_clock *p)
{
    int64_t d = p->offset_ns - (fake_dev(1)->gt_offset_ns - fake_dev(0)->gt_offset_ns);
    return p->uncertainty_ns > 0 && (d < 0 ? -d : d) <= (int64_t)p->uncertainty_ns;
}

static void free_only(void *p, void *user) { (void)user; free(p); }

static int no_leftovers(void)
{
    return fake_live_allocations() == 0 && fake_live_streams() == 0 && fake_live_threads() == 0;
}

static int by_sm_then_cycles(const void *x, const void *y)
{
    const fake_sample *a = (const fake_sample *)x, *b = (const fake_sample *)y;
    if (a->sm != b->sm) return a->sm < b->sm ? -1 : 1;
    return a->cycles < b->cycles ? -1 : a->cycles > b->cycles;
}

/* the buffer's samples are those the sampler wrote (less the one at
   index skip), by SM, then cycles */
static int same_samples(const ikp_sm_clock *got, uint32_t n, const fake_sample *wrote, int nw, int skip)
{
    fake_sample *w = (fake_sample *)malloc((size_t)(nw ? nw : 1) * sizeof *w);
    int i, k = 0, same;
    if (!w) return 0;
    for (i = 0; i < nw; i++)
        if (i != skip) w[k++] = wrote[i];
    qsort(w, (size_t)k, sizeof *w, by_sm_then_cycles);
    same = (uint32_t)k == n;
    for (i = 0; same && i < k; i++)
        same = got[i].gpu_ns == w[i].gpu_ns && got[i].cycles == w[i].cycles && got[i].sm == w[i].sm;
    free(w);
    return same;
}

/* nothing left allocated, running or open; no memory misused */
static void check_clean(void)
{
    CHECK(no_leftovers());
    CHECK_EQ(fake_misuse(), 0);
    if (fake_misuse()) fprintf(stderr, "misuse: %s\n", fake_misuse_text());
}

static void test_bad_arguments(void)
{
    ikp_cuda_buffer buf;
    ikp_dump_desc d;
    ikp_error e;
    uint64_t host[64];
    long calls;
    fake_reset(1);
    calls = fake_calls();
    CHECK_EQ(ikp_cuda_buffer_create(NULL, 1, 1, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_cuda_buffer_create(&buf, 0, 16, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "0 lanes x 16 records") != NULL);
    CHECK_EQ(ikp_cuda_buffer_create(&buf, 0xFFFFFFFFu, 0xFFFFFFFFu, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(fake_calls(), calls); /* refused before asking the runtime for anything */
    memset(&buf, 0, sizeof buf);
    CHECK_EQ(ikp_cuda_buffer_reset(NULL, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, NULL, &e), IKP_ERR_INVALID_ARGUMENT); /* never created */
    CHECK_EQ(ikp_cuda_buffer_download(&buf, NULL, host, &e), IKP_ERR_INVALID_ARGUMENT);
    memset(&d, 0, sizeof d);
    CHECK_EQ(ikp_cuda_dump(NULL, NULL, &d, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_cuda_device_id(0, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(fake_calls(), calls);
    ikp_cuda_buffer_destroy(NULL);
    ikp_cuda_buffer_destroy(&buf);

    CHECK_EQ(ikp_cuda_buffer_create(&buf, LANES, CAP, &e), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_download(&buf, NULL, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_cuda_dump(&buf, NULL, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    d.decode.allocator.free = free_only; /* a partial allocator: refused before the download */
    calls = fake_calls();
    CHECK_EQ(ikp_cuda_dump(&buf, NULL, &d, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "allocator") != NULL);
    CHECK_EQ(fake_calls(), calls);
    ikp_cuda_buffer_destroy(&buf);
    ikp_cuda_buffer_destroy(&buf); /* twice: the first left it zeroed */
    check_clean();
}

static void test_device_id(void)
{
    ikp_device_id id;
    ikp_error e;
    fake_reset(2);
    CHECK_EQ(ikp_cuda_device_id(1, &id, &e), IKP_OK);
    CHECK(memcmp(id.uuid, fake_dev(1)->uuid, 16) == 0);
    CHECK_EQ(id.ordinal, 1);
    CHECK_EQ(id.rank, -1);
    CHECK_EQ(id.pci_bus, fake_dev(1)->pci_bus);
    CHECK_EQ(ikp_cuda_device_id(5, &id, &e), IKP_ERR_CUDA);
    CHECK(strstr(e.message, "cudaGetDeviceProperties: invalid device ordinal") != NULL);
    CHECK_EQ(id.ordinal, -1);
}

/* the kernel's records, its stream busy a while (the sampler runs), then
   the dump to the capture file */
static ikp_result record_and_dump(ikp_cuda_buffer *buf, cudaStream_t s, ikp_error *e)
{
    ikp_dump_desc d;
    write_records(buf->device);
    if (s) fake_stream_busy(s, 40);
    memset(&d, 0, sizeof d);
    d.capture_path = capture_path;
    return ikp_cuda_dump(buf, s, &d, e);
}

/* create, reset, the kernel's records, dump to a capture file */
static ikp_result run_once(ikp_cuda_buffer *buf, int sample_every_ns, ikp_error *e)
{
    cudaStream_t s = NULL;
    ikp_result r;
    if (cudaStreamCreate(&s) != cudaSuccess) s = NULL; /* the default stream, then */
    r = ikp_cuda_buffer_create(buf, LANES, CAP, e);
    if (r != IKP_OK) { if (s) cudaStreamDestroy(s); return r; }
    if (sample_every_ns >= 0) buf->sample_every_ns = (uint32_t)sample_every_ns;
    r = ikp_cuda_buffer_reset(buf, s, e);
    if (r == IKP_OK) r = record_and_dump(buf, s, e);
    if (s) cudaStreamDestroy(s);
    return r;
}

static void test_flow(void)
{
    ikp_cuda_buffer buf;
    ikp_capture *cap = NULL;
    ikp_error e;
    const ikp_clock_sync *syncs;
    const ikp_sm_clock *smc;
    const fake_sample *fs;
    const ikp_device_id *dev;
    uint64_t h[8];
    cudaStream_t s;
    uint32_t n, i;
    int nfs;

    fake_reset(1);
    CHECK_EQ(ikp_cuda_buffer_create(&buf, LANES, CAP, &e), IKP_OK);
    CHECK_EQ(buf.num_words, enc_ikp_words(LANES, CAP));
    CHECK_EQ(buf.clock_khz, fake_dev(0)->clock_khz);
    CHECK(memcmp(buf.gpu.uuid, fake_dev(0)->uuid, 16) == 0);
    CHECK_EQ(fake_live_device_bytes(), (long)buf.num_words * 8 + 8); /* and the resets' count; no sample memory before a reset */
    CHECK_EQ(cudaStreamCreate(&s), cudaSuccess);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, s, &e), IKP_OK);
    /* the header reset wrote, and nothing else: the device's memory was not zero */
    CHECK_EQ(ikp_buffer_header(h, LANES, CAP, (uint32_t)fake_dev(0)->clock_khz, NULL), IKP_OK);
    h[6] = 1; /* the launch's number: the first reset */
    CHECK(memcmp(buf.device, h, sizeof h) == 0);
    for (i = 8, n = 0; i < buf.num_words; i++) n += buf.device[i] != 0;
    CHECK_EQ(n, 0);
    CHECK_EQ(buf.num_clock, KERNELS ? 1 : 0);
    if (buf.num_clock) CHECK(reading_holds(&buf.clock[0], fake_dev(0)->gt_offset_ns));
    /* sampling on (the default): the samples' memory is there now */
    CHECK_EQ(buf.sample_every_ns, KERNELS ? IKP_SM_CLOCK_EVERY_NS : 0); /* no sampler without nvcc */
    if (KERNELS && IKP_SM_CLOCK_EVERY_NS) CHECK(fake_live_device_bytes() > (long)buf.num_words * 8 + 8);
    else CHECK_EQ(fake_live_device_bytes(), (long)buf.num_words * 8 + 8);

    CHECK_EQ(record_and_dump(&buf, s, &e), IKP_OK);
    CHECK_EQ(buf.num_clock, KERNELS ? 2 : 0);
    if (buf.num_clock == 2) {
        CHECK(reading_holds(&buf.clock[1], fake_dev(0)->gt_offset_ns));
        CHECK(buf.clock[1].host_ns >= buf.clock[0].host_ns);
    }
    nfs = fake_samples(&fs);
    CHECK_EQ(fake_launches("ikp__sample_sm") > 0, KERNELS && IKP_SM_CLOCK_EVERY_NS);
    CHECK_EQ(buf.num_sm_clock, (uint32_t)nfs);
    CHECK_EQ(nfs % fake_dev(0)->sms, 0);
    CHECK(same_samples(buf.sm_clock, buf.num_sm_clock, fs, nfs, -1));

    /* the capture file: the records, the GPU, the readings and the samples */
    CHECK_EQ(ikp_capture_open_path(capture_path, NULL, &cap, &e), IKP_OK);
    if (cap) {
        check_records(cap);
        dev = ikp_capture_device(cap);
        CHECK(dev && memcmp(dev->uuid, fake_dev(0)->uuid, 16) == 0);
        n = ikp_capture_clock(cap, &syncs);
        CHECK_EQ(n, buf.num_clock);
        for (i = 0; i < n; i++) CHECK(reading_holds(&syncs[i], fake_dev(0)->gt_offset_ns));
        n = ikp_capture_sm_clock(cap, &smc);
        CHECK_EQ(n, (uint32_t)nfs);
        CHECK_EQ(ikp_capture_get_info(cap)->sm_clock_sms, nfs ? (uint32_t)fake_dev(0)->sms : 0);
        ikp_capture_free(cap);
    }
    cudaStreamDestroy(s);
    ikp_cuda_buffer_destroy(&buf);
    check_clean();
}

/* sampling off before the first reset: no sample memory, no samples */
static void test_sampling_off(void)
{
    ikp_cuda_buffer buf;
    ikp_error e;
    long before;
    fake_reset(1);
    before = fake_live_device_bytes();
    CHECK_EQ(run_once(&buf, 0, &e), IKP_OK);
    CHECK_EQ(fake_live_device_bytes() - before, (long)buf.num_words * 8 + 8); /* the buffer and the resets' count */
    CHECK_EQ(fake_launches("ikp__sample_sm"), 0);
    CHECK_EQ(buf.num_sm_clock, 0);
    CHECK_EQ(buf.num_clock, KERNELS ? 2 : 0); /* the readings do not depend on it */
    ikp_cuda_buffer_destroy(&buf);
    check_clean();
}

/* a sampler block held up between its two reads: that sample is dropped,
   the others kept, the dump made (the decoder refuses samples that
   contradict each other) */
static void test_bad_sample(void)
{
    ikp_cuda_buffer buf;
    ikp_capture *cap = NULL;
    const fake_sample *fs;
    ikp_error e;
    int nfs, sms;
    fake_reset(1);
    sms = fake_dev(0)->sms;
    fake_bad_sample(5); /* in the first round: later rounds of its SM come before it by cycles */
    CHECK_EQ(run_once(&buf, -1, &e), IKP_OK);
    nfs = fake_samples(&fs);
    if (KERNELS) {
        CHECK(nfs >= 2 * sms); /* two rounds at least: SM 4's second sample contradicts the bad one */
        CHECK_EQ(buf.num_sm_clock, (uint32_t)nfs - 1);
        CHECK(same_samples(buf.sm_clock, buf.num_sm_clock, fs, nfs, 4));
        CHECK_EQ(ikp_capture_open_path(capture_path, NULL, &cap, &e), IKP_OK);
        if (cap) {
            check_records(cap);
            CHECK_EQ(ikp_capture_sm_clock(cap, NULL), (uint32_t)nfs - 1);
            ikp_capture_free(cap);
        }
    } else {
        CHECK_EQ(nfs, 0);
    }
    ikp_cuda_buffer_destroy(&buf);
    check_clean();
}

/* a GPU too busy to run the reading kernel: no readings, the records all there */
static void test_no_answer(void)
{
    ikp_cuda_buffer buf;
    ikp_clock_sync c;
    ikp_capture *cap = NULL;
    ikp_error e;
    fake_reset(1);
    fake_dev(0)->answers = 0;
    if (KERNELS) {
        CHECK_EQ(ikp_cuda_clock_reading(&c, &e), IKP_ERR_CUDA);
        CHECK(strstr(e.message, "did not answer a clock reading within 20 ms") != NULL);
    } else {
        CHECK_EQ(ikp_cuda_clock_reading(&c, &e), IKP_ERR_NO_CUDA);
    }
    CHECK_EQ(fake_live_threads(), 0); /* the kernel left on the quit flag */
    CHECK_EQ(run_once(&buf, -1, &e), IKP_OK);
    CHECK_EQ(buf.num_clock, 0);
    CHECK_EQ(ikp_capture_open_path(capture_path, NULL, &cap, &e), IKP_OK);
    if (cap) {
        check_records(cap);
        CHECK_EQ(ikp_capture_clock(cap, NULL), 0);
        ikp_capture_free(cap);
    }
    ikp_cuda_buffer_destroy(&buf);
    check_clean();
}

/* the kernel faults: the dump says so, with CUDA's words */
static void test_kernel_fault(void)
{
    ikp_cuda_buffer buf;
    cudaStream_t s;
    ikp_dump_desc d;
    ikp_error e;
    fake_reset(1);
    CHECK_EQ(cudaStreamCreate(&s), cudaSuccess);
    CHECK_EQ(ikp_cuda_buffer_create(&buf, LANES, CAP, &e), IKP_OK);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, s, &e), IKP_OK);
    fake_stream_error(s, cudaErrorIllegalAddress);
    memset(&d, 0, sizeof d);
    CHECK_EQ(ikp_cuda_dump(&buf, s, &d, &e), IKP_ERR_CUDA);
    CHECK(strstr(e.message, "kernel or stream failed: an illegal memory access was encountered") != NULL);
    cudaStreamDestroy(s);
    ikp_cuda_buffer_destroy(&buf);
    check_clean();
}

/* a buffer of device 1, reset and dumped while device 0 is current (one
   thread driving two GPUs): the reading, the samples' memory and the
   sampler are device 1's, and device 0 is current again after each call */
static void test_other_device(void)
{
    ikp_cuda_buffer buf;
    cudaStream_t s;
    const fake_sample *fs;
    ikp_error e;
    int nfs;
    fake_reset(2);
    CHECK_EQ(cudaSetDevice(1), cudaSuccess);
    CHECK_EQ(cudaStreamCreate(&s), cudaSuccess); /* the kernel's stream, on device 1 */
    CHECK_EQ(ikp_cuda_buffer_create(&buf, LANES, CAP, &e), IKP_OK);
    CHECK_EQ(buf.device_index, 1);
    CHECK(memcmp(buf.gpu.uuid, fake_dev(1)->uuid, 16) == 0);
    CHECK_EQ(cudaSetDevice(0), cudaSuccess);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, s, &e), IKP_OK);
    CHECK_EQ(fake_current_device(), 0);
    CHECK_EQ(buf.num_clock, KERNELS ? 1 : 0);
    if (buf.num_clock) CHECK(reading_holds(&buf.clock[0], fake_dev(1)->gt_offset_ns));
    CHECK_EQ(record_and_dump(&buf, s, &e), IKP_OK);
    CHECK_EQ(fake_current_device(), 0);
    nfs = fake_samples(&fs);
    CHECK_EQ(nfs > 0, KERNELS);
    CHECK(same_samples(buf.sm_clock, buf.num_sm_clock, fs, nfs, -1));
    if (buf.num_clock == 2) CHECK(reading_holds(&buf.clock[1], fake_dev(1)->gt_offset_ns));
    cudaStreamDestroy(s);
    ikp_cuda_buffer_destroy(&buf);
    check_clean();
}

static void test_peer_clock(void)
{
    ikp_peer_clock p;
    ikp_error e;
    int direct;
    fake_reset(2);
    CHECK_EQ(ikp_cuda_peer_clock(0, 0, &p, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_cuda_peer_clock(0, 1, NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    CHECK_EQ(ikp_cuda_clock_reading(NULL, &e), IKP_ERR_INVALID_ARGUMENT);
    for (direct = 1; direct >= 0; direct--) {
        fake_reset(2);
        fake_dev(1)->peer_ok = direct;
        CHECK_EQ(cudaSetDevice(1), cudaSuccess);
        if (!KERNELS) { CHECK_EQ(ikp_cuda_peer_clock(0, 1, &p, &e), IKP_ERR_NO_CUDA); continue; }
        CHECK_EQ(ikp_cuda_peer_clock(0, 1, &p, &e), IKP_OK);
        CHECK(peer_holds(&p));
        CHECK(memcmp(p.peer_uuid, fake_dev(1)->uuid, 16) == 0);
        CHECK_EQ(p.round_trip_ns > 0, direct); /* over peer memory, or through the host */
        CHECK_EQ(fake_launches("ikp__pingpong"), direct ? 2 : 0);
        CHECK_EQ(fake_current_device(), 1);
        CHECK_EQ(fake_peer_enabled(0, 1) + fake_peer_enabled(1, 0), 0); /* enabled for it, then disabled */
        check_clean();
    }
    if (KERNELS) { /* peer access the program had enabled stays enabled */
        fake_reset(2);
        fake_set_peer_enabled(0, 1, 1);
        fake_set_peer_enabled(1, 0, 1);
        CHECK_EQ(ikp_cuda_peer_clock(0, 1, &p, &e), IKP_OK);
        CHECK_EQ(fake_peer_enabled(0, 1) + fake_peer_enabled(1, 0), 2);
        check_clean();
    }
}

/* One run with its k-th runtime call failing: the result, the call that
   failed (NULL: the run ended before its k-th call), and whether what the
   run left is wrong beyond leaks and misuse (fail_each_call checks those). */
typedef struct attempt {
    ikp_result r;
    ikp_error e;
    const char *failed;
    int wrong;
} attempt;

enum { RUN_DEFAULT, RUN_SAMPLING_OFF, RUN_ON_DEVICE_1 };

/* create, reset, records, dump, destroy; survived, the capture holds every record */
static void attempt_run(int how, long k, attempt *a)
{
    ikp_cuda_buffer buf;
    remove(capture_path);
    fake_reset(2);
    if (how == RUN_ON_DEVICE_1) cudaSetDevice(1);
    fake_fail_call(k);
    a->r = run_once(&buf, how == RUN_SAMPLING_OFF ? 0 : -1, &a->e);
    a->failed = fake_failed();
    fake_fail_call(0);
    ikp_cuda_buffer_destroy(&buf);
    if (a->failed && a->r == IKP_OK) {
        ikp_capture *cap = NULL;
        ikp_error e;
        int before = check_failed;
        CHECK_EQ(ikp_capture_open_path(capture_path, NULL, &cap, &e), IKP_OK);
        if (cap) check_records(cap);
        ikp_capture_free(cap);
        a->wrong = check_failed != before;
    }
}

/* the peer clock from device 1's thread; survived, the offset holds. Peer
   access it enabled is disabled again and device 1 current again, unless
   the failed call was the one that does it. (When it cannot tell which
   device was current it leaves the peer's, device 1 here: the failure of
   cudaGetDevice must not fail the measurement.) */
static void attempt_peer_clock(int direct, long k, attempt *a)
{
    ikp_peer_clock p;
    fake_reset(2);
    fake_dev(1)->peer_ok = direct;
    cudaSetDevice(1);
    fake_fail_call(k);
    a->r = ikp_cuda_peer_clock(0, 1, &p, &a->e);
    a->failed = fake_failed();
    fake_fail_call(0);
    if (!a->failed) return;
    if (a->r == IKP_OK && !peer_holds(&p)) a->wrong = 1;
    if ((fake_peer_enabled(0, 1) || fake_peer_enabled(1, 0)) && strcmp(a->failed, "cudaSetDevice") != 0 &&
        strcmp(a->failed, "cudaDeviceDisablePeerAccess") != 0)
        a->wrong = 1;
    if (fake_current_device() != 1 && strcmp(a->failed, "cudaSetDevice") != 0) a->wrong = 1;
}

/* Every runtime call of a run made to fail in turn (k = 1, 2, ... until
   the run ends before its k-th call). Each failure is either reported as
   IKP_ERR_CUDA with CUDA's text, or survived with what the run is for
   intact; nothing is leaked, no memory misused. Some of each are seen. */
static void fail_each_call(const char *what, void (*run)(int, long, attempt *), int arg)
{
    long k;
    int reported = 0, survived = 0, bad = 0;
    for (k = 1; k < 100000; k++) {
        attempt a;
        memset(&a, 0, sizeof a);
        run(arg, k, &a);
        if (!a.failed) { CHECK_EQ(a.r, IKP_OK); break; }
        if (a.r == IKP_OK) survived++;
        else if (reported++, a.r != IKP_ERR_CUDA || !strstr(a.e.message, FAKE_ERROR_TEXT)) a.wrong = 1;
        if (a.wrong || !no_leftovers() || fake_misuse()) {
            bad++;
            fprintf(stderr, "%s: call %ld (%s) failed: result %d, \"%s\"; left %d allocations, %d streams, %d "
                    "threads; device %d current, peer access %d/%d; misuse %d (%s)\n", what, k, a.failed, (int)a.r,
                    a.r == IKP_OK ? "" : a.e.message, fake_live_allocations(), fake_live_streams(),
                    fake_live_threads(), fake_current_device(), fake_peer_enabled(0, 1), fake_peer_enabled(1, 0),
                    fake_misuse(), fake_misuse_text());
        }
    }
    CHECK_EQ(bad, 0);
    CHECK(reported > 0); /* the buffer's own memory and copies cannot be done without */
    CHECK(survived > 0); /* the device's name, readings and samples can */
    printf("%s: %d failures reported, %d survived\n", what, reported, survived);
}

/* A recorded kernel in a CUDA graph, played by a host function (a node
   the fake replays): launch n writes its lanes' records with regions n ns
   longer, as IKP_INIT would claim the lanes: lanes already claimed (the
   buffer not reset since the last launch) keep what they hold, and each
   counts in header word 5. */
typedef struct graph_kernel {
    uint64_t *device;
    uint32_t launches;
} graph_kernel;
static void graph_kernel_run(void *p)
{
    graph_kernel *k = (graph_kernel *)p;
    k->launches++;
    if (k->device[8]) k->device[5] += LANES; /* lane 0's header: claimed already */
    else write_records_x(k->device, k->launches);
}

typedef struct text_out { char buf[1 << 16]; size_t n; } text_out;
static int text_write(void *user, const void *data, size_t size)
{
    text_out *t = (text_out *)user;
    if (t->n + size >= sizeof t->buf) return 1;
    memcpy(t->buf + t->n, data, size);
    t->n += size;
    t->buf[t->n] = 0;
    return 0;
}

/* 1 if t holds the bytes of str (t may hold zero bytes: a protobuf) */
static int has_bytes(const text_out *t, const char *str)
{
    size_t i, n = strlen(str);
    for (i = 0; i + n <= t->n; i++)
        if (memcmp(t->buf + i, str, n) == 0) return 1;
    return 0;
}

/* every output of the capture at capture_path says whether it is stale:
   the summary (text and JSON), the Chrome and Perfetto traces and the
   report; and gives the launch's number */
static void check_outputs(uint64_t launch, int stale)
{
    ikp_capture *cap = NULL;
    ikp_stats *st = NULL;
    ikp_report *rep = NULL;
    ikp_error e;
    text_out *t = (text_out *)calloc(1, sizeof *t);
    char no[64];
    if (!t || ikp_capture_open_path(capture_path, NULL, &cap, &e) != IKP_OK) { CHECK(!"capture opens"); free(t); return; }
    CHECK_EQ(ikp_capture_get_info(cap)->launch, launch);
    CHECK_EQ(ikp_capture_get_info(cap)->claimed_twice != 0, stale);
    CHECK_EQ(ikp_capture_stale(ikp_capture_get_info(cap), no, sizeof no) != 0, stale);
    CHECK_EQ(ikp_stats_compute(cap, &st, &e), IKP_OK);
    if (st) {
        CHECK_EQ(ikp_stats_write_text(st, text_write, t, &e), IKP_OK);
        CHECK_EQ(strstr(t->buf, "STALE: ") != NULL, stale);
        snprintf(no, sizeof no, "launch      %llu (", (unsigned long long)launch);
        CHECK(strstr(t->buf, no) != NULL);
        t->n = 0;
        CHECK_EQ(ikp_stats_write_json(st, text_write, t, &e), IKP_OK);
        CHECK_EQ(strstr(t->buf, "\"stale\":\"STALE: ") != NULL, stale);
        CHECK_EQ(strstr(t->buf, "\"stale\":null") != NULL, !stale);
        snprintf(no, sizeof no, "\"launch\":%llu", (unsigned long long)launch);
        CHECK(strstr(t->buf, no) != NULL);
    }
    t->n = 0;
    CHECK_EQ(ikp_write_chrome(cap, NULL, text_write, t, &e), IKP_OK);
    CHECK_EQ(strstr(t->buf, "\"ikp_stale\":\"STALE: ") != NULL, stale);
    snprintf(no, sizeof no, "\"ikp_launch\":\"%llu\"", (unsigned long long)launch);
    CHECK(strstr(t->buf, no) != NULL);
#ifndef IKP_NO_PERFETTO
    t->n = 0;
    CHECK_EQ(ikp_write_perfetto(cap, NULL, text_write, t, &e), IKP_OK);
    CHECK_EQ(has_bytes(t, ": STALE: "), stale); /* the launch's track name */
    snprintf(no, sizeof no, "launch %llu (", (unsigned long long)launch);
    CHECK(has_bytes(t, no));
#endif
    CHECK_EQ(ikp_report_compute(cap, NULL, &rep, &e), IKP_OK);
    if (rep) {
        t->n = 0;
        CHECK_EQ(ikp_report_write_markdown(rep, NULL, text_write, t, &e), IKP_OK);
        CHECK_EQ(strstr(t->buf, "**STALE: ") != NULL && strstr(t->buf, "**STALE: ") < strstr(t->buf, "## Configuration"),
                 stale);
        snprintf(no, sizeof no, "| launch | %llu (", (unsigned long long)launch);
        CHECK(strstr(t->buf, no) != NULL);
    }
    ikp_report_free(rep);
    ikp_stats_free(st);
    ikp_capture_free(cap);
    free(t);
}

/* dumps the buffer to capture_path; its records are launch's (its regions
   `extra` ns longer), clean or stale */
static void dump_and_check(ikp_cuda_buffer *buf, cudaStream_t s, uint64_t launch, uint32_t extra, int stale)
{
    ikp_dump_desc d;
    ikp_capture *cap = NULL;
    ikp_error e;
    memset(&d, 0, sizeof d);
    d.capture_path = capture_path;
    CHECK_EQ(ikp_cuda_dump(buf, s, &d, &e), IKP_OK);
    CHECK_EQ(ikp_capture_open_path(capture_path, NULL, &cap, &e), IKP_OK);
    if (cap) check_records_x(cap, extra);
    ikp_capture_free(cap);
    check_outputs(launch, stale);
}

/* A reset captured into a CUDA graph with the kernel: the capture stays
   valid (no copy from pageable memory, no cudaMalloc refused by the
   capture's mode, no reading), and every replay starts from a reset buffer
   with a number of its own. Without nvcc the reset refuses to be captured,
   saying why, and leaves the capture intact; a reset outside it before each
   replay does the same work. A replay without a reset is stale in every
   output. Calls that cannot be captured (a download) are refused, naming
   the capture. */
static void test_graph(void)
{
    ikp_cuda_buffer buf;
    ikp_error e;
    cudaStream_t s;
    cudaGraph_t g = NULL, g2 = NULL, g3 = NULL;
    cudaGraphExec_t x = NULL, x2 = NULL;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    graph_kernel k;
    uint64_t *host;
    ikp_result r;
    uint32_t i;
    fake_reset(1);
    CHECK_EQ(ikp_cuda_buffer_create(&buf, LANES, CAP, &e), IKP_OK);
    CHECK_EQ(cudaStreamCreate(&s), cudaSuccess);
    host = (uint64_t *)calloc(buf.num_words, 8);
    k.device = buf.device;
    k.launches = 0;
    CHECK(cudaSetDevice(99) != cudaSuccess); /* an error left pending: not the reset's */
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    r = ikp_cuda_buffer_reset(&buf, s, &e);
    CHECK_EQ(r, KERNELS ? IKP_OK : IKP_ERR_CUDA);
    if (!KERNELS) CHECK(strstr(e.message, "capturing a CUDA graph") && strstr(e.message, "nvcc"));
    CHECK_EQ(buf.num_clock, 0); /* no reading inside a capture */
    CHECK_EQ(ikp_cuda_buffer_download(&buf, s, host, &e), IKP_ERR_CUDA);
    CHECK(strstr(e.message, "capturing a CUDA graph") != NULL);
    CHECK_EQ(cudaLaunchHostFunc(s, graph_kernel_run, &k), cudaSuccess);
    CHECK_EQ(cudaStreamIsCapturing(s, &cs), cudaSuccess);
    CHECK_EQ(cs, cudaStreamCaptureStatusActive); /* nothing IKP did invalidated it */
    CHECK_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    CHECK_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    CHECK_EQ(k.launches, 0); /* captured, not run */
    /* replays, each dumped: launches 1, 2, 3 with their own records */
    for (i = 1; i <= 3; i++) {
        if (!KERNELS) CHECK_EQ(ikp_cuda_buffer_reset(&buf, s, &e), IKP_OK); /* outside, before each */
        CHECK_EQ(cudaGraphLaunch(x, s), cudaSuccess);
        dump_and_check(&buf, s, i, i, 0);
        if (KERNELS) CHECK_EQ(buf.num_clock, i < 2 ? i : 2); /* the downloads' readings, the last two */
        else CHECK_EQ(buf.num_clock, 0);
    }
    /* a graph of the kernel alone replayed after: its records are refused
       by the claimed lanes, and the buffer's (launch 3's) are flagged stale */
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_EQ(cudaLaunchHostFunc(s, graph_kernel_run, &k), cudaSuccess);
    CHECK_EQ(cudaStreamEndCapture(s, &g2), cudaSuccess);
    CHECK_EQ(cudaGraphInstantiate(&x2, g2, 0), cudaSuccess);
    CHECK_EQ(cudaGraphLaunch(x2, s), cudaSuccess);
    dump_and_check(&buf, s, 3, 3, 1);
    /* many replays, one dump: the last replay's records, numbered */
    for (i = 0; i < 5; i++) {
        if (!KERNELS) CHECK_EQ(ikp_cuda_buffer_reset(&buf, s, &e), IKP_OK);
        CHECK_EQ(cudaGraphLaunch(x, s), cudaSuccess);
    }
    dump_and_check(&buf, s, 8, k.launches, 0);
    CHECK_EQ(k.launches, 9);
    /* a reset on a stream whose capture something else invalidated: said, and nothing added */
    CHECK_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CHECK_EQ(cudaMemcpyAsync(buf.device, host, 8, cudaMemcpyHostToDevice, s), cudaErrorStreamCaptureUnsupported);
    CHECK_EQ(ikp_cuda_buffer_reset(&buf, s, &e), IKP_ERR_CUDA);
    CHECK(strstr(e.message, "capture was invalidated") != NULL);
    CHECK_EQ(cudaStreamEndCapture(s, &g3), cudaErrorStreamCaptureInvalidated);
    CHECK(g3 == NULL);
    cudaGetLastError();
    CHECK_EQ(cudaGraphExecDestroy(x), cudaSuccess);
    CHECK_EQ(cudaGraphExecDestroy(x2), cudaSuccess);
    CHECK_EQ(cudaGraphDestroy(g), cudaSuccess);
    CHECK_EQ(cudaGraphDestroy(g2), cudaSuccess);
    free(host);
    cudaStreamDestroy(s);
    ikp_cuda_buffer_destroy(&buf);
    check_clean();
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    snprintf(capture_path, sizeof capture_path, "%s/test_cuda_%s.ikp", dir, KERNELS ? "nvcc" : "cc");
    test_bad_arguments();
    test_device_id();
    test_flow();
    test_graph();
    test_sampling_off();
    test_bad_sample();
    test_no_answer();
    test_kernel_fault();
    test_other_device();
    test_peer_clock();
    fail_each_call("every call failing in turn", attempt_run, RUN_DEFAULT);
    fail_each_call("the same, sampling off", attempt_run, RUN_SAMPLING_OFF);
    fail_each_call("the same, on device 1", attempt_run, RUN_ON_DEVICE_1);
    if (KERNELS) {
        fail_each_call("peer clock over peer memory", attempt_peer_clock, 1);
        fail_each_call("peer clock through the host", attempt_peer_clock, 0);
    }
    remove(capture_path);
    CHECK_EQ(fake_reset(1), 0);
    return check_report();
}
