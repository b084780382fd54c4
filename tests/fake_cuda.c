/* A fake CUDA runtime (see fake_cuda.h). Plain C99 and POSIX threads; the
   declarations come from the CUDA Toolkit's own cuda_runtime_api.h, so a
   call whose signature the fake gets wrong does not compile. The entry
   points of nvcc's generated host code (registration and launch) are those
   of CUDA 13's crt/host_runtime.h. */
#define _POSIX_C_SOURCE 200809L
#include "fake_cuda.h"
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic" /* the CUDA headers use unnamed unions */
#endif
#include <cuda_runtime_api.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- state ---- */
typedef struct fake_alloc {
    char *p;
    size_t size;
    int host;   /* cudaHostAlloc */
    int device; /* of device memory: the device current at cudaMalloc */
    struct fake_alloc *next;
} fake_alloc;

typedef struct fake_thread {
    pthread_t t;
    void *stream; /* the stream it runs on */
    int device;
    struct fake_thread *next;
} fake_thread;

/* A captured operation: a graph's node, replayed by cudaGraphLaunch */
typedef struct fake_op {
    int kind;                                    /* FAKE_OP_* */
    void *p;                                     /* memset: p, v, n */
    int v;
    size_t n;
    unsigned long long *buf, h[3], *count;       /* the header kernel's arguments */
    cudaHostFn_t fn;                             /* a host function and its data */
    void *data;
    struct fake_op *next;
} fake_op;
enum { FAKE_OP_MEMSET = 1, FAKE_OP_HEADER, FAKE_OP_HOST };

/* a graph, or (instantiated) an executable graph: its nodes in order */
typedef struct fake_graph {
    fake_op *ops, **tail;
    int exec;
    struct fake_graph *next;
} fake_graph;

typedef struct fake_stream {
    int device;
    int busy;  /* queries still answered cudaErrorNotReady */
    int error; /* reported by the next synchronisation */
    int live;
    int capturing, invalid, global; /* a capture: on, invalidated, in cudaStreamCaptureModeGlobal */
    fake_graph *graph;              /* what it captured */
    struct fake_stream *next;
} fake_stream;

typedef struct fake_kernel {
    const void *host_fun;
    char name[128];
    int launches;
    struct fake_kernel *next;
} fake_kernel;

static struct {
    int num_devices, current;
    fake_device dev[FAKE_MAX_DEVICES];
    int peer_enabled[FAKE_MAX_DEVICES][FAKE_MAX_DEVICES];
    fake_alloc *allocs;
    fake_thread *threads;
    fake_stream *streams;
    fake_kernel *kernels;
    long calls, fail_at;
    const char *failed;
    cudaError_t last_error;
    int misuse;
    char misuse_text[256];
    fake_sample *samples;
    int num_samples, cap_samples;
    uint64_t epoch_ns;
    int bad_sample;
    fake_graph *graphs; /* graphs and executable graphs, live */
    enum cudaStreamCaptureMode thread_mode; /* cudaThreadExchangeStreamCaptureMode's */
    dim3 grid, block; /* the launch configuration nvcc's code pushes */
    size_t shmem;
    void *stream;
} F;

/* The fake's clock, the host's and (plus an offset) every device's: the
   test controls it, so that no result depends on how fast or loaded the
   machine is. It follows CLOCK_REALTIME, never going back, except while a
   kernel that answers pings runs (the clock reading's answer, a GPU-GPU
   ping-pong): then each read moves it 1 ns and yields the CPU, so that no
   wait for an answer runs out however long the answering thread waits for
   a core. One counter, read atomically, orders every thread's reads. */
