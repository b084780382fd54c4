/* A fake CUDA runtime for testing ikp.h's CUDA helpers on a machine without
   a GPU (tests/test_cuda.c). It defines the runtime calls the helpers make
   and, for nvcc-compiled code, the launch and registration entry points
   nvcc's generated host code calls (linked with -cudart none). Device
   memory is host memory; the helpers' own kernels (the clock reading's
   answer, the SM clock sampler and the GPU-GPU ping-pong) are played by
   host threads that do what the kernels do, each device with a
   globaltimer of its own (the fake's clock plus an offset). Any call can be
   made to fail, and every use of memory is checked against what is
   allocated. */
#ifndef IKP_TEST_FAKE_CUDA_H
#define IKP_TEST_FAKE_CUDA_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_MAX_DEVICES 4

typedef struct fake_device {
    int sms;              /* cudaDevAttrMultiProcessorCount */
    int clock_khz;        /* cudaDevAttrClockRate */
    int64_t gt_offset_ns; /* its globaltimer = fake_host_ns() + this */
    unsigned char uuid[16];
    int pci_bus;
    int peer_ok;          /* may reach the other devices' memory */
    int answers;          /* its clock-reading kernel answers (0: a GPU too busy to start it) */
} fake_device;

/* The fake's clock (CLOCK_REALTIME ns, never going back, held still while
   a clock reading waits for its answer): every device's globaltimer is it
   plus the device's offset, and test_cuda.c gives it to ikp.h as
   IKP_REALTIME_NS(), so that no result depends on how loaded the machine is. */
int64_t fake_host_ns(void);

/* A fresh runtime of n devices (at most FAKE_MAX_DEVICES), all state gone;
   device i: 132 SMs, 1755 MHz, offsets and UUIDs that differ, peer access,
   answering. Fails (returns nonzero) if the last runtime left memory,
   streams or threads behind. */
int fake_reset(int n);
fake_device *fake_dev(int i);

/* Failure injection: the k-th fallible call from now fails (k >= 1; 0:
   none), with cudaErrorUnknown, whose text is FAKE_ERROR_TEXT. */
#define FAKE_ERROR_TEXT "fake CUDA failure"
void fake_fail_call(long k);
/* The name of the call the injection hit (NULL: not reached yet). */
const char *fake_failed(void);
long fake_calls(void);

/* A stream that stays busy for the next n queries (a kernel still
   running), and one whose next synchronisation reports err. */
void fake_stream_busy(void *stream, int queries);
void fake_stream_error(void *stream, int err);

/* What is live now, and misuse seen so far: a copy or memset outside an
   allocation, a free of what is not allocated, a stream used after its
   destruction. */
long fake_live_device_bytes(void);
int fake_live_allocations(void);  /* device and host */
int fake_live_streams(void);
int fake_live_threads(void);      /* kernels still running */
int fake_misuse(void);
const char *fake_misuse_text(void);
int fake_current_device(void);
int fake_peer_enabled(int dev, int peer);
void fake_set_peer_enabled(int dev, int peer, int on);

/* Launches of a kernel whose name contains name, since fake_reset. */
int fake_launches(const char *name);

/* The SM clock samples the fake sampler wrote since fake_reset, in order
   (the layout of ikp_sm_clock: gpu_ns, cycles, sm, reserved). */
typedef struct fake_sample {
    uint64_t gpu_ns, cycles;
    uint32_t sm, reserved;
} fake_sample;
int fake_samples(const fake_sample **out);
/* The k-th sample from now (k >= 1) has its clock64 read 2 ms late, as by
   a sampler block held up between its two reads. */
void fake_bad_sample(int k);

#ifdef __cplusplus
}
#endif
#endif