static int64_t fake_clock;
static int fake_pongs, fake_pingpongs; /* such kernels running (a ping-pong needs both sides) */
static int fake_answering(void)
{
    return __atomic_load_n(&fake_pongs, __ATOMIC_ACQUIRE) > 0 || __atomic_load_n(&fake_pingpongs, __ATOMIC_ACQUIRE) > 1;
}
static int64_t fake_now(void)
{
    struct timespec ts;
    int64_t real, cur;
    if (fake_answering()) {
        sched_yield();
        return __atomic_add_fetch(&fake_clock, 1, __ATOMIC_ACQ_REL);
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    real = (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
    cur = __atomic_load_n(&fake_clock, __ATOMIC_ACQUIRE);
    do {
        if (real <= cur) return __atomic_add_fetch(&fake_clock, 1, __ATOMIC_ACQ_REL);
    } while (!__atomic_compare_exchange_n(&fake_clock, &cur, real, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return real;
}

int64_t fake_host_ns(void) { return fake_now(); }

static uint64_t fake_gt(int device)
{
    return (uint64_t)(fake_now() + F.dev[device].gt_offset_ns);
}

static void fake_misused(const char *what, const char *call)
{
    if (!F.misuse) snprintf(F.misuse_text, sizeof F.misuse_text, "%s in %s", what, call);
    F.misuse++;
}

/* every fallible call starts here: counts it and says whether to fail */
static int fake_fails(const char *call)
{
    F.calls++;
    if (F.fail_at && F.calls == F.fail_at) {
        if (!F.failed) F.failed = call;
        F.last_error = cudaErrorUnknown;
        return 1;
    }
    return 0;
}
#define FAKE_ENTER(call) do { if (fake_fails(call)) return cudaErrorUnknown; } while (0)

static fake_alloc *fake_find(const void *p, size_t n, int host_ok)
{
    fake_alloc *a;
    for (a = F.allocs; a; a = a->next)
        if ((const char *)p >= a->p && (const char *)p <= a->p + a->size && n <= (size_t)(a->p + a->size - (const char *)p))
            return (host_ok || !a->host) ? a : NULL;
    return NULL;
}

static fake_stream *fake_stream_of(void *s, const char *call)
{
    fake_stream *x;
    if (!s) return NULL;
    for (x = F.streams; x; x = x->next)
        if ((void *)x == s) {
            if (!x->live) fake_misused("a destroyed stream", call);
            return x;
        }
    fake_misused("a stream the fake never made", call);
    return NULL;
}

/* waits for the kernels on stream s (NULL: all of device dev; dev < 0: all) */
static void fake_join(void *s, int dev)
{
    fake_thread **pp = &F.threads;
    while (*pp) {
        fake_thread *t = *pp;
        if ((s && t->stream == s) || (!s && (dev < 0 || t->device == dev))) {
            pthread_join(t->t, NULL);
            *pp = t->next;
            free(t);
        } else {
            pp = &t->next;
        }
    }
}

/* Stream capture, as CUDA's: while a stream captures, the work given to it
   becomes a graph's nodes instead of running; what cannot be captured (a
   copy from pageable memory, a wait for the stream) invalidates the
   capture, and while a capture in cudaStreamCaptureModeGlobal is on, so
   does any potentially unsafe call (cudaMalloc, a synchronous copy...)
   made in a thread mode other than relaxed: it fails with
   cudaErrorStreamCaptureUnsupported and cudaStreamEndCapture then fails. */
static fake_stream *fake_capturing(void *s)
{
    fake_stream *x;
    for (x = F.streams; x; x = x->next)
        if ((void *)x == s && x->live && x->capturing) return x;
    return NULL;
}

/* 1 if call, potentially unsafe, is refused (and the captures it meets invalidated) */
static int fake_unsafe(const char *call)
{
    fake_stream *x;
    int hit = 0;
    (void)call;
    if (F.thread_mode == cudaStreamCaptureModeRelaxed) return 0;
    for (x = F.streams; x; x = x->next)
        if (x->live && x->capturing && (x->global || F.thread_mode == cudaStreamCaptureModeThreadLocal)) {
            x->invalid = 1;
            hit = 1;
        }
    if (hit) F.last_error = cudaErrorStreamCaptureUnsupported;
    return hit;
}
#define FAKE_SAFE(call) do { if (fake_unsafe(call)) return cudaErrorStreamCaptureUnsupported; } while (0)

/* an operation for the graph a stream captures (NULL: out of memory, and
   the capture invalidated) */
static fake_op *fake_capture_op(fake_stream *x, int kind)
{
    fake_op *o = (fake_op *)calloc(1, sizeof *o);
    if (!o) { x->invalid = 1; return NULL; }
    o->kind = kind;
    *x->graph->tail = o;
    x->graph->tail = &o->next;
    return o;
}

static fake_graph *fake_graph_new(int exec)
{
    fake_graph *g = (fake_graph *)calloc(1, sizeof *g);
    if (!g) return NULL;
    g->tail = &g->ops;
    g->exec = exec;
    g->next = F.graphs;
    F.graphs = g;
    return g;
}

static void fake_graph_free(fake_graph *g)
{
    while (g->ops) { fake_op *o = g->ops; g->ops = o->next; free(o); }
    free(g);
}

/* g taken off the live graphs and freed */
static void fake_graph_drop(fake_graph *g)
{
    fake_graph **pp;
    for (pp = &F.graphs; *pp != g; pp = &(*pp)->next) {}
    *pp = g->next;
    fake_graph_free(g);
}

/* ---- control (fake_cuda.h) ---- */
int fake_reset(int n)
{
    int i, left = F.allocs || F.threads || fake_live_streams() || F.graphs;
    fake_join(NULL, -1);
    while (F.allocs) { fake_alloc *a = F.allocs; F.allocs = a->next; free(a->p); free(a); }
    while (F.streams) { fake_stream *s = F.streams; F.streams = s->next; free(s); }
    while (F.kernels) { fake_kernel *k = F.kernels; F.kernels = k->next; free(k); }
    while (F.graphs) { fake_graph *g = F.graphs; F.graphs = g->next; fake_graph_free(g); }
    free(F.samples);
    memset(&F, 0, sizeof F);
    F.num_devices = n < 1 ? 1 : n > FAKE_MAX_DEVICES ? FAKE_MAX_DEVICES : n;
    for (i = 0; i < F.num_devices; i++) {
        fake_device *d = &F.dev[i];
        int k;
        d->sms = 132;
        d->clock_khz = 1755000;
        d->gt_offset_ns = (i % 2 ? -1 : 1) * (123456789ll + 98765ll * i);
        for (k = 0; k < 16; k++) d->uuid[k] = (unsigned char)(0x10 * (i + 1) + k);
        d->pci_bus = 0x18 + i;
        d->peer_ok = 1;
        d->answers = 1;
    }
    F.epoch_ns = (uint64_t)fake_now();
    return left;
}

fake_device *fake_dev(int i) { return &F.dev[i]; }
void fake_fail_call(long k) { F.fail_at = k ? F.calls + k : 0; F.failed = NULL; }
const char *fake_failed(void) { return F.failed; }
long fake_calls(void) { return F.calls; }

void fake_stream_busy(void *stream, int queries)
{
    fake_stream *s = fake_stream_of(stream, "fake_stream_busy");
    if (s) s->busy = queries;
}

void fake_stream_error(void *stream, int err)
{
    fake_stream *s = fake_stream_of(stream, "fake_stream_error");
    if (s) s->error = err;
}

long fake_live_device_bytes(void)
{
    long n = 0;
    fake_alloc *a;
    for (a = F.allocs; a; a = a->next)
        if (!a->host) n += (long)a->size;
    return n;
}

int fake_live_allocations(void)
{
    int n = 0;
    fake_alloc *a;
    for (a = F.allocs; a; a = a->next) n++;
    return n;
}

int fake_live_streams(void)
{
    int n = 0;
    fake_stream *s;
    for (s = F.streams; s; s = s->next) n += s->live;
    return n;
}

int fake_live_threads(void)
{
    int n = 0;
    fake_thread *t;
    for (t = F.threads; t; t = t->next) n++;
    return n;
}

int fake_misuse(void) { return F.misuse; }
const char *fake_misuse_text(void) { return F.misuse_text; }
int fake_current_device(void) { return F.current; }
int fake_peer_enabled(int dev, int peer) { return F.peer_enabled[dev][peer]; }
void fake_set_peer_enabled(int dev, int peer, int on) { F.peer_enabled[dev][peer] = on; }

int fake_launches(const char *name)
{
    int n = 0;
    fake_kernel *k;
    for (k = F.kernels; k; k = k->next)
        if (strstr(k->name, name)) n += k->launches;
    return n;
}

void fake_bad_sample(int k) { F.bad_sample = k; }

int fake_samples(const fake_sample **out)
{
    *out = F.samples;
    return F.num_samples;
}

/* ---- the helpers' kernels, played on the host ---- */
#define FAKE_QUIT (~0ull)
#define FAKE_WAIT_NS 100000000ll /* as the kernels: give up after 100 ms without a ping */

typedef struct fake_args {
    int device, role, n;
    unsigned long long *flag, *reply, *times, *theirs;
} fake_args;

static unsigned long long fake_load(const unsigned long long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void fake_store(unsigned long long *p, unsigned long long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

/* ikp__pong: waits for flag == s, answers with its clock in reply[s] */
static void *fake_pong(void *arg)
{
    fake_args *a = (fake_args *)arg;
    int s;
    for (s = 1; s <= a->n && F.dev[a->device].answers; s++) {
        uint64_t t0 = fake_gt(a->device), t;
        unsigned long long f;
        do {
            f = fake_load(a->flag);
            t = fake_gt(a->device);
            if (f == FAKE_QUIT || (int64_t)(t - t0) > FAKE_WAIT_NS) goto out;
            sched_yield(); /* a GPU spins on its own SM; here the host's cores are shared */
        } while (f != (unsigned long long)s);
        fake_store(&a->reply[s], t);
    }
out:
    __atomic_sub_fetch(&fake_pongs, 1, __ATOMIC_ACQ_REL);
    free(a);
    return NULL;
}

/* ikp__pingpong: role 0 pings the other device and times the answer */
static void *fake_pingpong(void *arg)
{
    fake_args *a = (fake_args *)arg;
    int s;
    for (s = 1; s <= a->n; s++) {
        uint64_t t0 = fake_gt(a->device), t;
        if (a->role == 0) fake_store(a->theirs, (unsigned long long)s);
        do {
            t = fake_gt(a->device);
            if ((int64_t)(t - t0) > FAKE_WAIT_NS) { fake_store(&a->times[0], 1); goto out; }
            sched_yield();
        } while (fake_load(a->flag) != (unsigned long long)s);
        t = fake_gt(a->device);
        if (a->role == 1) {
            fake_store(a->theirs, (unsigned long long)s);
            fake_store(&a->times[2 * s], t);
        } else {
            fake_store(&a->times[2 * s], t0);
            fake_store(&a->times[2 * s + 1], t);
        }
    }
out:
    __atomic_sub_fetch(&fake_pingpongs, 1, __ATOMIC_ACQ_REL);
    free(a);
    return NULL;
}

/* ikp__sample_sm, one block per SM: (globaltimer, clock64, smid); each SM's
   clock runs at 1.75 cycles/ns from an offset of its own */
static void fake_sample_sm(int device, unsigned long long *count, fake_sample *out, unsigned cap, unsigned blocks)
{
    unsigned b;
    for (b = 0; b < blocks; b++) {
        uint64_t now = (uint64_t)fake_now(), i;
        uint32_t sm = b % (unsigned)F.dev[device].sms;
        fake_sample x;
        x.gpu_ns = now + (uint64_t)F.dev[device].gt_offset_ns;
        x.cycles = (now - F.epoch_ns) * 7 / 4 + 1000000007ull * (sm + 1);
        /* its clock64 read held up long after its globaltimer read: later
           in cycles than every later sample of its SM, which no clock rate
           explains however far apart the rounds run (a hold-up of a few
           ms could pass for rate wander when a loaded host spaces the
           rounds by tens of ms) */
        if (F.bad_sample && --F.bad_sample == 0) x.cycles += 1ull << 40;
        x.sm = sm;
        x.reserved = 0;
        i = (*count)++;
        if (i >= cap) continue;
        out[i] = x;
        if (F.num_samples == F.cap_samples) {
            int c = F.cap_samples ? 2 * F.cap_samples : 1024;
            fake_sample *p = (fake_sample *)realloc(F.samples, (size_t)c * sizeof *p);
            if (!p) continue;
            F.samples = p;
            F.cap_samples = c;
        }
        F.samples[F.num_samples++] = x;
    }
}

static int fake_start(void *(*fn)(void *), fake_args *a, void *stream)
{
    fake_thread *t = (fake_thread *)calloc(1, sizeof *t);
    if (!t) { free(a); return 0; }
    t->stream = stream;
    t->device = a->device;
    if (pthread_create(&t->t, NULL, fn, a) != 0) { free(t); free(a); return 0; }
    t->next = F.threads;
    F.threads = t;
    return 1;
}

/* a kernel's pointer argument: it must lie in memory the fake gave out,
   mapped host memory or the memory of the kernel's device (or of a device
   it has peer access to) */
static void *fake_ptr_arg(void **args, int i, size_t bytes, int dev, const char *kernel)
{
    void *p = *(void **)args[i];
    fake_alloc *a = fake_find(p, bytes, 1);
    if (!a) fake_misused("a kernel argument outside any allocation", kernel);
    else if (!a->host && a->device != dev && !F.peer_enabled[dev][a->device])
        fake_misused("another device's memory, without peer access, given to a kernel", kernel);
    return p;
}

/* what ikp.h's header kernel does */
static void fake_write_header(unsigned long long *buf, unsigned long long h0, unsigned long long h1,
                              unsigned long long h2, unsigned long long *count)
{
    *count += 1;
    buf[0] = h0;
    buf[1] = h1;
    buf[2] = h2;
    buf[6] = *count;
}

/* kernel k with its arguments, grid.x blocks, on device dev (its stream's) */
static cudaError_t fake_launch(fake_kernel *k, void **args, unsigned blocks, int dev, void *stream)
{
    fake_args *a;
    if (strstr(k->name, "ikp__sample_sm")) {
        unsigned cap = *(unsigned *)args[2];
        unsigned long long *count = (unsigned long long *)fake_ptr_arg(args, 0, 8, dev, k->name);
        fake_sample *out = (fake_sample *)fake_ptr_arg(args, 1, (size_t)cap * sizeof(fake_sample), dev, k->name);
        fake_sample_sm(dev, count, out, cap, blocks);
        return cudaSuccess;
    }
    if (strstr(k->name, "ikp__write_header")) {
        unsigned long long *buf = (unsigned long long *)fake_ptr_arg(args, 0, 8 * 8, dev, k->name);
        unsigned long long *count = (unsigned long long *)fake_ptr_arg(args, 4, 8, dev, k->name);
        if (!buf || !count) return cudaErrorInvalidValue;
        fake_write_header(buf, *(unsigned long long *)args[1], *(unsigned long long *)args[2],
                          *(unsigned long long *)args[3], count);
        return cudaSuccess;
    }
    a = (fake_args *)calloc(1, sizeof *a);
    if (!a) return cudaErrorMemoryAllocation;
    a->device = dev;
    if (strstr(k->name, "ikp__pingpong")) {
        a->role = *(int *)args[0];
        a->n = *(int *)args[4];
        a->flag = (unsigned long long *)fake_ptr_arg(args, 1, 8, dev, k->name);
        a->theirs = (unsigned long long *)fake_ptr_arg(args, 2, 8, dev, k->name);
        a->times = (unsigned long long *)fake_ptr_arg(args, 3, (size_t)(2 * a->n + 2) * 8, dev, k->name);
        __atomic_add_fetch(&fake_pingpongs, 1, __ATOMIC_ACQ_REL);
        if (fake_start(fake_pingpong, a, stream)) return cudaSuccess;
        __atomic_sub_fetch(&fake_pingpongs, 1, __ATOMIC_ACQ_REL);
        return cudaErrorLaunchFailure;
    }
    if (strstr(k->name, "ikp__pong")) {
        a->n = *(int *)args[2];
        a->flag = (unsigned long long *)fake_ptr_arg(args, 0, 8, dev, k->name);
        a->reply = (unsigned long long *)fake_ptr_arg(args, 1, (size_t)(a->n + 1) * 8, dev, k->name);
        __atomic_add_fetch(&fake_pongs, 1, __ATOMIC_ACQ_REL);
        if (fake_start(fake_pong, a, stream)) return cudaSuccess;
        __atomic_sub_fetch(&fake_pongs, 1, __ATOMIC_ACQ_REL);
        return cudaErrorLaunchFailure;
    }
    free(a);
    fake_misused("a kernel the fake does not play", k->name);
    return cudaErrorInvalidDeviceFunction;
}

/* ---- nvcc's registration and launch entry points ---- */
void **__cudaRegisterFatBinary(void *fat_cubin);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaUnregisterFatBinary(void **handle);
char __cudaInitModule(void **handle);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                               cudaStream_t stream);

static fake_kernel *fake_registered;
void **__cudaRegisterFatBinary(void *fat_cubin) { static void *handle; (void)fat_cubin; return &handle; }
void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }
void __cudaUnregisterFatBinary(void **handle) { (void)handle; }
char __cudaInitModule(void **handle) { (void)handle; return 1; }

/* registration runs before main: kept apart from F, which fake_reset clears */
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun, const char *device_name,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
    fake_kernel *k = (fake_kernel *)calloc(1, sizeof *k);
    (void)handle; (void)device_fun; (void)thread_limit; (void)tid; (void)bid; (void)bdim; (void)gdim; (void)wsize;
    if (!k) return;
    k->host_fun = host_fun;
    snprintf(k->name, sizeof k->name, "%s", device_name);
    k->next = fake_registered;
    fake_registered = k;
}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream)
{
    F.grid = grid;
    F.block = block;
    F.shmem = shmem;
    F.stream = stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, void *stream)
{
    *grid = F.grid;
    *block = F.block;
    *shmem = F.shmem;
    *(void **)stream = F.stream;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun)
{
    *kernel = (cudaKernel_t)host_fun;
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t shmem,
                               cudaStream_t stream)
{
    fake_kernel *r, *k;
    fake_stream *s = stream ? fake_stream_of(stream, "kernel launch") : NULL;
    cudaError_t e;
    (void)block; (void)shmem;
    if (fake_fails("kernel launch")) return cudaErrorUnknown;
    /* a launch into a stream of another device than the current one fails */
    if (s && s->device != F.current) return F.last_error = cudaErrorInvalidResourceHandle;
    for (r = fake_registered; r && r->host_fun != (const void *)kernel; r = r->next) {}
    if (!r) { fake_misused("an unregistered kernel", "kernel launch"); return F.last_error = cudaErrorInvalidDeviceFunction; }
    for (k = F.kernels; k && k->host_fun != r->host_fun; k = k->next) {}
    if (!k) { /* the launch counts, per fake_reset */
        k = (fake_kernel *)calloc(1, sizeof *k);
        if (!k) return F.last_error = cudaErrorMemoryAllocation;
        *k = *r;
        k->launches = 0;
        k->next = F.kernels;
        F.kernels = k;
    }
    k->launches++;
    if (s && s->capturing) { /* a node: only the header kernel is played in a graph */
        fake_op *o;
        if (!strstr(k->name, "ikp__write_header")) {
            fake_misused("a kernel the fake does not capture", k->name);
            s->invalid = 1;
            return F.last_error = cudaErrorStreamCaptureUnsupported;
        }
        if (!(o = fake_capture_op(s, FAKE_OP_HEADER))) return F.last_error = cudaErrorMemoryAllocation;
        o->buf = (unsigned long long *)fake_ptr_arg(args, 0, 8 * 8, F.current, k->name);
        o->h[0] = *(unsigned long long *)args[1];
        o->h[1] = *(unsigned long long *)args[2];
        o->h[2] = *(unsigned long long *)args[3];
        o->count = (unsigned long long *)fake_ptr_arg(args, 4, 8, F.current, k->name);
        return cudaSuccess;
    }
    e = fake_launch(k, args, grid.x, F.current, (void *)stream);
    if (e != cudaSuccess) F.last_error = e;
    return e;
}

/* ---- the runtime calls ---- */
const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorUnknown: return FAKE_ERROR_TEXT;
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    default: return "some other CUDA error";
    }
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = F.last_error;
    F.last_error = cudaSuccess;
    return e;
}

static cudaError_t fake_error(cudaError_t e)
{
    F.last_error = e;
    return e;
}

cudaError_t cudaGetDevice(int *device)
{
    FAKE_ENTER("cudaGetDevice");
    *device = F.current;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    FAKE_ENTER("cudaSetDevice");
    if (device < 0 || device >= F.num_devices) return fake_error(cudaErrorInvalidDevice);
    F.current = device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    FAKE_ENTER("cudaGetDeviceProperties");
    if (device < 0 || device >= F.num_devices) return fake_error(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "Fake GPU %d", device);
    memcpy(prop->uuid.bytes, F.dev[device].uuid, 16);
    prop->pciBusID = F.dev[device].pci_bus;
    prop->multiProcessorCount = F.dev[device].sms;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    FAKE_ENTER("cudaDeviceGetAttribute");
    if (device < 0 || device >= F.num_devices) return fake_error(cudaErrorInvalidDevice);
    if (attr == cudaDevAttrClockRate) *value = F.dev[device].clock_khz;
    else if (attr == cudaDevAttrMultiProcessorCount) *value = F.dev[device].sms;
    else return fake_error(cudaErrorInvalidValue);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    FAKE_ENTER("cudaDeviceGetStreamPriorityRange");
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    FAKE_ENTER("cudaFuncGetAttributes");
    (void)func;
    memset(attr, 0, sizeof *attr);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    FAKE_ENTER("cudaDeviceSynchronize");
    FAKE_SAFE("cudaDeviceSynchronize");
    fake_join(NULL, F.current);
    return cudaSuccess;
}

static cudaError_t fake_alloc_new(void **p, size_t size, int host, const char *call)
{
    fake_alloc *a;
    FAKE_ENTER(call);
    FAKE_SAFE(call);
    a = (fake_alloc *)calloc(1, sizeof *a);
    if (!a || !(a->p = (char *)malloc(size ? size : 1))) { free(a); return fake_error(cudaErrorMemoryAllocation); }
    memset(a->p, host ? 0 : 0xA5, size); /* device memory is not zeroed */
    a->size = size;
    a->host = host;
    a->device = F.current;
    a->next = F.allocs;
    F.allocs = a;
    *p = a->p;
    return cudaSuccess;
}

/* A release that fails still releases (a free reports an earlier
   asynchronous error, say): the program cannot do it again. */
static cudaError_t fake_free(void *p, int host, const char *call)
{
    fake_alloc **pp;
    cudaError_t fail = fake_fails(call) ? cudaErrorUnknown : cudaSuccess;
    if (!p) return fail;
    fake_join(NULL, -1); /* frees wait for the device */
    for (pp = &F.allocs; *pp; pp = &(*pp)->next)
        if ((*pp)->p == (char *)p && (*pp)->host == host) {
            fake_alloc *a = *pp;
            *pp = a->next;
            free(a->p);
            free(a);
            return fail;
        }
    fake_misused("a free of memory not allocated", call);
    return fake_error(cudaErrorInvalidValue);
}

cudaError_t cudaMalloc(void **p, size_t size) { return fake_alloc_new(p, size, 0, "cudaMalloc"); }
cudaError_t cudaFree(void *p) { return fake_free(p, 0, "cudaFree"); }
cudaError_t cudaFreeHost(void *p) { return fake_free(p, 1, "cudaFreeHost"); }

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    (void)flags;
    return fake_alloc_new(p, size, 1, "cudaHostAlloc");
}

cudaError_t cudaHostGetDevicePointer(void **dev, void *host, unsigned int flags)
{
    fake_alloc *a;
    FAKE_ENTER("cudaHostGetDevicePointer");
    (void)flags;
    a = fake_find(host, 0, 1);
    if (!a || !a->host) { fake_misused("not host memory", "cudaHostGetDevicePointer"); return fake_error(cudaErrorInvalidValue); }
    *dev = host;
    return cudaSuccess;
}

/* a copy's or memset's range: in an allocation, or (the host side) anywhere */
static int fake_range(const void *p, size_t n, int must_be_ours, const char *call)
{
    if (!must_be_ours || fake_find(p, n, 1)) return 1;
    fake_misused("a range outside any allocation", call);
    return 0;
}

/* a copy, done at once; the device side of it must lie in an allocation */
static cudaError_t fake_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, const char *call)
{
    if (!fake_range(dst, n, kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice, call) ||
        !fake_range(src, n, kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice, call))
        return fake_error(cudaErrorInvalidValue);
    memcpy(dst, src, n);
    return cudaSuccess;
}

static cudaError_t fake_set(void *p, int v, size_t n, const char *call)
{
    if (!fake_range(p, n, 1, call)) return fake_error(cudaErrorInvalidValue);
    memset(p, v, n);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    FAKE_ENTER("cudaMemcpy");
    FAKE_SAFE("cudaMemcpy");
    fake_join(NULL, F.current); /* after the device's kernels */
    return fake_copy(dst, src, n, kind, "cudaMemcpy");
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    fake_stream *x;
    FAKE_ENTER("cudaMemcpyAsync");
    if (stream) fake_stream_of(stream, "cudaMemcpyAsync");
    if ((x = fake_capturing(stream)) != NULL) { /* the fake captures no copy: from pageable memory, CUDA can't */
        x->invalid = 1;
        return fake_error(cudaErrorStreamCaptureUnsupported);
    }
    return fake_copy(dst, src, n, kind, "cudaMemcpyAsync");
}

cudaError_t cudaMemset(void *p, int v, size_t n)
{
    FAKE_ENTER("cudaMemset");
    FAKE_SAFE("cudaMemset");
    return fake_set(p, v, n, "cudaMemset");
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t stream)
{
    fake_stream *x;
    FAKE_ENTER("cudaMemsetAsync");
    if (stream) fake_stream_of(stream, "cudaMemsetAsync");
    if ((x = fake_capturing(stream)) != NULL) {
        fake_op *o;
        if (!fake_range(p, n, 1, "cudaMemsetAsync")) return fake_error(cudaErrorInvalidValue);
        if (!(o = fake_capture_op(x, FAKE_OP_MEMSET))) return fake_error(cudaErrorMemoryAllocation);
        o->p = p;
        o->v = v;
        o->n = n;
        return cudaSuccess;
    }
    return fake_set(p, v, n, "cudaMemsetAsync");
}

static cudaError_t fake_stream_new(cudaStream_t *out, const char *call)
{
    fake_stream *s;
    FAKE_ENTER(call);
    s = (fake_stream *)calloc(1, sizeof *s);
    if (!s) return fake_error(cudaErrorMemoryAllocation);
    s->device = F.current;
    s->live = 1;
    s->next = F.streams;
    F.streams = s;
    *out = (cudaStream_t)(void *)s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *s) { return fake_stream_new(s, "cudaStreamCreate"); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    return fake_stream_new(s, "cudaStreamCreateWithFlags");
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority)
{
    (void)flags; (void)priority;
    return fake_stream_new(s, "cudaStreamCreateWithPriority");
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    fake_stream *s;
    cudaError_t fail = fake_fails("cudaStreamDestroy") ? cudaErrorUnknown : cudaSuccess; /* released all the same */
    s = fake_stream_of(stream, "cudaStreamDestroy");
    if (!s || !s->live) return fake_error(cudaErrorInvalidResourceHandle);
    fake_join(stream, 0); /* its kernels finish; the stream goes */
    s->live = 0;
    return fail;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    fake_stream *s;
    struct timespec pause = {0, 2000}; /* a query takes a few microseconds */
    FAKE_ENTER("cudaStreamQuery");
    s = fake_stream_of(stream, "cudaStreamQuery");
    if (s && s->capturing) { s->invalid = 1; return fake_error(cudaErrorStreamCaptureUnsupported); }
    nanosleep(&pause, NULL);
    if (s && s->busy > 0) { s->busy--; return cudaErrorNotReady; }
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    fake_stream *s;
    FAKE_ENTER("cudaStreamSynchronize");
    s = fake_stream_of(stream, "cudaStreamSynchronize");
    if (s && s->capturing) { s->invalid = 1; return fake_error(cudaErrorStreamCaptureUnsupported); }
    if (stream) fake_join(stream, 0);
    else fake_join(NULL, F.current);
    if (s) {
        s->busy = 0;
        if (s->error) { cudaError_t e = (cudaError_t)s->error; s->error = 0; return fake_error(e); }
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    FAKE_ENTER("cudaDeviceCanAccessPeer");
    if (device < 0 || device >= F.num_devices || peer < 0 || peer >= F.num_devices)
        return fake_error(cudaErrorInvalidDevice);
    *can = device != peer && F.dev[device].peer_ok && F.dev[peer].peer_ok;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    FAKE_ENTER("cudaDeviceEnablePeerAccess");
    (void)flags;
    if (peer < 0 || peer >= F.num_devices || peer == F.current) return fake_error(cudaErrorInvalidDevice);
    if (F.peer_enabled[F.current][peer]) return fake_error(cudaErrorPeerAccessAlreadyEnabled);
    F.peer_enabled[F.current][peer] = 1;
    return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    FAKE_ENTER("cudaDeviceDisablePeerAccess");
    if (peer < 0 || peer >= F.num_devices) return fake_error(cudaErrorInvalidDevice);
    if (!F.peer_enabled[F.current][peer]) return fake_error(cudaErrorPeerAccessNotEnabled);
    F.peer_enabled[F.current][peer] = 0;
    return cudaSuccess;
}

/* ---- stream capture and graphs (see fake_unsafe) ---- */
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    fake_stream *s;
    FAKE_ENTER("cudaStreamBeginCapture");
    s = fake_stream_of(stream, "cudaStreamBeginCapture");
    if (!s) return fake_error(cudaErrorStreamCaptureUnsupported); /* the legacy stream cannot capture */
    if (s->capturing) return fake_error(cudaErrorIllegalState);
    if (!(s->graph = fake_graph_new(0))) return fake_error(cudaErrorMemoryAllocation);
    s->capturing = 1;
    s->invalid = 0;
    s->global = mode == cudaStreamCaptureModeGlobal;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    fake_stream *s;
    FAKE_ENTER("cudaStreamEndCapture");
    s = fake_stream_of(stream, "cudaStreamEndCapture");
    *graph = NULL;
    if (!s || !s->capturing) return fake_error(cudaErrorIllegalState);
    s->capturing = 0;
    if (s->invalid) { /* no graph */
        fake_graph_drop(s->graph);
        s->graph = NULL;
        return fake_error(cudaErrorStreamCaptureInvalidated);
    }
    *graph = (cudaGraph_t)(void *)s->graph;
    s->graph = NULL;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    fake_stream *s;
    FAKE_ENTER("cudaStreamIsCapturing");
    s = fake_stream_of(stream, "cudaStreamIsCapturing");
    *status = !s || !s->capturing ? cudaStreamCaptureStatusNone
              : s->invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    enum cudaStreamCaptureMode m = F.thread_mode;
    FAKE_ENTER("cudaThreadExchangeStreamCaptureMode");
    F.thread_mode = *mode;
    *mode = m;
    return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *data)
{
    fake_stream *s;
    FAKE_ENTER("cudaLaunchHostFunc");
    if (stream) fake_stream_of(stream, "cudaLaunchHostFunc");
    if ((s = fake_capturing(stream)) != NULL) {
        fake_op *o = fake_capture_op(s, FAKE_OP_HOST);
        if (!o) return fake_error(cudaErrorMemoryAllocation);
        o->fn = fn;
        o->data = data;
        return cudaSuccess;
    }
    if (stream) fake_join(stream, 0);
    fn(data);
    return cudaSuccess;
}

static fake_graph *fake_graph_of(const void *g, int exec, const char *call)
{
    fake_graph *x;
    for (x = F.graphs; x; x = x->next)
        if ((const void *)x == g && x->exec == exec) return x;
    fake_misused(exec ? "an executable graph the fake never made" : "a graph the fake never made", call);
    return NULL;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    fake_graph *g, *e;
    fake_op *o;
    FAKE_ENTER("cudaGraphInstantiate");
    (void)flags;
    if (!(g = fake_graph_of(graph, 0, "cudaGraphInstantiate"))) return fake_error(cudaErrorInvalidValue);
    if (!(e = fake_graph_new(1))) return fake_error(cudaErrorMemoryAllocation);
    for (o = g->ops; o; o = o->next) {
        fake_op *c = (fake_op *)malloc(sizeof *c);
        if (!c) { fake_graph_drop(e); return fake_error(cudaErrorMemoryAllocation); }
        *c = *o;
        c->next = NULL;
        *e->tail = c;
        e->tail = &c->next;
    }
    *exec = (cudaGraphExec_t)(void *)e;
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    fake_graph *g;
    fake_op *o;
    FAKE_ENTER("cudaGraphLaunch");
    if (stream) fake_stream_of(stream, "cudaGraphLaunch");
    if (!(g = fake_graph_of(exec, 1, "cudaGraphLaunch"))) return fake_error(cudaErrorInvalidValue);
    if (stream) fake_join(stream, 0);
    for (o = g->ops; o; o = o->next) {
        if (o->kind == FAKE_OP_MEMSET) fake_set(o->p, o->v, o->n, "a graph's memset node");
        else if (o->kind == FAKE_OP_HEADER) fake_write_header(o->buf, o->h[0], o->h[1], o->h[2], o->count);
        else o->fn(o->data);
    }
    return cudaSuccess;
}

static cudaError_t fake_graph_destroy(const void *x, int exec, const char *call)
{
    fake_graph *g;
    FAKE_ENTER(call);
    if (!(g = fake_graph_of(x, exec, call))) return fake_error(cudaErrorInvalidValue);
    fake_graph_drop(g);
    return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) { return fake_graph_destroy(exec, 1, "cudaGraphExecDestroy"); }
cudaError_t cudaGraphDestroy(cudaGraph_t graph) { return fake_graph_destroy(graph, 0, "cudaGraphDestroy"); }
