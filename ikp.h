/* ikp.h - v0.14.0 - IKP intra-kernel profiler, host library - MIT licence (end of file)

   IKP records timestamps inside running CUDA kernels (see ikp_cuda.cuh) and
   turns the buffer into a Chrome/Perfetto trace and statistics. This file is
   the host half: buffer allocation, decoding of IKP's own wire format and of
   the TIRx/warpscope, flashinfer, Triton-distributed and transformer_nuggets
   formats and of Triton Proton's and NVIDIA IKET's trace files, Chrome JSON
   and Perfetto protobuf writers (flows, counter
   tracks), summary statistics, a diff of two captures with a verdict that
   accounts for noise, a report (Markdown and an SVG picture), and merged
   timelines of several GPUs on one clock. It is plain C99 and needs nothing
   but libc; the optional ikp_cuda_* helpers need the CUDA runtime (below).

   QUICK START
       Do this:
           #define IKP_IMPLEMENTATION
       before you include this file in *one* C or C++ file. Other files
       include it without the define.

       Decode a buffer already on the host (any compiler, no CUDA needed;
       tests/test_snippets.py compiles these lines as C and C++):
           int decode(const uint64_t *words, size_t num_words)
           {
               ikp_decode_options opts;
               ikp_capture *cap = NULL;
               ikp_stats *st = NULL;
               ikp_error err;
               memset(&opts, 0, sizeof opts);         // all-zero: the defaults
               if (ikp_capture_open(words, num_words, &opts, &cap, &err) != IKP_OK) {
                   fprintf(stderr, "%s\n", err.message); // says what and where
                   return 1;
               }
               ikp_write_chrome_path(cap, NULL, "trace.json", &err);
               if (ikp_stats_compute(cap, &st, &err) == IKP_OK) {
                   ikp_stats_write_text(st, ikp_file_writer, stdout, &err);
                   ikp_stats_free(st);
               }
               ikp_capture_free(cap);
               return 0;
           }
       ikp_capture_open_path(path, ...) reads a file instead: an .ikp capture, a
       bare buffer (raw little-endian words) or a NumPy .npy array.

       Build: a decoder needs nothing but libc (cc -std=c99 decode.c); the
       CUDA helpers below are compiled when nvcc compiles the file
       (nvcc -O2 app.cu: it links the CUDA runtime itself), or by any C
       compiler with -DIKP_CUDA and -lcudart.

       Profile (k is the kernel of ikp_cuda.cuh's quick start, whose
       opening comment shows how to instrument one; tests/test_snippets.py
       compiles both quick starts in one file):
           void profile(float *x, dim3 grid, dim3 block, cudaStream_t stream)
           {
               const char *names[] = {"load", "math", "done"};
               ikp_cuda_buffer buf;
               ikp_dump_desc d;
               ikp_cuda_buffer_create(&buf, grid.x * (block.x / 32), 1024, NULL); // a lane a warp
               ikp_cuda_buffer_reset(&buf, stream, NULL);
               k<<<grid, block, 0, stream>>>(x, buf.device);
               memset(&d, 0, sizeof d);
               d.trace_path = "trace.json";
               d.summary = stdout;
               d.decode.event_names = names;
               d.decode.num_event_names = 3;
               ikp_cuda_dump(&buf, stream, &d, NULL);   // download, decode, write
               ikp_cuda_buffer_destroy(&buf);
           }

   CONVENTIONS
       - Every call that can fail returns an ikp_result (IKP_OK = 0) and
         takes an ikp_error * last: NULL is allowed; when given, it is filled
         on failure with a message naming what and where (byte offset,
         lane). Nothing prints, exits or keeps global state.
       - Options are structs whose all-zero value means the defaults; a NULL
         options pointer is the same as all-zero.
       - Inputs: words (a buffer on the host), _data (a file's contents in
         memory), _path (a file name). Outputs: a callback (ikp_write_fn,
         with ikp_file_writer for a FILE *), _file (a FILE *), _path (a file
         written whole through a temporary and a rename, or not at all).
       - What a call returns in *out is freed by its _free; memory comes
         from the capture's allocator (ikp_decode_options.allocator).
       - Strings are UTF-8; every writer escapes what its format needs.

   INDEX (one line a call; the declarations below say the rest)
       Open and free a capture:
           ikp_capture_open, _open_data, _open_path, ikp_capture_free
       Read it: ikp_capture_get_info, ikp_capture_lane, ikp_decode_lane,
           ikp_lane_events_free, ikp_event_name, ikp_event_id,
           ikp_group_name, ikp_capture_placement, ikp_capture_stale,
           ikp_capture_clock, ikp_capture_host_zero, ikp_capture_device,
           ikp_device_text, ikp_capture_peers, ikp_capture_sm_clock
       Traces: ikp_write_chrome, _chrome_file, _chrome_path,
           ikp_write_perfetto, _perfetto_file, _perfetto_path,
           ikp_is_perfetto_path, ikp_file_writer
       Several captures on one clock: ikp_merge_align, ikp_merge_align_start,
           ikp_merge_labels, ikp_merge_host_zero,
           ikp_write_merged, ikp_write_merged_path, ikp_write_merged_zip
       Statistics: ikp_stats_compute, ikp_stats_free, ikp_stats_write_text,
           ikp_stats_write_json, ikp_info_write_text
       Compare two captures: ikp_diff_compute, ikp_diff_free,
           ikp_diff_slower_than, ikp_diff_incomplete, ikp_diff_write_text,
           _write_json, _write_markdown, ikp_verdict_name
       Explain one: ikp_report_compute, ikp_report_free,
           ikp_report_write_markdown, _write_json, _write_svg,
           ikp_is_wait_name
       Save a capture: ikp_capture_write, _write_file, _write_path
       A table for query engines (Parquet): ikp_export_parquet,
           ikp_export_parquet_files
       Names: ikp_format_name, ikp_format_from_name, ikp_result_string
       Files written safely: ikp_output_open, ikp_output_write,
           ikp_output_end (or ikp_output_commit, ikp_output_abort),
           ikp_output_temp_path
       Tool support (what tools/ikp.c needs beyond the calls above; stable,
           but most programs need none of it): ikp_name_list_parse,
           ikp_name_list_parse_path, ikp_name_list_free (--names a,b or
           @file), ikp_info_write_text (ikp info), ikp_is_perfetto_path (the format
           from a file name), ikp_format_from_name (--format),
           ikp_option_names (messages in the tool's flags)
       Buffers without the CUDA helpers: ikp_buffer_words,
           ikp_buffer_header, ikp_dump_words
       CUDA helpers (nvcc, or IKP_CUDA): ikp_cuda_buffer_create, _reset,
           _download, _destroy, ikp_cuda_dump, ikp_cuda_device_id,
           ikp_cuda_clock_reading, ikp_cuda_peer_clock
       GUIDE.md "The host library" has the same by task, with examples.

   CONFIGURATION (define before including the implementation)
       IKP_DEF            linkage of the API (default: extern)
       IKP_STATIC         make the whole API static to the including file
       IKP_MALLOC, IKP_REALLOC, IKP_FREE
                          default allocator (all three or none; default libc);
                          a run-time allocator goes in ikp_decode_options
       IKP_NO_REPORT      leave out diff and report (ikp_diff_*, ikp_report_*:
                          the largest layer)
       IKP_NO_PERFETTO    leave out the Perfetto writer (ikp_write_perfetto*;
                          a path ending in .pftrace is then refused)
       IKP_NO_MERGE       leave out merged timelines (ikp_merge_*,
                          ikp_write_merged*; and with them the export)
       IKP_NO_EXPORT      leave out the Parquet export (ikp_export_*)
                          Compiling the implementation: IKP_NO_MERGE and
                          IKP_NO_REPORT save the most; with IKP_NO_PERFETTO
                          the three take about half of it away (BENCHMARKS.md
                          "Host decode and export", measured); the core
                          (capture, decode, stats, the Chrome JSON writer) is
                          the rest.
       IKP_CUDA           compile the ikp_cuda_* helpers (needs
                          <cuda_runtime_api.h> and -lcudart). They are on by
                          themselves when nvcc compiles the file (__CUDACC__)
                          and off otherwise, so a plain C/C++ build never
                          needs the CUDA runtime.
       IKP_NO_CUDA        never compile them, even under nvcc
       IKP_SM_CLOCK_EVERY_NS
                          how often ikp_cuda_buffer_download samples the SM
                          clocks while the kernel runs (default 25000; the
                          buffer's sample_every_ns can change it, 0: never)
       IKP_REALTIME_NS()  the host clock (CLOCK_REALTIME, ns, int64_t) of
                          the CUDA helpers' clock readings, waits and sample
                          intervals (default: clock_gettime); a test gives
                          one it controls

   VERSIONS
       ikp.h and ikp_cuda.cuh carry the same version; including both of
       different versions in one file is a compile error. Copy both headers
       from one release.

   CONTENTS
       Each section opens with a comment line that holds ">>", its tag, a
       colon and what the section holds. The list below is the tags in
       file order; grep -n '^/\* >>' ikp.h prints it with line numbers
       (">>" followed by a space is C's shift operator, never a tag).
       Declarations come first, each section tagged by its topic; then the
       implementation, each section tagged by the topic it implements, a
       dash and its part (-impl: the topic's calls, or the whole topic),
       so a search for ">>" and a topic finds the topic's declarations,
       then each part of its implementation. Both halves go layer by layer,
       each layer using only those above it: base, capture, decode, stats,
       trace, output, merge, export, diff and report, capture files, names,
       dump, cuda. (The capture file layout is in the base: the format
       detection and the SM clock samples read it too.)
       Declarations:
         base
           config              version, linkage (IKP_DEF), the CUDA switch
           wire                wire format constants, shared with ikp_cuda.cuh
           errors              results and errors
           buffer              the output callback of every writer; one for a FILE*
         capture
           capture             opening a capture: formats, options, figures, lanes
         decode
           decode              per-lane decode into events
         stats
           stats               statistics per event and group; text, JSON
         trace
           trace               traces (Chrome JSON, Perfetto): format, options
         output
           output              output files replaced whole or not at all
         merge
           merge               merged timelines: captures on one clock
         export
           export              Parquet export of captures' regions and instants
         diff and report
           diff                diff of two captures: verdicts, tests, writers
           report              report of one capture: stages, pipeline, picture
         capture files
           capfile             capture files (.ikp) written (ikp_capture_open_path reads them)
         names
           names               name lists (--names a,b or a file)
         dump
           dump                one call: words to trace, capture and summary
         cuda
           cuda                CUDA helpers: buffers, clock readings
       Implementation:
         base
           config-impl         includes, default allocator, internal limits
           config-alloc        allocation: default and run-time allocators
           errors-impl         results and errors
           buffer-impl         buffered output under every writer; numbers, JSON strings
           capfile-layout      capture file layout: magics, field offsets
         capture
           capture-types       a lane, its records and their time; the capture
           capture-formats     the input formats, one row each
           capture-records     a record word decoded; the cursor over a lane
           capture-walk        a lane's walk: stamps, anchors, segments
           capture-sm          one mapping per SM from cycles to time
           capture-names       names copied from the API; ikp_capture_free
           capture-clock       clocks: host, device, peer GPUs, SM samples
           capture-ikp         IKP buffers
           capture-peer        the peer formats' common parts
           capture-tirx        tirx (TVM TIRx CudaProfiler, warpscope)
           capture-flashinfer  flashinfer (profiler.cuh)
           capture-triton      triton-dist (triton_dist.tools.profiler)
           capture-nuggets     transformer_nuggets: a slice of words per unit
           capture-lanes       lanes made from the words; what a file's bytes are
           capture-open        opening words: format, lanes, time 0
           capture-files       opening files: .npy, bare buffers, paths (.ikp: capfile-read)
           capture-proton      Triton Proton's Chrome trace, read into IKP words
           capture-iket        NVIDIA IKET's trace.json, read into IKP words
           capture-query       a capture's figures, placement, lanes, names
         decode
           decode-impl         per-lane decode
         stats
           stats-impl          statistics computed
           stats-write         statistics and figures as text and JSON
         trace
           trace-names         names of events, blocks, processes, threads
           trace-walk          the walk over lanes by block: flows, counters
           trace-chrome        the Chrome JSON writer
           trace-perfetto      the Perfetto protobuf writer
         output
           output-impl         output files; the writers to a path
         merge
           merge-links         what links captures; a capture given twice
           merge-graph         a merge's links as lists, without its pairs
           merge-place         placement: least uncertain chains (Dijkstra)
           merge-check         links that disagree with the placement
           merge-impl          ikp_merge_align, _align_start, labels, host zero
           merge-pairs         how far two placed captures may be off against each other
           merge-write         the merged trace: ikp_write_merged
           merge-zip           a ZIP of one trace a capture and a Perfetto manifest
         export
           export-parquet      Parquet written here: Thrift, pages, footer
           export-rows         one capture's rows
           export-impl         the table: captures placed, rows written
         diff and report
           report-analysis     one walk for statistics, diff and report
           diff-verdict        verdicts: tests of a change, the rule
           diff-compute        ikp_diff_compute and its sections
           diff-write          a diff as text and JSON
           diff-markdown       Markdown, link and XML escapes; a diff in Markdown
           report-compute      ikp_report_compute and its sections
           report-markdown     a report in Markdown
           report-json         a report as JSON
           report-svg          a report's picture as SVG
         capture files
           capfile-read        capture files (.ikp) read: header, names, sections
           capfile-write       capture files (.ikp) written
         names
           names-impl          name lists parsed
         dump
           dump-impl           IKP buffer sizes and headers; the one-call dump
         cuda
           cuda-impl           CUDA helpers: buffers, clocks, SM clock samples

   The library never prints, never exits, and keeps no mutable global state:
   a capture is read-only once opened, so any number of threads may decode
   different (or the same) captures at once. Numbers are written the same
   whatever the C locale.
*/
#ifndef IKP_H
#define IKP_H

/* >>config: version, linkage (IKP_DEF), the CUDA switch */
#define IKP_VERSION_MAJOR 0
#define IKP_VERSION_MINOR 14
#define IKP_VERSION_PATCH 0
#define IKP_VERSION_STRING "0.14.0"
#if defined(IKP_CUDA_VERSION_MAJOR) && (IKP_CUDA_VERSION_MAJOR != IKP_VERSION_MAJOR || \
    IKP_CUDA_VERSION_MINOR != IKP_VERSION_MINOR || IKP_CUDA_VERSION_PATCH != IKP_VERSION_PATCH)
#error "ikp.h and ikp_cuda.cuh are from different IKP versions: copy both headers from one release"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifndef IKP_DEF
#ifdef IKP_STATIC
#if defined(__GNUC__)
#define IKP_DEF static __attribute__((unused)) /* no warning for the calls a file does not make */
#else
#define IKP_DEF static
#endif
#else
#define IKP_DEF extern
#endif
#endif

#ifndef IKP_SM_CLOCK_EVERY_NS
#define IKP_SM_CLOCK_EVERY_NS 25000u
#endif

/* CUDA helpers: under nvcc, or asked for with IKP_CUDA; never with IKP_NO_CUDA */
#if !defined(IKP_NO_CUDA) && (defined(IKP_CUDA) || defined(__CUDACC__))
#define IKP_HAS_CUDA 1
#else
#define IKP_HAS_CUDA 0
#endif
#if IKP_HAS_CUDA
#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic" /* the CUDA headers use unnamed unions */
#endif
#include <cuda_runtime_api.h>
#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC diagnostic pop
#endif
#endif

/* >>wire: wire format constants, shared with ikp_cuda.cuh */
/* Kept identical in ikp_cuda.cuh (tests/sass/check_sass.py checks it). */
#ifndef IKP_WIRE_DEFINED
#define IKP_WIRE_DEFINED
#define IKP_WIRE_MAGIC 0x31504B49u        /* "IKP1", buffer word 0 bits 0..31 */
#define IKP_WIRE_VERSION 1u               /* buffer word 0 bits 32..47 */
#define IKP_WIRE_HEADER_WORDS 8u          /* buffer header size in words */
#define IKP_WIRE_LANE_WORDS 8u            /* lane header size in words */
#define IKP_WIRE_SINK_SLOTS 1u            /* slots after the C record slots: the overflow sink */
#define IKP_WIRE_LANE_MAGIC 0x4C41u       /* lane word 0 bits 0..15 */
#define IKP_WIRE_LANE_CYCLES 0x1u         /* lane flag: records stamp SM cycles */
#define IKP_WIRE_LANE_RING 0x2u           /* lane flag: ring buffer (newest kept) */
#define IKP_WIRE_LANE_PAIRS 0x4u          /* with RING: pairs of slots; zero words are pads */
#define IKP_WIRE_LANE_TICKS 0x8u          /* lane flag: begin tags carry globaltimer ticks (read at the end before) */
#define IKP_WIRE_LANE_ITICKS 0x10u        /* lane flag (with TICKS): instant tags carry them too */
#define IKP_WIRE_TICKS_SHIFT 16u          /* ... in tag bits 16..29: */
#define IKP_WIRE_TICKS_MASK 0x3FFFu
#define IKP_WIRE_TICK_NS_SHIFT 5u         /* %globaltimer bits 5..18 (32 ns ticks) */
#define IKP_WIRE_FINALIZED (1ull << 63)   /* lane word 7: lane closed */
#define IKP_WIRE_KIND_DATA 0u             /* record kinds, tag bits 0..1 */
#define IKP_WIRE_KIND_BEGIN 1u
#define IKP_WIRE_KIND_END 2u
#define IKP_WIRE_KIND_INSTANT 3u
#define IKP_WIRE_DATA_MARK 0x80000000u    /* tag bit 31: set on data records */
#define IKP_WIRE_ANCHOR 0x40000000u       /* tag bit 30, on data records: an anchor half */
#define IKP_WIRE_MAX_EVENTS 16384u        /* event ids 0..16383, tag bits 2..15 */
#define IKP_WIRE_KIND_MASK 0x3u           /* tag bits 0..1: the kind */
#define IKP_WIRE_EVENT_SHIFT 2u           /* tag bits 2..15: the event id */
#define IKP_WIRE_EVENT_MASK 0x3FFFu
#define IKP_WIRE_AUTO_ANCHOR_ID 2u        /* anchor records of this id and above: automatic anchors */
#define IKP_WIRE_AUTO_WIDTH_MAX 0x3FFDu   /* their id minus 2: cycles between the reads around the tick */
#define IKP_WIRE_AUTO_DELTA_SHIFT 16u     /* their tag bits 16..29: cycles after the previous stamp */
#define IKP_WIRE_AUTO_DELTA_MAX 0x3FFFu
#define IKP_WIRE_LANE_FLAGS_SHIFT 16u     /* lane word 0 bits 16..23: the lane flags */
#define IKP_WIRE_TAG(event, kind) ((((unsigned)(event) & IKP_WIRE_EVENT_MASK) << IKP_WIRE_EVENT_SHIFT) | (kind))
#endif
#if IKP_WIRE_VERSION != 1
#error "ikp.h reads IKP wire format version 1; an ikp_cuda.cuh of another version was included first"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>errors: results and errors */
typedef enum ikp_result {
    IKP_OK = 0,
    IKP_ERR_INVALID_ARGUMENT, /* a NULL or out-of-range argument */
    IKP_ERR_OUT_OF_MEMORY,
    IKP_ERR_EMPTY,            /* no data at all */
    IKP_ERR_TRUNCATED,        /* data ends before what its header claims */
    IKP_ERR_BAD_MAGIC,        /* not an IKP buffer or capture file (or never initialised) */
    IKP_ERR_BAD_VERSION,      /* a newer format version */
    IKP_ERR_BAD_HEADER,       /* a header field out of range */
    IKP_ERR_SIZE_OVERFLOW,    /* sizes that overflow 64-bit arithmetic */
    IKP_ERR_UNKNOWN_FORMAT,   /* auto-detection found no format */
    IKP_ERR_BAD_NAMES,        /* malformed name list */
    IKP_ERR_IO,               /* a file could not be read or written */
    IKP_ERR_WRITE,            /* an output callback failed */
    IKP_ERR_CUDA,             /* a CUDA runtime call failed */
    IKP_ERR_NO_CUDA,          /* built without the CUDA runtime */
    IKP_RESULT_COUNT
} ikp_result;

/* Where a failure was found: byte offset in the input and/or lane, -1 if n/a. */
typedef struct ikp_error {
    ikp_result code;
    int64_t offset;
    int64_t lane;
    char message[256];
} ikp_error;

IKP_DEF const char *ikp_result_string(ikp_result r);

/* >>buffer: the output callback of every writer; one for a FILE* */
/* Output callback: returns 0 on success, non-zero to stop with IKP_ERR_WRITE. */
typedef int (*ikp_write_fn)(void *user, const void *data, size_t size);
/* A ready callback for a FILE* passed as user. */
IKP_DEF int ikp_file_writer(void *user, const void *data, size_t size);

/* >>capture: opening a capture: formats, options, figures, lanes */
typedef enum ikp_format {
    IKP_FORMAT_AUTO = 0,
    IKP_FORMAT_IKP,
    IKP_FORMAT_TIRX,       /* TVM TIRx CudaProfiler / warpscope */
    IKP_FORMAT_FLASHINFER, /* flashinfer profiler.cuh */
    IKP_FORMAT_TRITON_DIST,/* Triton-distributed triton_dist.tools.profiler */
    IKP_FORMAT_NUGGETS,    /* transformer_nuggets CuTe DSL profiler, 4-word records */
    IKP_FORMAT_NUGGETS_COMPACT, /* transformer_nuggets, compact 1-word records */
    IKP_FORMAT_PROTON,     /* Triton Proton's Chrome trace (.chrome_trace JSON): files only */
    IKP_FORMAT_IKET,       /* NVIDIA IKET's trace (iket_pid_*.trace.json): files only */
    IKP_FORMAT_COUNT
} ikp_format;

/* The sane window of an SM clock, for header clocks and cycles_per_ns:
   50 MHz .. 20 GHz. Values outside it are rejected, not used. */
#define IKP_MIN_CYCLES_PER_NS 0.05
#define IKP_MAX_CYCLES_PER_NS 20.0
/* Names (from files or the API): at most this many bytes each, and at most
   IKP_WIRE_MAX_EVENTS names per list. */
#define IKP_MAX_NAME_BYTES 255u

IKP_DEF const char *ikp_format_name(ikp_format f);
/* "auto", "ikp", "tirx", "flashinfer", "triton-dist", "nuggets",
   "nuggets-compact", "proton", "iket" -> format; IKP_FORMAT_COUNT if unknown */
IKP_DEF ikp_format ikp_format_from_name(const char *name);

/* One reading of a GPU's %globaltimer against the host's CLOCK_REALTIME:
   at the moment the GPU read gpu_ns, the host clock read host_ns, to within
   uncertainty_ns either way (for a reading taken by a ping through mapped
   host memory: half the best round trip). Given in ikp_decode_options.clock
   and kept in capture files. */
typedef struct ikp_clock_sync {
    int64_t host_ns;                /* CLOCK_REALTIME, ns since the Unix epoch */
    uint64_t gpu_ns;                /* %globaltimer, ns */
    uint32_t uncertainty_ns;
    uint32_t reserved;              /* 0 */
} ikp_clock_sync;
/* At most this many readings per capture. */
#define IKP_MAX_CLOCK_SYNCS 1024u

/* Which GPU a capture comes from: given in ikp_decode_options.device (the
   CUDA helpers fill it), kept in capture files. Merging tells GPUs apart
   by uuid and trusts host readings between captures of one host. */
typedef struct ikp_device_id {
    uint8_t uuid[16];               /* the GPU's UUID (cudaDeviceProp.uuid); all zero: unknown */
    char host[64];                  /* host name, NUL-terminated; "": unknown */
    int32_t ordinal;                /* CUDA device number in the writing process; -1: unknown */
    int32_t rank;                   /* the program's rank (MPI, NCCL, ...); -1: none */
    uint32_t pci_domain, pci_bus, pci_device;
    uint32_t reserved;              /* 0 */
} ikp_device_id;

/* One measurement of another GPU's %globaltimer against this capture's
   GPU: when this GPU's clock read gpu_ns, the peer's read gpu_ns +
   offset_ns, to within uncertainty_ns either way (over peer memory: half
   the best round trip of a ping-pong; through the host: the two GPUs'
   host readings' uncertainties added). Given in ikp_decode_options.peers,
   kept in capture files, used by ikp_merge_align. */
typedef struct ikp_peer_clock {
    uint8_t peer_uuid[16];          /* the other GPU */
    uint64_t gpu_ns;                /* this GPU's %globaltimer */
    int64_t offset_ns;              /* peer clock minus this clock */
    uint32_t uncertainty_ns;
    uint32_t round_trip_ns;         /* the best round trip over peer memory; 0: through the host */
} ikp_peer_clock;
/* At most this many peer measurements per capture. */
#define IKP_MAX_PEER_CLOCKS 1024u

/* One sample of an SM's clocks: a %globaltimer tick on SM sm and the
   %clock64 cycle at which it came, located between two back-to-back reads
   of both, so the two name one instant to within a few cycles. The CUDA
   helpers take them on every SM while the kernel runs
   (ikp_cuda_buffer_download); cycle lanes of that SM are then mapped
   piecewise through the samples within their span, which keeps them on
   the globaltimer axis while their SM clock changes speed. */
typedef struct ikp_sm_clock {
    uint64_t gpu_ns;                /* %globaltimer */
    uint64_t cycles;                /* %clock64 of that SM */
    uint32_t sm;                    /* %smid */
    uint32_t reserved;              /* 0 */
} ikp_sm_clock;
/* At most this many SM clock samples per capture. */
#define IKP_MAX_SM_CLOCKS (1u << 22)

/* A run-time allocator: all three functions, or none (all NULL: the
   default); one that sets only some is refused (IKP_ERR_INVALID_ARGUMENT). */
typedef struct ikp_allocator {
    void *(*alloc)(size_t size, void *user);
    void *(*realloc)(void *ptr, size_t size, void *user);
    void (*free)(void *ptr, void *user);
    void *user;
} ikp_allocator;

/* How the caller spells the options that the library's messages and texts
   ask for ("pass num_units", "keep_after_finalize keeps them"): a
   command-line tool gives its flags. A NULL member: the option's own name
   (the member of ikp_decode_options, or ikp_merge_options for align_start).
   The strings must outlive the captures opened with them. */
typedef struct ikp_option_names {
    const char *format, *num_units, *timer_unit_ps, *keep_after_finalize, *align_start;
} ikp_option_names;

/* All-zero means: auto-detect, default names, default allocator. Set it
   with memset(&o, 0, sizeof o) (compiles as C and C++). */
typedef struct ikp_decode_options {
    ikp_format format;
    const char *const *event_names; /* name of event id i; NULL entries allowed; each
                                       at most IKP_MAX_NAME_BYTES, at most
                                       IKP_WIRE_MAX_EVENTS names (else IKP_ERR_BAD_NAMES) */
    uint32_t num_event_names;
    const char *const *group_names; /* name of group i; same limits */
    uint32_t num_group_names;
    ikp_allocator allocator;
    double cycles_per_ns;           /* cycle lanes: force this rate (0 = from anchors);
                                       else within IKP_MIN/MAX_CYCLES_PER_NS */
    int keep_after_finalize;        /* tirx: also decode a lane's records after its
                                       finalize record (stale records of an earlier
                                       launch, when the buffer was not zeroed); they
                                       are counted in after_finalize either way */
    uint32_t num_units;             /* nuggets formats: units (slices) in the buffer; the
                                       buffer does not say. 0 = infer from the data */
    uint32_t timer_unit_ps;         /* peer formats: picoseconds per timer tick (0 = 1000,
                                       globaltimer ns; 10000 for the 10 ns stamps of
                                       Triton-distributed's AMD captures) */
    const ikp_clock_sync *clock;    /* the GPU's clock against the host's (copied; given
                                       here, they replace those of a capture file) */
    uint32_t num_clock;             /* at most IKP_MAX_CLOCK_SYNCS */
    const ikp_device_id *device;    /* the GPU (copied; given here, it replaces a file's) */
    const ikp_peer_clock *peers;    /* other GPUs' clocks against this one (copied; given
                                       here, they replace a file's) */
    uint32_t num_peers;             /* at most IKP_MAX_PEER_CLOCKS */
    const ikp_sm_clock *sm_clock;   /* samples of the SM clocks (copied; given here, they
                                       replace a file's) */
    uint32_t num_sm_clock;          /* at most IKP_MAX_SM_CLOCKS */
    const ikp_option_names *option_names; /* how messages name options (copied; NULL:
                                       their own names) */
    const char *gpu_name;           /* Proton traces: the GPU that counted their cycles
                                       ("h200", "NVIDIA H100", ...): its boost clock reads
                                       them when cycles_per_ns is 0 */
} ikp_decode_options;

#define IKP_NO_SM 0xFFFFFFFFu

enum {
    IKP_LANE_STARTED = 1u << 0,   /* the lane was opened by a kernel */
    IKP_LANE_FINALIZED = 1u << 1, /* the lane was closed (end anchors and counts valid) */
    IKP_LANE_CYCLES = 1u << 2,    /* records stamp SM cycles (else ns) */
    IKP_LANE_RING = 1u << 3,      /* ring mode: dropped = oldest records overwritten */
    IKP_LANE_CORRUPT = 1u << 4,   /* lane header unreadable; lane skipped */
    IKP_LANE_DUPLICATE = 1u << 5  /* another lane (duplicate_of) claims the same (block,
                                     group): shown on tracks of its own, not merged */
};

typedef struct ikp_lane_info {
    uint32_t block, group, sm;    /* sm = IKP_NO_SM when unknown */
    uint32_t flags;               /* IKP_LANE_* */
    uint64_t records;             /* records present in the buffer (anchors included) */
    uint64_t anchors;             /* of those, anchors (automatic and IKP_ANCHOR halves) */
    uint64_t dropped;             /* records the device could not keep */
    uint64_t invalid;             /* records that could not be decoded (skipped) */
    uint64_t backwards;           /* records stamped earlier than the one before */
    uint64_t after_finalize;      /* tirx: records after the lane's finalize record */
    uint64_t past_count;          /* nuggets atomic mode: records in slots past the unit's
                                     count (stale records of an earlier launch; left out) */
    int64_t first_ps, last_ps;    /* earliest / latest record, ps after capture start
                                     (INT64_MIN when the lane has no timed record) */
    double cycles_per_ns;         /* cycle lanes: rate used to place them */
    uint32_t duplicate_of;        /* IKP_LANE_DUPLICATE: the first lane of that (block, group) */
    uint32_t placement_ns;        /* ikp lanes: how far a record may lie off the capture's ns
                                     axis, at most (estimated; ikp_capture_info.cross_sm_ns) */
    uint64_t reading_gap_ns;      /* cycle lanes: the longest distance of a record from the
                                     lane's nearest clock reading (anchor or SM clock sample) */
} ikp_lane_info;

typedef struct ikp_capture ikp_capture;

/* Opens a buffer of little-endian 64-bit words. The words are borrowed and
   must outlive the capture. Names are copied. */
IKP_DEF ikp_result ikp_capture_open(const uint64_t *words, size_t num_words,
                                    const ikp_decode_options *opt, ikp_capture **out,
                                    ikp_error *err);
/* Opens the contents of a file in memory: an .ikp capture file or a bare
   buffer (raw little-endian words). Data are copied. Names given in opt win
   over names stored in the file. */
IKP_DEF ikp_result ikp_capture_open_data(const void *data, size_t size,
                                         const ikp_decode_options *opt,
                                         ikp_capture **out, ikp_error *err);
/* Reads and opens a file: an .ikp capture, a bare buffer or a NumPy .npy
   array of little-endian uint64/int64. Only regular files are read (a FIFO,
   a device or a directory is refused at once), with one allocation of the
   file's size that the capture keeps: no second copy of the words. */
IKP_DEF ikp_result ikp_capture_open_path(const char *path, const ikp_decode_options *opt,
                                         ikp_capture **out, ikp_error *err);
IKP_DEF void ikp_capture_free(ikp_capture *cap);

typedef struct ikp_capture_info {
    ikp_format format;
    uint32_t num_lanes;           /* lanes the buffer has room for */
    uint32_t active_lanes;        /* lanes with a started header or records */
    uint32_t num_blocks, num_groups;
    uint32_t grid[3];             /* grid dimensions when the format records them, else 0 */
    uint64_t records, dropped, invalid, backwards;
    uint64_t anchors;             /* records that are anchors (part of records) */
    uint64_t unfinalized_lanes;   /* lanes opened but never closed (kernel died?) */
    uint64_t corrupt_lanes;       /* lane headers that could not be read */
    uint64_t refused_lanes;       /* lanes the device found no room for */
    uint64_t lanes_needed;        /* lanes the grid needed when some were refused */
    uint64_t claimed_twice;       /* lanes opened twice: buffer not reset, or two leaders
                                     (ikp_capture_stale says what that means) */
    uint64_t launch;              /* ikp buffers: the reset that prepared it, counted per
                                     buffer from 1 (a CUDA graph's replays count up);
                                     0: not known (a buffer of another writer) */
    uint64_t out_of_range;        /* peer formats: records naming a lane past the header */
    uint64_t after_finalize;      /* tirx: records after their lane's finalize record
                                     (left out unless keep_after_finalize) */
    uint64_t past_count;          /* nuggets atomic mode: records in slots past their unit's
                                     count word (stale records of an earlier launch; left out) */
    uint64_t duplicate_lanes;     /* lanes whose (block, group) an earlier lane claims */
    uint64_t bad_sm_lanes;        /* lanes whose header names an SM past 65,535 (%smid is under
                                     1,024 on every GPU): their SM taken as unknown (IKP_NO_SM) */
    int64_t span_ps;              /* earliest to latest record */
    int timer_cycles;             /* 1 if any lane stamps cycles */
    int drops_known;              /* 1 if the format counts dropped records (ikp);
                                     peer formats cannot: dropped is then 0 and means n/a */
    int after_finalize_kept;      /* 1 if keep_after_finalize decoded those records */
    /* auto-detection between peer formats: records weighed and, of those,
       how many fit each format (detect_fit[IKP_FORMAT_TIRX]...). All zero
       when the format was given or is found by its magic. */
    uint64_t detect_records;
    uint64_t detect_fit[IKP_FORMAT_COUNT];
    int detect_tie;               /* another format fits as well: the choice is a guess */
    int units_inferred;           /* nuggets: the number of units was inferred (num_blocks) */
    uint32_t unit_words;          /* nuggets: words per unit (slice) */
    uint64_t may_wrap;            /* nuggets-compact: regions whose 24-bit duration may
                                     have wrapped (flagged IKP_EVENT_MAY_WRAP) */
    uint32_t timer_unit_ps;       /* peer formats: ps per timer tick used */
    int gpu_time_known;           /* 1 if the GPU time of time 0 is known (ikp format; nuggets
                                     formats, whose stamps are %globaltimer ns) */
    uint64_t gpu_zero_ns;         /* then: %globaltimer at time 0, whole ns ... */
    uint32_t gpu_zero_ps;         /* ... plus these ps (0 .. 999) */
    uint32_t clock_syncs;         /* readings of the GPU clock against the host's */
    int host_time_known;          /* 1 if time 0 is known on the host clock: */
    int64_t host_zero_ns;         /* CLOCK_REALTIME at time 0 (ikp_capture_host_zero) */
    uint32_t host_zero_uncertainty_ns;
    int device_known;             /* 1 if the capture names its GPU (ikp_capture_device) */
    uint32_t peer_clocks;         /* measurements of other GPUs' clocks (ikp_capture_peers) */
    uint32_t sm_clocks;           /* samples of the SM clocks (ikp_capture_sm_clock) */
    uint32_t sm_clock_sms;        /* the SMs they cover */
    uint32_t sampled_lanes;       /* cycle lanes placed through at least one of them */
    /* How well lanes of different SMs line up: two records of one moment may
       be placed up to cross_sm_ns apart (an estimate from the capture's own
       clock readings: README "Limits"; 0 when not known), resting on
       placement (IKP_PLACED_*). The lane placed worst and its longest
       distance from a clock reading: */
    uint32_t cross_sm_ns;
    int placement;
    uint32_t worst_lane;
    uint64_t reading_gap_ns;
    int sm_exact;                 /* 1 if the cycle lanes of one SM share one mapping (all its
                                     readings): their records keep cycle order and distance */
    uint32_t readings_left_out;   /* SM clock readings left out of the mapping: they contradict
                                     the readings around them beyond their widths (the placement
                                     stated for their SM's lanes then covers the disagreement) */
    uint32_t speed_changes;       /* places where an SM's mapping changes its rate: its readings
                                     show the SM clock change speed there (or contradict each other) */
    ikp_option_names option_names; /* as given to the open: how this capture's texts
                                      name options */
    char source[512];             /* what IKP read the capture from when it converted it (a
                                     Proton trace: its kernels, the rate its cycles were read
                                     at and where that came from, how its CTAs are placed);
                                     empty otherwise */
} ikp_capture_info;

/* what ikp_capture_info.cross_sm_ns rests on */
#define IKP_PLACED_UNKNOWN 0     /* a peer format's own stamps: not mapped by IKP */
#define IKP_PLACED_GLOBALTIMER 1 /* %globaltimer stamps: one clock on every SM, one tick apart */
#define IKP_PLACED_SAMPLES 2     /* cycle lanes, some placed through SM clock samples */
#define IKP_PLACED_ANCHORS 3     /* cycle lanes placed by their anchors only */
/* placement worse than this (ns) is warned about */
#define IKP_PLACEMENT_POOR_NS 200u

/* the capture's figures (named _get_info: ikp_capture_info is the type) */
IKP_DEF const ikp_capture_info *ikp_capture_get_info(const ikp_capture *cap);
/* One line (no newline) saying how well a capture's lanes line up across
   SMs and what that rests on (ikp_capture_info.cross_sm_ns, placement):
   the text `ikp info`, traces and reports show. With poor not NULL, *poor
   is 1 when the placement is worse than IKP_PLACEMENT_POOR_NS, and the
   text then ends with what to do about it. Returns the text's length (it
   is cut to size - 1 bytes). */
IKP_DEF size_t ikp_capture_placement(const ikp_capture_info *info, char *text, size_t size, int *poor);
/* One line (no newline) when some of a capture's records may not be its
   launch's: lanes that a launch found already open (claimed_twice), so
   that the buffer holds an earlier launch's records for them (not reset
   since; in a CUDA graph, a replay of a kernel without the reset), or two
   leaders shared a lane. Every output shows it (info, summary, traces,
   report). Returns its length (cut to size - 1 bytes); 0, an empty text,
   when there is nothing to say. */
IKP_DEF size_t ikp_capture_stale(const ikp_capture_info *info, char *text, size_t size);
/* Fills *out for one lane (lane < num_lanes; else IKP_ERR_INVALID_ARGUMENT).
   Peer-format lanes are not stored: their figures are computed here, in
   time linear in the lane's records. */
IKP_DEF ikp_result ikp_capture_lane(const ikp_capture *cap, uint32_t lane, ikp_lane_info *out, ikp_error *err);
/* The capture's readings of its GPU clock against the host's, in GPU time
   order (sorted when opened); returns how many. */
IKP_DEF uint32_t ikp_capture_clock(const ikp_capture *cap, const ikp_clock_sync **syncs);
/* Host CLOCK_REALTIME (ns since the epoch) of the capture's time 0, and how
   far it may be off: the GPU-host offset interpolated between the readings
   around time 0 (the nearest one's outside them, plus 10 ns per ms beyond
   it for drift). IKP_ERR_EMPTY with a message when the capture has no
   readings or its format does not give the GPU's absolute time. */
IKP_DEF ikp_result ikp_capture_host_zero(const ikp_capture *cap, int64_t *host_ns, uint32_t *uncertainty_ns,
                                         ikp_error *err);
/* The GPU the capture names, or NULL when it names none. */
IKP_DEF const ikp_device_id *ikp_capture_device(const ikp_capture *cap);
/* d in one line, as `ikp info` and the report write it: "GPU-<uuid>, CUDA
   device N, rank R, PCI dddd:bb:dd, host H" (device, rank and host where
   known); cut to size (with its NUL). Returns buf. */
IKP_DEF const char *ikp_device_text(const ikp_device_id *d, char *buf, size_t size);
/* The capture's measurements of other GPUs' clocks, sorted by peer
   (uuid), then GPU time; returns how many. */
IKP_DEF uint32_t ikp_capture_peers(const ikp_capture *cap, const ikp_peer_clock **peers);
/* The capture's samples of its SM clocks, sorted by SM, then cycles;
   returns how many. */
IKP_DEF uint32_t ikp_capture_sm_clock(const ikp_capture *cap, const ikp_sm_clock **samples);
/* Name of event id / group, or NULL when unnamed (shown as "event N" / "group N"). */
IKP_DEF const char *ikp_event_name(const ikp_capture *cap, uint32_t id);
IKP_DEF const char *ikp_group_name(const ikp_capture *cap, uint32_t group);
/* The id of the event called name ("event N" for an unnamed id N too), or
   IKP_NO_EVENT. */
#define IKP_NO_EVENT 0xFFFFFFFFu
IKP_DEF uint32_t ikp_event_id(const ikp_capture *cap, const char *name);

/* >>decode: per-lane decode into events */
typedef enum ikp_event_kind {
    IKP_EVENT_REGION = 0,          /* begin..end */
    IKP_EVENT_INSTANT,
    IKP_EVENT_UNMATCHED_BEGIN,     /* a begin with no end (start = end = begin time) */
    IKP_EVENT_UNMATCHED_END,       /* an end with no begin */
    IKP_EVENT_KIND_COUNT
} ikp_event_kind;

enum {
    IKP_EVENT_HAS_BEGIN_DATA = 1u,
    IKP_EVENT_HAS_END_DATA = 2u,
    IKP_EVENT_HAS_TID = 4u,    /* nuggets: the record's tid field is in tid */
    IKP_EVENT_MAY_WRAP = 8u    /* nuggets-compact: the duration is kept modulo 2^24 ticks
                                  (16.78 ms) and the unit ran long enough for this region
                                  to have lasted longer: end_ps may be short by a multiple */
};

typedef struct ikp_event {
    int64_t start_ps, end_ps;  /* ps after capture start; end = start for points */
    uint32_t id;               /* event id */
    uint16_t kind;             /* ikp_event_kind */
    uint16_t flags;            /* IKP_EVENT_HAS_* */
    uint32_t track;            /* 0.. : regions of a lane that overlap without nesting go on extra tracks */
    uint32_t begin_data, end_data; /* payloads (IKP_DATA records) */
    uint32_t tid;              /* IKP_EVENT_HAS_TID: the record's own tid field */
    uint32_t link_;            /* internal */
} ikp_event;

/* Zero-initialise once; reuse across lanes; free with ikp_lane_events_free. */
typedef struct ikp_lane_events {
    ikp_event *events;         /* in start order (ties: outer region first) */
    size_t count;
    uint32_t num_tracks;       /* 1 + highest track used */
    uint64_t regions, instants, unmatched_begin, unmatched_end;
    int64_t busy_ps;           /* union of this lane's regions */
    int64_t first_ps, last_ps; /* earliest / latest timed record (INT64_MIN: none) */
    void *scratch_;            /* internal */
    size_t capacity_;
} ikp_lane_events;

IKP_DEF ikp_result ikp_decode_lane(const ikp_capture *cap, uint32_t lane,
                                   ikp_lane_events *out, ikp_error *err);
/* takes the capture for its allocator, which allocated the events */
IKP_DEF void ikp_lane_events_free(const ikp_capture *cap, ikp_lane_events *ev);

/* >>stats: statistics per event and group; text, JSON */
typedef struct ikp_event_stats {
    uint32_t id;
    const char *name;
    uint64_t count;
    double total_ns, min_ns, mean_ns, p50_ns, p90_ns, p99_ns, max_ns;
} ikp_event_stats;

typedef struct ikp_group_stats {
    uint32_t group;
    const char *name;
    uint32_t lanes;            /* lanes of this group with records */
    double busy_ns, span_ns;   /* sums over those lanes: time inside a region, and the span
                                  of the lane's block (its lanes' first record to their last),
                                  as ikp diff and ikp report take it */
    double busy_fraction;      /* busy / span */
} ikp_group_stats;

typedef struct ikp_stats {
    ikp_capture_info info;
    uint64_t regions, instants, unmatched_begin, unmatched_end;
    ikp_event_stats *events;   /* regions per event id, by id */
    uint32_t num_events;
    ikp_group_stats *groups;
    uint32_t num_groups;
    ikp_allocator allocator_;
    char *names_;              /* internal: copies of names */
} ikp_stats;

IKP_DEF ikp_result ikp_stats_compute(const ikp_capture *cap, ikp_stats **out, ikp_error *err);
IKP_DEF void ikp_stats_free(ikp_stats *st);
IKP_DEF ikp_result ikp_stats_write_text(const ikp_stats *st, ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_stats_write_json(const ikp_stats *st, ikp_write_fn fn, void *user, ikp_error *err);
/* Text: format, blocks, groups, lanes, records, dropped, unmatched, span and
   warnings (also the head of ikp_stats_write_text). */
IKP_DEF ikp_result ikp_info_write_text(const ikp_stats *st, ikp_write_fn fn, void *user, ikp_error *err);

/* >>trace: traces (Chrome JSON, Perfetto): format, options */
typedef enum ikp_group_by {
    IKP_BY_BLOCK = 0,  /* a process per block, a thread per lane (its group) */
    IKP_BY_SM,         /* a process per SM, a thread per lane */
    IKP_BY_COUNT
} ikp_group_by;

/* A trace's format, for the calls that take it as a value
   (ikp_write_merged): a writer added later is a value added here, not a
   new parameter. Other values are refused (IKP_ERR_INVALID_ARGUMENT). */
typedef enum ikp_trace_format {
    IKP_TRACE_JSON = 0,      /* Chrome trace JSON (ikp_write_chrome) */
    IKP_TRACE_PERFETTO = 1,  /* Perfetto protobuf (ikp_write_perfetto; refused with
                                IKP_NO_PERFETTO) */
    IKP_TRACE_FORMAT_COUNT
} ikp_trace_format;

/* A flow: arrows from `from` events to `to` events of the same block; each
   `to` event gets at most one, so there are never more arrows than records.
   A lane that holds `from` events links its own `to` events to them; a
   lane with only `to` events links to the block's one lane with `from`
   events (a producer's load to each consumer's wait). Between two lanes
   the k-th `to` links to the k-th `from`, in start order; when both carry
   a payload (IKP_DATA on the begin record), the k-th `to` with payload p to
   the k-th `from` with payload p. When several lanes of the block hold
   `from` events, a lane with only `to` events links by payload to the
   block's k-th `from` with that payload in time order, and without
   payloads not at all (counted as unpaired). Regions and instants take
   part; unmatched markers do not. */
typedef struct ikp_flow_pair {
    uint32_t from, to;         /* event ids (different) */
} ikp_flow_pair;

/* What a writer drew (optional output, see ikp_trace_options.stats). */
typedef struct ikp_trace_stats {
    uint64_t flows;            /* arrows written */
    uint64_t flows_unordered;  /* links not drawn: the `to` event does not come after
                                  the `from` event where the format binds arrows */
    uint64_t flow_unpaired;    /* `from` or `to` events that found no partner */
    uint64_t counter_tracks;   /* counter tracks written */
} ikp_trace_stats;

/* All-zero means: a process per block, no flows, no counters. */
typedef struct ikp_trace_options {
    ikp_group_by by;
    const ikp_flow_pair *flows;    /* arrows between related events */
    uint32_t num_flows;
    const uint32_t *counters;      /* event ids: per block, a counter track of how many
                                      regions of the event are open (pipeline depth) */
    uint32_t num_counters;
    ikp_trace_stats *stats;        /* if not NULL: filled by a successful write */
    uint64_t time_base_ns;         /* added to every timestamp (ns; with the span at most
                                      2^63 - 1, else refused); 0: times from the
                                      capture's start. ikp_capture_host_zero gives
                                      host time */
    uint64_t pid_base;             /* added to every process id, so that the trace can join
                                      another's without sharing its pids (at most 2^30) */
    const char *time_note;         /* what the times are, stated in the trace (JSON
                                      "otherData"; Perfetto: a track name); NULL: none;
                                      at most IKP_MAX_NAME_BYTES bytes */
    int absolute_ts;               /* JSON: 1: timestamps as they are, never less the whole
                                      seconds that keep them below 2^53 ns (ikp_ts_offset_ns,
                                      GUIDE.md), for events laid into another trace's
                                      time axis; past 2^53 ns, readers that parse numbers
                                      as doubles lose ns */
} ikp_trace_options;

/* Chrome trace JSON ("traceEvents"): opens in ui.perfetto.dev and
   chrome://tracing. pid = block + 1 (or SM + 1), tid = lane track + 1: 0
   is the idle process and thread in Perfetto, whose events it drops. */
IKP_DEF ikp_result ikp_write_chrome(const ikp_capture *cap, const ikp_trace_options *opt,
                                    ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_write_chrome_file(const ikp_capture *cap, const ikp_trace_options *opt,
                                         FILE *f, ikp_error *err);
/* Writes to path through an ikp_output (below): a failure leaves any
   earlier file at path untouched and no partial file behind. */
IKP_DEF ikp_result ikp_write_chrome_path(const ikp_capture *cap, const ikp_trace_options *opt,
                                         const char *path, ikp_error *err);

#ifndef IKP_NO_PERFETTO /* leave the Perfetto writer out with -DIKP_NO_PERFETTO */
/* Perfetto's native protobuf trace (.pftrace): the same blocks, lanes,
   slices, instants and arguments as the JSON, about a third of its size,
   as a tree of tracks (the launch, its blocks, their lanes); regions of a
   lane that overlap without nesting go on child tracks of the lane's
   track; names are interned; times are ns, exact to the decoded value
   rounded to the ns, as in the JSON. See FORMAT.md. */
IKP_DEF ikp_result ikp_write_perfetto(const ikp_capture *cap, const ikp_trace_options *opt,
                                      ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_write_perfetto_file(const ikp_capture *cap, const ikp_trace_options *opt,
                                           FILE *f, ikp_error *err);
IKP_DEF ikp_result ikp_write_perfetto_path(const ikp_capture *cap, const ikp_trace_options *opt,
                                           const char *path, ikp_error *err);
#endif /* IKP_NO_PERFETTO */
/* 1 if path names a Perfetto trace (ends in .pftrace or .perfetto-trace);
   the calls that write to a path choose the format by it (with
   IKP_NO_PERFETTO such a path is refused: IKP_ERR_INVALID_ARGUMENT) */
IKP_DEF int ikp_is_perfetto_path(const char *path);

/* >>output: output files replaced whole or not at all */
/* Output files that are replaced whole or not at all. ikp_output_open
   creates a new temporary file next to path (a random name ending in
   ".ikp-tmp", created exclusively: never an existing file, never through a
   symbolic link); ikp_output_write (an ikp_write_fn) appends to it;
   ikp_output_commit renames it over path (or, if a write failed, removes
   it and says why: IKP_ERR_IO), ikp_output_abort removes it. Any
   number of writers may write the same path at once: each has its own
   temporary file, and path always holds one writer's whole output. A path
   that names a device or a FIFO (/dev/null, /dev/stdout) is written in
   place. Errors say why (the system's message).
   ikp_output_end ends it either way after a writer ran: it commits when
   the writer succeeded, else removes the file and keeps the writer's
   error, or, when a write failed, says why the write failed. Its members
   are private: read them through the calls. */
#define IKP_OUTPUT_PATH_MAX 4096
typedef struct ikp_output {
    char tmp_path_[IKP_OUTPUT_PATH_MAX]; /* private: the temporary file while open, else "" */
    const char *path_;         /* private: the target (borrowed) */
    int fd_, in_place_, errno_;
    void *file_;
} ikp_output;
IKP_DEF ikp_result ikp_output_open(ikp_output *out, const char *path, ikp_error *err);
IKP_DEF int ikp_output_write(void *output, const void *data, size_t size);
IKP_DEF ikp_result ikp_output_commit(ikp_output *out, ikp_error *err);
IKP_DEF void ikp_output_abort(ikp_output *out);
IKP_DEF ikp_result ikp_output_end(ikp_output *out, ikp_result result, ikp_error *err);
/* The temporary file while open ("" when written in place, or once
   ended), for a signal handler that removes it; at most
   IKP_OUTPUT_PATH_MAX bytes with its NUL. */
IKP_DEF const char *ikp_output_temp_path(const ikp_output *out);

/* >>merge: merged timelines: captures on one clock */
#ifndef IKP_NO_MERGE /* leave merged timelines out with -DIKP_NO_MERGE */
/* Merged timelines: several captures (GPUs, ranks, launches; from one
   process or many) on one time axis. Each capture is placed by the most
   exact chain of measurements that links it to capture 0, the reference:
   a capture of the same GPU (one clock: exact), a measurement of one GPU's
   clock against the other's (ikp_peer_clock, either capture may hold it),
   or both GPUs' readings against the clock of one host (ikp_clock_sync;
   captures naming different hosts are not linked this way). Uncertainties
   add along the chain. Where every link agrees and there are at most 64
   captures, the placement is then made for every pair at once (each
   capture's measurement of another a bound of its own): the widest reach
   of any pair's placed difference to the ends of what all chains between
   them allow is made as small as it can be, and each states its reach
   against the reference. Among at most 32
   captures, a peer measurement that every other link contradicts (left
   out, the rest agree; left out of no other, they do not) is left out
   and said (left_out). A link that disagrees
   with the placement by more than the uncertainties of both is not
   refused: it is reported
   (disagreement_ns, disagree_via, disagree_with on both captures), and
   the uncertainty of each of the two grows to hold the clock that link
   and the other capture's uncertainty allow (either placement may be the
   one that is wrong; the reference's stays 0), and so does that of every
   capture on either chain up to where the two chains meet (the wrong link
   may be any of the cycle's) and of every capture placed through one
   that grew, except
   between captures of one GPU, whose clock is one clock and whose
   placement stays exact (host readings taken seconds apart drift against
   the GPU's clock by microseconds; ikp_merge_host_zero then states the
   wider host-time uncertainty). Refused: a capture given twice, captures
   that do not give their GPU's time (peer formats), and a capture no chain
   reaches (IKP_ERR_EMPTY) unless raw is set. */
typedef enum ikp_align_via {
    IKP_ALIGN_REFERENCE = 0,  /* capture 0 */
    IKP_ALIGN_SAME_GPU,       /* the clock of the same GPU as `from` */
    IKP_ALIGN_PEER,           /* a measurement between the two GPUs */
    IKP_ALIGN_HOST,           /* both GPUs' readings against the host clock */
    IKP_ALIGN_RAW,            /* raw %globaltimer, as if every GPU shared one clock:
                                 wrong across GPUs by their clocks' offset, a check only */
    IKP_ALIGN_START,          /* by its first record, at a time the user gives (0 if none):
                                 no clock links it; for captures without GPU time */
    IKP_ALIGN_COUNT
} ikp_align_via;

/* an uncertainty past what 32 bits hold: more than 2^32 - 2 ns (4.29 s) */
#define IKP_MORE_NS 0xFFFFFFFEu

typedef struct ikp_alignment {
    int64_t zero_ns;          /* the capture's time 0 on the merged axis (>= 0; the
                                 earliest capture's time 0 is 0) */
    int64_t offset_ns;        /* its GPU's clock minus the reference GPU's clock */
    uint32_t uncertainty_ns;  /* how far zero_ns may be off against the reference; IKP_MORE_NS: more
                                 than 2^32 - 2 ns; 0xFFFFFFFF: not known (placed by first records) */
    ikp_align_via via;        /* the last link of the chain from the reference */
    uint32_t from;            /* the capture that link starts from */
    uint32_t links;           /* links in the chain (0 for the reference) */
    uint32_t disagreement_ns; /* how far another link put this capture's clock from its
                                 placement beyond the uncertainties of both (0: every link
                                 agrees; the largest of them) */
    ikp_align_via disagree_via; /* that link's kind (IKP_ALIGN_REFERENCE when none) */
    uint32_t disagree_with;   /* the capture at its other end */
    uint32_t left_out;        /* 1: that link is this capture's measurement of disagree_with's GPU,
                                 left out of the placement (every other link agrees without it;
                                 the uncertainties do not cover it); 0 otherwise */
} ikp_alignment;

/* Places n captures (out: n entries). raw: IKP_ALIGN_RAW for all.
   O((n + P) log n), P the peer measurements, each capture's clock
   readings read once; plus a step for each pair of captures with a link
   that disagrees with the placement. */
IKP_DEF ikp_result ikp_merge_align(const ikp_capture *const *caps, uint32_t n, int raw, ikp_alignment *out,
                                   ikp_error *err);
/* Places each capture's time 0 (its first record) at start_ns[k] (NULL:
   all at 0), then shifts them so that the earliest is at 0: for captures
   whose stamps do not give their GPU's time (32-bit peer formats), or to
   line launches up by their starts. IKP_ALIGN_START, uncertainty unknown. */
IKP_DEF ikp_result ikp_merge_align_start(const ikp_capture *const *caps, uint32_t n, const int64_t *start_ns,
                                         ikp_alignment *out, ikp_error *err);
/* Every capture's label, O(n log n): "rank 1 GPU 3", "GPU 3" or "capture
   2" (its index + 1 when the capture names no GPU), led by the host name
   when the captures name different hosts; " #k" added where two captures
   would read the same. Capture k's at labels + k * size (size >= 16;
   longer ones cut). IKP_ERR_OUT_OF_MEMORY, or
   IKP_ERR_INVALID_ARGUMENT for NULL arguments or a smaller size. */
IKP_DEF ikp_result ikp_merge_labels(const ikp_capture *const *caps, uint32_t n, char *labels, size_t size,
                                    ikp_error *err);
/* Host CLOCK_REALTIME of the merged time 0 (placed by al), from the capture
   whose host time and placement together are the most exact; the
   uncertainty also covers the largest disagreement of host readings in al
   (IKP_ALIGN_HOST). IKP_ERR_EMPTY when none holds host readings. */
IKP_DEF ikp_result ikp_merge_host_zero(const ikp_capture *const *caps, uint32_t n, const ikp_alignment *al,
                                       int64_t *host_ns, uint32_t *uncertainty_ns, ikp_error *err);

/* How far captures i and j, placed by al (ikp_merge_align's), may be off
   against each other: bounds[i * n + j], ns (0 on the diagonal;
   UINT64_MAX: not known, a capture placed raw or by its first record).
   The sum of their uncertainties, or less where the links say less: each
   link (the same GPU, a measurement over peer memory, both captures' host
   readings) bounds the difference of its two clocks to its value +- its
   uncertainty, a chain of links by the sums, and the tightest bounds over
   every chain between i and j (shortest paths, O(n^3)) hold the truth;
   the placed difference lies within them or is said off by the check
   that grows the uncertainties. Where the links contradict each other (a
   cycle no clocks satisfy: one of them lies) every pair keeps the sum.
   n at most 1024 (IKP_ERR_SIZE_OVERFLOW past it; n^2 entries). */
IKP_DEF ikp_result ikp_merge_pair_bounds(const ikp_capture *const *caps, uint32_t n, const ikp_alignment *al,
                                         uint64_t *bounds, ikp_error *err);

typedef struct ikp_merge_options {
    ikp_trace_options trace;  /* for every capture: grouping, flows, counters; time_base_ns
                                 and time_note as for one capture */
    int raw;                  /* place captures by raw %globaltimer (a check: see above) */
    int align_start;          /* place them by their first records (ikp_merge_align_start) */
    const int64_t *start_ns;  /* ... at these times (n entries; NULL: all at 0) */
    const char *const *labels;/* a name per capture (NULL, or NULL entries: ikp_merge_labels'); two the
                                 same: IKP_ERR_INVALID_ARGUMENT */
    ikp_alignment *alignment; /* if not NULL: n entries, filled */
} ikp_merge_options;

/* One trace of n captures, each in processes of its own (pids disjoint,
   each process name starting with the capture's label), placed by
   ikp_merge_align; the trace states each capture's placement and
   uncertainty (JSON "otherData"; Perfetto: a track per capture). format:
   IKP_TRACE_JSON or IKP_TRACE_PERFETTO (0 and 1, as an int flag passed
   before the enum existed); another value is refused. */
IKP_DEF ikp_result ikp_write_merged(const ikp_capture *const *caps, uint32_t n, const ikp_merge_options *opt,
                                    ikp_trace_format format, ikp_write_fn fn, void *user, ikp_error *err);
/* A ZIP archive (its entries stored, not compressed) that Perfetto (v58
   and later) opens as one timeline: perfetto_manifest.json, then a
   Perfetto trace a capture, named from its label ("rank 1 GPU 3" ->
   rank-1-gpu-3.pftrace), each holding what ikp_write_merged's Perfetto
   trace holds of it (BOOTTIME the merged axis, its pids and tracks apart
   from the others') and its placement, all on one machine of the
   manifest; where the merge has a host time, each file's clock snapshot
   ties its BOOTTIME to the host's REALTIME, through which traces of other
   machines line up. Each trace is made twice (a stored entry's size and
   CRC come before it). opt->trace.time_base_ns must be 0. Over 65,533
   captures or 4 GiB: IKP_ERR_SIZE_OVERFLOW (no ZIP64); with
   IKP_NO_PERFETTO refused. */
IKP_DEF ikp_result ikp_write_merged_zip(const ikp_capture *const *caps, uint32_t n, const ikp_merge_options *opt,
                                        ikp_write_fn fn, void *user, ikp_error *err);
/* Same to path (a .zip: ikp_write_merged_zip; Perfetto when
   ikp_is_perfetto_path), replaced whole or not at all. */
IKP_DEF ikp_result ikp_write_merged_path(const ikp_capture *const *caps, uint32_t n,
                                         const ikp_merge_options *opt, const char *path, ikp_error *err);
#endif /* IKP_NO_MERGE */

/* >>export: Parquet export of captures' regions and instants */
#if !defined(IKP_NO_MERGE) && !defined(IKP_NO_EXPORT) /* leave it out with -DIKP_NO_EXPORT */
/* Export: every region and instant of captures, a row each, as one Apache
   Parquet table written by this file (no library), for DuckDB, pyarrow
   (both read it in the tests), pandas and Spark; FORMAT.md "Parquet export" has its
   columns, time axis and metadata. The captures are placed on one axis as
   ikp_merge_align places them: host CLOCK_REALTIME ns where their clock
   readings give it (ikp_merge_host_zero), else ns from the earliest
   capture's first record; the column time_axis says which. Rows are
   written a row group at a time as lanes are decoded. */
typedef struct ikp_export_options {
    const char *const *labels; /* a label per capture (NULL, or NULL entries: ikp_merge_labels'); two
                                  the same: IKP_ERR_INVALID_ARGUMENT */
    int raw;                   /* each capture on its own GPU's raw %globaltimer (a check) */
    uint32_t row_group_rows;   /* rows a row group, at most (0: 65536) */
    uint32_t row_group_bytes;  /* a row group's encoded pages, about, at most (0: half the largest
                                  capture's buffer, at least 64 KiB) */
    int plain;                 /* numbers PLAIN, as 0.13.0 wrote them, for readers without
                                  DELTA_BINARY_PACKED (Spark before 3.3 with its vectorized reader);
                                  the table about 9x larger */
    ikp_alignment *alignment;  /* NULL, or n entries: how each capture was placed, as
                                  ikp_merge_align says (its links' disagreements too) */
} ikp_export_options;
IKP_DEF ikp_result ikp_export_parquet(const ikp_capture *const *caps, uint32_t n, const ikp_export_options *opt,
                                      ikp_write_fn fn, void *user, ikp_error *err);
/* The same from capture files, one in memory at a time: each is read
   twice (to place them all, then to write its rows). Between the two, what
   places a capture is kept (about 130 bytes: its GPU, host, clock offsets
   and a hash of its words, so that a file given twice is still refused);
   once they are placed, what the table says of each (label, placement,
   figures) and of each row group waits for the footer in temporary files
   (tmpfile; in memory where none can be made). An IKP capture's words are
   let go once it is open for its rows, and its lanes read again one at a
   time (every word hashed: a file changed meanwhile is refused, IKP_ERR_IO).
   outputs: one path (one table), or n (capture k's rows in outputs[k], all
   on one axis: a table a capture). Each output is replaced whole or not at
   all (ikp_output_open). */
IKP_DEF ikp_result ikp_export_parquet_files(const char *const *inputs, uint32_t n, const ikp_decode_options *dopt,
                                            const ikp_export_options *opt, const char *const *outputs,
                                            uint32_t num_outputs, ikp_error *err);
#endif

/* >>diff: diff of two captures: verdicts, tests, writers */
#ifndef IKP_NO_REPORT /* diff and report: leave them out with -DIKP_NO_REPORT */
/* ikp_diff compares two captures of one kernel (a base and a new version)
   event by event, matched by name; ikp_report explains one capture: stage
   table, pipeline overlap of the groups, balance across SMs and blocks, and
   a picture (SVG). Both decode every lane once. */
typedef enum ikp_verdict {
    IKP_VERDICT_SAME = 0,      /* no change beyond noise, or a change below the threshold */
    IKP_VERDICT_FASTER,
    IKP_VERDICT_SLOWER,
    IKP_VERDICT_ONLY_BASE,     /* in the base capture only */
    IKP_VERDICT_ONLY_NEW,      /* in the new capture only */
    IKP_VERDICT_INCOMPLETE,    /* ikp_diff.verdict only: the new capture cannot stand in
                                  for the base, or a side is STALE (ikp_diff_incomplete) */
    IKP_VERDICT_COUNT
} ikp_verdict;
/* "same", "faster", "slower", "only-base", "only-new", "incomplete" */
IKP_DEF const char *ikp_verdict_name(ikp_verdict v);

/* All-zero means the defaults. */
typedef struct ikp_diff_options {
    double threshold;          /* smallest |median change| that counts, a fraction
                                  (0 = 0.02); below it the verdict is `same` */
    double alpha;              /* false-alarm rate for the whole comparison, split over
                                  its tests (Bonferroni: four an event compared and
                                  four for the block spans; 0 = 0.01) */
    double min_change_ns;      /* smallest |median change| in ns that counts (0 = 5 ns):
                                  short waits move by a few ns from run to run */
} ikp_diff_options;

/* One distribution's change. Durations are the samples, and four measures
   of them are tested, each on its own at alpha / tests:
   - the median (IKP_MEASURE_P50): a two-sided Mann-Whitney rank test
     (normal approximation, ties corrected);
   - the 90th and 99th percentiles (IKP_MEASURE_P90, _P99): how many
     durations of each side lie above the base's percentile, two
     proportions against each other (made only when each side has at least
     5 durations expected above it: 50 for p90, 500 for p99);
   - the total (IKP_MEASURE_TOTAL): the difference of the two sums against
     its standard error (each sum one of n durations of its side's spread;
     at least 2 durations a side); its min_change_ns is a duration's share
     of the difference (over the larger count).
   A measure moved when its test passes, it changed by at least the
   threshold and by min_change_ns, and its test and its change agree on
   the direction. The verdict is `slower` when any measure moved up, else
   `faster` when any moved down, else `same`: a slowdown counts however it
   is spread (all durations a little, or a few a lot). The span adds the
   capture's span (IKP_MEASURE_SPAN, ikp_diff_span). */
enum {                                 /* ikp_diff_test.measures */
    IKP_MEASURE_P50 = 1u << 0,
    IKP_MEASURE_P90 = 1u << 1,
    IKP_MEASURE_P99 = 1u << 2,
    IKP_MEASURE_TOTAL = 1u << 3,
    IKP_MEASURE_SPAN = 1u << 4
};
typedef struct ikp_diff_test {
    double p50_change;         /* new p50 / base p50 - 1 (0 when either side is empty) */
    double z;                  /* the rank test's z: > 0 when new durations rank higher */
    double p_value;            /* the rank test's, two-sided */
    ikp_verdict verdict;
    double p90_change, p99_change, total_change;  /* new / base - 1, as p50_change */
    double p90_p, p99_p, total_p;  /* those measures' tests, two-sided (1: not made) */
    uint32_t measures;         /* IKP_MEASURE_*: those that moved the verdict's way */
    double change;             /* the largest such change (the most negative when
                                  faster; 0 when same) */
} ikp_diff_test;

typedef struct ikp_diff_event {
    const char *name;
    ikp_event_stats base, next;  /* next: the new capture; count 0 on a side that lacks it */
    ikp_diff_test test;
} ikp_diff_event;

typedef struct ikp_diff_group {
    const char *name;
    uint32_t base_lanes, next_lanes;   /* 0 on a side that lacks the group */
    double base_busy, next_busy;       /* busy fraction of its blocks' spans (ikp_report_group) */
    ikp_verdict verdict;               /* SAME, ONLY_BASE or ONLY_NEW: presence only */
} ikp_diff_group;

/* The capture as a whole: each block's span (first record to last) as the
   samples of the four measures, and the capture's span, which moved
   (IKP_MEASURE_SPAN) when it changed by the threshold and min_change_ns
   and by more than the blocks' ends lie apart (the last block's end less
   the first's) in the capture where they lie closer: blocks of one launch
   finish that far apart by themselves, and a straggler block that makes
   the kernel slower is seen though no test of 100 blocks can see one. */
typedef struct ikp_diff_span {
    double base_ns, next_ns;           /* capture spans */
    double change;                     /* next / base - 1 */
    ikp_event_stats base_blocks, next_blocks; /* block spans (name "block span") */
    ikp_diff_test test;                /* over the block spans */
} ikp_diff_span;

enum {                                 /* ikp_diff.differs: what the captures do not share */
    IKP_DIFF_FORMAT = 1u << 0,
    IKP_DIFF_TIMER = 1u << 1,
    IKP_DIFF_BLOCKS = 1u << 2,
    IKP_DIFF_GROUPS = 1u << 3,
    IKP_DIFF_GRID = 1u << 4,
    IKP_DIFF_EVENTS = 1u << 5          /* some event names are in one capture only */
};

typedef struct ikp_diff {
    ikp_capture_info base_info, next_info;
    ikp_diff_options options;          /* as used (defaults filled in) */
    uint32_t tests;                    /* tests made, four a compared item (alpha is split over them) */
    uint32_t differs;                  /* IKP_DIFF_* */
    ikp_diff_event *events;            /* base's events by id, then those only in new */
    uint32_t num_events;
    ikp_diff_group *groups;
    uint32_t num_groups;
    ikp_diff_span span;
    ikp_verdict verdict;               /* the span's (the whole capture), or INCOMPLETE */
    ikp_allocator allocator_;
    char *names_;
} ikp_diff;

IKP_DEF ikp_result ikp_diff_compute(const ikp_capture *base, const ikp_capture *next,
                                    const ikp_diff_options *opt, ikp_diff **out, ikp_error *err);
IKP_DEF void ikp_diff_free(ikp_diff *d);
/* 1 if an event or the span is `slower` with a measure that moved by more
   than fraction (ikp_diff_test.change), else 0 */
IKP_DEF int ikp_diff_slower_than(const ikp_diff *d, double fraction);
/* 1 if the new capture cannot stand in for the base, whatever its speed:
   either capture is STALE (ikp_capture_stale: records of an earlier
   launch mixed in), the new one holds no records, an event of the base is
   missing from it, or it has
   fewer than `fraction` (0: 0.5) of the base's records or of an event's
   count. Writes the first such reason as one line (no newline; control
   bytes of names as '?') into why when size > 0. Else 0 (why: ""). A CI
   gate fails on either this or ikp_diff_slower_than. */
IKP_DEF int ikp_diff_incomplete(const ikp_diff *d, double fraction, char *why, size_t size);
/* A table to read in one look; JSON ({"events": [...], "groups": [...],
   "span": {...}, ...}); Markdown (the report's "vs baseline" section). */
IKP_DEF ikp_result ikp_diff_write_text(const ikp_diff *d, ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_diff_write_json(const ikp_diff *d, ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_diff_write_markdown(const ikp_diff *d, ikp_write_fn fn, void *user, ikp_error *err);

/* >>report: report of one capture: stages, pipeline, picture */
/* All-zero means the defaults. */
typedef struct ikp_report_options {
    const uint32_t *wait_events;       /* event ids whose regions are waiting, not work: time
                                          in them is idle (even inside an enclosing region) */
    uint32_t num_wait_events;          /* 0: the events named as waits are (ikp_is_wait_name),
                                          unless no_wait_names */
    int no_wait_names;                 /* 1: with no wait_events, no event is a wait */
    uint32_t timeline_sms;             /* SMs (blocks when SMs are unknown) in the picture's
                                          timeline, spread evenly (0 = 8) */
    uint32_t heat_bins;                /* time bins of the heatmap (0 = 100, at most 1000) */
    const char *device;                /* a device name for the configuration (optional; else
                                          the capture's device identity, when it holds one) */
} ikp_report_options;

typedef struct ikp_report_stage {      /* one event in one group */
    uint32_t id, group;
    const char *name, *group_name;
    uint64_t count;
    double total_ns, p50_ns, p99_ns;
    double share;                      /* total / the group's lanes' busy time (regions
                                          nest, so shares may add up past 1) */
} ikp_report_stage;

typedef struct ikp_report_group {   /* in ikp_report.groups in group order */
    uint32_t group;
    const char *name;
    uint32_t lanes, blocks;
    double busy_ns;                    /* work (regions less waits), summed over lanes */
    double span_ns;                    /* the spans of the blocks it has lanes in */
    double busy_fraction, idle_fraction; /* of span_ns */
    double alone_ns;                   /* busy while no other group of its block is: the
                                          time the block waits on this group */
    uint32_t blocks_bound;             /* blocks where it is alone busy longest */
} ikp_report_group;

typedef struct ikp_report_pair {       /* two groups of the same blocks */
    uint32_t a, b;                     /* indexes into ikp_report.groups */
    double span_ns;                    /* the spans of the blocks with both */
    double both, a_only, b_only, neither; /* fractions of span_ns: both busy, one busy
                                          while the other waits, both idle */
} ikp_report_pair;

typedef struct ikp_report_block {
    uint32_t block, sm;                /* sm = IKP_NO_SM when unknown */
    int64_t start_ps, end_ps;          /* first and last record of its lanes */
    double busy_ns;
} ikp_report_block;

typedef struct ikp_report_sm {
    uint32_t sm;
    uint32_t blocks, lanes;
    int64_t start_ps, end_ps;
    double busy_ns;
} ikp_report_sm;

typedef struct ikp_report_rect {       /* a bar of the timeline, merged to whole pixels */
    uint32_t row, id;
    uint32_t depth;                    /* nesting depth, 0 outermost */
    float x0, x1;                      /* pixels from the left of the plot */
} ikp_report_rect;

typedef struct ikp_report {
    ikp_stats *stats;                  /* the capture's statistics */
    const char *device;
    ikp_report_stage *stages;          /* by group, then event id */
    uint32_t num_stages;
    ikp_report_group *groups;
    uint32_t num_groups;
    ikp_report_pair *pairs;            /* of the first 16 groups */
    uint32_t num_pairs;
    ikp_report_block *blocks;          /* by end, latest first */
    uint32_t num_blocks;
    ikp_report_sm *sms;                /* by SM id (none when SMs are unknown) */
    uint32_t num_sms;
    int64_t end_p50_ps;                /* the median block's end */
    int64_t tail_ps;                   /* last block's end - end_p50_ps */
    uint32_t waits;                    /* wait events: given, or taken by their names */
    int waits_by_name;                 /* 1: taken by their names (none was given); -1: none,
                                          as asked (no_wait_names) */
    uint32_t *wait_ids;                /* their ids, ascending */
    /* the picture */
    uint32_t plot_width;               /* pixels of the time axis */
    uint32_t num_rows;                 /* timeline rows: (SM or block, group) */
    uint32_t *row_unit, *row_group;    /* SM (or block) and group of each row */
    int row_by_sm;
    ikp_report_rect *rects;
    size_t num_rects;
    uint32_t heat_rows, heat_bins;     /* heat[row * heat_bins + bin]: mean busy lanes */
    float *heat;
    uint32_t *heat_unit;               /* first SM (or block) of each heat row */
    uint32_t heat_units_per_row;       /* > 1 when there are more SMs than rows */
    double heat_max;
    ikp_allocator allocator_;
    char *names_;
} ikp_report;

IKP_DEF ikp_result ikp_report_compute(const ikp_capture *cap, const ikp_report_options *opt,
                                      ikp_report **out, ikp_error *err);
/* 1 if an event of this name is taken as a wait when none are given: one of
   its words (split at characters other than letters and digits, and where a
   lower-case letter meets an upper-case one) is wait, waits, waiting,
   waited, barrier, sync or stall ("wait", "order_wait_0", "WaitFull",
   "bar_sync"), in any case */
IKP_DEF int ikp_is_wait_name(const char *name);
IKP_DEF void ikp_report_free(ikp_report *r);
/* What ikp_report_write_markdown adds (all optional). */
typedef struct ikp_report_md_options {
    const char *title;                 /* default "IKP report" */
    const char *source;                /* the capture's name, shown in the configuration */
    const char *svg_path;              /* the picture, linked as ![](svg_path) */
    const ikp_diff *baseline;          /* a "vs baseline" section */
} ikp_report_md_options;
IKP_DEF ikp_result ikp_report_write_markdown(const ikp_report *r, const ikp_report_md_options *opt,
                                             ikp_write_fn fn, void *user, ikp_error *err);
/* The report's facts as one JSON document for scripts and agents (GUIDE.md
   "ikp report --json" lists the keys; they do not change within a
   "schema" version): configuration and placement, stages, the pipeline
   and its bound group, balance and tail, and (baseline not NULL) the
   comparison as ikp_diff_write_json writes it. Names it shares with the
   summary's JSON (ikp_stats_write_json) and the diff's mean the same. */
IKP_DEF ikp_result ikp_report_write_json(const ikp_report *r, const ikp_diff *baseline, ikp_write_fn fn, void *user,
                                         ikp_error *err);
/* The picture: a timeline of the sampled SMs (one row per SM and group,
   coloured by event, a scale in us) above a heatmap of busy lanes per SM
   over time. Plain SVG 1.1, no scripts, no external references. */
IKP_DEF ikp_result ikp_report_write_svg(const ikp_report *r, ikp_write_fn fn, void *user, ikp_error *err);

#endif /* IKP_NO_REPORT */

/* >>capfile: capture files (.ikp) written (ikp_capture_open_path reads them) */
/* Writes cap as an .ikp capture file (FORMAT.md): its buffer, format, names,
   clock readings, device, peer measurements and SM clock samples; the file
   opened with the same decode options gives the same capture. To a
   callback, a FILE*, or a path (through an ikp_output: replaced whole or
   not at all). */
IKP_DEF ikp_result ikp_capture_write(const ikp_capture *cap, ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_capture_write_file(const ikp_capture *cap, FILE *f, ikp_error *err);
IKP_DEF ikp_result ikp_capture_write_path(const ikp_capture *cap, const char *path, ikp_error *err);

/* >>names: name lists (--names a,b or a file) */
/* Splits "a,b,,c" (len bytes, no NUL needed) into names; empty entries are
   NULL (default name). Free with ikp_name_list_free. At most
   IKP_WIRE_MAX_EVENTS names, each at most 255 bytes, no NUL bytes. */
typedef struct ikp_name_list {
    char **names;
    uint32_t count;
    ikp_allocator allocator_;
} ikp_name_list;
IKP_DEF ikp_result ikp_name_list_parse(const char *text, size_t len, char separator,
                                       const ikp_allocator *alloc, ikp_name_list *out,
                                       ikp_error *err);
/* Reads a regular file of names, one per line (see ikp_name_list_parse). */
IKP_DEF ikp_result ikp_name_list_parse_path(const char *path, const ikp_allocator *alloc,
                                            ikp_name_list *out, ikp_error *err);
IKP_DEF void ikp_name_list_free(ikp_name_list *list);

/* >>dump: one call: words to trace, capture and summary */
typedef struct ikp_dump_desc {
    const char *trace_path;      /* trace (NULL: none): Perfetto protobuf when the name ends
                                    in .pftrace or .perfetto-trace, else Chrome JSON */
    const char *capture_path;    /* .ikp capture (NULL: none) */
    FILE *summary;               /* text statistics (NULL: none) */
    ikp_decode_options decode;
    ikp_trace_options trace;     /* the trace's layout, flows, counters */
} ikp_dump_desc;

IKP_DEF ikp_result ikp_dump_words(const uint64_t *words, size_t num_words,
                                  const ikp_dump_desc *desc, ikp_error *err);

/* Size in words of an IKP buffer for lanes x capacity records (0 on overflow):
   8 + lanes * (8 + capacity + 1). */
IKP_DEF size_t ikp_buffer_words(uint32_t lanes, uint32_t capacity);
/* Fills the IKP buffer header (words[0..7]) for lanes x capacity; the caller
   zeroes the rest. clock_khz: nominal SM clock (0 if unknown). */
IKP_DEF ikp_result ikp_buffer_header(uint64_t *header8, uint32_t lanes, uint32_t capacity,
                                     uint32_t clock_khz, ikp_error *err);

/* >>cuda: CUDA helpers: buffers, clock readings */
#if IKP_HAS_CUDA
/* With -DIKP_ENABLE=0 (the production build of the kernels, given on the
   command line so that it reaches this file too) the helpers below take
   and record nothing: create leaves device NULL (the kernels' macros are
   gone, and a NULL buffer is what a recording kernel ignores), reset and
   download do nothing, dump writes no file and says so on its summary
   stream, destroy frees nothing. The same host code builds both ways. */
#if defined(IKP_ENABLE) && !IKP_ENABLE
#define IKP__CUDA_OFF 1
#else
#define IKP__CUDA_OFF 0
#endif
/* the helpers' own kernels and what launches them: compiled by nvcc, and
   left out of a production build, where nothing of IKP's device code
   remains */
#if defined(__CUDACC__) && !IKP__CUDA_OFF
#define IKP__KERNELS 1
#else
#define IKP__KERNELS 0
#endif
typedef struct ikp_cuda_buffer {
    uint64_t *device;          /* pass to the kernel as its uint64_t* parameter */
    size_t num_words;
    uint32_t lanes, capacity;
    uint32_t clock_khz;
    ikp_device_id gpu;         /* the device it was created on */
    ikp_clock_sync clock[2];   /* readings taken by the last reset (before the kernel)
                                  and download (after it), when they could be taken */
    uint32_t num_clock;
    int device_index;          /* the CUDA device number */
    uint32_t sample_every_ns;  /* SM clock samples while the kernel runs: one on every SM
                                  this often (IKP_SM_CLOCK_EVERY_NS; set 0 for none) */
    ikp_sm_clock *sm_clock;    /* the samples the last download took (host memory) */
    uint32_t num_sm_clock;
    uint64_t *mapped_;         /* mapped host memory for the readings (NULL: none) */
    uint64_t *samples_;        /* device memory for the samples (NULL: none) */
    void *sample_stream_;      /* the stream they are taken on */
    uint32_t sms_;             /* SMs of the device */
    uint64_t resets_;          /* resets so far, where no kernel of IKP's writes the header
                                  (ikp.h not compiled by nvcc); else counted on the device,
                                  in the word after the buffer's */
} ikp_cuda_buffer;

/* cudaMalloc a buffer of lanes x capacity records (lanes = blocks x groups)
   on the current device, and name the device (gpu). */
IKP_DEF ikp_result ikp_cuda_buffer_create(ikp_cuda_buffer *buf, uint32_t lanes,
                                          uint32_t capacity, ikp_error *err);
/* Zero the buffer and write its header, ordered on stream. Call before each
   launch. The header holds the launch's number: the resets of this buffer
   so far, counted on the device when this file is compiled by nvcc (a
   kernel of one thread writes the header), so that each replay of a CUDA
   graph that holds the reset gets a number of its own.
   Outside a stream capture, also takes a reading of the GPU clock against
   the host's (the first of clock[]), when this file is compiled by nvcc;
   a GPU too busy to answer within 20 ms gives none (num_clock says). The
   first reset with sample_every_ns not 0 also takes the SM clock samples'
   device memory (24 bytes x 3072 x the SMs: 9.7 MB on a 132-SM H100);
   none is taken while sampling is off.
   While stream is capturing a CUDA graph, the reset is captured as a
   memset node and a kernel node (every replay resets the buffer), and
   takes no reading: the download takes one after the replay. Without nvcc
   the header cannot be captured (it would be a copy from host memory):
   IKP_ERR_CUDA, naming the capture, and nothing is captured. */
IKP_DEF ikp_result ikp_cuda_buffer_reset(ikp_cuda_buffer *buf, cudaStream_t stream,
                                         ikp_error *err);
/* Synchronise stream and copy the buffer to host (num_words words); then
   a reading, as reset does (of clock[], the last two are kept: after a
   reset under capture, the download's and the one before it). Refused
   (IKP_ERR_CUDA, naming the capture) while stream is capturing a graph:
   a capture cannot wait for its own work. While the stream has work, it also
   samples the SM clocks (sm_clock, num_sm_clock), when this file is
   compiled by nvcc and sample_every_ns is not 0: every sample_every_ns
   (or 1/1024 of the time waited so far, if longer) a grid of one small
   block per SM, on a stream of the lowest priority, locates a globaltimer
   tick in %clock64 cycles on whichever SM runs it. The blocks take no
   shared memory and live well under a microsecond; an SM
   the kernel fills gives none, and its lanes keep their two anchors. A
   sample that contradicts the one before it on its SM (the sampler held
   up between its two reads) is dropped: it would make the decoder refuse
   the samples. */
IKP_DEF ikp_result ikp_cuda_buffer_download(ikp_cuda_buffer *buf, cudaStream_t stream,
                                            uint64_t *host, ikp_error *err);
IKP_DEF void ikp_cuda_buffer_destroy(ikp_cuda_buffer *buf);
/* Download, then ikp_dump_words; the buffer's device and clock readings go
   with the words unless desc->decode gives its own. */
IKP_DEF ikp_result ikp_cuda_dump(ikp_cuda_buffer *buf, cudaStream_t stream,
                                 const ikp_dump_desc *desc, ikp_error *err);
/* Names a CUDA device: UUID, PCI address, ordinal, this host's name (rank -1). */
IKP_DEF ikp_result ikp_cuda_device_id(int device, ikp_device_id *out, ikp_error *err);
/* One reading of the current device's %globaltimer against CLOCK_REALTIME:
   the host writes a flag in mapped memory, a one-thread kernel answers
   with its clock; the best of 32 round trips, uncertainty = half of it
   plus one globaltimer step (32 ns). Needs this file compiled by nvcc
   (IKP_ERR_NO_CUDA otherwise); IKP_ERR_CUDA if the GPU does not answer
   within 20 ms (busy with other work). */
IKP_DEF ikp_result ikp_cuda_clock_reading(ikp_clock_sync *out, ikp_error *err);
/* Measures peer's clock against device's: over peer memory (a ping-pong of
   two one-thread kernels, best of 64 round trips; peer access is enabled
   if it can be) when the devices can reach each other, else through the
   host (both devices' readings). out is from device's side: give it to
   device's capture (ikp_decode_options.peers). Needs nvcc, as above. */
IKP_DEF ikp_result ikp_cuda_peer_clock(int device, int peer, ikp_peer_clock *out, ikp_error *err);
#endif

#ifdef __cplusplus
}
#endif
#endif /* IKP_H */

/* ========================================================================== */
/*                              IMPLEMENTATION                                */
/* ========================================================================== */
#ifdef IKP_IMPLEMENTATION
#ifndef IKP_IMPLEMENTATION_INCLUDED
#define IKP_IMPLEMENTATION_INCLUDED

/* >>config-impl: includes, default allocator, internal limits */
#include <string.h>
#include <stdarg.h>
#include <errno.h>
#include <time.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if IKP_HAS_CUDA
#include <sys/utsname.h>
#endif
#endif

#if defined(IKP_MALLOC) && defined(IKP_REALLOC) && defined(IKP_FREE)
#elif !defined(IKP_MALLOC) && !defined(IKP_REALLOC) && !defined(IKP_FREE)
#include <stdlib.h>
#define IKP_MALLOC(sz) malloc(sz)
#define IKP_REALLOC(p, sz) realloc(p, sz)
#define IKP_FREE(p) free(p)
#else
#error "IKP: define all of IKP_MALLOC, IKP_REALLOC and IKP_FREE, or none of them"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define IKP__SHARED_TRACKS 32u          /* tracks searched for a nesting slot */
#define IKP__MAX_ABS_PS (1ll << 61)     /* times beyond this are corrupt */
#define IKP__ANCHOR_MASK ((1ull << 62) - 1)
#define IKP__RATE_MIN_SPAN_NS 50000     /* lanes shorter use the capture's cycle rate */
#define IKP__ANCHOR_LIMIT (1ull << 46)  /* ns or cycles: anchors farther apart are corrupt */
/* >>config-alloc: allocation: default and run-time allocators */
static void *ikp__default_alloc(size_t n, void *u) { (void)u; return IKP_MALLOC(n); }
static void *ikp__default_realloc(void *p, size_t n, void *u) { (void)u; return IKP_REALLOC(p, n); }
static void ikp__default_free(void *p, void *u) { (void)u; IKP_FREE(p); }

static ikp_allocator ikp__allocator(const ikp_allocator *a)
{
    ikp_allocator r;
    if (a && a->alloc && a->realloc && a->free) return *a;
    r.alloc = ikp__default_alloc;
    r.realloc = ikp__default_realloc;
    r.free = ikp__default_free;
    r.user = NULL;
    return r;
}
static void *ikp__alloc(const ikp_allocator *a, size_t n) { return a->alloc(n ? n : 1, a->user); }
static void ikp__free(const ikp_allocator *a, void *p) { if (p) a->free(p, a->user); }

/* grows *p (elements of size esz) to hold at least need elements, by half
   again each step: at most a third of what it holds is unused */
static int ikp__grow(const ikp_allocator *a, void **p, size_t *cap, size_t need, size_t esz)
{
    size_t nc;
    void *np;
    if (need <= *cap) return 1;
    nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > ((size_t)-1) / 2 / esz) return 0;
        nc += nc / 2;
    }
    np = *p ? a->realloc(*p, nc * esz, a->user) : a->alloc(nc * esz, a->user);
    if (!np) return 0;
    *p = np;
    *cap = nc;
    return 1;
}

static size_t ikp__fmt_fixed(char *t, size_t n, double x, int decimals);

/* >>errors-impl: results and errors */
IKP_DEF const char *ikp_result_string(ikp_result r)
{
    switch (r) {
    case IKP_OK: return "ok";
    case IKP_ERR_INVALID_ARGUMENT: return "invalid argument";
    case IKP_ERR_OUT_OF_MEMORY: return "out of memory";
    case IKP_ERR_EMPTY: return "empty input";
    case IKP_ERR_TRUNCATED: return "input truncated";
    case IKP_ERR_BAD_MAGIC: return "bad magic (not an IKP buffer, or never initialised)";
    case IKP_ERR_BAD_VERSION: return "unsupported format version";
    case IKP_ERR_BAD_HEADER: return "header field out of range";
    case IKP_ERR_SIZE_OVERFLOW: return "size overflow";
    case IKP_ERR_UNKNOWN_FORMAT: return "unknown buffer format";
    case IKP_ERR_BAD_NAMES: return "malformed name list";
    case IKP_ERR_IO: return "i/o error";
    case IKP_ERR_WRITE: return "output callback failed";
    case IKP_ERR_CUDA: return "CUDA runtime error";
    case IKP_ERR_NO_CUDA: return "built without the CUDA runtime";
    default: return "unknown result code";
    }
}

static ikp_result ikp__fail(ikp_error *err, ikp_result code, int64_t offset, int64_t lane,
                            const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        err->offset = offset;
        err->lane = lane;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}
static ikp_result ikp__oom(ikp_error *err)
{
    return ikp__fail(err, IKP_ERR_OUT_OF_MEMORY, -1, -1, "out of memory");
}
static void ikp__ok(ikp_error *err)
{
    if (err) {
        err->code = IKP_OK;
        err->offset = -1;
        err->lane = -1;
        err->message[0] = 0;
    }
}

/* An allocator sets all three functions or none (the default): one that
   sets some is refused, not filled in with the default's. */
static ikp_result ikp__check_allocator(const ikp_allocator *a, ikp_error *err)
{
    int n;
    if (!a) return IKP_OK;
    n = (a->alloc != NULL) + (a->realloc != NULL) + (a->free != NULL);
    if (n == 0 || n == 3) return IKP_OK;
    return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1,
                     "the allocator sets some of its functions (alloc %s, realloc %s, free %s): set all three or none",
                     a->alloc ? "set" : "NULL", a->realloc ? "set" : "NULL", a->free ? "set" : "NULL");
}

IKP_DEF ikp_format ikp_format_from_name(const char *name)
{
    int f;
    if (!name) return IKP_FORMAT_COUNT;
    for (f = 0; f < (int)IKP_FORMAT_COUNT; f++)
        if (strcmp(name, ikp_format_name((ikp_format)f)) == 0) return (ikp_format)f;
    return IKP_FORMAT_COUNT;
}

/* >>buffer-impl: buffered output under every writer; numbers, JSON strings */
/* length of a valid UTF-8 sequence at s (n bytes left), 0 if invalid */
static size_t ikp__utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len, i;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (n < len) return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
}

typedef struct ikp__out {
    ikp_write_fn fn;
    void *user;
    char *buf;
    size_t n, cap;
    int failed;
} ikp__out;

static void ikp__flush(ikp__out *o)
{
    if (o->n && !o->failed && o->fn(o->user, o->buf, o->n) != 0) o->failed = 1;
    o->n = 0;
}
static void ikp__put(ikp__out *o, const char *s, size_t len)
{
    if (o->n + len > o->cap) {
        ikp__flush(o);
        if (len > o->cap) {
            if (!o->failed && o->fn(o->user, s, len) != 0) o->failed = 1;
            return;
        }
    }
    memcpy(o->buf + o->n, s, len);
    o->n += len;
}
static void ikp__puts(ikp__out *o, const char *s) { ikp__put(o, s, strlen(s)); }
static void ikp__out_init(ikp__out *o, ikp_write_fn fn, void *user, char *buf, size_t n)
{
    o->fn = fn; o->user = user; o->buf = buf; o->n = 0; o->cap = n; o->failed = 0;
}
/* Flushes o; a write that failed is IKP_ERR_WRITE, "writing the <what> failed". */
static ikp_result ikp__out_end(ikp__out *o, ikp_error *err, const char *what)
{
    ikp__flush(o);
    if (o->failed) return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the %s failed", what);
    ikp__ok(err);
    return IKP_OK;
}
#define IKP__PUT_LIT(o, lit) ikp__put(o, lit, sizeof(lit) - 1)
static void ikp__put_u64(ikp__out *o, uint64_t v)
{
    char t[24];
    int i = 24;
    do { t[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    ikp__put(o, t + i, (size_t)(24 - i));
}
/* raw formatting into a buffer the caller has made room in */
#define IKP__CPY(p, lit) (memcpy(p, lit, sizeof(lit) - 1), p += sizeof(lit) - 1)
#define IKP__HEAD 32  /* the most a trace event writes before its name */
#define IKP__TAIL 320 /* ... and after it */
static const char ikp__digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
/* decimal digits, two at a time */
static char *ikp__fmt_u64(char *p, uint64_t v)
{
    /* its digits counted first, then written from the last, two at a time:
       no copy through a scratch buffer (a number a field of every event) */
    static const uint64_t pow10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                       10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                       100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull,
                                       1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
                                       1000000000000000000ull, 10000000000000000000ull};
    int n = 1;
    char *end, *q;
    while (n < 20 && v >= pow10[n]) n++;
    end = q = p + n;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        *--q = ikp__digits2[d + 1];
        *--q = ikp__digits2[d];
    }
    if (v >= 10) {
        *--q = ikp__digits2[v * 2 + 1];
        *--q = ikp__digits2[v * 2];
    } else *--q = (char)('0' + v);
    return end;
}
/* ns as microseconds with 3 decimals */
static char *ikp__fmt_us(char *p, uint64_t ns)
{
    uint64_t frac = ns % 1000;
    p = ikp__fmt_u64(p, ns / 1000);
    p[0] = '.';
    p[1] = (char)('0' + frac / 100);
    p[2] = (char)('0' + frac / 10 % 10);
    p[3] = (char)('0' + frac % 10);
    return p + 4;
}
/* x with `decimals` digits after a '.', whatever the C locale (snprintf
   gives the digits; the locale's decimal separator, which may be ',' or
   several bytes, becomes '.'). Never nan or inf. Returns the length. */
static size_t ikp__fmt_fixed(char *t, size_t n, double x, int decimals)
{
    char b[400];
    size_t i, k = 0;
    int point = 0;
    if (!(x == x) || x > 1e300 || x < -1e300) x = 0;
    snprintf(b, sizeof b, "%.*f", decimals, x);
    for (i = 0; b[i] && k + 1 < n; i++) {
        char c = b[i];
        if ((c >= '0' && c <= '9') || (c == '-' && k == 0)) t[k++] = c;
        else if (!point && k && t[k - 1] >= '0' && t[k - 1] <= '9') { t[k++] = '.'; point = 1; }
    }
    t[k] = 0;
    return k;
}
static void ikp__put_f(ikp__out *o, double x, int decimals)
{
    char t[400];
    ikp__put(o, t, ikp__fmt_fixed(t, sizeof t, x, decimals));
}
/* x right-aligned in a column of w; a number wider than that still gets a
   space before it, so that columns never touch */
static void ikp__put_f_w(ikp__out *o, double x, int decimals, size_t w)
{
    char t[400];
    size_t n = ikp__fmt_fixed(t, sizeof t, x, decimals);
    if (n >= w) ikp__put(o, " ", 1);
    for (; n < w; w--) ikp__put(o, " ", 1);
    ikp__put(o, t, n);
}


/* JSON string body: escapes '"', '\\', bytes below 0x20; invalid UTF-8 -> U+FFFD */
static void ikp__put_json_chars(ikp__out *o, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str), i = 0, run = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len = c >= 0x20 && c != '"' && c != '\\' ? ikp__utf8_len(s + i, n - i) : 0;
        if (len) { i += len; run += len; continue; }
        if (run) ikp__put(o, (const char *)s + i - run, run);
        run = 0;
        if (c == '"') ikp__put(o, "\\\"", 2);
        else if (c == '\\') ikp__put(o, "\\\\", 2);
        else if (c == '\n') ikp__put(o, "\\n", 2);
        else if (c == '\t') ikp__put(o, "\\t", 2);
        else if (c < 0x20) {
            char u[6] = {'\\', 'u', '0', '0', 0, 0};
            u[4] = hex[c >> 4];
            u[5] = hex[c & 15];
            ikp__put(o, u, 6);
        } else ikp__put(o, "\\ufffd", 6);
        i++;
    }
    if (run) ikp__put(o, (const char *)s + n - run, run);
}

IKP_DEF int ikp_file_writer(void *user, const void *data, size_t size)
{
    return fwrite(data, 1, size, (FILE *)user) == size ? 0 : 1;
}

/* the display name of an event / group (default when unnamed) */
static const char *ikp__ev_name(const ikp_capture *cap, uint32_t id, char *tmp, size_t n)
{
    const char *s = ikp_event_name(cap, id);
    if (s) return s;
    snprintf(tmp, n, "event %u", id);
    return tmp;
}
static const char *ikp__gr_name(const ikp_capture *cap, uint32_t g, char *tmp, size_t n)
{
    const char *s = ikp_group_name(cap, g);
    if (s) return s;
    snprintf(tmp, n, "group %u", g);
    return tmp;
}

/* >>capfile-layout: capture file layout: magics, field offsets */
#define IKP__CAPT_MAGIC "IKPCAPT1"
#define IKP__CAPT_HEADER 48u
#define IKP__CLOCK_MAGIC "IKPCLOCK"     /* capture file version 2: the clock section */
#define IKP__CLOCK_ENTRY 32u
#define IKP__DEVICE_MAGIC "IKPDEVIC"    /* version 3: the device identity */
#define IKP__DEVICE_ENTRY 104u
#define IKP__PEERS_MAGIC "IKPPEERS"     /* version 3: other GPUs' clocks */
#define IKP__PEERS_ENTRY 40u
#define IKP__SMCLK_MAGIC "IKPSMCLK"     /* version 4: samples of the SM clocks */
#define IKP__SMCLK_ENTRY 24u
/* Byte offsets of the capture file's fields (FORMAT.md "Capture files"),
   for the reader and the writer alike. Header: */
#define IKP__AT_VERSION 8u
#define IKP__AT_FORMAT 12u
#define IKP__AT_EVENTS 16u
#define IKP__AT_GROUPS 20u
#define IKP__AT_NAMES_BYTES 24u
#define IKP__AT_WORDS 32u
/* a section: name (8), count (4), reserved (4), entries: */
#define IKP__AT_SECTION_COUNT 8u
#define IKP__AT_SECTION_RESERVED 12u
#define IKP__SECTION_HEADER 16u
/* IKPCLOCK entries: host_ns at 0 */
#define IKP__AT_CLOCK_GPU 8u
#define IKP__AT_CLOCK_UNCERTAINTY 16u
/* IKPDEVIC: uuid at 0 */
#define IKP__AT_DEVICE_HOST 16u
#define IKP__AT_DEVICE_ORDINAL 80u
#define IKP__AT_DEVICE_RANK 84u
#define IKP__AT_DEVICE_PCI_DOMAIN 88u
#define IKP__AT_DEVICE_PCI_BUS 92u
#define IKP__AT_DEVICE_PCI_DEVICE 96u
/* IKPPEERS: the peer's uuid at 0 */
#define IKP__AT_PEER_GPU 16u
#define IKP__AT_PEER_OFFSET 24u
#define IKP__AT_PEER_UNCERTAINTY 32u
#define IKP__AT_PEER_ROUND_TRIP 36u
/* IKPSMCLK: globaltimer at 0 */
#define IKP__AT_SMCLK_CYCLES 8u
#define IKP__AT_SMCLK_SM 16u
#define IKP__AT_SMCLK_RESERVED 20u

/* >>capture-types: a lane, its records and their time; the capture */
typedef struct ikp__lane {
    ikp_lane_info pub;
    uint64_t base;        /* word index of slot 0 (TIRx: offset into index) */
    uint64_t step;        /* words between slots */
    uint64_t slots;       /* slots to visit */
    uint64_t ring_start;  /* IKP ring: first slot */
    uint64_t ring_size;   /* IKP: slots wrap here */
    int pads;             /* IKP ring of pairs: zero words are pads, skipped */
    int64_t anchor;       /* tick at lane start: unwrap origin */
    int64_t end_anchor;   /* tick at lane end, if has_end */
    int has_end;
    int64_t ref_ps;       /* ps of tick == anchor, relative to capture start */
    double ps_per_tick;
    int64_t rel_limit;    /* ticks from anchor beyond which a stamp is corrupt */
    int64_t ps_per_tick_q32; /* ps_per_tick * 2^32, rounded */
    int64_t g_start;      /* cycle lanes: start anchor's globaltimer (ns) */
    int64_t end_ps;       /* cycle lanes with has_end: ps of the end anchor */
    int anchored;         /* cycle lane with anchors or SM clock samples: mapped piecewise */
    uint32_t smp_first;   /* cycle lanes: its SM's clock samples within its span: */
    uint32_t smp_end;     /*   cap->sm_clock[smp_first .. smp_end) */
    uint32_t kn_first;    /* cycle lanes mapped by their SM: its points cap->knots[kn_first .. kn_end) */
    uint32_t kn_end;      /*   and stretches cap->segs[sg_first .. sg_end) (none: kn_end = kn_first) */
    uint32_t sg_first, sg_end;
    int end_ok;           /* cycle lanes: the end anchor's two halves are usable */
    int ticks;            /* cycle lanes: begins carry ticks read at the end or instant before */
    int iticks;           /* ... and instants do (IKP_WIRE_LANE_ITICKS) */
    uint32_t grid[3];
    uint32_t index;       /* the lane's index (tirx stride layout: the lane its words name) */
} ikp__lane;

/* Peer formats keep no per-lane state: a lane's layout and time origin
   follow from the capture's and from its first record (ikp__peer_lane), so
   a buffer of millions of tiny lanes costs no memory per lane. */
struct ikp_capture {
    ikp_allocator alloc;
    ikp_format format;
    const uint64_t *words;
    size_t num_words;
    void *owned;          /* memory holding the words, when the capture owns it */
    uint64_t words_at;    /* with words_in_file: the words' offset in the file they were read from */
    int words_in_file;    /*   (ikp_capture_open_path, the words read in place) */
    uint64_t rest_hash;   /* FNV-1a of the file's bytes other than its words (header, names, sections):
                             the export's second reading finds a file changed meanwhile */
    ikp__lane *lanes;     /* ikp: one per lane */
    uint32_t *index;      /* tirx, index layout: word positions grouped by lane */
    uint64_t *index_base; /* tirx, index layout: lane i at index[index_base[i] .. index_base[i+1]) */
    uint64_t stride;      /* tirx stride layout, flashinfer, triton-dist: words between a lane's slots */
    uint64_t base0;       /* peer formats: word of lane 0's first slot (triton-dist: after the block words) */
    int64_t tick_ps;      /* peer formats: ps per timer tick */
    uint64_t unit_words;  /* nuggets: words per unit */
    int64_t nug_ref;      /* nuggets: the middle of the stamps (the validity window's centre) */
    uint32_t peer_vmin;   /* peer formats: the capture window's first stamp (low 32 bits) */
    int64_t peer_shift_ps;/* peer formats: taken off every time so the earliest record is at 0 */
    int keep_after_finalize;
    uint64_t gref_ns;     /* ikp: the earliest start anchor's globaltimer (ns): time 0 before the shift */
    ikp_clock_sync *clock;/* readings of the GPU clock against the host's, in gpu_ns order */
    ikp_device_id device; /* the GPU, when info.device_known */
    ikp_peer_clock *peers;/* other GPUs' clocks, by (peer uuid, gpu_ns) */
    ikp_sm_clock *sm_clock;/* samples of the SM clocks, by (sm, cycles) */
    struct ikp__reading *readings; /* the SMs' clock readings, by SM, while their mappings are fit */
    struct ikp__knot *knots;       /* the points of each SM's mapping, by (sm, tick) */
    struct ikp__fitseg *segs;      /* its stretches, by (sm, tick) */
    double *fit_v;                 /* their corners */
    double *fit_loc;               /* how far the truth may lie from them, between two of their points */
    uint32_t num_readings, num_knots, num_segs, num_fit_v, num_fit_loc;
    size_t fit_loc_room;
    ikp_capture_info info;
    char **event_names;
    uint32_t num_event_names;
    char **group_names;
    uint32_t num_group_names;
};

/* One reading of an SM's clock as the fit takes it (section capture-sm):
   at cycle tick (62 bits, the lanes' tick axis) the capture's time stood
   within [lo, hi] ps. A tick count's lower end is soft: a globaltimer
   read that waited after its stamp makes it late, never early (its upper
   end holds either way). */
typedef struct ikp__reading {
    int64_t tick, lo, hi;
    uint32_t sm;
    int soft;
    int use;    /* in the fit: 2 both ends, 1 its upper end only (a late read), 0 left out */
} ikp__reading;

/* A point of an SM's mapping: tick -> ps, straight between points */
typedef struct ikp__knot {
    int64_t tick, ps;
    uint32_t sm;
} ikp__knot;

/* A stretch of an SM's mapping over readings c0 .. c1 (ticks): the line
   ps0 + a + b (tick - c0) that the fit chose among the lines that pass
   within every reading's width there, whose corners (a, b pairs) are
   cap->fit_v[2 v0 .. 2 (v0 + nv)) */
typedef struct ikp__fitseg {
    int64_t c0, c1, ps0;
    double a, b;
    uint32_t v0, nv, sm;
    int rated;          /* its readings say its rate (to 1%; else only where they are) */
    int64_t gap;        /* the longest distance between two of its readings (ticks) ... */
    int64_t gap_at;     /* ... from this reading's tick, and the longest of the others */
    int64_t gap2;
    int jump;           /* 1: joined to the next stretch straight from its last reading to the next one's
                           first (0: their lines cross between them, where the mapping turns) */
    double widen;       /* ps: its SM's readings left out, the farthest off: added to every bound */
    double unvouched;   /* ps: how far its line (and the join after it) strays from the mapping of the
                           anchors and samples alone, past both bounds: added to its records' bound */
    double local;       /* ps: on it, how far the truth may lie from the mapping, at most (ikp__fit_local;
                           -1: the polygon's spread, ikp__fit_spread) ... */
    uint32_t loc0, nloc;/* ... and between each two of its points: cap->fit_loc[loc0 .. loc0 + nloc) */
    uint32_t r0, r1;    /* while it is fit: its readings' first and last index */
} ikp__fitseg;

typedef struct ikp__rec {
    unsigned kind;     /* IKP_WIRE_KIND_* or IKP__KIND_FINALIZE / IKP__KIND_INVALID */
    uint32_t id;       /* IKP__KIND_ANCHOR_AUTO: the cycles from the previous record's stamp */
    uint32_t hi;       /* timer low 32 bits, or payload */
    uint32_t width;    /* IKP__KIND_ANCHOR_AUTO: cycles between the reads around its tick (0: not said) */
    uint32_t ticks;    /* begin, instant: tag bits 16..29 (lanes flagged IKP_WIRE_LANE_TICKS, instants
                          IKP_WIRE_LANE_ITICKS) */
} ikp__rec;
#define IKP__KIND_FINALIZE 4u
#define IKP__KIND_INVALID 5u
#define IKP__KIND_ANCHOR_G 6u /* IKP_ANCHOR: globaltimer half, then the clock half */
#define IKP__KIND_ANCHOR_C 7u
#define IKP__KIND_ANCHOR_AUTO 8u /* an automatic anchor: globaltimer, cycles after the record before */

/* >>capture-formats: the input formats, one row each */
/* What differs between formats is said once, in a row of ikp__formats,
   and each format's functions are one block further down (IKP buffers,
   tirx, flashinfer, triton-dist, transformer_nuggets), reached only
   through its row: its name, what kind of buffer it is (IKP__FMT_*), how
   a record word of a peer format reads (event id and kind; the flags say
   whether it must name its own lane), which words a lane's walk skips,
   and its functions: the mark a buffer of it carries (check), how well a
   header-less buffer reads as it (fit, the vote of ikp__detect_peer), the
   open, the lanes made from the words when the capture keeps none (lane),
   a lane's first pass (scan) and the GPU time of its stamps (origin).
   ikp__choose_format names the format first: by a row's mark (the IKP
   magic), by the vote among the peer formats, or by ikp__detect_nuggets.
   Adding a format: an ikp_format value, its block and a row here; the
   names the library and the tool print come from the rows. The
   per-record decode reads the row's fields, never a function (a call per
   record word would cost the decode its speed). */
#define IKP__FMT_PEER 1u       /* word 0 = (groups << 32) | blocks, a lane field in every record */
#define IKP__FMT_NUGGETS 2u    /* transformer_nuggets: slices of unit_words words, 64-bit stamps */
#define IKP__FMT_OWN_CLOCK 4u  /* the buffer says what its stamps count: timer_unit_ps is refused */
#define IKP__FMT_LANE_FIELD 8u /* a record belongs to the lane its lane field names, wherever it sits */
#define IKP__FMT_OWN_LANE 16u  /* a record whose lane field is not its slot's lane reads as invalid */
#define IKP__FMT_FILLED 32u    /* empty slots read 0x7FFF... or 0xFFFF... as well as 0 (IKP__TD_EMPTY) */
typedef struct ikp__open_args {
    const ikp_decode_options *opt;
    uint32_t units;           /* nuggets: units given (0: inferred) */
    int strided;              /* tirx: every record sits at 1 + lane + k * lanes (from detection) */
} ikp__open_args;
/* How well the words of a header-less buffer read as one peer format
   (its fit function). The format more words fit wins; a tie goes to the
   higher rank, and is reported (detect_tie) when a format in it holds a
   guess: its rank did not say for sure whether it wins or loses. */
typedef struct ikp__fit {
    uint64_t records;         /* the nonzero words after word 0 (0: not counted) */
    uint64_t fit;             /* the words that read as this format */
    int rank;                 /* IKP__RANK_*: who wins a tie */
    int guess;                /* a tie with it is a guess */
    int strided;              /* tirx: every record sits at 1 + lane + k * lanes */
} ikp__fit;
#define IKP__RANK_LOSES 0     /* triton-dist whose block words are not all well formed */
#define IKP__RANK_SCATTERED 1 /* tirx whose records do not sit strided by the lanes */
#define IKP__RANK_PLAIN 2     /* flashinfer */
#define IKP__RANK_STRIDED 3   /* tirx whose records sit strided by the lanes */
#define IKP__RANK_MARKED 4    /* triton-dist whose block words read (sm << 32) | block */
typedef struct ikp__format_desc {
    const char *name;         /* ikp_format_name, --format */
    unsigned flags;           /* IKP__FMT_* */
    unsigned id_shift, id_mask, kind_mask; /* peer records: id = tag >> id_shift & id_mask, */
    uint8_t kinds[4];         /* kind = kinds[tag & kind_mask] */
    int walk;                 /* ikp__cursor.mode: the words a lane's walk skips */
    /* a mark that only this format's buffers carry: auto-detection takes
       the first row whose mark the words carry (err NULL); a buffer named
       this format without it is refused with err saying why (what: what
       ikp__sniff says the bytes are, or NULL) */
    ikp_result (*check)(const uint64_t *w, const char *what, ikp_error *err);
    /* peer formats: how well the n words read as this format (the vote) */
    void (*fit)(const uint64_t *w, uint64_t n, uint64_t nb, uint64_t ng, ikp__fit *f);
    ikp_result (*open)(ikp_capture *cap, const ikp__open_args *a, ikp_error *err);
    /* formats whose capture keeps no lanes: lane i made from the words (l
       comes with the fields every such lane shares: ikp__peer_lane) */
    void (*lane)(const ikp_capture *cap, uint32_t i, ikp__lane *l);
    /* a started lane's first pass: counts and time range; info, when
       given, adds the format's own figures (the lane's are added by the
       caller) */
    void (*scan)(const ikp_capture *cap, ikp__lane *l, ikp_capture_info *info);
    /* the GPU's globaltimer (ns) at tick 0 of the capture's axis, when the
       stamps give it: 1 with *ns, else 0 (NULL: never) */
    int (*origin)(const ikp_capture *cap, uint64_t *ns);
} ikp__format_desc;
static ikp_result ikp__ikp_check(const uint64_t *w, const char *what, ikp_error *err);
static ikp_result ikp__json_check(const uint64_t *w, const char *what, ikp_error *err);
static ikp_result ikp__open_ikp(ikp_capture *cap, const ikp__open_args *a, ikp_error *err);
static void ikp__ikp_scan(const ikp_capture *cap, ikp__lane *l, ikp_capture_info *info);
static int ikp__ikp_origin(const ikp_capture *cap, uint64_t *ns);
static void ikp__tirx_fit(const uint64_t *w, uint64_t n, uint64_t nb, uint64_t ng, ikp__fit *f);
static ikp_result ikp__open_tirx(ikp_capture *cap, const ikp__open_args *a, ikp_error *err);
static void ikp__tirx_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l);
static void ikp__flashinfer_fit(const uint64_t *w, uint64_t n, uint64_t nb, uint64_t ng, ikp__fit *f);
static ikp_result ikp__open_flashinfer(ikp_capture *cap, const ikp__open_args *a, ikp_error *err);
static void ikp__flashinfer_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l);
static void ikp__td_fit(const uint64_t *w, uint64_t n, uint64_t nb, uint64_t ng, ikp__fit *f);
static ikp_result ikp__open_td(ikp_capture *cap, const ikp__open_args *a, ikp_error *err);
static void ikp__td_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l);
static void ikp__scan_lane(const ikp_capture *cap, ikp__lane *l, ikp_capture_info *info);
static ikp_result ikp__open_nuggets(ikp_capture *cap, const ikp__open_args *a, ikp_error *err);
static void ikp__nug_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l);
static void ikp__nug_scan_lane(const ikp_capture *cap, ikp__lane *l, ikp_capture_info *info);
static int ikp__nug_origin(const ikp_capture *cap, uint64_t *ns);
#define IKP__K_B IKP_WIRE_KIND_BEGIN
#define IKP__K_E IKP_WIRE_KIND_END
#define IKP__K_I IKP_WIRE_KIND_INSTANT
static const ikp__format_desc ikp__formats[IKP_FORMAT_COUNT] = {
    {"auto", 0, 0, 0, 0, {0, 0, 0, 0}, 0, NULL, NULL, NULL, NULL, NULL, NULL},
    {"ikp", IKP__FMT_OWN_CLOCK, 0, 0, 0, {0, 0, 0, 0}, 0,
     ikp__ikp_check, NULL, ikp__open_ikp, NULL, ikp__ikp_scan, ikp__ikp_origin},
    /* tirx: lane[31:12] | id[11:2] | kind[1:0] (3: the lane's finalize); empty words skipped when strided */
    {"tirx", IKP__FMT_PEER | IKP__FMT_LANE_FIELD, 2, 0x3FFu, 3u, {IKP__K_B, IKP__K_E, IKP__K_I, IKP__KIND_FINALIZE}, 2,
     NULL, ikp__tirx_fit, ikp__open_tirx, ikp__tirx_lane, ikp__scan_lane, NULL},
    /* flashinfer: block[23:12] | id[11:2] | kind[1:0] (3: invalid), sm[31:24]; zero words skipped */
    {"flashinfer", IKP__FMT_PEER, 2, 0x3FFu, 3u, {IKP__K_B, IKP__K_E, IKP__K_I, IKP__KIND_INVALID}, 1,
     NULL, ikp__flashinfer_fit, ikp__open_flashinfer, ikp__flashinfer_lane, ikp__scan_lane, NULL},
    /* triton-dist: lane[31:12] | task_type[11:1] | is_start[0]; empty-slot values skipped */
    {"triton-dist", IKP__FMT_PEER | IKP__FMT_OWN_LANE | IKP__FMT_FILLED, 1, 0x7FFu, 1u, {IKP__K_E, IKP__K_B, 0, 0}, 3,
     NULL, ikp__td_fit, ikp__open_td, ikp__td_lane, ikp__scan_lane, NULL},
    {"nuggets", IKP__FMT_NUGGETS, 0, 0, 0, {0, 0, 0, 0}, 0,
     NULL, NULL, ikp__open_nuggets, ikp__nug_lane, ikp__nug_scan_lane, ikp__nug_origin},
    {"nuggets-compact", IKP__FMT_NUGGETS, 0, 0, 0, {0, 0, 0, 0}, 0,
     NULL, NULL, ikp__open_nuggets, ikp__nug_lane, ikp__nug_scan_lane, ikp__nug_origin},
    /* proton: a JSON file, read into IKP words (capture-proton); words named it are refused */
    {"proton", IKP__FMT_OWN_CLOCK, 0, 0, 0, {0, 0, 0, 0}, 0,
     ikp__json_check, NULL, ikp__open_ikp, NULL, ikp__ikp_scan, ikp__ikp_origin},
    /* iket: the same (capture-iket) */
    {"iket", IKP__FMT_OWN_CLOCK, 0, 0, 0, {0, 0, 0, 0}, 0,
     ikp__json_check, NULL, ikp__open_ikp, NULL, ikp__ikp_scan, ikp__ikp_origin},
};
#undef IKP__K_B
#undef IKP__K_E
#undef IKP__K_I
/* the caller's name for option m (an ikp_option_names member) in names,
   which may be NULL; else the option's own name */
static const char *ikp__opt(const ikp_option_names *names, size_t at, const char *own)
{
    const char *given = NULL;
    if (names) memcpy(&given, (const char *)names + at, sizeof given);
    return given ? given : own;
}
#define IKP__OPT(names, m) ikp__opt((names), offsetof(ikp_option_names, m), #m)
static int ikp__is_nuggets(ikp_format f) { return (unsigned)f < IKP_FORMAT_COUNT && (ikp__formats[f].flags & IKP__FMT_NUGGETS); }

IKP_DEF const char *ikp_format_name(ikp_format f)
{
    return (unsigned)f < IKP_FORMAT_COUNT ? ikp__formats[f].name : "?";
}

/* >>capture-records: a record word decoded; the cursor over a lane */
/* tag bits that must be 0: on an anchor half (IKP_ANCHOR), on a data
   record, on a timed record (begin, end, instant) */
#define IKP__TAG_ANCHOR_ZERO (IKP_WIRE_AUTO_DELTA_MAX << IKP_WIRE_AUTO_DELTA_SHIFT | IKP_WIRE_KIND_MASK)
#define IKP__TAG_DATA_ZERO (IKP_WIRE_ANCHOR | IKP__TAG_ANCHOR_ZERO)
#define IKP__TAG_TIMED_ZERO (~(IKP_WIRE_EVENT_MASK << IKP_WIRE_EVENT_SHIFT | IKP_WIRE_KIND_MASK))
/* ... but for the ticks a begin or an instant may carry (FORMAT.md) */
#define IKP__TAG_TICKS (IKP_WIRE_TICKS_MASK << IKP_WIRE_TICKS_SHIFT)
/* one record word of lane `lane`: by IKP's wire format, or as its peer
   format's row says */
static inline void ikp__decode_word(ikp_format fmt, uint64_t w, uint32_t lane, ikp__rec *r)
{
    uint32_t tag = (uint32_t)w;
    r->hi = (uint32_t)(w >> 32);
    r->width = 0;
    r->ticks = 0;
    if (fmt == IKP_FORMAT_IKP) {
        r->id = (tag >> IKP_WIRE_EVENT_SHIFT) & IKP_WIRE_EVENT_MASK;
        if (w == 0) r->kind = IKP__KIND_INVALID;
        else if ((tag & (IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR)) == (IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR)) {
            if (r->id >= IKP_WIRE_AUTO_ANCHOR_ID && !(tag & IKP_WIRE_KIND_MASK)) {
                r->kind = IKP__KIND_ANCHOR_AUTO;
                r->width = r->id - IKP_WIRE_AUTO_ANCHOR_ID;
                r->id = (tag >> IKP_WIRE_AUTO_DELTA_SHIFT) & IKP_WIRE_AUTO_DELTA_MAX;
            } else
                r->kind = (tag & IKP__TAG_ANCHOR_ZERO) ? IKP__KIND_INVALID
                          : r->id == 0 ? IKP__KIND_ANCHOR_G : r->id == 1 ? IKP__KIND_ANCHOR_C : IKP__KIND_INVALID;
        }
        else if (tag & IKP_WIRE_DATA_MARK)
            r->kind = ((tag & IKP__TAG_DATA_ZERO) == 0) ? IKP_WIRE_KIND_DATA : IKP__KIND_INVALID;
        else if ((tag & IKP_WIRE_KIND_MASK) == 0) r->kind = IKP__KIND_INVALID;
        else {
            r->kind = tag & IKP_WIRE_KIND_MASK;
            r->ticks = tag >> IKP_WIRE_TICKS_SHIFT & IKP_WIRE_TICKS_MASK;
            if (tag & IKP__TAG_TIMED_ZERO & ~(r->kind != IKP_WIRE_KIND_END ? IKP__TAG_TICKS : 0u))
                r->kind = IKP__KIND_INVALID;
        }
        return;
    }
    { /* a peer format: its row says how the word reads */
        const ikp__format_desc *d = &ikp__formats[fmt];
        r->id = (tag >> d->id_shift) & d->id_mask;
        r->kind = d->kinds[tag & d->kind_mask];
        /* triton-dist: the tag names its lane (20 bits, the kernel does not mask it) */
        if ((d->flags & IKP__FMT_OWN_LANE) && (tag >> 12) != (lane & 0xFFFFFu)) r->kind = IKP__KIND_INVALID;
    }
}

/* a word of IKP lane l: as ikp__decode_word reads it, and ticks on a lane
   not flagged for them (on an instant: for instants' ticks) make the
   record invalid (FORMAT.md "Ticks") */
static inline void ikp__lane_word(const ikp_capture *cap, const ikp__lane *l, uint64_t w, ikp__rec *r)
{
    ikp__decode_word(cap->format, w, l->index, r);
    if (r->ticks && !(r->kind == IKP_WIRE_KIND_INSTANT ? l->iticks : l->ticks)) r->kind = IKP__KIND_INVALID;
}

/* triton-dist: an empty slot (the buffer is filled with 0x7FFF_FFFF_FFFF_FFFF,
   0xFFFF_FFFF_FFFF_FFFF in its first release; 0 if the user zeroed it) */
#define IKP__TD_EMPTY(x) ((x) == 0 || (x) == 0x7FFFFFFFFFFFFFFFull || (x) == 0xFFFFFFFFFFFFFFFFull)

/* Walks one lane's records in order: up to two strided runs of words (an
   IKP ring wraps once), or TIRx's index of word positions. */
typedef struct ikp__cursor {
    const uint64_t *p, *p2, *words;
    const uint32_t *idx;
    size_t step, left, left2;
    int mode;             /* 0: every word; 1: empty (zero) words skipped (flashinfer);
                             2: also words naming another lane (tirx stride layout);
                             3: triton-dist's empty words skipped (0, 0x7FFF..., 0xFFFF...) */
    uint32_t lane;
} ikp__cursor;

static void ikp__cursor_init(ikp__cursor *c, const ikp_capture *cap, const ikp__lane *l)
{
    c->words = cap->words;
    c->idx = NULL;
    c->p2 = NULL;
    c->left2 = 0;
    c->step = (size_t)l->step;
    c->lane = l->index;
    c->mode = cap->index ? 0 : l->pads ? 1 : ikp__formats[cap->format].walk;
    if (cap->index) { /* tirx's index layout: the lane's own words only */
        c->idx = cap->index + l->base;
        c->p = NULL;
        c->left = (size_t)l->slots;
    } else if (l->ring_size && l->ring_start) {
        c->p = cap->words + l->base + l->ring_start;
        c->left = (size_t)(l->ring_size - l->ring_start);
        if (c->left > l->slots) c->left = (size_t)l->slots;
        c->p2 = cap->words + l->base;
        c->left2 = (size_t)(l->slots - c->left);
    } else {
        c->p = cap->words + l->base;
        c->left = (size_t)l->slots;
    }
}

static inline int ikp__next_word(ikp__cursor *c, uint64_t *w)
{
    for (;;) {
        while (c->left) {
            c->left--;
            if (c->idx) *w = c->words[*c->idx++];
            else {
#if defined(__GNUC__) || defined(__clang__)
                /* a strided lane's words lie pages apart, where the hardware does not
                   fetch ahead: asked for 16 words before they are read */
                if (c->step > 1 && c->left > 16) __builtin_prefetch(c->p + 16 * c->step);
#endif
                *w = *c->p;
                c->p += c->step;
            }
            if (c->mode == 0) return 1;
            if (c->mode == 3) { if (!IKP__TD_EMPTY(*w)) return 1; }
            else if (*w && (c->mode == 1 || ((uint32_t)*w >> 12) == c->lane)) return 1;
        }
        if (!c->left2) return 0;
        c->p = c->p2;
        c->left = c->left2;
        c->left2 = 0;
    }
}

/* >>capture-walk: a lane's walk: stamps, anchors, segments */
/* Time state of one lane: unwraps 32-bit stamps onto the lane's 64-bit axis. */
typedef struct ikp__clock {
    int64_t prev;
    uint64_t backwards;
} ikp__clock;

/* Advances the lane clock to the 32-bit stamp lo: returns 0 if the stamp
   cannot be placed (corrupt), else 1 with ck->prev = the 64-bit tick. */
static inline int ikp__unwrap(const ikp__lane *l, ikp__clock *ck, uint32_t lo)
{
    uint32_t d = lo - (uint32_t)ck->prev;
    int64_t cand = ck->prev + (int64_t)d, rel;
    if (l->has_end ? cand > l->end_anchor : d >= 0x80000000u)
        cand = ck->prev + (int64_t)(int32_t)d;
    rel = cand - l->anchor;
    if (rel > l->rel_limit || rel < -l->rel_limit) return 0;
    if (cand < ck->prev) ck->backwards++;
    ck->prev = cand;
    return 1;
}

/* tick -> ps on the capture axis (|tick - anchor| <= rel_limit) */
#if defined(__SIZEOF_INT128__)
__extension__ typedef __int128 ikp__i128;
static int64_t ikp__ps(const ikp__lane *l, int64_t tick)
{
    /* 32.32 fixed point: exact for ns lanes, < 1 ps per 2^32 ticks for cycle lanes */
    ikp__i128 x = (ikp__i128)(tick - l->anchor) * (ikp__i128)l->ps_per_tick_q32;
    return l->ref_ps + (int64_t)((x + ((ikp__i128)1 << 31)) >> 32);
}
#else
static int64_t ikp__ps(const ikp__lane *l, int64_t tick)
{
    double x = (double)(tick - l->anchor) * l->ps_per_tick;
    return l->ref_ps + (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}
#endif

static int ikp__timed(unsigned kind)
{
    return kind == IKP_WIRE_KIND_BEGIN || kind == IKP_WIRE_KIND_END ||
           kind == IKP_WIRE_KIND_INSTANT || kind == IKP__KIND_FINALIZE;
}

/* A walk over one lane's records with its time mapping. Cycle lanes with
   IKP_ANCHOR records are mapped piecewise: from each anchor point (the
   lane's start, then each valid anchor) to the next valid anchor, or to the
   lane's end anchor after the last one. An anchor is valid if it lies ahead
   of the current point and the segment to it runs within 10% of the lane's
   rate; others are ignored. Every walk takes the same decisions, because
   validity only depends on the current point and the records. */
typedef struct ikp__walk {
    ikp__cursor c;
    ikp__clock ck;
    int64_t pt_tick, pt_ps; /* current anchor point */
    double ppt;             /* ps per tick from it (segments) */
    int seg;                /* 0: the lane's own mapping (ikp__ps) */
    int have_g;             /* an anchor's globaltimer half was just read */
    int after_stamp;        /* the record just read was timed and placed (at ck.prev) */
    uint32_t g_lo;
    uint64_t words;         /* records read so far, anchors included */
    uint64_t anchors;       /* anchor records read so far */
    int saw_anchor;         /* an anchor's two halves were read */
    int stop_at_finalize;   /* a finalize record (tirx's kind 3) closes the lane */
    int closed;             /* ... and was read */
    uint32_t si;            /* the first SM clock sample not yet passed */
    uint32_t sj;            /* the sample the current segment runs to (if s_tick is not INT64_MAX) */
    int64_t s_tick, s_ps;   /* ... its tick and ps (s_tick INT64_MAX: none) */
    int64_t seg_end;        /* the tick of the mapping point ahead (INT64_MAX: none, the
                               mapping runs on at a rate) */
    const struct ikp__knot *kn; /* a lane mapped by its SM: the SM's points ... */
    uint32_t nk, ki;        /* ... how many, and the one at or before the last tick mapped */
} ikp__walk;

static int64_t ikp__knot_ps(const ikp__lane *l, ikp__walk *k, int64_t tick);
static inline int64_t ikp__walk_ps(const ikp__lane *l, ikp__walk *k, int64_t tick)
{
    double x;
    if (k->nk) return ikp__knot_ps(l, k, tick);
    if (!k->seg) return ikp__ps(l, tick);
    x = (double)(tick - k->pt_tick) * k->ppt;
    return k->pt_ps + (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

/* a segment from the current point to (tick, ps): ahead, and within 10% of
   the lane's rate */
static int ikp__segment_ok(const ikp__lane *l, const ikp__walk *k, int64_t tick, int64_t ps)
{
    double r;
    if (tick <= k->pt_tick || ps <= k->pt_ps) return 0;
    r = (double)(ps - k->pt_ps) / (double)(tick - k->pt_tick);
    return r > l->ps_per_tick * 0.9 && r < l->ps_per_tick * 1.1;
}

/* ps of an anchor at tick whose globaltimer reads g_lo (low 32 bits), taken
   nearest to where the lane's rate puts it; 0 if it is not valid */
static int ikp__anchor_ps(const ikp__lane *l, const ikp__walk *k, int64_t tick, uint32_t g_lo, int64_t *ps)
{
    double exp_ps;
    int64_t eg, g;
    if (tick <= k->pt_tick) return 0;
    exp_ps = (double)k->pt_ps + (double)(tick - k->pt_tick) * l->ps_per_tick;
    eg = l->g_start + (int64_t)((exp_ps - (double)l->ref_ps) / 1000.0);
    g = eg + (int32_t)(g_lo - (uint32_t)eg);
    *ps = l->ref_ps + (g - l->g_start) * 1000;
    return ikp__segment_ok(l, k, tick, *ps);
}

/* an SM clock sample's cycle on a cycle lane's tick axis */
static int64_t ikp__sample_tick(const ikp_sm_clock *s)
{
    return (int64_t)(s->cycles & IKP__ANCHOR_MASK);
}

/* The SM clock sample the segment from the current point runs to (k->sj,
   s_tick, s_ps). A sample locates its tick to a few cycles either way, so
   a knot at every sample would bend a region that spans one by the noise
   of two (tens of cycles where two samples came close together). The
   segment runs instead to the furthest sample such that every valid sample
   up to it lies within IKP__SAMPLE_TOL_PS of the chord (a swinging door):
   one straight segment while the SM clock keeps its speed, a knot where it
   changes. Samples not valid from the point are passed over. */
#define IKP__SAMPLE_TOL_PS 8000
/* How far the globaltimer of one SM's samples may seem to go back: a sample
   places its tick to a few cycles, but two taken at once (two sampling
   blocks on one SM) can differ by a few ns either way, and samples of
   older versions were the mean of pairs each up to a poll late. The
   decoder passes over a sample that does not lie ahead of the lane's last
   point at about its rate. */
#define IKP__SMCLK_SLACK_NS 64u
static void ikp__walk_sample(const ikp_capture *cap, const ikp__lane *l, ikp__walk *k)
{
    double lo = -1e300, hi = 1e300;
    uint32_t j;
    k->s_tick = INT64_MAX;
    for (j = k->si; j < l->smp_end; j++) {
        const ikp_sm_clock *s = &cap->sm_clock[j];
        int64_t tick = ikp__sample_tick(s);
        int64_t ps = l->ref_ps + ((int64_t)(s->gpu_ns & IKP__ANCHOR_MASK) - l->g_start) * 1000;
        double dt, m, d_lo, d_hi;
        if (!ikp__segment_ok(l, k, tick, ps)) continue;
        dt = (double)(tick - k->pt_tick);
        m = (double)(ps - k->pt_ps) / dt;
        if (m < lo || m > hi) break; /* the chord to it would leave a sample before it behind */
        k->sj = j;
        k->s_tick = tick;
        k->s_ps = ps;
        /* the slopes of the chords that pass within the tolerance of it */
        d_lo = (double)(ps - IKP__SAMPLE_TOL_PS - k->pt_ps) / dt;
        d_hi = (double)(ps + IKP__SAMPLE_TOL_PS - k->pt_ps) / dt;
        if (d_lo > lo) lo = d_lo;
        if (d_hi < hi) hi = d_hi;
        if (lo > hi) break;
    }
}

/* the mapping from the current point: to the next valid anchor or SM clock
   sample ahead, whichever comes first */
static void ikp__walk_segment(const ikp_capture *cap, const ikp__lane *l, ikp__walk *k)
{
    ikp__cursor c = k->c;
    ikp__clock ck = k->ck;
    int have_g = k->have_g, stamped = 0;
    uint32_t g_lo = k->g_lo;
    int64_t nt = 0, nps = 0;
    uint64_t w;
    int found = 0;
    k->seg_end = l->has_end ? l->end_anchor : INT64_MAX;
    if (!l->anchored) { k->seg = 0; return; }
    ikp__walk_sample(cap, l, k);
    /* records past the next sample cannot hold an earlier anchor */
    while (!found && ck.prev < k->s_tick && ikp__next_word(&c, &w)) {
        ikp__rec r;
        int was_stamped = stamped;
        ikp__lane_word(cap, l, w, &r);
        stamped = 0;
        if (r.kind == IKP__KIND_ANCHOR_AUTO) {
            if (was_stamped && ikp__anchor_ps(l, k, ck.prev + r.id, r.hi, &nps)) {
                nt = ck.prev + r.id;
                found = 1;
            }
            have_g = 0;
            continue;
        }
        if (r.kind == IKP__KIND_ANCHOR_G) { have_g = 1; g_lo = r.hi; continue; }
        if (r.kind == IKP__KIND_ANCHOR_C) {
            if (have_g && ikp__unwrap(l, &ck, r.hi) && ikp__anchor_ps(l, k, ck.prev, g_lo, &nps)) {
                nt = ck.prev;
                found = 1;
            }
            have_g = 0;
            continue;
        }
        have_g = 0;
        if (r.kind != IKP__KIND_INVALID && ikp__timed(r.kind)) stamped = ikp__unwrap(l, &ck, r.hi);
    }
    if (k->s_tick != INT64_MAX && (!found || k->s_tick < nt)) {
        nt = k->s_tick;
        nps = k->s_ps;
        found = 1;
    }
    if (!found && l->has_end && k->pt_tick != l->anchor && ikp__segment_ok(l, k, l->end_anchor, l->end_ps)) {
        nt = l->end_anchor;
        nps = l->end_ps;
        found = 1;
    }
    if (found) {
        k->seg = 1;
        k->ppt = (double)(nps - k->pt_ps) / (double)(nt - k->pt_tick);
        k->seg_end = nt;
    } else if (k->pt_tick != l->anchor) { /* past the last anchor, no end: the lane's rate */
        k->seg = 1;
        k->ppt = l->ps_per_tick;
        k->seg_end = INT64_MAX;
    } else {
        k->seg = 0;
    }
}

static void ikp__walk_init(const ikp_capture *cap, const ikp__lane *l, ikp__walk *k)
{
    ikp__cursor_init(&k->c, cap, l);
    k->ck.prev = l->anchor;
    k->ck.backwards = 0;
    k->pt_tick = l->anchor;
    k->pt_ps = l->ref_ps;
    k->have_g = 0;
    k->after_stamp = 0;
    k->g_lo = 0;
    k->words = 0;
    k->anchors = 0;
    k->saw_anchor = 0;
    k->stop_at_finalize = !cap->keep_after_finalize; /* only a row that decodes finalize records has them */
    k->closed = 0;
    k->si = l->smp_first;
    k->sj = l->smp_first;
    k->s_tick = INT64_MAX;
    k->s_ps = 0;
    k->kn = l->kn_end > l->kn_first ? cap->knots + l->kn_first : NULL;
    k->nk = l->kn_end - l->kn_first;
    k->ki = 0;
    ikp__walk_segment(cap, l, k);
}

/* Next record of the walk, anchors consumed (they move the mapping): 0 at
   the end. Inline, as the per-record step of every decode. For timed records *tick_ok says whether the stamp could be
   placed; then k->ck.prev is its tick. */
static inline int ikp__walk_next(const ikp_capture *cap, const ikp__lane *l, ikp__walk *k, ikp__rec *r, int *tick_ok)
{
    uint64_t w;
    while (!k->closed && ikp__next_word(&k->c, &w)) {
        int stamped = k->after_stamp;
        k->words++;
        ikp__lane_word(cap, l, w, r);
        k->after_stamp = 0;
        if (r->kind == IKP__KIND_ANCHOR_AUTO || r->kind == IKP__KIND_ANCHOR_G || r->kind == IKP__KIND_ANCHOR_C)
            k->anchors++;
        if (r->kind == IKP__KIND_ANCHOR_AUTO) { /* at the cycles r->id after the record before */
            int64_t ps;
            if (stamped) k->saw_anchor = 1;
            if (stamped && l->anchored && ikp__anchor_ps(l, k, k->ck.prev + r->id, r->hi, &ps)) {
                k->pt_tick = k->ck.prev + r->id;
                k->pt_ps = ps;
                ikp__walk_segment(cap, l, k);
            }
            k->have_g = 0;
            continue;
        }
        if (r->kind == IKP__KIND_ANCHOR_G) { k->have_g = 1; k->g_lo = r->hi; continue; }
        if (r->kind == IKP__KIND_ANCHOR_C) {
            int64_t ps;
            if (k->have_g) k->saw_anchor = 1;
            if (k->have_g && ikp__unwrap(l, &k->ck, r->hi) && l->anchored &&
                ikp__anchor_ps(l, k, k->ck.prev, k->g_lo, &ps)) {
                k->pt_tick = k->ck.prev;
                k->pt_ps = ps;
                k->have_g = 0;
                ikp__walk_segment(cap, l, k);
            }
            k->have_g = 0;
            continue;
        }
        k->have_g = 0;
        if (r->kind == IKP__KIND_FINALIZE && k->stop_at_finalize) k->closed = 1;
        *tick_ok = r->kind != IKP__KIND_INVALID && ikp__timed(r->kind) && ikp__unwrap(l, &k->ck, r->hi);
        k->after_stamp = *tick_ok;
        while (*tick_ok && k->ck.prev >= k->s_tick) { /* past an SM clock sample: the mapping moves to it */
            k->pt_tick = k->s_tick;
            k->pt_ps = k->s_ps;
            k->si = k->sj + 1;
            ikp__walk_segment(cap, l, k);
        }
        return 1;
    }
    return 0;
}

/* The SM clock samples of a cycle lane's SM within its span (after its
   start anchor; before its end anchor, or within rel_limit without one). */
static void ikp__lane_samples(const ikp_capture *cap, ikp__lane *l)
{
    const ikp_sm_clock *s = cap->sm_clock;
    uint32_t lo = 0, hi = cap->info.sm_clocks, m;
    int64_t last = l->has_end ? l->end_anchor : l->anchor + l->rel_limit;
    l->smp_first = l->smp_end = 0;
    if (!s || !(l->pub.flags & IKP_LANE_CYCLES) || l->pub.sm == IKP_NO_SM) return;
    while (lo < hi) { /* first sample after (sm, anchor) */
        m = lo + (hi - lo) / 2;
        if (s[m].sm < l->pub.sm || (s[m].sm == l->pub.sm && ikp__sample_tick(&s[m]) <= l->anchor))
            lo = m + 1;
        else hi = m;
    }
    l->smp_first = lo;
    while (lo < cap->info.sm_clocks && s[lo].sm == l->pub.sm && ikp__sample_tick(&s[lo]) < last) lo++;
    l->smp_end = lo;
}

/* How far a cycle lane's record at k->ck.prev may lie off on the ns axis,
   at most: a mapping point (anchor or SM clock sample) locates its tick to
   a few cycles and a stretch between two keeps every sample within
   IKP__SAMPLE_TOL_PS of its line (IKP__PLACE_FLOOR_PS for both); between
   points the SM clock's rate wanders from the stretch's mean by up to
   0.08% (IKP__PLACE_WANDER, a bound set from the wander measured on an
   H100: BENCHMARKS.md, "SM clocks across SMs"), so a record d from the
   nearer point may be off by that much of d more; past the last point,
   where the mapping runs on at a rate, by up to 0.2% of d
   (IKP__PLACE_RUNAWAY, set from the spread of SM clock rates measured
   there). An SM clock sample that a stretch passes over lies
   within the tolerance of its line, so it counts as a point too (*sp: the
   lane's first sample not behind the record). *bound and *gap (the
   distance to the nearest point, ps) keep their largest values. */
#define IKP__PLACE_FLOOR_PS 10000.0
#define IKP__PLACE_WANDER 8e-4
#define IKP__PLACE_RUNAWAY 2e-3
#define IKP__GLOBALTIMER_TICK_NS 32u
static void ikp__place_bound(const ikp_capture *cap, const ikp__lane *l, const ikp__walk *k, uint32_t *sp,
                             double *bound, double *gap)
{
    const double ppt = k->seg ? k->ppt : l->ps_per_tick;
    const int64_t t = k->ck.prev;
    double d1 = (double)(t - k->pt_tick), d, b;
    int on = k->seg_end == INT64_MAX;
    uint32_t j;
    if (d1 < 0) d1 = -d1;
    d = d1;
    if (!on) {
        double d2 = (double)(k->seg_end - t);
        if (d2 < 0) { d2 = -d2; on = 1; } /* past the end anchor */
        if (d2 < d) d = d2;
    }
    while (*sp < l->smp_end && ikp__sample_tick(&cap->sm_clock[*sp]) < t) (*sp)++;
    for (j = *sp > l->smp_first ? *sp - 1 : *sp; j <= *sp && j < l->smp_end; j++) { /* the samples either side */
        double ds = (double)(ikp__sample_tick(&cap->sm_clock[j]) - t);
        if (ds < 0) ds = -ds; /* before it (or after a record stamped earlier than the one before) */
        if (ds < d) { d = ds; on = 0; }
    }
    d *= ppt;
    b = IKP__PLACE_FLOOR_PS + d * (on ? IKP__PLACE_RUNAWAY : IKP__PLACE_WANDER);
    if (b > *bound) *bound = b;
    if (d > *gap) *gap = d;
}

/* >>capture-sm: one mapping per SM from cycles to time */
/* Every lane of one SM stamps the same counter, %clock64 of that SM. So
   each SM gets one mapping from cycles to the capture's ns axis, made
   from every reading of that SM's clock: the start and end anchors of all
   its lanes, their IKP_ANCHOR and automatic anchors (those in lanes without ticks), their tick counts and
   the SM clock samples (unless ikp_decode_options.cycles_per_ns gives a rate: then
   each lane runs at it from its start anchor). Two records of one SM then
   keep their cycle order and distance, whichever lanes they are in; lanes
   mapped each by their own anchors would not (their rates differ by the
   anchors' own errors over the lanes' spans: hundreds of ns over a long
   kernel). The mapping is piecewise linear, fit to the readings
   (ikp__sm_fit says how); a reading that does not follow the one before
   it on its SM (ikp__reading_follows) is left out. */

/* base + x, rounded, kept within +-IKP__MAX_ABS_PS (farther is corrupt
   data: a point of another lane far from this one's records) */
static int64_t ikp__ps_at(int64_t base, double x)
{
    double v = (double)base + (x < 0 ? x - 0.5 : x + 0.5);
    if (v > (double)IKP__MAX_ABS_PS) return IKP__MAX_ABS_PS;
    if (v < -(double)IKP__MAX_ABS_PS) return -IKP__MAX_ABS_PS;
    return (int64_t)v;
}

/* tick -> ps through the lane's SM's points (k->kn, k->nk; nk >= 1): the
   stretch around tick, the first or last one outside them; one point: the
   lane's rate from it. k->ki follows the ticks (they mostly rise). */
static int64_t ikp__knot_ps(const ikp__lane *l, ikp__walk *k, int64_t tick)
{
    const ikp__knot *a, *b;
    if (k->nk == 1) return ikp__ps_at(k->kn[0].ps, (double)(tick - k->kn[0].tick) * l->ps_per_tick);
    if (k->ki >= k->nk - 1 || tick < k->kn[k->ki].tick) { /* back: search */
        uint32_t lo = 0, hi = k->nk - 1;
        while (hi - lo > 1) {
            uint32_t m = lo + (hi - lo) / 2;
            if (k->kn[m].tick <= tick) lo = m;
            else hi = m;
        }
        k->ki = lo;
    }
    while (k->ki + 2 < k->nk && k->kn[k->ki + 1].tick <= tick) k->ki++;
    a = &k->kn[k->ki];
    b = &k->kn[k->ki + 1];
    return ikp__ps_at(a->ps, (double)(tick - a->tick) * ((double)(b->ps - a->ps) / (double)(b->tick - a->tick)));
}

/* How wide the readings are, either way. A start or end anchor, an
   IKP_ANCHOR and an SM clock sample name a globaltimer tick and the cycle
   it came at, to within their pairs' few cycles and the tick's arrival on
   each SM (+-16 ns at most, measured: BENCHMARKS.md), with a margin: IKP__READ_HALF_PS. An automatic anchor adds half the width it
   states. A tick count (FORMAT.md "Ticks") says that at its record's stamp
   the globaltimer stood within one 32 ns step, give or take the read's
   distance from the stamp (IKP__TICK_LAG_PS); a read that waited makes
   the step late, so its start is soft (ikp__reading). */
#define IKP__READ_HALF_PS 20000.0
#define IKP__TICK_LAG_PS 2000.0
#define IKP__TICK_LATE_PS 96000.0 /* %globaltimer stood at most this far behind the time (its steps: 32 ns, at
                                     times 64 or 96; BENCHMARKS.md "Timer kinds and accuracy") */
#define IKP__TICK_EARLY_PS 64000.0 /* ... and its read came back at most this far after the stamp (on an H200
                                      0 .. 60 ns, and the SM clock's own wander between anchors: BENCHMARKS.md) */
#define IKP__TICK_REACH_PS 2e10 /* a tick record farther from the one before (ps) is passed over (within it
                                   a rate 0.2% off, IKP__PLACE_RUNAWAY, errs by 40 us at most: far from
                                   the 262 us that would take the count a wrap off) */

/* a reading of sm at tick within [ps - below, ps + above], kept in cap->readings (grown); 0: no memory */
static int ikp__add_reading(ikp_capture *cap, size_t *room, uint32_t sm, int64_t tick, double ps, double below,
                            double above, int soft)
{
    ikp__reading *r;
    double lo = ps - below, hi = ps + above;
    if (!ikp__grow(&cap->alloc, (void **)&cap->readings, room, (size_t)cap->num_readings + 1, sizeof *r)) return 0;
    r = &cap->readings[cap->num_readings++];
    r->tick = tick;
    r->lo = ikp__ps_at(0, lo);
    r->hi = ikp__ps_at(0, hi);
    r->sm = sm;
    r->soft = soft;
    r->use = 2;
    return 1;
}

/* ps of an anchor of lane l at tick whose globaltimer reads g_lo (low 32
   bits): the globaltimer nearest to where the lane's own rate puts it */
static int64_t ikp__anchor_at(const ikp__lane *l, int64_t tick, uint32_t g_lo)
{
    double exp_ns = (double)(tick - l->anchor) * l->ps_per_tick / 1000.0;
    int64_t eg = l->g_start + (int64_t)exp_ns, g = eg + (int32_t)(g_lo - (uint32_t)eg);
    return l->ref_ps + (g - l->g_start) * 1000;
}

/* The reading a tick count q (bits 5..18 of %globaltimer, read right
   after the stamp c of an end or instant; its lane's next begin carries
   it) gives: the step's full ns is the one nearest to where the lane's
   rate puts c from the previous tick record (*ref_c, *ref_g; first the
   start anchor), far closer than the 262 us it could be off by within
   IKP__TICK_REACH_PS; one farther is passed over. */
static int ikp__tick_reading(ikp_capture *cap, size_t *room, const ikp__lane *l, int64_t *ref_c, int64_t *ref_g,
                             int64_t c, uint32_t q)
{
    const int64_t span = (int64_t)1 << (IKP_WIRE_TICK_NS_SHIFT + 14); /* ns the count wraps in */
    const int64_t exp = *ref_g + (int64_t)((double)(c - *ref_c) * l->ps_per_tick / 1000.0),
                  q_ns = (int64_t)q << IKP_WIRE_TICK_NS_SHIFT;
    int64_t d = (q_ns - exp) % span, g;
    if ((double)(c - *ref_c) * l->ps_per_tick > IKP__TICK_REACH_PS) return 1; /* too far to unwrap */
    if (d < -span / 2) d += span;
    if (d >= span / 2) d -= span;
    g = exp + d;
    *ref_c = c;
    *ref_g = g;
    return ikp__add_reading(cap, room, l->pub.sm, c, (double)l->ref_ps + (double)(g - l->g_start) * 1000.0,
                            IKP__TICK_EARLY_PS + IKP__TICK_LAG_PS, IKP__TICK_LATE_PS + IKP__TICK_LAG_PS, 1);
}

/* Which records of a cycle lane make its tick counts (FORMAT.md "Ticks"):
   an end or instant reads %globaltimer after its stamp (ikp__ticks_read),
   and the first begin or instant after it carries the count
   (ikp__ticks_carry) */
static int ikp__ticks_read(const ikp__lane *l, unsigned kind)
{
    return l->ticks && (kind == IKP_WIRE_KIND_END || kind == IKP_WIRE_KIND_INSTANT);
}
static int ikp__ticks_carry(const ikp__lane *l, unsigned kind)
{
    return kind == IKP_WIRE_KIND_BEGIN || (kind == IKP_WIRE_KIND_INSTANT && l->iticks);
}

/* The readings a cycle lane holds, appended to cap->readings: its
   anchors, the IKP_ANCHOR and automatic anchors among its records (read
   as the walk reads them), and its tick counts */
static int ikp__lane_readings(ikp_capture *cap, const ikp__lane *l, size_t *room)
{
    ikp__cursor c;
    ikp__clock ck;
    uint64_t w;
    uint32_t g_lo = 0;
    int have_g = 0, stamped = 0, pend = 0; /* pend: an end or instant at tick `last`, its ticks to come */
    int64_t last = 0, ref_c = l->anchor, ref_g = l->g_start;
    const double h = IKP__READ_HALF_PS;
    if (!ikp__add_reading(cap, room, l->pub.sm, l->anchor, (double)l->ref_ps, h, h, 0)) return 0;
    if (l->end_ok && !ikp__add_reading(cap, room, l->pub.sm, l->end_anchor, (double)l->end_ps, h, h, 0)) return 0;
    ikp__cursor_init(&c, cap, l);
    ck.prev = l->anchor;
    ck.backwards = 0;
    while (ikp__next_word(&c, &w)) {
        ikp__rec r;
        int was = stamped;
        ikp__lane_word(cap, l, w, &r);
        stamped = 0;
        if (r.kind == IKP__KIND_ANCHOR_AUTO) {
            const double ha = h + (double)r.width * l->ps_per_tick / 2;
            /* not in a lane with ticks: they read the same clock at every end and instant, and
               automatic anchors, read where the kernel's warps crowd the SM, placed no better
               and widened the stated bound past 3x the spread (BENCHMARKS.md "Cross-SM placement") */
            if (was && !l->ticks && !ikp__add_reading(cap, room, l->pub.sm, ck.prev + r.id,
                                         (double)ikp__anchor_at(l, ck.prev + r.id, r.hi), ha, ha, 0))
                return 0;
            have_g = 0;
        } else if (r.kind == IKP__KIND_ANCHOR_G) {
            have_g = 1;
            g_lo = r.hi;
        } else if (r.kind == IKP__KIND_ANCHOR_C) {
            if (have_g && ikp__unwrap(l, &ck, r.hi) &&
                !ikp__add_reading(cap, room, l->pub.sm, ck.prev, (double)ikp__anchor_at(l, ck.prev, g_lo), h, h, 0))
                return 0;
            have_g = 0;
        } else {
            have_g = 0;
            if (r.kind == IKP__KIND_FINALIZE && !cap->keep_after_finalize) break;
            if (pend && ikp__ticks_carry(l, r.kind)) {
                /* the ticks of the end or instant before (the first begin or instant after it) */
                if (!ikp__tick_reading(cap, room, l, &ref_c, &ref_g, last, r.ticks)) return 0;
                pend = 0;
            }
            if (r.kind != IKP__KIND_INVALID && ikp__timed(r.kind)) stamped = ikp__unwrap(l, &ck, r.hi);
            if (ikp__ticks_read(l, r.kind)) {
                pend = stamped;
                last = ck.prev;
            }
        }
    }
    return 1;
}

static int ikp__cmp_reading(const void *pa, const void *pb)
{
    const ikp__reading *a = (const ikp__reading *)pa, *b = (const ikp__reading *)pb;
    if (a->tick != b->tick) return a->tick < b->tick ? -1 : 1;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return a->hi < b->hi ? -1 : a->hi > b->hi;
}

/* 1 if reading b may follow a on one SM (b's tick at or after a's): the
   ns between their middles are those the cycles between them take at a
   rate within IKP__FOLLOW_RATIO of the SM's mean rate ppt (ps a cycle)
   either way (an SM clock that changes speed: a throttle that halves it
   late in a lane is twice as slow as the lane's mean), give or take
   IKP__SMCLK_SLACK_NS and their half widths (two readings of one moment
   differ by a few ns either way). A reading that does not (an SM clock
   sample of another SM's clock, a tick count a wrap off) is left out. */
#define IKP__FOLLOW_RATIO 2.5
static int ikp__reading_follows(const ikp__reading *a, const ikp__reading *b, double ppt)
{
    const double dt = (double)(b->tick - a->tick) * ppt, dps = ((double)(b->lo - a->lo) + (double)(b->hi - a->hi)) / 2,
                 slack = IKP__SMCLK_SLACK_NS * 1000.0 + (double)(a->hi - a->lo + b->hi - b->lo) / 2;
    return b->tick >= a->tick && dps <= dt * IKP__FOLLOW_RATIO + slack && dps >= dt / IKP__FOLLOW_RATIO - slack;
}

/* The fit of one SM's mapping. Its clock keeps one rate but where the
   readings show it change, so the mapping is a few long straight
   stretches, not a line through every reading (readings a few us apart,
   each known to +-16 ns, would tilt each piece by up to 1%). A stretch
   grows from its first reading as long as some straight line passes
   within the width of every reading on it: the lines that do are a convex
   polygon in (a, b) (offset at the stretch's first reading, ps a cycle),
   cut by each reading's two sides. The line chosen is the polygon's
   centroid, and the polygon says how far the truth may lie from it at
   any cycle (ikp__fit_spread): this is the placement the capture states.
   A reading no line of the stretch reaches is
   - a late tick count (only its soft lower end is passed), if the next
     IKP__FIT_AHEAD readings agree with the stretch: its upper end is kept;
   - left out and counted (readings_left_out), if they agree without it:
     the bound of every lane of the SM grows by how far it lies off;
   - else where the clock changed speed: the stretch ends at the reading
     before, the next starts here. Two stretches whose lines cross between
     them meet there; others are joined straight from the one's last
     reading to the other's first, and the bound grows by how far their
     lines disagree there. */
#define IKP__FIT_AHEAD 2
#define IKP__POLY_MAX 256
#define IKP__POLY_EPS 1e-3 /* ps: a corner this close outside a cut is kept */
#define IKP__FIT_FLOOR_PS 4000.0 /* added to every bound: the rounding of times to ps, and the mapping's own */
#define IKP__FIT_WANDER 1e-4     /* the SM clock's rate between two readings of one stretch, at most this
                                    far from its line's (an SM clock keeps its rate to < 1e-4 over ms:
                                    BENCHMARKS.md, "Timer kinds and accuracy") */
#define IKP__FIT_DRIFT 2e-4 /* a stretch's line may stray from a reading by this much of their distance from
                               its start, beyond the reading's width: the SM clock's wander, which the
                               stretch's bends then follow (ikp__fit_bend) */
#define IKP__FIT_SWAY_PS 40000.0 /* ... and from an anchor or sample by this much more: on an H200 an SM clock
                                    lies up to 40-60 ns either way of its line over a millisecond, more
                                    than such a reading's width (a tick count's is wider) */
/* how far beyond its width a stretch's line may pass a reading, but for the drift: an anchor's or
   sample's IKP__FIT_SWAY_PS, a tick count's nothing */
static double ikp__sway(const ikp__reading *r) { return r->soft ? 0 : IKP__FIT_SWAY_PS; }

typedef struct ikp__poly {
    uint32_t n;
    double drift; /* ps a cycle: IKP__FIT_DRIFT at the SM's rate */
    double a[IKP__POLY_MAX + 1], b[IKP__POLY_MAX + 1];
} ikp__poly;

/* p: the lines of a stretch that starts at reading r (offsets from r->lo within its width and, an anchor
   or sample, IKP__FIT_SWAY_PS either way; ps a cycle
   bmin .. bmax) */
static void ikp__poly_start(ikp__poly *p, const ikp__reading *r, double bmin, double bmax, double drift)
{
    const double sway = ikp__sway(r);
    p->n = 4;
    p->drift = drift;
    p->a[0] = p->a[3] = -sway;
    p->a[1] = p->a[2] = (double)(r->hi - r->lo) + sway;
    p->b[0] = p->b[1] = bmin;
    p->b[2] = p->b[3] = bmax;
}

/* p less the corner whose triangle with its neighbours is the smallest
   (the polygon shrinks a hair: it keeps at most IKP__POLY_MAX corners) */
static void ikp__poly_trim(ikp__poly *p)
{
    uint32_t i, best = 0;
    double least = -1;
    for (i = 0; i < p->n; i++) {
        const uint32_t u = (i + p->n - 1) % p->n, v = (i + 1) % p->n;
        double t = (p->b[i] - p->b[u]) * (p->a[v] - p->a[u]) - (p->b[v] - p->b[u]) * (p->a[i] - p->a[u]);
        if (t < 0) t = -t;
        if (least < 0 || t < least) { least = t; best = i; }
    }
    for (i = best; i + 1 < p->n; i++) {
        p->a[i] = p->a[i + 1];
        p->b[i] = p->b[i + 1];
    }
    p->n--;
}

/* p cut to a + b x <= v (up) or >= v: 0 when nothing is left */
static int ikp__poly_cut(ikp__poly *p, double x, double v, int up)
{
    double a[IKP__POLY_MAX + 2], b[IKP__POLY_MAX + 2], s[IKP__POLY_MAX + 1];
    uint32_t i, n = 0, in = 0;
    for (i = 0; i < p->n; i++) {
        const double y = p->a[i] + p->b[i] * x;
        s[i] = up ? y - v : v - y;
        in += s[i] <= IKP__POLY_EPS;
    }
    if (in == p->n) return p->n > 0;
    if (!in) { p->n = 0; return 0; }
    for (i = 0; i < p->n; i++) {
        const uint32_t j = i + 1 == p->n ? 0 : i + 1;
        const int ii = s[i] <= IKP__POLY_EPS, ij = s[j] <= IKP__POLY_EPS;
        if (ii) { a[n] = p->a[i]; b[n] = p->b[i]; n++; }
        if (ii != ij && (s[i] > 0) != (s[j] > 0)) { /* the edge crosses the cut */
            const double t = s[i] / (s[i] - s[j]);
            a[n] = p->a[i] + t * (p->a[j] - p->a[i]);
            b[n] = p->b[i] + t * (p->b[j] - p->b[i]);
            n++;
        }
    }
    for (p->n = 0, i = 0; i < n; i++) { /* a polygon of at most n corners, copied back */
        if (p->n == IKP__POLY_MAX + 1) ikp__poly_trim(p);
        p->a[p->n] = a[i];
        p->b[p->n] = b[i];
        p->n++;
    }
    while (p->n > IKP__POLY_MAX) ikp__poly_trim(p);
    return 1;
}

/* p cut by reading r (x ticks from the stretch's first, base its ps):
   both sides, or its upper only; where no line of p is left, p stays as
   it was and 0 is returned (the lines of p reach from the least to the
   most of a + b x over its corners: p is convex) */
static int ikp__poly_reading(ikp__poly *p, const ikp__reading *r, int64_t c0, int64_t base, int upper_only)
{
    const double x = (double)(r->tick - c0), w = p->drift * (x < 0 ? -x : x) + ikp__sway(r),
                 hi = (double)(r->hi - base) + w,
                 lo = (double)(r->lo - base) - w;
    double least = 1e300, most = -1e300;
    uint32_t i;
    for (i = 0; i < p->n; i++) {
        const double y = p->a[i] + p->b[i] * x;
        if (y < least) least = y;
        if (y > most) most = y;
    }
    if (!p->n || least > hi + IKP__POLY_EPS || (!upper_only && most < lo - IKP__POLY_EPS)) return 0;
    if (!ikp__poly_cut(p, x, hi, 1)) return 0;
    return upper_only || ikp__poly_cut(p, x, lo, 0);
}

/* 1 if p, cut by the readings r[j ..] (IKP__FIT_AHEAD of them, at least one), keeps a line */
static int ikp__fit_ahead(const ikp__poly *p, const ikp__reading *r, uint32_t j, uint32_t n, int64_t c0, int64_t base)
{
    ikp__poly q = *p;
    uint32_t k;
    if (j >= n) return 0;
    for (k = j; k < n && k < j + IKP__FIT_AHEAD; k++)
        if (!ikp__poly_reading(&q, &r[k], c0, base, 0)) return 0;
    return 1;
}

/* p cut by soft reading j's upper end, if the readings after it agree (a late read) */
static int ikp__fit_late(ikp__poly *p, const ikp__reading *r, uint32_t j, uint32_t n, int64_t c0, int64_t base)
{
    ikp__poly q = *p;
    if (!ikp__poly_reading(&q, &r[j], c0, base, 1) || !ikp__fit_ahead(&q, r, j + 1, n, c0, base)) return 0;
    *p = q;
    return 1;
}

/* the centroid of p (its corners' mean where it has no area) */
static void ikp__poly_centre(const ikp__poly *p, double *a, double *b)
{
    double area = 0, ca = 0, cb = 0, ea = 0, eb = 0;
    uint32_t i;
    for (i = 0; i < p->n; i++) { /* about corner 0: the polygon is thin, far from the origin */
        ea += p->a[i] - p->a[0];
        eb += p->b[i] - p->b[0];
    }
    ea /= p->n;
    eb /= p->n;
    for (i = 1; i + 1 < p->n; i++) {
        const double a1 = p->a[i] - p->a[0], b1 = p->b[i] - p->b[0], a2 = p->a[i + 1] - p->a[0],
                     b2 = p->b[i + 1] - p->b[0], t = b1 * a2 - b2 * a1;
        area += t;
        ca += t * (a1 + a2);
        cb += t * (b1 + b2);
    }
    if (area != 0 && ca / (3 * area) == ca / (3 * area)) {
        ea = ca / (3 * area);
        eb = cb / (3 * area);
    }
    *a = p->a[0] + ea;
    *b = p->b[0] + eb;
}

/* how far from stretch g's line the lines of its polygon lie at tick t, at most (ps; a stretch that
   does not say its rate: as at its first reading) */
static double ikp__fit_spread(const ikp_capture *cap, const ikp__fitseg *g, int64_t t)
{
    const double x = g->rated ? (double)(t - g->c0) : 0, *v = cap->fit_v + 2 * (size_t)g->v0;
    double most = 0;
    uint32_t i;
    for (i = 0; i < g->nv; i++) {
        double d = v[2 * i] - g->a + (v[2 * i + 1] - g->b) * x;
        if (d < 0) d = -d;
        if (d > most) most = d;
    }
    return most;
}

/* ps of stretch g's line at tick t */
static double ikp__fit_at(const ikp__fitseg *g, int64_t t)
{
    return (double)g->ps0 + g->a + g->b * (double)(t - g->c0);
}

/* 1 if reading x enters a stretch's line, bends and bound: kept, and a tick count with both ends (a late
   read's upper end bounds the stretch's polygon alone) */
static int ikp__reading_in(const ikp__reading *x) { return x->use == 2 || (x->use && !x->soft); }

/* a reading's middle, ps (a tick count's: the middle of its 32 ns step) */
static double ikp__reading_mid(const ikp__reading *x)
{
    return x->soft ? (double)x->lo + IKP__TICK_EARLY_PS + IKP__TICK_LAG_PS + IKP__GLOBALTIMER_TICK_NS * 500.0
                   : ((double)x->lo + (double)x->hi) / 2;
}

/* The line of stretch [s .. last] (its first reading's tick c0, ps base):
   weighted least squares through the middles of the readings it uses (a
   tick count's: the middle of its 32 ns step; one whose step sits more
   than IKP__FIT_TRIM off the first fit is left out of the second); 0
   where they do not make one */
#define IKP__FIT_TRIM 40000.0
static int ikp__fit_lsq(const ikp__reading *r, uint32_t s, uint32_t last, double *pa, double *pb)
{
    const int64_t c0 = r[s].tick, base = r[s].lo;
    double a = 0, b = 0;
    uint32_t i;
    int round;
    for (round = 0; round < 2; round++) {
        double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, det;
        for (i = s; i <= last; i++) {
            const double x = (double)(r[i].tick - c0);
            double y, w;
            if (!ikp__reading_in(&r[i])) continue;
            if (r[i].soft) {
                y = ikp__reading_mid(&r[i]) - (double)base;
                w = 1.0 / (IKP__GLOBALTIMER_TICK_NS * 1000.0 * IKP__GLOBALTIMER_TICK_NS * 1000.0);
                if (round && (y - a - b * x > IKP__FIT_TRIM || a + b * x - y > IKP__FIT_TRIM)) continue;
            } else {
                const double h = (double)(r[i].hi - r[i].lo) / 2;
                y = (double)(r[i].lo - base) + h;
                w = 3.0 / (h * h + 1e6);
            }
            sw += w;
            sx += w * x;
            sy += w * y;
            sxx += w * x * x;
            sxy += w * x * y;
        }
        if (sw <= 0) return 0;
        sx /= sw; sy /= sw; sxx /= sw; sxy /= sw;
        det = sxx - sx * sx;
        if (!(det > 0)) return 0;
        b = (sxy - sx * sy) / det;
        a = sy - b * sx;
    }
    *pa = a;
    *pb = b;
    return 1;
}

/* ... and 1 only where that line passes within every reading's width */
static int ikp__fit_ls(const ikp__reading *r, uint32_t s, uint32_t last, double *pa, double *pb)
{
    const int64_t c0 = r[s].tick, base = r[s].lo;
    double a, b;
    uint32_t i;
    if (!ikp__fit_lsq(r, s, last, &a, &b)) return 0;
    for (i = s; i <= last; i++) { /* within every reading used */
        const double y = a + b * (double)(r[i].tick - c0);
        if (!r[i].use) continue;
        if (y > (double)(r[i].hi - base) + IKP__POLY_EPS) return 0;
        if (r[i].use == 2 && y < (double)(r[i].lo - base) - IKP__POLY_EPS) return 0;
    }
    *pa = a;
    *pb = b;
    return 1;
}

/* stretch [s .. last] of r with polygon p, appended to cap->segs: its line (ikp__fit_ls, else the polygon's
   centroid; one reading: the rate ppt), its polygon's corners and its longest gaps between readings */
static int ikp__fit_emit(ikp_capture *cap, size_t *sroom, size_t *vroom, const ikp__reading *r, uint32_t s,
                         uint32_t last, const ikp__poly *p, int64_t base, double ppt)
{
    ikp__fitseg *g;
    uint32_t i;
    if (!ikp__grow(&cap->alloc, (void **)&cap->segs, sroom, (size_t)cap->num_segs + 1, sizeof *g)) return 0;
    if (!ikp__grow(&cap->alloc, (void **)&cap->fit_v, vroom, (size_t)cap->num_fit_v + 2 * p->n, sizeof(double)))
        return 0;
    g = &cap->segs[cap->num_segs++];
    g->c0 = r[s].tick;
    g->c1 = r[last].tick;
    g->ps0 = base;
    g->sm = r[s].sm;
    g->gap = g->gap2 = 0;
    g->gap_at = r[s].tick;
    {
        uint32_t k, prev = s;
        for (k = s + 1; k <= last; k++) {
            int64_t d;
            if (!r[k].use) continue;
            d = r[k].tick - r[prev].tick;
            if (d > g->gap) {
                g->gap2 = g->gap;
                g->gap = d;
                g->gap_at = r[prev].tick;
            } else if (d > g->gap2) {
                g->gap2 = d;
            }
            prev = k;
        }
    }
    g->jump = 0;
    g->widen = 0;
    g->unvouched = 0;
    g->local = -1;
    g->loc0 = g->nloc = 0;
    g->r0 = s;
    g->r1 = last;
    g->v0 = cap->num_fit_v / 2;
    g->nv = p->n;
    for (i = 0; i < p->n; i++) {
        cap->fit_v[cap->num_fit_v++] = p->a[i];
        cap->fit_v[cap->num_fit_v++] = p->b[i];
    }
    if (last == s || !ikp__fit_ls(r, s, last, &g->a, &g->b)) ikp__poly_centre(p, &g->a, &g->b);
    {
        double lo = p->b[0], hi = p->b[0];
        for (i = 1; i < p->n; i++) {
            if (p->b[i] < lo) lo = p->b[i];
            if (p->b[i] > hi) hi = p->b[i];
        }
        /* its own rate where its readings give it to 1%, or where the SM's rate is none of the rates
           they allow (the clock changed speed in a stretch too short for 1%): else the SM's */
        g->rated = last > s && (hi - lo <= 0.01 * g->b || ppt < lo || ppt > hi);
    }
    if (!g->rated) g->b = ppt;
    return 1;
}

/* a point of the mapping at (tick, ps), after the last one of this SM (first: none yet); it never falls
   behind it, and *widen grows by what that took */
static int ikp__fit_knot(ikp_capture *cap, size_t *kroom, uint32_t first, uint32_t sm, int64_t tick, double ps,
                         double *widen)
{
    ikp__knot *k;
    int64_t v = ikp__ps_at(0, ps);
    if (cap->num_knots > first) {
        const ikp__knot *p = &cap->knots[cap->num_knots - 1];
        if (tick <= p->tick) return 1;
        if (v < p->ps) {
            if ((double)(p->ps - v) > *widen) *widen = (double)(p->ps - v);
            v = p->ps;
        }
    }
    if (!ikp__grow(&cap->alloc, (void **)&cap->knots, kroom, (size_t)cap->num_knots + 1, sizeof *k)) return 0;
    k = &cap->knots[cap->num_knots++];
    k->tick = tick;
    k->ps = v;
    k->sm = sm;
    return 1;
}

/* reading x left out of a stretch (its polygon p): counted, and *widen
   grows to how far it lies off the line chosen */
static void ikp__fit_leave(ikp_capture *cap, const ikp__poly *p, ikp__reading *x, int64_t c0, int64_t base,
                           double *widen)
{
    double a, b, y, d;
    ikp__poly_centre(p, &a, &b);
    y = (double)base + a + b * (double)(x->tick - c0);
    d = y < (double)x->lo ? (double)x->lo - y : y - (double)x->hi;
    if (d > *widen) *widen = d;
    x->use = 0;
    cap->info.readings_left_out++;
}

/* Where the clock changed speed, a stretch's band (2e-4 of its length
   wide, and its anchors' and samples' sway) takes in the first readings
   at the new speed too, for microseconds after a long stretch. So each
   stretch (of cap->segs[s0 ..]) before another ends at its last reading
   that the next stretch's line, run back to it, does not pass as well:
   the readings after it could be either's, and the mapping there runs
   from the one line to the other (where they cross, at the crossing). */
static void ikp__fit_recede(ikp_capture *cap, const ikp__reading *r, uint32_t s0, double drift)
{
    uint32_t g;
    for (g = s0; g + 1 < cap->num_segs; g++) {
        ikp__fitseg *a = &cap->segs[g];
        const ikp__fitseg *b = a + 1;
        uint32_t k = a->r1;
        if (!a->rated || !b->rated) continue;
        while (k > a->r0 + 1) {
            const ikp__reading *x = &r[k];
            const double v = ikp__fit_at(b, x->tick), w = ikp__sway(x) + drift * (double)(b->c0 - x->tick);
            if (x->use && (v < (double)x->lo - w || v > (double)x->hi + w)) break;
            k--;
        }
        while (k > a->r0 && !r[k].use) k--;
        if (k == a->r1) continue;
        a->r1 = k;
        a->c1 = r[k].tick;
    }
}

/* Where reading j ends the stretch from s, one of the IKP__FIT_REDOS
   latest before it may be the one that lies (a globaltimer tick seen a
   step late): the stretch is cut again without it, and if j and the
   readings after it then agree, that reading is returned (and *p is the
   new polygon, j in it); 0 if none does. */
#define IKP__FIT_REDOS 4
static uint32_t ikp__fit_redo(ikp__reading *r, uint32_t s, uint32_t j, uint32_t n, ikp__poly *p, double bmin,
                              double bmax)
{
    const int64_t c0 = r[s].tick, base = r[s].lo;
    uint32_t k, i, tried = 0;
    for (k = j - 1; k > s && tried < IKP__FIT_REDOS; k--) {
        ikp__poly q;
        int ok = 1, up = 0;
        if (!r[k].use) continue;
        tried++;
        ikp__poly_start(&q, &r[s], bmin, bmax, p->drift);
        for (i = s + 1; ok && i < j; i++)
            if (i != k && r[i].use) ok = ikp__poly_reading(&q, &r[i], c0, base, r[i].use == 1);
        if (ok) {
            ikp__poly t = q;
            if (!ikp__poly_reading(&t, &r[j], c0, base, 0)) {
                t = q;
                up = 1;
                ok = r[j].soft && ikp__poly_reading(&t, &r[j], c0, base, 1);
            }
            if (ok && ikp__fit_ahead(&t, r, j + 1, n, c0, base)) {
                *p = t;
                r[j].use = up ? 1 : 2;
                return k;
            }
        }
    }
    return 0;
}

/* Within a stretch the SM clock still wanders: on an H200 its rate moves
   by a few 1e-4 over tens of microseconds, on every SM of one clock at
   once (BENCHMARKS.md, "Timing accuracy"), which its readings follow. So a
   stretch over IKP__FIT_KNOT cycles long bends at points every
   IKP__FIT_KNOT cycles (16 us at 2 GHz) or so: a smoothing spline,
   straight between them, whose offsets v[0 .. m] from the stretch's line
   at those points are the least squares through the middles of its
   readings (ticks that sit more than IKP__FIT_TRIM off the first fit left
   out of the second), plus a price on every change of slope as if it
   were an offset of IKP__FIT_BEND_PS: a change of slope needs readings
   over several points that ask for it. m = 0 (a stretch too short): no
   bend. Returns 0 when out of memory. */
#define IKP__FIT_KNOT 32768
#define IKP__FIT_BEND_PS 1000.0
#define IKP__FIT_MAX_BENDS ((int64_t)1 << 17) /* points a stretch: 2^17 x 32,768 cycles, 2 s of a clock at
                                                 2 GHz (a longer one is bent more coarsely; a corrupt span
                                                 of 2^60 cycles asked for petabytes) */
static uint32_t ikp__fit_points(const ikp__fitseg *g) /* m, a stretch's points less one */
{
    const int64_t knots = g->rated ? (g->c1 - g->c0) / IKP__FIT_KNOT : 0;
    return (uint32_t)(knots < IKP__FIT_MAX_BENDS ? knots : IKP__FIT_MAX_BENDS);
}

/* the bends of stretches s0 .. of cap->segs (ikp__fit_bend's v, or NULL), let go */
static void ikp__fit_bends_free(ikp_capture *cap, double **bends, uint32_t s0)
{
    uint32_t g;
    for (g = s0; g < cap->num_segs; g++) {
        double *v = bends[g - s0];
        if (v) ikp__free(&cap->alloc, (void *)(v - 6 * (size_t)(ikp__fit_points(&cap->segs[g]) + 1)));
    }
    ikp__free(&cap->alloc, bends);
}

typedef struct ikp__bendpt { /* a reading where ikp__fit_bend puts it: between points j and j + 1 (u: how far) */
    double u, y, w;            /* its distance from the stretch's line (ps), and its weight */
    uint32_t j, soft, out;     /* out: a tick count off the first fit, left out of the second */
} ikp__bendpt;

static int ikp__fit_bend(ikp_capture *cap, const ikp__reading *r, const ikp__fitseg *g, const ikp__reading *bx,
                         uint32_t nbx, double **pv, uint32_t *pm)
{
    const uint32_t m = ikp__fit_points(g);
    const double span = (double)(g->c1 - g->c0), mu = 1.0 / (IKP__FIT_BEND_PS * IKP__FIT_BEND_PS);
    double *a, *v;
    ikp__bendpt *pt;
    uint32_t i, j, k, npt = 0;
    int round;
    *pm = 0;
    *pv = NULL;
    if (m < 2) return 1;
    a = (double *)ikp__alloc(&cap->alloc, (size_t)(m + 1) * 7 * sizeof(double));
    if (!a) return 0;
    pt = (ikp__bendpt *)ikp__alloc(&cap->alloc, ((size_t)g->r1 - g->r0 + 1 + nbx) * sizeof *pt);
    if (!pt) {
        ikp__free(&cap->alloc, a);
        return 0;
    }
    v = a + 6 * (size_t)(m + 1); /* a: the band (5 diagonals) of the normal equations, the right side, then v */
    memset(v, 0, (size_t)(m + 1) * sizeof(double));
    for (i = g->r0; i <= g->r1 + nbx; i++) { /* its own readings, then those its clock's other SMs share */
        const ikp__reading *x = i <= g->r1 ? &r[i] : &bx[i - g->r1 - 1];
        ikp__bendpt *q = &pt[npt];
        double t, y0;
        if (!ikp__reading_in(x) || x->tick < g->c0 || x->tick > g->c1) continue;
        t = (double)(x->tick - g->c0) / span * m;
        y0 = ikp__fit_at(g, x->tick);
        if (x->soft) {
            q->y = ikp__reading_mid(x) - y0;
            q->w = 12.0 / (IKP__GLOBALTIMER_TICK_NS * 1000.0 * IKP__GLOBALTIMER_TICK_NS * 1000.0);
        } else {
            const double h = (double)(x->hi - x->lo) / 2;
            q->y = (double)x->lo + h - y0;
            q->w = 3.0 / (h * h + 1e6);
        }
        q->j = t >= m ? m - 1 : (uint32_t)t;
        q->u = t - q->j;
        q->soft = x->soft != 0;
        q->out = 0;
        npt++;
    }
    for (round = 0; round < 2; round++) {
        if (round) { /* tick counts off the first fit left out of a second, where there are any */
            uint32_t out = 0;
            for (i = 0; i < npt; i++) {
                const double f = (1 - pt[i].u) * v[pt[i].j] + pt[i].u * v[pt[i].j + 1];
                pt[i].out = pt[i].soft && (pt[i].y - f > IKP__FIT_TRIM || f - pt[i].y > IKP__FIT_TRIM);
                out += pt[i].out;
            }
            if (!out) break;
        }
        memset(a, 0, (size_t)(m + 1) * 6 * sizeof(double));
        for (i = 0; i < npt; i++) {
            const double u = pt[i].u, y = pt[i].y, w = pt[i].w;
            j = pt[i].j;
            if (pt[i].out) continue;
            a[5 * j + 2] += w * (1 - u) * (1 - u);
            a[5 * j + 3] += w * (1 - u) * u;
            a[5 * (j + 1) + 2] += w * u * u;
            a[5 * (j + 1) + 1] += w * (1 - u) * u;
            a[5 * (size_t)(m + 1) + j] += w * (1 - u) * y;
            a[5 * (size_t)(m + 1) + j + 1] += w * u * y;
        }
        for (j = 1; j < m; j++) { /* the price of a bend at point j: mu (v[j-1] - 2 v[j] + v[j+1])^2 */
            static const double c[3] = {1, -2, 1};
            uint32_t p, q;
            for (p = 0; p < 3; p++)
                for (q = 0; q < 3; q++) a[5 * (j - 1 + p) + 2 + q - p] += mu * c[p] * c[q];
        }
        /* never singular; and over a gap of a millisecond and more with no reading, where a change of
           slope costs less than this, the bends keep to the stretch's line */
        for (j = 0; j <= m; j++) a[5 * j + 2] += 1e-12;
        /* banded elimination, then back substitution: a is symmetric, positive definite */
        for (j = 0; j <= m; j++) {
            const double d = a[5 * j + 2];
            for (k = 1; k <= 2 && j + k <= m; k++) {
                const double f = a[5 * (j + k) + 2 - k] / d;
                uint32_t q;
                for (q = 1; q <= 2 && j + q <= m; q++) a[5 * (j + k) + 2 + q - k] -= f * a[5 * j + 2 + q];
                a[5 * (size_t)(m + 1) + j + k] -= f * a[5 * (size_t)(m + 1) + j];
            }
        }
        for (j = m + 1; j-- > 0;) {
            double x = a[5 * (size_t)(m + 1) + j];
            for (k = 1; k <= 2 && j + k <= m; k++) x -= a[5 * j + 2 + k] * v[j + k];
            v[j] = x / a[5 * j + 2];
        }
    }
    ikp__free(&cap->alloc, pt);
    *pm = m;
    *pv = v;
    return 1;
}

/* How far the truth may lie from a stretch's mapping f (its line, bent by
   d[0 .. m] at its m + 1 points, or straight: m = 0), over each stretch
   between two points: within every anchor's and sample's width of it
   (its distance from f and its half width), or, from its tick counts,
   within half a step (IKP__TICK_SKEW_PS) and three standard errors of
   their mean distance from f (a tick count is a noisy reading: on an H200
   its step sits within +-40 ns of the mapping, about 10 ns either way
   beyond the step itself; BENCHMARKS.md), whichever is less. An interval
   with fewer than IKP__FIT_POOL_TICKS tick counts takes its neighbours'
   too, on both sides, until there are that many (a mapping bends only
   over many intervals, and one count's own spread would say 40 ns where
   the mapping is within 10): in cap->fit_loc (g->loc0, g->nloc). The
   largest over the stretch, ps (an interval with no reading adds nothing:
   its records have the wander over the gap); -2 when out of memory. */
/* sqrt without libm: the library links with libc alone */
static double ikp__sqrt(double x)
{
    double g = 1;
    int i;
    if (!(x > 0) || x > 1e300) return x > 1e300 ? 1e150 : 0;
    while (g * g < x) g *= 2;
    while (g * g > 4 * x) g *= 0.5;
    for (i = 0; i < 8; i++) g = 0.5 * (g + x / g);
    return g;
}
#define IKP__FIT_MIN_TICKS 8
#define IKP__FIT_POOL_TICKS 16 /* an interval with fewer takes its neighbours' */
#define IKP__TICK_SKEW_PS 16000.0
static double ikp__fit_local(ikp_capture *cap, const ikp__reading *r, ikp__fitseg *g, const double *d, uint32_t m)
{
    const uint32_t parts = m ? m : 1;
    const double span = (double)(g->c1 - g->c0);
    double most = 0, *st;
    uint32_t j, i, at = g->r0;
    if (!ikp__grow(&cap->alloc, (void **)&cap->fit_loc, &cap->fit_loc_room, (size_t)cap->num_fit_loc + parts,
                   sizeof(double)))
        return -2;
    st = (double *)ikp__alloc(&cap->alloc, (size_t)parts * 4 * sizeof(double)); /* each part: hard, sum, sq, n */
    if (!st) return -2;
    g->loc0 = cap->num_fit_loc;
    g->nloc = parts;
    cap->num_fit_loc += parts;
    for (j = 0; j < parts; j++) {
        double *q = st + 4 * (size_t)j;
        uint32_t end = at;
        q[0] = -1;
        q[1] = q[2] = q[3] = 0;
        for (i = at; i <= g->r1; i++) {
            const ikp__reading *x = &r[i];
            const double t = span > 0 ? (double)(x->tick - g->c0) / span * parts : 0;
            double f, u, y;
            if (t > j + 1 && j + 1 < parts) break;
            end = i;
            if (!ikp__reading_in(x) || t < j) continue; /* (t < j: the stretch between the points before) */
            u = t - j;
            if (u < 0) u = 0;
            if (u > 1) u = 1;
            f = ikp__fit_at(g, x->tick) + (m ? (1 - u) * d[j] + u * d[j + 1] : 0);
            if (x->soft) {
                y = ikp__reading_mid(x) - f;
                q[1] += y;
                q[2] += y * y;
                q[3] += 1;
            } else {
                const double h = (double)(x->hi - x->lo) / 2;
                y = (double)x->lo + h - f;
                y = (y < 0 ? -y : y) + h;
                if (y > q[0]) q[0] = y;
            }
        }
        at = end;
    }
    for (j = 0; j < parts; j++) {
        const double *q = st + 4 * (size_t)j;
        double part = q[0];
        cap->fit_loc[g->loc0 + j] = 0;
        if (part < 0 && q[3] < 0.5) continue; /* no reading here: the records between readings get the wander */
        if (q[3] > 0.5) { /* its tick counts, with its neighbours' until there are IKP__FIT_POOL_TICKS */
            double sum = q[1], sq = q[2], n = q[3], mean, var, t;
            uint32_t lo = j, hi = j;
            while (n < IKP__FIT_POOL_TICKS && (lo > 0 || hi + 1 < parts)) {
                if (lo > 0) {
                    lo--;
                    sum += st[4 * (size_t)lo + 1], sq += st[4 * (size_t)lo + 2], n += st[4 * (size_t)lo + 3];
                }
                if (hi + 1 < parts) {
                    hi++;
                    sum += st[4 * (size_t)hi + 1], sq += st[4 * (size_t)hi + 2], n += st[4 * (size_t)hi + 3];
                }
            }
            mean = sum / n;
            var = sq / n - mean * mean;
            t = (mean < 0 ? -mean : mean) + IKP__TICK_SKEW_PS +
                (n >= IKP__FIT_MIN_TICKS ? 3 * ikp__sqrt(var > 0 ? var / n : 0) : IKP__TICK_SKEW_PS * 1.5);
            if (part < 0 || t < part) part = t;
        }
        cap->fit_loc[g->loc0 + j] = part;
        if (part > most) most = part;
    }
    ikp__free(&cap->alloc, st);
    return most;
}

/* The stretches of one SM's readings r[0 .. n) (in tick order), then its
   points (stretches_only: not them); bx[0 .. nbx): the readings other SMs
   of its clock share with its bends; ppt: the SM's rate (ps a cycle) that bounds the slopes (half
   to twice it) and runs a stretch of one reading */
static int ikp__sm_fit(ikp_capture *cap, size_t *kroom, size_t *sroom, size_t *vroom, ikp__reading *r,
                       uint32_t n, double ppt, const ikp__reading *bx, uint32_t nbx, int stretches_only)
{
    const uint32_t s0 = cap->num_segs, k0 = cap->num_knots;
    double bmin = ppt / 2, bmax = ppt * 2, widen = 0, **bends;
    uint32_t s = 0, j, g, redos;
    if (bmin < 1000.0 / IKP_MAX_CYCLES_PER_NS) bmin = 1000.0 / IKP_MAX_CYCLES_PER_NS;
    if (bmax > 1000.0 / IKP_MIN_CYCLES_PER_NS) bmax = 1000.0 / IKP_MIN_CYCLES_PER_NS;
    while (s < n) {
        const int64_t c0 = r[s].tick, base = r[s].lo;
        ikp__poly p;
        uint32_t last = s;
        ikp__poly_start(&p, &r[s], bmin, bmax, IKP__FIT_DRIFT * ppt);
        for (j = s + 1, redos = 0; j < n; j++) {
            uint32_t k;
            r[j].use = 2;
            if (ikp__poly_reading(&p, &r[j], c0, base, 0)) {
                /* within it */
            } else if (r[j].soft && ikp__fit_late(&p, r, j, n, c0, base)) {
                r[j].use = 1; /* a late read: its upper end */
            } else if (ikp__fit_ahead(&p, r, j + 1, n, c0, base)) { /* it lies off: left out */
                ikp__fit_leave(cap, &p, &r[j], c0, base, &widen);
                continue;
            } else if (redos < IKP__FIT_REDOS && (k = ikp__fit_redo(r, s, j, n, &p, bmin, bmax)) != 0) {
                ikp__fit_leave(cap, &p, &r[k], c0, base, &widen); /* one before it lay off */
                redos++;
                last = j; /* (now within it) */
                continue;
            } else {
                break;
            }
            last = j;
        }
        if (!ikp__fit_emit(cap, sroom, vroom, r, s, last, &p, base, ppt)) return 0;
        if (j < n) cap->info.speed_changes++;
        s = j;
    }
    if (stretches_only || cap->num_segs == s0) return 1;
    ikp__fit_recede(cap, r, s0, IKP__FIT_DRIFT * ppt);
    /* each line moved to where its bends' ends put it, its bends kept as offsets from the moved line (a
       second fit from that line finds them again but for the pull of its gaps towards it, a fraction of
       a nanosecond: BENCHMARKS.md, "Timing accuracy") */
    bends = (double **)ikp__alloc(&cap->alloc, (size_t)(cap->num_segs - s0) * sizeof *bends);
    if (!bends) return 0;
    for (g = s0; g < cap->num_segs; g++) bends[g - s0] = NULL;
    for (g = s0; g < cap->num_segs; g++) {
        ikp__fitseg *a = &cap->segs[g];
        double *v, v0, vm;
        uint32_t m, i;
        if (!ikp__fit_bend(cap, r, a, bx, nbx, &v, &m)) goto oom;
        if (!m) continue;
        v0 = v[0];
        vm = v[m];
        for (i = 0; i <= m; i++) v[i] -= (v0 * (m - i) + vm * i) / m;
        a->a += v0;
        a->b += (vm - v0) / (double)(a->c1 - a->c0);
        bends[g - s0] = v;
    }
    for (g = s0; g < cap->num_segs; g++) { /* the points: each stretch's ends, or where two lines cross */
        ikp__fitseg *a = &cap->segs[g], *b = g + 1 < cap->num_segs ? a + 1 : NULL;
        const double *d = bends[g - s0]; /* off the line its ends' points keep */
        const uint32_t m = d ? ikp__fit_points(a) : 0;
        uint32_t i;
        if (g == s0 && !ikp__fit_knot(cap, kroom, k0, a->sm, a->c0, ikp__fit_at(a, a->c0), &widen)) goto oom;
        for (i = 1; i < m; i++) { /* its bends */
            const int64_t x = a->c0 + (int64_t)((double)(a->c1 - a->c0) * i / m);
            if (!ikp__fit_knot(cap, kroom, k0, a->sm, x, ikp__fit_at(a, x) + d[i], &widen)) goto oom;
        }
        if (a->rated) { /* the truth about it, from its readings */
            a->local = ikp__fit_local(cap, r, a, d, m);
            if (a->local < -1.5) goto oom;
        }
        if (b) {
            const double da = ikp__fit_at(a, b->c0) - ikp__fit_at(b, b->c0),
                         db = ikp__fit_at(a, a->c1) - ikp__fit_at(b, a->c1);
            if (a->rated && b->rated && (da > 0) != (db > 0) && da != db) { /* they cross between */
                const int64_t x = a->c1 + (int64_t)((double)(b->c0 - a->c1) * db / (db - da));
                if (!ikp__fit_knot(cap, kroom, k0, a->sm, x, ikp__fit_at(a, x), &widen)) goto oom;
            } else { /* joined straight: a's last reading to b's first */
                a->jump = 1;
                if (a->c1 > a->c0 && !ikp__fit_knot(cap, kroom, k0, a->sm, a->c1, ikp__fit_at(a, a->c1), &widen))
                    goto oom;
                if (!ikp__fit_knot(cap, kroom, k0, a->sm, b->c0, ikp__fit_at(b, b->c0), &widen)) goto oom;
            }
        } else if (a->c1 > a->c0 && !ikp__fit_knot(cap, kroom, k0, a->sm, a->c1, ikp__fit_at(a, a->c1), &widen)) {
            goto oom;
        }
    }
    for (g = s0; g < cap->num_segs; g++) cap->segs[g].widen = widen;
    ikp__fit_bends_free(cap, bends, s0);
    return 1;
oom:
    ikp__fit_bends_free(cap, bends, s0);
    return 0;
}

/* [*first, *end): the run of SM sm in knots or stretches (each sorted by SM) */
#define IKP__SM_RUN(arr, n, sm_, first, end)                                                       \
    do {                                                                                           \
        uint32_t lo_ = 0, hi_ = (n), m_;                                                           \
        while (lo_ < hi_) { m_ = lo_ + (hi_ - lo_) / 2; if ((arr)[m_].sm < (sm_)) lo_ = m_ + 1; else hi_ = m_; } \
        *(first) = lo_;                                                                            \
        while (lo_ < (n) && (arr)[lo_].sm == (sm_)) lo_++;                                         \
        *(end) = lo_;                                                                              \
    } while (0)

static int ikp__cmp_u64(const void *a, const void *b);
static double ikp__seg_bound(const ikp_capture *cap, const ikp__fitseg *g, uint32_t n, int64_t t, uint32_t *si,
                             double ppt0, double near, double *dist);

/* ps at tick t through points k[0 .. n) (n >= 1; one point: rate ppt from it), as ikp__knot_ps */
static double ikp__knots_at(const ikp__knot *k, uint32_t n, int64_t t, double ppt)
{
    uint32_t lo = 0, hi = n - 1;
    if (n == 1) return (double)k[0].ps + (double)(t - k[0].tick) * ppt;
    while (hi - lo > 1) {
        const uint32_t m = lo + (hi - lo) / 2;
        if (k[m].tick <= t) lo = m;
        else hi = m;
    }
    return (double)k[lo].ps +
           (double)(t - k[lo].tick) * ((double)(k[lo + 1].ps - k[lo].ps) / (double)(k[lo + 1].tick - k[lo].tick));
}

/* The SM's mapping from all its readings (stretches cap->segs[f0 .. f1),
   points cap->knots[k0 .. k1)) against the mapping from its anchors and
   samples alone (stretches [f1 .. f2), points [k1 .. k2)): where the two
   lie farther apart than the second's bound and the SM clock's usual
   wander (IKP__TICK_EARLY_PS), the ticks claim what the anchors and samples do not show (a change of speed between them, or
   ticks that lie), and each stretch of the first states enough to cover
   both: unvouched, at its ends, its gap's end and the second's points
   between. */
static void ikp__fit_vouch(ikp_capture *cap, uint32_t f0, uint32_t f1, uint32_t f2, uint32_t k0, uint32_t k1,
                           uint32_t k2, double ppt)
{
    const ikp__knot *kf = cap->knots + k0, *kh = cap->knots + k1;
    const uint32_t nf = k1 - k0, nh = k2 - k1;
    uint32_t g, sf = 0, sh = 0, j = 0;
    if (!nf || !nh) return;
    for (g = f0; g < f1; g++) {
        ikp__fitseg *a = &cap->segs[g];
        const int64_t end = g + 1 < f1 ? cap->segs[g + 1].c0 : a->c1;
        double most = 0;
        int64_t x = a->c0;
        while (j < nh && kh[j].tick < a->c0) j++;
        for (;;) {
            const double m = ikp__knots_at(kf, nf, x, ppt), mh = ikp__knots_at(kh, nh, x, ppt),
                         bh = ikp__seg_bound(cap, cap->segs + f1, f2 - f1, x, &sh, ppt, -1, NULL),
                         bf = ikp__seg_bound(cap, cap->segs + f0, f1 - f0, x, &sf, ppt, -1, NULL);
            const double apart = m > mh ? m - mh : mh - m;
            if (apart > bh + IKP__TICK_EARLY_PS && apart + bh - bf > most) most = apart + bh - bf;
            if (x == end) break;
            if (x < a->c1) x = a->c1;
            else if (j < nh && kh[j].tick < end) x = kh[j++].tick;
            else x = end;
            if (x > end) x = end;
        }
        a->unvouched = most;
    }
}

/* a lane that its SM's mapping places */
static int ikp__sm_mapped(const ikp__lane *l)
{
    const uint32_t want = IKP_LANE_STARTED | IKP_LANE_CYCLES;
    return (l->pub.flags & (want | IKP_LANE_CORRUPT)) == want && l->pub.sm <= 0xFFFFu;
}

/* The SMs of one clock. On an H200 the SMs of one GPC keep one clock:
   their rates agree within 1e-5, and they wander together, by a few 1e-4
   over tens of microseconds (BENCHMARKS.md, "Timing accuracy").
   One SM's readings, a few a region, each known to +-16 ns, cannot follow
   that wander closely enough to give a region of 100 us its length to
   1e-4; the readings of all the SMs of its clock can. So each SM whose
   readings make one stretch is fit alone first (its line), and SMs are
   one clock where their rates agree within IKP__CLOCK_SPREAD and their
   readings wander alike: over bins of IKP__CLOCK_BIN_PS (at most
   IKP__CLOCK_BINS), the two SMs' mean distances from their own lines
   differ by a straight line and their readings' own scatter (chi-square
   within three of its standard deviations of what it would be; other
   clocks' rates lie as near, 3e-6 apart, but wander 20-40 ns apart). Each
   bends its mapping through the readings of the others too, each moved to
   the tick its own line puts at that reading's time, less that straight
   line between the two (ikp__borrow). Lines, stretches and bounds stay each
   SM's own. */
#define IKP__CLOCK_SPREAD 3e-5
#define IKP__CLOCK_BIN_PS 1e8
#define IKP__CLOCK_BINS 256
#define IKP__CLOCK_MIN_BINS 4
#define IKP__CLOCK_DONORS 15 /* the SMs (nearest by number) whose readings one SM bends through, at most: a
                                GPC (an H200's have 16-18), sixteen times its own readings */
typedef struct ikp__smfit {
    uint32_t r0, r1;    /* its readings in cap->readings */
    double ppt;         /* its lanes' mean rate (ps a cycle) */
    int32_t clock;      /* the first SM of its clock (an index here), -1: alone */
    ikp__fitseg line;   /* fit alone: its one stretch */
} ikp__smfit;

/* reading x of one SM, at the tick of another SM whose line is to (from: the first SM's line), where
   the first's distances from its line exceed the other's by by (ps) */
static void ikp__borrow(ikp__reading *out, const ikp__reading *x, const ikp__fitseg *from, const ikp__fitseg *to,
                      double by)
{
    const double ps = (double)(from->ps0 - to->ps0) + from->a + from->b * (double)(x->tick - from->c0) + by,
                 t = (ps - to->a) / to->b;
    *out = *x;
    out->tick = to->c0 + (int64_t)(t < 0 ? t - 0.5 : t + 0.5);
}

/* 1 if SMs p and q (their bins: count and mean distance from their lines, and the scatter of each
   within its bin, ps^2) wander alike: p's distances less q's a straight line a + b k over the bins k */
static int ikp__wander_alike(const double *p, const double *q, uint32_t nb, double vp, double vq, double *pa,
                             double *pb)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, chi = 0, a, b, det;
    uint32_t k, used = 0;
    for (k = 0; k < nb; k++) {
        const double *u = p + 2 * (size_t)k, *v = q + 2 * (size_t)k;
        double w;
        if (u[0] < 0.5 || v[0] < 0.5) continue;
        w = 1.0 / (vp / u[0] + vq / v[0]);
        sw += w, sx += w * k, sy += w * (u[1] - v[1]), sxx += w * k * k, sxy += w * k * (u[1] - v[1]);
        used++;
    }
    if (used < IKP__CLOCK_MIN_BINS) return 0;
    det = sw * sxx - sx * sx;
    if (!(det > 0)) return 0;
    b = (sw * sxy - sx * sy) / det;
    a = (sy - b * sx) / sw;
    for (k = 0; k < nb; k++) {
        const double *u = p + 2 * (size_t)k, *v = q + 2 * (size_t)k;
        double d;
        if (u[0] < 0.5 || v[0] < 0.5) continue;
        d = u[1] - v[1] - a - b * k;
        chi += d * d / (vp / u[0] + vq / v[0]);
    }
    *pa = a;
    *pb = b;
    return chi <= (double)(used - 2) + 3 * ikp__sqrt(2.0 * (double)(used - 2));
}

/* the SMs' bins (ikp__sm_clocks): SM i's count and mean distance from its line at bin k in
   bins[2 (i nb + k) ..], the scatter within its bins var[i] (ps^2); bin k from t0 + k width (ps) */
typedef struct ikp__clockbins {
    double *bins, *var, t0, width;
    uint32_t nb;
} ikp__clockbins;

/* how far SM j's readings lie past SM i's, the two of one clock: a + b (t - cb->t0) / cb->width at ps t */
static void ikp__clock_by(const ikp__clockbins *cb, uint32_t j, uint32_t i, double *a, double *b)
{
    *a = *b = 0;
    (void)ikp__wander_alike(cb->bins + (size_t)j * 2 * cb->nb, cb->bins + (size_t)i * 2 * cb->nb, cb->nb, cb->var[j],
                            cb->var[i], a, b);
}

/* f[0 .. n): each SM's clock (f[i].clock: the first of its SMs, -1 where
   it has no line of its own or no other SM shares it); cb: the SMs' bins
   (freed by the caller: cb->bins) */
static int ikp__sm_clocks(ikp_capture *cap, ikp__smfit *f, uint32_t n, ikp__clockbins *cb)
{
    const ikp__reading *r = cap->readings;
    uint32_t *o, *rep, k = 0, i, j, nb, nrep = 0;
    double t0 = 1e300, t1 = -1e300, width, *bins, *var, ca, cbb;
    memset(cb, 0, sizeof *cb);
    if (!n) return 1;
    for (i = 0; i < n; i++) {
        if (f[i].clock < 0) continue;
        for (j = f[i].r0; j < f[i].r1; j++) {
            const double m = ikp__reading_mid(&r[j]);
            if (m < t0) t0 = m;
            if (m > t1) t1 = m;
        }
    }
    width = t1 > t0 && (t1 - t0) / IKP__CLOCK_BINS > IKP__CLOCK_BIN_PS ? (t1 - t0) / IKP__CLOCK_BINS : IKP__CLOCK_BIN_PS;
    nb = t1 > t0 ? (uint32_t)((t1 - t0) / width) + 1 : 1;
    if (nb > IKP__CLOCK_BINS + 1) nb = IKP__CLOCK_BINS + 1;
    o = (uint32_t *)ikp__alloc(&cap->alloc, (size_t)n * 2 * sizeof *o);
    bins = (double *)ikp__alloc(&cap->alloc, ((size_t)n * 2 * nb + n) * sizeof *bins);
    if (!o || !bins) {
        ikp__free(&cap->alloc, o);
        ikp__free(&cap->alloc, bins);
        return 0;
    }
    cb->bins = bins;
    cb->nb = nb;
    cb->t0 = t0;
    cb->width = width;
    rep = o + n;
    var = cb->var = bins + (size_t)n * 2 * nb;
    memset(bins, 0, ((size_t)n * 2 * nb + n) * sizeof *bins);
    for (i = 0; i < n; i++) { /* each SM's readings' distances from its line, by bin: their count and mean */
        double *p = bins + (size_t)i * 2 * nb, sq = 0, in = 0;
        if (f[i].clock < 0) continue;
        o[k++] = i;
        for (j = f[i].r0; j < f[i].r1; j++) {
            const ikp__reading *x = &r[j];
            const double m = ikp__reading_mid(x), d = m - ikp__fit_at(&f[i].line, x->tick);
            uint32_t at = (uint32_t)((m - t0) / width);
            if (!ikp__reading_in(x)) continue;
            if (at >= nb) at = nb - 1;
            p[2 * at] += 1;
            p[2 * at + 1] += d;
            sq += d * d;
        }
        for (j = 0; j < nb; j++)
            if (p[2 * j] > 0.5) {
                sq -= p[2 * j + 1] * p[2 * j + 1] / p[2 * j];
                in += p[2 * j] - 1;
                p[2 * j + 1] /= p[2 * j];
            }
        var[i] = in > 0.5 ? sq / in : 0;
        if (var[i] < 16e6) var[i] = 16e6; /* at least (4 ns)^2: a bin's mean is no better than that */
    }
    for (i = 1; i < k; i++) /* by rate (insertion: a few hundred SMs) */
        for (j = i; j > 0 && f[o[j - 1]].line.b > f[o[j]].line.b; j--) {
            const uint32_t t = o[j];
            o[j] = o[j - 1];
            o[j - 1] = t;
        }
    for (i = 0; i < k; i++) { /* each joins the first clock (its first SM) whose rate and wander it shares */
        const ikp__smfit *s = &f[o[i]];
        uint32_t c;
        for (c = nrep; c-- > 0;) {
            const ikp__smfit *h = &f[rep[c]];
            if (s->line.b - h->line.b > IKP__CLOCK_SPREAD * h->line.b) { c = nrep; break; } /* (none nearer) */
            if (ikp__wander_alike(bins + (size_t)rep[c] * 2 * nb, bins + (size_t)o[i] * 2 * nb, nb, var[rep[c]],
                                  var[o[i]], &ca, &cbb))
                break;
        }
        if (c >= nrep) {
            rep[nrep++] = o[i];
            f[o[i]].clock = (int32_t)o[i];
        } else {
            f[o[i]].clock = (int32_t)rep[c];
        }
    }
    for (i = 0; i < nrep; i++) { /* a clock of one SM is none */
        uint32_t sms = 0;
        for (j = 0; j < k && sms < 2; j++) sms += f[o[j]].clock == (int32_t)rep[i];
        if (sms < 2) f[rep[i]].clock = -1;
    }
    ikp__free(&cap->alloc, o);
    return 1;
}

/* where the fits stand (their arrays and counts), so that a fit tried can be let go */
typedef struct ikp__fitmark {
    uint32_t segs, knots, v, loc, left, changes;
} ikp__fitmark;

static ikp__fitmark ikp__fit_mark(const ikp_capture *cap)
{
    ikp__fitmark m;
    m.segs = cap->num_segs;
    m.knots = cap->num_knots;
    m.v = cap->num_fit_v;
    m.loc = cap->num_fit_loc;
    m.left = cap->info.readings_left_out;
    m.changes = cap->info.speed_changes;
    return m;
}

static void ikp__fit_undo(ikp_capture *cap, const ikp__fitmark *m)
{
    cap->num_segs = m->segs;
    cap->num_knots = m->knots;
    cap->num_fit_v = m->v;
    cap->num_fit_loc = m->loc;
    cap->info.readings_left_out = m->left;
    cap->info.speed_changes = m->changes;
}

/* Each SM's mapping (cap->knots, cap->segs), fit from its readings and those of
   the other SMs of its clock, and each cycle
   lane's share of it (kn_first, kn_end, sg_first, sg_end) */
static ikp_result ikp__sm_maps(ikp_capture *cap, const ikp_decode_options *opt, ikp_error *err)
{
    size_t room = 0, kroom = 0, sroom = 0, vroom = 0, smroom = 0, broom = 0, aroom = 0;
    uint32_t i, n = 0, at, sp = 0, ns = 0;
    uint64_t *order;
    ikp__smfit *smf = NULL;
    ikp__reading *borrowed = NULL, *alone = NULL;
    ikp__clockbins cb;
    memset(&cb, 0, sizeof cb);
    if (opt && opt->cycles_per_ns > 0) return IKP_OK; /* a rate given: each lane at it from its start anchor */
    for (i = 0; i < cap->info.num_lanes; i++) n += ikp__sm_mapped(&cap->lanes[i]);
    if (!n) return IKP_OK;
    order = (uint64_t *)ikp__alloc(&cap->alloc, (size_t)n * sizeof *order);
    if (!order) return ikp__oom(err);
    for (i = 0, n = 0; i < cap->info.num_lanes; i++)
        if (ikp__sm_mapped(&cap->lanes[i])) order[n++] = (uint64_t)cap->lanes[i].pub.sm << 32 | i;
    qsort(order, n, sizeof *order, ikp__cmp_u64);
    cap->num_readings = 0;
    for (at = 0; at < n; ns++) { /* each SM's readings, in tick order, those that follow the last kept */
        const uint32_t sm = (uint32_t)(order[at] >> 32), from = cap->num_readings;
        double ppt = 0;
        uint32_t lanes = 0, kept, k;
        for (; at < n && (uint32_t)(order[at] >> 32) == sm; at++, lanes++) {
            const ikp__lane *l = &cap->lanes[(uint32_t)order[at]];
            ppt += l->ps_per_tick;
            if (!ikp__lane_readings(cap, l, &room)) goto oom;
        }
        ppt /= lanes;
        while (sp < cap->info.sm_clocks && cap->sm_clock[sp].sm < sm) sp++;
        for (; sp < cap->info.sm_clocks && cap->sm_clock[sp].sm == sm; sp++) {
            const ikp_sm_clock *sc = &cap->sm_clock[sp];
            int64_t d = (int64_t)(sc->gpu_ns - cap->gref_ns);
            if (d > (int64_t)IKP__ANCHOR_LIMIT || d < -(int64_t)IKP__ANCHOR_LIMIT) continue;
            if (!ikp__add_reading(cap, &room, sm, ikp__sample_tick(sc), (double)d * 1000.0, IKP__READ_HALF_PS,
                                  IKP__READ_HALF_PS, 0))
                goto oom;
        }
        qsort(cap->readings + from, cap->num_readings - from, sizeof *cap->readings, ikp__cmp_reading);
        for (k = from + 1, kept = from + 1; k < cap->num_readings; k++) { /* drop those that do not follow */
            if (!ikp__reading_follows(&cap->readings[kept - 1], &cap->readings[k], ppt)) {
                cap->info.readings_left_out++;
                continue;
            }
            cap->readings[kept++] = cap->readings[k];
        }
        cap->num_readings = kept;
        if (!ikp__grow(&cap->alloc, (void **)&smf, &smroom, (size_t)ns + 1, sizeof *smf)) goto oom;
        smf[ns].r0 = from;
        smf[ns].r1 = kept;
        smf[ns].ppt = ppt;
        smf[ns].clock = -1;
    }
    for (i = 0; i < ns; i++) { /* each SM fit alone first: its line, where it is one stretch */
        const ikp__fitmark m = ikp__fit_mark(cap);
        const uint32_t f0 = m.segs;
        if (!ikp__sm_fit(cap, &kroom, &sroom, &vroom, cap->readings + smf[i].r0, smf[i].r1 - smf[i].r0, smf[i].ppt,
                         NULL, 0, 1))
            goto oom;
        if (cap->num_segs == f0 + 1 && cap->segs[f0].rated && cap->segs[f0].c1 - cap->segs[f0].c0 >= 2 * IKP__FIT_KNOT) {
            ikp__fitseg *g = &smf[i].line; /* its line through all its readings, not its bends' ends */
            *g = cap->segs[f0];
            if (ikp__fit_lsq(cap->readings + smf[i].r0, g->r0, g->r1, &g->a, &g->b) && g->b > smf[i].ppt / 2 &&
                g->b < smf[i].ppt * 2)
                smf[i].clock = (int32_t)i;
        }
        ikp__fit_undo(cap, &m);
    }
    if (!ikp__sm_clocks(cap, smf, ns, &cb)) goto oom;
    for (i = 0; i < ns; i++) {
        ikp__reading *r = cap->readings + smf[i].r0;
        const uint32_t kept = smf[i].r1 - smf[i].r0;
        uint32_t k, hard, f0, k0, nb = 0;
        if (smf[i].clock >= 0) { /* the readings of the nearest other SMs of its clock, at its own ticks */
            uint32_t d, donors = 0;
            for (d = 1; donors < IKP__CLOCK_DONORS && (d <= i || i + d < ns); d++) {
                uint32_t side;
                for (side = 0; side < 2 && donors < IKP__CLOCK_DONORS; side++) {
                    const uint32_t j = side ? i + d : i - d;
                    double ca, cs;
                    if ((side ? i + d >= ns : d > i) || smf[j].clock != smf[i].clock) continue;
                    if (!ikp__grow(&cap->alloc, (void **)&borrowed, &broom, (size_t)nb + (smf[j].r1 - smf[j].r0),
                                   sizeof *borrowed))
                        goto oom;
                    ikp__clock_by(&cb, j, i, &ca, &cs);
                    for (k = smf[j].r0; k < smf[j].r1; k++)
                        if (cap->readings[k].use)
                            ikp__borrow(&borrowed[nb++], &cap->readings[k], &smf[j].line, &smf[i].line,
                                      ca + cs * (ikp__reading_mid(&cap->readings[k]) - cb.t0) / cb.width);
                    donors++;
                }
            }
        }
        f0 = cap->num_segs;
        k0 = cap->num_knots;
        if (!ikp__sm_fit(cap, &kroom, &sroom, &vroom, r, kept, smf[i].ppt, borrowed, nb, 0)) goto oom;
        for (k = 0, hard = 0; k < kept; k++) hard += !r[k].soft;
        if (hard && hard < kept) { /* the anchors and samples alone: fit, checked against, then let go */
            const ikp__fitmark m = ikp__fit_mark(cap);
            if (!ikp__grow(&cap->alloc, (void **)&alone, &aroom, hard, sizeof *alone)) goto oom;
            for (k = 0, hard = 0; k < kept; k++)
                if (!r[k].soft) {
                    alone[hard] = r[k];
                    alone[hard++].use = 2;
                }
            if (!ikp__sm_fit(cap, &kroom, &sroom, &vroom, alone, hard, smf[i].ppt, NULL, 0, 0)) goto oom;
            ikp__fit_vouch(cap, f0, m.segs, cap->num_segs, k0, m.knots, cap->num_knots, smf[i].ppt);
            ikp__fit_undo(cap, &m);
        }
    }
    ikp__free(&cap->alloc, smf);
    ikp__free(&cap->alloc, borrowed);
    ikp__free(&cap->alloc, alone);
    ikp__free(&cap->alloc, cb.bins);
    ikp__free(&cap->alloc, order);
    ikp__free(&cap->alloc, cap->readings);
    cap->readings = NULL;
    cap->num_readings = 0;
    cap->info.sm_exact = 1;
    for (i = 0; i < cap->info.num_lanes; i++) { /* each lane's SM: its points and stretches */
        ikp__lane *l = &cap->lanes[i];
        if (!ikp__sm_mapped(l)) continue;
        IKP__SM_RUN(cap->knots, cap->num_knots, l->pub.sm, &l->kn_first, &l->kn_end);
        IKP__SM_RUN(cap->segs, cap->num_segs, l->pub.sm, &l->sg_first, &l->sg_end);
    }
    return IKP_OK;
oom:
    ikp__free(&cap->alloc, order);
    ikp__free(&cap->alloc, smf);
    ikp__free(&cap->alloc, borrowed);
    ikp__free(&cap->alloc, alone);
    ikp__free(&cap->alloc, cb.bins);
    return ikp__oom(err);
}

/* stretch a's local bound at tick t: the largest of the interval between two points there and its neighbours */
static double ikp__fit_loc_at(const ikp_capture *cap, const ikp__fitseg *a, int64_t t)
{
    const double span = (double)(a->c1 - a->c0);
    double most = 0;
    uint32_t j, k;
    if (!a->nloc) return a->local;
    j = span > 0 && t > a->c0 ? (uint32_t)((double)(t - a->c0) / span * a->nloc) : 0;
    if (j >= a->nloc) j = a->nloc - 1;
    for (k = j ? j - 1 : 0; k <= j + 1 && k < a->nloc; k++)
        if (cap->fit_loc[a->loc0 + k] > most) most = cap->fit_loc[a->loc0 + k];
    return most;
}

/* how far the truth may lie from stretch a's line at tick t off it, run on from its end e: its bound
   at e and what its polygon's spread gains from e to t */
static double ikp__fit_run_on(const ikp_capture *cap, const ikp__fitseg *a, int64_t e, int64_t t)
{
    const double at_e = ikp__fit_spread(cap, a, e), at_t = ikp__fit_spread(cap, a, t);
    if (a->local < 0) return at_t;
    return ikp__fit_loc_at(cap, a, e) + (at_t > at_e ? at_t - at_e : 0);
}

/* How far a record at tick t of a lane mapped by its SM may lie off (ps):
   on a stretch, its polygon's spread there (ikp__fit_spread) and the rate's
   wander over half the stretch's longest distance between readings;
   between two stretches, the larger of each one's bound at its end beside
   and what its spread gains from there (ikp__fit_run_on), the wander over
   half the gap and, where they are joined straight, how far the truth
   could run from the join (between the two lines); before the first or past the last,
   the spread there and the runaway rate from it; and on every record,
   IKP__FIT_FLOOR_PS, the SM's readings left out (widen) and what the
   stretch's ticks claim beyond its anchors and samples (unvouched). Over
   the stretches g[0 .. n); *si follows the ticks (the stretch at or before
   t); ppt0: the rate of a stretch that does not say its own; near: the
   distance to a reading its lane knows of (ps; negative: none); *dist:
   the distance to the nearest reading (ps, at most). */
static double ikp__seg_bound(const ikp_capture *cap, const ikp__fitseg *g, uint32_t n, int64_t t, uint32_t *si,
                             double ppt0, double near, double *dist)
{
    const ikp__fitseg *a;
    double d, b, ppt;
    if (*si >= n || g[*si].c0 > t) *si = 0;
    while (*si + 1 < n && g[*si + 1].c0 <= t) (*si)++;
    a = &g[*si];
    ppt = a->rated ? a->b : ppt0;
    if (t < a->c0) { /* before the SM's first reading */
        d = (double)(a->c0 - t) * ppt;
        b = ikp__fit_spread(cap, a, t) + d * IKP__PLACE_RUNAWAY;
    } else if (t <= a->c1) {
        /* in its longest gap between readings: as far as the nearer of them; else half the next longest */
        const int64_t ge = a->gap_at + a->gap;
        const double in1 = (double)(t - a->gap_at) * ppt, in2 = (double)(ge - t) * ppt;
        double half = t >= a->gap_at && t <= ge ? (in1 < in2 ? in1 : in2) : (double)a->gap2 * ppt / 2;
        if (near >= 0 && near < half) half = near;
        d = half;
        b = (a->local >= 0 ? ikp__fit_loc_at(cap, a, t) : ikp__fit_spread(cap, a, t)) + half * IKP__FIT_WANDER;
    } else if (*si + 1 < n) { /* between two stretches */
        const ikp__fitseg *c = a + 1; /* each as far off as at its end beside, and as much more as its
                                         polygon's spread grows from there */
        const double s1 = ikp__fit_run_on(cap, a, a->c1, t), s2 = ikp__fit_run_on(cap, c, c->c0, t),
                     e1 = (double)(t - a->c1) * ppt, e2 = (double)(c->c0 - t) * ppt;
        d = e1 < e2 ? e1 : e2;
        b = (s1 > s2 ? s1 : s2) + (e1 + e2) / 2 * IKP__FIT_WANDER;
        if (a->jump) { /* the truth runs between the two lines (the clock changed speed between them) */
            const double y0 = ikp__fit_at(a, a->c1), y1 = ikp__fit_at(c, c->c0),
                         m = y0 + (y1 - y0) * (double)(t - a->c1) / (double)(c->c0 - a->c1);
            double da = a->rated ? ikp__fit_at(a, t) - m : 0, dc = c->rated ? ikp__fit_at(c, t) - m : 0;
            if (da < 0) da = -da;
            if (dc < 0) dc = -dc;
            b += da > dc ? da : dc;
        }
    } else { /* past the last */
        d = (double)(t - a->c1) * ppt;
        b = ikp__fit_spread(cap, a, t) + d * IKP__PLACE_RUNAWAY;
    }
    if (dist) *dist = d;
    return b + IKP__FIT_FLOOR_PS + a->widen + a->unvouched;
}

/* a lane's record at tick t, near ticks from a reading its lane knows of (negative: none): ikp__seg_bound
   over its SM's stretches; *bound and *gap keep their largest values */
static void ikp__sm_bound(const ikp_capture *cap, const ikp__lane *l, int64_t t, int64_t near, uint32_t *si,
                          double *bound, double *gap)
{
    double d, b = ikp__seg_bound(cap, cap->segs + l->sg_first, l->sg_end - l->sg_first, t, si, l->ps_per_tick,
                                 near >= 0 ? (double)near * l->ps_per_tick : -1, &d);
    if (b > *bound) *bound = b;
    if (d > *gap) *gap = d;
}

/* The records of a lane with ticks between two of its tick counts (the
   stamps of the ends and instants whose ticks the next begin or instant
   carries): each is as near a reading as the nearer of them, which the
   lane's walk knows once the second comes. Records wait here for it, at
   most IKP__NEAR_WAIT (past that, the first is bounded from the reading
   before it alone). */
#define IKP__NEAR_WAIT 16
typedef struct ikp__near {
    int64_t t[IKP__NEAR_WAIT], before; /* before: the reading before them (INT64_MIN: none) */
    uint32_t n;
} ikp__near;

/* the waiting records bounded, the next reading at `after` (INT64_MIN: none) */
static void ikp__near_flush(const ikp_capture *cap, const ikp__lane *l, ikp__near *q, int64_t after, uint32_t *si,
                            double *bound, double *gap)
{
    uint32_t i;
    for (i = 0; i < q->n; i++) {
        const int64_t t = q->t[i], a = after != INT64_MIN && after >= t ? after - t : -1,
                      b = q->before != INT64_MIN && q->before <= t ? t - q->before : -1;
        ikp__sm_bound(cap, l, t, a < 0 ? b : b < 0 || a < b ? a : b, si, bound, gap);
    }
    q->n = 0;
}

/* record t waits for the reading after it */
static void ikp__near_wait(const ikp_capture *cap, const ikp__lane *l, ikp__near *q, int64_t t, uint32_t *si,
                           double *bound, double *gap)
{
    if (q->n == IKP__NEAR_WAIT) {
        const int64_t b = q->before != INT64_MIN && q->before <= q->t[0] ? q->t[0] - q->before : -1;
        ikp__sm_bound(cap, l, q->t[0], b, si, bound, gap);
        memmove(q->t, q->t + 1, (IKP__NEAR_WAIT - 1) * sizeof q->t[0]);
        q->n--;
    }
    q->t[q->n++] = t;
}

/* First pass over a lane of one-word records (IKP's and the peer
   formats'): counts, time range. A cycle lane found to hold anchors is
   mapped piecewise, so its time range is walked once more. The row's scan
   of the peer formats: they add no figures of their own to info. */
static void ikp__scan_lane(const ikp_capture *cap, ikp__lane *l, ikp_capture_info *info)
{
    ikp__walk k;
    ikp__rec r;
    uint64_t invalid, after;
    int64_t lo, hi;
    double place_ps, gap_ps;
    uint32_t sp;
    int any, ok, fin, pend;
    int64_t tlast; /* ticks: the last end's or instant's stamp */
    ikp__near q;
    (void)info;
    l->anchored = l->kn_end == l->kn_first && l->smp_end > l->smp_first; /* mapped by its SM: no walk segments */
    for (;;) {
        ikp__walk_init(cap, l, &k);
        invalid = after = 0;
        lo = hi = 0;
        any = fin = 0;
        place_ps = gap_ps = 0;
        sp = l->smp_first;
        q.before = l->ticks ? l->anchor : INT64_MIN;
        q.n = 0;
        tlast = 0;
        pend = 0;
        while (ikp__walk_next(cap, l, &k, &r, &ok)) {
            int64_t ps;
            after += fin; /* kept after a finalize (keep_after_finalize) */
            if (r.kind == IKP__KIND_FINALIZE) fin = 1;
            if (r.kind == IKP__KIND_INVALID) { invalid++; continue; }
            if (!ikp__timed(r.kind)) continue;
            if (!ok) { invalid++; continue; }
            if (pend && ikp__ticks_carry(l, r.kind)) {
                if (l->kn_end > l->kn_first) ikp__near_flush(cap, l, &q, tlast, &sp, &place_ps, &gap_ps);
                q.before = tlast; /* a tick count read there (as ikp__lane_readings takes them) */
                pend = 0;
            }
            if (ikp__ticks_read(l, r.kind)) {
                pend = 1;
                tlast = k.ck.prev;
            }
            ps = ikp__walk_ps(l, &k, k.ck.prev);
            if (!any || ps < lo) lo = ps;
            if (!any || ps > hi) hi = ps;
            any = 1;
            if (l->kn_end > l->kn_first && l->ticks) ikp__near_wait(cap, l, &q, k.ck.prev, &sp, &place_ps, &gap_ps);
            else if (l->kn_end > l->kn_first) ikp__sm_bound(cap, l, k.ck.prev, -1, &sp, &place_ps, &gap_ps);
            else if (l->pub.flags & IKP_LANE_CYCLES) ikp__place_bound(cap, l, &k, &sp, &place_ps, &gap_ps);
        }
        if (l->kn_end > l->kn_first) ikp__near_flush(cap, l, &q, l->end_ok ? l->end_anchor : INT64_MIN, &sp, &place_ps, &gap_ps);
        if (l->anchored || !k.saw_anchor || !(l->pub.flags & IKP_LANE_CYCLES) || l->kn_end > l->kn_first) break;
        l->anchored = 1;
    }
    l->pub.records = k.words;
    l->pub.anchors = k.anchors;
    l->pub.invalid = invalid;
    l->pub.backwards = k.ck.backwards;
    l->pub.after_finalize = after;
    if (k.closed) {
        uint64_t w;
        while (ikp__next_word(&k.c, &w)) l->pub.after_finalize++;
    }
    l->pub.first_ps = any ? lo : INT64_MIN; /* INT64_MIN: no timed record */
    l->pub.last_ps = any ? hi : INT64_MIN;
    if (l->pub.flags & IKP_LANE_CYCLES) { /* (saturating: far from a reading is corrupt data) */
        l->pub.placement_ns = !any ? 0 : place_ps < 4e12 ? (uint32_t)(place_ps / 1000.0 + 0.999) : 0xFFFFFFFFu;
        l->pub.reading_gap_ns = !any ? 0 : gap_ps < 9e21 ? (uint64_t)(gap_ps / 1000.0 + 0.5) : (uint64_t)1 << 63;
    }
}

/* >>capture-names: names copied from the API; ikp_capture_free */
static char *ikp__strdup_n(const ikp_allocator *a, const char *s, size_t n)
{
    char *d = (char *)ikp__alloc(a, n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* length of s if at most max bytes, else max + 1 (never reads further) */
static size_t ikp__strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n <= max && s[n]) n++;
    return n;
}

/* copies names given through the API, with the limits of names from files */
static ikp_result ikp__copy_names(const ikp_allocator *a, const char *const *src, uint32_t n,
                                  const char *what, char ***dst, uint32_t *dn, ikp_error *err)
{
    uint32_t i;
    *dst = NULL;
    *dn = 0;
    if (!src && n) /* refused as clock readings, peers and SM samples are */
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "num_%s_names is %u without %s names", what, n,
                         what);
    if (!n) return IKP_OK;
    if (n > IKP_WIRE_MAX_EVENTS)
        return ikp__fail(err, IKP_ERR_BAD_NAMES, -1, -1, "%s names: %u given, at most %u", what, n,
                         IKP_WIRE_MAX_EVENTS);
    for (i = 0; i < n; i++)
        if (src[i] && ikp__strnlen(src[i], IKP_MAX_NAME_BYTES) > IKP_MAX_NAME_BYTES)
            return ikp__fail(err, IKP_ERR_BAD_NAMES, -1, -1, "%s name %u is longer than %u bytes", what, i,
                             IKP_MAX_NAME_BYTES);
    *dst = (char **)ikp__alloc(a, n * sizeof(char *));
    if (!*dst) return ikp__oom(err);
    for (i = 0; i < n; i++) (*dst)[i] = NULL;
    *dn = n;
    for (i = 0; i < n; i++)
        if (src[i] && src[i][0]) {
            (*dst)[i] = ikp__strdup_n(a, src[i], strlen(src[i]));
            if (!(*dst)[i]) return ikp__oom(err);
        }
    return IKP_OK;
}

static void ikp__free_names(const ikp_allocator *a, char **names, uint32_t n)
{
    uint32_t i;
    if (!names) return;
    for (i = 0; i < n; i++) ikp__free(a, names[i]);
    ikp__free(a, names);
}

IKP_DEF void ikp_capture_free(ikp_capture *cap)
{
    ikp_allocator a;
    if (!cap) return;
    a = cap->alloc;
    ikp__free_names(&a, cap->event_names, cap->num_event_names);
    ikp__free_names(&a, cap->group_names, cap->num_group_names);
    ikp__free(&a, cap->owned);
    ikp__free(&a, cap->index);
    ikp__free(&a, cap->index_base);
    ikp__free(&a, cap->lanes);
    ikp__free(&a, cap->clock);
    ikp__free(&a, cap->peers);
    ikp__free(&a, cap->sm_clock);
    ikp__free(&a, cap->readings);
    ikp__free(&a, cap->knots);
    ikp__free(&a, cap->segs);
    ikp__free(&a, cap->fit_v);
    ikp__free(&a, cap->fit_loc);
    ikp__free(&a, cap);
}

/* >>capture-clock: clocks: host, device, peer GPUs, SM samples */
static int ikp__cmp_sync(const void *a, const void *b)
{
    const ikp_clock_sync *x = (const ikp_clock_sync *)a, *y = (const ikp_clock_sync *)b;
    return x->gpu_ns < y->gpu_ns ? -1 : x->gpu_ns > y->gpu_ns;
}
/* a reading's offset: GPU time minus host time, ns */
static int64_t ikp__clock_offset(const ikp_clock_sync *s) { return (int64_t)(s->gpu_ns - (uint64_t)s->host_ns); }
#define IKP__Y2001_NS (978307200ll * 1000000000ll) /* a plausible clock reads later than this */
/* Two offsets of one clock against another, at GPU times ga <= gb, contradict
   when they differ by more than their uncertainties plus 100 ns per ms
   between them (clocks drift by microseconds per second). */
static int ikp__contradict(uint64_t ga, int64_t oa, uint32_t ua, uint64_t gb, int64_t ob, uint32_t ub)
{
    return (uint64_t)(oa > ob ? oa - ob : ob - oa) > (uint64_t)ua + ub + (gb - ga) / 10000;
}
/* Takes n clock readings (copied, sorted by GPU time). Each must be
   plausible (both clocks after 2001, an uncertainty under 1 s), and the
   offsets of consecutive readings (two of the same moment too) must agree
   within their uncertainties plus 100 ns per ms between them (the clocks
   drift by microseconds per second). at: the byte offset of reading 0 in a
   file (-1: given by the caller). */
static ikp_result ikp__set_clock(ikp_capture *cap, const ikp_clock_sync *s, uint32_t n, int64_t at, ikp_error *err)
{
    uint32_t i;
    const int64_t y2001 = IKP__Y2001_NS;
    if (n > IKP_MAX_CLOCK_SYNCS)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, at, -1, "%u clock readings, at most %u", n, IKP_MAX_CLOCK_SYNCS);
    for (i = 0; i < n; i++)
        if (s[i].host_ns < y2001 || s[i].host_ns > ((int64_t)1 << 62) || s[i].gpu_ns < (uint64_t)y2001 ||
            s[i].gpu_ns > ((uint64_t)1 << 62) ||
            s[i].uncertainty_ns >= 1000000000u)
            return ikp__fail(err, IKP_ERR_BAD_HEADER, at < 0 ? -1 : at + (int64_t)i * 32, -1,
                             "clock reading %u is not plausible (host %lld ns, GPU %llu ns, uncertainty %u ns): "
                             "both clocks count ns since 1970 (2001 to 2^62 ns, year 148,000), the uncertainty "
                             "is under 1 s",
                             i, (long long)s[i].host_ns, (unsigned long long)s[i].gpu_ns, s[i].uncertainty_ns);
    if (!n) return IKP_OK;
    cap->clock = (ikp_clock_sync *)ikp__alloc(&cap->alloc, (size_t)n * sizeof *s);
    if (!cap->clock) return ikp__oom(err);
    memcpy(cap->clock, s, (size_t)n * sizeof *s);
    qsort(cap->clock, n, sizeof *s, ikp__cmp_sync);
    cap->info.clock_syncs = n;
    for (i = 1; i < n; i++) {
        const ikp_clock_sync *a = &cap->clock[i - 1], *b = &cap->clock[i];
        int64_t oa = ikp__clock_offset(a), ob = ikp__clock_offset(b);
        uint64_t dt = b->gpu_ns - a->gpu_ns;
        if (ikp__contradict(a->gpu_ns, oa, a->uncertainty_ns, b->gpu_ns, ob, b->uncertainty_ns))
            return ikp__fail(err, IKP_ERR_BAD_HEADER, at, -1,
                             "clock readings contradict each other: GPU - host was %lld ns, then %lld ns %.3f ms "
                             "later (more than their uncertainties, %u + %u ns, and 100 ns per ms of drift): "
                             "readings of another GPU, or of another run?",
                             (long long)oa, (long long)ob, (double)dt / 1e6, a->uncertainty_ns, b->uncertainty_ns);
    }
    return IKP_OK;
}

/* The offset (GPU - other clock) at GPU time g from n readings sorted by
   gpu_ns: interpolated between the two around g, the nearest one's
   outside them plus 10 ns per ms beyond it for drift; *unc: how far off. */
static void ikp__offset_at(const ikp_clock_sync *c, uint32_t n, uint64_t g, int64_t *off, uint64_t *unc)
{
    uint32_t k;
    for (k = 0; k < n && c[k].gpu_ns <= g; k++) {}
    if (k == 0 || k == n) {
        const ikp_clock_sync *e = k == 0 ? &c[0] : &c[n - 1];
        *off = ikp__clock_offset(e);
        *unc = e->uncertainty_ns + (e->gpu_ns > g ? e->gpu_ns - g : g - e->gpu_ns) / 100000;
    } else {
        const ikp_clock_sync *a = &c[k - 1], *b = &c[k];
        int64_t oa = ikp__clock_offset(a), ob = ikp__clock_offset(b);
        double f = (double)(g - a->gpu_ns) / (double)(b->gpu_ns - a->gpu_ns);
        *off = oa + (int64_t)((double)(ob - oa) * f + (ob > oa ? 0.5 : -0.5));
        *unc = a->uncertainty_ns > b->uncertainty_ns ? a->uncertainty_ns : b->uncertainty_ns;
    }
}

static int ikp__uuid_zero(const uint8_t *u)
{
    int i;
    for (i = 0; i < 16; i++)
        if (u[i]) return 0;
    return 1;
}

/* "GPU-1a2b3c4d-..." as nvidia-smi writes a UUID */
static const char *ikp__uuid_text(const uint8_t *u, char *t, size_t n)
{
    snprintf(t, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return t;
}

/* Takes the device identity (copied). The host name must end within its
   64 bytes; ordinal and rank are -1 or more. at: its byte offset in a file
   (-1: given by the caller). */
static ikp_result ikp__set_device(ikp_capture *cap, const ikp_device_id *d, int64_t at, ikp_error *err)
{
    if (!memchr(d->host, 0, sizeof d->host))
        return ikp__fail(err, IKP_ERR_BAD_HEADER, at < 0 ? -1 : at + 16, -1,
                         "device identity: the host name does not end within its %u bytes", (unsigned)sizeof d->host);
    if (d->ordinal < -1 || d->rank < -1)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, at < 0 ? -1 : at + 80, -1,
                         "device identity: ordinal %d and rank %d must be -1 (unknown) or more", (int)d->ordinal,
                         (int)d->rank);
    cap->device = *d;
    cap->device.reserved = 0;
    cap->info.device_known = 1;
    return IKP_OK;
}

static int ikp__cmp_peer(const void *a, const void *b)
{
    const ikp_peer_clock *x = (const ikp_peer_clock *)a, *y = (const ikp_peer_clock *)b;
    int c = memcmp(x->peer_uuid, y->peer_uuid, 16);
    if (c) return c;
    return x->gpu_ns < y->gpu_ns ? -1 : x->gpu_ns > y->gpu_ns;
}

/* Takes n peer measurements (copied, sorted). Each must be plausible (a
   GPU time after 2001, clocks under 1000 s apart, an uncertainty under
   1 s, a peer named, not the capture's own GPU); those of one peer must
   agree as clock readings do (ikp__set_clock). at: the byte offset of
   measurement 0 in a file (-1: given by the caller). */
static ikp_result ikp__set_peers(ikp_capture *cap, const ikp_peer_clock *p, uint32_t n, int64_t at, ikp_error *err)
{
    uint32_t i;
    const uint64_t y2001 = (uint64_t)IKP__Y2001_NS;
    if (n > IKP_MAX_PEER_CLOCKS)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, at, -1, "%u peer clock measurements, at most %u", n,
                         IKP_MAX_PEER_CLOCKS);
    for (i = 0; i < n; i++) {
        const char *why = ikp__uuid_zero(p[i].peer_uuid) ? "it names no peer (uuid all zero)"
                          : cap->info.device_known && memcmp(p[i].peer_uuid, cap->device.uuid, 16) == 0
                              ? "it names the capture's own GPU"
                          : p[i].gpu_ns < y2001 || p[i].gpu_ns > ((uint64_t)1 << 62) ? "its GPU time is not ns since 1970"
                          : p[i].offset_ns > 1000000000000ll || p[i].offset_ns < -1000000000000ll
                              ? "the clocks would be over 1000 s apart"
                          : p[i].uncertainty_ns >= 1000000000u ? "its uncertainty is a second or more" : NULL;
        if (why)
            return ikp__fail(err, IKP_ERR_BAD_HEADER, at < 0 ? -1 : at + (int64_t)i * 40, -1,
                             "peer clock measurement %u is not plausible: %s", i, why);
    }
    if (!n) return IKP_OK;
    cap->peers = (ikp_peer_clock *)ikp__alloc(&cap->alloc, (size_t)n * sizeof *p);
    if (!cap->peers) return ikp__oom(err);
    memcpy(cap->peers, p, (size_t)n * sizeof *p);
    qsort(cap->peers, n, sizeof *p, ikp__cmp_peer);
    cap->info.peer_clocks = n;
    for (i = 1; i < n; i++) {
        const ikp_peer_clock *a = &cap->peers[i - 1], *b = &cap->peers[i];
        uint64_t dt = b->gpu_ns - a->gpu_ns;
        char u[48];
        if (memcmp(a->peer_uuid, b->peer_uuid, 16) != 0) continue;
        if (ikp__contradict(a->gpu_ns, a->offset_ns, a->uncertainty_ns, b->gpu_ns, b->offset_ns, b->uncertainty_ns))
            return ikp__fail(err, IKP_ERR_BAD_HEADER, at, -1,
                             "peer clock measurements of %s contradict each other: it was %lld ns ahead, then "
                             "%lld ns %.3f ms later (more than their uncertainties, %u + %u ns, and 100 ns per ms "
                             "of drift)",
                             ikp__uuid_text(a->peer_uuid, u, sizeof u), (long long)a->offset_ns,
                             (long long)b->offset_ns, (double)dt / 1e6, a->uncertainty_ns, b->uncertainty_ns);
    }
    return IKP_OK;
}

/* s[0..n) into out (room for 3n bytes) with U+FFFD for every byte of no
   valid UTF-8 sequence, and with controls for every control byte too, as
   every output writes text; returns the bytes written */
static size_t ikp__utf8_fix(unsigned char *out, const unsigned char *s, size_t n, int controls)
{
    size_t i = 0, k = 0, len;
    while (i < n) {
        len = !controls || (s[i] >= 0x20 && s[i] != 0x7f) ? ikp__utf8_len(s + i, n - i) : 0;
        if (len) { memcpy(out + k, s + i, len); k += len; i += len; }
        else { out[k++] = 0xEF; out[k++] = 0xBF; out[k++] = 0xBD; i++; }
    }
    return k;
}

IKP_DEF const char *ikp_device_text(const ikp_device_id *d, char *buf, size_t size)
{
    char u[48];
    size_t n;
    if (!buf || !size) return buf;
    buf[0] = 0;
    if (!d) return buf;
    snprintf(buf, size, "%s", ikp__uuid_text(d->uuid, u, sizeof u));
    if (d->ordinal >= 0 && (n = strlen(buf)) < size) snprintf(buf + n, size - n, ", CUDA device %d", (int)d->ordinal);
    if (d->rank >= 0 && (n = strlen(buf)) < size) snprintf(buf + n, size - n, ", rank %d", (int)d->rank);
    if ((n = strlen(buf)) < size)
        snprintf(buf + n, size - n, ", PCI %04x:%02x:%02x", d->pci_domain, d->pci_bus, d->pci_device);
    if (d->host[0] && (n = strlen(buf)) < size) { /* U+FFFD for a byte of no valid UTF-8 or a control */
        unsigned char h[3 * sizeof d->host];
        size_t hn = ikp__utf8_fix(h, (const unsigned char *)d->host, ikp__strnlen(d->host, sizeof d->host), 1);
        snprintf(buf + n, size - n, ", host ");
        n = strlen(buf);
        if (n + hn >= size) { /* cut where a character begins */
            hn = size - 1 - n;
            while (hn && (h[hn] & 0xC0) == 0x80) hn--;
        }
        memcpy(buf + n, h, hn);
        buf[n + hn] = 0;
    }
    return buf;
}

IKP_DEF const ikp_device_id *ikp_capture_device(const ikp_capture *cap)
{
    return cap && cap->info.device_known ? &cap->device : NULL;
}

IKP_DEF uint32_t ikp_capture_sm_clock(const ikp_capture *cap, const ikp_sm_clock **samples)
{
    if (samples) *samples = cap ? cap->sm_clock : NULL;
    return cap ? cap->info.sm_clocks : 0;
}

static int ikp__cmp_sm_clock(const void *a, const void *b)
{
    const ikp_sm_clock *x = (const ikp_sm_clock *)a, *y = (const ikp_sm_clock *)b;
    if (x->sm != y->sm) return x->sm < y->sm ? -1 : 1;
    return x->cycles < y->cycles ? -1 : x->cycles > y->cycles;
}

/* a globaltimer after 2001, cycles and globaltimer under 2^62, an SM under
   65536, the reserved word 0 */
static int ikp__sm_clock_plausible(const ikp_sm_clock *s)
{
    const uint64_t lim = (uint64_t)1 << 62;
    return s->gpu_ns >= (uint64_t)IKP__Y2001_NS && s->gpu_ns < lim && s->cycles < lim && s->sm <= 0xFFFFu &&
           !s->reserved;
}

/* 1 if b may follow a, two samples of one SM in cycle order: the
   globaltimer does not go back (by more than IKP__SMCLK_SLACK_NS), nor
   run at a rate outside IKP_MIN/MAX_CYCLES_PER_NS over a microsecond or
   more */
static int ikp__sm_clock_follows(const ikp_sm_clock *a, const ikp_sm_clock *b)
{
    double dg = (double)b->gpu_ns - (double)a->gpu_ns, rate;
    rate = dg > 0 ? (double)(b->cycles - a->cycles) / dg : 0;
    return b->gpu_ns + IKP__SMCLK_SLACK_NS >= a->gpu_ns &&
           (dg < 1000 || (rate >= IKP_MIN_CYCLES_PER_NS && rate <= IKP_MAX_CYCLES_PER_NS));
}

/* Takes s, n samples of the SM clocks allocated with cap's allocator (the
   capture keeps them; freed on failure), sorted by SM, then cycles. Each
   must be plausible, and follow the one before it on its SM (the two
   functions above). at: the byte offset of sample 0 in a file (-1: given
   by the caller). */
static ikp_result ikp__adopt_sm_clock(ikp_capture *cap, ikp_sm_clock *s, uint32_t n, int64_t at, ikp_error *err)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (!ikp__sm_clock_plausible(&s[i])) {
            ikp_result r = ikp__fail(err, IKP_ERR_BAD_HEADER, at < 0 ? -1 : at + (int64_t)i * IKP__SMCLK_ENTRY, -1,
                                     "SM clock sample %u is not plausible (SM %u, globaltimer %llu ns, cycles %llu, "
                                     "reserved %u): the globaltimer counts ns since 1970, both stay under 2^62, SMs "
                                     "under 65536",
                                     i, s[i].sm, (unsigned long long)s[i].gpu_ns, (unsigned long long)s[i].cycles,
                                     s[i].reserved);
            ikp__free(&cap->alloc, s);
            return r;
        }
    cap->sm_clock = s;
    qsort(cap->sm_clock, n, sizeof *s, ikp__cmp_sm_clock);
    cap->info.sm_clocks = n;
    cap->info.sm_clock_sms = 1;
    for (i = 1; i < n; i++) {
        const ikp_sm_clock *a = &cap->sm_clock[i - 1], *b = &cap->sm_clock[i];
        if (a->sm != b->sm) { cap->info.sm_clock_sms++; continue; }
        if (!ikp__sm_clock_follows(a, b))
            return ikp__fail(err, IKP_ERR_BAD_HEADER, at, -1,
                             "SM clock samples of SM %u contradict each other: cycles %llu at globaltimer %llu ns, "
                             "cycles %llu at %llu ns (the globaltimer goes back, or the clock runs outside %g .. %g "
                             "cycles/ns): samples of another GPU, or of another run?",
                             a->sm, (unsigned long long)a->cycles, (unsigned long long)a->gpu_ns,
                             (unsigned long long)b->cycles, (unsigned long long)b->gpu_ns, IKP_MIN_CYCLES_PER_NS,
                             IKP_MAX_CYCLES_PER_NS);
    }
    return IKP_OK;
}

/* The samples given in ikp_decode_options: copied, then as above. */
static ikp_result ikp__set_sm_clock(ikp_capture *cap, const ikp_sm_clock *s, uint32_t n, int64_t at, ikp_error *err)
{
    ikp_sm_clock *copy;
    if (n > IKP_MAX_SM_CLOCKS)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, at, -1, "%u SM clock samples, at most %u", n, IKP_MAX_SM_CLOCKS);
    if (!n) return IKP_OK;
    copy = (ikp_sm_clock *)ikp__alloc(&cap->alloc, (size_t)n * sizeof *s);
    if (!copy) return ikp__oom(err);
    memcpy(copy, s, (size_t)n * sizeof *s);
    return ikp__adopt_sm_clock(cap, copy, n, at, err);
}

IKP_DEF uint32_t ikp_capture_peers(const ikp_capture *cap, const ikp_peer_clock **peers)
{
    if (peers) *peers = cap ? cap->peers : NULL;
    return cap ? cap->info.peer_clocks : 0;
}

IKP_DEF uint32_t ikp_capture_clock(const ikp_capture *cap, const ikp_clock_sync **syncs)
{
    if (syncs) *syncs = cap ? cap->clock : NULL;
    return cap ? cap->info.clock_syncs : 0;
}

IKP_DEF ikp_result ikp_capture_host_zero(const ikp_capture *cap, int64_t *host_ns, uint32_t *uncertainty_ns,
                                         ikp_error *err)
{
    const ikp_clock_sync *c;
    uint32_t n;
    uint64_t g, unc;
    int64_t off;
    if (!cap || !host_ns) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    n = cap->info.clock_syncs;
    c = cap->clock;
    if (!cap->info.gpu_time_known)
        return ikp__fail(err, IKP_ERR_EMPTY, -1, -1, "the %s format does not give the GPU's absolute time",
                         ikp_format_name(cap->format));
    if (!n)
        return ikp__fail(err, IKP_ERR_EMPTY, -1, -1,
                         "the capture holds no reading of the GPU clock against the host's (none was given "
                         "in ikp_decode_options.clock when it was saved)");
    g = cap->info.gpu_zero_ns;
    ikp__offset_at(c, n, g, &off, &unc);
    *host_ns = (int64_t)(g - (uint64_t)off);
    if (uncertainty_ns) *uncertainty_ns = unc > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)unc;
    ikp__ok(err);
    return IKP_OK;
}

/* >>capture-ikp: IKP buffers */
/* qsort, which must not be given NULL even for no elements */
static void ikp__sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1) qsort(base, n, size, cmp);
}
static int ikp__cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The fields of an IKP lane header (FORMAT.md "Lane header"), read out. */
typedef struct ikp__lane_header {
    uint32_t magic, flags, sm;            /* word 0 */
    uint32_t block, group, num_groups;    /* word 1 */
    uint32_t grid[3];                     /* word 2 */
    uint64_t g_start, c_start;            /* words 3, 4: start anchors */
    uint64_t g_end, c_end;                /* words 5, 6: end anchors */
    uint64_t stored, dropped;             /* word 7 */
    int opened, finalized;                /* word 0 != 0; word 7 bit 63 */
} ikp__lane_header;

static void ikp__read_lane_header(const uint64_t *h, ikp__lane_header *o)
{
    o->opened = h[0] != 0;
    o->magic = (uint32_t)h[0] & 0xFFFFu;
    o->flags = (uint32_t)(h[0] >> IKP_WIRE_LANE_FLAGS_SHIFT) & 0xFFu;
    o->sm = (uint32_t)(h[0] >> 32);
    o->block = (uint32_t)h[1];
    o->group = (uint32_t)(h[1] >> 32) & 0xFFFFu;
    o->num_groups = (uint32_t)(h[1] >> 48);
    o->grid[0] = (uint32_t)h[2];
    o->grid[1] = (uint32_t)(h[2] >> 32) & 0xFFFFu;
    o->grid[2] = (uint32_t)(h[2] >> 48);
    o->g_start = h[3];
    o->c_start = h[4];
    o->g_end = h[5];
    o->c_end = h[6];
    o->finalized = (h[7] & IKP_WIRE_FINALIZED) != 0;
    o->stored = h[7] & 0xFFFFFFFFu;
    o->dropped = (h[7] >> 32) & 0x7FFFFFFFu;
}

/* Words from one lane header to the next: the header, C slots, the sink. */
static uint64_t ikp__lane_stride(uint64_t capacity)
{
    return IKP_WIRE_LANE_WORDS + capacity + IKP_WIRE_SINK_SLOTS;
}

static const uint64_t *ikp__lane_words(const ikp_capture *cap, uint64_t lane)
{
    return cap->words + IKP_WIRE_HEADER_WORDS + lane * ikp__lane_stride(cap->words[1] >> 32);
}

/* Lanes whose headers claim the same (block, group): possible only when
   lanes disagree on num_groups (else lane = block * num_groups + group is
   one-to-one, and the header check holds each lane to its slot). The first
   lane keeps the pair; later ones are flagged and shown on tracks of their
   own, so no track mixes two lanes. */
typedef struct ikp__bg { uint64_t key; uint32_t lane; } ikp__bg;
static int ikp__cmp_bg(const void *pa, const void *pb)
{
    const ikp__bg *a = (const ikp__bg *)pa, *b = (const ikp__bg *)pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->lane < b->lane ? -1 : a->lane > b->lane;
}
static ikp_result ikp__find_duplicates(ikp_capture *cap, ikp_error *err)
{
    uint32_t i, n = 0, ng0 = 0;
    int mixed = 0;
    ikp__bg *v;
    for (i = 0; i < cap->info.num_lanes; i++) {
        ikp__lane_header lh;
        if (!(cap->lanes[i].pub.flags & IKP_LANE_STARTED)) continue;
        ikp__read_lane_header(ikp__lane_words(cap, i), &lh);
        if (n++ == 0) ng0 = lh.num_groups;
        else if (lh.num_groups != ng0) mixed = 1;
    }
    if (!mixed) return IKP_OK;
    v = (ikp__bg *)ikp__alloc(&cap->alloc, (size_t)n * sizeof(ikp__bg));
    if (!v) return ikp__oom(err);
    n = 0;
    for (i = 0; i < cap->info.num_lanes; i++) {
        const ikp__lane *l = &cap->lanes[i];
        if (!(l->pub.flags & IKP_LANE_STARTED)) continue;
        v[n].key = (uint64_t)l->pub.block << 16 | l->pub.group;
        v[n++].lane = i;
    }
    qsort(v, n, sizeof *v, ikp__cmp_bg);
    for (i = 1, ng0 = 0; i < n; i++) { /* ng0: start of the run of equal keys */
        if (v[i].key != v[ng0].key) { ng0 = i; continue; }
        cap->lanes[v[i].lane].pub.flags |= IKP_LANE_DUPLICATE;
        cap->lanes[v[i].lane].pub.duplicate_of = v[ng0].lane;
        cap->info.duplicate_lanes++;
    }
    ikp__free(&cap->alloc, v);
    return IKP_OK;
}

/* The IKP buffer header (FORMAT.md "Buffer header"): checks it against the
   buffer's size and fills the capture-wide counts. */
static ikp_result ikp__ikp_header(ikp_capture *cap, uint64_t *lanes, uint64_t *capacity, uint32_t *clock_khz,
                                  ikp_error *err)
{
    const uint64_t *w = cap->words;
    uint64_t n = cap->num_words, need;
    uint32_t ver, hw, lw;
    if (n < IKP_WIRE_HEADER_WORDS)
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)(n * 8), -1,
                         "IKP buffer header needs %u words, buffer holds %llu",
                         IKP_WIRE_HEADER_WORDS, (unsigned long long)n);
    ver = (uint32_t)(w[0] >> 32) & 0xFFFFu;
    hw = (uint32_t)(w[0] >> 48) & 0xFFu;
    lw = (uint32_t)(w[0] >> 56) & 0xFFu;
    if (ver != IKP_WIRE_VERSION)
        return ikp__fail(err, IKP_ERR_BAD_VERSION, 4, -1,
                         "IKP buffer version %u, this decoder reads version %u", ver,
                         IKP_WIRE_VERSION);
    if (hw != IKP_WIRE_HEADER_WORDS || lw != IKP_WIRE_LANE_WORDS)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, 6, -1,
                         "IKP header/lane header sizes %u/%u words, expected %u/%u", hw, lw,
                         IKP_WIRE_HEADER_WORDS, IKP_WIRE_LANE_WORDS);
    *lanes = w[1] & 0xFFFFFFFFu;
    *capacity = w[1] >> 32;
    *clock_khz = (uint32_t)w[2];
    if (*lanes == 0)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, 8, -1, "IKP header claims 0 lanes");
    if (w[7])
        return ikp__fail(err, IKP_ERR_BAD_HEADER, 56, -1, "IKP header word 7 is 0x%016llx: it is reserved, 0 in "
                         "every buffer of version %u (a corrupt header?)", (unsigned long long)w[7], IKP_WIRE_VERSION);
    if (*clock_khz && (*clock_khz < IKP_MIN_CYCLES_PER_NS * 1e6 || *clock_khz > IKP_MAX_CYCLES_PER_NS * 1e6))
        return ikp__fail(err, IKP_ERR_BAD_HEADER, 16, -1,
                         "IKP header clock %u kHz is outside 50 MHz .. 20 GHz (corrupt header?)", *clock_khz);
    if (*lanes > (UINT64_MAX - IKP_WIRE_HEADER_WORDS) / ikp__lane_stride(*capacity))
        return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, 8, -1,
                         "IKP header: %llu lanes x %llu records overflows",
                         (unsigned long long)*lanes, (unsigned long long)*capacity);
    need = IKP_WIRE_HEADER_WORDS + *lanes * ikp__lane_stride(*capacity);
    if (need > n)
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)(n * 8), -1,
                         "IKP header claims %llu lanes x %llu records = %llu words, buffer holds %llu",
                         (unsigned long long)*lanes, (unsigned long long)*capacity,
                         (unsigned long long)need, (unsigned long long)n);
    cap->info.num_lanes = (uint32_t)*lanes;
    cap->info.drops_known = 1;
    cap->info.refused_lanes = w[3];
    cap->info.lanes_needed = w[4];
    cap->info.claimed_twice = w[5];
    cap->info.launch = w[6];
    return IKP_OK;
}

/* A finalized ring of pairs: its counts are in slots, and a lone record
   took two (the second a zero pad). The word after the ring holds the pads
   taken in all; the pads overwritten are those not in the stored slots, so
   the records overwritten are the slots overwritten less those pads.
   Slots are overwritten in whole pairs, each with a record, so at most
   half of them are pads, and their count is even. Counts that cannot be
   true leave dropped in slots (an upper bound) and return 0: the lane's
   records stay, and it counts as corrupt. A saturated count stays as it
   is. */
static int ikp__ikp_pads(const ikp_capture *cap, ikp__lane *l, uint64_t ring, uint64_t stored)
{
    const uint64_t *w = cap->words + l->base;
    const uint64_t pads = w[ring], dropped = l->pub.dropped;
    uint64_t k, kept = 0;
    if (dropped >= 0x7FFFFFFFu) return 1;
    for (k = 0; k < stored; k++) kept += w[(l->ring_start + k) & (ring - 1)] == 0; /* ring: a power of two */
    if (pads < kept || pads - kept > dropped / 2 || (dropped & 1)) return 0; /* no product: it could wrap */
    l->pub.dropped -= pads - kept;
    return 1;
}

/* One lane's header: is it opened, well formed and in its own slot; where
   its records are (a ring starts past the overwritten ones) and how many. */
static void ikp__ikp_lane(ikp_capture *cap, uint64_t i, uint64_t capacity)
{
    ikp__lane *l = &cap->lanes[i];
    const uint64_t *w = cap->words;
    ikp__lane_header lh;
    uint64_t ring = capacity, stored, k;
    int bad = 0; /* counts that cannot be true */
    ikp__read_lane_header(ikp__lane_words(cap, i), &lh);
    l->base = IKP_WIRE_HEADER_WORDS + i * ikp__lane_stride(capacity) + IKP_WIRE_LANE_WORDS;
    l->step = 1;
    l->index = (uint32_t)i;
    l->pub.sm = IKP_NO_SM;
    l->pub.first_ps = l->pub.last_ps = INT64_MIN;
    if (!lh.opened) {
        if (capacity > 0 && w[l->base] != 0) { /* records with no header */
            l->pub.flags = IKP_LANE_CORRUPT;
            cap->info.corrupt_lanes++;
        }
        return;
    }
    if (lh.magic != IKP_WIRE_LANE_MAGIC || lh.num_groups == 0 || lh.group >= lh.num_groups ||
        (uint64_t)lh.block * lh.num_groups + lh.group != i) {
        l->pub.flags = IKP_LANE_CORRUPT;
        cap->info.corrupt_lanes++;
        return;
    }
    l->pub.flags = IKP_LANE_STARTED;
    l->pub.sm = lh.sm;
    if (lh.sm > 0xFFFFu) { /* a damaged header: no SM's (as SM clock samples are bounded) */
        l->pub.sm = IKP_NO_SM;
        cap->info.bad_sm_lanes++;
    }
    l->pub.block = lh.block;
    l->pub.group = lh.group;
    memcpy(l->grid, lh.grid, sizeof l->grid);
    if (lh.flags & IKP_WIRE_LANE_CYCLES) l->pub.flags |= IKP_LANE_CYCLES;
    if (lh.flags & IKP_WIRE_LANE_RING) { /* the ring: the largest power of two that fits */
        l->pub.flags |= IKP_LANE_RING;
        ring = 0;
        if (capacity) { ring = 1; while (ring * 2 <= capacity) ring *= 2; }
    }
    if (lh.num_groups > cap->info.num_groups) cap->info.num_groups = lh.num_groups;
    l->pads = (lh.flags & IKP_WIRE_LANE_RING) && (lh.flags & IKP_WIRE_LANE_PAIRS);
    l->ticks = (lh.flags & IKP_WIRE_LANE_CYCLES) && (lh.flags & IKP_WIRE_LANE_TICKS);
    l->iticks = l->ticks && (lh.flags & IKP_WIRE_LANE_ITICKS);
    if (lh.finalized) {
        l->pub.flags |= IKP_LANE_FINALIZED;
        stored = lh.stored;
        l->pub.dropped = lh.dropped;
        if (stored > ring) { stored = ring; bad = 1; }
        if ((lh.flags & IKP_WIRE_LANE_RING) && ring && l->pub.dropped)
            l->ring_start = l->pub.dropped % ring; /* record n_total - stored */
        if (l->pads && ring && !ikp__ikp_pads(cap, l, ring, stored)) bad = 1;
        cap->info.corrupt_lanes += bad; /* once a lane */
    } else {
        cap->info.unfinalized_lanes++;
        /* a ring of pairs: a pair's first slot is never a pad */
        for (k = 0; k < ring && w[l->base + k] != 0; k += l->pads ? 2 : 1) {}
        stored = k < ring ? k : ring;
    }
    l->slots = stored;
    l->ring_size = (lh.flags & IKP_WIRE_LANE_RING) ? ring : 0;
}

/* The capture's time 0: the earliest start anchor. Start anchors more than
   2^46 ns (19.5 hours) from their median are corrupt: those lanes are
   flagged and left out. 0 when no lane started. */
static ikp_result ikp__ikp_zero(ikp_capture *cap, ikp_error *err)
{
    uint64_t i, n = 0, median, gref = UINT64_MAX;
    uint64_t *g0s = (uint64_t *)ikp__alloc(&cap->alloc, (size_t)cap->info.num_lanes * sizeof(uint64_t));
    ikp__lane_header lh;
    if (!g0s) return ikp__oom(err);
    for (i = 0; i < cap->info.num_lanes; i++) {
        if (!(cap->lanes[i].pub.flags & IKP_LANE_STARTED)) continue;
        ikp__read_lane_header(ikp__lane_words(cap, i), &lh);
        g0s[n++] = lh.g_start;
    }
    if (n == 0) { ikp__free(&cap->alloc, g0s); return IKP_OK; }
    qsort(g0s, (size_t)n, sizeof(uint64_t), ikp__cmp_u64);
    median = g0s[n / 2];
    ikp__free(&cap->alloc, g0s);
    for (i = 0; i < cap->info.num_lanes; i++) {
        ikp__lane *l = &cap->lanes[i];
        if (!(l->pub.flags & IKP_LANE_STARTED)) continue;
        ikp__read_lane_header(ikp__lane_words(cap, i), &lh);
        if ((lh.g_start > median ? lh.g_start - median : median - lh.g_start) > IKP__ANCHOR_LIMIT) {
            l->pub.flags = IKP_LANE_CORRUPT;
            cap->info.corrupt_lanes++;
            continue;
        }
        if (lh.g_start < gref) gref = lh.g_start;
    }
    if (gref != UINT64_MAX) cap->gref_ns = gref;
    return IKP_OK;
}

/* The capture's cycle rate: summed over the finalized cycle lanes whose
   anchors span IKP__RATE_MIN_SPAN_NS or more (else over all of them), else
   the header's nominal clock, else 1 cycle/ns; opt->cycles_per_ns wins. */
static double ikp__ikp_rate(const ikp_capture *cap, uint32_t clock_khz, const ikp_decode_options *opt)
{
    const uint32_t want = IKP_LANE_STARTED | IKP_LANE_FINALIZED | IKP_LANE_CYCLES;
    double sum_c = 0, sum_g = 0, sum_c_any = 0, sum_g_any = 0, rate;
    const double nominal = clock_khz ? clock_khz / 1e6 : 1.0;
    ikp__lane_header lh;
    uint64_t i;
    if (opt && opt->cycles_per_ns > 0) return opt->cycles_per_ns;
    for (i = 0; i < cap->info.num_lanes; i++) {
        if ((cap->lanes[i].pub.flags & want) != want) continue;
        ikp__read_lane_header(ikp__lane_words(cap, i), &lh);
        if (lh.g_end > lh.g_start && lh.c_end > lh.c_start && lh.g_end - lh.g_start < IKP__ANCHOR_LIMIT &&
            lh.c_end - lh.c_start < IKP__ANCHOR_LIMIT) {
            double dg = (double)(lh.g_end - lh.g_start), dc = (double)(lh.c_end - lh.c_start);
            sum_c_any += dc; sum_g_any += dg;
            if (dg >= IKP__RATE_MIN_SPAN_NS) { sum_c += dc; sum_g += dg; }
        }
    }
    if (sum_g > 0) rate = sum_c / sum_g;
    else if (sum_g_any > 0) rate = sum_c_any / sum_g_any;
    else rate = nominal;
    return rate >= IKP_MIN_CYCLES_PER_NS && rate <= IKP_MAX_CYCLES_PER_NS ? rate : nominal;
}

/* a lane's fixed-point rate and how far its stamps may lie from its anchor */
static void ikp__lane_limits(ikp__lane *l)
{
    double lim = (double)IKP__MAX_ABS_PS / l->ps_per_tick;
    l->ps_per_tick_q32 = (int64_t)(l->ps_per_tick * 4294967296.0 + 0.5);
    l->rel_limit = lim < (double)(1ll << 52) ? (int64_t)lim : (1ll << 52);
}

/* Where a started lane's ticks fall in time: its anchors (kept to 62 bits:
   the unwrap needs only their low 32, and tick arithmetic near them cannot
   overflow int64) and, for a cycle lane, its own rate when its anchors
   span long enough and agree with the capture's within 2x. */
static void ikp__ikp_place(ikp_capture *cap, ikp__lane *l, double rate, const ikp_decode_options *opt)
{
    const uint64_t lim = IKP__ANCHOR_LIMIT;
    ikp__lane_header lh;
    int fin = (l->pub.flags & IKP_LANE_FINALIZED) != 0;
    ikp__read_lane_header(ikp__lane_words(cap, l->index), &lh);
    l->ref_ps = (int64_t)(lh.g_start - cap->gref_ns) * 1000;
    if (l->pub.flags & IKP_LANE_CYCLES) {
        double r = rate;
        int g_ok = lh.g_end >= lh.g_start && lh.g_end - lh.g_start < lim;
        l->anchor = (int64_t)(lh.c_start & IKP__ANCHOR_MASK);
        l->has_end = fin && lh.c_end >= lh.c_start && lh.c_end - lh.c_start < lim;
        l->end_anchor = l->anchor + (l->has_end ? (int64_t)(lh.c_end - lh.c_start) : 0);
        if (l->has_end && g_ok && lh.g_end - lh.g_start >= IKP__RATE_MIN_SPAN_NS && !(opt && opt->cycles_per_ns > 0)) {
            double lr = (double)(lh.c_end - lh.c_start) / (double)(lh.g_end - lh.g_start);
            if (lr > rate * 0.5 && lr < rate * 2) r = lr;
        }
        l->ps_per_tick = 1000.0 / r;
        l->pub.cycles_per_ns = r;
        l->g_start = (int64_t)(lh.g_start & IKP__ANCHOR_MASK);
        l->end_ok = l->has_end && g_ok;
        l->end_ps = l->end_ok ? l->ref_ps + (int64_t)(lh.g_end - lh.g_start) * 1000 : l->ref_ps;
        cap->info.timer_cycles = 1;
    } else {
        l->anchor = (int64_t)(lh.g_start & IKP__ANCHOR_MASK);
        l->has_end = fin && lh.g_end >= lh.g_start && lh.g_end - lh.g_start < lim;
        l->end_anchor = l->anchor + (l->has_end ? (int64_t)(lh.g_end - lh.g_start) : 0);
        l->ps_per_tick = 1000.0;
    }
    ikp__lane_limits(l);
}

/* An IKP buffer: the header, each lane's header, the capture's time 0 and
   cycle rate, then each lane's place in time. */
static ikp_result ikp__open_ikp(ikp_capture *cap, const ikp__open_args *a, ikp_error *err)
{
    const ikp_decode_options *opt = a->opt;
    ikp_capture_info *info = &cap->info;
    uint64_t lanes = 0, capacity = 0, i;
    uint32_t clock_khz = 0;
    double rate;
    ikp_result r = ikp__ikp_header(cap, &lanes, &capacity, &clock_khz, err);
    if (r != IKP_OK) return r;
    cap->lanes = (ikp__lane *)ikp__alloc(&cap->alloc, (size_t)lanes * sizeof(ikp__lane));
    if (!cap->lanes) return ikp__oom(err);
    memset(cap->lanes, 0, (size_t)lanes * sizeof(ikp__lane));
    for (i = 0; i < lanes; i++) ikp__ikp_lane(cap, i, capacity);
    if ((r = ikp__ikp_zero(cap, err)) != IKP_OK) return r;
    rate = ikp__ikp_rate(cap, clock_khz, opt);
    for (i = 0; i < lanes; i++) {
        ikp__lane *l = &cap->lanes[i];
        if (!(l->pub.flags & IKP_LANE_STARTED)) continue;
        ikp__ikp_place(cap, l, rate, opt);
        if (!info->grid[0] && l->grid[0]) memcpy(info->grid, l->grid, sizeof info->grid);
    }
    if (info->grid[0])
        info->num_blocks = info->grid[0] * (info->grid[1] ? info->grid[1] : 1) *
                           (info->grid[2] ? info->grid[2] : 1);
    if ((r = ikp__sm_maps(cap, opt, err)) != IKP_OK) return r;
    return ikp__find_duplicates(cap, err);
}

/* the row's check: the IKP magic in word 0's low half */
static ikp_result ikp__ikp_check(const uint64_t *w, const char *what, ikp_error *err)
{
    if ((w[0] & 0xFFFFFFFFu) == IKP_WIRE_MAGIC) return IKP_OK;
    if (what) return ikp__fail(err, IKP_ERR_BAD_MAGIC, 0, -1, "this is %s", what);
    return ikp__fail(err, IKP_ERR_BAD_MAGIC, 0, -1,
                     "word 0 = 0x%016llx has no IKP magic (buffer not reset by ikp_cuda_buffer_reset?)",
                     (unsigned long long)w[0]);
}

static ikp_result ikp__json_check(const uint64_t *w, const char *what, ikp_error *err)
{
    (void)w;
    return ikp__fail(err, IKP_ERR_BAD_MAGIC, 0, -1, "%s%sa Proton or IKET trace is a JSON file: open it as a file "
                     "(ikp_capture_open_path or ikp_capture_open_data)", what ? what : "", what ? ": " : "");
}

/* The row's scan: a started lane's mapping limits and SM clock samples,
   the walk's first pass, then its placement (a globaltimer lane: to the
   timer's tick); info gets the lane placed worst (cross_sm_ns) and what
   the placement rests on. */
static void ikp__ikp_scan(const ikp_capture *cap, ikp__lane *l, ikp_capture_info *info)
{
    uint32_t c;
    ikp__lane_samples(cap, l);
    if (info && l->smp_end > l->smp_first) info->sampled_lanes++;
    ikp__scan_lane(cap, l, NULL);
    if (!(l->pub.flags & IKP_LANE_CYCLES)) {
        l->pub.placement_ns = IKP__GLOBALTIMER_TICK_NS;
        l->pub.reading_gap_ns = 0;
    }
    if (!info) return;
    c = l->pub.flags & IKP_LANE_CYCLES ? 2 * l->pub.placement_ns : l->pub.placement_ns;
    if (c > info->cross_sm_ns) {
        info->cross_sm_ns = c;
        info->worst_lane = l->index;
        info->reading_gap_ns = l->pub.reading_gap_ns;
    }
    if (l->pub.flags & IKP_LANE_CYCLES) {
        if (l->smp_end > l->smp_first) info->placement = IKP_PLACED_SAMPLES;
        else if (info->placement != IKP_PLACED_SAMPLES) info->placement = IKP_PLACED_ANCHORS;
    } else if (!info->placement)
        info->placement = IKP_PLACED_GLOBALTIMER;
}

/* the row's origin: the earliest start anchor's globaltimer (time 0 before the shift) */
static int ikp__ikp_origin(const ikp_capture *cap, uint64_t *ns)
{
    if (!cap->gref_ns) return 0;
    *ns = cap->gref_ns;
    return 1;
}

/* >>capture-peer: the peer formats' common parts */
/* Word 0 = (num_groups << 32) | num_blocks, then one-word records: a
   32-bit stamp (bits 32..63) over a tag whose bits 12..31 hold a lane
   field. What the three share is here; each one's own functions follow in
   its block. */

/* Which peer format a buffer is, when it carries no row's mark and word 0
   reads as a peer header that fits it: each peer row's fit weighs the
   words after word 0 (its block says how). The format more words fit
   wins; a tie goes to the higher rank (IKP__RANK_*; e.g. tirx and
   flashinfer read alike, one group and SM 0 everywhere, go to tirx if its
   records sit strided, else to flashinfer), and is reported in detect_tie
   when a format in it holds a guess (triton-dist, unless two or more of
   its block words decided). ikp_capture_info keeps the counts, so a
   verdict that is not unanimous can be reported. */
static ikp_format ikp__detect_peer(const uint64_t *w, uint64_t n, uint64_t nb, uint64_t ng,
                                   ikp_capture_info *info, int *strided)
{
    ikp__fit fit[IKP_FORMAT_COUNT];
    uint64_t records = 0;
    int f, pick = -1, tied = 0, guess = 0;
    memset(fit, 0, sizeof fit);
    for (f = 0; f < (int)IKP_FORMAT_COUNT; f++) {
        if (!(ikp__formats[f].flags & IKP__FMT_PEER)) continue;
        ikp__formats[f].fit(w, n, nb, ng, &fit[f]);
        info->detect_fit[f] = fit[f].fit;
        if (fit[f].records > records) records = fit[f].records;
        if (pick < 0 || fit[f].fit > fit[pick].fit || (fit[f].fit == fit[pick].fit && fit[f].rank > fit[pick].rank))
            pick = f;
    }
    info->detect_records = records;
    for (f = 0; f < (int)IKP_FORMAT_COUNT; f++) /* the formats that fit as many words as the winner */
        if ((ikp__formats[f].flags & IKP__FMT_PEER) && fit[f].fit > 0 && fit[f].fit == fit[pick].fit) {
            tied += f != pick;
            guess |= fit[f].guess;
        }
    if (tied && guess) info->detect_tie = 1;
    *strided = fit[pick].strided;
    return (ikp_format)pick;
}

/* word 0: the blocks and groups, neither 0 */
static ikp_result ikp__peer_header(const ikp_capture *cap, uint64_t *nb, uint64_t *ng, ikp_error *err)
{
    const uint64_t *w = cap->words;
    *nb = w[0] & 0xFFFFFFFFu;
    *ng = w[0] >> 32;
    if (*nb == 0 || *ng == 0)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, 0, -1,
                         "%s header: %llu blocks x %llu groups (word 0 = 0x%016llx)",
                         ikp_format_name(cap->format), (unsigned long long)*nb,
                         (unsigned long long)*ng, (unsigned long long)w[0]);
    return IKP_OK;
}

/* every lane owns at least its first slot */
static ikp_result ikp__peer_room(const ikp_capture *cap, uint64_t nb, uint64_t ng, ikp_error *err)
{
    const uint64_t n = cap->num_words, lanes = nb * ng;
    if (lanes > n - 1)
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)(n * 8), -1,
                         "%s header claims %llu blocks x %llu groups = %llu lanes, buffer holds %llu record slots",
                         ikp_format_name(cap->format), (unsigned long long)nb,
                         (unsigned long long)ng, (unsigned long long)lanes,
                         (unsigned long long)(n - 1));
    return IKP_OK;
}

/* the grid of a header that fits, and the word of lane 0's first slot */
static void ikp__peer_grid(ikp_capture *cap, uint64_t nb, uint64_t ng, uint64_t base0)
{
    cap->base0 = base0;
    cap->info.num_lanes = (uint32_t)(nb * ng);
    cap->info.num_blocks = (uint32_t)nb;
    cap->info.num_groups = (uint32_t)ng;
}

/* A peer lane's slots, then its time origin from its first record: 1 with
   that record in *first, 0 if the lane holds none (it did not start). The
   rest of l comes from ikp__peer_lane. */
static int ikp__peer_first(const ikp_capture *cap, uint32_t i, ikp__lane *l, uint64_t *first)
{
    const uint64_t n = cap->num_words;
    ikp__cursor c;
    uint64_t x;
    if (cap->index) { /* tirx's index layout */
        l->base = cap->index_base[i];
        l->slots = cap->index_base[i + 1] - cap->index_base[i];
    } else {
        l->base = cap->base0 + (uint64_t)i;
        l->step = cap->stride;
        l->slots = i < cap->stride && l->base < n ? (n - l->base + cap->stride - 1) / cap->stride : 0;
    }
    ikp__cursor_init(&c, cap, l);
    if (!ikp__next_word(&c, &x)) return 0;
    /* unwrap from the first stamp; place it by its distance from the window start */
    l->anchor = (int64_t)(uint32_t)(x >> 32);
    l->ref_ps = (int64_t)(uint32_t)((uint32_t)(x >> 32) - cap->peer_vmin) * cap->tick_ps - cap->peer_shift_ps;
    l->pub.flags = IKP_LANE_STARTED;
    *first = x;
    return 1;
}

/* Peer formats: the open-time scan of every lane in one sequential pass
   over the buffer, with a little state per lane, instead of a strided walk
   per lane (lanes interleave word by word, so walks jump across the whole
   buffer). Record by record it does what ikp__scan_lane does on a walk:
   the same unwrap, counts and time range. Used when its state is small
   (a quarter of the buffer, or 1 MiB); tests compare it with the walks
   lane by lane. */
typedef struct ikp__pscan {
    ikp__clock ck;              /* the lane's unwrap state, as in a walk */
    int64_t lo, hi;             /* ticks on the lane's unwrapped axis */
    uint64_t records, after, invalid;
    uint32_t anchor;
    uint8_t started, closed, fin, any;
} ikp__pscan;

/* the capture window: the earliest stamp in the circular sense, seen from
   the first one (captures shorter than 2^31 ns) */
typedef struct ikp__window { uint32_t v0; int32_t mind; int have; } ikp__window;
static inline void ikp__window_add(ikp__window *wn, uint32_t t)
{
    if (!wn->have) { wn->v0 = t; wn->have = 1; }
    if ((int32_t)(t - wn->v0) < wn->mind) wn->mind = (int32_t)(t - wn->v0);
}

static void ikp__peer_window(ikp_capture *cap)
{
    ikp__window wn = {0, 0, 0};
    const int filled = (ikp__formats[cap->format].flags & IKP__FMT_FILLED) != 0;
    uint64_t i;
    for (i = cap->base0; i < cap->num_words; i++)
        if (filled ? !IKP__TD_EMPTY(cap->words[i]) : cap->words[i] != 0)
            ikp__window_add(&wn, (uint32_t)(cap->words[i] >> 32));
    cap->peer_vmin = wn.v0 + (uint32_t)wn.mind;
}

static int ikp__peer_pass(ikp_capture *cap, int64_t *t0, int64_t *t1)
{
    const uint64_t *w = cap->words;
    const uint64_t n = cap->num_words, lanes = cap->info.num_lanes;
    const uint64_t s = cap->index ? lanes : cap->stride;
    const ikp__format_desc *d = &ikp__formats[cap->format];
    const int named = (d->flags & IKP__FMT_LANE_FIELD) != 0, stop = !cap->keep_after_finalize;
    const int own = (d->flags & IKP__FMT_OWN_LANE) != 0, filled = (d->flags & IKP__FMT_FILLED) != 0;
    const uint32_t kind_mask = d->kind_mask;
    uint8_t kinds[4]; /* the record's kind, as the row's decode reads it */
    ikp_capture_info *info = &cap->info;
    ikp__pscan *st;
    ikp__lane tl; /* what ikp__unwrap reads of a peer lane: anchor, no end, the limit */
    ikp__window wn = {0, 0, 0};
    uint64_t i, pos = 0;
    /* at most a quarter of the buffer, or 1 MiB */
    if (lanes * sizeof(ikp__pscan) > n * 2 && lanes * sizeof(ikp__pscan) > (1u << 20)) return 0;
    st = (ikp__pscan *)ikp__alloc(&cap->alloc, (size_t)lanes * sizeof(ikp__pscan));
    if (!st) return 0;
    memset(st, 0, (size_t)lanes * sizeof(ikp__pscan));
    memset(&tl, 0, sizeof tl);
    memcpy(kinds, d->kinds, sizeof kinds);
    tl.rel_limit = (int64_t)(IKP__MAX_ABS_PS / cap->tick_ps);
    for (i = cap->base0; i < n; i++, pos = pos + 1 == s ? 0 : pos + 1) {
        uint64_t x = w[i], ln;
        ikp__pscan *p;
        uint32_t lo;
        unsigned kind;
        if (filled ? IKP__TD_EMPTY(x) : !x) continue;
        lo = (uint32_t)(x >> 32);
        ikp__window_add(&wn, lo);
        ln = (uint32_t)x >> 12;
        if (named) {
            if (ln >= lanes || (!cap->index && ln != pos)) continue; /* out of range: counted at open */
        } else ln = pos;
        p = &st[ln];
        if (p->closed) { p->after++; continue; }
        p->records++;
        if (p->fin) p->after++;
        if (!p->started) { p->started = 1; p->anchor = lo; p->ck.prev = lo; }
        if (own && ((uint32_t)x >> 12) != (pos & 0xFFFFFu)) { p->invalid++; continue; } /* names another lane */
        kind = kinds[(uint32_t)x & kind_mask];
        if (kind == IKP__KIND_INVALID) { p->invalid++; continue; } /* a kind the row reads as none (flashinfer: 3) */
        if (kind == IKP__KIND_FINALIZE) {
            p->fin = 1;
            p->closed = (uint8_t)stop;
        }
        tl.anchor = p->anchor;
        if (!ikp__unwrap(&tl, &p->ck, lo)) { p->invalid++; continue; }
        if (!p->any || p->ck.prev < p->lo) p->lo = p->ck.prev;
        if (!p->any || p->ck.prev > p->hi) p->hi = p->ck.prev;
        p->any = 1;
    }
    cap->peer_vmin = wn.v0 + (uint32_t)wn.mind;
    for (i = 0; i < lanes; i++) {
        const ikp__pscan *p = &st[i];
        int64_t ref;
        if (!p->started) continue;
        info->active_lanes++;
        info->records += p->records;
        info->invalid += p->invalid;
        info->backwards += p->ck.backwards;
        info->after_finalize += p->after;
        if (!p->any) continue;
        ref = (int64_t)(uint32_t)(p->anchor - cap->peer_vmin) * cap->tick_ps;
        if (ref + (p->lo - (int64_t)p->anchor) * cap->tick_ps < *t0) *t0 = ref + (p->lo - (int64_t)p->anchor) * cap->tick_ps;
        if (ref + (p->hi - (int64_t)p->anchor) * cap->tick_ps > *t1) *t1 = ref + (p->hi - (int64_t)p->anchor) * cap->tick_ps;
    }
    ikp__free(&cap->alloc, st);
    return 1;
}


/* >>capture-tirx: tirx (TVM TIRx CudaProfiler, warpscope) */
/* Record: lane[31:12] | id[11:2] | kind[1:0] (3: the lane's finalize)
   under the stamp; record k of lane L at word 1 + L + k * stride, with a
   stride the user chooses (the lanes, or SMs x groups for persistent
   kernels). */

/* The vote: a word fits tirx if its lane field names a lane of the
   header. Its records sit strided (a tie with flashinfer is tirx's) when
   every one that fits sits at 1 + lane + k * lanes. */
static void ikp__tirx_fit(const uint64_t *w, uint64_t n, uint64_t nb, uint64_t ng, ikp__fit *f)
{
    uint64_t i, pos, total = 0, t = 0, bad = 0, lanes = nb * ng;
    for (i = 1; i < n; i += lanes) { /* a row of slots, one a lane (pos) */
        const uint64_t *row = w + i;
        const uint64_t m = n - i < lanes ? n - i : lanes;
        for (pos = 0; pos < m; pos++) {
            uint64_t x = row[pos];
            if (x) {
                uint32_t field = (uint32_t)x >> 12;
                total++;
                if (field < lanes) { t++; bad |= field ^ pos; } /* bad: not strided by the lanes */
            }
        }
    }
    f->records = total;
    f->fit = t;
    f->strided = bad == 0;
    f->rank = bad == 0 ? IKP__RANK_STRIDED : IKP__RANK_SCATTERED;
}

/* tirx: does every record that names a lane of the header sit at
   1 + lane + k * s? Records naming lanes past the header are counted. */
static int ikp__tirx_stride_ok(const uint64_t *w, uint64_t n, uint64_t lanes, uint64_t s, uint64_t *oor)
{
    uint64_t i, pos = 0, bad = 0;
    *oor = 0;
    for (i = 1; i < n; i++) {
        uint64_t x = w[i];
        if (x) {
            uint32_t ln = (uint32_t)x >> 12;
            if (ln >= lanes) (*oor)++;
            else bad |= ln ^ pos;
        }
        if (++pos == s) pos = 0;
    }
    return bad == 0;
}

/* tirx: how to walk each lane. TIRx writes record k of lane L at word
   1 + L + k * stride, with a stride the user chooses (the lanes, or SMs x
   groups for persistent kernels): when every record sits so, lanes are
   walked in place. Otherwise the records' positions are grouped by lane in
   an index (4 bytes a record). */
static ikp_result ikp__tirx_layout(ikp_capture *cap, uint64_t lanes, int strided, ikp_error *err)
{
    const uint64_t *w = cap->words;
    uint64_t n = cap->num_words, i, s = lanes, i0 = 0, i1 = 0, oor, total = 0, *cnt;
    if (strided) { /* known from detection: every record sits at 1 + lane + k * lanes */
        cap->stride = s;
        cap->info.out_of_range = cap->info.detect_records - cap->info.detect_fit[IKP_FORMAT_TIRX];
        return IKP_OK;
    }
    if (ikp__tirx_stride_ok(w, n, lanes, s, &oor)) {
        cap->stride = s;
        cap->info.out_of_range = oor;
        return IKP_OK;
    }
    /* another stride: between the first two records of the first lane seen */
    for (i = 1; i < n && !i0; i++)
        if (w[i] && ((uint32_t)w[i] >> 12) < lanes) i0 = i;
    for (i = i0 + 1; i0 && i < n && !i1; i++)
        if (w[i] && ((uint32_t)w[i] >> 12) == ((uint32_t)w[i0] >> 12)) i1 = i;
    if (i1 && ikp__tirx_stride_ok(w, n, lanes, i1 - i0, &oor)) {
        cap->stride = i1 - i0;
        cap->info.out_of_range = oor;
        return IKP_OK;
    }
    cap->index_base = (uint64_t *)ikp__alloc(&cap->alloc, (size_t)(lanes + 1) * sizeof(uint64_t));
    if (!cap->index_base) return ikp__oom(err);
    cnt = cap->index_base;
    memset(cnt, 0, (size_t)(lanes + 1) * sizeof(uint64_t));
    cap->info.out_of_range = 0;
    for (i = 1; i < n; i++) {
        uint64_t ln = (uint32_t)w[i] >> 12;
        if (!w[i]) continue;
        if (ln >= lanes) { cap->info.out_of_range++; continue; }
        cnt[ln + 1]++;
        total++;
    }
    for (i = 0; i < lanes; i++) cnt[i + 1] += cnt[i];
    cap->index = (uint32_t *)ikp__alloc(&cap->alloc, (size_t)total * sizeof(uint32_t));
    if (!cap->index) return ikp__oom(err);
    /* fill with cnt[ln] as the write cursor, then shift back to the starts */
    for (i = 1; i < n; i++) {
        uint64_t ln = (uint32_t)w[i] >> 12;
        if (!w[i] || ln >= lanes) continue;
        cap->index[cnt[ln]++] = (uint32_t)i;
    }
    for (i = lanes; i > 0; i--) cnt[i] = cnt[i - 1];
    cnt[0] = 0;
    return IKP_OK;
}

static ikp_result ikp__open_tirx(ikp_capture *cap, const ikp__open_args *a, ikp_error *err)
{
    uint64_t nb, ng, lanes;
    ikp_result r;
    if ((r = ikp__peer_header(cap, &nb, &ng, err)) != IKP_OK) return r;
    lanes = nb * ng;
    if (lanes > (1u << 20))
        return ikp__fail(err, IKP_ERR_BAD_HEADER, 0, -1,
                         "tirx header claims %llu lanes; its lane field holds at most 1048576",
                         (unsigned long long)lanes);
    if ((r = ikp__peer_room(cap, nb, ng, err)) != IKP_OK) return r;
    if (cap->num_words > 0xFFFFFFFFull)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, 0, -1, "tirx buffer over 2^32 words");
    ikp__peer_grid(cap, nb, ng, 1);
    return ikp__tirx_layout(cap, lanes, a->strided, err);
}

/* the row's lane: its slots and first record (the index layout walks only its own words) */
static void ikp__tirx_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l)
{
    uint64_t first;
    ikp__peer_first(cap, i, l, &first);
}

/* >>capture-flashinfer: flashinfer (profiler.cuh) */
/* Record: sm[31:24] | block[23:12] | id[11:2] | kind[1:0] (3: invalid)
   under the stamp; record k of lane L (L = block * groups + group) at word
   1 + L + k * lanes; zero words are empty. */

/* The vote: a word fits flashinfer if its kind is not 3 (a tirx finalize,
   invalid here), the low 12 bits of its block field equal the block of
   the lane its position belongs to, and its SM field equals that of the
   lane's first record (a block runs on one SM). */
static void ikp__flashinfer_fit(const uint64_t *w, uint64_t n, uint64_t nb, uint64_t ng, ikp__fit *f)
{
    uint64_t i, pos, blk, grp, total = 0, fi = 0, lanes = nb * ng;
    for (i = 1; i < n; i += lanes) { /* a row of slots, one a lane: pos = blk * ng + grp */
        const uint64_t *row = w + i;
        const uint64_t m = n - i < lanes ? n - i : lanes;
        for (pos = 0, blk = 0; pos < m; blk++)
            for (grp = 0; grp < ng && pos < m; grp++, pos++) {
                uint64_t x = row[pos];
                if (x) {
                    uint32_t tag = (uint32_t)x, field = tag >> 12;
                    total++;
                    if ((tag & 3u) != 3u && (field & 0xFFFu) == (blk & 0xFFFu) &&
                        (tag >> 24) == ((uint32_t)w[1 + pos] >> 24))
                        fi++;
                }
            }
    }
    f->records = total;
    f->fit = fi;
    f->rank = IKP__RANK_PLAIN;
}

static ikp_result ikp__open_flashinfer(ikp_capture *cap, const ikp__open_args *a, ikp_error *err)
{
    uint64_t nb, ng;
    ikp_result r;
    (void)a;
    if ((r = ikp__peer_header(cap, &nb, &ng, err)) != IKP_OK) return r;
    if ((r = ikp__peer_room(cap, nb, ng, err)) != IKP_OK) return r;
    ikp__peer_grid(cap, nb, ng, 1);
    cap->stride = nb * ng;
    return IKP_OK;
}

/* the row's lane: its slots and first record, whose SM field gives the
   lane's SM when the blocks number fewer than 4096 */
static void ikp__flashinfer_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l)
{
    uint64_t x;
    if (ikp__peer_first(cap, i, l, &x) && cap->info.num_blocks < 4096) l->pub.sm = (uint32_t)(x >> 24) & 0xFFu;
}

/* >>capture-triton: triton-dist (triton_dist.tools.profiler) */
/* After word 0, one word per block, (sm << 32) | block, then record k of
   lane L at word 1 + num_blocks + L + k * lanes: lane[31:12] |
   task_type[11:1] | is_start[0] under the stamp. Empty slots read
   IKP__TD_EMPTY; a record whose lane field is not its slot's lane is
   invalid (IKP__FMT_OWN_LANE). */

/* The vote: a word fits triton-dist if it is an empty-slot value
   (0x7FFF..., 0xFFFF...), or one of the num_blocks block words right after
   word 0 reading (sm << 32) | block with a plausible SM (< 65536), or a
   record after them whose lane field equals its position's lane. Its
   block words decide a tie: won when they are all well formed (sure with
   two or more, a guess with one), else lost (a guess too). */
static void ikp__td_fit(const uint64_t *w, uint64_t n, uint64_t nb, uint64_t ng, ikp__fit *f)
{
    uint64_t i, pos, d = 0, blocks_ok = 0, blocks_bad = 0, lanes = nb * ng;
    if (nb + lanes <= n - 1) { /* room for the block words and a slot per lane */
        for (i = 0; i < nb; i++) {
            uint64_t x = w[1 + i];
            if (!x) continue;
            if (IKP__TD_EMPTY(x)) d++;
            else if ((uint32_t)x == i && (x >> 32) < 65536) { d++; blocks_ok++; }
            else blocks_bad++;
        }
        for (i = 1 + nb; i < n; i += lanes) { /* a row of slots, one a lane (pos) */
            const uint64_t *row = w + i;
            const uint64_t m = n - i < lanes ? n - i : lanes;
            for (pos = 0; pos < m; pos++) {
                uint64_t x = row[pos];
                if (x && (IKP__TD_EMPTY(x) || ((uint32_t)x >> 12) == (pos & 0xFFFFFu))) d++;
            }
        }
    }
    f->fit = d;
    f->rank = blocks_ok && !blocks_bad ? IKP__RANK_MARKED : IKP__RANK_LOSES;
    f->guess = !(blocks_ok >= 2 && !blocks_bad);
}

static ikp_result ikp__open_td(ikp_capture *cap, const ikp__open_args *a, ikp_error *err)
{
    const uint64_t n = cap->num_words;
    uint64_t nb, ng, lanes;
    ikp_result r;
    (void)a;
    if ((r = ikp__peer_header(cap, &nb, &ng, err)) != IKP_OK) return r;
    lanes = nb * ng;
    /* the block words, then a slot per lane */
    if (nb + lanes > n - 1)
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)(n * 8), -1,
                         "triton-dist header claims %llu blocks x %llu groups: %llu block words and "
                         "%llu lanes need %llu words after the header, buffer holds %llu",
                         (unsigned long long)nb, (unsigned long long)ng, (unsigned long long)nb,
                         (unsigned long long)lanes, (unsigned long long)(nb + lanes),
                         (unsigned long long)(n - 1));
    if ((r = ikp__peer_room(cap, nb, ng, err)) != IKP_OK) return r;
    ikp__peer_grid(cap, nb, ng, 1 + nb);
    cap->stride = lanes;
    return IKP_OK;
}

/* the row's lane: its slots and first record; its SM from its block's
   word, when that word names its own block */
static void ikp__td_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l)
{
    uint64_t first, b = cap->words[1 + l->pub.block];
    if (!IKP__TD_EMPTY(b) && (uint32_t)b == l->pub.block && (b >> 32) < IKP_NO_SM) l->pub.sm = (uint32_t)(b >> 32);
    ikp__peer_first(cap, i, l, &first);
}

/* >>capture-nuggets: transformer_nuggets: a slice of words per unit */
/* nuggets (legacy): [count][start, dur, tag, tid] x max_events, 64-bit stamps
   nuggets-compact:  [anchor][tag8 | dur24 | start_lo32] x max_events
   Both rows come here: the layout is the one difference between them.
   A stamp is read only within IKP__NUG_WINDOW ticks of the capture's middle
   stamp (nug_ref), and below 2^62: garbage cannot stretch the time axis. */
#define IKP__NUG_WINDOW ((int64_t)1 << 40)  /* ~18 minutes of ns */
#define IKP__NUG_MAX_STAMP ((uint64_t)1 << 62)

/* the capture's layout: nuggets-compact's, or the legacy one */
static int ikp__nug_compact(const ikp_capture *cap)
{
    return cap->format == IKP_FORMAT_NUGGETS_COMPACT;
}

/* a slice of S words the layout allows: compact 1 + max_events (>= 2),
   legacy 1 + 4 x max_events (5, 9, 13, ...) */
static int ikp__nug_shape_ok(uint64_t S, int compact)
{
    return compact ? S >= 2 : S >= 5 && (S - 1) % 4 == 0;
}

/* the first stamp of a nuggets buffer, the reference for telling layouts
   apart: compact, the first word written (an anchor); legacy, the first
   word past 32 bits (a start). 0 if none. */
static uint64_t ikp__nug_first_stamp(const uint64_t *w, uint64_t n, int compact)
{
    uint64_t k;
    for (k = 0; k < n; k++)
        if (compact ? w[k] != 0 : (w[k] >> 32) != 0) return w[k];
    return 0;
}

typedef struct ikp__nrec {
    int64_t start, end;  /* ticks */
    uint32_t id, tid;
    int has_tid;
} ikp__nrec;

static int ikp__nug_near(uint64_t x, int64_t ref)
{
    int64_t rel = (int64_t)(x - (uint64_t)ref);
    return x < IKP__NUG_MAX_STAMP && rel <= IKP__NUG_WINDOW && rel >= -IKP__NUG_WINDOW;
}

/* slot k of the unit slice q: 1 a region (in *r), 0 an empty slot, -1 a
   record that cannot be read (a stamp outside the window, a negative or
   huge duration, a tag past IKP_WIRE_MAX_EVENTS, no anchor) */
static int ikp__nug_rec(const ikp_capture *cap, const uint64_t *q, uint64_t k, ikp__nrec *r)
{
    if (!ikp__nug_compact(cap)) {
        const uint64_t *x = q + 1 + 4 * k;
        if (!x[0] && !x[1] && !x[2] && !x[3]) return 0;
        if (!ikp__nug_near(x[0], cap->nug_ref) || x[1] >= (uint64_t)IKP__NUG_WINDOW || x[2] >= IKP_WIRE_MAX_EVENTS)
            return -1;
        r->start = (int64_t)x[0];
        r->end = r->start + (int64_t)x[1];
        r->id = (uint32_t)x[2];
        r->tid = (uint32_t)x[3];
        r->has_tid = 1;
    } else {
        uint64_t a = q[0], x = q[1 + k];
        uint32_t lo;
        if (!x) return 0;
        if (!a || !ikp__nug_near(a, cap->nug_ref)) return -1;
        lo = (uint32_t)x;
        r->start = (int64_t)((a & ~(uint64_t)0xFFFFFFFFu) + lo + (lo < (uint32_t)a ? (uint64_t)1 << 32 : 0));
        r->end = r->start + (int64_t)((x >> 32) & 0xFFFFFFu);
        r->id = (uint32_t)(x >> 56);
        r->tid = 0;
        r->has_tid = 0;
    }
    return 1;
}

/* the record slots of a unit */
static uint64_t ikp__nug_slots(const ikp_capture *cap)
{
    return ikp__nug_compact(cap) ? cap->unit_words - 1 : (cap->unit_words - 1) / 4;
}

/* the row's lane: unit i's slice */
static void ikp__nug_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l)
{
    const uint64_t S = cap->unit_words;
    const uint64_t *q = cap->words + (uint64_t)i * S;
    uint64_t k;
    l->base = (uint64_t)i * S;
    l->slots = ikp__nug_slots(cap);
    /* atomic mode: the unit's count says how many slots this launch wrote;
       those past it hold what an earlier launch left, and are not read (a
       count of 0 is the static mode's, which counts nothing) */
    if (!ikp__nug_compact(cap) && q[0] && q[0] < l->slots) l->slots = q[0];
    l->anchor = cap->nug_ref;
    l->ref_ps = -cap->peer_shift_ps;
    for (k = 0; k < S; k++)
        if (q[k]) { l->pub.flags = IKP_LANE_STARTED; break; }
}

/* counts and time range of a nuggets unit; *may_wrap (if given) counts
   compact regions flagged IKP_EVENT_MAY_WRAP */
static void ikp__nug_scan(const ikp_capture *cap, ikp__lane *l, uint64_t *may_wrap)
{
    const uint64_t *q = cap->words + l->base;
    int64_t lo = 0, hi = 0;
    uint64_t k, recs = 0, bad = 0;
    int any = 0;
    ikp__nrec r;
    for (k = l->slots; k < ikp__nug_slots(cap); k++)
        if (ikp__nug_rec(cap, q, k, &r)) l->pub.past_count++;
    for (k = 0; k < l->slots; k++) {
        int rc = ikp__nug_rec(cap, q, k, &r);
        if (rc == 0) continue;
        recs++;
        if (rc < 0) { bad++; continue; }
        if (!any || r.start < lo) lo = r.start;
        if (!any || r.end > hi) hi = r.end;
        any = 1;
    }
    l->pub.records = recs;
    l->pub.invalid = bad;
    if (!ikp__nug_compact(cap)) {
        /* atomic mode counts every region it was asked to keep */
        if (q[0] > l->slots && q[0] < ((uint64_t)1 << 32)) l->pub.dropped = q[0] - l->slots; /* never bounded */
    } else if (recs && (!q[0] || !ikp__nug_near(q[0], cap->nug_ref))) {
        l->pub.flags |= IKP_LANE_CORRUPT; /* records without a usable anchor */
    }
    l->pub.first_ps = any ? ikp__ps(l, lo) : INT64_MIN;
    l->pub.last_ps = any ? ikp__ps(l, hi) : INT64_MIN;
    if (may_wrap && any && ikp__nug_compact(cap))
        for (k = 0; k < l->slots; k++)
            if (ikp__nug_rec(cap, q, k, &r) > 0 && r.start <= hi - ((int64_t)1 << 24)) (*may_wrap)++;
}


/* nuggets: does the buffer read as slices of S words of the layout? Every
   slice: legacy, a count below 2^32 and records that are empty or well
   formed (a start near ref, a duration below the window, a tag below
   IKP_WIRE_MAX_EVENTS); compact, an anchor near ref (or a slice all zero)
   and no word near ref past it (an anchor inside a slice means the slices
   are cut wrong), and, when detecting the format, regions that end in
   order (at most a quarter of 16 or more pairs going back). At least one
   record. *work counts the words read. */
static int ikp__nug_fits(const uint64_t *w, uint64_t n, uint64_t S, int compact, int64_t ref, int detecting,
                         uint64_t *work, uint64_t *records)
{
    uint64_t u, k, recs = 0, pairs = 0, back = 0;
    for (u = 0; u < n / S; u++) {
        const uint64_t *q = w + u * S;
        if (compact) {
            uint64_t last = 0;
            *work += S;
            if (!q[0]) {
                for (k = 1; k < S; k++)
                    if (q[k]) return 0;
                continue;
            }
            if (!ikp__nug_near(q[0], ref)) return 0;
            for (k = 1; k < S; k++)
                if (q[k]) {
                    /* its end: the unit's one writer stores a region as it ends, so
                       ends do not go back (random words do, every other pair) */
                    const uint64_t lo = q[k] & 0xFFFFFFFFu, end = (q[0] >> 32 << 32) + lo +
                        (lo < (q[0] & 0xFFFFFFFFu) ? (uint64_t)1 << 32 : 0) + ((q[k] >> 32) & 0xFFFFFFu);
                    if (ikp__nug_near(q[k], ref)) return 0;
                    if (recs && last) { pairs++; back += end < last; }
                    last = end;
                    recs++;
                }
            if (detecting && pairs >= 16 && back * 4 > pairs) return 0; /* no unit's writer: not this layout */
        } else {
            *work += S;
            if (q[0] >> 32) return 0;
            for (k = 0; k < (S - 1) / 4; k++) {
                const uint64_t *x = q + 1 + 4 * k;
                if (!x[0] && !x[1] && !x[2] && !x[3]) continue;
                if (!ikp__nug_near(x[0], ref) || x[1] >= (uint64_t)IKP__NUG_WINDOW || x[2] >= IKP_WIRE_MAX_EVENTS)
                    return 0;
                recs++;
            }
        }
    }
    *records = recs;
    return recs > 0;
}

/* nuggets: the slice size when the buffer does not say. Candidates are
   the divisors S of the buffer's length that the layout allows (legacy: 1 +
   4 x max_events), fewest units first; the first that fits (ikp__nug_fits)
   wins. Fewest units: slices cut finer than the kernel's would also fit when
   the tails of its slices are empty, coarser ones would not (a unit's start
   would fall inside a slice) unless whole units are empty. 0 if none fits
   or the search reads more than 16 times the buffer. */
static uint64_t ikp__nug_infer(const ikp_capture *cap, int compact, uint64_t *records)
{
    const uint64_t *w = cap->words, n = cap->num_words;
    uint64_t d, k, ref = ikp__nug_first_stamp(w, n, compact), work = 0, found = 0, nd = 0, cap_d = 64;
    uint64_t *divs;
    if (!ref || ref >= IKP__NUG_MAX_STAMP) return 0;
    divs = (uint64_t *)ikp__alloc(&cap->alloc, (size_t)cap_d * sizeof(uint64_t));
    if (!divs) return 0;
    for (d = 1; d <= n / d; d++) {
        if (n % d) continue;
        if (nd + 2 > cap_d) {
            size_t c = (size_t)cap_d;
            if (!ikp__grow(&cap->alloc, (void **)&divs, &c, (size_t)nd + 2, sizeof(uint64_t))) break;
            cap_d = c;
        }
        divs[nd++] = d;
        if (d != n / d) divs[nd++] = n / d;
    }
    qsort(divs, (size_t)nd, sizeof(uint64_t), ikp__cmp_u64);
    for (k = nd; k-- > 0 && !found && work <= 16 * n + (1u << 20);) {
        uint64_t S = divs[k];
        if (!ikp__nug_shape_ok(S, compact)) continue;
        if (ikp__nug_fits(w, n, S, compact, (int64_t)ref, cap->format == IKP_FORMAT_AUTO, &work, records)) found = S;
    }
    ikp__free(&cap->alloc, divs);
    return found;
}

/* nuggets: the middle stamp of up to 1023 units (each unit's anchor, or its
   first record's start), the centre of the window in which stamps are read */
static int64_t ikp__nug_middle(const ikp_capture *cap)
{
    uint64_t v[1023], m = 0, U = cap->info.num_lanes, S = cap->unit_words, u, k, step = U / 1023 + 1;
    int pass;
    for (pass = 0; pass < 2 && !m; pass++, step = 1) /* a sparse buffer: every unit */
        for (u = 0; u < U && m < 1023; u += step) {
            const uint64_t *q = cap->words + u * S;
            if (ikp__nug_compact(cap)) {
                if (q[0] && q[0] < IKP__NUG_MAX_STAMP) v[m++] = q[0];
            } else {
                for (k = 0; k < (S - 1) / 4; k++)
                    if (q[1 + 4 * k]) {
                        if (q[1 + 4 * k] < IKP__NUG_MAX_STAMP) v[m++] = q[1 + 4 * k];
                        break;
                    }
            }
        }
    if (!m) return 0;
    qsort(v, (size_t)m, sizeof(uint64_t), ikp__cmp_u64);
    return (int64_t)v[m / 2];
}

/* auto-detection when word 0 is no header: a nuggets layout that fits
   (with the units given, or inferred). Both or neither: the user must say. */
/* 1 if the bytes look random, as compressed or encrypted data does (a PNG's,
   zip's or Parquet file's pages): two bytes drawn at random (of the first
   64 KiB) match hardly more often than 1 in 256. A profile buffer's bytes
   repeat (zeros, the high bytes of stamps, ids): several times as often. */
static int ikp__looks_random(const unsigned char *p, size_t n)
{
    uint32_t c[256];
    uint64_t same = 0;
    size_t i;
    if (n > 65536) n = 65536;
    if (n < 1024) return 0;
    memset(c, 0, sizeof c);
    for (i = 0; i < n; i++) c[p[i]]++;
    for (i = 0; i < 256; i++) same += (uint64_t)c[i] * (c[i] ? c[i] - 1 : 0);
    return (double)same / ((double)n * (double)(n - 1)) < 1.5 / 256;
}

static ikp_result ikp__detect_nuggets(ikp_capture *cap, uint32_t units, const char *what, ikp_error *err)
{
    const uint64_t *w = cap->words, n = cap->num_words;
    uint64_t S[2] = {0, 0}, recs[2] = {0, 0}, ref, work = 0;
    int c;
    char why[200];
    if (units && n % units)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1,
                         "a buffer of %llu words does not divide into %u units (num_units); "
                         "each unit has a slice of the same size", (unsigned long long)n, units);
    for (c = 0; c < 2; c++) {
        if (!units) { S[c] = ikp__nug_infer(cap, c, &recs[c]); continue; }
        if (n % units) continue;
        S[c] = n / units;
        ref = ikp__nug_first_stamp(w, n, c);
        if (!ikp__nug_shape_ok(S[c], c) || !ref || !ikp__nug_fits(w, n, S[c], c, (int64_t)ref, 1, &work, &recs[c]))
            S[c] = 0;
    }
    if (S[0] && S[1])
        return ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, 0, -1,
                         "reads as a nuggets buffer (%llu units) and as a nuggets-compact one (%llu units): "
                         "pass %s (nuggets or nuggets-compact) and %s",
                         (unsigned long long)(n / S[0]), (unsigned long long)(n / S[1]),
                         IKP__OPT(&cap->info.option_names, format), IKP__OPT(&cap->info.option_names, num_units));
    if (!S[0] && !S[1]) {
        if (w[0] == 0 && !what) snprintf(why, sizeof why, "word 0 is zero and no layout fits the words after it: "
                                         "the buffer was never initialised (no IKP magic, no tirx/flashinfer/triton-dist header)");
        else if (what) snprintf(why, sizeof why, "this is %s", what);
        else if (ikp__looks_random((const unsigned char *)w, (size_t)n * 8))
            return ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, 0, -1, "no format's: its bytes look random, as "
                             "compressed data's do (part of a PNG, zip, gzip or Parquet file?), and no layout "
                             "fits them (no IKP magic, no tirx/flashinfer/triton-dist header, no nuggets "
                             "slices whose regions end in order)");
        else snprintf(why, sizeof why, "word 0 = 0x%016llx is neither the IKP magic nor a tirx/flashinfer/triton-dist "
                      "header that fits the buffer", (unsigned long long)w[0]);
        if (what)
            return ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, 0, -1, "%s", why);
        return ikp__fail(err, w[0] == 0 ? IKP_ERR_BAD_MAGIC : IKP_ERR_UNKNOWN_FORMAT, 0, -1,
                         "%s; for a nuggets buffer, pass %s (nuggets or nuggets-compact) and %s", why,
                         IKP__OPT(&cap->info.option_names, format), IKP__OPT(&cap->info.option_names, num_units));
    }
    c = S[1] ? 1 : 0;
    cap->format = c ? IKP_FORMAT_NUGGETS_COMPACT : IKP_FORMAT_NUGGETS;
    cap->unit_words = S[c];
    cap->info.units_inferred = !units;
    cap->info.detect_records = recs[c];
    cap->info.detect_fit[cap->format] = recs[c];
    return IKP_OK;
}

static ikp_result ikp__open_nuggets(ikp_capture *cap, const ikp__open_args *a, ikp_error *err)
{
    const uint32_t units = a->units;
    const uint64_t n = cap->num_words;
    ikp_capture_info *info = &cap->info;
    uint64_t S, U, recs = 0, u;
    const char *name = ikp_format_name(cap->format);
    const int compact = ikp__nug_compact(cap);
    if (cap->unit_words) { /* found by auto-detection */
        S = cap->unit_words;
    } else if (units) {
        if (n % units)
            return ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1,
                             "%s: a buffer of %llu words does not divide into %u units (num_units); "
                             "each unit has a slice of the same size",
                             name, (unsigned long long)n, units);
        S = n / units;
        if (!ikp__nug_shape_ok(S, compact))
            return ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1,
                             "%s: %u units of %llu words each: a %s slice is %s words (num_units wrong?)",
                             name, units, (unsigned long long)S, name,
                             compact ? "1 anchor + max_events (at least 2)" : "1 count + 4 x max_events (5, 9, 13, ...)");
    } else {
        S = ikp__nug_infer(cap, compact, &recs);
        if (!S)
            return ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, -1, -1,
                             "%s: no number of units fits this buffer of %llu words: pass %s "
                             "(the buffer does not record it)", name, (unsigned long long)n,
                             IKP__OPT(&cap->info.option_names, num_units));
        info->units_inferred = 1;
    }
    U = n / S;
    if (U > 0xFFFFFFFFull)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1, "%s: %llu units, at most 2^32 - 1", name,
                         (unsigned long long)U);
    cap->unit_words = S;
    info->unit_words = (uint32_t)(S > 0xFFFFFFFFull ? 0xFFFFFFFFull : S);
    info->num_lanes = info->num_blocks = (uint32_t)U;
    info->num_groups = 1;
    cap->nug_ref = ikp__nug_middle(cap);
    if (!compact) /* counts: written by the atomic mode (and the deprecated flush) */
        for (u = 0; u < U && !info->drops_known; u++)
            if (cap->words[u * S]) info->drops_known = 1;
    return IKP_OK;
}

/* the row's scan: a unit's counts and time range; info, when given, gets
   the regions that may wrap, the unit if its records lack an anchor, and
   the placement (64-bit %globaltimer stamps) */
static void ikp__nug_scan_lane(const ikp_capture *cap, ikp__lane *l, ikp_capture_info *info)
{
    ikp__nug_scan(cap, l, info ? &info->may_wrap : NULL);
    if (!info) return;
    if (l->pub.flags & IKP_LANE_CORRUPT) info->corrupt_lanes++;
    info->placement = IKP_PLACED_GLOBALTIMER;
    info->cross_sm_ns = IKP__GLOBALTIMER_TICK_NS;
}

/* the row's origin: the stamps are 64-bit %globaltimer ns themselves
   (with the default 1 ns tick) */
static int ikp__nug_origin(const ikp_capture *cap, uint64_t *ns)
{
    if (cap->tick_ps != 1000 || cap->nug_ref <= 0) return 0;
    *ns = (uint64_t)cap->nug_ref;
    return 1;
}

/* >>capture-lanes: lanes made from the words; what a file's bytes are */
/* Lane i of a capture that keeps no lanes (peer formats, nuggets): what
   every such lane shares, then the rest from its format's row. */
static void ikp__peer_lane(const ikp_capture *cap, uint32_t i, ikp__lane *l)
{
    uint32_t ng = cap->info.num_groups;
    memset(l, 0, sizeof *l);
    l->index = i;
    l->pub.block = i / ng;
    l->pub.group = i % ng;
    l->pub.sm = IKP_NO_SM;
    l->pub.first_ps = l->pub.last_ps = INT64_MIN;
    l->ps_per_tick = (double)cap->tick_ps;
    l->ps_per_tick_q32 = cap->tick_ps << 32;
    l->rel_limit = (int64_t)(IKP__MAX_ABS_PS / cap->tick_ps);
    ikp__formats[cap->format].lane(cap, i, l);
}

/* lane i: stored (ikp) or made in tmp (peer formats) */
static const ikp__lane *ikp__get_lane(const ikp_capture *cap, uint32_t i, ikp__lane *tmp)
{
    if (cap->lanes) return &cap->lanes[i];
    ikp__peer_lane(cap, i, tmp);
    return tmp;
}

static int ikp__is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

static uint64_t ikp__rd64(const unsigned char *p)
{
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint32_t ikp__rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void ikp__wr32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}
static void ikp__wr64(unsigned char *p, uint64_t v)
{
    ikp__wr32(p, (uint32_t)v);
    ikp__wr32(p + 4, (uint32_t)(v >> 32));
}

/* What the first bytes of data look like when they are not a profile
   buffer: a file given where a buffer was expected, or a likely mistake.
   NULL if nothing is recognised. */
static const char *ikp__sniff(const unsigned char *p, size_t n)
{
    if (n >= 8 && memcmp(p, IKP__CAPT_MAGIC, 8) == 0)
        return "an .ikp capture file, not a profile buffer: open it with ikp_capture_open_path() or "
               "ikp_capture_open_data()";
    if (n >= 6 && memcmp(p, "\x93NUMPY", 6) == 0)
        return "a NumPy .npy file, not a bare buffer: open it with ikp_capture_open_path() or "
               "ikp_capture_open_data()";
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return "gzip-compressed: decompress it first (gunzip)";
    if (n >= 8 && memcmp(p, "PAR1", 4) == 0 && memcmp(p + n - 4, "PAR1", 4) == 0)
        return "an Apache Parquet file (ikp export writes them), not a profile buffer: read it with DuckDB, "
               "pyarrow or pandas";
    if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) return "a PNG image, not a profile buffer";
    if (n >= 4 && memcmp(p, "PK\x03\x04", 4) == 0)
        return "a zip archive (numpy.savez, torch.save?): save the buffer with numpy.save or "
               "tensor.cpu().numpy().tofile() instead";
    if (n >= 2 && (p[0] == '{' || p[0] == '[') && (p[1] == '"' || p[1] == '\n' || p[1] == '{' || p[1] == ' '))
        return "JSON text (a trace or statistics written by ikp?), not a profile buffer";
    return NULL;
}

/* >>capture-open: opening words: format, lanes, time 0 */
/* auto-detection: the first row whose mark the words carry (the IKP magic) */
static int ikp__detect_mark(const uint64_t *w, ikp_format *f)
{
    int k;
    for (k = 0; k < (int)IKP_FORMAT_COUNT; k++)
        if (ikp__formats[k].check && ikp__formats[k].check(w, NULL, NULL) == IKP_OK) {
            *f = (ikp_format)k;
            return 1;
        }
    return 0;
}

/* auto-detection of words that carry no row's mark: the vote among the
   peer formats when word 0 reads as their header and fits the buffer (and
   no units are given), else a nuggets layout */
static ikp_result ikp__detect_unmarked(ikp_capture *cap, uint32_t units, const char *what, int *strided,
                                       ikp_error *err)
{
    const uint64_t *w = cap->words;
    uint64_t nb = w[0] & 0xFFFFFFFFu, ng = w[0] >> 32;
    if (nb && ng && ng <= 0xFFFFFu && nb * ng <= cap->num_words - 1 && !units) {
        cap->format = ikp__detect_peer(w, cap->num_words, nb, ng, &cap->info, strided);
        return IKP_OK;
    }
    return ikp__detect_nuggets(cap, units, what, err);
}

/* Which format the words are in (auto-detection, or the check of the row
   named), and whether the options given suit it. */
static ikp_result ikp__choose_format(ikp_capture *cap, uint32_t units, int *strided, ikp_error *err)
{
    const uint64_t *w = cap->words;
    const char *what = ikp__sniff((const unsigned char *)w, cap->num_words * 8);
    const ikp__format_desc *d;
    ikp_result r;
    if (cap->format == IKP_FORMAT_AUTO) {
        if (!ikp__detect_mark(w, &cap->format) && (r = ikp__detect_unmarked(cap, units, what, strided, err)) != IKP_OK)
            return r;
    } else if (ikp__formats[cap->format].check && (r = ikp__formats[cap->format].check(w, what, err)) != IKP_OK)
        return r;
    cap->info.format = cap->format;
    d = &ikp__formats[cap->format];
    if (units && !ikp__is_nuggets(cap->format))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "%s is for nuggets buffers; this is a %s buffer",
                         IKP__OPT(&cap->info.option_names, num_units), ikp_format_name(cap->format));
    if (!(d->flags & IKP__FMT_OWN_CLOCK)) cap->info.timer_unit_ps = (uint32_t)cap->tick_ps;
    else if (cap->tick_ps != 1000)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1,
                         "%s is for peer formats; %s buffers carry their own clock",
                         IKP__OPT(&cap->info.option_names, timer_unit_ps), d->name);
    return IKP_OK;
}

/* Each lane's records: counted, checked and added to the capture's
   figures; [*t0, *t1] widened to the earliest and latest record. */
static void ikp__scan_lanes(ikp_capture *cap, int64_t *t0, int64_t *t1)
{
    const ikp__format_desc *d = &ikp__formats[cap->format];
    ikp_capture_info *info = &cap->info;
    uint32_t i = 0;
    if (d->flags & IKP__FMT_PEER) {
        if (ikp__peer_pass(cap, t0, t1)) return; /* done: the window too */
        ikp__peer_window(cap);
    }
    for (; i < info->num_lanes; i++) {
        ikp__lane tmp, *l = cap->lanes ? &cap->lanes[i] : &tmp;
        if (!cap->lanes) ikp__peer_lane(cap, i, l);
        if (!(l->pub.flags & IKP_LANE_STARTED)) continue;
        d->scan(cap, l, info);
        info->active_lanes++;
        info->records += l->pub.records;
        info->anchors += l->pub.anchors;
        info->dropped += l->pub.dropped;
        info->invalid += l->pub.invalid;
        info->backwards += l->pub.backwards;
        info->after_finalize += l->pub.after_finalize;
        info->past_count += l->pub.past_count;
        if (l->pub.first_ps != INT64_MIN) {
            if (l->pub.first_ps < *t0) *t0 = l->pub.first_ps;
            if (l->pub.last_ps > *t1) *t1 = l->pub.last_ps;
        }
    }
}

/* The capture's time 0 is its earliest record (t0): the span, the GPU time
   of time 0 (IKP: gref + t0), and every lane moved to it. */
static void ikp__set_zero(ikp_capture *cap, int64_t t0, int64_t t1)
{
    const ikp__format_desc *d = &ikp__formats[cap->format];
    ikp_capture_info *info = &cap->info;
    uint64_t ref;
    uint32_t i;
    if (t0 == INT64_MAX) t0 = t1 = 0;
    info->span_ps = t1 - t0;
    cap->peer_shift_ps = t0;
    if (d->origin && d->origin(cap, &ref)) { /* the stamps give the GPU's time (the row's origin) */
        int64_t whole = t0 >= 0 ? t0 / 1000 : -((-t0 + 999) / 1000);
        info->gpu_time_known = 1;
        info->gpu_zero_ns = ref + (uint64_t)whole;
        info->gpu_zero_ps = (uint32_t)(t0 - whole * 1000);
    }
    for (i = 0; i < cap->num_knots; i++) cap->knots[i].ps -= t0;
    for (i = 0; i < cap->num_segs; i++) cap->segs[i].ps0 -= t0;
    for (i = 0; cap->lanes && i < info->num_lanes; i++) {
        ikp__lane *l = &cap->lanes[i];
        l->ref_ps -= t0;
        l->end_ps -= t0;
        if (l->pub.first_ps != INT64_MIN) { l->pub.first_ps -= t0; l->pub.last_ps -= t0; }
        if ((l->pub.flags & IKP_LANE_STARTED) && l->pub.block >= info->num_blocks && !info->grid[0])
            info->num_blocks = l->pub.block + 1;
    }
}

/* Clock readings, the device and peer measurements given in opt replace
   those of a capture file; a file's peer measurements must not name the
   device given. */
static ikp_result ikp__replace_relations(ikp_capture *cap, const ikp_decode_options *opt, ikp_error *err)
{
    ikp_capture_info *info = &cap->info;
    ikp_result r;
    uint32_t k;
    if (opt && opt->num_clock) {
        ikp__free(&cap->alloc, cap->clock);
        cap->clock = NULL;
        info->clock_syncs = 0;
        if (!opt->clock) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "num_clock without clock readings");
        if ((r = ikp__set_clock(cap, opt->clock, opt->num_clock, -1, err)) != IKP_OK) return r;
    }
    if (opt && opt->device) {
        info->device_known = 0;
        if ((r = ikp__set_device(cap, opt->device, -1, err)) != IKP_OK) return r;
    }
    if (opt && opt->num_peers) {
        ikp__free(&cap->alloc, cap->peers);
        cap->peers = NULL;
        info->peer_clocks = 0;
        if (!opt->peers) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "num_peers without peer measurements");
        return ikp__set_peers(cap, opt->peers, opt->num_peers, -1, err);
    }
    for (k = 0; info->device_known && k < info->peer_clocks; k++)
        if (memcmp(cap->peers[k].peer_uuid, cap->device.uuid, 16) == 0)
            return ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1,
                             "peer clock measurement %u names the capture's own GPU", k);
    return IKP_OK;
}

/* Opens cap->words: the format, SM clock samples given in opt (they
   replace a file's), the lane table, each lane's scan, time 0, then the
   clock relations and the host time of time 0. */
static ikp_result ikp__finish_open(ikp_capture *cap, const ikp_decode_options *opt, ikp_error *err)
{
    ikp_result r;
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    ikp_capture_info *info = &cap->info;
    ikp__open_args oa;
    int strided = 0;
    const uint32_t units = opt ? opt->num_units : 0;
    if (cap->num_words == 0) return ikp__fail(err, IKP_ERR_EMPTY, 0, -1, "empty buffer");
    if ((r = ikp__choose_format(cap, units, &strided, err)) != IKP_OK) return r;
    if (opt && opt->num_sm_clock) {
        ikp__free(&cap->alloc, cap->sm_clock);
        cap->sm_clock = NULL;
        info->sm_clocks = info->sm_clock_sms = 0;
        if (!opt->sm_clock) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "num_sm_clock without SM clock samples");
        if ((r = ikp__set_sm_clock(cap, opt->sm_clock, opt->num_sm_clock, -1, err)) != IKP_OK) return r;
    }
    oa.opt = opt;
    oa.units = units;
    oa.strided = strided;
    r = ikp__formats[cap->format].open(cap, &oa, err); /* the format's row: ikp__choose_format named it */
    if (r != IKP_OK) return r;
    ikp__scan_lanes(cap, &t0, &t1);
    ikp__set_zero(cap, t0, t1);
    if ((r = ikp__replace_relations(cap, opt, err)) != IKP_OK) return r;
    info->host_time_known = info->clock_syncs && info->gpu_time_known &&
                            ikp_capture_host_zero(cap, &info->host_zero_ns, &info->host_zero_uncertainty_ns, NULL) == IKP_OK;
    if (!info->num_groups) info->num_groups = 1;
    ikp__ok(err);
    return IKP_OK;
}

static ikp_result ikp__new_capture(const ikp_decode_options *opt, ikp_capture **out, ikp_error *err)
{
    ikp_allocator a = ikp__allocator(opt ? &opt->allocator : NULL);
    ikp_capture *cap;
    ikp_result r;
    *out = NULL;
    if (opt && (r = ikp__check_allocator(&opt->allocator, err)) != IKP_OK) return r;
    if (opt && (unsigned)opt->format >= (unsigned)IKP_FORMAT_COUNT)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "unknown format %d", (int)opt->format);
    if (opt && opt->cycles_per_ns != 0 &&
        !(opt->cycles_per_ns >= IKP_MIN_CYCLES_PER_NS && opt->cycles_per_ns <= IKP_MAX_CYCLES_PER_NS)) {
        char v[400];
        if (opt->cycles_per_ns != opt->cycles_per_ns) memcpy(v, "nan", 4);
        else if (opt->cycles_per_ns > 1.7e308 || opt->cycles_per_ns < -1.7e308) memcpy(v, "infinite", 9);
        else if (opt->cycles_per_ns > 1e6 || opt->cycles_per_ns < -1e6 ||
                 (opt->cycles_per_ns < 1e-6 && opt->cycles_per_ns > -1e-6)) { /* m.mmm e x, whatever the locale */
            double m = opt->cycles_per_ns < 0 ? -opt->cycles_per_ns : opt->cycles_per_ns;
            int x = 0;
            size_t k = opt->cycles_per_ns < 0;
            while (m >= 10) { m /= 10; x++; }
            while (m < 1) { m *= 10; x--; }
            v[0] = '-';
            k += ikp__fmt_fixed(v + k, sizeof v - k - 8, m, 3);
            snprintf(v + k, sizeof v - k, "e%d", x);
        } else ikp__fmt_fixed(v, sizeof v, opt->cycles_per_ns, 12);
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1,
                         "cycles_per_ns %s is outside 0.05 .. 20 (an SM clock of 50 MHz .. 20 GHz; 0 = from the anchors)", v);
    }
    if (opt && opt->timer_unit_ps > 1000000u)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "%s %u is over 1000000 (a timer tick of 1 us)",
                         IKP__OPT(opt->option_names, timer_unit_ps), opt->timer_unit_ps);
    if (opt && opt->num_units && opt->format != IKP_FORMAT_AUTO && !ikp__is_nuggets(opt->format))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "%s is for nuggets buffers, not %s",
                         IKP__OPT(opt->option_names, num_units), ikp_format_name(opt->format));
    cap = (ikp_capture *)ikp__alloc(&a, sizeof(ikp_capture));
    if (!cap) return ikp__oom(err);
    memset(cap, 0, sizeof *cap);
    cap->alloc = a;
    cap->format = opt ? opt->format : IKP_FORMAT_AUTO;
    cap->keep_after_finalize = opt ? opt->keep_after_finalize != 0 : 0;
    cap->tick_ps = opt && opt->timer_unit_ps ? (int64_t)opt->timer_unit_ps : 1000;
    cap->info.after_finalize_kept = cap->keep_after_finalize;
    if (opt && opt->option_names) cap->info.option_names = *opt->option_names;
    *out = cap;
    if (!opt) return IKP_OK;
    r = ikp__copy_names(&a, opt->event_names, opt->num_event_names, "event", &cap->event_names,
                        &cap->num_event_names, err);
    if (r == IKP_OK)
        r = ikp__copy_names(&a, opt->group_names, opt->num_group_names, "group", &cap->group_names,
                            &cap->num_group_names, err);
    return r;
}

IKP_DEF ikp_result ikp_capture_open(const uint64_t *words, size_t num_words,
                                    const ikp_decode_options *opt, ikp_capture **out,
                                    ikp_error *err)
{
    ikp_result r;
    ikp_capture *cap = NULL;
    if (!out || (!words && num_words))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    *out = NULL;
    r = ikp__new_capture(opt, &cap, err);
    if (r == IKP_OK) {
        cap->words = words;
        cap->num_words = num_words;
        r = ikp__finish_open(cap, opt, err);
    }
    if (r != IKP_OK) { ikp_capture_free(cap); return r; }
    *out = cap;
    return IKP_OK;
}

/* >>capture-files: opening files: .npy, bare buffers, paths (.ikp: capfile-read) */
/* NumPy .npy (format versions 1 to 3): "\x93NUMPY", major, minor, the
   header's length (2 bytes in version 1, else 4), then a Python dict
   literal such as {'descr': '<u8', 'fortran_order': False, 'shape': (N,), }
   padded to the start of the data. Only little-endian 64-bit integers are
   profile buffers. */
static const char *ikp__npy_key(const char *h, size_t n, const char *key)
{
    size_t k = strlen(key), i;
    for (i = 0; i + k + 2 <= n; i++)
        if ((h[i] == '\'' || h[i] == '"') && memcmp(h + i + 1, key, k) == 0 && h[i + 1 + k] == h[i]) {
            i += k + 2;
            while (i < n && (h[i] == ' ' || h[i] == ':')) i++;
            return i < n ? h + i : NULL;
        }
    return NULL;
}

static ikp_result ikp__parse_npy(const unsigned char *p, size_t size, uint64_t *off, uint64_t *nwords,
                                 ikp_error *err)
{
    uint64_t hl, hs, count = 1, dims = 0, big = 0;
    const char *h, *v, *end;
    char descr[16];
    size_t dl = 0;
    int fortran = 0;
    if (size < 10) return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)size, -1, "npy file ends inside its header");
    if (p[6] == 1) { hl = (uint64_t)p[8] | (uint64_t)p[9] << 8; hs = 10; }
    else if (p[6] == 2 || p[6] == 3) {
        if (size < 12) return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)size, -1, "npy file ends inside its header");
        hl = ikp__rd32(p + 8);
        hs = 12;
    } else
        return ikp__fail(err, IKP_ERR_BAD_VERSION, 6, -1, "npy format version %u.%u (this reader knows 1 to 3)", p[6], p[7]);
    if (hl > size - hs)
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)size, -1, "npy header claims %llu bytes, file has %llu after it",
                         (unsigned long long)hl, (unsigned long long)(size - hs));
    h = (const char *)p + hs;
    end = h + hl;
    v = ikp__npy_key(h, (size_t)hl, "descr");
    if (v && (*v == '\'' || *v == '"')) {
        const char *q = v + 1;
        while (q < end && *q != *v && dl + 1 < sizeof descr) descr[dl++] = *q++;
        if (q >= end || *q != *v) v = NULL;
    } else v = NULL;
    descr[dl] = 0;
    if (!v) return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)hs, -1, "npy header has no readable 'descr' (dtype)");
    if (strcmp(descr, "<u8") && strcmp(descr, "<i8")) {
        if (!strcmp(descr, ">u8") || !strcmp(descr, ">i8"))
            return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)hs, -1,
                             "npy dtype '%s' is big-endian: save the buffer as little-endian ('<u8')", descr);
        return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)hs, -1,
                         "npy dtype '%s' is not a profile buffer: save it as uint64 or int64 (numpy: a.view(np.uint64); "
                         "torch: t.view(torch.int64))", descr);
    }
    v = ikp__npy_key(h, (size_t)hl, "fortran_order");
    if (!v || (end - v < 4 || (memcmp(v, "True", 4) && (end - v < 5 || memcmp(v, "False", 5)))))
        return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)hs, -1, "npy header has no readable 'fortran_order'");
    fortran = *v == 'T';
    v = ikp__npy_key(h, (size_t)hl, "shape");
    if (!v || *v != '(') return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)hs, -1, "npy header has no readable 'shape'");
    for (v++; v < end && *v != ')';) {
        uint64_t d = 0;
        if (*v == ' ' || *v == ',') { v++; continue; }
        if (*v < '0' || *v > '9') return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)hs, -1, "npy 'shape' is not a tuple of sizes");
        while (v < end && *v >= '0' && *v <= '9') {
            if (d > (UINT64_MAX - 9) / 10) return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, (int64_t)hs, -1, "npy shape overflows");
            d = d * 10 + (uint64_t)(*v++ - '0');
        }
        if (d && count > UINT64_MAX / 8 / d) return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, (int64_t)hs, -1, "npy shape overflows");
        count *= d;
        dims++;
        if (d > 1) big++;
    }
    if (v >= end) return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)hs, -1, "npy 'shape' is not a tuple of sizes");
    if (fortran && big > 1)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)hs, -1,
                         "npy array of %llu dimensions in Fortran (column) order: save np.ascontiguousarray(a) instead",
                         (unsigned long long)dims);
    *off = hs + hl;
    if (count * 8 > size - *off)
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)size, -1, "npy array of %llu words needs %llu bytes, file has %llu",
                         (unsigned long long)count, (unsigned long long)(count * 8), (unsigned long long)(size - *off));
    if (count * 8 < size - *off)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)(*off + count * 8), -1, "npy file has %llu bytes after its array",
                         (unsigned long long)(size - *off - count * 8));
    *nwords = count;
    return IKP_OK;
}

/* a bare buffer: whole 64-bit words, or, under auto-detection, a file that
   ikp__sniff names refused as what it is */
static ikp_result ikp__open_bare(const unsigned char *p, size_t size, ikp_format format, uint64_t *nwords,
                                 ikp_error *err)
{
    const char *what = format == IKP_FORMAT_AUTO ? ikp__sniff(p, size) : NULL;
    if (size % 8) {
        if (what) return ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, 0, -1, "this is %s", what);
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)(size - size % 8), -1,
                         "bare buffer of %llu bytes is not a whole number of 64-bit words", (unsigned long long)size);
    }
    *nwords = size / 8;
    return IKP_OK;
}

/* the capture's words: the file's memory kept (owned, the words 8-byte
   aligned in it: *took), else a copy; little-endian on any host */
static ikp_result ikp__take_words(ikp_capture *cap, const unsigned char *p, uint64_t words_off, uint64_t nwords,
                                  void *owned, int *took, ikp_error *err)
{
    uint64_t i;
    if (owned && ((uintptr_t)(p + words_off) & 7u) == 0) {
        /* keep the file's memory: the words are read in place (swapped in place on a big-endian host) */
        uint64_t *ww = (uint64_t *)(void *)((unsigned char *)owned + words_off);
        if (!ikp__is_little_endian())
            for (i = 0; i < nwords; i++) ww[i] = ikp__rd64((const unsigned char *)(ww + i));
        cap->owned = owned;
        *took = 1;
        cap->words = ww;
        cap->words_at = words_off;
        cap->words_in_file = 1;
    } else {
        uint64_t *ww = (uint64_t *)ikp__alloc(&cap->alloc, (size_t)nwords * 8);
        if (!ww) return ikp__oom(err);
        if (ikp__is_little_endian()) memcpy(ww, p + words_off, (size_t)nwords * 8);
        else for (i = 0; i < nwords; i++) ww[i] = ikp__rd64(p + words_off + i * 8);
        cap->owned = ww;
        cap->words = ww;
    }
    cap->num_words = (size_t)nwords;
    return IKP_OK;
}

#define IKP__FNV_BASIS 14695981039346656037ull
#define IKP__FNV_PRIME 1099511628211ull
/* the 64-bit FNV-1a hash of p[0 .. a) and p[b .. size): a file's bytes
   around its words */
static uint64_t ikp__bytes_hash_around(const unsigned char *p, size_t size, uint64_t a, uint64_t b)
{
    uint64_t h = IKP__FNV_BASIS, i;
    for (i = 0; i < size; i++) {
        if (i == a) i = b;
        if (i >= size) break;
        h = (h ^ p[i]) * IKP__FNV_PRIME;
    }
    return h;
}

/* Opens file contents. owned: data is this block of cap's allocator, and
   the capture may keep it rather than copy the words (*took says if it
   did; the caller frees it otherwise). */
static ikp_result ikp__open_capt(ikp_capture *cap, const unsigned char *p, size_t size, uint64_t *words_off,
                                 uint64_t *nwords, ikp_error *err); /* capfile-read */
static int ikp__looks_json(const unsigned char *p, size_t size);
static ikp_result ikp__open_proton(ikp_capture *cap, const unsigned char *p, size_t size,
                                   const ikp_decode_options *opt, int *real_gpu_time, ikp_error *err);
static int ikp__is_iket(const unsigned char *p, size_t size);
static ikp_result ikp__open_iket(ikp_capture *cap, const unsigned char *p, size_t size, ikp_error *err);
static ikp_result ikp__open_data(const unsigned char *p, size_t size, void *owned, const ikp_decode_options *opt,
                                 ikp_capture **out, int *took, ikp_error *err)
{
    ikp_capture *cap = NULL;
    ikp_result r;
    uint64_t words_off = 0, nwords = 0;
    ikp_decode_options o;
    *took = 0;
    if (opt) o = *opt; else memset(&o, 0, sizeof o);
    r = ikp__new_capture(&o, &cap, err);
    if (r != IKP_OK) goto fail;
    if (size == 0) { r = ikp__fail(err, IKP_ERR_EMPTY, 0, -1, "empty file"); goto fail; }
    if (ikp__looks_json(p, size) || o.format == IKP_FORMAT_PROTON || o.format == IKP_FORMAT_IKET) {
        /* a Proton or IKET trace: read into IKP words */
        int real = 0;
        const ikp_format f = o.format == IKP_FORMAT_PROTON || o.format == IKP_FORMAT_IKET ? o.format
                             : ikp__is_iket(p, size) ? IKP_FORMAT_IKET : IKP_FORMAT_PROTON;
        if (!ikp__looks_json(p, size)) {
            r = ikp__fail(err, IKP_ERR_BAD_MAGIC, 0, -1, "not a%s trace: the file is no JSON",
                          f == IKP_FORMAT_IKET ? "n IKET" : " Proton");
            goto fail;
        }
        r = f == IKP_FORMAT_IKET ? ikp__open_iket(cap, p, size, err) : ikp__open_proton(cap, p, size, &o, &real, err);
        if (r != IKP_OK) goto fail;
        cap->rest_hash = ikp__bytes_hash_around(p, size, size, size);
        cap->format = IKP_FORMAT_IKP;
        o.format = IKP_FORMAT_IKP;
        if ((r = ikp__finish_open(cap, &o, err)) != IKP_OK) goto fail;
        cap->info.format = f;
        cap->info.placement = IKP_PLACED_UNKNOWN;
        cap->info.cross_sm_ns = 0;
        cap->info.sm_exact = 0;
        cap->info.launch = 0;
        cap->info.drops_known = 0;
        if (!real) cap->info.gpu_time_known = cap->info.host_time_known = 0;
        *out = cap;
        return IKP_OK;
    }
    if (size >= 8 && memcmp(p, IKP__CAPT_MAGIC, 8) == 0) r = ikp__open_capt(cap, p, size, &words_off, &nwords, err);
    else if (size >= 6 && memcmp(p, "\x93NUMPY", 6) == 0) r = ikp__parse_npy(p, size, &words_off, &nwords, err);
    else r = ikp__open_bare(p, size, o.format, &nwords, err);
    if (r != IKP_OK) goto fail;
    if (nwords == 0) { r = ikp__fail(err, IKP_ERR_EMPTY, (int64_t)words_off, -1, "buffer holds no words"); goto fail; }
    cap->rest_hash = ikp__bytes_hash_around(p, size, words_off, words_off + nwords * 8);
    r = ikp__take_words(cap, p, words_off, nwords, owned, took, err);
    if (r != IKP_OK) goto fail;
    r = ikp__finish_open(cap, &o, err);
    if (r != IKP_OK) {
        /* offsets in the buffer are relative to its start in the file */
        if (err && err->offset >= 0) err->offset += (int64_t)words_off;
        goto fail;
    }
    *out = cap;
    return IKP_OK;
fail:
    ikp_capture_free(cap);
    return r;
}

IKP_DEF ikp_result ikp_capture_open_data(const void *data, size_t size,
                                         const ikp_decode_options *opt,
                                         ikp_capture **out, ikp_error *err)
{
    int took;
    if (!out || (!data && size))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    *out = NULL;
    return ikp__open_data((const unsigned char *)data, size, NULL, opt, out, &took, err);
}

#define IKP__HUGE_READ ((size_t)8 << 20) /* a file this large and larger is read into huge pages */
/* Reads a whole regular file into one block of exactly its size. Anything
   else (a directory, a FIFO, a device such as /dev/zero) is refused before
   a byte is read: a FIFO is opened without waiting for a writer. */
static ikp_result ikp__read_file(const char *path, const ikp_allocator *a, unsigned char **data,
                                 size_t *size, ikp_error *err)
{
#if defined(__unix__) || defined(__APPLE__)
    struct stat sb;
    size_t got = 0;
    int fd, e;
    *data = NULL;
    *size = 0;
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        e = errno;
        return ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot open '%s' for reading: %s", path, strerror(e));
    }
    if (fstat(fd, &sb) != 0) {
        e = errno;
        close(fd);
        return ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot stat '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        const char *kind = S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO (pipe)"
                           : S_ISCHR(sb.st_mode) ? "a character device" : S_ISBLK(sb.st_mode) ? "a block device"
                           : "not a regular file";
        close(fd);
        return ikp__fail(err, IKP_ERR_IO, -1, -1, "'%s' is %s: give a regular file (save the data to a file first)",
                         path, kind);
    }
    if ((uint64_t)sb.st_size > (uint64_t)((size_t)-1) / 2) {
        close(fd);
        return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "'%s' is too large to read into memory", path);
    }
    *size = (size_t)sb.st_size;
    *data = (unsigned char *)ikp__alloc(a, *size);
    if (!*data) { close(fd); return ikp__oom(err); }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* a large file in 2 MiB pages, where the system grants them (and the includer's _DEFAULT_SOURCE declares
       madvise): a strided lane's words lie pages apart, each page of 4 KiB a TLB miss of its own */
    if (*size >= IKP__HUGE_READ) {
        const uintptr_t h = (uintptr_t)1 << 21, lo = ((uintptr_t)*data + h - 1) & ~(h - 1),
                        hi = ((uintptr_t)*data + *size) & ~(h - 1);
        if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE);
    }
#endif
    while (got < *size) {
        ssize_t n = read(fd, *data + got, *size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            e = n < 0 ? errno : 0;
            close(fd);
            ikp__free(a, *data);
            *data = NULL;
            if (n == 0)
                return ikp__fail(err, IKP_ERR_IO, (int64_t)got, -1, "'%s' shrank while it was read (%llu of %llu bytes)",
                                 path, (unsigned long long)got, (unsigned long long)*size);
            return ikp__fail(err, IKP_ERR_IO, (int64_t)got, -1, "cannot read '%s': %s", path, strerror(e));
        }
        got += (size_t)n;
    }
    close(fd);
    return IKP_OK;
#else
    FILE *f = fopen(path, "rb");
    long sz;
    *data = NULL;
    *size = 0;
    if (!f) return ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot open '%s' for reading: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return ikp__fail(err, IKP_ERR_IO, -1, -1, "'%s' is not a regular file", path);
    }
    *size = (size_t)sz;
    *data = (unsigned char *)ikp__alloc(a, *size);
    if (!*data) { fclose(f); return ikp__oom(err); }
    if (fread(*data, 1, *size, f) != *size) {
        fclose(f);
        ikp__free(a, *data);
        *data = NULL;
        return ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot read '%s'", path);
    }
    fclose(f);
    return IKP_OK;
#endif
}

IKP_DEF ikp_result ikp_capture_open_path(const char *path, const ikp_decode_options *opt,
                                         ikp_capture **out, ikp_error *err)
{
    unsigned char *buf;
    size_t n;
    int took = 0;
    ikp_result r;
    ikp_allocator a = ikp__allocator(opt ? &opt->allocator : NULL);
    if (!path || !out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    *out = NULL;
    if (opt && (r = ikp__check_allocator(&opt->allocator, err)) != IKP_OK) return r;
    r = ikp__read_file(path, &a, &buf, &n, err);
    if (r != IKP_OK) return r;
    r = ikp__open_data(buf, n, buf, opt, out, &took, err);
    if (!took) ikp__free(&a, buf);
    return r;
}

/* >>capture-proton: Triton Proton's Chrome trace, read into IKP words */
/* Triton's Proton (instrumentation backend, data="trace") writes a JSON
   Chrome trace: {"displayTimeUnit": "ns", "traceEvents": [...]}, one
   "X" event a scope of one warp, pid "<kernel> Core<sm> CTA<block>", tid
   "warp <w> (line <k>)". Its ts and dur count SM cycles, written as us of
   a 1000 MHz clock ("Frequency (MHz)": 1000.0), from the CTA's own start,
   and a CTA's start is its %globaltimer init less the earliest (ns). So a
   CTA's inside converts exactly, at the SM clock's rate, and its start is
   its earliest event's ts: Proton does not write how many cycles after the
   CTA's start that event came (newer versions write "Init Time (ns)",
   then it is known). The rate: ikp_decode_options.cycles_per_ns, else the
   boost clock of gpu_name, else the file's init and final %globaltimer
   stamps (a lower bound: a CTA's events lie between them); a file with no
   Frequency key holds ns already. Read into the words of an IKP buffer of
   %globaltimer lanes (ns, rounded), one lane a (CTA, warp): block the CTA
   (after the blocks of the kernels before it), group the warp (Proton's
   lines are rows for a warp's overlapping scopes), the scope names the
   event names; an event of no length (a cross-warp pair's ends, "i"
   events) an instant. */
#define IKP__PJ_MAX_DEPTH 64
#define IKP__RATE_HOW "cycles_per_ns (ikp --cycles-per-ns 1.98)"
#define IKP__PJ_MAX_WORDS ((uint64_t)1 << 27) /* 1 GiB of words at most */
typedef struct ikp__pj {
    const char *p, *e, *b; /* now, end, start of the text */
    const char *why;       /* the first failure and where */
    const char *at;
} ikp__pj;
static void ikp__pj_ws(ikp__pj *j)
{
    while (j->p < j->e && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}
static int ikp__pj_fail(ikp__pj *j, const char *why)
{
    if (!j->why) {
        j->why = why;
        j->at = j->p;
    }
    return 0;
}
/* the string at j->p: its body, escapes kept ([*s, *s + *n)) */
static int ikp__pj_str(ikp__pj *j, const char **s, size_t *n)
{
    ikp__pj_ws(j);
    if (j->p >= j->e || *j->p != '"') return ikp__pj_fail(j, "a string expected");
    *s = ++j->p;
    while (j->p < j->e && *j->p != '"') {
        if ((unsigned char)*j->p < 0x20) return ikp__pj_fail(j, "a control character in a string");
        if (*j->p == '\\' && j->p + 1 >= j->e) return ikp__pj_fail(j, "the text ends inside a string");
        j->p += *j->p == '\\' ? 2 : 1;
    }
    if (j->p >= j->e) return ikp__pj_fail(j, "the text ends inside a string");
    *n = (size_t)(j->p - *s);
    j->p++;
    return 1;
}
/* a JSON number (locale-free; 17 significant digits are kept) */
static int ikp__pj_num(ikp__pj *j, double *v)
{
    double m = 0, scale = 1;
    int neg = 0, ex = 0, exneg = 0, digits = 0, frac = 0, any = 0;
    ikp__pj_ws(j);
    if (j->p < j->e && *j->p == '-') { neg = 1; j->p++; }
    while (j->p < j->e && *j->p >= '0' && *j->p <= '9') {
        if (digits < 17) { m = m * 10 + (*j->p - '0'); if (m > 0) digits++; } else frac--;
        j->p++;
        any = 1;
    }
    if (j->p < j->e && *j->p == '.') {
        j->p++;
        while (j->p < j->e && *j->p >= '0' && *j->p <= '9') {
            if (digits < 17) { m = m * 10 + (*j->p - '0'); frac++; if (m > 0) digits++; }
            j->p++;
            any = 1;
        }
    }
    if (!any) return ikp__pj_fail(j, "a number expected");
    if (j->p < j->e && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->e && (*j->p == '+' || *j->p == '-')) exneg = *j->p++ == '-';
        if (j->p >= j->e || *j->p < '0' || *j->p > '9') return ikp__pj_fail(j, "a number's exponent has no digits");
        while (j->p < j->e && *j->p >= '0' && *j->p <= '9') {
            if (ex < 10000) ex = ex * 10 + (*j->p - '0');
            j->p++;
        }
    }
    ex = (exneg ? -ex : ex) - frac;
    if (ex > 400) ex = 400;
    if (ex < -400) ex = -400;
    while (ex > 0) { scale *= 10; ex--; }
    while (ex < 0) { scale /= 10; ex++; }
    *v = (neg ? -m : m) * scale;
    return 1;
}
/* an integer at j->p, exactly: negative ones (neg) as two's complement */
static int ikp__pj_int(ikp__pj *j, uint64_t *v, int neg_ok)
{
    uint64_t x = 0;
    int neg = 0, any = 0;
    ikp__pj_ws(j);
    if (neg_ok && j->p < j->e && *j->p == '-') { neg = 1; j->p++; }
    for (; j->p < j->e && *j->p >= '0' && *j->p <= '9'; j->p++, any = 1) {
        if (x > (UINT64_MAX - (uint64_t)(*j->p - '0')) / 10) return ikp__pj_fail(j, "an integer past 2^64");
        x = x * 10 + (uint64_t)(*j->p - '0');
    }
    if (!any || (j->p < j->e && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')))
        return ikp__pj_fail(j, neg_ok ? "an integer expected" : "an unsigned integer expected");
    if (neg && x > (uint64_t)1 << 63) return ikp__pj_fail(j, "an integer below -2^63");
    *v = neg ? (uint64_t)0 - x : x;
    return 1;
}
/* 1 if the value at j->p opens with c ('{' or '['), which is passed */
static int ikp__pj_open(ikp__pj *j, char c)
{
    ikp__pj_ws(j);
    if (j->p < j->e && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}
/* The members of an object or elements of an array whose '{' or '[' is
   passed: 1 while another follows (*n counts them, 0 before the first),
   0 at the close (passed), or on a failure (j->why set). */
static int ikp__pj_next(ikp__pj *j, char close, size_t *n)
{
    ikp__pj_ws(j);
    if (j->p >= j->e) return ikp__pj_fail(j, close == '}' ? "the text ends inside an object" : "the text ends inside an array");
    if (*j->p == close && !*n) {
        j->p++;
        return 0;
    }
    if (*n) {
        if (*j->p == close) {
            j->p++;
            return 0;
        }
        if (*j->p != ',') return ikp__pj_fail(j, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
        j->p++;
    }
    (*n)++;
    return 1;
}
/* a member's key and its ':', j->p then at the value */
static int ikp__pj_key(ikp__pj *j, const char **k, size_t *kn)
{
    if (!ikp__pj_str(j, k, kn)) return 0;
    ikp__pj_ws(j);
    if (j->p >= j->e || *j->p != ':') return ikp__pj_fail(j, "':' expected after a key");
    j->p++;
    ikp__pj_ws(j);
    return 1;
}
static int ikp__pj_skip(ikp__pj *j, int depth)
{
    const char *s;
    size_t n;
    double v;
    ikp__pj_ws(j);
    if (j->p >= j->e) return ikp__pj_fail(j, "the text ends where a value was expected");
    if (depth > IKP__PJ_MAX_DEPTH) return ikp__pj_fail(j, "values nested deeper than 64");
    if (*j->p == '"') return ikp__pj_str(j, &s, &n);
    if (*j->p == '{' || *j->p == '[') {
        const char close = *j->p++ == '{' ? '}' : ']';
        size_t k = 0;
        while (ikp__pj_next(j, close, &k))
            if ((close == '}' && !ikp__pj_key(j, &s, &n)) || !ikp__pj_skip(j, depth + 1)) return 0;
        return !j->why;
    }
    if ((size_t)(j->e - j->p) >= 4 && (!memcmp(j->p, "true", 4) || !memcmp(j->p, "null", 4))) { j->p += 4; return 1; }
    if ((size_t)(j->e - j->p) >= 5 && !memcmp(j->p, "false", 5)) { j->p += 5; return 1; }
    return ikp__pj_num(j, &v);
}
/* 1 if [s, s + n) is the key k */
static int ikp__pj_is(const char *s, size_t n, const char *k) { return strlen(k) == n && !memcmp(s, k, n); }
/* a string body unescaped into out (at most cap - 1 bytes, NUL ended; \u escapes as UTF-8, a lone
   surrogate as U+FFFD); the bytes written */
static size_t ikp__pj_text(const char *s, size_t n, char *out, size_t cap)
{
    size_t i = 0, k = 0;
    while (i < n && k + 4 < cap) {
        unsigned c = (unsigned char)s[i++];
        if (c != '\\' || i >= n) { out[k++] = (char)c; continue; }
        c = (unsigned char)s[i++];
        if (c == 'u') {
            unsigned u = 0, d;
            for (d = 0; d < 4 && i < n; d++, i++) {
                const char h = s[i];
                u = u * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                        : h >= 'A' && h <= 'F' ? h - 'A' + 10 : 0);
            }
            if (u >= 0xD800 && u <= 0xDFFF) u = 0xFFFD; /* (pairs too: names are short and plain) */
            if (u < 0x80) out[k++] = (char)(u ? u : '?');
            else if (u < 0x800) { out[k++] = (char)(0xC0 | u >> 6); out[k++] = (char)(0x80 | (u & 63)); }
            else { out[k++] = (char)(0xE0 | u >> 12); out[k++] = (char)(0x80 | (u >> 6 & 63)); out[k++] = (char)(0x80 | (u & 63)); }
        } else {
            out[k++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == 'b' ? '\b' : c == 'f' ? '\f' : (char)c;
        }
    }
    out[k] = 0;
    return k;
}

/* strings named once: a table of (hash, text) with the index of each */
typedef struct ikp__pjset {
    char **text;
    uint32_t *slot; /* open addressing: index + 1, 0 = free */
    size_t n, room, slots;
} ikp__pjset;
/* the index of text (unescaped, then suffix if not NULL; cut to 255 bytes) in s, added if new;
   -1 when out of memory */
static int64_t ikp__pjset_add(const ikp_allocator *a, ikp__pjset *s, const char *raw, size_t rn, const char *suffix)
{
    char t[IKP_MAX_NAME_BYTES + 1];
    const size_t sn = suffix ? strlen(suffix) : 0;
    size_t n = ikp__pj_text(raw, rn, t, sizeof t - sn);
    uint64_t h = IKP__FNV_BASIS, i;
    if (sn) {
        memcpy(t + n, suffix, sn + 1);
        n += sn;
    }
    for (i = 0; i < n; i++) h = (h ^ (unsigned char)t[i]) * IKP__FNV_PRIME;
    if (2 * (s->n + 1) > s->slots) { /* grow the slots and place every text again */
        const size_t ns = s->slots ? 2 * s->slots : 64;
        uint32_t *sl = (uint32_t *)ikp__alloc(a, ns * sizeof *sl);
        size_t k;
        if (!sl) return -1;
        memset(sl, 0, ns * sizeof *sl);
        for (k = 0; k < s->n; k++) {
            uint64_t g = IKP__FNV_BASIS;
            const char *c;
            for (c = s->text[k]; *c; c++) g = (g ^ (unsigned char)*c) * IKP__FNV_PRIME;
            while (sl[g & (ns - 1)]) g++;
            sl[g & (ns - 1)] = (uint32_t)k + 1;
        }
        ikp__free(a, s->slot);
        s->slot = sl;
        s->slots = ns;
    }
    for (;; h++) {
        const uint32_t v = s->slot[h & (s->slots - 1)];
        if (!v) break;
        if (!strcmp(s->text[v - 1], t)) return (int64_t)v - 1;
    }
    if (!ikp__grow(a, (void **)&s->text, &s->room, s->n + 1, sizeof *s->text)) return -1;
    if (!(s->text[s->n] = ikp__strdup_n(a, t, n))) return -1;
    s->slot[h & (s->slots - 1)] = (uint32_t)s->n + 1;
    return (int64_t)s->n++;
}
static void ikp__pjset_free(const ikp_allocator *a, ikp__pjset *s)
{
    size_t k;
    for (k = 0; k < s->n; k++) ikp__free(a, s->text[k]);
    ikp__free(a, s->text);
    ikp__free(a, s->slot);
}

/* one event as read, and then its stamps */
typedef struct ikp__pjev {
    uint32_t pid, tid, name;
    int instant;
    int flow;            /* an end of a cross-warp pair: 1 out, 2 in, 3 not said (bind_id) */
    double ts, dur;      /* as written: us (of 1000 MHz cycles, or of ns) */
    uint64_t bind;       /* its bind_id */
    const char *raw;     /* its name as written, escapes kept */
    size_t rawn;
} ikp__pjev;
typedef struct ikp__pjcta {
    uint32_t kernel, cta, sm;
    int has_init, has_final;
    double init, fin;    /* ns: Init Time, Post Final Time */
    double first, last;  /* its events' earliest ts and latest end (us as written) */
} ikp__pjcta;
typedef struct ikp__pjstamp {
    uint32_t lane, tag;
    int has_data;        /* a payload (an IKP_DATA word after it): data */
    uint32_t data;
    int64_t ns;
    int rank;            /* at one ns: ends, instants, then begins */
    int64_t tie;         /* then: begins the longer first, ends the shorter first */
} ikp__pjstamp;
static int ikp__pj_cmp_stamp(const void *pa, const void *pb)
{
    const ikp__pjstamp *a = (const ikp__pjstamp *)pa, *b = (const ikp__pjstamp *)pb;
    if (a->lane != b->lane) return a->lane < b->lane ? -1 : 1;
    if (a->ns != b->ns) return a->ns < b->ns ? -1 : 1;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return a->tie < b->tie ? -1 : a->tie > b->tie;
}

/* The SM clocks the boost clock names (MHz): --device's table, short
   names and the names CUDA gives the boards (cudaDeviceProp::name,
   nvidia-smi), spaces read as '-' */
static const struct { const char *name; unsigned mhz; } ikp__gpu_clocks[] = {
    {"a100", 1410}, {"a100-sxm4-40gb", 1410}, {"a100-sxm4-80gb", 1410}, {"a100-pcie-40gb", 1410},
    {"a100-80gb-pcie", 1410}, {"h100", 1980}, {"h100-sxm", 1980}, {"h100-80gb-hbm3", 1980},
    {"h100-pcie", 1755}, {"h200", 1980},
};
/* what the table knows, as messages say it */
#define IKP__GPU_KNOWN "a100, h100, h100-pcie, h200 and CUDA's names of them"
/* the boost clock of GPU name (case and a leading "nvidia " ignored), MHz; 0 when not in the table */
static unsigned ikp__gpu_mhz(const char *name)
{
    char t[32];
    size_t i, k = 0;
    if (!name) return 0;
    if (!strncmp(name, "NVIDIA ", 7) || !strncmp(name, "nvidia ", 7)) name += 7;
    for (i = 0; name[i] && k + 1 < sizeof t; i++)
        t[k++] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i] == ' ' ? '-' : name[i]);
    t[k] = 0;
    for (i = 0; i < sizeof ikp__gpu_clocks / sizeof ikp__gpu_clocks[0]; i++)
        if (!strcmp(t, ikp__gpu_clocks[i].name)) return ikp__gpu_clocks[i].mhz;
    return 0;
}

/* 1 if the bytes open as JSON (an object or array whose first member or element starts) */
static int ikp__looks_json(const unsigned char *p, size_t size)
{
    size_t i = 0;
    while (i < size && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
    if (i >= size || (p[i] != '{' && p[i] != '[')) return 0;
    for (i++; i < size && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'); i++) {}
    return i < size && (p[i] == '"' || p[i] == '{' || p[i] == '}' || p[i] == ']');
}

/* "<kernel> Core<sm> CTA<block>": 1 with the parts */
static int ikp__pj_pid(const char *t, size_t *kernel_len, uint32_t *sm, uint32_t *cta)
{
    const char *c = strstr(t, " Core"), *d;
    unsigned long v;
    char *end;
    if (!c) return 0;
    while ((d = strstr(c + 1, " Core")) != NULL) c = d;
    v = strtoul(c + 5, &end, 10);
    if (end == c + 5 || strncmp(end, " CTA", 4) || v > 0xFFFFu) return 0;
    *sm = (uint32_t)v;
    d = end + 4;
    v = strtoul(d, &end, 10);
    if (end == d || *end || v > 0x7FFFFFFFul) return 0;
    *cta = (uint32_t)v;
    *kernel_len = (size_t)(c - t);
    return 1;
}
/* "warp <w> (line <k>)" or "warp <w>": 1 with w and k */
static int ikp__pj_tid(const char *t, uint32_t *w, uint32_t *k)
{
    unsigned long a, b = 0;
    char *end;
    if (strncmp(t, "warp ", 5)) return 0;
    a = strtoul(t + 5, &end, 10);
    if (end == t + 5 || a > 1023) return 0;
    if (*end) {
        const char *q = end;
        if (strncmp(q, " (line ", 7)) return 0;
        b = strtoul(q + 7, &end, 10);
        if (end == q + 7 || strcmp(end, ")") || b > 63) return 0;
    }
    *w = (uint32_t)a;
    *k = (uint32_t)b;
    return 1;
}

typedef struct ikp__pjread {
    ikp__pjset pids, tids, names, kernels;
    ikp__pjev *ev;
    size_t nev, evroom;
    int freq_seen;        /* some event's args say "Frequency (MHz)" */
    double freq_mhz;      /* ... this */
    uint64_t skipped;     /* events of other kinds (metadata, flows), or without a name or time */
    size_t flow_ends;     /* ends of cross-warp pairs (bind_id) */
    ikp__pjcta *cta;      /* by pid */
    size_t ncta, ctaroom;
} ikp__pjread;

/* one event object (j->p at its '{'), added to r */
static int ikp__pj_event(const ikp_allocator *a, ikp__pj *j, ikp__pjread *r, int *oom)
{
    const char *s, *ph = NULL, *name = NULL, *pid = NULL, *tid = NULL;
    size_t n, phn = 0, namen = 0, pidn = 0, tidn = 0;
    double ts = 0, dur = 0, init = 0, fin = 0, freq = 0;
    uint64_t bind = 0;
    int has_ts = 0, has_dur = 0, has_init = 0, has_fin = 0, has_freq = 0, has_bind = 0, flow = 0;
    size_t members = 0;
    if (!ikp__pj_open(j, '{')) return ikp__pj_skip(j, 1) && (r->skipped++, 1);
    while (ikp__pj_next(j, '}', &members)) {
        if (!ikp__pj_key(j, &s, &n)) return 0;
        if (j->p < j->e && *j->p == '"' && (ikp__pj_is(s, n, "ph") || ikp__pj_is(s, n, "name") ||
                                            ikp__pj_is(s, n, "pid") || ikp__pj_is(s, n, "tid"))) {
            const char *v;
            size_t vn;
            if (!ikp__pj_str(j, &v, &vn)) return 0;
            if (ikp__pj_is(s, n, "ph")) { ph = v; phn = vn; }
            else if (ikp__pj_is(s, n, "name")) { name = v; namen = vn; }
            else if (ikp__pj_is(s, n, "pid")) { pid = v; pidn = vn; }
            else { tid = v; tidn = vn; }
        } else if (ikp__pj_is(s, n, "ts") || ikp__pj_is(s, n, "dur")) {
            if (!ikp__pj_num(j, ikp__pj_is(s, n, "ts") ? &ts : &dur)) return 0;
            if (ikp__pj_is(s, n, "ts")) has_ts = 1;
            else has_dur = 1;
        } else if (ikp__pj_is(s, n, "bind_id") && j->p < j->e && *j->p >= '0' && *j->p <= '9') {
            const char *at = j->p;
            if (ikp__pj_int(j, &bind, 0)) has_bind = 1; /* an id that is no integer: no pair */
            else {
                j->why = NULL;
                j->p = at;
                if (!ikp__pj_skip(j, 2)) return 0;
            }
        } else if ((ikp__pj_is(s, n, "flow_out") || ikp__pj_is(s, n, "flow_in")) && j->e - j->p >= 4 &&
                   !memcmp(j->p, "true", 4)) {
            j->p += 4;
            flow |= ikp__pj_is(s, n, "flow_out") ? 1 : 2;
        } else if (ikp__pj_is(s, n, "args") && ikp__pj_open(j, '{')) {
            size_t args = 0;
            while (ikp__pj_next(j, '}', &args)) {
                const char *k;
                size_t kn;
                if (!ikp__pj_key(j, &k, &kn)) return 0;
                if (j->p < j->e && (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) &&
                    (ikp__pj_is(k, kn, "Frequency (MHz)") || ikp__pj_is(k, kn, "Init Time (ns)") ||
                     ikp__pj_is(k, kn, "Post Final Time (ns)"))) {
                    double v;
                    if (!ikp__pj_num(j, &v)) return 0;
                    if (ikp__pj_is(k, kn, "Frequency (MHz)")) { freq = v; has_freq = 1; }
                    else if (ikp__pj_is(k, kn, "Init Time (ns)")) { init = v; has_init = 1; }
                    else { fin = v; has_fin = 1; }
                } else if (!ikp__pj_skip(j, 3)) {
                    return 0;
                }
            }
            if (j->why) return 0;
        } else if (!ikp__pj_skip(j, 2)) {
            return 0;
        }
    }
    if (j->why) return 0;
    if (!members) {
        r->skipped++;
        return 1;
    }
    if (!ph || !name || !pid || !tid || !has_ts || !(ts == ts) || ts < 0 || ts > 1e12 ||
        !((phn == 1 && *ph == 'X' && has_dur && dur >= 0 && dur <= 1e12) || (phn == 1 && *ph == 'i'))) {
        r->skipped++; /* metadata, flow events, events without a name, lane or time */
        return 1;
    }
    if (has_freq) {
        if (r->freq_seen && freq != r->freq_mhz) return ikp__pj_fail(j, "events disagree on \"Frequency (MHz)\"");
        r->freq_seen = 1;
        r->freq_mhz = freq;
    }
    {
        ikp__pjev *e;
        int64_t pi, ti, ni;
        if ((pi = ikp__pjset_add(a, &r->pids, pid, pidn, NULL)) < 0 ||
            (ti = ikp__pjset_add(a, &r->tids, tid, tidn, NULL)) < 0 ||
            (ni = ikp__pjset_add(a, &r->names, name, namen, NULL)) < 0 ||
            !ikp__grow(a, (void **)&r->ev, &r->evroom, r->nev + 1, sizeof *r->ev) ||
            !ikp__grow(a, (void **)&r->cta, &r->ctaroom, r->pids.n, sizeof *r->cta)) {
            *oom = 1;
            return 0;
        }
        if ((size_t)pi == r->ncta) { /* a new CTA */
            memset(&r->cta[r->ncta], 0, sizeof *r->cta);
            r->cta[r->ncta].first = ts;
            r->cta[r->ncta].last = ts;
            r->ncta++;
        }
        {
            ikp__pjcta *c = &r->cta[pi];
            const double end = ts + (*ph == 'X' ? dur : 0);
            if (ts < c->first) c->first = ts;
            if (end > c->last) c->last = end;
            if (has_init) { c->has_init = 1; c->init = init; }
            if (has_fin) { c->has_final = 1; c->fin = fin; }
        }
        e = &r->ev[r->nev++];
        e->pid = (uint32_t)pi;
        e->tid = (uint32_t)ti;
        e->name = (uint32_t)ni;
        e->ts = ts;
        e->dur = *ph == 'X' ? dur : 0;
        e->instant = *ph == 'i' || dur == 0;
        e->flow = has_bind && e->instant ? (flow == 1 || flow == 2 ? flow : 3) : 0;
        e->bind = bind;
        e->raw = name;
        e->rawn = namen;
    }
    return 1;
}

static void ikp__pjread_free(const ikp_allocator *a, ikp__pjread *r)
{
    ikp__pjset_free(a, &r->pids);
    ikp__pjset_free(a, &r->tids);
    ikp__pjset_free(a, &r->names);
    ikp__pjset_free(a, &r->kernels);
    ikp__free(a, r->ev);
    ikp__free(a, r->cta);
}

/* the array of events at j->p (its '[') read into r: 0 on a failure (j->why, or *oom) */
static int ikp__pj_events(const ikp_allocator *a, ikp__pj *j, ikp__pjread *r, int *oom)
{
    size_t n = 0;
    j->p++;
    while (ikp__pj_next(j, ']', &n))
        if (!ikp__pj_event(a, j, r, oom)) return 0;
    return !j->why;
}

/* The ends of Proton's cross-warp pairs (two events of no length, one
   bind_id) named "<scope> (out)" and "<scope> (in)", the bind_id their
   payload, so that a flow between the two names draws the arrow. An end
   Proton does not mark (flow_out, flow_in: newer versions) is its pair's
   out end if it comes first, else an in end. 0 when out of memory. */
typedef struct ikp__pjflow { uint64_t bind; double ts; size_t i; uint32_t pid; } ikp__pjflow;
static int ikp__pj_cmp_flow(const void *pa, const void *pb)
{
    const ikp__pjflow *a = (const ikp__pjflow *)pa, *b = (const ikp__pjflow *)pb;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1; /* a pair's ends share their CTA */
    if (a->bind != b->bind) return a->bind < b->bind ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}
static int ikp__pj_flows(const ikp_allocator *a, ikp__pjread *r)
{
    ikp__pjflow *f;
    size_t i, n = 0;
    for (i = 0; i < r->nev; i++) n += r->ev[i].flow != 0;
    if (!n) return 1;
    if (!(f = (ikp__pjflow *)ikp__alloc(a, n * sizeof *f))) return 0;
    for (i = 0, n = 0; i < r->nev; i++)
        if (r->ev[i].flow) {
            f[n].bind = r->ev[i].bind;
            f[n].pid = r->ev[i].pid;
            f[n].ts = r->ev[i].ts;
            f[n++].i = i;
        }
    qsort(f, n, sizeof *f, ikp__pj_cmp_flow);
    r->flow_ends = n;
    for (i = 0; i < n; i++) {
        ikp__pjev *e = &r->ev[f[i].i];
        const int out = e->flow == 3 ? i == 0 || f[i - 1].bind != f[i].bind || f[i - 1].pid != f[i].pid : e->flow == 1;
        const int64_t k = ikp__pjset_add(a, &r->names, e->raw, e->rawn, out ? " (out)" : " (in)");
        if (k < 0) break;
        e->name = (uint32_t)k;
    }
    ikp__free(a, f);
    return i == n;
}

/* the text's events read into r */
static ikp_result ikp__pj_parse(const ikp_allocator *a, const unsigned char *p, size_t size, ikp__pjread *r,
                                ikp_error *err)
{
    ikp__pj j;
    int oom = 0, found = 0;
    j.p = j.b = (const char *)p;
    j.e = j.p + size;
    j.why = j.at = NULL;
    if (ikp__pj_open(&j, '{')) { /* {"traceEvents": [...], ...} */
        const char *s;
        size_t n, members = 0;
        while (ikp__pj_next(&j, '}', &members)) {
            if (!ikp__pj_key(&j, &s, &n)) break;
            if (ikp__pj_is(s, n, "traceEvents") && j.p < j.e && *j.p == '[') {
                found = 1;
                if (!ikp__pj_events(a, &j, r, &oom)) break;
            } else if (!ikp__pj_skip(&j, 1)) {
                break;
            }
        }
    } else if (j.p < j.e && *j.p == '[') { /* the array form: the events alone */
        found = 1;
        ikp__pj_events(a, &j, r, &oom);
    }
    if (oom || (!j.why && !ikp__pj_flows(a, r))) return ikp__oom(err);
    if (j.why)
        return ikp__fail(err, j.p >= j.e ? IKP_ERR_TRUNCATED : IKP_ERR_BAD_HEADER, (int64_t)(j.at - j.b), -1,
                         "JSON trace, byte %llu: %s", (unsigned long long)(j.at - j.b), j.why);
    ikp__pj_ws(&j);
    if (j.p < j.e) return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)(j.p - j.b), -1,
                                    "JSON trace, byte %llu: text after the trace's end",
                                    (unsigned long long)(j.p - j.b));
    if (!found) return ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, 0, -1, "a JSON file without \"traceEvents\": not a trace");
    return IKP_OK;
}

/* text added at s + *k as snprintf writes it (room bytes in all), *k moved
   past it; once the text fills s, nothing more is added */
static void ikp__addf(char *s, size_t room, size_t *k, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (*k + 1 >= room) return;
    va_start(ap, fmt);
    n = vsnprintf(s + *k, room - *k, fmt, ap);
    va_end(ap);
    if (n > 0) *k = *k + (size_t)n < room ? *k + (size_t)n : room - 1;
}

/* refused before anything is allocated for them: lanes that could not fit
   the 1 GiB a JSON-read buffer may take, even with one record each */
static ikp_result ikp__json_lanes_fit(uint64_t nlanes, const char *what, ikp_error *err)
{
    if (nlanes > (IKP__PJ_MAX_WORDS - IKP_WIRE_HEADER_WORDS) / (IKP_WIRE_LANE_WORDS + 1 + IKP_WIRE_SINK_SLOTS))
        return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "a %s trace of %llu lanes: over the 1 GiB an IKP buffer "
                         "of it may take", what, (unsigned long long)nlanes);
    return IKP_OK;
}

/* groups "warp 0", "warp 1", ... where none are given */
static ikp_result ikp__warp_names(ikp_capture *cap, uint32_t groups, ikp_error *err)
{
    uint32_t g;
    if (cap->num_group_names || groups > 4096) return IKP_OK;
    if (!(cap->group_names = (char **)ikp__alloc(&cap->alloc, groups * sizeof(char *)))) return ikp__oom(err);
    memset(cap->group_names, 0, groups * sizeof(char *));
    cap->num_group_names = groups;
    for (g = 0; g < groups; g++) {
        char t[16];
        const int n = snprintf(t, sizeof t, "warp %u", g);
        if (!(cap->group_names[g] = ikp__strdup_n(&cap->alloc, t, (size_t)n))) return ikp__oom(err);
    }
    return IKP_OK;
}

/* The words of an IKP buffer of %globaltimer lanes (ns) from stamps (st,
   sorted here): lane l is block l / groups, group l % groups, on SM
   lane_sm[l]; a stamp at g0 + its ns. Into cap->words (owned). A lane
   whose records lie 2^32 ns or more apart cannot be held (its stamps keep
   32 bits). what: the format, for messages. */
static ikp_result ikp__json_words(ikp_capture *cap, ikp__pjstamp *st, size_t nst, uint64_t nlanes, uint32_t nblocks,
                                  uint32_t groups, const uint32_t *lane_sm, int64_t g0, const char *what,
                                  ikp_error *err)
{
    uint64_t *w, stride, nw;
    uint32_t cap_recs = 0;
    size_t i;
    qsort(st, nst, sizeof *st, ikp__pj_cmp_stamp);
    for (i = 0; i < nst;) { /* the most records (and payloads) a lane holds */
        size_t k = i, n = 0;
        for (; k < nst && st[k].lane == st[i].lane; k++) {
            if (k > i && st[k].ns - st[k - 1].ns > (int64_t)0xFFFFFFFFll)
                return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, (int64_t)st[k].lane, "a %s trace whose lane %u "
                                 "holds records over 4.29 s apart (an IKP lane's stamps keep 32 bits)", what,
                                 st[k].lane);
            n += 1 + (size_t)st[k].has_data;
        }
        if (n > cap_recs) cap_recs = (uint32_t)n;
        i = k;
    }
    if (nlanes * (IKP_WIRE_LANE_WORDS + cap_recs + IKP_WIRE_SINK_SLOTS) + IKP_WIRE_HEADER_WORDS > IKP__PJ_MAX_WORDS)
        return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "a %s trace of %llu lanes, one of %u records: over "
                         "the 1 GiB an IKP buffer of it may take", what, (unsigned long long)nlanes, cap_recs);
    stride = IKP_WIRE_LANE_WORDS + cap_recs + IKP_WIRE_SINK_SLOTS;
    nw = IKP_WIRE_HEADER_WORDS + nlanes * stride;
    if (!(w = (uint64_t *)ikp__alloc(&cap->alloc, (size_t)nw * 8))) return ikp__oom(err);
    memset(w, 0, (size_t)nw * 8);
    w[0] = IKP_WIRE_MAGIC | (uint64_t)IKP_WIRE_VERSION << 32 | (uint64_t)IKP_WIRE_HEADER_WORDS << 48 |
           (uint64_t)IKP_WIRE_LANE_WORDS << 56;
    w[1] = nlanes | (uint64_t)cap_recs << 32;
    for (i = 0; i < nst;) {
        const uint32_t l = st[i].lane;
        uint64_t *h = w + IKP_WIRE_HEADER_WORDS + l * stride;
        size_t k = i, n = 0;
        h[0] = IKP_WIRE_LANE_MAGIC | (uint64_t)lane_sm[l] << 32;
        h[1] = (uint64_t)(l / groups) | (uint64_t)(l % groups) << 32 | (uint64_t)groups << 48;
        h[2] = (uint64_t)nblocks | (uint64_t)1 << 32 | (uint64_t)1 << 48;
        h[3] = (uint64_t)(g0 + st[i].ns);
        for (; k < nst && st[k].lane == l; k++) {
            h[IKP_WIRE_LANE_WORDS + n++] = (uint64_t)(uint32_t)(g0 + st[k].ns) << 32 | st[k].tag;
            if (st[k].has_data)
                h[IKP_WIRE_LANE_WORDS + n++] = (uint64_t)st[k].data << 32 |
                                               IKP_WIRE_TAG(st[k].tag >> IKP_WIRE_EVENT_SHIFT, IKP_WIRE_DATA_MARK);
        }
        h[5] = (uint64_t)(g0 + st[k - 1].ns);
        h[7] = (uint64_t)n | IKP_WIRE_FINALIZED;
        i = k;
    }
    cap->words = w;
    cap->owned = w;
    cap->num_words = (size_t)nw;
    return IKP_OK;
}

/* A Proton trace's events into the words of an IKP buffer (cap->words,
   owned), its names and the text that says what it was read from
   (info.source); *real_gpu_time: its CTAs' %globaltimer init stamps are
   in the file. */
static ikp_result ikp__open_proton(ikp_capture *cap, const unsigned char *p, size_t size,
                                   const ikp_decode_options *opt, int *real_gpu_time, ikp_error *err)
{
    const ikp_allocator *a = &cap->alloc;
    ikp__pjread r;
    ikp__pjstamp *st = NULL;
    uint64_t nlanes = 0;
    uint32_t *cta_block = NULL, *tid_group = NULL, *ev_lane = NULL, *kernel_base = NULL, *lane_sm = NULL;
    size_t i, nst = 0;
    uint32_t max_group = 0, nblocks = 0;
    double rate = 0, lower = 0, min_init = 0;
    int ns_already, all_init = 1;
    char rate_text[200];
    ikp_result res = IKP_OK;
    memset(&r, 0, sizeof r);
    *real_gpu_time = 0;
    if ((res = ikp__pj_parse(a, p, size, &r, err)) != IKP_OK) goto done;
    if (!r.nev && r.skipped) {
        res = ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, 0, -1, "a JSON trace of %llu events, none a Proton scope (an \"X\" "
                        "or \"i\" event with a name, ts and a pid and tid of text): not a Proton trace (a capture goes "
                        "into a torch.profiler trace with ikp trace --into)", (unsigned long long)r.skipped);
        goto done;
    }
    if (!r.nev) {
        res = ikp__fail(err, IKP_ERR_EMPTY, 0, -1, "a JSON trace with no events");
        goto done;
    }
    if (r.names.n > IKP_WIRE_MAX_EVENTS) {
        res = ikp__fail(err, IKP_ERR_BAD_NAMES, -1, -1, "a Proton trace with %llu scope names (at most %u)",
                        (unsigned long long)r.names.n, IKP_WIRE_MAX_EVENTS);
        goto done;
    }
    /* the CTAs: kernel, SM and block from their pid; each kernel's blocks after the ones before */
    cta_block = (uint32_t *)ikp__alloc(a, r.ncta * sizeof *cta_block);
    kernel_base = (uint32_t *)ikp__alloc(a, (r.ncta + 1) * sizeof *kernel_base);
    tid_group = (uint32_t *)ikp__alloc(a, r.tids.n * sizeof *tid_group);
    if (!cta_block || !kernel_base || !tid_group) { res = ikp__oom(err); goto done; }
    for (i = 0; i < r.ncta; i++) {
        size_t kl;
        int64_t k;
        if (!ikp__pj_pid(r.pids.text[i], &kl, &r.cta[i].sm, &r.cta[i].cta)) {
            res = ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, -1, -1, "a JSON trace whose process \"%s\" does not read "
                            "\"<kernel> Core<sm> CTA<block>\": not a Proton trace", r.pids.text[i]);
            goto done;
        }
        if ((k = ikp__pjset_add(a, &r.kernels, r.pids.text[i], kl, NULL)) < 0) { res = ikp__oom(err); goto done; }
        r.cta[i].kernel = (uint32_t)k;
        if (!r.cta[i].has_init) all_init = 0;
        else if (i == 0 || r.cta[i].init < min_init) min_init = r.cta[i].init;
    }
    memset(kernel_base, 0, (r.ncta + 1) * sizeof *kernel_base);
    for (i = 0; i < r.ncta; i++) /* blocks each kernel needs: its largest CTA + 1 */
        if (r.cta[i].cta + 1 > kernel_base[r.cta[i].kernel + 1]) kernel_base[r.cta[i].kernel + 1] = r.cta[i].cta + 1;
    for (i = 1; i <= r.kernels.n; i++) {
        if ((uint64_t)kernel_base[i] + kernel_base[i - 1] > 0x7FFFFFFFu) {
            res = ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1, "a Proton trace whose kernels hold over 2^31 CTAs");
            goto done;
        }
        kernel_base[i] += kernel_base[i - 1];
    }
    nblocks = kernel_base[r.kernels.n];
    for (i = 0; i < r.ncta; i++) cta_block[i] = kernel_base[r.cta[i].kernel] + r.cta[i].cta;
    for (i = 0; i < r.tids.n; i++) { /* groups: warp x lines + line */
        uint32_t wv, kv;
        if (!ikp__pj_tid(r.tids.text[i], &wv, &kv)) {
            res = ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, -1, -1, "a JSON trace whose thread \"%s\" does not read "
                            "\"warp <w> (line <k>)\": not a Proton trace", r.tids.text[i]);
            goto done;
        }
        (void)kv; /* a line is Proton's row for overlapping scopes of one warp, not a lane */
    }
    for (i = 0; i < r.tids.n; i++) {
        uint32_t wv, kv;
        ikp__pj_tid(r.tids.text[i], &wv, &kv);
        tid_group[i] = wv;
        if (tid_group[i] > max_group) max_group = tid_group[i];
    }
    /* the rate its cycles are read at */
    ns_already = !r.freq_seen;
    if (!ns_already && !(r.freq_mhz >= 1 && r.freq_mhz <= 1e5)) {
        res = ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1, "a Proton trace whose \"Frequency (MHz)\" is out of range");
        goto done;
    }
    for (i = 0; i < r.ncta; i++) /* the file's own init and final stamps: the rate is at least ... */
        if (r.cta[i].has_init && r.cta[i].has_final && r.cta[i].fin > r.cta[i].init) {
            const double cyc = (r.cta[i].last - r.cta[i].first) * r.freq_mhz, lb = cyc / (r.cta[i].fin - r.cta[i].init);
            if (lb > lower) lower = lb;
        }
    if (ns_already) { /* checked: each CTA's events, read as ns, within its own init and final stamps */
        size_t checked = 0;
        for (i = 0; i < r.ncta; i++)
            if (r.cta[i].has_init && r.cta[i].has_final) {
                const double span = (r.cta[i].last - r.cta[i].first) * 1000.0, window = r.cta[i].fin - r.cta[i].init;
                if (span > window + 1000.0) {
                    res = ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1, "a Proton trace without \"Frequency (MHz)\" (its "
                                    "times ns already) whose CTA \"%s\" spans %.0f ns, more than its own init and final "
                                    "%%globaltimer stamps allow (%.0f ns): its times are not ns", r.pids.text[i], span,
                                    window);
                    goto done;
                }
                checked++;
            }
        snprintf(rate_text, sizeof rate_text, "its times in ns already (no \"Frequency (MHz)\"; %s)",
                 checked ? "each CTA's within its init and final stamps" : "no init and final stamps to check them by");
    } else if (opt && opt->cycles_per_ns > 0) {
        rate = opt->cycles_per_ns;
        snprintf(rate_text, sizeof rate_text, "SM cycles read at %.4g cycles/ns, as given", rate);
    } else if (opt && opt->gpu_name) {
        const unsigned mhz = ikp__gpu_mhz(opt->gpu_name);
        if (!mhz) {
            res = ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "no SM clock known for the GPU \"%s\" (known: "
                            IKP__GPU_KNOWN ", such as \"NVIDIA H100 80GB HBM3\"; else give its clock: " IKP__RATE_HOW ")",
                            opt->gpu_name);
            goto done;
        }
        rate = mhz / 1000.0;
        snprintf(rate_text, sizeof rate_text, "SM cycles read at %u MHz, the boost clock of %s: an assumption (a clock "
                 "held lower by power or heat makes every time that much too short)", mhz, opt->gpu_name);
    } else if (lower > 0) {
        rate = lower;
        snprintf(rate_text, sizeof rate_text, "SM cycles read at %.4g cycles/ns, the least rate the file's init and final "
                 "%%globaltimer stamps allow: a lower bound (times may be too long by as much as the clock ran faster)",
                 rate);
    } else {
        res = ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "a Proton trace counts SM cycles (its \"Frequency (MHz)\": "
                        "%g is a label, not the clock): give the GPU's SM clock, " IKP__RATE_HOW ", or name the GPU, "
                        "gpu_name (ikp --device h200; known: " IKP__GPU_KNOWN ")", r.freq_mhz);
        goto done;
    }
    if (!ns_already && !(rate >= IKP_MIN_CYCLES_PER_NS && rate <= IKP_MAX_CYCLES_PER_NS)) {
        res = ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "a Proton trace read at %g cycles/ns: outside 0.05 .. 20",
                        rate);
        goto done;
    }
    /* the lanes: one a (CTA, thread), at block x groups + group as in every IKP buffer */
    nlanes = (uint64_t)nblocks * (max_group + 1);
    if (nlanes > 0xFFFFFFFFu) {
        res = ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "a Proton trace of %u blocks x %u warps: over 2^32 lanes",
                        nblocks, max_group + 1);
        goto done;
    }
    if ((res = ikp__json_lanes_fit(nlanes, "Proton", err)) != IKP_OK) goto done;
    ev_lane = (uint32_t *)ikp__alloc(a, r.nev * sizeof *ev_lane);
    if (!ev_lane) { res = ikp__oom(err); goto done; }
    for (i = 0; i < r.nev; i++)
        ev_lane[i] = cta_block[r.ev[i].pid] * (max_group + 1) + tid_group[r.ev[i].tid];
    lane_sm = (uint32_t *)ikp__alloc(a, (size_t)nlanes * sizeof *lane_sm);
    st = (ikp__pjstamp *)ikp__alloc(a, 2 * r.nev * sizeof *st);
    if (!lane_sm || !st) { res = ikp__oom(err); goto done; }
    for (i = 0; i < r.nev; i++) {
        const ikp__pjev *e = &r.ev[i];
        const ikp__pjcta *c = &r.cta[e->pid];
        /* the CTA's start (ns, as written) and the event's cycles (or ns) after it */
        const double start = all_init ? c->init - min_init : c->first * 1000.0;
        const double b = e->ts * 1000.0 - start, d = e->dur * 1000.0;
        const double b_ns = start + (ns_already ? b : b * r.freq_mhz / 1000.0 / rate),
                     e_ns = start + (ns_already ? b + d : (b + d) * r.freq_mhz / 1000.0 / rate);
        lane_sm[ev_lane[i]] = c->sm;
        st[nst].lane = ev_lane[i];
        st[nst].ns = (int64_t)(b_ns + 0.5);
        st[nst].tag = IKP_WIRE_TAG(e->name, e->instant ? IKP_WIRE_KIND_INSTANT : IKP_WIRE_KIND_BEGIN);
        st[nst].rank = e->instant ? 1 : 2;
        st[nst].tie = -(int64_t)(e_ns + 0.5);
        st[nst].has_data = e->flow != 0;
        st[nst].data = (uint32_t)e->bind;
        nst++;
        if (!e->instant) {
            st[nst].lane = ev_lane[i];
            st[nst].ns = (int64_t)(e_ns + 0.5);
            st[nst].tag = IKP_WIRE_TAG(e->name, IKP_WIRE_KIND_END);
            st[nst].rank = (int64_t)(e_ns + 0.5) == (int64_t)(b_ns + 0.5) ? 3 : 0;
            st[nst].tie = -(int64_t)(b_ns + 0.5);
            st[nst].has_data = 0;
            nst++;
        }
    }
    /* time 0 of the stamps: the earliest init, else an hour (the stamps' %globaltimer is not known) */
    if ((res = ikp__json_words(cap, st, nst, nlanes, nblocks, max_group + 1, lane_sm,
                               all_init ? (int64_t)min_init : (int64_t)3600000000000ll, "Proton", err)) != IKP_OK)
        goto done;
    /* the names: the file's, where none are given */
    if (!cap->num_event_names && r.names.n) {
        cap->event_names = r.names.text;
        cap->num_event_names = (uint32_t)r.names.n;
        r.names.text = NULL;
        r.names.n = 0;
    }
    if ((res = ikp__warp_names(cap, max_group + 1, err)) != IKP_OK) goto done;
    {
        char *s = cap->info.source;
        const size_t room = sizeof cap->info.source;
        size_t k = 0;
        ikp__addf(s, room, &k, "Proton trace of %s", r.kernels.text[0]);
        for (i = 1; i < r.kernels.n; i++)
            ikp__addf(s, room, &k, ", %s (blocks from %u)", r.kernels.text[i], kernel_base[i]);
        ikp__addf(s, room, &k, ": %s; %s", rate_text,
                  all_init ? "each CTA placed by its init %globaltimer stamp"
                           : "each CTA's earliest event at the CTA's init %globaltimer, as Proton places it (the "
                             "cycles from its init to that event are not in the file)");
        ikp__addf(s, room, &k, "; not in the file: Proton's drops (its ring keeps the newest events) and clock32's "
                  "wraps (every 2^32 cycles)");
        if (r.flow_ends)
            ikp__addf(s, room, &k, "; %llu ends of cross-warp pairs as instants \"<scope> (out)\" and \"(in)\", "
                      "their bind_id the payload", (unsigned long long)r.flow_ends);
        if (r.skipped)
            ikp__addf(s, room, &k, "; %llu events of other kinds left out (metadata, flow arrows)",
                      (unsigned long long)r.skipped);
    }
    *real_gpu_time = all_init;
done:
    ikp__free(a, st);
    ikp__free(a, cta_block);
    ikp__free(a, kernel_base);
    ikp__free(a, tid_group);
    ikp__free(a, ev_lane);
    ikp__free(a, lane_sm);
    ikp__pjread_free(a, &r);
    return res;
}

/* >>capture-iket: NVIDIA IKET's trace.json, read into IKP words */
/* IKET (CUTLASS's CuTe DSL tracer, run-iket) writes one JSON file a
   process, iket_pid_<pid>.trace.json: {"stringTable": [names],
   "locationTable": [{smId, tpcId, gpcId, ctaId: [x, y, z], warpId}],
   "launches": [launch], "graphLaunches": {"graph_exec_N:M": [launch]},
   "meta": {"version": 1}} (4.8; 4.6 wrote names and locations in place and
   only "launches"). A launch: contextId, gridId, kernelName, gridDimX..Z,
   blockDimX..Z, "ranges" (startTs, endTs, rangeNameIdx, warpLocIdxs, and
   internalEvents: timestamp, eventId, payloadType, payloadVal), "markers"
   (timestamp, markerNameIdx, locIdx, payloadType, payloadVal) and
   "warpLifetimes" (startTs, endTs, locIdx). Times are ns of IKET's own
   timer (32 ns ticks), one timebase within the file and none shared with
   other processes. Read into the words of an IKP buffer of %globaltimer
   lanes: a lane a (CTA, warp) of a launch, each launch's CTAs after the
   blocks of the launches before it (graph launches too), a warp's lifetime
   the region "warp lifetime", a range a region on the lane of its first
   warp, a marker an instant, a range's payload at its start or end the
   payload of its begin or end, its other inner events instants "<range>
   event <id>"; payloads keep their low 32 bits. Integers are read exactly
   (times and payloads may pass 2^53). */
typedef struct ikp__ikstr { const char *s; size_t n; } ikp__ikstr;
#define IKP__IK_INLINE 0x80000000u /* a name or location written in place (4.6), not a table index */
enum { IKP__IK_RANGE, IKP__IK_MARK, IKP__IK_LIFE, IKP__IK_INNER };
typedef struct ikp__ikloc {
    int64_t sm, warp, cta[3];  /* -1: not said */
} ikp__ikloc;
typedef struct ikp__ikev {
    uint32_t launch, loc, name; /* loc, name: table indices, or | IKP__IK_INLINE */
    uint32_t sub;               /* IKP__IK_INNER: the eventId */
    int kind, has_b, has_e;     /* has_b, has_e: payloads of the begin (or instant) and the end */
    uint64_t t0, t1, b, e;
} ikp__ikev;
typedef struct ikp__iklaunch {
    uint64_t ctx, grid, dim[3];
    int has_dim, in_graph;
    ikp__ikstr name, graph;     /* kernelName; the graphLaunches key it is under */
} ikp__iklaunch;
typedef struct ikp__ikread {
    ikp__ikstr *str, *inl;      /* stringTable; names written in place */
    size_t nstr, strroom, ninl, inlroom;
    ikp__ikloc *loc, *iloc;     /* locationTable; locations written in place */
    size_t nloc, locroom, niloc, ilocroom;
    ikp__ikev *ev;
    size_t nev, evroom;
    ikp__iklaunch *la;
    size_t nla, laroom;
    ikp__ikev *inner;           /* a range's inner events, until the range is read */
    size_t ninner, innerroom;
    uint64_t backwards;         /* ranges and lifetimes that end before they start: left out */
    uint64_t cut;               /* payloads wider than 32 bits, cut to their low 32 */
    int tables, version;        /* the 4.7 layout (tables) and meta.version (0: none) */
    int oom;
    const ikp_allocator *a;
} ikp__ikread;

static int ikp__ik_grow(ikp__ikread *r, void **p, size_t *room, size_t need, size_t esz)
{
    if (ikp__grow(r->a, p, room, need, esz)) return 1;
    r->oom = 1;
    return 0;
}
/* a location object (j->p at its '{') */
static int ikp__ik_loc(ikp__pj *j, ikp__ikloc *l)
{
    const char *k;
    size_t kn, n = 0;
    uint64_t v;
    l->sm = l->warp = l->cta[0] = l->cta[1] = l->cta[2] = -1;
    if (!ikp__pj_open(j, '{')) return ikp__pj_fail(j, "a location object expected");
    while (ikp__pj_next(j, '}', &n)) {
        if (!ikp__pj_key(j, &k, &kn)) return 0;
        if (ikp__pj_is(k, kn, "ctaId") && ikp__pj_open(j, '[')) {
            size_t c = 0;
            while (ikp__pj_next(j, ']', &c)) {
                if (c > 3) return ikp__pj_fail(j, "a ctaId of more than 3 numbers");
                if (!ikp__pj_int(j, &v, 1)) return 0;
                l->cta[c - 1] = (int64_t)v;
            }
            if (j->why) return 0;
        } else if (ikp__pj_is(k, kn, "smId") || ikp__pj_is(k, kn, "warpId")) {
            if (!ikp__pj_int(j, &v, 1)) return 0;
            *(ikp__pj_is(k, kn, "smId") ? &l->sm : &l->warp) = (int64_t)v;
        } else if (!ikp__pj_skip(j, 4)) {
            return 0;
        }
    }
    return !j->why;
}
/* a location in place (4.6) or by index: *idx */
static int ikp__ik_loc_at(ikp__pj *j, ikp__ikread *r, int inline_loc, uint32_t *idx)
{
    uint64_t v;
    if (inline_loc) {
        if (!ikp__ik_grow(r, (void **)&r->iloc, &r->ilocroom, r->niloc + 1, sizeof *r->iloc)) return 0;
        if (!ikp__ik_loc(j, &r->iloc[r->niloc])) return 0;
        *idx = (uint32_t)r->niloc++ | IKP__IK_INLINE;
        return 1;
    }
    if (!ikp__pj_int(j, &v, 0)) return 0;
    if (v >= IKP__IK_INLINE) return ikp__pj_fail(j, "a location index past 2^31");
    *idx = (uint32_t)v;
    return 1;
}
/* a name in place (4.6, a string) or by index: *idx */
static int ikp__ik_name_at(ikp__pj *j, ikp__ikread *r, int inline_name, uint32_t *idx)
{
    uint64_t v;
    if (inline_name) {
        if (!ikp__ik_grow(r, (void **)&r->inl, &r->inlroom, r->ninl + 1, sizeof *r->inl)) return 0;
        if (!ikp__pj_str(j, &r->inl[r->ninl].s, &r->inl[r->ninl].n)) return 0;
        *idx = (uint32_t)r->ninl++ | IKP__IK_INLINE;
        return 1;
    }
    if (!ikp__pj_int(j, &v, 0)) return 0;
    if (v >= IKP__IK_INLINE) return ikp__pj_fail(j, "a string index past 2^31");
    *idx = (uint32_t)v;
    return 1;
}
/* one of a marker's or inner event's keys: timestamp, payloadType, payloadVal; 0 if k is none of them */
static int ikp__ik_stamp_key(ikp__pj *j, const char *k, size_t kn, ikp__ikev *e, uint64_t *type, int *ok)
{
    uint64_t v = 0;
    if (!ikp__pj_is(k, kn, "timestamp") && !ikp__pj_is(k, kn, "payloadType") && !ikp__pj_is(k, kn, "payloadVal"))
        return 0;
    *ok = ikp__pj_int(j, &v, ikp__pj_is(k, kn, "payloadVal"));
    if (ikp__pj_is(k, kn, "timestamp")) { e->t0 = e->t1 = v; e->has_e = 1; } /* has_e: a time seen */
    else if (ikp__pj_is(k, kn, "payloadType")) *type = v;
    else e->b = v;
    return 1;
}
/* the payload of e (type, value e->b) as IKP's 32 bits: 1 if there is one */
static int ikp__ik_payload(ikp__ikread *r, uint64_t type, uint64_t *v)
{
    if (!type) return 0;
    if ((*v >> 32) && ((*v >> 31) != 0x1FFFFFFFFull || (type != 7 && type != 5 && type != 3 && type != 1))) r->cut++;
    *v &= 0xFFFFFFFFu;
    return 1;
}
/* a marker or an inner event of a range (j->p at its '{'), into *e */
static int ikp__ik_point(ikp__pj *j, ikp__ikread *r, int inner, ikp__ikev *e)
{
    const char *k;
    size_t kn, n = 0;
    uint64_t type = 0, v;
    int ok = 1, named = 0, placed = 0;
    memset(e, 0, sizeof *e);
    if (!ikp__pj_open(j, '{')) return ikp__pj_fail(j, inner ? "an inner event object expected" : "a marker object expected");
    while (ikp__pj_next(j, '}', &n)) {
        if (!ikp__pj_key(j, &k, &kn)) return 0;
        if (ikp__ik_stamp_key(j, k, kn, e, &type, &ok)) {
            if (!ok) return 0;
        } else if (inner && ikp__pj_is(k, kn, "eventId")) {
            if (!ikp__pj_int(j, &v, 0)) return 0;
            e->sub = (uint32_t)(v > 0xFFFFFFFFu ? 0xFFFFFFFFu : v);
        } else if (!inner && (ikp__pj_is(k, kn, "markerNameIdx") || ikp__pj_is(k, kn, "markerName"))) {
            if (!ikp__ik_name_at(j, r, kn == 10, &e->name)) return 0; /* markerName: 4.6 */
            named = 1;
        } else if (!inner && (ikp__pj_is(k, kn, "locIdx") || ikp__pj_is(k, kn, "location"))) {
            if (!ikp__ik_loc_at(j, r, kn == 8, &e->loc)) return 0; /* location: 4.6 */
            placed = 1;
        } else if (!ikp__pj_skip(j, 5)) {
            return 0;
        }
    }
    if (j->why) return 0;
    if (!e->has_e) return ikp__pj_fail(j, inner ? "an inner event without a timestamp" : "a marker without a timestamp");
    if (!inner && (!named || !placed)) return ikp__pj_fail(j, named ? "a marker without a location" : "a marker without a name");
    e->has_e = 0;
    e->has_b = ikp__ik_payload(r, type, &e->b);
    e->kind = inner ? IKP__IK_INNER : IKP__IK_MARK;
    return 1;
}
/* a range or a warp lifetime (j->p at its '{') of launch la, added to r->ev with its inner events */
static int ikp__ik_span(ikp__pj *j, ikp__ikread *r, uint32_t la, int life)
{
    ikp__ikev e;
    const char *k;
    size_t kn, n = 0, i;
    int named = life, placed = 0, has0 = 0, has1 = 0;
    memset(&e, 0, sizeof e);
    r->ninner = 0;
    if (!ikp__pj_open(j, '{')) return ikp__pj_fail(j, life ? "a warp lifetime object expected" : "a range object expected");
    while (ikp__pj_next(j, '}', &n)) {
        if (!ikp__pj_key(j, &k, &kn)) return 0;
        if (ikp__pj_is(k, kn, "startTs") || ikp__pj_is(k, kn, "endTs")) {
            if (!ikp__pj_int(j, k[0] == 's' ? &e.t0 : &e.t1, 0)) return 0;
            *(k[0] == 's' ? &has0 : &has1) = 1;
        } else if (!life && (ikp__pj_is(k, kn, "rangeNameIdx") || ikp__pj_is(k, kn, "rangeName"))) {
            if (!ikp__ik_name_at(j, r, kn == 9, &e.name)) return 0; /* rangeName: 4.6 */
            named = 1;
        } else if ((life && (ikp__pj_is(k, kn, "locIdx") || ikp__pj_is(k, kn, "warpLocation"))) ||
                   (!life && (ikp__pj_is(k, kn, "warpLocIdxs") || ikp__pj_is(k, kn, "warpLocs")))) {
            const int in_place = k[0] == 'w' && (kn == 12 || kn == 8); /* warpLocation, warpLocs */
            size_t c = 0;
            if (life) {
                if (!ikp__ik_loc_at(j, r, in_place, &e.loc)) return 0;
                placed = 1;
            } else if (!ikp__pj_open(j, '[')) {
                return ikp__pj_fail(j, "an array of a range's warps expected");
            } else {
                while (ikp__pj_next(j, ']', &c)) { /* the range's lane: its first warp */
                    uint32_t at;
                    if (!ikp__ik_loc_at(j, r, in_place, &at)) return 0;
                    if (c == 1) e.loc = at;
                }
                if (j->why) return 0;
                placed = c > 0;
            }
        } else if (!life && ikp__pj_is(k, kn, "internalEvents") && ikp__pj_open(j, '[')) {
            size_t c = 0;
            while (ikp__pj_next(j, ']', &c)) {
                if (!ikp__ik_grow(r, (void **)&r->inner, &r->innerroom, r->ninner + 1, sizeof *r->inner)) return 0;
                if (!ikp__ik_point(j, r, 1, &r->inner[r->ninner])) return 0;
                r->ninner++;
            }
            if (j->why) return 0;
        } else if (!ikp__pj_skip(j, 5)) {
            return 0;
        }
    }
    if (j->why) return 0;
    if (!has0 || !has1) return ikp__pj_fail(j, life ? "a warp lifetime without startTs and endTs" : "a range without startTs and endTs");
    if (!named) return ikp__pj_fail(j, "a range without a name");
    if (!placed) return ikp__pj_fail(j, life ? "a warp lifetime without a location" : "a range without a warp");
    if (e.t1 < e.t0) { /* IKET pairs a range's ends after the run; a pair gone wrong is left out */
        r->backwards++;
        return 1;
    }
    e.launch = la;
    e.kind = life ? IKP__IK_LIFE : IKP__IK_RANGE;
    if (!ikp__ik_grow(r, (void **)&r->ev, &r->evroom, r->nev + 1 + r->ninner, sizeof *r->ev)) return 0;
    for (i = 0; i < r->ninner; i++) { /* a payload at an end is that end's; the others instants of the range */
        ikp__ikev *x = &r->inner[i];
        if (x->has_b && x->t0 == e.t0 && !e.has_b) { e.has_b = 1; e.b = x->b; continue; }
        if (x->has_b && x->t0 == e.t1 && !e.has_e) { e.has_e = 1; e.e = x->b; continue; }
        if (!x->has_b && (x->t0 == e.t0 || x->t0 == e.t1)) continue; /* an end itself */
        x->launch = la;
        x->loc = e.loc;
        x->name = e.name;
        r->ev[r->nev++] = *x;
    }
    r->ev[r->nev++] = e;
    return 1;
}
/* a launch object (j->p at its '{'); graph: its graphLaunches key (NULL: launches[]) */
static int ikp__ik_launch(ikp__pj *j, ikp__ikread *r, const char *graph, size_t graphn)
{
    ikp__iklaunch *l;
    const char *k;
    size_t kn, n = 0;
    uint32_t me;
    if (!ikp__ik_grow(r, (void **)&r->la, &r->laroom, r->nla + 1, sizeof *r->la)) return 0;
    if (r->nla >= 0xFFFFFFFFu) return ikp__pj_fail(j, "over 2^32 launches");
    me = (uint32_t)r->nla++;
    l = &r->la[me];
    memset(l, 0, sizeof *l);
    l->in_graph = graph != NULL;
    l->graph.s = graph;
    l->graph.n = graphn;
    if (!ikp__pj_open(j, '{')) return ikp__pj_fail(j, "a launch object expected");
    while (ikp__pj_next(j, '}', &n)) {
        if (!ikp__pj_key(j, &k, &kn)) return 0;
        l = &r->la[me]; /* (r->la does not move while a launch is read, but stays safe if it did) */
        if (ikp__pj_is(k, kn, "kernelName")) {
            if (!ikp__pj_str(j, &l->name.s, &l->name.n)) return 0;
        } else if (ikp__pj_is(k, kn, "contextId") || ikp__pj_is(k, kn, "gridId")) {
            if (!ikp__pj_int(j, k[0] == 'c' ? &l->ctx : &l->grid, 0)) return 0;
        } else if (kn == 8 && !memcmp(k, "gridDim", 7) && k[7] >= 'X' && k[7] <= 'Z') {
            if (!ikp__pj_int(j, &l->dim[k[7] - 'X'], 0)) return 0;
            l->has_dim |= 1 << (k[7] - 'X');
        } else if ((ikp__pj_is(k, kn, "ranges") || ikp__pj_is(k, kn, "markers") || ikp__pj_is(k, kn, "warpLifetimes")) &&
                   ikp__pj_open(j, '[')) {
            size_t c = 0;
            while (ikp__pj_next(j, ']', &c)) {
                if (k[0] == 'm') {
                    if (!ikp__ik_grow(r, (void **)&r->ev, &r->evroom, r->nev + 1, sizeof *r->ev)) return 0;
                    if (!ikp__ik_point(j, r, 0, &r->ev[r->nev])) return 0;
                    r->ev[r->nev++].launch = me;
                } else if (!ikp__ik_span(j, r, me, k[0] == 'w')) {
                    return 0;
                }
            }
            if (j->why) return 0;
        } else if (!ikp__pj_skip(j, 3)) {
            return 0;
        }
    }
    return !j->why;
}
/* 1 if the JSON text is IKET's (its top-level object's first key of note
   is one of IKET's, not "traceEvents") */
static int ikp__is_iket(const unsigned char *p, size_t size)
{
    ikp__pj j;
    const char *k;
    size_t kn, n = 0;
    j.p = j.b = (const char *)p;
    j.e = j.p + size;
    j.why = j.at = NULL;
    if (!ikp__pj_open(&j, '{')) return 0;
    while (ikp__pj_next(&j, '}', &n) && ikp__pj_key(&j, &k, &kn)) {
        if (ikp__pj_is(k, kn, "traceEvents")) return 0;
        if (ikp__pj_is(k, kn, "launches") || ikp__pj_is(k, kn, "graphLaunches") || ikp__pj_is(k, kn, "stringTable") ||
            ikp__pj_is(k, kn, "locationTable"))
            return 1;
        if (!ikp__pj_skip(&j, 1)) return 0;
    }
    return 0;
}
/* the text's launches, tables and version read into r */
static ikp_result ikp__ik_parse(const unsigned char *p, size_t size, ikp__ikread *r, ikp_error *err)
{
    ikp__pj j;
    const char *k;
    size_t kn, n = 0;
    int found = 0;
    j.p = j.b = (const char *)p;
    j.e = j.p + size;
    j.why = j.at = NULL;
    if (!ikp__pj_open(&j, '{')) ikp__pj_fail(&j, "an object expected");
    else while (ikp__pj_next(&j, '}', &n)) {
        if (!ikp__pj_key(&j, &k, &kn)) break;
        if (ikp__pj_is(k, kn, "launches") && ikp__pj_open(&j, '[')) {
            size_t c = 0;
            found = 1;
            while (ikp__pj_next(&j, ']', &c) && ikp__ik_launch(&j, r, NULL, 0)) {}
        } else if (ikp__pj_is(k, kn, "graphLaunches") && ikp__pj_open(&j, '{')) {
            size_t c = 0;
            found = 1;
            while (ikp__pj_next(&j, '}', &c)) {
                const char *g;
                size_t gn, d = 0;
                if (!ikp__pj_key(&j, &g, &gn)) break;
                if (!ikp__pj_open(&j, '[')) { ikp__pj_fail(&j, "a graph launch's array of kernels expected"); break; }
                while (ikp__pj_next(&j, ']', &d) && ikp__ik_launch(&j, r, g, gn)) {}
                if (j.why) break;
            }
        } else if (ikp__pj_is(k, kn, "stringTable") && ikp__pj_open(&j, '[')) {
            size_t c = 0;
            r->tables = 1;
            while (ikp__pj_next(&j, ']', &c) &&
                   ikp__ik_grow(r, (void **)&r->str, &r->strroom, r->nstr + 1, sizeof *r->str) &&
                   ikp__pj_str(&j, &r->str[r->nstr].s, &r->str[r->nstr].n))
                r->nstr++;
        } else if (ikp__pj_is(k, kn, "locationTable") && ikp__pj_open(&j, '[')) {
            size_t c = 0;
            r->tables = 1;
            while (ikp__pj_next(&j, ']', &c) &&
                   ikp__ik_grow(r, (void **)&r->loc, &r->locroom, r->nloc + 1, sizeof *r->loc) &&
                   ikp__ik_loc(&j, &r->loc[r->nloc]))
                r->nloc++;
        } else if (ikp__pj_is(k, kn, "meta") && ikp__pj_open(&j, '{')) {
            size_t c = 0;
            while (ikp__pj_next(&j, '}', &c) && ikp__pj_key(&j, &k, &kn)) {
                uint64_t v;
                if (!ikp__pj_is(k, kn, "version")) { if (!ikp__pj_skip(&j, 2)) break; }
                else if (!ikp__pj_int(&j, &v, 0)) break;
                else r->version = v > 1000000 ? 1000000 : (int)v;
            }
        } else if (!ikp__pj_skip(&j, 1)) {
            break;
        }
        if (j.why || r->oom) break;
    }
    if (r->oom) return ikp__oom(err);
    if (j.why)
        return ikp__fail(err, j.p >= j.e ? IKP_ERR_TRUNCATED : IKP_ERR_BAD_HEADER, (int64_t)(j.at - j.b), -1,
                         "IKET trace, byte %llu: %s", (unsigned long long)(j.at - j.b), j.why);
    ikp__pj_ws(&j);
    if (j.p < j.e) return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)(j.p - j.b), -1,
                                    "IKET trace, byte %llu: text after the trace's end", (unsigned long long)(j.p - j.b));
    if (!found) return ikp__fail(err, IKP_ERR_UNKNOWN_FORMAT, 0, -1, "an IKET trace without \"launches\"");
    return IKP_OK;
}
static void ikp__ikread_free(ikp__ikread *r)
{
    ikp__free(r->a, r->str);
    ikp__free(r->a, r->inl);
    ikp__free(r->a, r->loc);
    ikp__free(r->a, r->iloc);
    ikp__free(r->a, r->ev);
    ikp__free(r->a, r->la);
    ikp__free(r->a, r->inner);
}
/* e's location and name, checked against the tables: NULL when out of range (*why says which) */
static const ikp__ikloc *ikp__ik_where(const ikp__ikread *r, const ikp__ikev *e, const ikp__ikstr **name,
                                       const char **why)
{
    const int il = (e->loc & IKP__IK_INLINE) != 0, in = (e->name & IKP__IK_INLINE) != 0;
    const uint32_t lk = e->loc & ~IKP__IK_INLINE, nk = e->name & ~IKP__IK_INLINE;
    *name = NULL;
    if (e->kind != IKP__IK_LIFE) {
        if (nk >= (in ? r->ninl : r->nstr)) { *why = "a name index past the stringTable"; return NULL; }
        *name = in ? &r->inl[nk] : &r->str[nk];
    }
    if (lk >= (il ? r->niloc : r->nloc)) { *why = "a location index past the locationTable"; return NULL; }
    return il ? &r->iloc[lk] : &r->loc[lk];
}

/* An IKET trace's launches into the words of an IKP buffer (cap->words,
   owned), its names and the text that says what it was read from
   (info.source). */
static ikp_result ikp__open_iket(ikp_capture *cap, const unsigned char *p, size_t size, ikp_error *err)
{
    const ikp_allocator *a = &cap->alloc;
    ikp__ikread r;
    ikp__pjset names;
    ikp__pjstamp *st = NULL;
    uint64_t *base = NULL, tmin = UINT64_MAX, nlanes, unplaced = 0;
    uint32_t *lane_sm = NULL, *ev_name = NULL, groups = 1;
    size_t i, nst = 0;
    int64_t life = -1;
    ikp_result res = IKP_OK;
    memset(&r, 0, sizeof r);
    memset(&names, 0, sizeof names);
    r.a = a;
    if ((res = ikp__ik_parse(p, size, &r, err)) != IKP_OK) goto done;
    if (!r.nla) { res = ikp__fail(err, IKP_ERR_EMPTY, -1, -1, "an IKET trace with no launches"); goto done; }
    base = (uint64_t *)ikp__alloc(a, (r.nla + 1) * sizeof *base);
    ev_name = (uint32_t *)ikp__alloc(a, (r.nev + 1) * sizeof *ev_name);
    if (!base || !ev_name) { res = ikp__oom(err); goto done; }
    /* the launches' grids where IKET 4.6 did not write them: from their CTAs */
    for (i = 0; i < r.nev; i++) {
        const ikp__ikstr *nm;
        const char *why = NULL;
        const ikp__ikloc *l = ikp__ik_where(&r, &r.ev[i], &nm, &why);
        ikp__iklaunch *la = &r.la[r.ev[i].launch];
        int d;
        if (!l) {
            res = ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1, "IKET trace, launch %u (%.*s): %s", r.ev[i].launch,
                            (int)(la->name.n < 200 ? la->name.n : 200), la->name.s ? la->name.s : "", why);
            goto done;
        }
        for (d = 0; d < 3; d++)
            if (!(la->has_dim & 1 << d) && l->cta[d] >= 0 && (uint64_t)l->cta[d] >= la->dim[d]) la->dim[d] = (uint64_t)l->cta[d] + 1;
        if (r.ev[i].t0 < tmin) tmin = r.ev[i].t0;
    }
    base[0] = 0;
    for (i = 0; i < r.nla; i++) { /* each launch's blocks after the ones before */
        uint64_t b = 1;
        int d;
        for (d = 0; d < 3 && b <= 0x7FFFFFFF; d++) b *= r.la[i].dim[d] ? (r.la[i].dim[d] > 0x7FFFFFFF ? 0x80000000u : r.la[i].dim[d]) : 1;
        base[i + 1] = base[i] + b;
        if (b > 0x7FFFFFFF || base[i + 1] > 0x7FFFFFFF) {
            res = ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "an IKET trace whose launches hold over 2^31 CTAs");
            goto done;
        }
    }
    /* the names: the file's, a warp's lifetime "warp lifetime", an inner event "<range> event <id>" */
    for (i = 0; i < r.nev; i++) {
        const ikp__ikev *e = &r.ev[i];
        const ikp__ikstr *nm;
        const char *why;
        const ikp__ikloc *l = ikp__ik_where(&r, e, &nm, &why);
        char sub[32];
        int64_t k;
        if (l->warp < 0 || l->warp > 1023 || l->cta[0] < 0) {
            unplaced++;
            ev_name[i] = IKP_NO_EVENT;
            continue;
        }
        if ((uint64_t)l->warp + 1 > groups) groups = (uint32_t)l->warp + 1;
        if (e->kind == IKP__IK_LIFE) {
            if (life < 0 && (life = ikp__pjset_add(a, &names, "warp lifetime", 13, NULL)) < 0) { res = ikp__oom(err); goto done; }
            k = life;
        } else {
            snprintf(sub, sizeof sub, " event %u", e->sub);
            k = ikp__pjset_add(a, &names, nm->s, nm->n, e->kind == IKP__IK_INNER ? sub : NULL);
        }
        if (k < 0) { res = ikp__oom(err); goto done; }
        ev_name[i] = (uint32_t)k;
    }
    if (names.n > IKP_WIRE_MAX_EVENTS) {
        res = ikp__fail(err, IKP_ERR_BAD_NAMES, -1, -1, "an IKET trace with %llu event names (at most %u)",
                        (unsigned long long)names.n, IKP_WIRE_MAX_EVENTS);
        goto done;
    }
    nlanes = base[r.nla] * groups;
    if (nlanes > 0xFFFFFFFFu) {
        res = ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "an IKET trace of %llu CTAs x %u warps: over 2^32 lanes",
                        (unsigned long long)base[r.nla], groups);
        goto done;
    }
    if ((res = ikp__json_lanes_fit(nlanes, "IKET", err)) != IKP_OK) goto done;
    lane_sm = (uint32_t *)ikp__alloc(a, (size_t)nlanes * sizeof *lane_sm + 1);
    st = (ikp__pjstamp *)ikp__alloc(a, (2 * r.nev + 1) * sizeof *st);
    if (!lane_sm || !st) { res = ikp__oom(err); goto done; }
    memset(lane_sm, 0, (size_t)nlanes * sizeof *lane_sm);
    for (i = 0; i < r.nev; i++) {
        const ikp__ikev *e = &r.ev[i];
        const ikp__ikstr *nm;
        const char *why;
        const ikp__ikloc *l = ikp__ik_where(&r, e, &nm, &why);
        const ikp__iklaunch *la = &r.la[e->launch];
        const int point = e->kind == IKP__IK_MARK || e->kind == IKP__IK_INNER;
        uint64_t cta, lane;
        int64_t b_ns, e_ns;
        if (ev_name[i] == IKP_NO_EVENT) continue;
        cta = (uint64_t)l->cta[0] + (la->dim[0] ? la->dim[0] : 1) *
                                        ((uint64_t)(l->cta[1] > 0 ? l->cta[1] : 0) +
                                         (la->dim[1] ? la->dim[1] : 1) * (uint64_t)(l->cta[2] > 0 ? l->cta[2] : 0));
        if (cta >= base[e->launch + 1] - base[e->launch] || (uint64_t)l->cta[0] >= (la->dim[0] ? la->dim[0] : 1) ||
            (l->cta[1] > 0 && (uint64_t)l->cta[1] >= (la->dim[1] ? la->dim[1] : 1)) ||
            (l->cta[2] > 0 && (uint64_t)l->cta[2] >= (la->dim[2] ? la->dim[2] : 1)) || l->cta[1] < -1 || l->cta[2] < -1) {
            res = ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1, "IKET trace, launch %u: a CTA (%lld, %lld, %lld) "
                            "outside its grid (%llu, %llu, %llu)", e->launch, (long long)l->cta[0],
                            (long long)l->cta[1], (long long)l->cta[2], (unsigned long long)la->dim[0],
                            (unsigned long long)la->dim[1], (unsigned long long)la->dim[2]);
            goto done;
        }
        if (e->t1 - tmin > ((uint64_t)1 << 62)) {
            res = ikp__fail(err, IKP_ERR_BAD_HEADER, -1, -1, "an IKET trace whose times span over 2^62 ns");
            goto done;
        }
        lane = (base[e->launch] + cta) * groups + (uint64_t)l->warp;
        lane_sm[lane] = l->sm >= 0 && l->sm < 0xFFFF ? (uint32_t)l->sm : 0;
        b_ns = (int64_t)(e->t0 - tmin);
        e_ns = (int64_t)(e->t1 - tmin);
        st[nst].lane = (uint32_t)lane;
        st[nst].ns = b_ns;
        st[nst].tag = IKP_WIRE_TAG(ev_name[i], point ? IKP_WIRE_KIND_INSTANT : IKP_WIRE_KIND_BEGIN);
        st[nst].rank = point ? 1 : 2;
        st[nst].tie = -e_ns;
        st[nst].has_data = e->has_b;
        st[nst].data = (uint32_t)e->b;
        nst++;
        if (point) continue;
        st[nst].lane = (uint32_t)lane;
        st[nst].ns = e_ns;
        st[nst].tag = IKP_WIRE_TAG(ev_name[i], IKP_WIRE_KIND_END);
        st[nst].rank = e_ns == b_ns ? 3 : 0;
        st[nst].tie = -b_ns;
        st[nst].has_data = e->has_e;
        st[nst].data = (uint32_t)e->e;
        nst++;
    }
    if (!nst) { res = ikp__fail(err, IKP_ERR_EMPTY, -1, -1, "an IKET trace with no events of a known warp"); goto done; }
    if ((res = ikp__json_words(cap, st, nst, nlanes, (uint32_t)base[r.nla], groups, lane_sm,
                               (int64_t)3600000000000ll, "IKET", err)) != IKP_OK)
        goto done;
    if (!cap->num_event_names && names.n) {
        cap->event_names = names.text;
        cap->num_event_names = (uint32_t)names.n;
        names.text = NULL;
        names.n = 0;
    }
    if ((res = ikp__warp_names(cap, groups, err)) != IKP_OK) goto done;
    {
        char *s = cap->info.source;
        const size_t room = sizeof cap->info.source;
        size_t k = 0;
        if (r.version > 1)
            ikp__addf(s, room, &k, "IKET trace (format version %d, newer than the 1 IKP knows) of %u launch%s: ",
                      r.version, (unsigned)r.nla, r.nla == 1 ? "" : "es");
        else
            ikp__addf(s, room, &k, "IKET trace (%s) of %u launch%s: ",
                      r.version ? "format version 1" : r.tables ? "the 4.7 layout" : "the 4.6 layout",
                      (unsigned)r.nla, r.nla == 1 ? "" : "es");
        for (i = 0; i < r.nla && k + 40 < room; i++) { /* room left for "; ..." */
            const ikp__iklaunch *la = &r.la[i];
            char nm[64];
            ikp__pj_text(la->name.s ? la->name.s : "?", la->name.s ? la->name.n : 1, nm, sizeof nm);
            ikp__addf(s, room, &k, "%s%s (context %llu, grid %llu", i ? "; " : "", nm, (unsigned long long)la->ctx,
                      (unsigned long long)la->grid);
            if (la->in_graph) {
                char g[40];
                ikp__pj_text(la->graph.s, la->graph.n, g, sizeof g);
                ikp__addf(s, room, &k, ", %s", g);
            }
            ikp__addf(s, room, &k, ") blocks from %llu", (unsigned long long)base[i]);
        }
        if (i < r.nla) ikp__addf(s, room, &k, "; ...");
        ikp__addf(s, room, &k, ": IKET's trace-local ns (32 ns ticks), not aligned with other processes' traces; a "
                  "range on its first warp's lane");
        if (r.backwards)
            ikp__addf(s, room, &k, "; %llu ranges that end before they start left out", (unsigned long long)r.backwards);
        if (unplaced)
            ikp__addf(s, room, &k, "; %llu events of a warp or CTA IKET does not name left out",
                      (unsigned long long)unplaced);
        if (r.cut)
            ikp__addf(s, room, &k, "; %llu payloads wider than 32 bits cut to their low 32", (unsigned long long)r.cut);
    }
done:
    ikp__free(a, st);
    ikp__free(a, base);
    ikp__free(a, ev_name);
    ikp__free(a, lane_sm);
    ikp__pjset_free(a, &names);
    ikp__ikread_free(&r);
    return res;
}

/* >>capture-query: a capture's figures, placement, lanes, names */
IKP_DEF const ikp_capture_info *ikp_capture_get_info(const ikp_capture *cap)
{
    return cap ? &cap->info : NULL;
}

/* a distance in ns as text: ns, us or ms */
static void ikp__fmt_span_ns(char *b, size_t n, uint64_t ns)
{
    if (ns < 10000) snprintf(b, n, "%llu ns", (unsigned long long)ns);
    else if (ns < 10000000) snprintf(b, n, "%.1f us", (double)ns / 1e3);
    else snprintf(b, n, "%.1f ms", (double)ns / 1e6);
}

IKP_DEF size_t ikp_capture_stale(const ikp_capture_info *in, char *text, size_t size)
{
    int n;
    if (!text || !size) return 0;
    text[0] = 0;
    if (!in || !in->claimed_twice) return 0;
    n = snprintf(text, size, "STALE: %llu lane opening%s found the lane open already: the buffer was not reset "
                 "since an earlier launch, whose records those lanes hold (reset it before every launch; in a CUDA "
                 "graph, capture the reset with the kernel), or two leaders share a lane",
                 (unsigned long long)in->claimed_twice, in->claimed_twice == 1 ? "" : "s");
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

IKP_DEF size_t ikp_capture_placement(const ikp_capture_info *in, char *text, size_t size, int *poor)
{
    char gap[32], m[640];
    size_t k;
    int bad;
    const char *exact;
    if (poor) *poor = 0;
    if (!in) return 0;
    exact = in->sm_exact ? "within an SM: exact; " : "";
    bad = in->cross_sm_ns > IKP_PLACEMENT_POOR_NS;
    ikp__fmt_span_ns(gap, sizeof gap, in->reading_gap_ns);
    switch (in->placement) {
    case IKP_PLACED_GLOBALTIMER:
        snprintf(m, sizeof m, "one moment placed within %u ns across SMs (%%globaltimer stamps: one clock on every SM, "
                 "read in %u ns ticks)", in->cross_sm_ns, IKP__GLOBALTIMER_TICK_NS);
        break;
    case IKP_PLACED_SAMPLES:
    case IKP_PLACED_ANCHORS:
        if (in->placement == IKP_PLACED_SAMPLES)
            snprintf(m, sizeof m, "%sone moment placed within %u ns across SMs (estimated; SM "
                     "clock samples on %u SMs placed %u lanes, anchors the rest; lane %u has a record %s from its "
                     "nearest clock reading)", exact, in->cross_sm_ns, in->sm_clock_sms, in->sampled_lanes,
                     in->worst_lane, gap);
        else
            snprintf(m, sizeof m, "%sone moment placed within %u ns across SMs (estimated; anchors only, no SM clock "
                     "samples; lane %u has a record %s from its nearest anchor)", exact, in->cross_sm_ns,
                     in->worst_lane, gap);
        k = strlen(m);
        if (in->readings_left_out)
            k += (size_t)snprintf(m + k, sizeof m - k, "; %u clock reading%s left out: %s the others beyond %s",
                                  in->readings_left_out, in->readings_left_out == 1 ? "" : "s",
                                  in->readings_left_out == 1 ? "it contradicts" : "they contradict",
                                  in->readings_left_out == 1 ? "its width" : "their widths");
        if (in->speed_changes && k < sizeof m)
            k += (size_t)snprintf(m + k, sizeof m - k, "; SM clocks change speed %u time%s", in->speed_changes,
                                  in->speed_changes == 1 ? "" : "s");
        if (bad && k < sizeof m) {
            snprintf(m + k, sizeof m - k, ": poor. Download with ikp_cuda_buffer_download (or ikp_cuda_dump) right "
                     "after the launch, so that it samples the SM clocks while the kernel runs, or add IKP_ANCHOR at "
                     "cold points, or build with -DIKP_ANCHOR_EVERY=65536");
        }
        break;
    default:
        bad = 0;
        if (in->format == IKP_FORMAT_PROTON) /* what the trace was read as (info.source) */
            snprintf(m, sizeof m, "as Proton's file gives it, not mapped by IKP: %s", in->source);
        else if (in->format == IKP_FORMAT_IKET)
            snprintf(m, sizeof m, "trace-local, as IKET's file gives it (one timer for every SM, not aligned with "
                     "other processes), not mapped by IKP: %s", in->source);
        else
            snprintf(m, sizeof m, "not known (the %s format's own stamps, which IKP does not map to one clock)",
                     ikp_format_name(in->format));
    }
    if (poor) *poor = bad;
    if (size) snprintf(text, size, "%s", m);
    k = strlen(m);
    return k < size ? k : size ? size - 1 : 0;
}

IKP_DEF ikp_result ikp_capture_lane(const ikp_capture *cap, uint32_t lane, ikp_lane_info *out, ikp_error *err)
{
    ikp__lane tmp;
    if (!cap || !out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    if (lane >= cap->info.num_lanes)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, (int64_t)lane, "lane %u is past the capture's %u lanes",
                         lane, cap->info.num_lanes);
    ikp__ok(err);
    if (cap->lanes) { *out = cap->lanes[lane].pub; return IKP_OK; }
    ikp__peer_lane(cap, lane, &tmp);
    if (tmp.pub.flags & IKP_LANE_STARTED) ikp__formats[cap->format].scan(cap, &tmp, NULL);
    *out = tmp.pub;
    return IKP_OK;
}

IKP_DEF const char *ikp_event_name(const ikp_capture *cap, uint32_t id)
{
    if (cap && id < cap->num_event_names && cap->event_names[id]) return cap->event_names[id];
    return NULL;
}

IKP_DEF uint32_t ikp_event_id(const ikp_capture *cap, const char *name)
{
    uint32_t i;
    char tmp[32];
    if (!cap || !name) return IKP_NO_EVENT;
    for (i = 0; i < cap->num_event_names; i++)
        if (cap->event_names[i] && strcmp(cap->event_names[i], name) == 0) return i;
    if (strncmp(name, "event ", 6) == 0 && name[6] >= '0' && name[6] <= '9' && strlen(name) < 16) {
        i = (uint32_t)strtoul(name + 6, NULL, 10); /* "event N": the default name of an unnamed id */
        snprintf(tmp, sizeof tmp, "event %u", i);
        if (i < IKP_WIRE_MAX_EVENTS && !ikp_event_name(cap, i) && strcmp(tmp, name) == 0) return i;
    }
    return IKP_NO_EVENT;
}

IKP_DEF const char *ikp_group_name(const ikp_capture *cap, uint32_t group)
{
    if (cap && group < cap->num_group_names && cap->group_names[group]) return cap->group_names[group];
    return NULL;
}

/* >>decode-impl: per-lane decode */
#define IKP__NONE 0xFFFFFFFFu
typedef struct ikp__scratch {
    uint32_t *heads;                     /* innermost open begin per event id (IKP__NONE: none) */
    uint32_t *touched;                   /* the ids given a head in this lane */
    uint8_t *is_touched;
    size_t nids;                         /* ids the three hold: up to the highest id met, doubled */
    uint32_t ntouched;
    int64_t *stack[IKP__SHARED_TRACKS];  /* per track: ends of the open regions */
    size_t stack_n[IKP__SHARED_TRACKS], stack_cap[IKP__SHARED_TRACKS];
} ikp__scratch;

static void ikp__scratch_free(const ikp_allocator *a, void *p)
{
    ikp__scratch *s = (ikp__scratch *)p;
    uint32_t t;
    if (!s) return;
    for (t = 0; t < IKP__SHARED_TRACKS; t++) ikp__free(a, s->stack[t]);
    ikp__free(a, s->heads);
    ikp__free(a, s->touched);
    ikp__free(a, s->is_touched);
    ikp__free(a, s);
}
/* the scratch's per-id arrays made to hold id */
static int ikp__scratch_ids(const ikp_allocator *a, ikp__scratch *s, uint32_t id)
{
    size_t n, k, c1 = s->nids, c2 = s->nids, c3 = s->nids;
    if (!ikp__grow(a, (void **)&s->heads, &c1, (size_t)id + 1, sizeof *s->heads) ||
        !ikp__grow(a, (void **)&s->touched, &c2, (size_t)id + 1, sizeof *s->touched) ||
        !ikp__grow(a, (void **)&s->is_touched, &c3, (size_t)id + 1, 1))
        return 0;
    n = c1 < c2 ? c1 : c2; /* the same: each doubled from nids to past id */
    if (c3 < n) n = c3;
    for (k = s->nids; k < n; k++) {
        s->heads[k] = IKP__NONE;
        s->is_touched[k] = 0;
    }
    s->nids = n;
    return 1;
}

IKP_DEF void ikp_lane_events_free(const ikp_capture *cap, ikp_lane_events *ev)
{
    ikp_allocator a;
    if (!ev) return;
    a = cap ? cap->alloc : ikp__allocator(NULL);
    ikp__scratch_free(&a, ev->scratch_);
    ikp__free(&a, ev->events);
    memset(ev, 0, sizeof *ev);
}

static int ikp__cmp_event(const void *pa, const void *pb)
{
    const ikp_event *a = (const ikp_event *)pa, *b = (const ikp_event *)pb;
    if (a->start_ps != b->start_ps) return a->start_ps < b->start_ps ? -1 : 1;
    return a->link_ < b->link_ ? -1 : a->link_ > b->link_;
}

static ikp_event *ikp__push_event(const ikp_capture *cap, ikp_lane_events *ev)
{
    ikp_event *e;
    if (ev->count == ev->capacity_ &&
        !ikp__grow(&cap->alloc, (void **)&ev->events, &ev->capacity_, ev->count + 1, sizeof(ikp_event)))
        return NULL;
    e = &ev->events[ev->count++];
    e->flags = 0;
    e->track = e->begin_data = e->end_data = e->link_ = e->tid = 0;
    return e;
}

/* nuggets: regions in start order; at equal starts the longer (outer) first */
static int ikp__cmp_region(const void *pa, const void *pb)
{
    const ikp_event *a = (const ikp_event *)pa, *b = (const ikp_event *)pb;
    if (a->start_ps != b->start_ps) return a->start_ps < b->start_ps ? -1 : 1;
    if (a->end_ps != b->end_ps) return a->end_ps > b->end_ps ? -1 : 1;
    return a->link_ < b->link_ ? -1 : a->link_ > b->link_;
}

/* nuggets: a unit's regions (recorded whole, at their end), sorted */
static ikp_result ikp__nug_events(const ikp_capture *cap, const ikp__lane *l, ikp_lane_events *out)
{
    const uint64_t *q = cap->words + l->base;
    const int64_t wrap_ps = ((int64_t)1 << 24) * cap->tick_ps;
    int64_t lmax = INT64_MIN;
    uint64_t k;
    size_t j;
    ikp__nrec r;
    for (k = 0; k < l->slots; k++) {
        ikp_event *e;
        if (ikp__nug_rec(cap, q, k, &r) <= 0) continue;
        if (!(e = ikp__push_event(cap, out))) return IKP_ERR_OUT_OF_MEMORY;
        e->start_ps = ikp__ps(l, r.start);
        e->end_ps = ikp__ps(l, r.end);
        e->id = r.id;
        e->kind = IKP_EVENT_REGION;
        e->link_ = (uint32_t)k;
        if (r.has_tid) { e->flags = IKP_EVENT_HAS_TID; e->tid = r.tid; }
        if (out->first_ps == INT64_MIN || e->start_ps < out->first_ps) out->first_ps = e->start_ps;
        if (out->last_ps == INT64_MIN || e->end_ps > out->last_ps) out->last_ps = e->end_ps;
        if (e->end_ps > lmax) lmax = e->end_ps;
    }
    /* compact: a duration is kept modulo 2^24 ticks; a region may have
       lasted longer if its unit still recorded 2^24 ticks after it began */
    if (ikp__nug_compact(cap))
        for (j = 0; j < out->count; j++)
            if (out->events[j].start_ps <= lmax - wrap_ps) out->events[j].flags |= IKP_EVENT_MAY_WRAP;
    if (out->count > 1) qsort(out->events, out->count, sizeof(ikp_event), ikp__cmp_region);
    return IKP_OK;
}

/* the events of a lane of one-word records, in start order */
static ikp_result ikp__walk_events(const ikp_capture *cap, const ikp__lane *l, ikp__scratch *s,
                                   ikp_lane_events *out, ikp_error *err)
{
    ikp__walk wk;
    uint32_t last = IKP__NONE, i;
    int last_end = 0, oom = 0;
    size_t k;
    ikp__walk_init(cap, l, &wk);
    for (;;) {
        ikp__rec r;
        ikp_event *e;
        int64_t ps;
        int ok;
        if (!ikp__walk_next(cap, l, &wk, &r, &ok)) break;
        if (r.kind == IKP__KIND_INVALID) continue;
        if (r.kind == IKP_WIRE_KIND_DATA) {
            if (last != IKP__NONE && out->events[last].id == r.id) {
                if (last_end) { out->events[last].end_data = r.hi; out->events[last].flags |= IKP_EVENT_HAS_END_DATA; }
                else { out->events[last].begin_data = r.hi; out->events[last].flags |= IKP_EVENT_HAS_BEGIN_DATA; }
            }
            continue;
        }
        if (!ok) continue;
        ps = ikp__walk_ps(l, &wk, wk.ck.prev);
        if (out->first_ps == INT64_MIN || ps < out->first_ps) out->first_ps = ps;
        if (out->last_ps == INT64_MIN || ps > out->last_ps) out->last_ps = ps;
        if (r.kind == IKP__KIND_FINALIZE) continue;
        if (r.kind == IKP_WIRE_KIND_END && r.id < s->nids && s->heads[r.id] != IKP__NONE) {
            e = &out->events[s->heads[r.id]];
            last = s->heads[r.id];
            s->heads[r.id] = e->link_;
            e->end_ps = ps < e->start_ps ? e->start_ps : ps;
            e->kind = IKP_EVENT_REGION;
            last_end = 1;
            continue;
        }
        if ((r.kind == IKP_WIRE_KIND_BEGIN && r.id >= s->nids && !ikp__scratch_ids(&cap->alloc, s, r.id)) ||
            !(e = ikp__push_event(cap, out))) {
            oom = 1;
            break;
        }
        e->start_ps = e->end_ps = ps;
        e->id = r.id;
        last = (uint32_t)(out->count - 1);
        last_end = 0;
        if (r.kind == IKP_WIRE_KIND_BEGIN) {
            e->kind = IKP_EVENT_UNMATCHED_BEGIN; /* until its end comes */
            e->link_ = s->heads[r.id];
            s->heads[r.id] = last;
            if (!s->is_touched[r.id]) { s->is_touched[r.id] = 1; s->touched[s->ntouched++] = r.id; }
        } else if (r.kind == IKP_WIRE_KIND_END) {
            e->kind = IKP_EVENT_UNMATCHED_END;
            last_end = 1;
        } else {
            e->kind = IKP_EVENT_INSTANT;
        }
    }
    for (i = 0; i < s->ntouched; i++) { /* the scratch left clean for the next lane */
        s->heads[s->touched[i]] = IKP__NONE;
        s->is_touched[s->touched[i]] = 0;
    }
    s->ntouched = 0;
    if (oom) return ikp__oom(err);
    for (k = 0; k < out->count; k++) out->events[k].link_ = (uint32_t)k;
    if (wk.ck.backwards && out->count > 1) qsort(out->events, out->count, sizeof(ikp_event), ikp__cmp_event);
    return IKP_OK;
}

/* decodes lane l (stored, or made by ikp__get_lane) into out */
static ikp_result ikp__decode(const ikp_capture *cap, const ikp__lane *l, ikp_lane_events *out, ikp_error *err)
{
    ikp__scratch *s;
    ikp_result r;
    uint32_t t, ntr = 0, overflow = IKP__SHARED_TRACKS, maxtr = 0;
    int64_t cs = 0, ce = 0;
    int open = 0;
    size_t k;
    out->count = 0;
    out->num_tracks = 0;
    out->regions = out->instants = out->unmatched_begin = out->unmatched_end = 0;
    out->busy_ps = 0;
    out->first_ps = out->last_ps = INT64_MIN;
    if (!(l->pub.flags & IKP_LANE_STARTED)) return IKP_OK;
    if (!out->scratch_) {
        out->scratch_ = ikp__alloc(&cap->alloc, sizeof(ikp__scratch));
        if (!out->scratch_) return ikp__oom(err);
        memset(out->scratch_, 0, sizeof(ikp__scratch));
    }
    s = (ikp__scratch *)out->scratch_;
    r = ikp__is_nuggets(cap->format) ? ikp__nug_events(cap, l, out) : ikp__walk_events(cap, l, s, out, err);
    if (r != IKP_OK) return r == IKP_ERR_OUT_OF_MEMORY ? ikp__oom(err) : r;
    for (t = 0; t < IKP__SHARED_TRACKS; t++) s->stack_n[t] = 0;
    for (k = 0; k < out->count; k++) {
        ikp_event *e = &out->events[k];
        e->link_ = 0;
        switch (e->kind) {
        case IKP_EVENT_INSTANT: out->instants++; break;
        case IKP_EVENT_UNMATCHED_BEGIN: out->unmatched_begin++; break;
        case IKP_EVENT_UNMATCHED_END: out->unmatched_end++; break;
        default: out->regions++; break;
        }
        if (e->kind != IKP_EVENT_REGION) { e->track = 0; continue; }
        /* busy: union of regions */
        if (!open || e->start_ps > ce) {
            if (open) out->busy_ps += ce - cs;
            cs = e->start_ps; ce = e->end_ps; open = 1;
        } else if (e->end_ps > ce) ce = e->end_ps;
        /* track: the first whose open regions this one nests in */
        for (t = 0; t < ntr; t++) {
            size_t *n = &s->stack_n[t];
            while (*n && s->stack[t][*n - 1] <= e->start_ps) (*n)--;
            if (*n == 0 || s->stack[t][*n - 1] >= e->end_ps) break;
        }
        if (t == ntr) {
            if (ntr < IKP__SHARED_TRACKS) ntr++;
            else t = overflow++; /* a track of its own */
        }
        if (t < IKP__SHARED_TRACKS) {
            if (!ikp__grow(&cap->alloc, (void **)&s->stack[t], &s->stack_cap[t], s->stack_n[t] + 1,
                           sizeof(int64_t)))
                return ikp__oom(err);
            s->stack[t][s->stack_n[t]++] = e->end_ps;
        }
        e->track = t;
        if (t + 1 > maxtr) maxtr = t + 1;
    }
    if (open) out->busy_ps += ce - cs;
    out->num_tracks = maxtr ? maxtr : 1;
    return IKP_OK;
}

IKP_DEF ikp_result ikp_decode_lane(const ikp_capture *cap, uint32_t lane, ikp_lane_events *out,
                                   ikp_error *err)
{
    ikp__lane tmp;
    if (!cap || !out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    if (lane >= cap->info.num_lanes)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, (int64_t)lane,
                         "lane %u out of range (capture has %u)", lane, cap->info.num_lanes);
    return ikp__decode(cap, ikp__get_lane(cap, lane, &tmp), out, err);
}

/* >>stats-impl: statistics computed */
typedef struct ikp__durs {
    uint64_t *v;
    size_t n, cap;
} ikp__durs;

/* LSD radix sort, 11-bit digits; passes where all keys share a digit are skipped */
static void ikp__radix_sort(uint64_t *a, uint64_t *tmp, size_t n)
{
    size_t cnt[2048], i;
    int shift;
    if (n < 2) return;
    for (shift = 0; shift < 64; shift += 11) {
        size_t sum = 0;
        memset(cnt, 0, sizeof cnt);
        for (i = 0; i < n; i++) cnt[(a[i] >> shift) & 2047]++;
        if (cnt[(a[0] >> shift) & 2047] == n) continue;
        for (i = 0; i < 2048; i++) { size_t c = cnt[i]; cnt[i] = sum; sum += c; }
        for (i = 0; i < n; i++) tmp[cnt[(a[i] >> shift) & 2047]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

static double ikp__pct(const uint64_t *sorted, size_t n, unsigned pct)
{
    size_t idx = (size_t)(((uint64_t)pct * n + 99) / 100);
    return (double)sorted[idx ? idx - 1 : 0] / 1000.0;
}

/* fills es from n sorted durations (ps) */
static void ikp__event_stats_fill(ikp_event_stats *es, const uint64_t *v, size_t n)
{
    uint64_t lo = 0, hi = 0; /* the total in 128 bits: sums of 2^62 ps never wrap */
    size_t k;
    es->count = n;
    for (k = 0; k < n; k++) {
        lo += v[k];
        hi += lo < v[k];
    }
    es->total_ns = ((double)hi * 18446744073709551616.0 + (double)lo) / 1000.0;
    es->min_ns = n ? (double)v[0] / 1000.0 : 0;
    es->max_ns = n ? (double)v[n - 1] / 1000.0 : 0;
    es->mean_ns = n ? es->total_ns / (double)n : 0;
    /* the rounding of a double may step outside [min, max]; the true mean cannot */
    if (es->mean_ns < es->min_ns) es->mean_ns = es->min_ns;
    if (es->mean_ns > es->max_ns) es->mean_ns = es->max_ns;
    es->p50_ns = n ? ikp__pct(v, n, 50) : 0;
    es->p90_ns = n ? ikp__pct(v, n, 90) : 0;
    es->p99_ns = n ? ikp__pct(v, n, 99) : 0;
}

IKP_DEF void ikp_stats_free(ikp_stats *st)
{
    ikp_allocator a;
    if (!st) return;
    a = st->allocator_;
    ikp__free(&a, st->events);
    ikp__free(&a, st->groups);
    ikp__free(&a, st->names_);
    ikp__free(&a, st);
}

/* What ikp_stats_compute gathers from the lanes before it builds its tables. */
typedef struct ikp__stats_acc {
    ikp__durs *durs;          /* region durations (ps) by event id */
    double *gbusy, *gspan;    /* by group: busy time and lane spans, summed (ns) */
    uint32_t *glanes;         /* by group: lanes with records */
    uint32_t ng;
} ikp__stats_acc;

/* Decodes every lane once: region durations by event, busy time and span
   by group (the spans of the lanes' blocks), and the capture's counts of
   regions and markers. */
typedef struct ikp__lane_span { uint32_t block, group; int64_t first, last; } ikp__lane_span;
static int ikp__cmp_lane_span(const void *pa, const void *pb)
{
    const ikp__lane_span *x = (const ikp__lane_span *)pa, *y = (const ikp__lane_span *)pb;
    return x->block < y->block ? -1 : x->block > y->block;
}
static ikp_result ikp__stats_gather(const ikp_capture *cap, ikp_stats *st, ikp__stats_acc *acc, ikp_error *err)
{
    const ikp_allocator *a = &cap->alloc;
    ikp__lane_span *seen = NULL; /* each lane with records: its block and span, for its block's */
    size_t nseen = 0, room = 0, k0, k1, j;
    ikp_lane_events ev;
    ikp_result r = IKP_OK;
    uint32_t i;
    memset(&ev, 0, sizeof ev);
    for (i = 0; i < cap->info.num_lanes && r == IKP_OK; i++) {
        ikp__lane lt;
        const ikp__lane *l = ikp__get_lane(cap, i, &lt);
        size_t k;
        if (!(l->pub.flags & IKP_LANE_STARTED) || (cap->lanes && l->pub.records == 0)) continue;
        if ((r = ikp__decode(cap, l, &ev, err)) != IKP_OK) break;
        st->regions += ev.regions;
        st->instants += ev.instants;
        st->unmatched_begin += ev.unmatched_begin;
        st->unmatched_end += ev.unmatched_end;
        for (k = 0; k < ev.count; k++) {
            const ikp_event *e = &ev.events[k];
            ikp__durs *d = &acc->durs[e->id];
            if (e->kind != IKP_EVENT_REGION) continue;
            if (!ikp__grow(a, (void **)&d->v, &d->cap, d->n + 1, sizeof(uint64_t))) { r = ikp__oom(err); break; }
            d->v[d->n++] = (uint64_t)(e->end_ps - e->start_ps);
        }
        if (l->pub.group < acc->ng && ev.first_ps != INT64_MIN) {
            acc->gbusy[l->pub.group] += (double)ev.busy_ps / 1000.0;
            acc->glanes[l->pub.group]++;
            if (!ikp__grow(a, (void **)&seen, &room, nseen + 1, sizeof *seen)) { r = ikp__oom(err); break; }
            seen[nseen].block = l->pub.block;
            seen[nseen].group = l->pub.group;
            seen[nseen].first = ev.first_ps;
            seen[nseen++].last = ev.last_ps;
        }
    }
    if (r == IKP_OK && nseen) { /* each block's span: its lanes' first record to their last */
        qsort(seen, nseen, sizeof *seen, ikp__cmp_lane_span);
        for (k0 = 0; k0 < nseen; k0 = k1) {
            int64_t lo = seen[k0].first, hi = seen[k0].last;
            for (k1 = k0 + 1; k1 < nseen && seen[k1].block == seen[k0].block; k1++) {
                if (seen[k1].first < lo) lo = seen[k1].first;
                if (seen[k1].last > hi) hi = seen[k1].last;
            }
            for (j = k0; j < k1; j++) acc->gspan[seen[j].group] += (double)(hi - lo) / 1000.0;
        }
    }
    ikp__free(a, seen);
    ikp_lane_events_free(cap, &ev);
    return r;
}

/* Copies name into st's name block at *pos; returns the copy. */
static const char *ikp__stats_name(ikp_stats *st, size_t *pos, const char *name)
{
    size_t len = strlen(name) + 1;
    char *p = st->names_ + *pos;
    memcpy(p, name, len);
    *pos += len;
    return p;
}

/* The tables: an entry per event with regions (its durations sorted for
   the percentiles) and per group with lanes, their names in one block. */
static ikp_result ikp__stats_tables(const ikp_capture *cap, ikp_stats *st, ikp__stats_acc *acc, ikp_error *err)
{
    const ikp_allocator *a = &cap->alloc;
    uint32_t i, id, nev = 0, ngs = 0;
    size_t maxn = 0, names_len = 0, pos = 0;
    uint64_t *tmp;
    char t[40];
    for (id = 0; id < IKP_WIRE_MAX_EVENTS; id++)
        if (acc->durs[id].n) {
            nev++;
            if (acc->durs[id].n > maxn) maxn = acc->durs[id].n;
            names_len += strlen(ikp__ev_name(cap, id, t, sizeof t)) + 1;
        }
    for (i = 0; i < acc->ng; i++)
        if (acc->glanes[i]) { ngs++; names_len += strlen(ikp__gr_name(cap, i, t, sizeof t)) + 1; }
    st->events = (ikp_event_stats *)ikp__alloc(a, nev * sizeof(ikp_event_stats));
    st->groups = (ikp_group_stats *)ikp__alloc(a, ngs * sizeof(ikp_group_stats));
    st->names_ = (char *)ikp__alloc(a, names_len);
    tmp = (uint64_t *)ikp__alloc(a, maxn * sizeof(uint64_t));
    if (!st->events || !st->groups || !st->names_ || !tmp) { ikp__free(a, tmp); return ikp__oom(err); }
    for (id = 0; id < IKP_WIRE_MAX_EVENTS; id++) {
        ikp__durs *d = &acc->durs[id];
        ikp_event_stats *es;
        if (!d->n) continue;
        es = &st->events[st->num_events++];
        es->name = ikp__stats_name(st, &pos, ikp__ev_name(cap, id, t, sizeof t));
        es->id = id;
        ikp__radix_sort(d->v, tmp, d->n);
        ikp__event_stats_fill(es, d->v, d->n);
    }
    for (i = 0; i < acc->ng; i++) {
        ikp_group_stats *gs;
        if (!acc->glanes[i]) continue;
        gs = &st->groups[st->num_groups++];
        gs->name = ikp__stats_name(st, &pos, ikp__gr_name(cap, i, t, sizeof t));
        gs->group = i;
        gs->lanes = acc->glanes[i];
        gs->busy_ns = acc->gbusy[i];
        gs->span_ns = acc->gspan[i];
        gs->busy_fraction = acc->gspan[i] > 0 ? acc->gbusy[i] / acc->gspan[i] : 0;
    }
    ikp__free(a, tmp);
    return IKP_OK;
}

IKP_DEF ikp_result ikp_stats_compute(const ikp_capture *cap, ikp_stats **out, ikp_error *err)
{
    const ikp_allocator *a;
    ikp_stats *st;
    ikp__stats_acc acc;
    ikp_result r;
    uint32_t id;
    if (!cap || !out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    *out = NULL;
    a = &cap->alloc;
    st = (ikp_stats *)ikp__alloc(a, sizeof *st);
    if (!st) return ikp__oom(err);
    memset(st, 0, sizeof *st);
    st->allocator_ = cap->alloc;
    st->info = cap->info;
    memset(&acc, 0, sizeof acc);
    acc.ng = cap->info.num_groups ? cap->info.num_groups : 1;
    acc.durs = (ikp__durs *)ikp__alloc(a, IKP_WIRE_MAX_EVENTS * sizeof(ikp__durs));
    if (acc.durs) memset(acc.durs, 0, IKP_WIRE_MAX_EVENTS * sizeof(ikp__durs)); /* freed whatever fails next */
    acc.gbusy = (double *)ikp__alloc(a, acc.ng * sizeof(double));
    acc.gspan = (double *)ikp__alloc(a, acc.ng * sizeof(double));
    acc.glanes = (uint32_t *)ikp__alloc(a, acc.ng * sizeof(uint32_t));
    if (!acc.durs || !acc.gbusy || !acc.gspan || !acc.glanes) r = ikp__oom(err);
    else {
        for (id = 0; id < acc.ng; id++) { acc.gbusy[id] = acc.gspan[id] = 0; acc.glanes[id] = 0; }
        r = ikp__stats_gather(cap, st, &acc, err);
        if (r == IKP_OK) r = ikp__stats_tables(cap, st, &acc, err);
    }
    for (id = 0; acc.durs && id < IKP_WIRE_MAX_EVENTS; id++) ikp__free(a, acc.durs[id].v);
    ikp__free(a, acc.durs);
    ikp__free(a, acc.gbusy);
    ikp__free(a, acc.gspan);
    ikp__free(a, acc.glanes);
    if (r != IKP_OK) { ikp_stats_free(st); return r; }
    *out = st;
    ikp__ok(err);
    return IKP_OK;
}

/* >>stats-write: statistics and figures as text and JSON */
/* a name in a text table: at most 40 characters, control bytes and bytes
   that are not UTF-8 as '?', padded to w */
static void ikp__put_text_name(ikp__out *o, const char *str, size_t w)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strlen(str), i = 0, n = 0;
    for (; i < len && n < 40; n++) {
        size_t k = s[i] >= 0x20 && s[i] != 0x7f ? ikp__utf8_len(s + i, len - i) : 0;
        if (k) ikp__put(o, str + i, k);
        else ikp__put(o, "?", 1);
        i += k ? k : 1;
    }
    for (; n < w; n++) ikp__put(o, " ", 1);
}
static void ikp__put_col(ikp__out *o, double v)
{
    ikp__put_f_w(o, v, 1, 13);
}

/* ikp_info_write_text's pieces (ikp__info_*), in the order of the text:
   the format, the grid, lanes and records, the span */
static void ikp__info_head(ikp__out *o, const ikp_stats *st)
{
    const ikp_capture_info *in = &st->info;
    char t[512], unit[48];
    if (in->timer_unit_ps && in->timer_unit_ps != 1000)
        snprintf(unit, sizeof unit, "ticks of %u ps", in->timer_unit_ps);
    else if (in->format == IKP_FORMAT_PROTON) snprintf(unit, sizeof unit, "SM cycles, read as ns: see placement");
    else if (in->format == IKP_FORMAT_IKET) snprintf(unit, sizeof unit, "IKET's trace-local ns (32 ns ticks)");
    else snprintf(unit, sizeof unit, "%s", in->timer_cycles ? "SM cycles" : "globaltimer ns");
    if (ikp__is_nuggets(in->format)) {
        char inferred[256] = "";
        if (in->units_inferred)
            snprintf(inferred, sizeof inferred, " (inferred from the data; pass %s if wrong)",
                     IKP__OPT(&in->option_names, num_units));
        snprintf(t, sizeof t,
                 "format      %s (timer: %s)\n"
                 "units       %u of %u words each%s",
                 ikp_format_name(in->format), unit, in->num_blocks, in->unit_words, inferred);
    } else
        snprintf(t, sizeof t,
                 "format      %s (timer: %s)\n"
                 "grid        %u blocks x %u groups",
                 ikp_format_name(in->format), unit, in->num_blocks, in->num_groups);
    ikp__puts(o, t);
    if (in->grid[0]) {
        snprintf(t, sizeof t, " (grid %u x %u x %u)", in->grid[0], in->grid[1], in->grid[2]);
        ikp__puts(o, t);
    }
    if (in->launch) {
        snprintf(t, sizeof t, "\nlaunch      %llu (counted by its buffer's resets)", (unsigned long long)in->launch);
        ikp__puts(o, t);
    }
    snprintf(t, sizeof t,
             "\nlanes       %u in buffer, %u active\n"
             "records     %llu (regions %llu, instants %llu)\n",
             in->num_lanes, in->active_lanes, (unsigned long long)in->records,
             (unsigned long long)st->regions, (unsigned long long)st->instants);
    ikp__puts(o, t);
    if (in->drops_known) snprintf(t, sizeof t, "dropped     %llu\n", (unsigned long long)in->dropped);
    else snprintf(t, sizeof t, "dropped     n/a (%s buffers do not count dropped records)\n", ikp_format_name(in->format));
    ikp__puts(o, t);
    snprintf(t, sizeof t, "unmatched   %llu begins, %llu ends\nspan        ",
             (unsigned long long)st->unmatched_begin, (unsigned long long)st->unmatched_end);
    ikp__puts(o, t);
    ikp__put_f(o, (double)in->span_ps / 1e6, 3);
    ikp__puts(o, " us\n");
}

/* anchors, how well the lanes line up, and the host time */
static void ikp__info_time(ikp__out *o, const ikp_capture_info *in)
{
    char t[512], pl[640];
    int poor;
    if (in->anchors) {
        snprintf(t, sizeof t, "anchors     %llu of the records\n", (unsigned long long)in->anchors);
        ikp__puts(o, t);
    }
    ikp_capture_placement(in, pl, sizeof pl, &poor);
    ikp__puts(o, poor ? "warning     placement: " : "placement   ");
    ikp__puts(o, pl);
    ikp__puts(o, "\n");
    if (in->host_time_known) {
        snprintf(t, sizeof t, "host time   time 0 = CLOCK_REALTIME %lld ns +- %u ns (%u readings of the GPU clock; "
                 "GPU %llu.%03u ns)\n", (long long)in->host_zero_ns, in->host_zero_uncertainty_ns, in->clock_syncs,
                 (unsigned long long)in->gpu_zero_ns, in->gpu_zero_ps);
        ikp__puts(o, t);
    } else if (in->clock_syncs) {
        snprintf(t, sizeof t, "host time   %u readings of the GPU clock, but the %s format does not give the GPU's time\n",
                 in->clock_syncs, ikp_format_name(in->format));
        ikp__puts(o, t);
    } else
        ikp__puts(o, "host time   not known: the capture holds no reading of the GPU clock against the host's "
                     "(ikp_cuda_dump takes them); host time and merges by clock need one\n");
}

/* how auto-detection chose the format: the records each peer format fits,
   and whether the choice is sure */
static void ikp__info_detected(ikp__out *o, const ikp_capture_info *in)
{
    char t[512];
    ikp_format f = in->format, g;
    int unanimous = in->detect_fit[f] == in->detect_records;
    snprintf(t, sizeof t, "detected    %s: %llu of %llu records fit it", ikp_format_name(f),
             (unsigned long long)in->detect_fit[f], (unsigned long long)in->detect_records);
    ikp__puts(o, t);
    for (g = IKP_FORMAT_AUTO; g < IKP_FORMAT_COUNT; g = (ikp_format)(g + 1))
        if (g != f && (ikp__formats[f].flags & ikp__formats[g].flags & IKP__FMT_PEER)) { /* the vote's others */
            snprintf(t, sizeof t, ", %llu fit %s", (unsigned long long)in->detect_fit[g], ikp_format_name(g));
            ikp__puts(o, t);
        }
    if (in->detect_tie || !unanimous) {
        snprintf(t, sizeof t, in->detect_tie ? " (another format fits as well: the choice is a guess; pass %s)\n"
                                             : " (not unanimous: pass %s to choose)\n",
                 IKP__OPT(&in->option_names, format));
        ikp__puts(o, t);
    } else
        ikp__puts(o, "\n");
}

/* a line for each kind of damage the decode found */
static void ikp__info_warnings(ikp__out *o, const ikp_capture_info *in)
{
    char t[512], kept[256];
    if (in->after_finalize_kept) snprintf(kept, sizeof kept, "kept, as asked");
    else snprintf(kept, sizeof kept, "left out; %s keeps them", IKP__OPT(&in->option_names, keep_after_finalize));
#define IKP__WARN(cond, ...) if (cond) { snprintf(t, sizeof t, __VA_ARGS__); ikp__puts(o, t); }
    IKP__WARN(in->invalid, "warning     %llu records could not be decoded (skipped)\n", (unsigned long long)in->invalid)
    IKP__WARN(in->may_wrap, "warning     %llu regions may be longer than shown: compact records keep durations modulo 2^24 ticks (16.78 ms) and their units ran that long after them (marked may_wrap in the trace)\n", (unsigned long long)in->may_wrap)
    IKP__WARN(in->backwards, "warning     %llu records stamped earlier than the one before them\n", (unsigned long long)in->backwards)
    IKP__WARN(in->past_count, "warning     %llu records in slots past their unit's count (stale records of an earlier launch? left out)\n", (unsigned long long)in->past_count)
    IKP__WARN(in->unfinalized_lanes, "warning     %llu lanes opened but never finalized (kernel stopped early?)\n", (unsigned long long)in->unfinalized_lanes)
    IKP__WARN(in->corrupt_lanes, "warning     %llu lanes with unreadable headers or counts (skipped or clamped)\n", (unsigned long long)in->corrupt_lanes)
    IKP__WARN(in->refused_lanes, "warning     buffer too small for the grid: %llu lanes not recorded (%llu needed, %u in buffer)\n", (unsigned long long)in->refused_lanes, (unsigned long long)in->lanes_needed, in->num_lanes)
    if (in->claimed_twice) {
        char stale[512];
        ikp_capture_stale(in, stale, sizeof stale);
        ikp__puts(o, "warning     ");
        ikp__puts(o, stale);
        ikp__puts(o, "\n");
    }
    IKP__WARN(in->out_of_range, "warning     %llu records name a lane past the header's (skipped)\n", (unsigned long long)in->out_of_range)
    IKP__WARN(in->after_finalize, "warning     %llu records after their lane's finalize record (stale records of an earlier launch? %s)\n", (unsigned long long)in->after_finalize, kept)
    IKP__WARN(in->duplicate_lanes, "warning     %llu lanes claim a (block, group) an earlier lane claims (corrupt headers?): shown on tracks of their own\n", (unsigned long long)in->duplicate_lanes)
    IKP__WARN(in->bad_sm_lanes, "warning     %llu lanes name an SM past 65,535 in their header (corrupt headers?): their SM taken as unknown\n", (unsigned long long)in->bad_sm_lanes)
#undef IKP__WARN
}

static void ikp__put_info_text(ikp__out *o, const ikp_stats *st)
{
    ikp__info_head(o, st);
    ikp__info_time(o, &st->info);
    if (st->info.detect_records) ikp__info_detected(o, &st->info);
    ikp__info_warnings(o, &st->info);
}

IKP_DEF ikp_result ikp_info_write_text(const ikp_stats *st, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__out o;
    char buf[1024];
    if (!st || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    ikp__put_info_text(&o, st);
    return ikp__out_end(&o, err, "information");
}

IKP_DEF ikp_result ikp_stats_write_text(const ikp_stats *st, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__out o;
    char buf[4096], t[160];
    uint32_t i;
    size_t w = 5;
    if (!st || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    ikp__put_info_text(&o, st);
    for (i = 0; i < st->num_events; i++) {
        size_t n = strlen(st->events[i].name);
        if (n > w) w = n > 40 ? 40 : n;
    }
    ikp__puts(&o, "\n");
    ikp__put_text_name(&o, "event", w);
    ikp__puts(&o, "        count     total_ns       min_ns      mean_ns       p50_ns       p90_ns       p99_ns       max_ns\n");
    for (i = 0; i < st->num_events; i++) {
        const ikp_event_stats *e = &st->events[i];
        ikp__put_text_name(&o, e->name, w);
        snprintf(t, sizeof t, " %12llu", (unsigned long long)e->count);
        ikp__puts(&o, t);
        ikp__put_col(&o, e->total_ns); ikp__put_col(&o, e->min_ns); ikp__put_col(&o, e->mean_ns);
        ikp__put_col(&o, e->p50_ns); ikp__put_col(&o, e->p90_ns); ikp__put_col(&o, e->p99_ns);
        ikp__put_col(&o, e->max_ns);
        ikp__puts(&o, "\n");
    }
    if (st->num_groups) {
        ikp__puts(&o, "\n");
        ikp__put_text_name(&o, "group", w);
        ikp__puts(&o, "        lanes      busy_ns      span_ns   busy\n");
        for (i = 0; i < st->num_groups; i++) {
            const ikp_group_stats *g = &st->groups[i];
            ikp__put_text_name(&o, g->name, w);
            snprintf(t, sizeof t, " %12u", g->lanes);
            ikp__puts(&o, t);
            ikp__put_col(&o, g->busy_ns); ikp__put_col(&o, g->span_ns);
            ikp__put_f_w(&o, g->busy_fraction * 100.0, 1, 6);
            ikp__puts(&o, "%\n");
        }
    }
    return ikp__out_end(&o, err, "summary");
}

static void ikp__put_kv_u(ikp__out *o, const char *k, uint64_t v)
{
    ikp__puts(o, ",\""); ikp__puts(o, k); ikp__puts(o, "\":"); ikp__put_u64(o, v);
}
/* JSON: "key": a string (NULL: null), after a comma unless first */
static void ikp__put_kv_s(ikp__out *o, const char *k, const char *v, int first)
{
    ikp__puts(o, first ? "\"" : ",\"");
    ikp__puts(o, k);
    ikp__puts(o, "\":");
    if (!v) { ikp__puts(o, "null"); return; }
    ikp__puts(o, "\"");
    ikp__put_json_chars(o, v);
    ikp__puts(o, "\"");
}
/* JSON: ,"key": a number, or null where it is not known */
static void ikp__put_kv_un(ikp__out *o, const char *k, uint64_t v, int known)
{
    if (known) ikp__put_kv_u(o, k, v);
    else ikp__put_kv_s(o, k, NULL, 0);
}
static void ikp__put_kv_f(ikp__out *o, const char *k, double v)
{
    ikp__puts(o, ",\""); ikp__puts(o, k); ikp__puts(o, "\":"); ikp__put_f(o, v, 3);
}

IKP_DEF ikp_result ikp_stats_write_json(const ikp_stats *st, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__out o;
    char buf[4096];
    const ikp_capture_info *in;
    uint32_t i;
    if (!st || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    in = &st->info;
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    ikp__puts(&o, "{\"format\":\"");
    ikp__puts(&o, ikp_format_name(in->format));
    ikp__puts(&o, "\",\"timer\":\"");
    ikp__puts(&o, in->format == IKP_FORMAT_PROTON ? "cycles" : in->format == IKP_FORMAT_IKET ? "ns"
                  : in->timer_cycles ? "cycles" : "globaltimer");
    ikp__puts(&o, "\"");
    if (in->source[0]) ikp__put_kv_s(&o, "source", in->source, 0);
    ikp__put_kv_u(&o, "blocks", in->num_blocks);
    ikp__put_kv_u(&o, "num_groups", in->num_groups);
    ikp__put_kv_u(&o, "lanes", in->num_lanes);
    ikp__put_kv_u(&o, "active_lanes", in->active_lanes);
    ikp__put_kv_u(&o, "records", in->records);
    ikp__put_kv_u(&o, "regions", st->regions);
    ikp__put_kv_u(&o, "instants", st->instants);
    ikp__put_kv_un(&o, "dropped", in->dropped, in->drops_known);
    ikp__put_kv_u(&o, "unmatched_begin", st->unmatched_begin);
    ikp__put_kv_u(&o, "unmatched_end", st->unmatched_end);
    ikp__put_kv_u(&o, "invalid", in->invalid);
    ikp__put_kv_u(&o, "backwards", in->backwards);
    ikp__put_kv_u(&o, "unfinalized_lanes", in->unfinalized_lanes);
    ikp__put_kv_u(&o, "corrupt_lanes", in->corrupt_lanes);
    ikp__put_kv_u(&o, "refused_lanes", in->refused_lanes);
    ikp__put_kv_u(&o, "claimed_twice", in->claimed_twice);
    ikp__put_kv_un(&o, "launch", in->launch, in->launch != 0);
    {
        char stale[512];
        ikp__put_kv_s(&o, "stale", ikp_capture_stale(in, stale, sizeof stale) ? stale : NULL, 0);
    }
    ikp__put_kv_u(&o, "out_of_range", in->out_of_range);
    ikp__put_kv_u(&o, "after_finalize", in->after_finalize);
    ikp__put_kv_u(&o, "past_count", in->past_count);
    ikp__put_kv_u(&o, "duplicate_lanes", in->duplicate_lanes);
    ikp__put_kv_u(&o, "bad_sm_lanes", in->bad_sm_lanes);
    ikp__put_kv_f(&o, "span_ns", (double)in->span_ps / 1000.0);
    ikp__puts(&o, ",\"events\":[");
    for (i = 0; i < st->num_events; i++) {
        const ikp_event_stats *e = &st->events[i];
        ikp__puts(&o, i ? ",\n{\"name\":\"" : "\n{\"name\":\"");
        ikp__put_json_chars(&o, e->name);
        ikp__puts(&o, "\"");
        ikp__put_kv_u(&o, "id", e->id);
        ikp__put_kv_u(&o, "count", e->count);
        ikp__put_kv_f(&o, "total_ns", e->total_ns);
        ikp__put_kv_f(&o, "min_ns", e->min_ns);
        ikp__put_kv_f(&o, "mean_ns", e->mean_ns);
        ikp__put_kv_f(&o, "p50_ns", e->p50_ns);
        ikp__put_kv_f(&o, "p90_ns", e->p90_ns);
        ikp__put_kv_f(&o, "p99_ns", e->p99_ns);
        ikp__put_kv_f(&o, "max_ns", e->max_ns);
        ikp__puts(&o, "}");
    }
    ikp__puts(&o, "],\"groups\":[");
    for (i = 0; i < st->num_groups; i++) {
        const ikp_group_stats *g = &st->groups[i];
        ikp__puts(&o, i ? ",\n{\"name\":\"" : "\n{\"name\":\"");
        ikp__put_json_chars(&o, g->name);
        ikp__puts(&o, "\"");
        ikp__put_kv_u(&o, "group", g->group);
        ikp__put_kv_u(&o, "lanes", g->lanes);
        ikp__put_kv_f(&o, "busy_ns", g->busy_ns);
        ikp__put_kv_f(&o, "span_ns", g->span_ns);
        ikp__puts(&o, ",\"busy_fraction\":");
        ikp__put_f(&o, g->busy_fraction, 6);
        ikp__puts(&o, "}");
    }
    ikp__puts(&o, "]}\n");
    return ikp__out_end(&o, err, "statistics");
}

/* >>trace-names: names of events, blocks, processes, threads */
typedef struct ikp__namecache {
    uint32_t off[IKP_WIRE_MAX_EVENTS + 1]; /* escaped name of id: pool[off..off+len) */
    uint32_t len[IKP_WIRE_MAX_EVENTS + 1];
    uint8_t have[IKP_WIRE_MAX_EVENTS + 1];
    char *pool;
    size_t n, cap;
} ikp__namecache;

typedef struct ikp__pool_ctx {
    const ikp_allocator *a;
    ikp__namecache *nc;
    int failed;
} ikp__pool_ctx;

static int ikp__append_pool(void *user, const void *data, size_t size)
{
    ikp__pool_ctx *p = (ikp__pool_ctx *)user;
    if (!ikp__grow(p->a, (void **)&p->nc->pool, &p->nc->cap, p->nc->n + size, 1)) { p->failed = 1; return 1; }
    memcpy(p->nc->pool + p->nc->n, data, size);
    p->nc->n += size;
    return 0;
}

/* escaped name of event id, cached */
static int ikp__cached_name(const ikp_capture *cap, ikp__namecache *nc, uint32_t id,
                            const char **s, size_t *len)
{
    if (!nc->have[id]) {
        char tmp[32], ob[256];
        ikp__pool_ctx pc;
        ikp__out o;
        size_t start = nc->n;
        pc.a = &cap->alloc; pc.nc = nc; pc.failed = 0;
        o.fn = ikp__append_pool; o.user = &pc; o.buf = ob; o.n = 0; o.cap = sizeof ob; o.failed = 0;
        ikp__put_json_chars(&o, ikp__ev_name(cap, id, tmp, sizeof tmp));
        ikp__flush(&o);
        if (pc.failed || o.failed) return 0;
        nc->off[id] = (uint32_t)start;
        nc->len[id] = (uint32_t)(nc->n - start);
        nc->have[id] = 1;
    }
    *s = nc->pool + nc->off[id];
    *len = nc->len[id];
    return 1;
}

/* "block 3", "block 3 (1,2,0)" for 2D/3D grids, "unit 3" (nuggets) */
static const char *ikp__block_name(char *t, size_t n, const ikp_capture *cap, const ikp__lane *l)
{
    if (ikp__is_nuggets(cap->format)) snprintf(t, n, "unit %u", l->pub.block);
    else if (l->grid[1] > 1 || l->grid[2] > 1) {
        uint32_t gx = l->grid[0] ? l->grid[0] : 1, gy = l->grid[1] ? l->grid[1] : 1;
        snprintf(t, n, "block %u (%u,%u,%u)", l->pub.block, l->pub.block % gx, (l->pub.block / gx) % gy,
                 l->pub.block / gx / gy);
    } else snprintf(t, n, "block %u", l->pub.block);
    return t;
}

static const char *ikp__process_name(char *t, size_t n, const ikp_capture *cap, const ikp__lane *l, ikp_group_by by)
{
    if (by == IKP_BY_SM) snprintf(t, n, "SM %u", l->pub.sm);
    else ikp__block_name(t, n, cap, l);
    return t;
}

/* a lane's track: its group (by SM: block and group), " [t]" for extra
   tracks, and which lane it duplicates */
static const char *ikp__thread_name(char *t, size_t n, const ikp_capture *cap, const ikp__lane *l, uint32_t lane,
                                    ikp_group_by by, uint32_t track)
{
    char g[32];
    size_t k = 0;
    t[0] = 0;
    if (by == IKP_BY_SM) { ikp__block_name(t, n, cap, l); k = strlen(t); }
    snprintf(t + k, n - k, "%s%s", k ? " " : "", ikp__gr_name(cap, l->pub.group, g, sizeof g));
    k = strlen(t);
    if (track) { snprintf(t + k, n - k, " [%u]", track); k = strlen(t); }
    if (l->pub.flags & IKP_LANE_DUPLICATE)
        snprintf(t + k, n - k, " (lane %u, a duplicate of lane %u)", lane, l->pub.duplicate_of);
    return t;
}

/* checks shared by the writers; by SM: the table of SMs seen */
static ikp_result ikp__trace_begin(const ikp_capture *cap, ikp_group_by by, uint8_t **sm_seen, ikp_error *err)
{
    uint32_t i;
    *sm_seen = NULL;
    if (by != IKP_BY_SM) return IKP_OK;
    for (i = 0; i < cap->info.num_lanes; i++) {
        ikp__lane lt;
        const ikp__lane *l = ikp__get_lane(cap, i, &lt);
        if ((l->pub.flags & IKP_LANE_STARTED) && (!cap->lanes || l->pub.records) && l->pub.sm == IKP_NO_SM)
            return cap->format == IKP_FORMAT_IKP
                   ? ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, (int64_t)i, "grouping by SM: the lane's header "
                               "names no SM%s", cap->info.bad_sm_lanes ? " (one past 65,535: a damaged header)" : "")
                   : ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, (int64_t)i, "grouping by SM: the %s format "
                               "does not record SM ids", ikp_format_name(cap->format));
    }
    *sm_seen = (uint8_t *)ikp__alloc(&cap->alloc, 65536 / 8);
    if (!*sm_seen) return ikp__oom(err);
    memset(*sm_seen, 0, 65536 / 8);
    return IKP_OK;
}

/* >>trace-walk: the walk over lanes by block: flows, counters */
/* The writers visit lanes in order, one block at a time when flows or
   counters need a block's lanes together (else one lane at a time: the
   memory of one lane's events). */
static int64_t ikp__ns(int64_t ps) { return ps < 0 ? 0 : (ps + 500) / 1000; }

typedef struct ikp__fend {     /* one end of a flow, on event idx of a slot */
    uint32_t slot, idx;
    uint64_t id;
    int64_t src_ns;            /* the `from` event's start */
    int64_t dst_json_ns;       /* where the JSON binds the `to` end: its end, or its
                                  start when regions nest inside it on its track */
    int64_t dst_pb_ns;         /* where the protobuf binds it: the `to` event's end */
    int out;                   /* 1: the `from` end */
} ikp__fend;

typedef struct ikp__step { int64_t ns; int32_t d; } ikp__step; /* a counter step, then a level */

typedef struct ikp__tw {
    const ikp_capture *cap;
    ikp_trace_stats st;
    const ikp_flow_pair *flows;
    uint32_t num_flows;
    uint32_t *order, norder, pos; /* the lanes to write: order[pos] by (block, lane) when
                                     grouped, else pos itself */
    int grouped;
    ikp_lane_events *ev;          /* the current block: one slot per lane with events */
    uint32_t *lane, n, ncap;
    void *scratch;                /* the decoder's scratch, one for all slots */
    ikp__fend *fe;                /* its flow ends, by (slot, idx) */
    size_t nfe, fecap, *fe_at;    /* slot s: fe[fe_at[s] .. fe_at[s + 1]) */
    size_t fe_atcap;
    uint64_t next_flow;
    uint64_t *ka, *ks, *kb;       /* scratch of the matching: the block's `from` keys by slot
                                     in start order (slot s: ka[fa_at[s] .. fa_at[s + 1])), the
                                     same sorted by payload, one slot's `to` keys */
    size_t kacap, kscap, kbcap, *fa_at, fa_atcap;
    struct ikp__fkey *fk;         /* the block's `from` events by (payload, start) */
    size_t fkcap, fpaycap;
    uint8_t *fpay;                /* per slot: its `from` events all carry a payload */
    uint8_t *mark;                /* per event of the block: paired */
    size_t *mark_at, markcap, mark_atcap;
    ikp__step *cs;                /* counter steps */
    size_t ncs, cscap;
} ikp__tw;

static ikp_result ikp__tw_order(ikp__tw *w, ikp_error *err);
/* the checks of ikp_trace_options shared by every writer */
static ikp_result ikp__check_trace_options(const ikp_trace_options *opt, ikp_error *err)
{
    uint32_t k;
    if (!opt) return IKP_OK;
    if ((opt->num_flows && !opt->flows) || (opt->num_counters && !opt->counters))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL flows or counters with a non-zero count");
    for (k = 0; k < opt->num_flows; k++)
        if (opt->flows[k].from >= IKP_WIRE_MAX_EVENTS || opt->flows[k].to >= IKP_WIRE_MAX_EVENTS ||
            opt->flows[k].from == opt->flows[k].to)
            return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "flow %u: event ids %u -> %u must differ and be below %u",
                             k, opt->flows[k].from, opt->flows[k].to, IKP_WIRE_MAX_EVENTS);
    for (k = 0; k < opt->num_counters; k++)
        if (opt->counters[k] >= IKP_WIRE_MAX_EVENTS)
            return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "counter %u: event id %u is not below %u", k,
                             opt->counters[k], IKP_WIRE_MAX_EVENTS);
    if (opt->pid_base > ((uint64_t)1 << 30))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "pid_base %llu is past 2^30",
                         (unsigned long long)opt->pid_base);
    if (opt->time_note && strlen(opt->time_note) > IKP_MAX_NAME_BYTES)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "time_note of %llu bytes, at most %u",
                         (unsigned long long)strlen(opt->time_note), IKP_MAX_NAME_BYTES);
    return IKP_OK;
}

/* 1 if base + a + b stays at most 2^63 - 1 (trace timestamps are int64 ns) */
static int ikp__base_fits(uint64_t base, uint64_t a, uint64_t b)
{
    const uint64_t top = (uint64_t)INT64_MAX;
    return a <= top && b <= top - a && base <= top - a - b;
}

static ikp_result ikp__tw_init(ikp__tw *w, const ikp_capture *cap, const ikp_trace_options *opt, ikp_error *err)
{
    ikp_result r;
    memset(w, 0, sizeof *w);
    w->cap = cap;
    w->next_flow = 1;
    if ((r = ikp__check_trace_options(opt, err)) != IKP_OK) return r;
    if (opt && !ikp__base_fits(opt->time_base_ns, 0, (uint64_t)ikp__ns(cap->info.span_ps)))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1,
                         "time_base_ns %llu plus the capture's span (%llu ns) passes 2^63 - 1 ns, where "
                         "trace timestamps end", (unsigned long long)opt->time_base_ns,
                         (unsigned long long)ikp__ns(cap->info.span_ps));
    if (opt) {
        w->flows = opt->flows;
        w->num_flows = opt->num_flows;
        w->grouped = opt->num_flows || opt->num_counters;
    }
    return ikp__tw_order(w, err);
}

/* the lanes' order: (block, lane) keys, sorted, when grouped; else lane
   order, nothing stored */
static ikp_result ikp__tw_order(ikp__tw *w, ikp_error *err)
{
    const ikp_capture *cap = w->cap;
    uint32_t i;
    w->norder = cap->info.num_lanes;
    if (w->grouped) {
        uint64_t *key = (uint64_t *)ikp__alloc(&cap->alloc, (size_t)w->norder * sizeof(uint64_t));
        w->order = (uint32_t *)ikp__alloc(&cap->alloc, (size_t)w->norder * sizeof(uint32_t));
        if (!key || !w->order) {
            ikp__free(&cap->alloc, key); ikp__free(&cap->alloc, w->order); w->order = NULL;
            return ikp__oom(err);
        }
        for (i = 0; i < w->norder; i++) {
            ikp__lane lt;
            key[i] = (uint64_t)ikp__get_lane(cap, i, &lt)->pub.block << 32 | i;
        }
        qsort(key, w->norder, sizeof *key, ikp__cmp_u64);
        for (i = 0; i < w->norder; i++) w->order[i] = (uint32_t)key[i];
        ikp__free(&cap->alloc, key);
    }
    return IKP_OK;
}

static void ikp__tw_free(ikp__tw *w)
{
    const ikp_allocator *a = &w->cap->alloc;
    uint32_t s;
    for (s = 0; s < w->ncap; s++) ikp_lane_events_free(w->cap, &w->ev[s]);
    ikp__scratch_free(a, w->scratch);
    ikp__free(a, w->ev); ikp__free(a, w->lane); ikp__free(a, w->order); ikp__free(a, w->fe);
    ikp__free(a, w->fe_at); ikp__free(a, w->ka); ikp__free(a, w->ks); ikp__free(a, w->kb); ikp__free(a, w->mark);
    ikp__free(a, w->fa_at); ikp__free(a, w->fk); ikp__free(a, w->fpay);
    ikp__free(a, w->mark_at); ikp__free(a, w->cs);
}

static int ikp__cmp_fend(const void *pa, const void *pb)
{
    const ikp__fend *a = (const ikp__fend *)pa, *b = (const ikp__fend *)pb;
    if (a->slot != b->slot) return a->slot < b->slot ? -1 : 1;
    if (a->idx != b->idx) return a->idx < b->idx ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int ikp__flow_event(const ikp_event *e, uint32_t id)
{
    return e->id == id && (e->kind == IKP_EVENT_REGION || e->kind == IKP_EVENT_INSTANT);
}

/* where the JSON can bind a flow's `to` end on e: its end, unless a region
   or instant starts inside it on its track (the end would bind to that) */
static int64_t ikp__json_dst_ns(const ikp_lane_events *ev, uint32_t idx)
{
    const ikp_event *e = &ev->events[idx];
    int64_t s = ikp__ns(e->start_ps), t = ikp__ns(e->end_ps);
    size_t k, seen = 0;
    for (k = (size_t)idx + 1; k < ev->count && ikp__ns(ev->events[k].start_ps) <= t; k++) {
        if (ev->events[k].track == e->track) return s;
        if (++seen > 64) return s; /* a long scan: the safe binding */
    }
    return t;
}

static ikp_result ikp__tw_link(ikp__tw *w, uint32_t sa, uint32_t a, uint32_t sb, uint32_t b, ikp_error *err)
{
    const ikp_event *ea = &w->ev[sa].events[a], *eb = &w->ev[sb].events[b];
    ikp__fend f;
    if (!ikp__grow(&w->cap->alloc, (void **)&w->fe, &w->fecap, w->nfe + 2, sizeof(ikp__fend))) return ikp__oom(err);
    f.id = w->next_flow++;
    f.src_ns = ikp__ns(ea->start_ps);
    f.dst_json_ns = ikp__json_dst_ns(&w->ev[sb], b);
    f.dst_pb_ns = ikp__ns(eb->end_ps);
    f.slot = sa; f.idx = a; f.out = 1;
    w->fe[w->nfe++] = f;
    f.slot = sb; f.idx = b; f.out = 0;
    w->fe[w->nfe++] = f;
    w->mark[w->mark_at[sa] + a] = 1;
    w->mark[w->mark_at[sb] + b] = 1;
    return IKP_OK;
}

/* the events of slot s that are id, as keys payload << 32 | index in start
   order (*all_payload: every one carries a payload); returns the count */
static int64_t ikp__tw_keys(ikp__tw *w, uint32_t s, uint32_t id, uint64_t *k, int *all_payload)
{
    const ikp_lane_events *ev = &w->ev[s];
    size_t i, n = 0;
    *all_payload = 1;
    for (i = 0; i < ev->count; i++)
        if (ikp__flow_event(&ev->events[i], id)) {
            if (!(ev->events[i].flags & IKP_EVENT_HAS_BEGIN_DATA)) *all_payload = 0;
            k[n++] = (uint64_t)ev->events[i].begin_data << 32 | (uint32_t)i;
        }
    return (int64_t)n;
}

typedef struct ikp__fkey { uint32_t v, slot, idx; int64_t ps; } ikp__fkey;
static int ikp__cmp_fkey(const void *pa, const void *pb)
{
    const ikp__fkey *a = (const ikp__fkey *)pa, *b = (const ikp__fkey *)pb;
    if (a->v != b->v) return a->v < b->v ? -1 : 1;
    if (a->ps != b->ps) return a->ps < b->ps ? -1 : 1;
    if (a->slot != b->slot) return a->slot < b->slot ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* links the `to` events of slot sb (keys kb[0 .. nb), sorted by payload
   when pb) to the `from` events of slot sa: by payload (the k-th `to` with
   payload p to the k-th `from` with p) when both carry one, else by order */
static ikp_result ikp__tw_pair(ikp__tw *w, uint32_t sa, int pa, uint32_t sb, const uint64_t *kb, int64_t nb, int pb,
                               ikp_error *err)
{
    const uint64_t *ka = w->ka + w->fa_at[sa], *ks = w->ks + w->fa_at[sa];
    int64_t na = (int64_t)(w->fa_at[sa + 1] - w->fa_at[sa]), x, y;
    ikp_result r;
    if (pa && pb) {
        for (y = 0; y < nb;) { /* a run of one payload, from its first `from` (found by bisection) */
            uint64_t v = kb[y] >> 32;
            int64_t lo = 0, hi = na;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (ks[mid] >> 32 < v) lo = mid + 1;
                else hi = mid;
            }
            for (; y < nb && kb[y] >> 32 == v; y++, lo++)
                if (lo < na && ks[lo] >> 32 == v &&
                    (r = ikp__tw_link(w, sa, (uint32_t)ks[lo], sb, (uint32_t)kb[y], err)) != IKP_OK)
                    return r;
        }
    } else
        for (x = 0; x < na && x < nb; x++)
            if ((r = ikp__tw_link(w, sa, (uint32_t)ka[x], sb, (uint32_t)kb[x], err)) != IKP_OK) return r;
    return IKP_OK;
}

/* room for the block's flow ends and for the matching, and each slot's
   first event in the block's numbering of them (mark_at; *total events) */
static ikp_result ikp__tw_flow_room(ikp__tw *w, size_t *total, ikp_error *err)
{
    const ikp_allocator *al = &w->cap->alloc;
    size_t most = 0;
    uint32_t s;
    if (!ikp__grow(al, (void **)&w->fe_at, &w->fe_atcap, (size_t)w->n + 1, sizeof(size_t)) ||
        !ikp__grow(al, (void **)&w->mark_at, &w->mark_atcap, (size_t)w->n + 1, sizeof(size_t)) ||
        !ikp__grow(al, (void **)&w->fa_at, &w->fa_atcap, (size_t)w->n + 1, sizeof(size_t)) ||
        !ikp__grow(al, (void **)&w->fpay, &w->fpaycap, (size_t)w->n + 1, 1))
        return ikp__oom(err);
    *total = 0;
    for (s = 0; s < w->n; s++) {
        w->mark_at[s] = *total;
        *total += w->ev[s].count;
        if (w->ev[s].count > most) most = w->ev[s].count;
    }
    w->mark_at[w->n] = *total;
    if (w->num_flows) {
        if (!ikp__grow(al, (void **)&w->ka, &w->kacap, *total, sizeof(uint64_t)) ||
            !ikp__grow(al, (void **)&w->ks, &w->kscap, *total, sizeof(uint64_t)) ||
            !ikp__grow(al, (void **)&w->kb, &w->kbcap, most, sizeof(uint64_t)) ||
            !ikp__grow(al, (void **)&w->mark, &w->markcap, *total, 1))
            return ikp__oom(err);
    }
    return IKP_OK;
}

/* every slot's `from` keys, in start order (ka) and by payload (ks), slot
   s's from fa_at[s] (fpay[s]: all carry a payload); *flanes: the slots
   with some, *fone: the last of them, *all_pay: all of them carry a
   payload. Returns how many keys. */
static size_t ikp__tw_from_keys(ikp__tw *w, uint32_t from, uint32_t *flanes, uint32_t *fone, int *all_pay)
{
    size_t nf = 0;
    uint32_t s;
    *flanes = 0;
    *fone = 0;
    *all_pay = 1;
    for (s = 0; s < w->n; s++) {
        int pa;
        int64_t na;
        w->fa_at[s] = nf;
        na = ikp__tw_keys(w, s, from, w->ka + nf, &pa);
        w->fpay[s] = (uint8_t)pa;
        if (!na) continue;
        memcpy(w->ks + nf, w->ka + nf, (size_t)na * sizeof(uint64_t));
        ikp__sort(w->ks + nf, (size_t)na, sizeof(uint64_t), ikp__cmp_u64);
        if (!pa) *all_pay = 0;
        (*flanes)++;
        *fone = s;
        nf += (size_t)na;
    }
    w->fa_at[w->n] = nf;
    return nf;
}

/* the block's nf `from` events by (payload, start), in fk (*nfk of them) */
static ikp_result ikp__tw_from_by_payload(ikp__tw *w, size_t nf, size_t *nfk, ikp_error *err)
{
    uint32_t i;
    if (!ikp__grow(&w->cap->alloc, (void **)&w->fk, &w->fkcap, nf, sizeof(ikp__fkey))) return ikp__oom(err);
    for (i = 0; i < w->n; i++) {
        size_t k;
        for (k = w->fa_at[i]; k < w->fa_at[i + 1]; k++) {
            ikp__fkey *f = &w->fk[(*nfk)++];
            f->v = (uint32_t)(w->ka[k] >> 32);
            f->slot = i;
            f->idx = (uint32_t)w->ka[k];
            f->ps = w->ev[i].events[f->idx].start_ps;
        }
    }
    ikp__sort(w->fk, *nfk, sizeof(ikp__fkey), ikp__cmp_fkey);
    return IKP_OK;
}

/* slot s's `to` keys kb[0 .. nb), sorted by payload, linked a run of one
   payload at a time: its k-th to the block's k-th `from` event with that
   payload in time order (fk[0 .. nfk)) */
static ikp_result ikp__tw_link_runs(ikp__tw *w, uint32_t s, int64_t nb, size_t nfk, ikp_error *err)
{
    ikp_result r;
    int64_t j;
    for (j = 0; j < nb;) {
        uint32_t v = (uint32_t)(w->kb[j] >> 32);
        size_t lo = 0, hi = nfk;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (w->fk[mid].v < v) lo = mid + 1;
            else hi = mid;
        }
        for (; j < nb && (uint32_t)(w->kb[j] >> 32) == v; j++, lo++)
            if (lo < nfk && w->fk[lo].v == v &&
                (r = ikp__tw_link(w, w->fk[lo].slot, w->fk[lo].idx, s, (uint32_t)w->kb[j], err)) != IKP_OK)
                return r;
    }
    return IKP_OK;
}

/* The block's links of one flow (from -> to; total: the block's events),
   and its events of either id left unpaired. */
static ikp_result ikp__tw_flow(ikp__tw *w, uint32_t from, uint32_t to, size_t total, ikp_error *err)
{
    uint32_t flanes, fone, s;
    size_t nf, nfk = 0, i;
    int all_pay;
    memset(w->mark, 0, total);
    nf = ikp__tw_from_keys(w, from, &flanes, &fone, &all_pay);
    for (s = 0; s < w->n; s++) {
        int pb;
        int64_t nb = ikp__tw_keys(w, s, to, w->kb, &pb);
        ikp_result r;
        if (!nb) continue;
        if (w->fa_at[s + 1] > w->fa_at[s] || flanes == 1) { /* its own, or the block's one */
            uint32_t sa = w->fa_at[s + 1] > w->fa_at[s] ? s : fone;
            if (pb && w->fpay[sa]) ikp__sort(w->kb, (size_t)nb, sizeof(uint64_t), ikp__cmp_u64); /* by payload */
            if ((r = ikp__tw_pair(w, sa, w->fpay[sa], s, w->kb, nb, pb, err)) != IKP_OK) return r;
            continue;
        }
        if (!flanes || !all_pay || !pb) continue; /* nothing says which `from` */
        ikp__sort(w->kb, (size_t)nb, sizeof(uint64_t), ikp__cmp_u64);
        if (!nfk && (r = ikp__tw_from_by_payload(w, nf, &nfk, err)) != IKP_OK) return r; /* made once */
        if ((r = ikp__tw_link_runs(w, s, nb, nfk, err)) != IKP_OK) return r;
    }
    for (s = 0; s < w->n; s++)
        for (i = 0; i < w->ev[s].count; i++) {
            const ikp_event *e = &w->ev[s].events[i];
            if ((ikp__flow_event(e, from) || ikp__flow_event(e, to)) && !w->mark[w->mark_at[s] + i])
                w->st.flow_unpaired++;
        }
    return IKP_OK;
}

/* The block's flows. Each `to` event gets at most one link, so there are
   at most as many as records: a lane with `from` events links its own `to`
   events to them; a lane with only `to` events links to the block's one
   lane with `from` events, or, when several lanes have them, by payload to
   the block's k-th `from` event with that payload in time order (without
   payloads nothing says which lane: not linked, counted as unpaired). */
static ikp_result ikp__tw_flows(ikp__tw *w, ikp_error *err)
{
    ikp_result r;
    uint32_t p, s;
    size_t total = 0, i;
    w->nfe = 0;
    if ((r = ikp__tw_flow_room(w, &total, err)) != IKP_OK) return r;
    for (p = 0; p < w->num_flows; p++)
        if ((r = ikp__tw_flow(w, w->flows[p].from, w->flows[p].to, total, err)) != IKP_OK) return r;
    if (w->nfe > 1) qsort(w->fe, w->nfe, sizeof(ikp__fend), ikp__cmp_fend);
    for (s = 0, i = 0; s <= w->n; s++) {
        while (i < w->nfe && w->fe[i].slot < s) i++;
        w->fe_at[s] = i;
    }
    return IKP_OK;
}

/* the next block (or lane): w->n slots, 0 at the end */
static ikp_result ikp__tw_next(ikp__tw *w, ikp_error *err)
{
    const ikp_capture *cap = w->cap;
    uint32_t block = 0;
    w->n = 0;
    while (w->pos < w->norder) {
        ikp__lane lt;
        uint32_t i = w->order ? w->order[w->pos] : w->pos;
        const ikp__lane *l = ikp__get_lane(cap, i, &lt);
        ikp_result r;
        if (!(l->pub.flags & IKP_LANE_STARTED) || (cap->lanes && l->pub.records == 0)) { w->pos++; continue; }
        if (w->n && (!w->grouped || l->pub.block != block)) break;
        if (w->n == w->ncap) {
            uint32_t c = w->ncap ? w->ncap * 2 : 4;
            ikp_lane_events *ev = (ikp_lane_events *)ikp__alloc(&cap->alloc, (size_t)c * sizeof *ev);
            uint32_t *ln = (uint32_t *)ikp__alloc(&cap->alloc, (size_t)c * sizeof *ln);
            if (!ev || !ln) { ikp__free(&cap->alloc, ev); ikp__free(&cap->alloc, ln); return ikp__oom(err); }
            memset(ev, 0, (size_t)c * sizeof *ev);
            if (w->ncap) { memcpy(ev, w->ev, (size_t)w->ncap * sizeof *ev); memcpy(ln, w->lane, (size_t)w->ncap * sizeof *ln); }
            ikp__free(&cap->alloc, w->ev); ikp__free(&cap->alloc, w->lane);
            w->ev = ev; w->lane = ln; w->ncap = c;
        }
        w->ev[w->n].scratch_ = w->scratch; /* the decode's scratch (NULL: made there) */
        r = ikp__decode(cap, l, &w->ev[w->n], err);
        w->scratch = w->ev[w->n].scratch_;
        w->ev[w->n].scratch_ = NULL;
        if (r != IKP_OK) return r;
        w->pos++;
        if (w->ev[w->n].count == 0) continue; /* nothing to show: no tracks, no names */
        block = l->pub.block;
        w->lane[w->n++] = i;
    }
    if (w->n && w->grouped) return ikp__tw_flows(w, err);
    if (w->n) {
        if (!ikp__grow(&cap->alloc, (void **)&w->fe_at, &w->fe_atcap, 2, sizeof(size_t))) return ikp__oom(err);
        w->nfe = 0; w->fe_at[0] = w->fe_at[1] = 0;
    }
    return IKP_OK;
}

static int ikp__cmp_step(const void *pa, const void *pb)
{
    const ikp__step *a = (const ikp__step *)pa, *b = (const ikp__step *)pb;
    if (a->ns != b->ns) return a->ns < b->ns ? -1 : 1;
    return a->d < b->d ? -1 : a->d > b->d; /* ends first: no false peak */
}

/* the current block's levels of "regions of id open": w->cs[0 .. ncs), each
   (ns, d = the count after every step at ns), in time order; ncs 0 if none */
static ikp_result ikp__tw_counter(ikp__tw *w, uint32_t id, ikp_error *err)
{
    uint32_t s;
    size_t i, n;
    int32_t v = 0;
    w->ncs = 0;
    for (s = 0; s < w->n; s++)
        for (i = 0; i < w->ev[s].count; i++) {
            const ikp_event *e = &w->ev[s].events[i];
            if (e->id != id || e->kind != IKP_EVENT_REGION) continue;
            if (!ikp__grow(&w->cap->alloc, (void **)&w->cs, &w->cscap, w->ncs + 2, sizeof(ikp__step))) return ikp__oom(err);
            w->cs[w->ncs].ns = ikp__ns(e->start_ps); w->cs[w->ncs++].d = 1;
            w->cs[w->ncs].ns = ikp__ns(e->end_ps); w->cs[w->ncs++].d = -1;
        }
    if (w->ncs > 1) qsort(w->cs, w->ncs, sizeof(ikp__step), ikp__cmp_step);
    for (i = 0, n = 0; i < w->ncs; i++) { /* steps -> one level per time */
        v += w->cs[i].d;
        if (i + 1 < w->ncs && w->cs[i + 1].ns == w->cs[i].ns) continue;
        w->cs[n].ns = w->cs[i].ns;
        w->cs[n++].d = v < 0 ? 0 : v;
    }
    w->ncs = n;
    return IKP_OK;
}

/* JSON timestamps are us with 3 decimals, read back as doubles, which
   hold whole ns only below 2^53 ns (104 days). Times past that (host time,
   since 1970) are written less the time base's whole seconds, stated as
   otherData.ikp_ts_offset_ns: the ns taken off every timestamp. top: the
   latest time written; base: the time base. */
static uint64_t ikp__ts_offset(uint64_t base, uint64_t top)
{
    return top < ((uint64_t)1 << 53) ? 0 : base - base % 1000000000u;
}

/* a lane's process id in both writers: its block (by SM: its SM) + 1, as
   Perfetto drops the events of pid 0 (its idle process) */
/* One capture of a merged trace: its pids follow pid_base, its process
   names start with label, its track uuids (Perfetto) continue from *uuid;
   *first: no event written yet (JSON). The merged writer writes the file's
   opening and closing. NULL: a trace of one capture. */
typedef struct ikp__part {
    uint64_t pid_base;
    uint64_t ts_offset;          /* JSON: ns taken off every timestamp (ikp__ts_offset) */
    const char *label;
    int *first;
    uint64_t *uuid;
    uint32_t seq;                /* Perfetto: its packet sequence (0: IKP__PB_SEQ) */
} ikp__part;

static uint64_t ikp__trace_pid(const ikp__lane *l, ikp_group_by by)
{
    return (uint64_t)(by == IKP_BY_BLOCK ? l->pub.block : l->pub.sm) + 1;
}

/* a process seen for the first time (by block: a new block; by SM: a new SM) */
static int ikp__new_pid(uint8_t *seen, uint64_t *last, uint64_t pid)
{
    int fresh = pid != *last && !(seen && pid < 65536 && (seen[pid >> 3] >> (pid & 7) & 1));
    if (fresh && seen && pid < 65536) seen[pid >> 3] |= (uint8_t)(1u << (pid & 7));
    *last = pid;
    return fresh;
}

/* "load in flight" (by SM: "load, block 3 in flight"), raw UTF-8 */
static void ikp__counter_name(char *t, size_t n, const ikp_capture *cap, ikp_group_by by, uint32_t id, uint32_t block)
{
    char tmp[32];
    const char *nm = ikp__ev_name(cap, id, tmp, sizeof tmp);
    if (by == IKP_BY_SM) snprintf(t, n, "%s, block %u in flight", nm, block);
    else snprintf(t, n, "%s in flight", nm);
}

static ikp_result ikp__chrome(const ikp_capture *cap, const ikp_trace_options *opt, const ikp__part *part,
                              ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_write_chrome(const ikp_capture *cap, const ikp_trace_options *opt,
                                    ikp_write_fn fn, void *user, ikp_error *err)
{
    return ikp__chrome(cap, opt, NULL, fn, user, err);
}

/* a process name, after the capture's label in a merged trace */
static const char *ikp__part_process_name(char *t, size_t n, const ikp__part *part, const ikp_capture *cap,
                                          const ikp__lane *l, ikp_group_by by)
{
    size_t k = 0;
    if (part && part->label) { snprintf(t, n, "%s ", part->label); k = strlen(t); }
    ikp__process_name(t + k, n - k, cap, l, by);
    return t;
}

#if !defined(IKP_NO_PERFETTO) || !defined(IKP_NO_MERGE)
/* a capture's label before disambiguation (hosts: the captures name two
   hosts or more): "rank 1 GPU 3", "GPU 3", "GPU 1a2b3c4d" or "capture
   index + 1" when known is 0 (no device named), led by the host when hosts */
static void ikp__label0(int known, const char *host, int32_t rank, int32_t ordinal, const uint8_t *uuid,
                        uint32_t index, int hosts, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = 0;
    if (!known) { snprintf(buf, size, "capture %u", index + 1); return; }
    if (hosts && host[0]) { snprintf(buf, size, "%s ", host); k = strlen(buf); }
    if (rank >= 0) { snprintf(buf + k, size - k, "rank %d ", (int)rank); k = strlen(buf); }
    if (ordinal >= 0) snprintf(buf + k, size - k, "GPU %d", (int)ordinal);
    else snprintf(buf + k, size - k, "GPU %02x%02x%02x%02x", uuid[0], uuid[1], uuid[2], uuid[3]);
}
#endif

/* >>trace-chrome: the Chrome JSON writer */
/* metadata of a process (tid 0: "process_name", "process_sort_index") or a
   thread ("thread_name", "thread_sort_index"); its sort index is its id */
static void ikp__chrome_meta(ikp__out *o, int *first, const char *what, uint64_t pid, uint64_t tid, const char *name)
{
    int thread = what[0] == 't';
    ikp__puts(o, *first ? "\n" : ",\n");
    *first = 0;
    ikp__puts(o, "{\"ph\":\"M\",\"name\":\"");
    ikp__puts(o, what);
    ikp__puts(o, "_name\",\"pid\":");
    ikp__put_u64(o, pid);
    if (thread) { ikp__puts(o, ",\"tid\":"); ikp__put_u64(o, tid); }
    ikp__puts(o, ",\"args\":{\"name\":\"");
    ikp__put_json_chars(o, name);
    ikp__puts(o, "\"}},\n{\"ph\":\"M\",\"name\":\"");
    ikp__puts(o, what);
    ikp__puts(o, "_sort_index\",\"pid\":");
    ikp__put_u64(o, pid);
    if (thread) { ikp__puts(o, ",\"tid\":"); ikp__put_u64(o, tid); }
    ikp__puts(o, ",\"args\":{\"sort_index\":");
    ikp__put_u64(o, thread ? tid : pid);
    ikp__puts(o, "}}");
}

/* one region ("X") or instant ("i") of name nm (nl bytes, JSON-escaped) */
static void ikp__chrome_event(ikp__out *o, int *first, const ikp_event *e, const char *nm, size_t nl, uint64_t pid,
                              uint64_t tid, uint64_t base_ns)
{
    char *p;
    int64_t s0 = ikp__ns(e->start_ps), s1 = ikp__ns(e->end_ps);
    /* the head (at most IKP__HEAD bytes), the name, the tail (fixed text,
       numbers, args: at most IKP__TAIL bytes). One bound check when all fit
       the buffer; else the name goes through ikp__put, whatever its length. */
    if (o->n + IKP__HEAD + nl + IKP__TAIL > o->cap) ikp__flush(o);
    p = o->buf + o->n;
    if (!*first) *p++ = ',';
    *first = 0;
    if (e->kind == IKP_EVENT_REGION) IKP__CPY(p, "\n{\"ph\":\"X\",\"name\":\"");
    else IKP__CPY(p, "\n{\"ph\":\"i\",\"s\":\"t\",\"name\":\"");
    if (IKP__HEAD + nl + IKP__TAIL <= o->cap) {
        memcpy(p, nm, nl);
        p += nl;
    } else {
        o->n = (size_t)(p - o->buf);
        ikp__put(o, nm, nl);
        if (o->n + IKP__TAIL > o->cap) ikp__flush(o);
        p = o->buf + o->n;
    }
    if (e->kind == IKP_EVENT_UNMATCHED_BEGIN) IKP__CPY(p, " (unmatched begin)");
    else if (e->kind == IKP_EVENT_UNMATCHED_END) IKP__CPY(p, " (unmatched end)");
    IKP__CPY(p, "\",\"pid\":");
    p = ikp__fmt_u64(p, pid);
    IKP__CPY(p, ",\"tid\":");
    p = ikp__fmt_u64(p, tid);
    IKP__CPY(p, ",\"ts\":");
    p = ikp__fmt_us(p, (uint64_t)s0 + base_ns);
    if (e->kind == IKP_EVENT_REGION) {
        IKP__CPY(p, ",\"dur\":");
        p = ikp__fmt_us(p, (uint64_t)(s1 - s0));
    }
    if (e->flags || e->kind == IKP_EVENT_UNMATCHED_BEGIN || e->kind == IKP_EVENT_UNMATCHED_END) {
        int na = 0; /* args written: the next one needs a comma */
#define IKP__ARG(lit) (na++ ? (void)(*p++ = ',') : (void)0, IKP__CPY(p, lit))
        IKP__CPY(p, ",\"args\":{");
        if (e->kind == IKP_EVENT_UNMATCHED_BEGIN) IKP__ARG("\"unmatched\":\"begin\"");
        if (e->kind == IKP_EVENT_UNMATCHED_END) IKP__ARG("\"unmatched\":\"end\"");
        if (e->flags & IKP_EVENT_HAS_BEGIN_DATA) { IKP__ARG("\"begin_data\":"); p = ikp__fmt_u64(p, e->begin_data); }
        if (e->flags & IKP_EVENT_HAS_END_DATA) { IKP__ARG("\"end_data\":"); p = ikp__fmt_u64(p, e->end_data); }
        if (e->flags & IKP_EVENT_HAS_TID) { IKP__ARG("\"tid\":"); p = ikp__fmt_u64(p, e->tid); }
        if (e->flags & IKP_EVENT_MAY_WRAP) IKP__ARG("\"may_wrap\":true");
#undef IKP__ARG
        *p++ = '}';
    }
    *p++ = '}';
    o->n = (size_t)(p - o->buf);
}

/* a flow's end on the event just written: "s" right after the source
   (bound to it, the innermost slice open there), "f" bound to the
   enclosing slice where the destination is innermost */
static void ikp__chrome_flow(ikp__out *o, ikp_trace_stats *st, const ikp__fend *fe, uint64_t pid, uint64_t tid,
                             uint64_t base_ns)
{
    char *p;
    if (fe->src_ns >= fe->dst_json_ns) { st->flows_unordered += (uint64_t)fe->out; return; }
    if (o->n + 160 > o->cap) ikp__flush(o);
    p = o->buf + o->n;
    if (fe->out) { IKP__CPY(p, ",\n{\"ph\":\"s\",\"id\":"); st->flows++; }
    else IKP__CPY(p, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":");
    p = ikp__fmt_u64(p, fe->id);
    IKP__CPY(p, ",\"cat\":\"flow\",\"name\":\"flow\",\"pid\":");
    p = ikp__fmt_u64(p, pid);
    IKP__CPY(p, ",\"tid\":");
    p = ikp__fmt_u64(p, tid);
    IKP__CPY(p, ",\"ts\":");
    p = ikp__fmt_us(p, (uint64_t)(fe->out ? fe->src_ns : fe->dst_json_ns) + base_ns);
    *p++ = '}';
    o->n = (size_t)(p - o->buf);
}

/* a block's counter named cn: the walk's values (w->cs), on the block's
   first track */
static void ikp__chrome_counter(ikp__out *o, const ikp__tw *w, const char *cn, uint64_t pid, uint64_t tid,
                                uint64_t base_ns)
{
    size_t k;
    for (k = 0; k < w->ncs; k++) {
        char b[32];
        ikp__puts(o, ",\n{\"ph\":\"C\",\"name\":\"");
        ikp__put_json_chars(o, cn);
        ikp__puts(o, "\",\"pid\":");
        ikp__put_u64(o, pid);
        ikp__puts(o, ",\"tid\":");
        ikp__put_u64(o, tid);
        ikp__puts(o, ",\"ts\":");
        ikp__put(o, b, (size_t)(ikp__fmt_us(b, (uint64_t)w->cs[k].ns + base_ns) - b));
        ikp__puts(o, ",\"args\":{\"value\":");
        ikp__put_u64(o, (uint64_t)w->cs[k].d);
        ikp__puts(o, "}}");
    }
}

/* a trace of one capture: the events' end and the metadata (what the times
   are, the offset taken off them, how well the lanes line up) */
static void ikp__chrome_tail(ikp__out *o, const ikp_capture *cap, const ikp_trace_options *opt, uint64_t base_ns,
                             uint64_t offset)
{
    char pl[640];
    ikp__puts(o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{");
    if (opt && opt->time_note) { /* what the times are */
        ikp__puts(o, "\"ikp_time\":\"");
        ikp__put_json_chars(o, opt->time_note);
        ikp__puts(o, "\",\"ikp_time_base_ns\":\"");
        ikp__put_u64(o, base_ns + offset);
        ikp__puts(o, "\",");
    }
    if (offset) {
        ikp__puts(o, "\"ikp_ts_offset_ns\":\"");
        ikp__put_u64(o, offset);
        ikp__puts(o, "\",");
    }
    if (cap->info.launch) {
        ikp__puts(o, "\"ikp_launch\":\"");
        ikp__put_u64(o, cap->info.launch);
        ikp__puts(o, "\",");
    }
    if (ikp_capture_stale(&cap->info, pl, sizeof pl)) { /* records of an earlier launch */
        ikp__puts(o, "\"ikp_stale\":\"");
        ikp__put_json_chars(o, pl);
        ikp__puts(o, "\",");
    }
    ikp_capture_placement(&cap->info, pl, sizeof pl, NULL);
    ikp__puts(o, "\"ikp_placement\":\""); /* how well its lanes line up */
    ikp__put_json_chars(o, pl);
    ikp__puts(o, "\"}}\n");
}

/* The Chrome JSON writer's state, shared by its pieces (one capture) */
typedef struct ikp__jw {
    const ikp_capture *cap;
    const ikp__part *part;
    ikp_group_by by;
    ikp__out o;
    ikp__tw w;                 /* the walk over lanes, block by block */
    ikp__namecache *nc;
    uint32_t *track_next;      /* duplicate lanes: per lane, the next track of its (block, group) */
    uint8_t *sm_seen;          /* ikp__trace_begin's */
    int *first;                /* no event written yet (the part's, in a merged trace) */
    uint64_t last_pid, pid_base, base_ns;
    uint64_t block_pid, block_tid; /* the block's first lane's: its counters go on its first track */
} ikp__jw;

/* the writer's memory and the walk; on a failure all of it is freed
   (ikp__trace_begin's sm_seen too) */
static ikp_result ikp__chrome_start(ikp__jw *j, const ikp_trace_options *opt, ikp_error *err)
{
    const ikp_capture *cap = j->cap;
    ikp_result r = IKP_OK;
    j->track_next = NULL;
    if (cap->info.duplicate_lanes) {
        /* a duplicate lane's tracks follow those of the first lane of its (block, group) */
        j->track_next = (uint32_t *)ikp__alloc(&cap->alloc, (size_t)cap->info.num_lanes * sizeof(uint32_t));
        if (!j->track_next) { ikp__free(&cap->alloc, j->sm_seen); return ikp__oom(err); }
        memset(j->track_next, 0, (size_t)cap->info.num_lanes * sizeof(uint32_t));
    }
    j->nc = (ikp__namecache *)ikp__alloc(&cap->alloc, sizeof(ikp__namecache));
    j->o.buf = (char *)ikp__alloc(&cap->alloc, 1 << 16);
    if (!j->nc || !j->o.buf || (r = ikp__tw_init(&j->w, cap, opt, err)) != IKP_OK) {
        ikp__free(&cap->alloc, j->nc); ikp__free(&cap->alloc, j->o.buf); ikp__free(&cap->alloc, j->sm_seen);
        ikp__free(&cap->alloc, j->track_next);
        return j->nc && j->o.buf ? r : ikp__oom(err);
    }
    memset(j->nc->have, 0, sizeof j->nc->have);
    j->nc->pool = NULL; j->nc->n = j->nc->cap = 0;
    return IKP_OK;
}

/* Lane l's (index i) process id before pid_base, and its tracks' thread
   ids, tid0 + (tbase + track) * tstride: by block, a thread per group and
   track (a duplicate lane's tracks after those of the first lane of its
   (block, group)); by SM, a thread per lane and track. 1-based: Perfetto
   drops the events of pid 0 / tid 0 (its idle process). */
static uint64_t ikp__chrome_ids(const ikp_capture *cap, const ikp__lane *l, uint32_t i, ikp_group_by by,
                                uint32_t num_tracks, uint32_t *track_next, uint64_t *tid0, uint32_t *tbase,
                                uint64_t *tstride)
{
    *tbase = 0;
    if (track_next) {
        uint32_t owner = (l->pub.flags & IKP_LANE_DUPLICATE) ? l->pub.duplicate_of : i;
        *tbase = track_next[owner];
        track_next[owner] += num_tracks;
    }
    if (by == IKP_BY_BLOCK) {
        *tid0 = (uint64_t)l->pub.group + 1;
        *tstride = cap->info.num_groups ? cap->info.num_groups : 1;
    } else {
        *tid0 = (uint64_t)i + 1;
        *tstride = cap->info.num_lanes;
        *tbase = 0;
    }
    return ikp__trace_pid(l, by);
}

/* lane s of the walk's block: its process' metadata when the lane opens
   the process, its tracks' metadata, then its events, each followed by
   the flows' ends on it */
static ikp_result ikp__chrome_lane(ikp__jw *j, uint32_t s, ikp_error *err)
{
    const ikp_capture *cap = j->cap;
    const ikp_lane_events *ev = &j->w.ev[s];
    const ikp__fend *fe = j->w.fe ? j->w.fe + j->w.fe_at[s] : NULL, *fe_end = j->w.fe ? j->w.fe + j->w.fe_at[s + 1] : NULL;
    ikp__lane lt;
    uint32_t i = j->w.lane[s], t, tbase;
    const ikp__lane *l = ikp__get_lane(cap, i, &lt);
    uint64_t tid0, tstride, pid = ikp__chrome_ids(cap, l, i, j->by, ev->num_tracks, j->track_next, &tid0, &tbase, &tstride);
    int fresh = ikp__new_pid(j->sm_seen, &j->last_pid, pid);
    char cn[512];
    size_t k;
    pid += j->pid_base;
    if (s == 0) { j->block_pid = pid; j->block_tid = tid0 + (uint64_t)tbase * tstride; }
    if (fresh)
        ikp__chrome_meta(&j->o, j->first, "process", pid, 0, ikp__part_process_name(cn, sizeof cn, j->part, cap, l, j->by));
    for (t = 0; t < ev->num_tracks; t++)
        ikp__chrome_meta(&j->o, j->first, "thread", pid, tid0 + (uint64_t)(tbase + t) * tstride,
                         ikp__thread_name(cn, sizeof cn, cap, l, i, j->by, tbase + t));
    for (k = 0; k < ev->count; k++) {
        const ikp_event *e = &ev->events[k];
        const char *nm;
        size_t nl;
        uint64_t tid = tid0 + (uint64_t)(tbase + e->track) * tstride;
        if (!ikp__cached_name(cap, j->nc, e->id, &nm, &nl)) return ikp__oom(err);
        ikp__chrome_event(&j->o, j->first, e, nm, nl, pid, tid, j->base_ns);
        for (; fe < fe_end && fe->idx == k; fe++) ikp__chrome_flow(&j->o, &j->w.st, fe, pid, tid, j->base_ns);
    }
    return IKP_OK;
}

/* the block's counters: per counter event, the regions of it open, on the
   block's first lane's first track */
static ikp_result ikp__chrome_counters(ikp__jw *j, const ikp_trace_options *opt, ikp_error *err)
{
    ikp_result r = IKP_OK;
    char cn[512];
    uint32_t c;
    for (c = 0; r == IKP_OK && opt && c < opt->num_counters; c++) {
        ikp__lane lt;
        uint32_t block = ikp__get_lane(j->cap, j->w.lane[0], &lt)->pub.block;
        if ((r = ikp__tw_counter(&j->w, opt->counters[c], err)) != IKP_OK || !j->w.ncs) continue;
        j->w.st.counter_tracks++;
        ikp__counter_name(cn, sizeof cn, j->cap, j->by, opt->counters[c], block);
        ikp__chrome_counter(&j->o, &j->w, cn, j->block_pid, j->block_tid, j->base_ns);
    }
    return r;
}

static ikp_result ikp__chrome(const ikp_capture *cap, const ikp_trace_options *opt, const ikp__part *part,
                              ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__jw j;
    ikp_result r;
    uint32_t s;
    uint64_t offset;
    int first_own = 1;
    if (!cap || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    j.by = opt ? opt->by : IKP_BY_BLOCK;
    if ((unsigned)j.by >= (unsigned)IKP_BY_COUNT)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "unknown grouping %d", (int)j.by);
    j.cap = cap;
    j.part = part;
    j.first = part ? part->first : &first_own;
    j.sm_seen = NULL;
    j.last_pid = UINT64_MAX;
    j.base_ns = opt ? opt->time_base_ns : 0;
    j.pid_base = (part ? part->pid_base : 0) + (opt ? opt->pid_base : 0);
    offset = part ? part->ts_offset
             : opt && opt->absolute_ts ? 0 : ikp__ts_offset(j.base_ns, j.base_ns + (uint64_t)ikp__ns(cap->info.span_ps));
    j.base_ns -= offset; /* (time_base_ns is checked below 2^63 with the span, in ikp__tw_init) */
    r = ikp__trace_begin(cap, j.by, &j.sm_seen, err);
    if (r != IKP_OK) return r;
    if ((r = ikp__chrome_start(&j, opt, err)) != IKP_OK) return r;
    ikp__out_init(&j.o, fn, user, j.o.buf, 1 << 16);
    if (!part) ikp__puts(&j.o, "{\"traceEvents\":[");
    while (!j.o.failed && (r = ikp__tw_next(&j.w, err)) == IKP_OK && j.w.n) {
        for (s = 0; s < j.w.n && r == IKP_OK; s++) r = ikp__chrome_lane(&j, s, err);
        if (r == IKP_OK) r = ikp__chrome_counters(&j, opt, err);
        if (r != IKP_OK) break;
    }
    if (!part) ikp__chrome_tail(&j.o, cap, opt, j.base_ns, offset);
    ikp__flush(&j.o);
    if (r == IKP_OK && opt && opt->stats && !j.o.failed) *opt->stats = j.w.st;
    ikp__tw_free(&j.w);
    ikp__free(&cap->alloc, j.nc->pool);
    ikp__free(&cap->alloc, j.nc);
    ikp__free(&cap->alloc, j.o.buf);
    ikp__free(&cap->alloc, j.sm_seen);
    ikp__free(&cap->alloc, j.track_next);
    if (r != IKP_OK) return r;
    if (j.o.failed) return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the trace failed");
    ikp__ok(err);
    return IKP_OK;
}

typedef ikp_result (*ikp__trace_fn)(const ikp_capture *cap, const ikp_trace_options *opt, ikp_write_fn fn,
                                    void *user, ikp_error *err);
/* a trace writer to a FILE*, flushed */
static ikp_result ikp__trace_file(const ikp_capture *cap, const ikp_trace_options *opt, ikp__trace_fn write,
                                  FILE *f, ikp_error *err)
{
    ikp_result r;
    if (!f) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL FILE");
    r = write(cap, opt, ikp_file_writer, f, err);
    if (r == IKP_OK && fflush(f) != 0)
        return ikp__fail(err, IKP_ERR_IO, -1, -1, "writing the trace failed: %s", strerror(errno));
    return r;
}

IKP_DEF ikp_result ikp_write_chrome_file(const ikp_capture *cap, const ikp_trace_options *opt,
                                         FILE *f, ikp_error *err)
{
    return ikp__trace_file(cap, opt, ikp_write_chrome, f, err);
}

/* >>trace-perfetto: the Perfetto protobuf writer */
#ifndef IKP_NO_PERFETTO
/* Field numbers and wire types of the messages written (Perfetto's
   protos/perfetto/trace/...; FORMAT.md lists them). A tag is
   field << 3 | wire type: 0 varint, 1 fixed64, 2 length-delimited. */
#define IKP__PB_TAG(f, wt) ((uint64_t)(f) << 3 | (wt))
enum {
    IKP__PB_PACKET = 1,                                  /* Trace.packet */
    IKP__PB_CLOCK_SNAPSHOT = 6, IKP__PB_TIMESTAMP = 8,   /* TracePacket */
    IKP__PB_SEQ_ID = 10, IKP__PB_TRACK_EVENT = 11, IKP__PB_INTERNED = 12, IKP__PB_SEQ_FLAGS = 13,
    IKP__PB_CLOCK_ID = 58, IKP__PB_DEFAULTS = 59, IKP__PB_TRACK_DESCRIPTOR = 60,
    IKP__PB_TE_ANNOTATION = 4, IKP__PB_TE_TYPE = 9,      /* TrackEvent */
    IKP__PB_TE_NAME_IID = 10, IKP__PB_TE_TRACK = 11, IKP__PB_TE_COUNTER = 30,
    IKP__PB_TE_FLOW = 47, IKP__PB_TE_FLOW_END = 48,
    IKP__PB_TD_UUID = 1, IKP__PB_TD_NAME = 2,            /* TrackDescriptor */
    IKP__PB_TD_PARENT = 5, IKP__PB_TD_COUNTER = 8,
    IKP__PB_TD_CHILD_ORDER = 11, IKP__PB_TD_RANK = 12,
    IKP__PB_ANN_NAME_IID = 1, IKP__PB_ANN_BOOL = 2,      /* DebugAnnotation */
    IKP__PB_ANN_UINT = 3, IKP__PB_ANN_STRING = 6,
    IKP__PB_IN_EVENT_NAMES = 2, IKP__PB_IN_ANN_NAMES = 3, /* InternedData */
    IKP__PB_IID = 1, IKP__PB_IID_NAME = 2,               /* EventName, DebugAnnotationName */
    IKP__PB_CLOCK = 1,                                   /* ClockSnapshot.clocks */
    IKP__PB_CLK_ID = 1, IKP__PB_CLK_TS = 2, IKP__PB_CLK_INCREMENTAL = 3, /* ClockSnapshot.Clock */
    IKP__PB_DEF_TRACK_EVENT = 11, IKP__PB_DEF_TRACK = 11 /* TracePacketDefaults, TrackEventDefaults */
};
#define IKP__PB_SLICE_BEGIN 1u /* TrackEvent.Type */
#define IKP__PB_SLICE_END 2u
#define IKP__PB_INSTANT 3u
#define IKP__PB_COUNTER 4u
#define IKP__PB_SEQ 1u         /* the one packet sequence; cleared at each lane */
#define IKP__PB_CLEARED 1u     /* sequence_flags: incremental state cleared */
#define IKP__PB_LANE_CLOCK 64u /* a sequence-scoped clock of ns deltas */
#define IKP__PB_BOOTTIME 6u    /* the trace clock */
#define IKP__PB_REALTIME 1u    /* the host's CLOCK_REALTIME (a merged archive's files meet others by it) */
#define IKP__PB_EXPLICIT 3u    /* child_ordering: by sibling_order_rank */
#define IKP__PB_UUID0 ((uint64_t)1 << 33) /* track uuids from here, but blocks' (IKP__PB_BLOCK) */
#define IKP__PB_BLOCK(pid) (((uint64_t)1 << 62) + (pid)) /* a block's (by SM: an SM's) track uuid */
/* debug annotation names, interned with fixed ids */
enum { IKP__ANN_UNMATCHED = 1, IKP__ANN_BEGIN_DATA, IKP__ANN_END_DATA, IKP__ANN_TID, IKP__ANN_MAY_WRAP, IKP__ANN_COUNT };
static const char *const ikp__ann_names[IKP__ANN_COUNT] = {"", "unmatched", "begin_data", "end_data", "tid", "may_wrap"};

static unsigned char *ikp__pb_v(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) { *p++ = (unsigned char)(v | 0x80); v >>= 7; }
    *p++ = (unsigned char)v;
    return p;
}
static unsigned char *ikp__pb_field(unsigned char *p, unsigned f, uint64_t v)
{
    return ikp__pb_v(ikp__pb_v(p, IKP__PB_TAG(f, 0)), v);
}
static unsigned char *ikp__pb_bytes(unsigned char *p, unsigned f, const void *d, size_t n)
{
    p = ikp__pb_v(ikp__pb_v(p, IKP__PB_TAG(f, 2)), n);
    memcpy(p, d, n);
    return p + n;
}
static unsigned char *ikp__pb_fixed(unsigned char *p, unsigned f, uint64_t v)
{
    int i;
    p = ikp__pb_v(p, IKP__PB_TAG(f, 1));
    for (i = 0; i < 8; i++) *p++ = (unsigned char)(v >> (8 * i));
    return p;
}
/* a string with invalid UTF-8 replaced by U+FFFD, as in the JSON: at most 3x
   the bytes (+ its tag and length) */
static unsigned char *ikp__pb_str(unsigned char *p, unsigned f, const char *str, unsigned char *tmp)
{
    return ikp__pb_bytes(p, f, tmp, ikp__utf8_fix(tmp, (const unsigned char *)str, strlen(str), 0));
}

typedef struct ikp__pbw {
    ikp__out o;
    unsigned char *a, *b, *c, *t; /* scratch: inner message, packet, interned data, a string */
    size_t acap, bcap, ccap, tcap;
    uint32_t *iid, *iid_gen;      /* event name (id * 3 + variant) -> iid, valid in generation gen */
    uint32_t gen, next_iid;
    unsigned ann;                 /* annotation names interned in this generation (bits) */
    int64_t last_ns;              /* the sequence clock */
    uint64_t next_uuid;
    uint64_t base_ns;             /* the trace clock at time 0 (ikp_trace_options.time_base_ns) */
    uint32_t seq;                 /* the packet sequence */
} ikp__pbw;

static void ikp__pbw_free(const ikp_capture *cap, ikp__pbw *w)
{
    ikp__free(&cap->alloc, w->o.buf); ikp__free(&cap->alloc, w->iid); ikp__free(&cap->alloc, w->iid_gen);
    ikp__free(&cap->alloc, w->a); ikp__free(&cap->alloc, w->b); ikp__free(&cap->alloc, w->c);
    ikp__free(&cap->alloc, w->t);
}

static void ikp__pb_packet(ikp__out *o, const unsigned char *body, size_t n)
{
    unsigned char h[12];
    ikp__put(o, (const char *)h, (size_t)(ikp__pb_v(ikp__pb_v(h, IKP__PB_TAG(IKP__PB_PACKET, 2)), n) - h));
    ikp__put(o, (const char *)body, n);
}

/* room for a packet with this many flow ids and strings of up to 1 KiB */
static int ikp__pb_reserve(const ikp_capture *cap, ikp__pbw *w, size_t flows)
{
    size_t need = 8192 + 16 * flows;
    return ikp__grow(&cap->alloc, (void **)&w->a, &w->acap, need, 1) &&
           ikp__grow(&cap->alloc, (void **)&w->b, &w->bcap, need + 8192, 1) &&
           ikp__grow(&cap->alloc, (void **)&w->c, &w->ccap, 4096, 1) &&
           ikp__grow(&cap->alloc, (void **)&w->t, &w->tcap, 4096, 1);
}

/* a new generation of the sequence: interned names and the clock start
   over; events default to track default_track (0: none) */
static void ikp__pb_clear(ikp__pbw *w, uint64_t default_track)
{
    unsigned char q0[64], d0[40], e0[16], k0[24], s0[64], *q = q0, *d = d0, *e = e0, *k = k0, *sn = s0;
    if (++w->gen == 0) { memset(w->iid_gen, 0, 3 * IKP_WIRE_MAX_EVENTS * sizeof(uint32_t)); w->gen = 1; }
    w->next_iid = 1;
    w->ann = 0;
    w->last_ns = 0;
    q = ikp__pb_field(q, IKP__PB_SEQ_ID, w->seq);
    q = ikp__pb_field(q, IKP__PB_SEQ_FLAGS, IKP__PB_CLEARED);
    /* defaults: timestamps on the lane clock, events on the lane's track */
    d = ikp__pb_field(d, IKP__PB_CLOCK_ID, IKP__PB_LANE_CLOCK);
    if (default_track) {
        e = ikp__pb_field(e, IKP__PB_DEF_TRACK, default_track);
        d = ikp__pb_bytes(d, IKP__PB_DEF_TRACK_EVENT, e0, (size_t)(e - e0));
    }
    q = ikp__pb_bytes(q, IKP__PB_DEFAULTS, d0, (size_t)(d - d0));
    /* the lane clock: ns deltas from 0, where the trace clock is 0 */
    k = ikp__pb_field(k, IKP__PB_CLK_ID, IKP__PB_LANE_CLOCK);
    k = ikp__pb_field(k, IKP__PB_CLK_TS, 0);
    k = ikp__pb_field(k, IKP__PB_CLK_INCREMENTAL, 1);
    sn = ikp__pb_bytes(sn, IKP__PB_CLOCK, k0, (size_t)(k - k0));
    k = k0;
    k = ikp__pb_field(k, IKP__PB_CLK_ID, IKP__PB_BOOTTIME);
    k = ikp__pb_field(k, IKP__PB_CLK_TS, w->base_ns);
    sn = ikp__pb_bytes(sn, IKP__PB_CLOCK, k0, (size_t)(k - k0));
    q = ikp__pb_bytes(q, IKP__PB_CLOCK_SNAPSHOT, s0, (size_t)(sn - s0));
    ikp__pb_packet(&w->o, q0, (size_t)(q - q0));
}

/* a TrackDescriptor packet of these fields */
static void ikp__pb_descriptor(ikp__pbw *w, const unsigned char *fields, size_t n)
{
    unsigned char *q = ikp__pb_bytes(w->b, IKP__PB_TRACK_DESCRIPTOR, fields, n);
    ikp__pb_packet(&w->o, w->b, (size_t)(q - w->b));
}

/* the iid of an event name in this generation; new names go to the interned
   data being built at *in */
static uint32_t ikp__pb_name(const ikp_capture *cap, ikp__pbw *w, const ikp_event *e, unsigned char **in)
{
    unsigned v = e->kind == IKP_EVENT_UNMATCHED_BEGIN ? 1 : e->kind == IKP_EVENT_UNMATCHED_END ? 2 : 0;
    uint32_t key = e->id * 3 + v;
    if (w->iid_gen[key] != w->gen) {
        char tmp[32], nm[IKP_MAX_NAME_BYTES + 32];
        unsigned char ent[3 * IKP_MAX_NAME_BYTES + 128], *p = ent;
        snprintf(nm, sizeof nm, "%s%s", ikp__ev_name(cap, e->id, tmp, sizeof tmp),
                 v == 1 ? " (unmatched begin)" : v == 2 ? " (unmatched end)" : "");
        w->iid_gen[key] = w->gen;
        w->iid[key] = w->next_iid++;
        p = ikp__pb_field(p, IKP__PB_IID, w->iid[key]);
        p = ikp__pb_str(p, IKP__PB_IID_NAME, nm, w->t);
        *in = ikp__pb_bytes(*in, IKP__PB_IN_EVENT_NAMES, ent, (size_t)(p - ent));
    }
    return w->iid[key];
}

static unsigned char *ikp__pb_ann(ikp__pbw *w, unsigned char *p, unsigned char **in, unsigned name, unsigned f,
                                  uint64_t v, const char *s)
{
    unsigned char a[64], *q = a;
    if (!(w->ann >> name & 1)) {
        unsigned char ent[32], *r = ent;
        w->ann |= 1u << name;
        r = ikp__pb_field(r, IKP__PB_IID, name);
        r = ikp__pb_bytes(r, IKP__PB_IID_NAME, ikp__ann_names[name], strlen(ikp__ann_names[name]));
        *in = ikp__pb_bytes(*in, IKP__PB_IN_ANN_NAMES, ent, (size_t)(r - ent));
    }
    q = ikp__pb_field(q, IKP__PB_ANN_NAME_IID, name);
    q = s ? ikp__pb_bytes(q, f, s, strlen(s)) : ikp__pb_field(q, f, v);
    return ikp__pb_bytes(p, IKP__PB_TE_ANNOTATION, a, (size_t)(q - a));
}

static size_t ikp__pb_vlen(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

/* one event packet: the TrackEvent te (te_n bytes), the interned data in c
   (in_n bytes); written straight into the output buffer */
static void ikp__pb_emit(ikp__pbw *w, int64_t ns, const unsigned char *te, size_t te_n, size_t in_n)
{
    unsigned char hdr[24], *h = hdr, *q;
    size_t body;
    if (ns < w->last_ns) ns = w->last_ns; /* never: the merge keeps time order */
    h = ikp__pb_field(h, IKP__PB_TIMESTAMP, (uint64_t)(ns - w->last_ns));
    w->last_ns = ns;
    h = ikp__pb_field(h, IKP__PB_SEQ_ID, w->seq);
    body = (size_t)(h - hdr) + 1 + ikp__pb_vlen(te_n) + te_n + (in_n ? 1 + ikp__pb_vlen(in_n) + in_n : 0);
    if (w->o.n + body + 12 > w->o.cap) ikp__flush(&w->o);
    q = body + 12 <= w->o.cap ? (unsigned char *)w->o.buf + w->o.n : w->b; /* else a packet larger than the buffer */
    {
        unsigned char *q0 = q;
        q = ikp__pb_v(ikp__pb_v(q, IKP__PB_TAG(IKP__PB_PACKET, 2)), body);
        memcpy(q, hdr, (size_t)(h - hdr));
        q += h - hdr;
        if (in_n) q = ikp__pb_bytes(q, IKP__PB_INTERNED, w->c, in_n);
        q = ikp__pb_bytes(q, IKP__PB_TRACK_EVENT, te, te_n);
        if (q0 == w->b) ikp__put(&w->o, (const char *)w->b, (size_t)(q - w->b));
        else w->o.n += (size_t)(q - q0);
    }
}

typedef struct ikp__hend { int64_t ns; uint32_t idx; } ikp__hend; /* a pending slice end */
static int ikp__hend_before(const ikp__hend *x, const ikp__hend *y)
{
    return x->ns < y->ns || (x->ns == y->ns && x->idx > y->idx); /* later begun, ended first */
}
static void ikp__heap_push(ikp__hend *h, size_t *n, ikp__hend v)
{
    size_t i = (*n)++;
    while (i && ikp__hend_before(&v, &h[(i - 1) / 2])) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = v;
}
static ikp__hend ikp__heap_pop(ikp__hend *h, size_t *n)
{
    ikp__hend top = h[0], v = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && ikp__hend_before(&h[c + 1], &h[c])) c++;
        if (!ikp__hend_before(&h[c], &v)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = v;
    return top;
}

/* the flow ends of event idx in [lo, hi) (sorted by idx): [*first, return) */
static const ikp__fend *ikp__fends_of(const ikp__fend *lo, const ikp__fend *hi, uint32_t idx, const ikp__fend **first)
{
    const ikp__fend *a = lo, *b = hi;
    while (a < b) {
        const ikp__fend *m = a + (b - a) / 2;
        if (m->idx < idx) a = m + 1; else b = m;
    }
    *first = a;
    while (a < hi && a->idx == idx) a++;
    return a;
}

/* the common packet, written in place: an event with no arguments, no flows
   and a name already interned (iid; 0 for a slice end) */
static inline void ikp__pb_plain(ikp__pbw *w, int64_t ns, unsigned type, uint64_t track, uint32_t iid)
{
    unsigned char *q;
    uint64_t d = (uint64_t)(ns < w->last_ns ? 0 : ns - w->last_ns);
    size_t te = 2 + (track ? 1 + ikp__pb_vlen(track) : 0) + (iid ? 1 + ikp__pb_vlen(iid) : 0);
    size_t body = 1 + ikp__pb_vlen(d) + 1 + ikp__pb_vlen(w->seq) + 2 + te; /* te < 128: one length byte */
    if (w->o.n + body + 2 > w->o.cap) ikp__flush(&w->o);
    w->last_ns += (int64_t)d;
    q = (unsigned char *)w->o.buf + w->o.n;
    *q++ = (unsigned char)IKP__PB_TAG(IKP__PB_PACKET, 2);
    *q++ = (unsigned char)body; /* < 128 */
    *q++ = (unsigned char)IKP__PB_TAG(IKP__PB_TIMESTAMP, 0);
    q = ikp__pb_v(q, d);
    *q++ = (unsigned char)IKP__PB_TAG(IKP__PB_SEQ_ID, 0);
    q = ikp__pb_v(q, w->seq);
    *q++ = (unsigned char)IKP__PB_TAG(IKP__PB_TRACK_EVENT, 2);
    *q++ = (unsigned char)te;
    *q++ = (unsigned char)IKP__PB_TAG(IKP__PB_TE_TYPE, 0);
    *q++ = (unsigned char)type;
    if (track) { *q++ = (unsigned char)IKP__PB_TAG(IKP__PB_TE_TRACK, 0); q = ikp__pb_v(q, track); }
    if (iid) { *q++ = (unsigned char)IKP__PB_TAG(IKP__PB_TE_NAME_IID, 0); q = ikp__pb_v(q, iid); }
    w->o.n = (size_t)(q - (unsigned char *)w->o.buf);
}

/* the TrackEvent of a slice begin, an instant or a slice end (e NULL for an
   end of event idx); flows from fe[first, last) */
static void ikp__pb_track_event(const ikp_capture *cap, ikp__pbw *w, ikp__tw *tw, const ikp_event *e, unsigned type,
                                uint64_t track, int64_t ns, const ikp__fend *f, const ikp__fend *f_end)
{
    unsigned char *p = w->a, *in = w->c;
    p = ikp__pb_field(p, IKP__PB_TE_TYPE, type);
    if (track) p = ikp__pb_field(p, IKP__PB_TE_TRACK, track);
    if (e) {
        p = ikp__pb_field(p, IKP__PB_TE_NAME_IID, ikp__pb_name(cap, w, e, &in));
        if (e->kind == IKP_EVENT_UNMATCHED_BEGIN) p = ikp__pb_ann(w, p, &in, IKP__ANN_UNMATCHED, IKP__PB_ANN_STRING, 0, "begin");
        if (e->kind == IKP_EVENT_UNMATCHED_END) p = ikp__pb_ann(w, p, &in, IKP__ANN_UNMATCHED, IKP__PB_ANN_STRING, 0, "end");
        if (e->flags & IKP_EVENT_HAS_BEGIN_DATA) p = ikp__pb_ann(w, p, &in, IKP__ANN_BEGIN_DATA, IKP__PB_ANN_UINT, e->begin_data, NULL);
        if (e->flags & IKP_EVENT_HAS_END_DATA) p = ikp__pb_ann(w, p, &in, IKP__ANN_END_DATA, IKP__PB_ANN_UINT, e->end_data, NULL);
        if (e->flags & IKP_EVENT_HAS_TID) p = ikp__pb_ann(w, p, &in, IKP__ANN_TID, IKP__PB_ANN_UINT, e->tid, NULL);
        if (e->flags & IKP_EVENT_MAY_WRAP) p = ikp__pb_ann(w, p, &in, IKP__ANN_MAY_WRAP, IKP__PB_ANN_BOOL, 1, NULL);
    }
    /* a flow leaves its `from` event where it begins and reaches its `to`
       event where it ends: drawn when that comes later */
    for (; f < f_end; f++) {
        if (f->src_ns >= f->dst_pb_ns) { if (f->out && type != IKP__PB_SLICE_END) tw->st.flows_unordered++; continue; }
        if (f->out && type != IKP__PB_SLICE_END) { p = ikp__pb_fixed(p, IKP__PB_TE_FLOW, f->id); tw->st.flows++; }
        else if (!f->out && type != IKP__PB_SLICE_BEGIN) p = ikp__pb_fixed(p, IKP__PB_TE_FLOW_END, f->id);
    }
    ikp__pb_emit(w, ns, w->a, (size_t)(p - w->a), (size_t)(in - w->c));
}

/* an event packet: in place when it has no arguments, no flows (a == b)
   and a name already interned, else composed; 0 when out of memory */
static inline int ikp__pb_event(const ikp_capture *cap, ikp__pbw *w, ikp__tw *tw, const ikp_event *e, unsigned type,
                                uint64_t track, int64_t ns, const ikp__fend *a, const ikp__fend *b)
{
    if (a == b && (!e || (!e->flags && e->kind <= IKP_EVENT_INSTANT && w->iid_gen[e->id * 3] == w->gen)))
        ikp__pb_plain(w, ns, type, track, e ? w->iid[e->id * 3] : 0);
    else {
        if (!ikp__pb_reserve(cap, w, (size_t)(b - a))) return 0;
        ikp__pb_track_event(cap, w, tw, e, type, track, ns, a, b);
    }
    return 1;
}

/* one lane on its thread track (uuid u) and child tracks u + t */
static ikp_result ikp__pb_lane(const ikp_capture *cap, ikp__pbw *w, ikp__tw *tw, uint32_t s, uint64_t u,
                               ikp__hend **heap, size_t *heap_cap, ikp_error *err)
{
    const ikp_lane_events *ev = &tw->ev[s];
    const ikp__fend *lo = tw->fe ? tw->fe + tw->fe_at[s] : NULL, *hi = tw->fe ? tw->fe + tw->fe_at[s + 1] : NULL, *f = lo;
    size_t k = 0, nh = 0;
    if (!ikp__grow(&cap->alloc, (void **)heap, heap_cap, ev->count, sizeof(ikp__hend))) return ikp__oom(err);
    while (k < ev->count || nh) {
        const ikp_event *e = k < ev->count ? &ev->events[k] : NULL;
        int64_t s0 = e ? ikp__ns(e->start_ps) : 0;
        const ikp__fend *a = f, *b = f;
        if (nh && (!e || (*heap)[0].ns <= s0)) {
            ikp__hend h = ikp__heap_pop(*heap, &nh);
            const ikp_event *x = &ev->events[h.idx];
            b = lo ? ikp__fends_of(lo, hi, h.idx, &a) : a;
            if (!ikp__pb_event(cap, w, tw, NULL, IKP__PB_SLICE_END, x->track ? u + x->track : 0, h.ns, a, b))
                return ikp__oom(err);
            continue;
        }
        while (b < hi && b->idx == k) b++;
        f = b;
        if (!ikp__pb_event(cap, w, tw, e, e->kind == IKP_EVENT_REGION ? IKP__PB_SLICE_BEGIN : IKP__PB_INSTANT,
                           e->track ? u + e->track : 0, s0, a, b))
            return ikp__oom(err);
        if (e->kind == IKP_EVENT_REGION) {
            ikp__hend h;
            h.ns = ikp__ns(e->end_ps) < s0 ? s0 : ikp__ns(e->end_ps);
            h.idx = (uint32_t)k;
            ikp__heap_push(*heap, &nh, h);
        }
        k++;
    }
    return IKP_OK;
}

/* the launch's group: "GPU 0: launch (ikp capture, 528 lanes)"; in a
   merged trace the capture's label leads */
static const char *ikp__launch_name(char *t, size_t n, const ikp__part *part, const ikp_capture *cap)
{
    char g[128], no[32] = "";
    size_t k;
    if (part && part->label) snprintf(g, sizeof g, "%s: ", part->label);
    else if (cap->info.device_known) {
        ikp__label0(1, cap->device.host, cap->device.rank, cap->device.ordinal, cap->device.uuid, 0, 0, g,
                    sizeof g - 2);
        strcat(g, ": ");
    } else g[0] = 0;
    if (cap->info.launch) snprintf(no, sizeof no, " %llu", (unsigned long long)cap->info.launch);
    snprintf(t, n, "%slaunch%s (%s capture, %u lane%s)", g, no, ikp_format_name(cap->format),
             cap->info.active_lanes, cap->info.active_lanes == 1 ? "" : "s");
    k = strlen(t);
    if (cap->info.claimed_twice && k + 3 < n) { /* records of an earlier launch */
        t[k] = ':';
        t[k + 1] = ' ';
        ikp_capture_stale(&cap->info, t + k + 2, n - k - 2);
    }
    return t;
}

/* the writer's buffers (output, interning) and the walk over lanes; on a
   failure nothing is left allocated */
static ikp_result ikp__pb_start(const ikp_capture *cap, const ikp_trace_options *opt, ikp__pbw *w, ikp__tw *tw,
                                ikp_error *err)
{
    ikp_result r;
    memset(w, 0, sizeof *w);
    w->o.buf = (char *)ikp__alloc(&cap->alloc, 1 << 16);
    w->iid = (uint32_t *)ikp__alloc(&cap->alloc, 3 * IKP_WIRE_MAX_EVENTS * sizeof(uint32_t));
    w->iid_gen = (uint32_t *)ikp__alloc(&cap->alloc, 3 * IKP_WIRE_MAX_EVENTS * sizeof(uint32_t));
    if (!w->o.buf || !w->iid || !w->iid_gen || !ikp__pb_reserve(cap, w, 0)) r = ikp__oom(err);
    else r = ikp__tw_init(tw, cap, opt, err);
    if (r != IKP_OK) {
        ikp__pbw_free(cap, w);
        return r;
    }
    memset(w->iid_gen, 0, 3 * IKP_WIRE_MAX_EVENTS * sizeof(uint32_t));
    return IKP_OK;
}

/* The tracks before the blocks': what the times are and how well the lanes
   line up (a trace of one capture; a merged trace says both its own way),
   then the launch, whose uuid (returned) is the blocks' tracks' parent. */
static uint64_t ikp__pb_opening(ikp__pbw *w, const ikp_capture *cap, const ikp_trace_options *opt,
                                const ikp__part *part)
{
    char nm[512];
    unsigned char *p;
    uint64_t root;
    if (!part && opt && opt->time_note) { /* what the times are: the name of a track of its own */
        p = w->a;
        p = ikp__pb_field(p, IKP__PB_TD_UUID, w->next_uuid++);
        p = ikp__pb_str(p, IKP__PB_TD_NAME, opt->time_note, w->t);
        ikp__pb_descriptor(w, w->a, (size_t)(p - w->a));
    }
    if (!part) { /* how well its lanes line up: a track of its own */
        char pl[640], track[680];
        p = w->a;
        ikp_capture_placement(&cap->info, pl, sizeof pl, NULL);
        snprintf(track, sizeof track, "placement: %s", pl);
        p = ikp__pb_field(p, IKP__PB_TD_UUID, w->next_uuid++);
        p = ikp__pb_str(p, IKP__PB_TD_NAME, track, w->t);
        ikp__pb_descriptor(w, w->a, (size_t)(p - w->a));
    }
    /* the launch: the blocks' (by SM: the SMs') tracks are its children */
    p = w->a;
    root = w->next_uuid++;
    p = ikp__pb_field(p, IKP__PB_TD_UUID, root);
    p = ikp__pb_str(p, IKP__PB_TD_NAME, ikp__launch_name(nm, sizeof nm, part, cap), w->t);
    p = ikp__pb_field(p, IKP__PB_TD_CHILD_ORDER, IKP__PB_EXPLICIT);
    ikp__pb_descriptor(w, w->a, (size_t)(p - w->a));
    return root;
}

/* the track of lane l's block (by SM: its SM), under the launch's (root),
   when the lane is the first of it */
static void ikp__pb_block_track(ikp__pbw *w, const ikp_capture *cap, const ikp__part *part, const ikp__lane *l,
                                ikp_group_by by, uint64_t pid, uint64_t pid_base, uint64_t root)
{
    char nm[512];
    unsigned char *p = w->a;
    p = ikp__pb_field(p, IKP__PB_TD_UUID, IKP__PB_BLOCK(pid));
    p = ikp__pb_field(p, IKP__PB_TD_PARENT, root);
    p = ikp__pb_str(p, IKP__PB_TD_NAME, ikp__part_process_name(nm, sizeof nm, part, cap, l, by), w->t);
    p = ikp__pb_field(p, IKP__PB_TD_RANK, (pid - pid_base) & 0x7FFFFFFF);
    p = ikp__pb_field(p, IKP__PB_TD_CHILD_ORDER, IKP__PB_EXPLICIT);
    ikp__pb_descriptor(w, w->a, (size_t)(p - w->a));
}

/* lane i's tracks, uuids u.. (one a track of its events): the first under
   its block's (by SM: its SM's) track, ordered by its group (by SM: its
   index); the further ones (regions that overlap without nesting) under
   the first */
static void ikp__pb_lane_tracks(ikp__pbw *w, const ikp_capture *cap, const ikp__lane *l, uint32_t i, ikp_group_by by,
                                uint64_t pid, uint64_t u, uint32_t num_tracks)
{
    char nm[512];
    uint64_t rank = by == IKP_BY_BLOCK ? l->pub.group : i;
    uint32_t t;
    for (t = 0; t < num_tracks; t++) {
        unsigned char *p = w->a;
        p = ikp__pb_field(p, IKP__PB_TD_UUID, u + t);
        ikp__thread_name(nm, sizeof nm, cap, l, i, by, t);
        if (t == 0) { /* the lane, under its block (by SM: its SM) */
            p = ikp__pb_field(p, IKP__PB_TD_PARENT, IKP__PB_BLOCK(pid));
            p = ikp__pb_str(p, IKP__PB_TD_NAME, nm, w->t);
            p = ikp__pb_field(p, IKP__PB_TD_RANK, rank > 0x7FFFFFFF ? 0x7FFFFFFF : rank);
            p = ikp__pb_field(p, IKP__PB_TD_CHILD_ORDER, IKP__PB_EXPLICIT);
        } else { /* a lane's further tracks (overlapping regions), under it */
            p = ikp__pb_field(p, IKP__PB_TD_PARENT, u);
            p = ikp__pb_str(p, IKP__PB_TD_NAME, nm, w->t);
            p = ikp__pb_field(p, IKP__PB_TD_RANK, t);
        }
        ikp__pb_descriptor(w, w->a, (size_t)(p - w->a));
    }
}

/* the block's counter tracks (under the track of block_pid): per counter
   event, the regions of it open; each its own interning generation */
static ikp_result ikp__pb_counters(ikp__pbw *w, ikp__tw *tw, const ikp_capture *cap, const ikp_trace_options *opt,
                                   ikp_group_by by, uint64_t block_pid, ikp_error *err)
{
    ikp_result r = IKP_OK;
    char nm[512];
    uint32_t c;
    for (c = 0; r == IKP_OK && opt && c < opt->num_counters; c++) {
        size_t k;
        ikp__lane lt;
        uint64_t cu = w->next_uuid;
        unsigned char *p;
        ikp__counter_name(nm, sizeof nm, cap, by, opt->counters[c], ikp__get_lane(cap, tw->lane[0], &lt)->pub.block);
        if ((r = ikp__tw_counter(tw, opt->counters[c], err)) != IKP_OK || !tw->ncs) continue;
        tw->st.counter_tracks++;
        w->next_uuid++;
        ikp__pb_clear(w, 0);
        p = w->a;
        p = ikp__pb_field(p, IKP__PB_TD_UUID, cu);
        p = ikp__pb_field(p, IKP__PB_TD_PARENT, IKP__PB_BLOCK(block_pid));
        p = ikp__pb_str(p, IKP__PB_TD_NAME, nm, w->t);
        p = ikp__pb_bytes(p, IKP__PB_TD_COUNTER, "", 0);
        ikp__pb_descriptor(w, w->a, (size_t)(p - w->a));
        for (k = 0; k < tw->ncs; k++) {
            p = w->a;
            p = ikp__pb_field(p, IKP__PB_TE_TYPE, IKP__PB_COUNTER);
            p = ikp__pb_field(p, IKP__PB_TE_TRACK, cu);
            p = ikp__pb_field(p, IKP__PB_TE_COUNTER, (uint64_t)tw->cs[k].d);
            ikp__pb_emit(w, tw->cs[k].ns, w->a, (size_t)(p - w->a), 0);
        }
    }
    return r;
}

static ikp_result ikp__perfetto(const ikp_capture *cap, const ikp_trace_options *opt, const ikp__part *part,
                                ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_write_perfetto(const ikp_capture *cap, const ikp_trace_options *opt,
                                      ikp_write_fn fn, void *user, ikp_error *err)
{
    return ikp__perfetto(cap, opt, NULL, fn, user, err);
}

static ikp_result ikp__perfetto(const ikp_capture *cap, const ikp_trace_options *opt, const ikp__part *part,
                                ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__pbw w;
    ikp__tw tw;
    ikp__hend *heap = NULL;
    size_t heap_cap = 0;
    ikp_result r;
    ikp_group_by by = opt ? opt->by : IKP_BY_BLOCK;
    uint32_t s;
    uint64_t last_pid = UINT64_MAX, pid_base = (part ? part->pid_base : 0) + (opt ? opt->pid_base : 0), root;
    uint8_t *sm_seen = NULL;
    if (!cap || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    if ((unsigned)by >= (unsigned)IKP_BY_COUNT)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "unknown grouping %d", (int)by);
    r = ikp__trace_begin(cap, by, &sm_seen, err);
    if (r != IKP_OK) return r;
    if ((r = ikp__pb_start(cap, opt, &w, &tw, err)) != IKP_OK) {
        ikp__free(&cap->alloc, sm_seen);
        return r;
    }
    ikp__out_init(&w.o, fn, user, w.o.buf, 1 << 16);
    w.next_uuid = part ? *part->uuid : IKP__PB_UUID0;
    w.base_ns = opt ? opt->time_base_ns : 0;
    w.seq = part && part->seq ? part->seq : IKP__PB_SEQ;
    root = ikp__pb_opening(&w, cap, opt, part);
    while (!w.o.failed && (r = ikp__tw_next(&tw, err)) == IKP_OK && tw.n) {
        uint64_t block_pid = 0;
        for (s = 0; s < tw.n && r == IKP_OK; s++) {
            ikp__lane lt;
            uint32_t i = tw.lane[s];
            const ikp__lane *l = ikp__get_lane(cap, i, &lt);
            uint64_t pid = ikp__trace_pid(l, by), u = w.next_uuid;
            int fresh = ikp__new_pid(sm_seen, &last_pid, pid);
            pid += pid_base;
            w.next_uuid += tw.ev[s].num_tracks;
            if (s == 0) block_pid = pid;
            if (fresh) ikp__pb_block_track(&w, cap, part, l, by, pid, pid_base, root);
            ikp__pb_clear(&w, u);
            ikp__pb_lane_tracks(&w, cap, l, i, by, pid, u, tw.ev[s].num_tracks);
            r = ikp__pb_lane(cap, &w, &tw, s, u, &heap, &heap_cap, err);
        }
        if (r == IKP_OK) r = ikp__pb_counters(&w, &tw, cap, opt, by, block_pid, err);
    }
    ikp__flush(&w.o);
    if (part) *part->uuid = w.next_uuid;
    if (r == IKP_OK && opt && opt->stats && !w.o.failed) *opt->stats = tw.st;
    ikp__tw_free(&tw);
    ikp__free(&cap->alloc, heap);
    ikp__pbw_free(cap, &w);
    ikp__free(&cap->alloc, sm_seen);
    if (r != IKP_OK) return r;
    if (w.o.failed) return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the trace failed");
    ikp__ok(err);
    return IKP_OK;
}

IKP_DEF ikp_result ikp_write_perfetto_file(const ikp_capture *cap, const ikp_trace_options *opt,
                                           FILE *f, ikp_error *err)
{
    return ikp__trace_file(cap, opt, ikp_write_perfetto, f, err);
}

#endif /* IKP_NO_PERFETTO */

/* >>output-impl: output files; the writers to a path */
static uint64_t ikp__mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

IKP_DEF ikp_result ikp_output_open(ikp_output *out, const char *path, ikp_error *err)
{
    size_t n;
    unsigned attempt;
    uint64_t seed;
    int e = 0;
    if (!out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL output");
    memset(out, 0, sizeof *out);
    out->fd_ = -1;
    if (!path) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL path");
    if (!path[0]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "empty output path");
    out->path_ = path;
    n = strlen(path);
    if (n + 32 > sizeof out->tmp_path_)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "output path too long (%llu bytes)", (unsigned long long)n);
#if defined(__unix__) || defined(__APPLE__)
    {
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            return ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot write '%s': it is a directory", path);
        if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) { /* a device or a FIFO: written in place */
            out->fd_ = open(path, O_WRONLY);
            if (out->fd_ < 0) {
                e = errno;
                return ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot open '%s' for writing: %s", path, strerror(e));
            }
            out->in_place_ = 1;
            return IKP_OK;
        }
    }
#endif
    /* a fresh name each attempt: the process, the time, this call's stack */
    seed = ikp__mix64((uint64_t)(uintptr_t)out ^ ((uint64_t)time(NULL) << 20) ^ (uint64_t)clock());
#if defined(__unix__) || defined(__APPLE__)
    seed = ikp__mix64(seed ^ (uint64_t)getpid());
#endif
    for (attempt = 0; attempt < 100; attempt++) {
        uint64_t x = ikp__mix64(seed + attempt);
        char *p = out->tmp_path_ + n;
        int i;
        memcpy(out->tmp_path_, path, n);
        *p++ = '.';
        for (i = 0; i < 12; i++) { *p++ = "0123456789abcdefghijklmnopqrstuv"[x & 31]; x >>= 5; }
        memcpy(p, ".ikp-tmp", 9);
#if defined(__unix__) || defined(__APPLE__)
        /* O_EXCL: fails on any existing name, a symbolic link included (never followed) */
        out->fd_ = open(out->tmp_path_, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (out->fd_ >= 0) return IKP_OK;
        e = errno;
        if (e != EEXIST) break;
#else
        {
            FILE *f = fopen(out->tmp_path_, "rb");
            if (f) { fclose(f); continue; }
            out->file_ = fopen(out->tmp_path_, "wb");
            if (out->file_) return IKP_OK;
            e = errno;
            break;
        }
#endif
    }
    out->tmp_path_[n] = 0;
    ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot create a temporary file next to '%s': %s", path,
              e ? strerror(e) : "no free name");
    out->tmp_path_[0] = 0;
    return IKP_ERR_IO;
}

IKP_DEF int ikp_output_write(void *output, const void *data, size_t size)
{
    ikp_output *out = (ikp_output *)output;
    const char *p = (const char *)data;
    if (!out || out->errno_) return 1;
#if defined(__unix__) || defined(__APPLE__)
    while (size) {
        ssize_t w = write(out->fd_, p, size > (1u << 30) ? (1u << 30) : size);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { out->errno_ = w < 0 ? errno : EIO; return 1; }
        p += w;
        size -= (size_t)w;
    }
    return 0;
#else
    if (fwrite(p, 1, size, (FILE *)out->file_) != size) { out->errno_ = errno ? errno : EIO; return 1; }
    return 0;
#endif
}

static int ikp__output_close(ikp_output *out)
{
    int rc = 0;
#if defined(__unix__) || defined(__APPLE__)
    if (out->fd_ >= 0 && close(out->fd_) != 0) rc = errno ? errno : EIO;
    out->fd_ = -1;
#else
    if (out->file_ && fclose((FILE *)out->file_) != 0) rc = errno ? errno : EIO;
    out->file_ = NULL;
#endif
    return rc;
}

IKP_DEF void ikp_output_abort(ikp_output *out)
{
    if (!out) return;
    ikp__output_close(out);
    if (out->tmp_path_[0]) remove(out->tmp_path_);
    out->tmp_path_[0] = 0;
}

IKP_DEF ikp_result ikp_output_commit(ikp_output *out, ikp_error *err)
{
    int e;
    if (!out || !out->path_) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "output not open");
    e = out->errno_;
    if (ikp__output_close(out) && !e) e = errno ? errno : EIO;
    if (e) {
        ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot write '%s': %s", out->path_, strerror(e));
        ikp_output_abort(out);
        return IKP_ERR_IO;
    }
    if (!out->in_place_ && rename(out->tmp_path_, out->path_) != 0) {
        e = errno;
        ikp__fail(err, IKP_ERR_IO, -1, -1, "cannot replace '%s': %s", out->path_, strerror(e));
        ikp_output_abort(out);
        return IKP_ERR_IO;
    }
    out->tmp_path_[0] = 0;
    return IKP_OK;
}

/* writes through body() to an ikp_output: all or nothing */
typedef ikp_result (*ikp__body_fn)(void *ctx, ikp_write_fn fn, void *user, ikp_error *err);
IKP_DEF ikp_result ikp_output_end(ikp_output *out, ikp_result result, ikp_error *err)
{
    if (!out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL output");
    if (result != IKP_OK && !out->errno_) { ikp_output_abort(out); return result; } /* err: the writer's */
    return ikp_output_commit(out, err); /* a failed write: its reason, the file removed */
}

IKP_DEF const char *ikp_output_temp_path(const ikp_output *out) { return out ? out->tmp_path_ : ""; }

static ikp_result ikp__write_path(const char *path, ikp__body_fn body, void *ctx, ikp_error *err)
{
    ikp_output out;
    ikp_result r = ikp_output_open(&out, path, err);
    if (r != IKP_OK) return r;
    return ikp_output_end(&out, body(ctx, ikp_output_write, &out, err), err);
}

typedef struct ikp__trace_ctx {
    const ikp_capture *cap;
    const ikp_trace_options *opt;
    ikp__trace_fn write;
} ikp__trace_ctx;
static ikp_result ikp__trace_body(void *ctx, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__trace_ctx *c = (ikp__trace_ctx *)ctx;
    return c->write(c->cap, c->opt, fn, user, err);
}
static ikp_result ikp__trace_path(const ikp_capture *cap, const ikp_trace_options *opt, ikp__trace_fn write,
                                  const char *path, ikp_error *err)
{
    ikp__trace_ctx c;
    if (!cap) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL capture");
    c.cap = cap;
    c.opt = opt;
    c.write = write;
    return ikp__write_path(path, ikp__trace_body, &c, err);
}

IKP_DEF int ikp_is_perfetto_path(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return (n > 8 && strcmp(path + n - 8, ".pftrace") == 0) ||
           (n > 15 && strcmp(path + n - 15, ".perfetto-trace") == 0);
}

IKP_DEF ikp_result ikp_write_chrome_path(const ikp_capture *cap, const ikp_trace_options *opt,
                                         const char *path, ikp_error *err)
{
    return ikp__trace_path(cap, opt, ikp_write_chrome, path, err);
}

#ifndef IKP_NO_PERFETTO
IKP_DEF ikp_result ikp_write_perfetto_path(const ikp_capture *cap, const ikp_trace_options *opt,
                                           const char *path, ikp_error *err)
{
    return ikp__trace_path(cap, opt, ikp_write_perfetto, path, err);
}
#endif

/* >>merge-links: what links captures; a capture given twice */
#ifndef IKP_NO_MERGE
/* a peer measurement as a reading of this GPU against the peer's clock */
static ikp_clock_sync ikp__peer_as_sync(const ikp_peer_clock *p)
{
    ikp_clock_sync c;
    c.gpu_ns = p->gpu_ns;
    c.host_ns = (int64_t)(p->gpu_ns + (uint64_t)p->offset_ns);
    c.uncertainty_ns = p->uncertainty_ns;
    c.reserved = 0;
    return c;
}

/* What placing and naming a capture takes from it (ikp__link_data_of):
   what it offers the links of a merge, read from its readings once
   (linear in them): its clock against the host's at its time 0, and
   against each GPU it measured over peer memory (sorted by that GPU); and
   what tells it apart and names it. An export keeps these alone between
   reading a file to place it and reading it again to write its rows. */
typedef struct ikp__peer_off { uint8_t uuid[16]; int64_t off; uint64_t unc; } ikp__peer_off;
typedef struct ikp__link_data {
    int64_t host_off;
    uint64_t host_unc;
    ikp__peer_off *peers;
    const uint64_t *words;  /* its words, to find a buffer given twice; NULL: hash stands for them */
    uint64_t num_words, hash;
    uint64_t rest_hash;     /* the file's bytes around its words (ikp_capture's) */
    uint64_t gpu_zero_ns;
    int64_t host_zero_ns;   /* with host_time_known */
    const char *host_name;  /* "" when not known */
    const char *align_start;/* how its texts name that option */
    uint32_t num_peers;
    int32_t gpu, host;      /* the GPU's and the host's number among the captures' (-1: none named) */
    uint32_t host_zero_uncertainty_ns;
    uint32_t clock_syncs;
    int32_t rank, ordinal;
    uint8_t uuid[16];
    uint8_t device_known, host_time_known, gpu_time_known;
} ikp__link_data;

/* numbers the captures' GPUs and hosts (ld[i].gpu, .host): equal numbers
   for equal UUIDs and host names, -1 where a capture names none. O(n log
   n); 0, or -1 when out of memory. */
typedef struct ikp__cap_key { const ikp__link_data *c; uint32_t i; } ikp__cap_key;
static int ikp__cmp_by_uuid(const void *pa, const void *pb)
{
    const ikp__cap_key *a = (const ikp__cap_key *)pa, *b = (const ikp__cap_key *)pb;
    return memcmp(a->c->uuid, b->c->uuid, 16);
}
static int ikp__cmp_by_host(const void *pa, const void *pb)
{
    const ikp__cap_key *a = (const ikp__cap_key *)pa, *b = (const ikp__cap_key *)pb;
    return strcmp(a->c->host_name, b->c->host_name);
}
static int ikp__number_devices(const ikp_allocator *a, uint32_t n, ikp__link_data *ld)
{
    ikp__cap_key *x = (ikp__cap_key *)ikp__alloc(a, (size_t)n * sizeof *x);
    uint32_t i, m, pass;
    if (!x) return -1;
    for (pass = 0; pass < 2; pass++) {
        for (i = 0, m = 0; i < n; i++) {
            const ikp__link_data *c = &ld[i];
            int named = c->device_known && (pass ? c->host_name[0] != 0 : !ikp__uuid_zero(c->uuid));
            if (pass) ld[i].host = -1; else ld[i].gpu = -1;
            if (named) { x[m].c = c; x[m++].i = i; }
        }
        ikp__sort(x, m, sizeof *x, pass ? ikp__cmp_by_host : ikp__cmp_by_uuid);
        for (i = 0; i < m; i++) {
            int32_t id = i && !(pass ? ikp__cmp_by_host : ikp__cmp_by_uuid)(&x[i - 1], &x[i])
                             ? (pass ? ld[x[i - 1].i].host : ld[x[i - 1].i].gpu) : (int32_t)i;
            if (pass) ld[x[i].i].host = id; else ld[x[i].i].gpu = id;
        }
    }
    ikp__free(a, x);
    return 0;
}

typedef struct ikp__peer_ix { const ikp_peer_clock *p; uint32_t i; } ikp__peer_ix;
static int ikp__cmp_peer_ix(const void *pa, const void *pb)
{
    const ikp__peer_ix *a = (const ikp__peer_ix *)pa, *b = (const ikp__peer_ix *)pb;
    int c = memcmp(a->p->peer_uuid, b->p->peer_uuid, 16);
    return c ? c : a->i < b->i ? -1 : a->i > b->i;
}

/* cap's link data: what names it and tells it apart, and with links its
   clock's offsets (peers allocated with a); 0, or -1 when out of memory.
   Its words and host name stay cap's. */
static int ikp__link_data_of(const ikp_capture *cap, const ikp_allocator *a, ikp__link_data *ld, int links)
{
    uint32_t n = cap->info.peer_clocks, k, j;
    ikp__peer_ix *ix;
    ikp_clock_sync *c;
    memset(ld, 0, sizeof *ld);
    ld->gpu = ld->host = -1;
    ld->words = cap->words;
    ld->num_words = cap->num_words;
    ld->gpu_zero_ns = cap->info.gpu_zero_ns;
    ld->host_time_known = cap->info.host_time_known != 0;
    ld->host_zero_ns = cap->info.host_zero_ns;
    ld->host_zero_uncertainty_ns = cap->info.host_zero_uncertainty_ns;
    ld->clock_syncs = cap->info.clock_syncs;
    ld->device_known = cap->info.device_known != 0;
    ld->gpu_time_known = cap->info.gpu_time_known != 0;
    memcpy(ld->uuid, cap->device.uuid, 16);
    ld->rank = cap->device.rank;
    ld->ordinal = cap->device.ordinal;
    ld->host_name = cap->device.host;
    ld->align_start = IKP__OPT(&cap->info.option_names, align_start);
    if (!links) return 0;
    if (cap->info.clock_syncs)
        ikp__offset_at(cap->clock, cap->info.clock_syncs, cap->info.gpu_zero_ns, &ld->host_off, &ld->host_unc);
    if (!n) return 0;
    ix = (ikp__peer_ix *)ikp__alloc(a, (size_t)n * sizeof *ix);
    c = (ikp_clock_sync *)ikp__alloc(a, (size_t)n * sizeof *c);
    ld->peers = (ikp__peer_off *)ikp__alloc(a, (size_t)n * sizeof *ld->peers);
    if (!ix || !c || !ld->peers) {
        ikp__free(a, ix);
        ikp__free(a, c);
        ikp__free(a, ld->peers);
        ld->peers = NULL;
        return -1;
    }
    for (k = 0; k < n; k++) { ix[k].p = &cap->peers[k]; ix[k].i = k; }
    ikp__sort(ix, n, sizeof *ix, ikp__cmp_peer_ix); /* by GPU, each GPU's in the order taken */
    for (k = 0; k < n; k = j) {
        ikp__peer_off *po = &ld->peers[ld->num_peers++];
        for (j = k; j < n && !memcmp(ix[j].p->peer_uuid, ix[k].p->peer_uuid, 16); j++) c[j - k] = ikp__peer_as_sync(ix[j].p);
        memcpy(po->uuid, ix[k].p->peer_uuid, 16);
        ikp__offset_at(c, j - k, cap->info.gpu_zero_ns, &po->off, &po->unc); /* cap's clock minus that GPU's */
    }
    ikp__free(a, ix);
    ikp__free(a, c);
    return 0;
}

/* x's measurement of the GPU uuid, or NULL */
static const ikp__peer_off *ikp__peer_find(const ikp__link_data *x, const uint8_t *uuid)
{
    uint32_t lo = 0, hi = x->num_peers;
    while (lo < hi) {
        uint32_t m = lo + (hi - lo) / 2;
        int c = memcmp(x->peers[m].uuid, uuid, 16);
        if (!c) return &x->peers[m];
        if (c < 0) lo = m + 1; else hi = m;
    }
    return NULL;
}

/* capture x's measurement of capture y's GPU, or NULL */
static const ikp__peer_off *ikp__peer_of(const ikp__link_data *ld, uint32_t x, uint32_t y)
{
    return ld[y].gpu < 0 || !ld[x].num_peers ? NULL : ikp__peer_find(&ld[x], ld[y].uuid);
}

/* The best link between captures i and j of kind only (IKP_ALIGN_COUNT:
   of any kind): *val = j's clock minus i's, *unc its uncertainty; returns
   its kind (IKP_ALIGN_COUNT: none). */
static int ikp__merge_link(const ikp__link_data *ld, uint32_t i, uint32_t j, int only, int64_t *val, uint64_t *unc)
{
    int via = IKP_ALIGN_COUNT, side;
    *unc = UINT64_MAX;
    *val = 0;
    if ((only == IKP_ALIGN_COUNT || only == IKP_ALIGN_SAME_GPU) && ld[i].gpu >= 0 && ld[i].gpu == ld[j].gpu) {
        *unc = 0;
        return IKP_ALIGN_SAME_GPU;
    }
    for (side = 0; side < 2 && (only == IKP_ALIGN_COUNT || only == IKP_ALIGN_PEER); side++) {
        /* a's measurements of b, then b's of a */
        const ikp__peer_off *po = ikp__peer_of(ld, side ? j : i, side ? i : j);
        if (po && po->unc < *unc) { *unc = po->unc; *val = side ? po->off : -po->off; via = IKP_ALIGN_PEER; }
    }
    if ((only == IKP_ALIGN_COUNT || only == IKP_ALIGN_HOST) && ld[i].clock_syncs && ld[j].clock_syncs &&
        (ld[i].host < 0 || ld[j].host < 0 || ld[i].host == ld[j].host)) {
        if (ld[i].host_unc + ld[j].host_unc < *unc) {
            *unc = ld[i].host_unc + ld[j].host_unc;
            *val = ld[j].host_off - ld[i].host_off;
            via = IKP_ALIGN_HOST;
        }
    }
    return via;
}

/* Each link between captures i and j, one at a time, k = 0 .. 3: the
   same GPU, i's measurement of j's GPU, j's of i's (each peer
   measurement a link of its own), both captures' host readings; as
   ikp__merge_link, which keeps the better measurement of the two */
#define IKP__LINKS_EACH 4
static int ikp__merge_link_each(const ikp__link_data *ld, uint32_t i, uint32_t j, int k, int64_t *val, uint64_t *unc)
{
    if (k == 1 || k == 2) {
        const ikp__peer_off *po = ikp__peer_of(ld, k == 1 ? i : j, k == 1 ? j : i);
        if (!po) return IKP_ALIGN_COUNT;
        *unc = po->unc;
        *val = k == 1 ? -po->off : po->off;
        return IKP_ALIGN_PEER;
    }
    return ikp__merge_link(ld, i, j, k ? IKP_ALIGN_HOST : IKP_ALIGN_SAME_GPU, val, unc);
}

static const char *const ikp__via_text[IKP_ALIGN_COUNT] = {
    "the reference", "the same GPU's clock", "a measurement over peer memory",
    "both GPUs' readings against the host clock", "raw %globaltimer (not aligned)",
    "its first record"};

/* a's largest disagreement so far (by kind, with capture `with`) */
static void ikp__disagree(ikp_alignment *a, uint64_t by, ikp_align_via via, uint32_t with)
{
    if (by <= a->disagreement_ns) return;
    a->disagreement_ns = by > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)by;
    a->disagree_via = via;
    a->disagree_with = with;
}

/* captures sorted by (time 0, words), so that a buffer given twice is a
   neighbour of itself */
typedef struct ikp__cap_ix { const ikp__link_data *c; uint32_t i; } ikp__cap_ix;
static int ikp__cmp_cap_ix(const void *pa, const void *pb)
{
    const ikp__cap_ix *a = (const ikp__cap_ix *)pa, *b = (const ikp__cap_ix *)pb;
    if (a->c->gpu_zero_ns != b->c->gpu_zero_ns) return a->c->gpu_zero_ns < b->c->gpu_zero_ns ? -1 : 1;
    if (a->c->num_words != b->c->num_words) return a->c->num_words < b->c->num_words ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}
static int ikp__same_buffer(const ikp__link_data *a, const ikp__link_data *b)
{
    return a->gpu_zero_ns == b->gpu_zero_ns && a->num_words == b->num_words &&
           !(a->device_known && b->device_known && memcmp(a->uuid, b->uuid, 16) != 0) &&
           (a->words && b->words ? memcmp(a->words, b->words, a->num_words * 8) == 0 : a->hash == b->hash);
}

/* The first capture (by index) that repeats an earlier one, and the first
   it repeats: *i, *j (j < i); 0 when none, -1 when out of memory.
   O(n log n) unless many captures share a time 0 and a size. */
static int ikp__repeated(const ikp_allocator *al, const ikp__link_data *ld, uint32_t n, uint32_t *ri, uint32_t *rj)
{
    ikp__cap_ix *x = (ikp__cap_ix *)ikp__alloc(al, (size_t)n * sizeof *x);
    uint32_t k, g, e, found = 0;
    *ri = *rj = 0;
    if (!x) return -1;
    for (k = 0; k < n; k++) { x[k].c = &ld[k]; x[k].i = k; }
    ikp__sort(x, n, sizeof *x, ikp__cmp_cap_ix);
    for (g = 0; g < n; g = e) { /* a run of one time 0 and size, by index */
        uint32_t a, b;
        for (e = g + 1; e < n && x[e].c->gpu_zero_ns == x[g].c->gpu_zero_ns && x[e].c->num_words == x[g].c->num_words;
             e++) {}
        for (a = g + 1; a < e; a++)
            for (b = g; b < a; b++)
                if ((!found || x[a].i < *ri || (x[a].i == *ri && x[b].i < *rj)) && ikp__same_buffer(x[a].c, x[b].c)) {
                    *ri = x[a].i;
                    *rj = x[b].i;
                    found = 1;
                    break;
                }
    }
    ikp__free(al, x);
    return (int)found;
}

/* Captures to name: open (caps) or by their link data (ld, when not
   NULL); capture i's link data (tmp filled for an open one), NULL for a
   NULL capture */
typedef struct ikp__pins { const ikp_capture *const *caps; const ikp__link_data *ld; } ikp__pins;
static const ikp__link_data *ikp__pin(const ikp__pins *s, uint32_t i, ikp__link_data *tmp)
{
    if (s->ld) return &s->ld[i];
    if (!s->caps[i]) return NULL;
    ikp__link_data_of(s->caps[i], NULL, tmp, 0);
    return tmp;
}

/* 1 if the captures name two hosts or more (labels then say which) */
static int ikp__many_hosts(const ikp__pins *s, uint32_t n)
{
    const char *h = NULL;
    ikp__link_data t;
    uint32_t i;
    for (i = 0; i < n; i++) {
        const ikp__link_data *x = ikp__pin(s, i, &t);
        if (!x || !x->device_known || !x->host_name[0]) continue;
        if (!h) h = x->host_name;
        else if (strcmp(h, x->host_name) != 0) return 1;
    }
    return 0;
}
static void ikp__pin_label0(const ikp__link_data *x, uint32_t index, int hosts, char *buf, size_t size)
{
    ikp__label0(x->device_known, x->host_name, x->rank, x->ordinal, x->uuid, index, hosts, buf, size);
}

/* capture index's label: its ikp__label0 (at most 127 bytes), " #k" added
   when dup, cut to size - 1 bytes */
static void ikp__label_text(const ikp__link_data *x, uint32_t index, int hosts, int dup, char *buf, size_t size)
{
    char a[128 + 16];
    size_t n;
    if (!size) return;
    ikp__pin_label0(x, index, hosts, a, 128);
    n = strlen(a);
    if (dup) n += (size_t)snprintf(a + n, sizeof a - n, " #%u", index + 1);
    if (n >= size) n = size - 1;
    memcpy(buf, a, n);
    buf[n] = 0;
}

static uint64_t ikp__fnv(const char *s, size_t n)
{
    uint64_t h = IKP__FNV_BASIS;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * IKP__FNV_PRIME;
    return h;
}
#ifndef IKP_NO_EXPORT
/* h, a 64-bit FNV-1a hash word by word, continued over w[0..n) (the export's: it tells captures apart) */
static uint64_t ikp__words_hash_on(uint64_t h, const uint64_t *w, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ w[i]) * IKP__FNV_PRIME;
    return h;
}
/* the 64-bit FNV-1a hash of words, word by word */
static uint64_t ikp__words_hash(const uint64_t *w, size_t n)
{
    return ikp__words_hash_on(IKP__FNV_BASIS, w, n);
}
#endif

/* Which captures' labels another's repeats (dup[k] = 1: capture k's label
   takes " #k"), O(n log n): labels hashed and sorted, the text compared
   within a run of one hash. 0, or -1 when out of memory. */
typedef struct ikp__lab { uint64_t h; uint32_t i; } ikp__lab;
static int ikp__cmp_lab(const void *pa, const void *pb)
{
    const ikp__lab *a = (const ikp__lab *)pa, *b = (const ikp__lab *)pb;
    if (a->h != b->h) return a->h < b->h ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}
static int ikp__label_dups(const ikp__pins *s, uint32_t n, int hosts, const ikp_allocator *al, uint8_t *dup)
{
    ikp__lab *l = (ikp__lab *)ikp__alloc(al, (size_t)n * sizeof *l);
    ikp__link_data t;
    char a[128], b[128];
    uint32_t i, j, m, g;
    if (!l) return -1;
    for (i = 0; i < n; i++) {
        ikp__pin_label0(ikp__pin(s, i, &t), i, hosts, a, sizeof a);
        l[i].h = ikp__fnv(a, strlen(a));
        l[i].i = i;
        dup[i] = 0;
    }
    ikp__sort(l, n, sizeof *l, ikp__cmp_lab);
    for (g = 0; g < n; g = j) { /* a run of one hash: the labels equal to another's (any text, should two hash alike) */
        for (j = g + 1; j < n && l[j].h == l[g].h; j++) {}
        for (i = g; i < j && j - g > 1; i++) {
            if (dup[l[i].i]) continue;
            ikp__pin_label0(ikp__pin(s, l[i].i, &t), l[i].i, hosts, a, sizeof a);
            for (m = i + 1; m < j; m++) {
                ikp__pin_label0(ikp__pin(s, l[m].i, &t), l[m].i, hosts, b, sizeof b);
                if (!strcmp(a, b)) dup[l[i].i] = dup[l[m].i] = 1;
            }
        }
    }
    ikp__free(al, l);
    return 0;
}

/* capture index's label among n, O(n) */
static void ikp__label_at(const ikp__pins *s, uint32_t n, uint32_t index, char *buf, size_t size)
{
    char a[128], b[128];
    ikp__link_data t, u;
    const ikp__link_data *x;
    uint32_t i;
    int hosts;
    if (!buf || !size) return;
    buf[0] = 0;
    if (index >= n || !(x = ikp__pin(s, index, &t))) return;
    hosts = ikp__many_hosts(s, n);
    ikp__pin_label0(x, index, hosts, a, sizeof a);
    for (i = 0; i < n; i++) {
        const ikp__link_data *y = i == index ? NULL : ikp__pin(s, i, &u);
        if (!y) continue;
        ikp__pin_label0(y, i, hosts, b, sizeof b);
        if (strcmp(a, b) == 0) break;
    }
    ikp__label_text(x, index, hosts, i < n, buf, size);
}

/* IKP_OK, or IKP_ERR_INVALID_ARGUMENT naming the first capture that
   repeats an earlier one (how is added to the words "the same buffer") */
static ikp_result ikp__refuse_repeated(const ikp_allocator *al, const ikp__link_data *ld, uint32_t n, const char *how,
                                       ikp_error *err)
{
    char la[128], lb[128];
    ikp__pins s;
    uint32_t i, j;
    const int rep = n > 1 ? ikp__repeated(al, ld, n, &i, &j) : 0;
    if (rep < 0) return ikp__oom(err);
    if (!rep) return IKP_OK;
    s.caps = NULL;
    s.ld = ld;
    ikp__label_at(&s, n, i, la, sizeof la);
    ikp__label_at(&s, n, j, lb, sizeof lb);
    return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "%s is %s again (the same buffer%s)", la, lb, how);
}

/* >>merge-graph: a merge's links as lists, without its pairs */
/* The links of a merge without its pairs, O(n + P) words for n captures
   and P peer measurements: each GPU's captures, each GPU's measurements
   by other captures, and the captures with host readings of each host.
   Host list t < nhost: host t's; nhost: those that name no host; nhost +
   1: all of them. A capture that names no host is linked to every host's
   captures: the lists nhost (what named hosts' readings reach) and nhost
   + 1 (what its readings reach) hold those links without listing a pair. */
typedef struct ikp__mg {
    uint32_t ngpu, nhost;
    int32_t *g, *h;          /* a capture's GPU (-1: none named) and host list (-1: none named; -2: no readings) */
    uint32_t *gs, *gm;       /* GPU g's captures: gm[gs[g] .. gs[g + 1]), by index */
    uint32_t *ms, *mk;       /* GPU g's measurements by captures mk[ms[g] .. ms[g + 1]) (by index) */
    const ikp__peer_off **mp;/*   ... each of them mp[...] */
    uint32_t *ps;            /* capture k's peers[e] measured GPU pg[ps[k] + e] (-1: no capture of it) */
    int32_t *pg;
    uint32_t *hs, *hm, *hu;  /* host list t: hm[hs[t] .. hs[t + 1]) by index, hu[...] by (host uncertainty, index) */
} ikp__mg;

static void ikp__mg_free(ikp__mg *mg, const ikp_allocator *a)
{
    ikp__free(a, mg->g);
    ikp__free(a, mg->h);
    ikp__free(a, mg->gs);
    ikp__free(a, mg->gm);
    ikp__free(a, mg->ms);
    ikp__free(a, mg->mk);
    ikp__free(a, (void *)mg->mp);
    ikp__free(a, mg->ps);
    ikp__free(a, mg->pg);
    ikp__free(a, mg->hs);
    ikp__free(a, mg->hm);
    ikp__free(a, mg->hu);
}

typedef struct ikp__unc_ix { uint64_t unc; uint32_t k; } ikp__unc_ix;
static int ikp__cmp_unc_ix(const void *pa, const void *pb)
{
    const ikp__unc_ix *a = (const ikp__unc_ix *)pa, *b = (const ikp__unc_ix *)pb;
    if (a->unc != b->unc) return a->unc < b->unc ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* the GPU (numbered as in mg) of that uuid, or -1 */
static int32_t ikp__mg_gpu(const ikp__link_data *ld, const ikp__mg *mg, const uint8_t *uuid)
{
    uint32_t lo = 0, hi = mg->ngpu;
    while (lo < hi) { /* GPUs are numbered in the order of their uuids */
        uint32_t m = lo + (hi - lo) / 2;
        int c = memcmp(ld[mg->gm[mg->gs[m]]].uuid, uuid, 16);
        if (!c) return (int32_t)m;
        if (c < 0) lo = m + 1; else hi = m;
    }
    return -1;
}

/* mg's GPUs and hosts numbered 0, 1, ... in the order of
   ikp__number_devices' numbers (mg->g, h, ngpu, nhost); id: n scratch
   entries */
static void ikp__mg_number(uint32_t n, const ikp__link_data *ld, ikp__mg *mg, uint32_t *id)
{
    uint32_t k, t;
    for (t = 0; t < 2; t++) {
        uint32_t c = 0;
        for (k = 0; k < n; k++) id[k] = UINT32_MAX;
        for (k = 0; k < n; k++) {
            int64_t x = t ? (ld[k].clock_syncs ? ld[k].host : -1) : ld[k].gpu;
            if (x >= 0) id[x] = 0;
        }
        for (k = 0; k < n; k++) if (id[k] == 0) id[k] = ++c;
        for (k = 0; k < n; k++) {
            int64_t x = t ? ld[k].host : ld[k].gpu;
            if (t) mg->h[k] = !ld[k].clock_syncs ? -2 : x >= 0 ? (int32_t)(id[x] - 1) : -1;
            else mg->g[k] = x >= 0 ? (int32_t)(id[x] - 1) : -1;
        }
        if (t) mg->nhost = c; else mg->ngpu = c;
    }
}

/* each GPU's captures (a counting sort: by index within a GPU), the GPU
   each peer measurement is of, and each GPU's measurements; id: cursors
   (n + 1 entries); 0, or -1 when out of memory */
static int ikp__mg_gpus(const ikp_allocator *a, uint32_t n, const ikp__link_data *ld, ikp__mg *mg, uint32_t *id)
{
    uint32_t k, e, t, nm = 0;
    memset(mg->gs, 0, ((size_t)n + 1) * sizeof *mg->gs);
    for (k = 0; k < n; k++) if (mg->g[k] >= 0) mg->gs[mg->g[k] + 1]++;
    for (t = 0; t < mg->ngpu; t++) mg->gs[t + 1] += mg->gs[t];
    for (t = 0; t <= mg->ngpu; t++) id[t] = mg->gs[t];
    for (k = 0; k < n; k++) if (mg->g[k] >= 0) mg->gm[id[mg->g[k]]++] = k;
    memset(mg->ms, 0, ((size_t)n + 1) * sizeof *mg->ms);
    for (k = 0, mg->ps[0] = 0; k < n; k++) {
        for (e = 0; e < ld[k].num_peers; e++) {
            int32_t x = ikp__mg_gpu(ld, mg, ld[k].peers[e].uuid);
            mg->pg[mg->ps[k] + e] = x;
            if (x >= 0) { mg->ms[x + 1]++; nm++; }
        }
        mg->ps[k + 1] = mg->ps[k] + ld[k].num_peers;
    }
    for (t = 0; t < mg->ngpu; t++) mg->ms[t + 1] += mg->ms[t];
    mg->mk = (uint32_t *)ikp__alloc(a, (size_t)nm * sizeof *mg->mk);
    mg->mp = (const ikp__peer_off **)ikp__alloc(a, (size_t)nm * sizeof *mg->mp);
    if (!mg->mk || !mg->mp) return -1;
    for (t = 0; t <= mg->ngpu; t++) id[t] = mg->ms[t];
    for (k = 0; k < n; k++)
        for (e = 0; e < ld[k].num_peers; e++) {
            int32_t x = mg->pg[mg->ps[k] + e];
            if (x < 0) continue;
            mg->mk[id[x]] = k;
            mg->mp[id[x]++] = &ld[k].peers[e];
        }
    return 0;
}

/* the host lists, by index (hm) and by (host uncertainty, index) (hu);
   id: cursors (n + 3 entries); 0, or -1 when out of memory */
static int ikp__mg_hosts(const ikp_allocator *a, uint32_t n, const ikp__link_data *ld, ikp__mg *mg, uint32_t *id)
{
    uint32_t k, t, nh = 0, nl = mg->nhost + 2;
    ikp__unc_ix *u;
    memset(mg->hs, 0, ((size_t)nl + 1) * sizeof *mg->hs);
    for (k = 0; k < n; k++)
        if (mg->h[k] != -2) { mg->hs[(mg->h[k] >= 0 ? (uint32_t)mg->h[k] : mg->nhost) + 1]++; mg->hs[nl]++; nh += 2; }
    for (t = 0; t < nl; t++) mg->hs[t + 1] += mg->hs[t];
    mg->hm = (uint32_t *)ikp__alloc(a, (size_t)nh * sizeof *mg->hm);
    mg->hu = (uint32_t *)ikp__alloc(a, (size_t)nh * sizeof *mg->hu);
    u = (ikp__unc_ix *)ikp__alloc(a, (size_t)nh * sizeof *u);
    if (!mg->hm || !mg->hu || !u) { ikp__free(a, u); return -1; }
    for (t = 0; t <= nl; t++) id[t] = mg->hs[t];
    for (k = 0; k < n; k++)
        if (mg->h[k] != -2) {
            mg->hm[id[mg->h[k] >= 0 ? (uint32_t)mg->h[k] : mg->nhost]++] = k;
            mg->hm[id[nl - 1]++] = k;
        }
    for (k = 0; k < nh; k++) { u[k].unc = ld[mg->hm[k]].host_unc; u[k].k = mg->hm[k]; }
    for (t = 0; t < nl; t++) ikp__sort(u + mg->hs[t], mg->hs[t + 1] - mg->hs[t], sizeof *u, ikp__cmp_unc_ix);
    for (k = 0; k < nh; k++) mg->hu[k] = u[k].k;
    ikp__free(a, u);
    return 0;
}

/* mg from the captures' link data (ikp__number_devices done); O((n + P)
   log n); 0, or -1 when out of memory (mg then freed) */
static int ikp__mg_build(const ikp_allocator *a, uint32_t n, const ikp__link_data *ld, ikp__mg *mg)
{
    uint32_t k, np = 0;
    uint32_t *id = (uint32_t *)ikp__alloc(a, ((size_t)n + 3) * sizeof *id); /* numbers, then cursors */
    memset(mg, 0, sizeof *mg);
    for (k = 0; k < n; k++) np += ld[k].num_peers;
    mg->g = (int32_t *)ikp__alloc(a, (size_t)n * sizeof *mg->g);
    mg->h = (int32_t *)ikp__alloc(a, (size_t)n * sizeof *mg->h);
    mg->gs = (uint32_t *)ikp__alloc(a, ((size_t)n + 1) * sizeof *mg->gs);
    mg->gm = (uint32_t *)ikp__alloc(a, (size_t)n * sizeof *mg->gm);
    mg->ms = (uint32_t *)ikp__alloc(a, ((size_t)n + 1) * sizeof *mg->ms);
    mg->ps = (uint32_t *)ikp__alloc(a, ((size_t)n + 1) * sizeof *mg->ps);
    mg->pg = (int32_t *)ikp__alloc(a, (size_t)np * sizeof *mg->pg);
    mg->hs = (uint32_t *)ikp__alloc(a, ((size_t)n + 3) * sizeof *mg->hs);
    if (id && mg->g && mg->h && mg->gs && mg->gm && mg->ms && mg->ps && mg->pg && mg->hs) {
        ikp__mg_number(n, ld, mg, id);
        if (!ikp__mg_gpus(a, n, ld, mg, id) && !ikp__mg_hosts(a, n, ld, mg, id)) {
            ikp__free(a, id);
            return 0;
        }
    }
    ikp__free(a, id);
    ikp__mg_free(mg, a);
    memset(mg, 0, sizeof *mg);
    return -1;
}

/* >>merge-place: placement: least uncertain chains (Dijkstra) */
/* A binary heap of (uncertainty, capture), least first, the lower index
   first on ties. */
typedef struct ikp__pq_item { uint64_t d; uint32_t k; } ikp__pq_item;
typedef struct ikp__pq { ikp__pq_item *a; size_t n, cap; } ikp__pq;
static int ikp__pq_less(const ikp__pq_item *x, const ikp__pq_item *y)
{
    return x->d < y->d || (x->d == y->d && x->k < y->k);
}
static int ikp__pq_push(ikp__pq *h, const ikp_allocator *al, uint64_t d, uint32_t k)
{
    size_t i;
    ikp__pq_item it;
    if (!ikp__grow(al, (void **)&h->a, &h->cap, h->n + 1, sizeof *h->a)) return -1;
    it.d = d;
    it.k = k;
    for (i = h->n++; i > 0 && ikp__pq_less(&it, &h->a[(i - 1) / 2]); i = (i - 1) / 2) h->a[i] = h->a[(i - 1) / 2];
    h->a[i] = it;
    return 0;
}
static ikp__pq_item ikp__pq_pop(ikp__pq *h)
{
    ikp__pq_item top = h->a[0], last = h->a[--h->n];
    size_t i = 0, c;
    while ((c = 2 * i + 1) < h->n) {
        if (c + 1 < h->n && ikp__pq_less(&h->a[c + 1], &h->a[c])) c++;
        if (!ikp__pq_less(&h->a[c], &last)) break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n) h->a[i] = last;
    return top;
}

/* A chain offered to captures by the capture `from`, the seq-th placed:
   d its uncertainty (UINT64_MAX: none), off the offset it gives (host
   offers: d and off before the receiving capture's host_unc and host_off
   are added). */
typedef struct ikp__offer { uint64_t d; int64_t off; uint32_t seq, from; } ikp__offer;
typedef struct ikp__best { uint64_t d; int64_t off; uint32_t seq, from; int via; } ikp__best;

typedef struct ikp__place {
    const ikp__link_data *ld;
    const ikp__mg *mg;
    ikp__offer *own;  /* per capture: the best of its measurements of placed captures' GPUs */
    ikp__offer *go;   /* per GPU: the best of placed captures' measurements of it */
    ikp__offer *ho;   /* per host list t: the best host reading that reaches it (t < nhost: of host t's
                         captures; nhost: of any named host's; nhost + 1: of captures that name none) */
    uint32_t *first;  /* per host list: its first capture not placed, in hu order */
    uint8_t *st;      /* per capture: 1 placed, 2 chain fixed (its GPU reached) */
    uint8_t *reached; /* per GPU: one of its captures placed */
    ikp__pq heap;
} ikp__place;

/* offer o to a capture, if better than b: less uncertain, or as uncertain
   and made earlier (Dijkstra relaxes on a strictly smaller uncertainty);
   offers are taken in the order ikp__merge_link prefers their kinds */
static void ikp__best_take(ikp__best *b, const ikp__offer *o, uint64_t d_add, int64_t off_add, int via)
{
    uint64_t d;
    if (o->d == UINT64_MAX) return;
    d = o->d + d_add;
    if (d < b->d || (d == b->d && o->seq < b->seq)) {
        b->d = d;
        b->off = o->off + off_add;
        b->seq = o->seq;
        b->from = o->from;
        b->via = via;
    }
}
static ikp__best ikp__best_offer(const ikp__place *p, uint32_t k)
{
    const ikp__mg *mg = p->mg;
    ikp__best b;
    b.d = UINT64_MAX;
    b.off = 0;
    b.seq = UINT32_MAX;
    b.from = 0;
    b.via = IKP_ALIGN_COUNT;
    if (mg->g[k] >= 0) ikp__best_take(&b, &p->go[mg->g[k]], 0, 0, IKP_ALIGN_PEER);
    ikp__best_take(&b, &p->own[k], 0, 0, IKP_ALIGN_PEER);
    if (mg->h[k] != -2) {
        uint32_t t = mg->h[k] >= 0 ? (uint32_t)mg->h[k] : mg->nhost;
        ikp__best_take(&b, &p->ho[t], p->ld[k].host_unc, p->ld[k].host_off, IKP_ALIGN_HOST);
        ikp__best_take(&b, &p->ho[mg->nhost + 1], p->ld[k].host_unc, p->ld[k].host_off, IKP_ALIGN_HOST);
    }
    return b;
}

/* host list t's first capture not placed, with its offer in the heap */
static int ikp__host_first(ikp__place *p, const ikp_allocator *a, uint32_t t, int moved)
{
    const ikp__mg *mg = p->mg;
    uint32_t f = p->first[t], k;
    while (f < mg->hs[t + 1] && (p->st[mg->hu[f]] & 1)) f++;
    moved |= f != p->first[t];
    p->first[t] = f;
    if (!moved || f == mg->hs[t + 1] || p->ho[t].d == UINT64_MAX) return 0;
    k = mg->hu[f];
    return ikp__pq_push(&p->heap, a, p->ho[t].d + p->ld[k].host_unc, k);
}
static int ikp__host_offer(ikp__place *p, const ikp_allocator *a, uint32_t t, uint64_t d, int64_t off, uint32_t seq,
                           uint32_t from)
{
    if (d >= p->ho[t].d) return 0;
    p->ho[t].d = d;
    p->ho[t].off = off;
    p->ho[t].seq = seq;
    p->ho[t].from = from;
    return ikp__host_first(p, a, t, 1);
}

/* p's tables for n captures, every offer none yet; 0, or -1 when out of
   memory (ikp__place_free frees what was taken either way) */
static int ikp__place_init(ikp__place *p, const ikp_allocator *a, uint32_t n, const ikp__link_data *ld,
                           const ikp__mg *mg)
{
    uint32_t k, t, nl = mg->nhost + 2;
    memset(p, 0, sizeof *p);
    p->ld = ld;
    p->mg = mg;
    p->own = (ikp__offer *)ikp__alloc(a, (size_t)n * sizeof *p->own);
    p->go = (ikp__offer *)ikp__alloc(a, ((size_t)mg->ngpu + 1) * sizeof *p->go);
    p->ho = (ikp__offer *)ikp__alloc(a, (size_t)nl * sizeof *p->ho);
    p->first = (uint32_t *)ikp__alloc(a, (size_t)nl * sizeof *p->first);
    p->st = (uint8_t *)ikp__alloc(a, n);
    p->reached = (uint8_t *)ikp__alloc(a, (size_t)mg->ngpu + 1);
    if (!p->own || !p->go || !p->ho || !p->first || !p->st || !p->reached) return -1;
    for (k = 0; k < n; k++) p->own[k].d = UINT64_MAX;
    for (k = 0; k < mg->ngpu; k++) p->go[k].d = UINT64_MAX;
    for (t = 0; t < nl; t++) { p->ho[t].d = UINT64_MAX; p->first[t] = mg->hs[t]; }
    memset(p->st, 0, n);
    memset(p->reached, 0, (size_t)mg->ngpu + 1);
    return 0;
}

static void ikp__place_free(ikp__place *p, const ikp_allocator *a)
{
    ikp__free(a, p->own);
    ikp__free(a, p->go);
    ikp__free(a, p->ho);
    ikp__free(a, p->first);
    ikp__free(a, p->st);
    ikp__free(a, p->reached);
    ikp__free(a, p->heap.a);
}

/* capture k (the s-th placed) is the first of GPU g's captures placed:
   the others are as certain, each fixed (by the best offer it holds when
   as good, else by k's clock), and the captures that measured g's clock
   are offered k's chain; 0, or -1 when out of memory */
static int ikp__place_gpu(ikp__place *p, const ikp_allocator *a, uint32_t k, int32_t g, uint32_t s, uint64_t *dist,
                          ikp_alignment *out)
{
    const ikp__mg *mg = p->mg;
    uint32_t e;
    p->reached[g] = 1;
    for (e = mg->gs[g]; e < mg->gs[g + 1]; e++) {
        uint32_t q = mg->gm[e];
        ikp__best b;
        if (q == k) continue;
        b = ikp__best_offer(p, q); /* >= dist[k]: kept when equal (made earlier) */
        if (b.d != dist[k]) {
            b.d = dist[k];
            b.off = out[k].offset_ns;
            b.from = k;
            b.via = IKP_ALIGN_SAME_GPU;
        }
        dist[q] = b.d;
        out[q].offset_ns = b.off;
        out[q].via = (ikp_align_via)b.via;
        out[q].from = b.from;
        out[q].links = out[b.from].links + 1;
        p->st[q] |= 2;
        if (ikp__pq_push(&p->heap, a, dist[q], q)) return -1;
    }
    for (e = mg->ms[g]; e < mg->ms[g + 1]; e++) { /* captures that measured this GPU; once a GPU */
        uint32_t q = mg->mk[e];
        uint64_t d = dist[k] + mg->mp[e]->unc;
        if (p->st[q] || d >= p->own[q].d) continue;
        p->own[q].d = d;
        p->own[q].off = out[k].offset_ns + mg->mp[e]->off;
        p->own[q].seq = s;
        p->own[q].from = k;
        if (ikp__pq_push(&p->heap, a, d, q)) return -1;
    }
    return 0;
}

/* capture k (the s-th placed) offers its chain through its own links: to
   the GPUs it measured, and by its host readings to the host lists they
   reach; 0, or -1 when out of memory */
static int ikp__place_offer(ikp__place *p, const ikp_allocator *a, uint32_t k, uint32_t s, const uint64_t *dist,
                            const ikp_alignment *out)
{
    const ikp__mg *mg = p->mg;
    const ikp__link_data *ld = p->ld;
    uint32_t e;
    for (e = 0; e < ld[k].num_peers; e++) { /* the GPUs k measured */
        int32_t x = mg->pg[mg->ps[k] + e];
        uint64_t d = dist[k] + ld[k].peers[e].unc;
        if (x < 0 || p->reached[x] || d >= p->go[x].d) continue;
        p->go[x].d = d;
        p->go[x].off = out[k].offset_ns - ld[k].peers[e].off;
        p->go[x].seq = s;
        p->go[x].from = k;
        if (ikp__pq_push(&p->heap, a, d, mg->gm[mg->gs[x]])) return -1;
    }
    if (mg->h[k] != -2) { /* host readings: to its host's captures and those of none, or to all */
        uint64_t d = dist[k] + ld[k].host_unc;
        int64_t off = out[k].offset_ns - ld[k].host_off;
        if (mg->h[k] >= 0 ? ikp__host_offer(p, a, (uint32_t)mg->h[k], d, off, s, k) ||
                                ikp__host_offer(p, a, mg->nhost, d, off, s, k)
                          : ikp__host_offer(p, a, mg->nhost + 1, d, off, s, k))
            return -1;
    }
    return 0;
}

/* The chains of least uncertainty from capture 0 (Dijkstra): dist and
   out's offset_ns, via, from, links as the all-pairs search gave them,
   which placed the undone capture of least dist (the lower index on ties)
   and relaxed every link from it on a strictly smaller dist. Here, without
   the pairs, O((n + P) log n): a heap holds each offer once; an offer
   that reaches every capture of a GPU (its clock measured, or the first
   of its captures placed: every other then as certain) is kept once for
   the GPU, and a host reading's offer once for its host list (the
   capture it reaches first: the least host_unc). Equal uncertainties go
   to the earlier offer, and one capture's offers by kind as
   ikp__merge_link prefers them, so every choice is the one the pairs
   made. 0, or -1 when out of memory. */
static int ikp__merge_place(const ikp_allocator *a, uint32_t n, const ikp__link_data *ld, const ikp__mg *mg,
                            ikp_alignment *out, uint64_t *dist)
{
    ikp__place p;
    uint32_t k, seq = 0;
    int r = -1;
    if (ikp__place_init(&p, a, n, ld, mg)) goto end;
    p.st[0] = 2; /* the reference: out[0] is all zero */
    if (ikp__pq_push(&p.heap, a, 0, 0)) goto end;
    while (p.heap.n) {
        ikp__pq_item it = ikp__pq_pop(&p.heap);
        uint32_t s;
        int32_t g;
        k = it.k;
        if (p.st[k] & 1) continue;
        if (!(p.st[k] & 2)) {
            ikp__best b = ikp__best_offer(&p, k);
            if (b.d != it.d) continue; /* an offer bettered since */
            dist[k] = b.d;
            out[k].offset_ns = b.off;
            out[k].via = (ikp_align_via)b.via;
            out[k].from = b.from;
            out[k].links = out[b.from].links + 1;
        } else if (dist[k] != it.d) continue;
        p.st[k] |= 1;
        s = seq++;
        if (mg->h[k] != -2 && (ikp__host_first(&p, a, mg->h[k] >= 0 ? (uint32_t)mg->h[k] : mg->nhost, 0) ||
                               ikp__host_first(&p, a, mg->nhost + 1, 0)))
            goto end;
        g = mg->g[k];
        if (g >= 0 && !p.reached[g] && ikp__place_gpu(&p, a, k, g, s, dist, out)) goto end;
        if (ikp__place_offer(&p, a, k, s, dist, out)) goto end;
    }
    r = 0;
end:
    ikp__place_free(&p, a);
    return r;
}

/* >>merge-check: links that disagree with the placement */
/* c + w and c - w, held to int64_t's range (plausible readings keep
   offsets and uncertainties far inside it) */
static int64_t ikp__sat_add(int64_t c, uint64_t w)
{
    return w > (uint64_t)INT64_MAX - (uint64_t)c ? INT64_MAX : (int64_t)((uint64_t)c + w);
}
static int64_t ikp__sat_sub(int64_t c, uint64_t w)
{
    return w > (uint64_t)c - (uint64_t)INT64_MIN ? INT64_MIN : (int64_t)((uint64_t)c - w);
}

/* A bound grown to hold what a link says: ad + unc + other, at most
   IKP__MERGE_DIST_MAX (a bound past 32 bits of ns is said as "more than"
   anyway, and a sum of a few such bounds stays inside 64 bits) */
#define IKP__MERGE_DIST_MAX ((uint64_t)1 << 61)
static uint64_t ikp__merge_grown(uint64_t ad, uint64_t unc, uint64_t other)
{
    const uint64_t m = IKP__MERGE_DIST_MAX, s = (ad < m ? ad : m) + (unc < m ? unc : m) + (other < m ? other : m);
    return s < m ? s : m;
}

/* Pair (i, j), i < j, against the placement: each kind of link between
   them that disagrees with it by more than the uncertainties is said on
   both, and covered. Returns which dist grew (1: i's, 2: j's). */
static int ikp__merge_check(const ikp__link_data *ld, ikp_alignment *out, uint64_t *dist, uint32_t i, uint32_t j)
{
    int k, grew = 0;
    for (k = 0; k < IKP__LINKS_EACH; k++) {
        int64_t val, d;
        uint64_t unc, ad, tol;
        int via = ikp__merge_link_each(ld, i, j, k, &val, &unc);
        if (via == IKP_ALIGN_COUNT) continue;
        d = out[j].offset_ns - out[i].offset_ns - val;
        ad = (uint64_t)(d < 0 ? -d : d);
        tol = unc + dist[i] + dist[j];
        if (ad <= tol) continue;
        ikp__disagree(&out[i], ad - tol, (ikp_align_via)via, j);
        ikp__disagree(&out[j], ad - tol, (ikp_align_via)via, i);
        /* one GPU's captures stay exact; otherwise each that is not exact grows to hold the clock that
           the link and the other's bound say: either placement may be the one that is wrong */
        if (dist[i] + dist[j]) {
            const uint64_t di = dist[i], dj = dist[j];
            if (dj) { dist[j] = ikp__merge_grown(ad, unc, di); grew |= 2; }
            if (di) { dist[i] = ikp__merge_grown(ad, unc, dj); grew |= 1; }
        }
    }
    return grew;
}

/* Each list of linked captures (mg's trees: GPU t's captures, t < ngpu;
   the measurements of GPU t - ngpu, t < 2 ngpu; host list t - 2 ngpu) as
   a segment tree over its captures by index. A capture's key is the span
   [c - w, c + w] its placement allows: c its offset (a measurement's:
   less the offset measured; host lists': less its host offset), w its
   dist (plus the measurement's or host reading's uncertainty). Nodes keep
   their leaves' largest c - w and smallest c + w: a link of captures i
   and j disagrees exactly when their spans are apart, so the next capture
   whose span lies outside a span is found in O(log d), d positions on. */
typedef struct ikp__trees {
    int64_t *lo, *hi;
    size_t *node;   /* tree t's nodes 1 .. 2 s - 1 at node[t] + 1 .. */
    uint32_t *s;    /* its leaves: a power of 2, 0 for none */
    uint32_t *at;   /* a capture's position in its GPU's tree (n), its host list's and all's (2 n), and
                       each measurement's in its GPU's measurements (P, as mg->pg) */
} ikp__trees;

static const uint32_t *ikp__tree_members(const ikp__mg *mg, uint32_t t, uint32_t *m)
{
    if (t < mg->ngpu) { *m = mg->gs[t + 1] - mg->gs[t]; return mg->gm + mg->gs[t]; }
    t -= mg->ngpu;
    if (t < mg->ngpu) { *m = mg->ms[t + 1] - mg->ms[t]; return mg->mk + mg->ms[t]; }
    t -= mg->ngpu;
    *m = mg->hs[t + 1] - mg->hs[t];
    return mg->hm + mg->hs[t];
}

/* sets leaf pos of tree t from the placement, then the nodes above it
   that change */
static void ikp__tree_set(ikp__trees *tr, const ikp__mg *mg, const ikp__link_data *ld, const ikp_alignment *out,
                          const uint64_t *dist, uint32_t t, uint32_t pos)
{
    int64_t *lo = tr->lo + tr->node[t], *hi = tr->hi + tr->node[t], c;
    uint64_t w;
    uint32_t k, x = tr->s[t] + pos;
    if (!tr->s[t]) return; /* a tree nobody looks in (ikp__trees_build) */
    if (t < mg->ngpu) {
        k = mg->gm[mg->gs[t] + pos];
        c = out[k].offset_ns;
        w = dist[k];
    } else if (t < 2 * mg->ngpu) {
        uint32_t e = mg->ms[t - mg->ngpu] + pos;
        k = mg->mk[e];
        c = out[k].offset_ns - mg->mp[e]->off;
        w = mg->mp[e]->unc + dist[k];
    } else {
        k = mg->hm[mg->hs[t - 2 * mg->ngpu] + pos];
        c = out[k].offset_ns - ld[k].host_off;
        w = ld[k].host_unc + dist[k];
    }
    lo[x] = ikp__sat_sub(c, w);
    hi[x] = ikp__sat_add(c, w);
    for (x /= 2; x; x /= 2) {
        int64_t l = lo[2 * x] > lo[2 * x + 1] ? lo[2 * x] : lo[2 * x + 1];
        int64_t h = hi[2 * x] < hi[2 * x + 1] ? hi[2 * x] : hi[2 * x + 1];
        if (l == lo[x] && h == hi[x]) break;
        lo[x] = l;
        hi[x] = h;
    }
}

/* the first position of captures (m, by index) after capture cur */
static uint32_t ikp__after(const uint32_t *k, uint32_t m, uint32_t cur)
{
    uint32_t lo = 0, hi = m;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (k[mid] <= cur) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* the first position from `from` on in tree t whose span is outside [L,
   R], or UINT32_MAX */
static uint32_t ikp__tree_next(const ikp__trees *tr, uint32_t t, uint32_t from, int64_t L, int64_t R)
{
    const int64_t *lo = tr->lo + tr->node[t], *hi = tr->hi + tr->node[t];
    uint32_t s = tr->s[t], x;
    if (from >= s) return UINT32_MAX;
    for (x = s + from; lo[x] <= R && hi[x] >= L;) { /* the next subtree to the right */
        while (x & 1) x /= 2;
        if (!x) return UINT32_MAX;
        x++;
    }
    while (x < s) x = lo[2 * x] > R || hi[2 * x] < L ? 2 * x : 2 * x + 1;
    return x - s;
}

/* capture k's leaves again, after its dist grew */
static void ikp__trees_update(ikp__trees *tr, const ikp__mg *mg, const ikp__link_data *ld, const ikp_alignment *out,
                              const uint64_t *dist, uint32_t n, uint32_t k)
{
    uint32_t e;
    if (mg->g[k] >= 0) ikp__tree_set(tr, mg, ld, out, dist, (uint32_t)mg->g[k], tr->at[k]);
    for (e = 0; e < ld[k].num_peers; e++) {
        int32_t x = mg->pg[mg->ps[k] + e];
        if (x >= 0) ikp__tree_set(tr, mg, ld, out, dist, mg->ngpu + (uint32_t)x, tr->at[3 * (size_t)n + mg->ps[k] + e]);
    }
    if (mg->h[k] != -2) {
        ikp__tree_set(tr, mg, ld, out, dist, 2 * mg->ngpu + (mg->h[k] >= 0 ? (uint32_t)mg->h[k] : mg->nhost),
                      tr->at[n + k]);
        ikp__tree_set(tr, mg, ld, out, dist, 2 * mg->ngpu + mg->nhost + 1, tr->at[2 * (size_t)n + k]);
    }
}

/* one tree a capture's links are looked for in: its span there, and the
   position of the next capture apart from it (UINT32_MAX: none) */
typedef struct ikp__look { uint32_t t, next; int64_t c, L, R; uint64_t w; } ikp__look;

/* tr for the placement as it stands: each tree's nodes, each capture's and
   each measurement's position, every leaf set; 0, or -1 when out of
   memory (ikp__trees_free frees what was taken either way) */
static int ikp__trees_build(ikp__trees *tr, const ikp_allocator *a, uint32_t n, const ikp__link_data *ld,
                            const ikp__mg *mg, const ikp_alignment *out, const uint64_t *dist)
{
    uint32_t nt = 2 * mg->ngpu + mg->nhost + 2, t, i, x;
    size_t nodes = 0, np = mg->ps[n];
    memset(tr, 0, sizeof *tr);
    tr->node = (size_t *)ikp__alloc(a, (size_t)nt * sizeof *tr->node);
    tr->s = (uint32_t *)ikp__alloc(a, (size_t)nt * sizeof *tr->s);
    tr->at = (uint32_t *)ikp__alloc(a, (3 * (size_t)n + np) * sizeof *tr->at);
    if (!tr->node || !tr->s || !tr->at) return -1;
    for (t = 0; t < nt; t++) {
        uint32_t m;
        const uint32_t *k = ikp__tree_members(mg, t, &m);
        /* all host readings' list is looked in by captures that name no host alone: none, no tree */
        const int unused = t == nt - 1 && mg->hs[mg->nhost + 1] == mg->hs[mg->nhost];
        for (tr->s[t] = m && !unused ? 1 : 0; tr->s[t] < m && !unused; tr->s[t] *= 2) {}
        tr->node[t] = nodes;
        nodes += 2 * (size_t)tr->s[t];
        for (x = 0; x < m; x++) /* each capture is once in a GPU's tree, a host list and all */
            if (t < mg->ngpu) tr->at[k[x]] = x;
            else if (t >= 2 * mg->ngpu) tr->at[(t == nt - 1 ? 2 * (size_t)n : n) + k[x]] = x;
    }
    for (i = 0; i < n; i++) /* each measurement is once in its GPU's measurements */
        for (x = 0; x < ld[i].num_peers; x++) {
            int32_t g = mg->pg[mg->ps[i] + x];
            if (g >= 0) tr->at[3 * (size_t)n + mg->ps[i] + x] = ikp__after(mg->mk + mg->ms[g], mg->ms[g + 1] - mg->ms[g], i) - 1;
        }
    tr->lo = (int64_t *)ikp__alloc(a, nodes * sizeof *tr->lo);
    tr->hi = (int64_t *)ikp__alloc(a, nodes * sizeof *tr->hi);
    if (!tr->lo || !tr->hi) return -1;
    for (t = 0; t < nt; t++) {
        uint32_t m, s = tr->s[t];
        int64_t *lo = tr->lo + tr->node[t], *hi = tr->hi + tr->node[t];
        ikp__tree_members(mg, t, &m);
        for (x = 1; x < 2 * s; x++) { lo[x] = INT64_MIN; hi[x] = INT64_MAX; } /* no capture: never apart */
        for (x = 0; x < m; x++) ikp__tree_set(tr, mg, ld, out, dist, t, x);
    }
    return 0;
}

static void ikp__trees_free(ikp__trees *tr, const ikp_allocator *a)
{
    ikp__free(a, tr->node);
    ikp__free(a, tr->s);
    ikp__free(a, tr->at);
    ikp__free(a, tr->lo);
    ikp__free(a, tr->hi);
}

/* the trees capture i's links are looked for in, with its span in each
   (the centre c and width w before its dist); returns how many */
static uint32_t ikp__looks_of(ikp__look *lk, uint32_t i, const ikp__link_data *ld, const ikp__mg *mg,
                              const ikp_alignment *out)
{
    uint32_t nl = 0, e;
    if (mg->g[i] >= 0) { /* its GPU's captures; those that measured its GPU */
        lk[nl].t = (uint32_t)mg->g[i]; lk[nl].c = out[i].offset_ns; lk[nl++].w = 0;
        lk[nl].t = mg->ngpu + (uint32_t)mg->g[i]; lk[nl].c = out[i].offset_ns; lk[nl++].w = 0;
    }
    if (mg->h[i] != -2) { /* its host's captures and those of none; or all */
        lk[nl].t = 2 * mg->ngpu + (mg->h[i] >= 0 ? (uint32_t)mg->h[i] : mg->nhost + 1);
        lk[nl].c = out[i].offset_ns - ld[i].host_off;
        lk[nl++].w = ld[i].host_unc;
        if (mg->h[i] >= 0) { lk[nl] = lk[nl - 1]; lk[nl++].t = 2 * mg->ngpu + mg->nhost; }
    }
    for (e = 0; e < ld[i].num_peers; e++) { /* the captures of each GPU it measured */
        int32_t g = mg->pg[mg->ps[i] + e];
        if (g < 0) continue;
        lk[nl].t = (uint32_t)g;
        lk[nl].c = out[i].offset_ns - ld[i].peers[e].off;
        lk[nl++].w = ld[i].peers[e].unc;
    }
    return nl;
}

/* Capture i's pairs (i, j), j > i, whose spans are apart, taken by j:
   each checked (ikp__merge_check), the trees updated for the dists that
   grew, and each tree's next capture apart looked for again where it may
   have changed. */
static void ikp__check_pairs_of(ikp__trees *tr, ikp__look *lk, uint32_t nl, uint32_t n, const ikp__link_data *ld,
                                const ikp__mg *mg, ikp_alignment *out, uint64_t *dist, uint32_t i)
{
    uint32_t y;
    for (y = 0; y < nl; y++) {
        uint32_t m;
        const uint32_t *k = ikp__tree_members(mg, lk[y].t, &m);
        lk[y].L = ikp__sat_sub(lk[y].c, lk[y].w + dist[i]);
        lk[y].R = ikp__sat_add(lk[y].c, lk[y].w + dist[i]);
        lk[y].next = ikp__tree_next(tr, lk[y].t, ikp__after(k, m, i), lk[y].L, lk[y].R);
    }
    for (;;) {
        uint32_t j = UINT32_MAX, m;
        int grew;
        for (y = 0; y < nl; y++)
            if (lk[y].next != UINT32_MAX) {
                uint32_t q = ikp__tree_members(mg, lk[y].t, &m)[lk[y].next];
                if (q < j) j = q;
            }
        if (j == UINT32_MAX) break;
        grew = ikp__merge_check(ld, out, dist, i, j);
        if (grew & 2) ikp__trees_update(tr, mg, ld, out, dist, n, j);
        if (grew & 1) ikp__trees_update(tr, mg, ld, out, dist, n, i);
        for (y = 0; y < nl; y++) {
            uint32_t f = lk[y].next;
            if (f == UINT32_MAX) continue;
            if (ikp__tree_members(mg, lk[y].t, &m)[f] == j) f++;
            else if (!(grew & 1)) continue; /* still the next apart */
            if (grew & 1) { /* i's spans wider: fewer apart */
                lk[y].L = ikp__sat_sub(lk[y].c, lk[y].w + dist[i]);
                lk[y].R = ikp__sat_add(lk[y].c, lk[y].w + dist[i]);
            }
            lk[y].next = ikp__tree_next(tr, lk[y].t, f, lk[y].L, lk[y].R);
        }
    }
}

/* Links that disagree with the placement: said, and covered. The pairs
   are taken as the all-pairs check took them: by i, then j, then kind
   (SAME_GPU, PEER, HOST), each check seeing the dists the checks before
   it grew; but only the pairs (i, j) that have a link whose spans are
   apart, found through the trees of i's GPU, of the GPUs i measured, of
   the measurements of i's GPU and of i's host lists (those of its host
   and of no host, or all when it names none), which follow each dist as
   it grows. A pair passed over has every link's spans together as the
   dists stand at its turn: the all-pairs check changed nothing for it,
   so every output is the same. O((n + P) log n + D) for D pairs found,
   a pair found O(1) when the next is near (as where most disagree), up to
   O((1 + p) log n) (p: GPUs i measured). What stays costlier: D is small
   while links agree to within their uncertainties, but it grows with the
   links that do not, up to every pair of a list (readings of captures
   that name no host, off against many hosts' captures; one GPU's
   launches whose host readings drift apart): the order of the pairs
   decides whose dist grows by how much, so each is said and covered in
   turn. 0, or -1 when out of memory. */
static int ikp__merge_check_all(const ikp_allocator *a, uint32_t n, const ikp__link_data *ld, const ikp__mg *mg,
                                ikp_alignment *out, uint64_t *dist)
{
    uint32_t i, most = 0;
    ikp__trees tr;
    ikp__look *lk = NULL;
    int r = -1;
    for (i = 0; i < n; i++) if (ld[i].num_peers > most) most = ld[i].num_peers;
    lk = (ikp__look *)ikp__alloc(a, ((size_t)most + 4) * sizeof *lk);
    if (ikp__trees_build(&tr, a, n, ld, mg, out, dist) == 0 && lk) {
        for (i = 0; i < n; i++)
            ikp__check_pairs_of(&tr, lk, ikp__looks_of(lk, i, ld, mg, out), n, ld, mg, out, dist, i);
        r = 0;
    }
    ikp__trees_free(&tr, a);
    ikp__free(a, lk);
    return r;
}

/* A link that disagrees with the placement shows that a link of the
   cycle it closes (the chains of its two captures up to where they meet,
   and the link itself) is wrong, not which; ikp__merge_check grew the
   two captures' bounds to hold the other's placement. A capture c on
   either chain below where they meet was placed through the wrong link
   or not: if not, its own bound holds; if so, the links from c down to
   that end of the link are right, so c lies within that end's grown
   bound plus its chain's sum from c (orig: the dists the placement made).
   Every capture placed through one that grew grows by as much. The
   reference stays 0 (it is the axis); O(n) plus the chains walked, one
   for each capture that disagrees (with the capture it disagrees most
   with). */
static int ikp__merge_carry(const ikp_allocator *a, uint32_t n, const ikp_alignment *out, const uint64_t *orig,
                            uint64_t *dist)
{
    uint32_t k, d, most = 0, *at, *order;
    for (k = 0; k < n; k++) {
        uint32_t x = k, y = out[k].disagree_with;
        if (!out[k].disagreement_ns || y >= n) continue;
        while (out[x].links > out[y].links) x = out[x].from;
        while (out[y].links > out[x].links) y = out[y].from;
        while (x != y) { x = out[x].from; y = out[y].from; }
        for (x = k; x != y && out[x].links; x = out[x].from) {
            const uint64_t c = ikp__merge_grown(dist[k], orig[k] - orig[x], 0);
            if (c > dist[x]) dist[x] = c;
        }
    }
    for (k = 0; k < n; k++) if (out[k].links > most) most = out[k].links;
    at = (uint32_t *)ikp__alloc(a, ((size_t)most + 2) * sizeof *at);
    order = (uint32_t *)ikp__alloc(a, (size_t)n * sizeof *order);
    if (!at || !order) {
        ikp__free(a, at);
        ikp__free(a, order);
        return -1;
    }
    memset(at, 0, ((size_t)most + 2) * sizeof *at);
    for (k = 0; k < n; k++) at[out[k].links + 1]++; /* by links: each after the capture it was placed from */
    for (d = 0; d <= most; d++) at[d + 1] += at[d];
    for (k = 0; k < n; k++) order[at[out[k].links]++] = k;
    for (d = 0; d < n; d++) {
        const uint32_t q = order[d], f = out[q].from;
        if (out[q].links) {
            const uint64_t c = ikp__merge_grown(dist[f], orig[q] - orig[f], 0);
            if (c > dist[q]) dist[q] = c;
        }
    }
    ikp__free(a, at);
    ikp__free(a, order);
    return 0;
}

/* Where every link agrees (no cycle of them that no clocks satisfy, none
   said to disagree) and the captures are few (IKP__CENTRE_MAX), every
   pair's clocks lie in the span that all the chains of links between
   them allow (s: ikp__pair_paths'), not only along the chain that placed
   them. The placement is made again from those spans: first the least t
   such that every pair's placed difference is within t of both ends of
   its span (a system of differences: feasible where the bounds x_j - x_i
   <= t - s[j][i] have no negative cycle; t found by halving), then, one
   capture at a time, each at the centre of what t and the captures
   placed before it leave it. Each states how far its span against the
   reference reaches from it. So independent chains narrow every pair
   (GPUs measured by every peer: within about one measurement for any
   pair), and one chain gives what it gave. Only the same GPU's clock and
   peer measurements make the spans: host readings drift against a GPU's
   clock over seconds (one GPU's launches read it apart by microseconds,
   which would pull the spans off), so where only they link two captures
   the chains' placement is kept. O(n^3 log(span)); 0, or -1
   when out of memory. */
#define IKP__CENTRE_MAX 64u
#define IKP__PAIR_INF ((int64_t)1 << 62) /* no chain (a link's value past 2^60 ns is left out) */
#define IKP__CENTRE_SPAN ((int64_t)1 << 56) /* spans wider are left as the chains placed them */
static void ikp__pair_paths(const ikp__link_data *ld, uint32_t n, int hosts, int64_t *s);
/* c = the bounds on x_j - x_i, at most s[i][j] (its span: captures of one
   GPU stay together) and t - s[j][i] (within t of the span's far end),
   closed by every path (Floyd-Warshall): 1 when they have no negative
   cycle, 0 as soon as one shows (before sums could leave int64_t: the
   bounds start within 2^58, and each pass adds two of a closure that had
   none) */
static int ikp__centre_closed(const int64_t *s, uint32_t n, int64_t t, int64_t *c)
{
    uint32_t i, j, k;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            const int64_t far = t - s[(size_t)j * n + i], span = s[(size_t)i * n + j];
            c[(size_t)i * n + j] = i == j ? 0 : far < span ? far : span;
        }
    for (k = 0; k < n; k++) {
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++) {
                const int64_t v = c[(size_t)i * n + k] + c[(size_t)k * n + j];
                if (v < c[(size_t)i * n + j]) c[(size_t)i * n + j] = v;
            }
        for (i = 0; i < n; i++) if (c[(size_t)i * n + i] < 0) return 0;
    }
    return 1;
}
/* c closed again after the bound x_v - x_u <= w is added */
static void ikp__centre_add(int64_t *c, uint32_t n, uint32_t u, uint32_t v, int64_t w)
{
    uint32_t i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            const int64_t x = c[(size_t)i * n + u] + w + c[(size_t)v * n + j];
            if (x < c[(size_t)i * n + j]) c[(size_t)i * n + j] = x;
        }
}
static int ikp__merge_centre(const ikp_allocator *a, uint32_t n, const ikp__link_data *ld, ikp_alignment *out,
                             uint64_t *dist)
{
    int64_t *s, *c, lo = 0, hi = 0;
    uint32_t i, j, k;
    if (n < 2 || n > IKP__CENTRE_MAX) return 0;
    for (k = 0; k < n; k++) if (out[k].disagreement_ns) return 0;
    s = (int64_t *)ikp__alloc(a, (size_t)n * n * sizeof *s);
    c = (int64_t *)ikp__alloc(a, (size_t)n * n * sizeof *c);
    if (!s || !c) {
        ikp__free(a, s);
        ikp__free(a, c);
        return -1;
    }
    ikp__pair_paths(ld, n, 0, s);
    for (i = 0; i < n && hi >= 0; i++)
        for (j = i + 1; j < n; j++) {
            const int64_t u = s[(size_t)i * n + j], v = s[(size_t)j * n + i];
            if (u > IKP__CENTRE_SPAN || u < -IKP__CENTRE_SPAN || v > IKP__CENTRE_SPAN || v < -IKP__CENTRE_SPAN ||
                u + v < 0) { /* a span too wide (or none) to centre, or no clocks satisfy them */
                hi = -1;
                break;
            }
            if ((u + v + 1) / 2 > lo) lo = (u + v + 1) / 2; /* half the pair's span: t is at least that */
            if (u + v > hi) hi = u + v;                     /* its whole span: any clocks the links allow */
        }
    if (hi >= 0 && ikp__centre_closed(s, n, hi, c)) {
        while (lo < hi) { /* the least t that every pair allows */
            const int64_t t = lo + (hi - lo) / 2;
            if (ikp__centre_closed(s, n, t, c)) hi = t;
            else lo = t + 1;
        }
        ikp__centre_closed(s, n, hi, c);
        for (k = 1; k < n; k++) { /* each at the centre of what is left it */
            const int64_t up = c[k], down = -c[(size_t)k * n], m = down + (up - down) / 2;
            ikp__centre_add(c, n, 0, k, m);
            ikp__centre_add(c, n, k, 0, -m);
        }
        for (k = 1; k < n; k++) {
            const int64_t x = c[k], far_hi = s[k] - x, far_lo = x + s[(size_t)k * n];
            out[k].offset_ns = x;
            dist[k] = (uint64_t)(far_hi > far_lo ? far_hi : far_lo);
        }
    }
    ikp__free(a, s);
    ikp__free(a, c);
    return 0;
}

/* Links that contradict each other (a cycle of them that no clocks
   satisfy), among at most IKP__LEAVE_MAX captures: where leaving out one
   peer measurement, and no other, makes the rest agree, that one is
   wrong (every pair measured, one measurement off: the others outvote
   it). It is taken out of ld (*by: the capture that held it, *gone: it);
   a ring measured once round cannot say which of its links is wrong (any
   one left out mends it), nor can links that agree without the host
   readings or that a capture's host readings would mend as well (host
   readings drift), and those are left whole for the placement to cover.
   1 when one was left out, 0 when none, -1 when out of memory. O(n^3)
   for each measurement. */
#define IKP__LEAVE_MAX 32u
/* x's measurement po taken out of its list (kept sorted) */
static void ikp__peer_drop(ikp__link_data *x, const ikp__peer_off *po)
{
    const size_t e = (size_t)(po - x->peers);
    memmove(&x->peers[e], &x->peers[e + 1], (x->num_peers - e - 1) * sizeof *x->peers);
    x->num_peers--;
}
static int ikp__pair_consistent(const ikp__link_data *ld, uint32_t n, int64_t *s)
{
    uint32_t k;
    ikp__pair_paths(ld, n, 1, s);
    for (k = 0; k < n; k++) if (s[(size_t)k * n + k] < 0) return 0;
    return 1;
}
/* whether the links agree once every host reading is left out (then host
   readings, which drift, are among those that contradict each other) */
static int ikp__hosts_mend(ikp__link_data *ld, uint32_t n, int64_t *s, uint32_t *syncs)
{
    uint32_t x;
    int mends;
    for (x = 0; x < n; x++) { syncs[x] = ld[x].clock_syncs; ld[x].clock_syncs = 0; } /* no host link */
    mends = ikp__pair_consistent(ld, n, s);
    for (x = 0; x < n; x++) ld[x].clock_syncs = syncs[x];
    return mends;
}
static int ikp__leave_out(const ikp_allocator *a, ikp__link_data *ld, uint32_t n, uint32_t *by, ikp__peer_off *gone)
{
    int64_t *s;
    uint32_t x, e, y, found = 0, fx = 0, fe = 0;
    if (n < 3 || n > IKP__LEAVE_MAX) return 0;
    if (!(s = (int64_t *)ikp__alloc(a, (size_t)n * n * sizeof *s + (size_t)n * sizeof(uint32_t)))) return -1;
    if (!ikp__pair_consistent(ld, n, s) && !ikp__hosts_mend(ld, n, s, (uint32_t *)(s + (size_t)n * n)))
        for (x = 0; x < n && found < 2; x++) {
            /* a capture's host readings are tried too (host readings drift): where they are what mends
               it, nothing is left out */
            if (ld[x].clock_syncs) {
                const uint32_t syncs = ld[x].clock_syncs;
                ld[x].clock_syncs = 0; /* its host readings left out */
                if (ikp__pair_consistent(ld, n, s)) { found++; fx = x; fe = UINT32_MAX; }
                ld[x].clock_syncs = syncs;
            }
            for (e = 0; e < ld[x].num_peers && found < 2; e++) {
                const uint64_t unc = ld[x].peers[e].unc;
                for (y = 0; y < n && (ld[y].gpu < 0 || memcmp(ld[y].uuid, ld[x].peers[e].uuid, 16)); y++) {}
                if (y == n) continue; /* a GPU none of the captures is of: no link */
                ld[x].peers[e].unc = UINT64_MAX; /* left out of the paths */
                if (ikp__pair_consistent(ld, n, s)) { found++; fx = x; fe = e; }
                ld[x].peers[e].unc = unc;
            }
        }
    ikp__free(a, s);
    if (found != 1 || fe == UINT32_MAX) return 0;
    *by = fx;
    *gone = ld[fx].peers[fe];
    ikp__peer_drop(&ld[fx], &ld[fx].peers[fe]);
    return 1;
}

/* >>merge-impl: ikp_merge_align, _align_start, labels, host zero */
/* Places n captures by their link data (ld: link_data_of's, with links
   unless raw): ikp_merge_align's work once the captures are checked; ld's
   GPUs and hosts numbered here */
static ikp_result ikp__align(const ikp_allocator *a, ikp__link_data *ld, uint32_t n, int raw, ikp_alignment *out,
                             ikp_error *err)
{
    uint64_t *dist, *orig = NULL;
    ikp__mg mg;
    ikp__peer_off gone;
    uint32_t i, left_by = 0;
    int left = 0;
    int64_t zmin = INT64_MAX;
    ikp_result r = IKP_OK;
    char la[128], lb[128];
    if ((r = ikp__refuse_repeated(a, ld, n, ", started at the same GPU time", err)) != IKP_OK) return r;
    memset(out, 0, (size_t)n * sizeof *out);
    memset(&mg, 0, sizeof mg);
    if (!(dist = (uint64_t *)ikp__alloc(a, (size_t)n * sizeof *dist)) || (!raw && ikp__number_devices(a, n, ld))) {
        r = ikp__oom(err);
        goto end;
    }
    for (i = 0; i < n; i++) dist[i] = i ? UINT64_MAX : 0;
    if (raw) /* every clock taken as the reference's */
        for (i = 1; i < n; i++) { dist[i] = 0xFFFFFFFFu; out[i].via = IKP_ALIGN_RAW; out[i].links = 1; }
    else if ((left = ikp__leave_out(a, ld, n, &left_by, &gone)) < 0 || ikp__mg_build(a, n, ld, &mg) ||
             ikp__merge_place(a, n, ld, &mg, out, dist)) {
        r = ikp__oom(err);
        goto end;
    }
    for (i = 0; i < n; i++)
        if (dist[i] == UINT64_MAX) {
            ikp__pins s;
            s.caps = NULL;
            s.ld = ld;
            ikp__label_at(&s, n, i, la, sizeof la);
            ikp__label_at(&s, n, 0, lb, sizeof lb);
            r = ikp__fail(err, IKP_ERR_EMPTY, -1, -1,
                          "%s cannot be placed against %s: no measurement links their GPUs (a capture of the same "
                          "GPU, a peer clock measurement, or readings of both against one host's clock); raw "
                          "alignment would put them on their GPUs' own clocks, which differ", la, lb);
            goto end;
        }
    if (!raw) { /* the links that disagree, said and covered */
        if (!(orig = (uint64_t *)ikp__alloc(a, (size_t)n * sizeof *orig))) { r = ikp__oom(err); goto end; }
        memcpy(orig, dist, (size_t)n * sizeof *orig);
        if (ikp__merge_check_all(a, n, ld, &mg, out, dist) || ikp__merge_carry(a, n, out, orig, dist) ||
            ikp__merge_centre(a, n, ld, out, dist)) {
            r = ikp__oom(err);
            goto end;
        }
    }
    for (i = 0; left == 1 && i < n; i++) /* the measurement left out, said on both captures */
        if (ld[i].gpu >= 0 && !memcmp(ld[i].uuid, gone.uuid, 16)) {
            const int64_t d = out[i].offset_ns - out[left_by].offset_ns + gone.off;
            const uint64_t ad = (uint64_t)(d < 0 ? -d : d), tol = ikp__merge_grown(gone.unc, dist[i], dist[left_by]);
            ikp__disagree(&out[left_by], ad > tol ? ad - tol : 1, IKP_ALIGN_PEER, i);
            ikp__disagree(&out[i], ad > tol ? ad - tol : 1, IKP_ALIGN_PEER, left_by);
            out[left_by].left_out = out[left_by].disagree_with == i;
            break;
        }
    for (i = 0; i < n; i++) { /* time 0 of each on the reference's clock, the earliest at 0 */
        int64_t z = (int64_t)(ld[i].gpu_zero_ns - ld[0].gpu_zero_ns) - out[i].offset_ns;
        out[i].zero_ns = z;
        out[i].uncertainty_ns = dist[i] >= IKP_MORE_NS ? IKP_MORE_NS : (uint32_t)dist[i];
        if (z < zmin) zmin = z;
    }
    for (i = 0; i < n; i++) out[i].zero_ns -= zmin;
    ikp__ok(err);
end:
    ikp__mg_free(&mg, a);
    ikp__free(a, dist);
    ikp__free(a, orig);
    return r;
}

static void ikp__link_data_free(const ikp_allocator *a, ikp__link_data *ld, uint32_t n)
{
    uint32_t i;
    for (i = 0; ld && i < n; i++) ikp__free(a, ld[i].peers);
    ikp__free(a, ld);
}

/* IKP_ERR_INVALID_ARGUMENT naming the first of n captures that is NULL */
static ikp_result ikp__caps_given(const ikp_capture *const *caps, uint32_t n, ikp_error *err)
{
    uint32_t i;
    for (i = 0; i < n; i++)
        if (!caps[i]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "capture %u is NULL", i + 1);
    return IKP_OK;
}

/* The link data of n captures (their links too where links), from the
   first capture's allocator; NULL where memory ran out */
static ikp__link_data *ikp__link_data_all(const ikp_capture *const *caps, uint32_t n, int links)
{
    const ikp_allocator *a = &caps[0]->alloc;
    ikp__link_data *ld = (ikp__link_data *)ikp__alloc(a, (size_t)n * sizeof *ld);
    uint32_t i;
    if (!ld) return NULL;
    memset(ld, 0, (size_t)n * sizeof *ld);
    for (i = 0; i < n; i++)
        if (ikp__link_data_of(caps[i], a, &ld[i], links)) {
            ikp__link_data_free(a, ld, n);
            return NULL;
        }
    return ld;
}

static void ikp__merge_label(const ikp_capture *const *caps, uint32_t n, uint32_t index, char *buf, size_t size);
IKP_DEF ikp_result ikp_merge_align(const ikp_capture *const *caps, uint32_t n, int raw, ikp_alignment *out,
                                   ikp_error *err)
{
    const ikp_allocator *a;
    ikp__link_data *ld;
    uint32_t i;
    ikp_result r;
    char la[128];
    if (!caps || !out || n == 0) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "no captures to merge");
    if ((r = ikp__caps_given(caps, n, err)) != IKP_OK) return r;
    for (i = 0; i < n && n > 1; i++)
        if (!caps[i]->info.gpu_time_known) {
            ikp__merge_label(caps, n, i, la, sizeof la);
            return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1,
                             "%s is a capture of the %s format, which does not give its GPU's time: no clock "
                             "places it against "
                             "other captures; %s places each capture by its first record", la,
                             ikp_format_name(caps[i]->format), IKP__OPT(&caps[i]->info.option_names, align_start));
        }
    a = &caps[0]->alloc;
    if (!(ld = ikp__link_data_all(caps, n, !raw))) return ikp__oom(err);
    r = ikp__align(a, ld, n, raw, out, err);
    ikp__link_data_free(a, ld, n);
    return r;
}

/* ikp_merge_align_start's placement of n captures */
static void ikp__align_start(uint32_t n, const int64_t *start_ns, ikp_alignment *out)
{
    uint32_t i;
    int64_t zmin = INT64_MAX;
    memset(out, 0, (size_t)n * sizeof *out);
    for (i = 0; i < n; i++) {
        out[i].zero_ns = start_ns ? start_ns[i] : 0;
        out[i].via = i ? IKP_ALIGN_START : IKP_ALIGN_REFERENCE;
        out[i].uncertainty_ns = i ? 0xFFFFFFFFu : 0;
        out[i].links = i ? 1 : 0;
        if (out[i].zero_ns < zmin) zmin = out[i].zero_ns;
    }
    for (i = 0; i < n; i++) out[i].zero_ns -= zmin;
}

IKP_DEF ikp_result ikp_merge_align_start(const ikp_capture *const *caps, uint32_t n, const int64_t *start_ns,
                                         ikp_alignment *out, ikp_error *err)
{
    uint32_t i;
    if (!caps || !out || n == 0) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "no captures to merge");
    for (i = 0; i < n; i++) {
        if (!caps[i]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "capture %u is NULL", i + 1);
        if (start_ns && (start_ns[i] > IKP__MAX_ABS_PS / 1000 || start_ns[i] < -(IKP__MAX_ABS_PS / 1000)))
            return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "start %lld ns of capture %u is out of range",
                             (long long)start_ns[i], i + 1);
    }
    ikp__align_start(n, start_ns, out);
    ikp__ok(err);
    return IKP_OK;
}

/* capture index's label alone, O(n): what ikp_merge_labels gives it */
static void ikp__merge_label(const ikp_capture *const *caps, uint32_t n, uint32_t index, char *buf, size_t size)
{
    ikp__pins s;
    if (!buf || !size) return;
    buf[0] = 0;
    if (!caps) return;
    s.caps = caps;
    s.ld = NULL;
    ikp__label_at(&s, n, index, buf, size);
}

/* every label of s's n captures, capture k's at labels + k * size */
static ikp_result ikp__labels(const ikp__pins *s, uint32_t n, const ikp_allocator *a, char *labels, size_t size,
                              ikp_error *err)
{
    uint8_t *dup = (uint8_t *)ikp__alloc(a, n);
    const int hosts = ikp__many_hosts(s, n);
    ikp__link_data t;
    uint32_t k;
    if (!dup || ikp__label_dups(s, n, hosts, a, dup)) {
        ikp__free(a, dup);
        return ikp__oom(err);
    }
    for (k = 0; k < n; k++) ikp__label_text(ikp__pin(s, k, &t), k, hosts, dup[k], labels + (size_t)k * size, size);
    ikp__free(a, dup);
    ikp__ok(err);
    return IKP_OK;
}

IKP_DEF ikp_result ikp_merge_labels(const ikp_capture *const *caps, uint32_t n, char *labels, size_t size,
                                    ikp_error *err)
{
    ikp__pins s;
    uint32_t i;
    if (!caps || !labels || !n || size < 16)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "merge labels: NULL argument, no captures or size < 16");
    for (i = 0; i < n; i++)
        if (!caps[i]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "capture %u is NULL", i + 1);
    s.caps = caps;
    s.ld = NULL;
    return ikp__labels(&s, n, &caps[0]->alloc, labels, size, err);
}

/* ikp_merge_host_zero of s's captures */
static ikp_result ikp__host_zero(const ikp__pins *s, uint32_t n, const ikp_alignment *al, int64_t *host_ns,
                                 uint32_t *uncertainty_ns, ikp_error *err)
{
    uint32_t k, best = n;
    uint64_t bu = UINT64_MAX, wide = 0;
    ikp__link_data t;
    for (k = 0; k < n; k++) {
        const ikp__link_data *x = ikp__pin(s, k, &t);
        uint64_t u;
        if (al[k].disagree_via == IKP_ALIGN_HOST && al[k].disagreement_ns > wide) wide = al[k].disagreement_ns;
        if (!x || !x->host_time_known || al[k].via == IKP_ALIGN_RAW) continue;
        u = (uint64_t)x->host_zero_uncertainty_ns + al[k].uncertainty_ns;
        if (u < bu) { bu = u; best = k; }
    }
    if (best < n) bu += wide; /* host readings that disagree: none is better than the spread */
    if (best == n)
        return ikp__fail(err, IKP_ERR_EMPTY, -1, -1,
                         "no capture holds readings of its GPU clock against the host's (aligned captures only)");
    *host_ns = ikp__pin(s, best, &t)->host_zero_ns - al[best].zero_ns;
    if (uncertainty_ns) *uncertainty_ns = bu > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)bu;
    ikp__ok(err);
    return IKP_OK;
}

IKP_DEF ikp_result ikp_merge_host_zero(const ikp_capture *const *caps, uint32_t n, const ikp_alignment *al,
                                       int64_t *host_ns, uint32_t *uncertainty_ns, ikp_error *err)
{
    ikp__pins s;
    if (!caps || !al || !host_ns) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    s.caps = caps;
    s.ld = NULL;
    return ikp__host_zero(&s, n, al, host_ns, uncertainty_ns, err);
}

/* >>merge-pairs: how far two placed captures may be off against each other */
#define IKP__PAIR_MAX 1024u
/* s[i * n + j]: the least upper bound that the links' chains give for j's
   clock minus i's (hosts: with host readings' links) */
static void ikp__pair_paths(const ikp__link_data *ld, uint32_t n, int hosts, int64_t *s)
{
    uint32_t i, j, k;
    int kind;
    size_t x;
    for (x = 0; x < (size_t)n * n; x++) s[x] = IKP__PAIR_INF;
    for (i = 0; i < n; i++) s[(size_t)i * n + i] = 0;
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            for (kind = 0; kind < IKP__LINKS_EACH; kind++) { /* each link a bound both ways */
                int64_t val;
                uint64_t unc;
                int via = ikp__merge_link_each(ld, i, j, kind, &val, &unc);
                if (via == IKP_ALIGN_COUNT || (via == IKP_ALIGN_HOST && !hosts)) continue;
                if (unc > ((uint64_t)1 << 60) || val > ((int64_t)1 << 60) || val < -((int64_t)1 << 60)) continue;
                if (val + (int64_t)unc < s[(size_t)i * n + j]) s[(size_t)i * n + j] = val + (int64_t)unc;
                if ((int64_t)unc - val < s[(size_t)j * n + i]) s[(size_t)j * n + i] = (int64_t)unc - val;
            }
    for (k = 0; k < n; k++) /* Floyd-Warshall; sums of two bounds under 2^62 stay inside int64_t */
        for (i = 0; i < n; i++) {
            const int64_t ik = s[(size_t)i * n + k];
            if (ik >= IKP__PAIR_INF) continue;
            for (j = 0; j < n; j++) {
                const int64_t kj = s[(size_t)k * n + j];
                if (kj < IKP__PAIR_INF && ik + kj < s[(size_t)i * n + j])
                    s[(size_t)i * n + j] = ik + kj < -IKP__PAIR_INF ? -IKP__PAIR_INF : ik + kj;
            }
        }
}

/* whether a capture was placed by clock readings with a known uncertainty
   (not raw, not by its first record) */
static int ikp__clock_placed(const ikp_alignment *x)
{
    return x->uncertainty_ns != 0xFFFFFFFFu && x->via != IKP_ALIGN_RAW && x->via != IKP_ALIGN_START;
}

IKP_DEF ikp_result ikp_merge_pair_bounds(const ikp_capture *const *caps, uint32_t n, const ikp_alignment *al,
                                         uint64_t *bounds, ikp_error *err)
{
    const ikp_allocator *a;
    ikp__link_data *ld;
    int64_t *s = NULL;
    uint32_t i, j;
    int consistent = 1;
    ikp_result r = IKP_OK;
    if (!caps || !al || !bounds || n == 0) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    if (n > IKP__PAIR_MAX)
        return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "%u captures: pair bounds are made for at most %u", n,
                         IKP__PAIR_MAX);
    if ((r = ikp__caps_given(caps, n, err)) != IKP_OK) return r;
    a = &caps[0]->alloc;
    if (!(ld = ikp__link_data_all(caps, n, 1))) return ikp__oom(err);
    if (ikp__number_devices(a, n, ld) || !(s = (int64_t *)ikp__alloc(a, (size_t)n * n * sizeof *s))) {
        r = ikp__oom(err);
        goto end;
    }
    for (i = 0; i < n; i++) /* without the measurement ikp_merge_align left out */
        if (al[i].left_out && al[i].disagree_with < n) {
            const ikp__peer_off *po = ikp__peer_of(ld, i, al[i].disagree_with);
            if (po) ikp__peer_drop(&ld[i], po);
        }
    ikp__pair_paths(ld, n, 1, s);
    for (i = 0; i < n; i++) consistent &= s[(size_t)i * n + i] >= 0; /* else a cycle of links no clocks satisfy */
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            const ikp_alignment *x = &al[i], *y = &al[j];
            const int known = ikp__clock_placed(x) && ikp__clock_placed(y);
            uint64_t b = (uint64_t)x->uncertainty_ns + y->uncertainty_ns;
            if (x->uncertainty_ns >= IKP_MORE_NS || y->uncertainty_ns >= IKP_MORE_NS) b = (uint64_t)1 << 61;
            if (i == j) b = 0;
            else if (!known) b = UINT64_MAX;
            else if (consistent && s[(size_t)i * n + j] < IKP__PAIR_INF && s[(size_t)j * n + i] < IKP__PAIR_INF) {
                /* the truth within [lo, hi]; the placed difference d: it lies at most this far from it */
                const int64_t hi = s[(size_t)i * n + j], lo = -s[(size_t)j * n + i], d = y->offset_ns - x->offset_ns;
                const int64_t far = hi - d > d - lo ? hi - d : d - lo;
                if (far >= 0 && (uint64_t)far < b) b = (uint64_t)far;
            }
            bounds[(size_t)i * n + j] = b;
        }
end:
    ikp__free(a, s);
    ikp__link_data_free(a, ld, n);
    if (r == IKP_OK) ikp__ok(err);
    return r;
}

/* >>merge-write: the merged trace: ikp_write_merged */
/* "GPU 1: time 0 at 12.345678 ms; its clock -101.100 us from GPU 0's, +- 0.5 us, by a measurement over peer memory" */
static void ikp__align_text(char *t, size_t size, const char *label, const char *from, const char *with,
                            const ikp_alignment *a, const ikp__link_data *x)
{
    char u[48];
    size_t k;
    snprintf(t, size, "%s", label);
    k = strlen(t);
    if (x->device_known && !ikp__uuid_zero(x->uuid)) {
        snprintf(t + k, size - k, " (%s%s%s)", ikp__uuid_text(x->uuid, u, sizeof u), x->host_name[0] ? " on " : "",
                 x->host_name);
        k = strlen(t);
    }
    snprintf(t + k, size - k, ": time 0 at %lld.%06lld ms", (long long)(a->zero_ns / 1000000),
             (long long)(a->zero_ns % 1000000));
    k = strlen(t);
    if (a->via == IKP_ALIGN_REFERENCE) snprintf(t + k, size - k, "; the reference");
    else if (a->via == IKP_ALIGN_RAW) snprintf(t + k, size - k, "; raw %%globaltimer, not aligned (wrong by the GPUs' clock offset)");
    else if (a->via == IKP_ALIGN_START)
        snprintf(t + k, size - k, "; placed by its first record (%s): no clock measurement, uncertainty unknown",
                 x->align_start);
    else
        snprintf(t + k, size - k, "; clock %+.3f us from the reference's, +- %s%.3f us, by %s from %s",
                 (double)a->offset_ns / 1e3, a->uncertainty_ns >= IKP_MORE_NS ? "more than " : "",
                 (double)a->uncertainty_ns / 1e3, ikp__via_text[a->via], from);
    k = strlen(t);
    if (a->disagreement_ns)
        snprintf(t + k, size - k, "; %s with %s disagree%s by %.3f us beyond their uncertainties%s",
                 ikp__via_text[a->disagree_via], with, a->disagree_via == IKP_ALIGN_HOST ? "" : "s",
                 (double)a->disagreement_ns / 1e3, a->left_out ? " (left out: every other link agrees without it)" : "");
}

typedef struct ikp__merge_ctx {
    const ikp_capture *const *caps;
    uint32_t n;
    const ikp_merge_options *opt;
    const char *path;
} ikp__merge_ctx;

/* The labels given for n captures (labels, may be NULL or hold NULLs):
   IKP_ERR_INVALID_ARGUMENT where two are the same text, for a label tells
   the captures apart in a merged trace and in an exported table. O(n^2)
   compares of the given ones, made once a merge or export. */
static ikp_result ikp__labels_distinct(const char *const *labels, uint32_t n, ikp_error *err)
{
    uint32_t i, j;
    for (i = 0; labels && i < n; i++)
        for (j = i + 1; labels[i] && j < n; j++)
            if (labels[j] && !strcmp(labels[i], labels[j]))
                return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "captures %u and %u are both labelled "
                                 "'%.64s': a label tells the captures apart, give each its own", i + 1, j + 1,
                                 labels[i]);
    return IKP_OK;
}

/* What ikp_write_merged settles before it writes: the placement (al), the
   labels (the options' own over ikp_merge_labels'), the trace options
   (*to) and the latest time of the trace (*top_ns). A time past what trace
   timestamps hold is refused here, before anything is written. */
static ikp_result ikp__merge_setup(const ikp_capture *const *caps, uint32_t n, const ikp_merge_options *opt,
                                   ikp_alignment *al, char (*labels)[128], ikp_trace_options *to,
                                   uint64_t *top_ns, ikp_error *err)
{
    ikp_result r = ikp__check_trace_options(opt ? &opt->trace : NULL, err);
    uint32_t k;
    if (r == IKP_OK && opt) r = ikp__labels_distinct(opt->labels, n, err);
    if (r == IKP_OK)
        r = opt && opt->align_start ? ikp_merge_align_start(caps, n, opt->start_ns, al, err)
                                    : ikp_merge_align(caps, n, opt ? opt->raw : 0, al, err);
    if (r == IKP_OK) r = ikp_merge_labels(caps, n, labels[0], sizeof labels[0], err);
    if (r != IKP_OK) return r;
    for (k = 0; opt && opt->labels && k < n; k++)
        if (opt->labels[k]) snprintf(labels[k], sizeof labels[k], "%s", opt->labels[k]);
    if (opt) *to = opt->trace; else memset(to, 0, sizeof *to);
    for (k = 0; k < n; k++) {
        uint64_t zero = (uint64_t)al[k].zero_ns, span = (uint64_t)ikp__ns(caps[k]->info.span_ps);
        if (!ikp__base_fits(to->time_base_ns, zero, span))
            return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "time_base_ns %llu plus capture %u's start on the "
                             "merged axis (%lld ns) and span (%llu ns) passes 2^63 - 1 ns, where trace timestamps end",
                             (unsigned long long)to->time_base_ns, k + 1, (long long)al[k].zero_ns,
                             (unsigned long long)span);
        if (to->time_base_ns + zero + span > *top_ns) *top_ns = to->time_base_ns + zero + span;
    }
    return IKP_OK;
}

#ifndef IKP_NO_PERFETTO
/* Perfetto: the tracks that open a merged trace and say what its times are
   (the time note) and where each capture sits; their uuids from *uuid on. */
static void ikp__merge_pb_tracks(ikp__out *o, const ikp_capture *const *caps, uint32_t n, const ikp_alignment *al,
                                 char (*labels)[128], const ikp_trace_options *to, uint64_t *uuid)
{
    char text[512];
    uint32_t k;
    *uuid = IKP__PB_UUID0 + 1;
    for (k = 0; k <= n; k++) { /* a name of at most 511 bytes: 3 x 511 once made valid UTF-8 */
        unsigned char d[1600], q[1664], tmp[1536], *p = d, *e;
        ikp__link_data x;
        if (k == 0 && !to->time_note) continue;
        if (k) {
            ikp__link_data_of(caps[k - 1], NULL, &x, 0);
            ikp__align_text(text, sizeof text, labels[k - 1], labels[al[k - 1].from],
                            labels[al[k - 1].disagree_with], &al[k - 1], &x);
        }
        p = ikp__pb_field(p, IKP__PB_TD_UUID, k ? (*uuid)++ : IKP__PB_UUID0);
        p = ikp__pb_str(p, IKP__PB_TD_NAME, k ? text : to->time_note, tmp);
        e = ikp__pb_bytes(q, IKP__PB_TRACK_DESCRIPTOR, d, (size_t)(p - d));
        ikp__pb_packet(o, q, (size_t)(e - q));
    }
}
#endif

/* the largest process id of capture c's lanes (0: none), so that the next
   capture's pids start after it */
static uint64_t ikp__part_top_pid(const ikp_capture *c, ikp_group_by by)
{
    uint64_t top = 0;
    uint32_t i;
    for (i = 0; i < c->info.num_lanes; i++) {
        ikp__lane lt;
        const ikp__lane *l = ikp__get_lane(c, i, &lt);
        uint64_t pid;
        if (!(l->pub.flags & IKP_LANE_STARTED) && !l->pub.records) continue;
        pid = ikp__trace_pid(l, by);
        if (by == IKP_BY_SM && l->pub.sm == IKP_NO_SM) continue;
        if (pid > top) top = pid;
    }
    return top;
}

/* Every capture's processes, written by the one-capture writers as parts
   of the merged trace (ikp__part), each capture's times moved to its place
   on the merged axis; *sum adds up what they drew. */
static ikp_result ikp__merge_parts(const ikp_capture *const *caps, uint32_t n, const ikp_alignment *al,
                                   char (*labels)[128], const ikp_trace_options *to, uint64_t offset, int perfetto,
                                   ikp_write_fn fn, void *user, uint64_t *uuid, ikp_trace_stats *sum, ikp_error *err)
{
    ikp_result r = IKP_OK;
    ikp_trace_stats st;
    ikp__part part;
    uint64_t pid_base = 0;
    uint32_t k;
    int first = 1;
#ifdef IKP_NO_PERFETTO
    (void)perfetto; /* JSON only: ikp__check_trace_format refused Perfetto */
#endif
    for (k = 0; k < n && r == IKP_OK; k++) {
        const ikp_capture *c = caps[k];
        ikp_trace_options tk = *to;
        part.pid_base = pid_base;
        part.ts_offset = offset;
        part.label = labels[k];
        part.first = &first;
        part.uuid = uuid;
        part.seq = 1 + k; /* a sequence a capture: Perfetto keys a sequence's clock by its id, and the
                             captures' lane clocks start at different times */
        tk.time_base_ns = to->time_base_ns + (uint64_t)al[k].zero_ns;
        tk.time_note = NULL;
        memset(&st, 0, sizeof st);
        tk.stats = &st;
#ifndef IKP_NO_PERFETTO
        if (perfetto) r = ikp__perfetto(c, &tk, &part, fn, user, err);
        else
#endif
            r = ikp__chrome(c, &tk, &part, fn, user, err);
        sum->flows += st.flows; sum->flows_unordered += st.flows_unordered;
        sum->flow_unpaired += st.flow_unpaired; sum->counter_tracks += st.counter_tracks;
        pid_base += ikp__part_top_pid(c, to->by);
    }
    return r;
}

/* JSON: the close of traceEvents, and metadata that say what the times
   are and where each capture sits (and which hold records of an earlier
   launch) */
static void ikp__merge_json_tail(ikp__out *o, const ikp_capture *const *caps, uint32_t n, const ikp_alignment *al,
                                 char (*labels)[128], const ikp_trace_options *to, uint64_t offset)
{
    char text[512];
    uint32_t k;
    ikp__puts(o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{");
    if (to->time_note) {
        ikp__puts(o, "\"ikp_time\":\"");
        ikp__put_json_chars(o, to->time_note);
        ikp__puts(o, "\",");
    }
    ikp__puts(o, "\"ikp_time_base_ns\":\"");
    ikp__put_u64(o, to->time_base_ns);
    if (offset) {
        ikp__puts(o, "\",\"ikp_ts_offset_ns\":\"");
        ikp__put_u64(o, offset);
    }
    ikp__puts(o, "\",\"ikp_merged\":\"");
    ikp__put_u64(o, n);
    ikp__puts(o, " captures\"");
    for (k = 0; k < n; k++) {
        ikp__link_data x;
        ikp__link_data_of(caps[k], NULL, &x, 0);
        ikp__align_text(text, sizeof text, labels[k], labels[al[k].from], labels[al[k].disagree_with], &al[k], &x);
        ikp__puts(o, ",\"ikp_capture_");
        ikp__put_u64(o, k + 1);
        ikp__puts(o, "\":\"");
        ikp__put_json_chars(o, text);
        ikp__puts(o, "\"");
        if (ikp_capture_stale(&caps[k]->info, text, sizeof text)) { /* records of an earlier launch */
            ikp__puts(o, ",\"ikp_capture_");
            ikp__put_u64(o, k + 1);
            ikp__puts(o, "_stale\":\"");
            ikp__put_json_chars(o, text);
            ikp__puts(o, "\"");
        }
    }
    ikp__puts(o, "}}\n");
}

/* the format refused: unknown, or Perfetto in a build without its writer */
static ikp_result ikp__check_trace_format(ikp_trace_format format, ikp_error *err)
{
    if ((unsigned)format >= IKP_TRACE_FORMAT_COUNT)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "unknown trace format %d", (int)format);
#ifdef IKP_NO_PERFETTO
    if (format == IKP_TRACE_PERFETTO)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "this build leaves the Perfetto writer out (IKP_NO_PERFETTO)");
#endif
    return IKP_OK;
}

IKP_DEF ikp_result ikp_write_merged(const ikp_capture *const *caps, uint32_t n, const ikp_merge_options *opt,
                                    ikp_trace_format format, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp_alignment *al;
    char (*labels)[128] = NULL, buf[4096];
    ikp_trace_options to;
    ikp_trace_stats sum;
    ikp__out o;
    ikp_result r;
    uint64_t uuid = 0, top_ns = 0, offset;
    const int perfetto = format == IKP_TRACE_PERFETTO;
    if (!caps || !fn || n == 0 || !caps[0]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "no captures");
    if ((r = ikp__check_trace_format(format, err)) != IKP_OK) return r;
    al = opt && opt->alignment ? opt->alignment : (ikp_alignment *)ikp__alloc(&caps[0]->alloc, (size_t)n * sizeof *al);
    labels = (char (*)[128])ikp__alloc(&caps[0]->alloc, (size_t)n * sizeof *labels);
    r = !al || !labels ? ikp__oom(err) : ikp__merge_setup(caps, n, opt, al, labels, &to, &top_ns, err);
    if (r != IKP_OK) goto end;
    offset = perfetto || to.absolute_ts ? 0 : ikp__ts_offset(to.time_base_ns, top_ns); /* the latest time written */
    memset(&sum, 0, sizeof sum);
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    if (!perfetto) ikp__puts(&o, "{\"traceEvents\":[");
#ifndef IKP_NO_PERFETTO
    else ikp__merge_pb_tracks(&o, caps, n, al, labels, &to, &uuid);
#endif
    ikp__flush(&o);
    if (!o.failed) r = ikp__merge_parts(caps, n, al, labels, &to, offset, perfetto, fn, user, &uuid, &sum, err);
    if (r != IKP_OK) goto end;
    if (!perfetto) ikp__merge_json_tail(&o, caps, n, al, labels, &to, offset);
    ikp__flush(&o);
    if (o.failed) r = ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the trace failed");
    else if (to.stats) *to.stats = sum;
end:
    if (!(opt && opt->alignment)) ikp__free(&caps[0]->alloc, al);
    ikp__free(&caps[0]->alloc, labels);
    if (r == IKP_OK) ikp__ok(err);
    return r;
}

static ikp_result ikp__merge_body(void *ctx, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__merge_ctx *c = (ikp__merge_ctx *)ctx;
    const size_t n = strlen(c->path);
    if (n >= 4 && !strcmp(c->path + n - 4, ".zip")) return ikp_write_merged_zip(c->caps, c->n, c->opt, fn, user, err);
    return ikp_write_merged(c->caps, c->n, c->opt, ikp_is_perfetto_path(c->path) ? IKP_TRACE_PERFETTO : IKP_TRACE_JSON,
                            fn, user, err);
}

IKP_DEF ikp_result ikp_write_merged_path(const ikp_capture *const *caps, uint32_t n,
                                         const ikp_merge_options *opt, const char *path, ikp_error *err)
{
    ikp__merge_ctx c;
    if (!caps || !path) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    c.caps = caps;
    c.n = n;
    c.opt = opt;
    c.path = path;
    return ikp__write_path(path, ikp__merge_body, &c, err);
}

/* >>merge-zip: a ZIP of one trace a capture and a Perfetto manifest */
#ifndef IKP_NO_PERFETTO
/* CRC-32 (the ZIP one: reflected, polynomial 0xEDB88320) of [p, p + n) continued from crc */
static uint32_t ikp__crc32(uint32_t crc, const unsigned char *p, size_t n)
{
    static const uint32_t nib[16] = {0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
                                     0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
                                     0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};
    crc = ~crc;
    while (n--) { /* four bits at a time: a table of 16 */
        crc ^= *p++;
        crc = (crc >> 4) ^ nib[crc & 15];
        crc = (crc >> 4) ^ nib[crc & 15];
    }
    return ~crc;
}
/* a sink that passes the bytes on (fn may be NULL: counted only) with their count and CRC */
typedef struct ikp__zsink {
    ikp_write_fn fn;
    void *user;
    uint64_t n;
    uint32_t crc;
} ikp__zsink;
static int ikp__zsink_write(void *u, const void *d, size_t n)
{
    ikp__zsink *z = (ikp__zsink *)u;
    z->crc = ikp__crc32(z->crc, (const unsigned char *)d, n);
    z->n += n;
    return z->fn ? z->fn(z->user, d, n) : 0;
}

typedef struct ikp__zipjob {
    const ikp_capture *const *caps;
    uint32_t n;
    const ikp_alignment *al;
    char (*labels)[128];
    char (*names)[96];          /* the entries' file names */
    const uint64_t *pid_base;
    const uint64_t *uuid0;      /* each file's first track uuid (unique across the archive) */
    const ikp_trace_options *to;
    int host_known;             /* host CLOCK_REALTIME of the merged time 0: host_ns */
    int64_t host_ns;
    ikp_trace_stats *sum;
} ikp__zipjob;

/* The machine the manifest puts every file on: its BOOTTIME is IKP's
   merged axis, not the host's, so the files keep a clock domain of their
   own and meet other machines' traces through REALTIME */
#define IKP__ZIP_MACHINE "GPUs (IKP captures)"
/* entry 0 the manifest, entry k + 1 capture k's Perfetto trace, written to fn */
static ikp_result ikp__zip_entry(const ikp__zipjob *z, uint32_t e, ikp_write_fn fn, void *user, ikp_error *err)
{
    unsigned char buf[4096];
    ikp__out o;
    uint32_t k;
    ikp__out_init(&o, fn, user, (char *)buf, sizeof buf);
    if (e == 0) {
        ikp__puts(&o, "{\"perfetto_manifest\":{\"version\":1,\"files\":[");
        for (k = 0; k < z->n; k++) {
            ikp__puts(&o, k ? ",\n{\"path\":\"" : "\n{\"path\":\"");
            ikp__put_json_chars(&o, z->names[k]);
            ikp__puts(&o, "\",\"machine\":{\"name\":\"" IKP__ZIP_MACHINE "\"}}");
        }
        ikp__puts(&o, "\n]}}\n");
    } else {
        const ikp_capture *c = z->caps[e - 1];
        const ikp_alignment *a = &z->al[e - 1];
        const uint64_t b0 = z->to->time_base_ns + (uint64_t)a->zero_ns; /* the file's time 0 on its BOOTTIME */
        unsigned char d[1600], q[1664], tmp[1536], *p, *f;
        char text[512];
        ikp_trace_options tk = *z->to;
        ikp_trace_stats st;
        ikp__link_data x;
        ikp__part part;
        uint64_t uuid;
        int first = 1;
        ikp_result r;
        k = e - 1;
        uuid = z->uuid0[k];
        if (z->host_known) { /* its BOOTTIME against the host's REALTIME: how Perfetto meets other machines */
            unsigned char c0[24], s0[64], *cc = c0, *sn = s0;
            cc = ikp__pb_field(cc, IKP__PB_CLK_ID, IKP__PB_BOOTTIME);
            cc = ikp__pb_field(cc, IKP__PB_CLK_TS, b0);
            sn = ikp__pb_bytes(sn, IKP__PB_CLOCK, c0, (size_t)(cc - c0));
            cc = c0;
            cc = ikp__pb_field(cc, IKP__PB_CLK_ID, IKP__PB_REALTIME);
            cc = ikp__pb_field(cc, IKP__PB_CLK_TS, (uint64_t)z->host_ns + (uint64_t)a->zero_ns);
            sn = ikp__pb_bytes(sn, IKP__PB_CLOCK, c0, (size_t)(cc - c0));
            p = ikp__pb_field(d, IKP__PB_SEQ_ID, 2 + 2 * k); /* a sequence of its own, as a tracing service's */
            p = ikp__pb_field(p, IKP__PB_SEQ_FLAGS, IKP__PB_CLEARED);
            p = ikp__pb_bytes(p, IKP__PB_CLOCK_SNAPSHOT, s0, (size_t)(sn - s0));
            ikp__pb_packet(&o, d, (size_t)(p - d));
        }
        /* its placement and uncertainty: the name of a track of its own */
        ikp__link_data_of(c, NULL, &x, 0);
        ikp__align_text(text, sizeof text, z->labels[k], z->labels[a->from], z->labels[a->disagree_with], a, &x);
        p = ikp__pb_field(d, IKP__PB_TD_UUID, uuid++);
        p = ikp__pb_str(p, IKP__PB_TD_NAME, text, tmp);
        f = ikp__pb_bytes(q, IKP__PB_TRACK_DESCRIPTOR, d, (size_t)(p - d));
        ikp__pb_packet(&o, q, (size_t)(f - q));
        ikp__flush(&o);
        if (o.failed) return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the archive failed");
        part.pid_base = z->pid_base[k];
        part.ts_offset = 0;
        part.label = z->labels[k];
        part.first = &first;
        part.uuid = &uuid;
        part.seq = 1 + 2 * k; /* a sequence a file: Perfetto keys a sequence's clock by its id */
        tk.time_base_ns = b0;
        tk.time_note = NULL;
        memset(&st, 0, sizeof st);
        tk.stats = &st;
        if ((r = ikp__perfetto(c, &tk, &part, fn, user, err)) != IKP_OK) return r;
        z->sum->flows += st.flows; z->sum->flows_unordered += st.flows_unordered;
        z->sum->flow_unpaired += st.flow_unpaired; z->sum->counter_tracks += st.counter_tracks;
    }
    ikp__flush(&o);
    return o.failed ? ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the archive failed") : IKP_OK;
}

/* a 16-bit field, little-endian (32-bit ones: ikp__wr32) */
static void ikp__wr16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
/* a ZIP header: local (central 0) or central (1) of an entry stored as it is */
static size_t ikp__zip_header(unsigned char *h, int central, const char *name, uint32_t crc, uint32_t size,
                              uint32_t at)
{
    const size_t nl = strlen(name);
    unsigned char *p = h;
    ikp__wr32(p, central ? 0x02014B50u : 0x04034B50u);
    p += 4;
    if (central) { ikp__wr16(p, 20); p += 2; }     /* made by: version 2.0 */
    ikp__wr16(p, 10);                              /* needed: 1.0, stored */
    ikp__wr16(p + 2, 0x0800);                      /* the name is UTF-8 */
    ikp__wr16(p + 4, 0);                           /* stored */
    ikp__wr16(p + 6, 0);                           /* 00:00:00 */
    ikp__wr16(p + 8, 0x21);                        /* 1980-01-01 */
    ikp__wr32(p + 10, crc);
    ikp__wr32(p + 14, size);
    ikp__wr32(p + 18, size);
    ikp__wr16(p + 22, (uint32_t)nl);
    ikp__wr16(p + 24, 0);                          /* no extra field */
    p += 26;
    if (central) {
        memset(p, 0, 10);                          /* comment, disk, attributes */
        ikp__wr32(p + 10, at);
        p += 14;
    }
    memcpy(p, name, nl);
    return (size_t)(p - h) + nl;
}

/* the archive: each entry made twice, first to learn its size and CRC
   (a stored entry's header comes before it), then written; an entry that
   comes out different the second time is refused */
static ikp_result ikp__zip_write(const ikp__zipjob *z, ikp_write_fn fn, void *user, ikp_error *err)
{
    const uint32_t ne = z->n + 1;
    uint32_t *crc = (uint32_t *)ikp__alloc(&z->caps[0]->alloc, (size_t)ne * 3 * sizeof *crc), *size = crc + ne,
             *at = size + ne, e;
    unsigned char h[46 + 96 + 22];
    uint64_t off = 0;
    ikp_result r = IKP_OK;
    if (!crc) return ikp__oom(err);
    for (e = 0; e < ne && r == IKP_OK; e++) {
        const char *name = e ? z->names[e - 1] : "perfetto_manifest.json";
        ikp__zsink s;
        size_t hl;
        memset(&s, 0, sizeof s);
        if ((r = ikp__zip_entry(z, e, ikp__zsink_write, &s, err)) != IKP_OK) break;
        hl = ikp__zip_header(h, 0, name, s.crc, (uint32_t)s.n, 0);
        if (off + hl + s.n > 0xFFFFFFFEu) {
            r = ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "the archive passes 4 GiB at %s (ZIP64 is not written: "
                          "write one merged trace, or fewer captures an archive)", name);
            break;
        }
        crc[e] = s.crc;
        size[e] = (uint32_t)s.n;
        at[e] = (uint32_t)off;
        if (fn(user, h, hl)) { r = ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the archive failed"); break; }
        memset(&s, 0, sizeof s);
        s.fn = fn;
        s.user = user;
        if ((r = ikp__zip_entry(z, e, ikp__zsink_write, &s, err)) != IKP_OK) break;
        if (s.n != size[e] || s.crc != crc[e])
            r = ikp__fail(err, IKP_ERR_WRITE, -1, -1, "%s came out different the second time it was written", name);
        off += hl + s.n;
    }
    if (r == IKP_OK) { /* the central directory, then its end */
        const uint64_t cd = off;
        for (e = 0; e < ne && r == IKP_OK; e++) {
            const size_t hl = ikp__zip_header(h, 1, e ? z->names[e - 1] : "perfetto_manifest.json", crc[e], size[e], at[e]);
            if (fn(user, h, hl)) r = ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the archive failed");
            off += hl;
        }
        if (r == IKP_OK && off > 0xFFFFFFFEu)
            r = ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "the archive's directory passes 4 GiB (ZIP64 is not written)");
        if (r == IKP_OK) {
            memset(h, 0, 22);
            ikp__wr32(h, 0x06054B50u);
            ikp__wr16(h + 8, ne);
            ikp__wr16(h + 10, ne);
            ikp__wr32(h + 12, (uint32_t)(off - cd));
            ikp__wr32(h + 16, (uint32_t)cd);
            if (fn(user, h, 22)) r = ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the archive failed");
        }
    }
    ikp__free(&z->caps[0]->alloc, crc);
    return r;
}

/* capture k's file name from its label: "rank 1 GPU 3" -> "rank-1-gpu-3.pftrace"
   (letters, digits, '.', '_' and '-'; "-2" and on where two would read the same) */
static void ikp__zip_names(char (*labels)[128], uint32_t n, char (*names)[96])
{
    uint32_t k, j;
    for (k = 0; k < n; k++) {
        size_t m = 0, i;
        for (i = 0; labels[k][i] && m < 80; i++) {
            const char c = labels[k][i];
            const int keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
            if (c >= 'A' && c <= 'Z') names[k][m++] = (char)(c - 'A' + 'a');
            else if (keep) names[k][m++] = c;
            else if (m && names[k][m - 1] != '-') names[k][m++] = '-';
        }
        while (m && names[k][m - 1] == '-') m--;
        if (!m) m = (size_t)snprintf(names[k], 80, "capture-%u", k + 1);
        names[k][m] = 0;
        for (j = 0; j < k; j++) /* names so far end in ".pftrace": compare the stem */
            if (!strncmp(names[j], names[k], m) && !strcmp(names[j] + m, ".pftrace")) {
                snprintf(names[k] + m, sizeof names[k] - m, "-%u", k + 1);
                m = strlen(names[k]);
                j = (uint32_t)-1; /* again, against every name */
            }
        snprintf(names[k] + m, sizeof names[k] - m, ".pftrace");
    }
}

IKP_DEF ikp_result ikp_write_merged_zip(const ikp_capture *const *caps, uint32_t n, const ikp_merge_options *opt,
                                        ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp_alignment *al;
    char (*labels)[128] = NULL, (*names)[96] = NULL;
    uint64_t *pid_base = NULL, *uuid0 = NULL, top_ns = 0, pb = 0;
    ikp_trace_options to;
    ikp_trace_stats sum;
    ikp__zipjob z;
    ikp_result r;
    uint32_t k, hu;
    if (!caps || !fn || n == 0 || !caps[0]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "no captures");
    if ((r = ikp__check_trace_format(IKP_TRACE_PERFETTO, err)) != IKP_OK) return r;
    if (n > 65533) return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "%u captures: a ZIP archive without ZIP64 "
                                    "holds at most 65,533 besides its manifest", n);
    if (opt && opt->trace.time_base_ns)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "an archive's traces are each on its own capture's "
                         "time (the manifest places them): time_base_ns must be 0");
    al = opt && opt->alignment ? opt->alignment : (ikp_alignment *)ikp__alloc(&caps[0]->alloc, (size_t)n * sizeof *al);
    labels = (char (*)[128])ikp__alloc(&caps[0]->alloc, (size_t)n * sizeof *labels);
    names = (char (*)[96])ikp__alloc(&caps[0]->alloc, (size_t)n * sizeof *names);
    pid_base = (uint64_t *)ikp__alloc(&caps[0]->alloc, (size_t)n * 2 * sizeof *pid_base);
    r = !al || !labels || !names || !pid_base ? ikp__oom(err)
                                              : ikp__merge_setup(caps, n, opt, al, labels, &to, &top_ns, err);
    if (r != IKP_OK) goto end;
    memset(&z, 0, sizeof z);
    uuid0 = pid_base + n;
    for (k = 0; k < n; k++) { /* pids apart, as in one merged trace; track uuids 2^40 a file */
        pid_base[k] = pb;
        pb += ikp__part_top_pid(caps[k], to.by);
        uuid0[k] = IKP__PB_UUID0 + ((uint64_t)k << 40);
    }
    z.host_known = ikp_merge_host_zero(caps, n, al, &z.host_ns, &hu, NULL) == IKP_OK;
    ikp__zip_names(labels, n, names);
    memset(&sum, 0, sizeof sum);
    z.caps = caps;
    z.n = n;
    z.al = al;
    z.labels = labels;
    z.names = names;
    z.pid_base = pid_base;
    z.uuid0 = uuid0;
    z.to = &to;
    z.sum = &sum;
    r = ikp__zip_write(&z, fn, user, err);
    if (r == IKP_OK && to.stats) { /* each entry was made twice: what one archive drew */
        sum.flows /= 2; sum.flows_unordered /= 2; sum.flow_unpaired /= 2; sum.counter_tracks /= 2;
        *to.stats = sum;
    }
end:
    if (!(opt && opt->alignment)) ikp__free(&caps[0]->alloc, al);
    ikp__free(&caps[0]->alloc, labels);
    ikp__free(&caps[0]->alloc, names);
    ikp__free(&caps[0]->alloc, pid_base);
    if (r == IKP_OK) ikp__ok(err);
    return r;
}
#else
IKP_DEF ikp_result ikp_write_merged_zip(const ikp_capture *const *caps, uint32_t n, const ikp_merge_options *opt,
                                        ikp_write_fn fn, void *user, ikp_error *err)
{
    (void)caps; (void)n; (void)opt; (void)fn; (void)user;
    return ikp__check_trace_format(IKP_TRACE_PERFETTO, err); /* refused: no Perfetto writer */
}
#endif /* IKP_NO_PERFETTO */

#endif /* IKP_NO_MERGE */

/* >>export-parquet: Parquet written here: Thrift, pages, footer */
#if !defined(IKP_NO_MERGE) && !defined(IKP_NO_EXPORT)
/* Apache Parquet, written here (no library): the file is "PAR1", then row
   groups of column chunks, each one data page (v1) of PLAIN-encoded values
   uncompressed, optional columns with RLE definition levels, the text
   columns dictionary-encoded (a dictionary page of the chunk's distinct
   values, then their indices, RLE: a capture's label or GPU is one run
   per chunk, where PLAIN repeated it on every row); then the
   footer, a FileMetaData struct in Thrift's compact protocol, its length
   and "PAR1". Thrift's compact protocol: a field is a byte holding its id's
   distance from the previous field's (1-15) and its type, the values
   ULEB128 varints (signed ones zigzag-coded), a struct ends with a 0 byte,
   a list starts with its size and its elements' type. */
enum {
    IKP__TC_TRUE = 1, IKP__TC_FALSE = 2, IKP__TC_I32 = 5, IKP__TC_I64 = 6, IKP__TC_BINARY = 8,
    IKP__TC_LIST = 9, IKP__TC_STRUCT = 12
};
/* Parquet's physical types, and the repetitions of a column */
enum { IKP__PQ_INT32 = 1, IKP__PQ_INT64 = 2, IKP__PQ_BYTES = 6 };
enum { IKP__PQ_REQUIRED = 0, IKP__PQ_OPTIONAL = 1 };

typedef struct ikp__tc {
    const ikp_allocator *a;
    unsigned char *p;
    size_t n, cap;
    int failed;
    int depth;
    int16_t last[8]; /* the last field id at each struct depth */
} ikp__tc;

static void ikp__tc_put(ikp__tc *t, const void *d, size_t n)
{
    if (!n) return;
    if (t->failed || !ikp__grow(t->a, (void **)&t->p, &t->cap, t->n + n, 1)) { t->failed = 1; return; }
    memcpy(t->p + t->n, d, n);
    t->n += n;
}
static void ikp__tc_byte(ikp__tc *t, unsigned v)
{
    unsigned char b = (unsigned char)v;
    ikp__tc_put(t, &b, 1);
}
static void ikp__tc_uvar(ikp__tc *t, uint64_t v)
{
    unsigned char b[10];
    size_t n = 0;
    do {
        b[n] = (unsigned char)(v & 0x7F);
        v >>= 7;
        if (v) b[n] |= 0x80;
        n++;
    } while (v);
    ikp__tc_put(t, b, n);
}
static uint64_t ikp__zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v < 0 ? -1 : 0); }
static void ikp__tc_field(ikp__tc *t, int id, int type)
{
    int d = id - t->last[t->depth];
    if (d > 0 && d <= 15) ikp__tc_byte(t, (unsigned)(d << 4 | type));
    else {
        ikp__tc_byte(t, (unsigned)type);
        ikp__tc_uvar(t, ikp__zigzag(id));
    }
    t->last[t->depth] = (int16_t)id;
}
static void ikp__tc_i32(ikp__tc *t, int id, int32_t v) { ikp__tc_field(t, id, IKP__TC_I32); ikp__tc_uvar(t, ikp__zigzag(v)); }
static void ikp__tc_i64(ikp__tc *t, int id, int64_t v) { ikp__tc_field(t, id, IKP__TC_I64); ikp__tc_uvar(t, ikp__zigzag(v)); }
static void ikp__tc_str(ikp__tc *t, const char *s, size_t n) { ikp__tc_uvar(t, n); ikp__tc_put(t, s, n); }
static void ikp__tc_bin(ikp__tc *t, int id, const char *s) { ikp__tc_field(t, id, IKP__TC_BINARY); ikp__tc_str(t, s, strlen(s)); }
/* a struct: as field id (id > 0), or as a list's element (id 0) */
static void ikp__tc_begin(ikp__tc *t, int id)
{
    if (id) ikp__tc_field(t, id, IKP__TC_STRUCT);
    if (t->depth + 1 < (int)(sizeof t->last / sizeof t->last[0])) t->last[++t->depth] = 0;
    else t->failed = 1;
}
static void ikp__tc_end(ikp__tc *t)
{
    ikp__tc_byte(t, 0);
    if (t->depth > 0) t->depth--;
}
static void ikp__tc_list(ikp__tc *t, int id, int type, size_t n)
{
    ikp__tc_field(t, id, IKP__TC_LIST);
    if (n < 15) ikp__tc_byte(t, (unsigned)(n << 4 | (size_t)type));
    else {
        ikp__tc_byte(t, (unsigned)(0xF0 | type));
        ikp__tc_uvar(t, n);
    }
}

/* an ikp_write_fn appending to t */
static int ikp__tc_write(void *user, const void *data, size_t size)
{
    ikp__tc *t = (ikp__tc *)user;
    ikp__tc_put(t, data, size);
    return t->failed;
}

/* The RLE / bit-packing hybrid (levels, dictionary indices), written as
   values come: a group of 8 equal values starts or lengthens an RLE run,
   any other group is bit-packed (a run of one group); values left over at
   the end of a page are RLE runs. */
typedef struct ikp__pq_hyb {
    uint64_t pend[8];  /* the group being filled */
    uint64_t run_len;  /* the RLE run not yet written (0: none) */
    uint32_t run_val;
    unsigned np, width;
} ikp__pq_hyb;

/* n values (n * width a multiple of 8) packed LSB first, width bits each */
static void ikp__pq_pack(ikp__tc *t, const uint64_t *x, unsigned n, unsigned width)
{
    unsigned char buf[32 * 8];
    size_t bit = 0, bytes = (size_t)n * width / 8;
    unsigned i, b, take;
    memset(buf, 0, bytes);
    for (i = 0; i < n; i++)
        for (b = 0; b < width; b += take, bit += take) {
            take = 8 - (unsigned)(bit & 7);
            if (take > width - b) take = width - b;
            buf[bit >> 3] |= (unsigned char)(((x[i] >> b) & ((1u << take) - 1)) << (bit & 7));
        }
    ikp__tc_put(t, buf, bytes);
}
static void ikp__hyb_run(ikp__tc *t, ikp__pq_hyb *h)
{
    unsigned k;
    if (!h->run_len) return;
    ikp__tc_uvar(t, h->run_len << 1);
    for (k = 0; k < (h->width + 7) / 8; k++) ikp__tc_byte(t, (h->run_val >> 8 * k) & 0xFF);
    h->run_len = 0;
}
static void ikp__hyb_one(ikp__tc *t, ikp__pq_hyb *h, uint32_t v, unsigned count)
{
    if (h->run_len && h->run_val == v) h->run_len += count;
    else {
        ikp__hyb_run(t, h);
        h->run_val = v;
        h->run_len = count;
    }
}
static void ikp__hyb_put(ikp__tc *t, ikp__pq_hyb *h, uint32_t v)
{
    unsigned k;
    h->pend[h->np++] = v;
    if (h->np < 8) return;
    h->np = 0;
    for (k = 1; k < 8 && h->pend[k] == h->pend[0]; k++) {}
    if (k == 8) ikp__hyb_one(t, h, (uint32_t)h->pend[0], 8);
    else {
        ikp__hyb_run(t, h);
        ikp__tc_byte(t, 1 << 1 | 1); /* one bit-packed group of 8 */
        ikp__pq_pack(t, h->pend, 8, h->width);
    }
}
static void ikp__hyb_end(ikp__tc *t, ikp__pq_hyb *h)
{
    unsigned k;
    for (k = 0; k < h->np; k++) ikp__hyb_one(t, h, (uint32_t)h->pend[k], 1);
    ikp__hyb_run(t, h);
    h->np = 0;
}

/* the bits x needs */
static unsigned ikp__bits(uint64_t x)
{
    unsigned n = 0;
    for (; x; x >>= 1) n++;
    return n;
}

/* The table's columns (FORMAT.md "Parquet export") */
typedef struct ikp__pq_col_def {
    const char *name;
    int type, optional, string;
} ikp__pq_col_def;
enum {
    IKP__PQ_CAPTURE, IKP__PQ_GPU, IKP__PQ_HOST, IKP__PQ_BLOCK, IKP__PQ_GROUP, IKP__PQ_GROUP_NAME, IKP__PQ_SM,
    IKP__PQ_LANE, IKP__PQ_EVENT, IKP__PQ_EVENT_ID, IKP__PQ_KIND, IKP__PQ_START, IKP__PQ_END, IKP__PQ_DURATION,
    IKP__PQ_BEGIN_DATA, IKP__PQ_END_DATA, IKP__PQ_PLACEMENT, IKP__PQ_AXIS, IKP__PQ_COLS
};
static const ikp__pq_col_def ikp__pq_cols[IKP__PQ_COLS] = {
    {"capture", IKP__PQ_BYTES, 0, 1},     {"gpu", IKP__PQ_BYTES, 0, 1},        {"host", IKP__PQ_BYTES, 0, 1},
    {"block", IKP__PQ_INT64, 0, 0},       {"group", IKP__PQ_INT32, 0, 0},      {"group_name", IKP__PQ_BYTES, 0, 1},
    {"sm", IKP__PQ_INT32, 1, 0},          {"lane", IKP__PQ_INT64, 0, 0},       {"event", IKP__PQ_BYTES, 0, 1},
    {"event_id", IKP__PQ_INT32, 0, 0},    {"kind", IKP__PQ_BYTES, 0, 1},       {"start_ns", IKP__PQ_INT64, 0, 0},
    {"end_ns", IKP__PQ_INT64, 0, 0},      {"duration_ps", IKP__PQ_INT64, 0, 0}, {"begin_data", IKP__PQ_INT64, 1, 0},
    {"end_data", IKP__PQ_INT64, 1, 0},    {"placement_ns", IKP__PQ_INT64, 1, 0}, {"time_axis", IKP__PQ_BYTES, 0, 1},
};
/* Parquet's encodings used here */
enum { IKP__PE_PLAIN = 0, IKP__PE_RLE = 3, IKP__PE_DELTA = 5, IKP__PE_DICT = 8 };
#define IKP__PQ_BLOCK_VALUES 128 /* DELTA_BINARY_PACKED: values a block, in 4 miniblocks of 32 */

/* One column of the row group being filled, its pages encoded as rows
   come. Numbers: one data page, DELTA_BINARY_PACKED (the first value, then
   blocks of 128 deltas: the least delta and each miniblock's bit width,
   then the deltas less the least, bit-packed). Text: the chunk's
   dictionary (its page's PLAIN values), and data pages of indices in the
   hybrid encoding, a new page where the dictionary outgrows the bit
   width. Optional columns: a definition level a row (1: a value). */
typedef struct ikp__pq_buf {
    ikp__tc v;                   /* numbers: the page's blocks; text: the dictionary page's values */
    ikp__tc lv;                  /* the definition levels, encoded */
    ikp__tc ix;                  /* text: the indices of the data page being filled, encoded */
    ikp__tc pages;               /* text: the chunk's data pages finished, headers and bodies */
    ikp__pq_hyb lh, ih;          /* the levels' and the indices' encoders */
    uint64_t count;              /* numbers: the values in the page */
    uint64_t page_rows;          /* text: the rows in the data page being filled */
    int64_t first, prev;
    int64_t *d;                  /* numbers: deltas not yet in a block (IKP__PQ_BLOCK_VALUES) */
    unsigned nd;
    uint32_t *ent;               /* the dictionary's entries: offset and length in v, in pairs */
    size_t nent, entcap;
    uint32_t *ht;                /* entry + 1 by hash (0: free); htcap a power of two */
    size_t htcap;
    const char *seen[8];         /* the last strings looked up, by address, and their entries:
                                    most rows repeat a pointer (a label, a name), so the text is
                                    hashed once a row group. Forgotten at each capture's start
                                    (its strings may reuse an earlier capture's memory) */
    uint32_t seen_ent[8];
} ikp__pq_buf;

/* A spill: records written in turn, then read back in turn, from a
   temporary file (tmpfile), so that what an export keeps of each capture
   and row group until the footer costs it no memory; in memory where no
   temporary file can be made (or file is 0) */
typedef struct ikp__spill {
    FILE *f;
    char buf[1024]; /* f's buffer */
    ikp__tc m;      /* in memory: the bytes */
    size_t at;      /* reading m: the next byte */
    int failed;     /* a write or read failed (m.failed: out of memory) */
} ikp__spill;
static void ikp__spill_open(ikp__spill *s, const ikp_allocator *a, int file)
{
    memset(s, 0, sizeof *s);
    s->m.a = a;
    s->f = file ? tmpfile() : NULL;
    if (s->f && setvbuf(s->f, s->buf, _IOFBF, sizeof s->buf) != 0) {
        fclose(s->f);
        s->f = NULL;
    }
}
static void ikp__spill_put(ikp__spill *s, const void *d, size_t n)
{
    if (s->failed || !n) return;
    if (s->f) s->failed = fwrite(d, 1, n, s->f) != n;
    else {
        ikp__tc_put(&s->m, d, n);
        s->failed = s->m.failed;
    }
}
/* from its start again */
static void ikp__spill_rewind(ikp__spill *s)
{
    if (s->f && !s->failed) s->failed = fflush(s->f) != 0 || fseek(s->f, 0, SEEK_SET) != 0;
    s->at = 0;
}
/* the next n bytes; 0, or -1 (failed set) past its end or when it failed */
static int ikp__spill_get(ikp__spill *s, void *d, size_t n)
{
    if (s->failed) return -1;
    if (s->f) s->failed = fread(d, 1, n, s->f) != n;
    else if (n > s->m.n - s->at) s->failed = 1;
    else {
        if (n) memcpy(d, s->m.p + s->at, n);
        s->at += n;
    }
    return s->failed ? -1 : 0;
}
static void ikp__spill_close(ikp__spill *s)
{
    if (s->f) fclose(s->f);
    ikp__free(s->m.a, s->m.p);
    memset(s, 0, sizeof *s);
}

/* a written row group, for the footer: where it starts, its rows, and each
   column chunk's bytes of dictionary page (text) and of data pages, in
   column order from offset */
typedef struct ikp__pq_group {
    int64_t offset;
    uint32_t rows;
    uint32_t delta;              /* bit c: number column c's page is DELTA_BINARY_PACKED (else PLAIN) */
    uint32_t size[IKP__PQ_COLS][2];
} ikp__pq_group;

typedef struct ikp__pqw {
    const ikp_allocator *a;
    ikp__out o;
    char obuf[1 << 12];          /* pages pass it by: what it gathers is headers */
    int64_t offset;              /* bytes written */
    int64_t footer;              /* where the footer starts */
    ikp__pq_buf col[IKP__PQ_COLS];
    ikp__tc h;                   /* a page header, or a piece of the footer, being made */
    uint64_t rows;               /* in the row group being filled */
    uint64_t total_rows;
    uint32_t group_rows;         /* rows a row group, at most */
    size_t group_bytes;          /* encoded bytes a row group, about, at most */
    int plain;                   /* numbers PLAIN */
    ikp__spill groups;           /* the row groups written (ikp__pq_group each) */
    size_t ngroups;
    ikp__spill kv;               /* each capture's key-value metadata (its number, length, JSON) */
    size_t nkv;
    int failed;                  /* out of memory, or too_big */
    int too_big;                 /* a page or the footer past 2 GiB */
} ikp__pqw;

static void ikp__pq_out(ikp__pqw *w, const void *d, size_t n)
{
    if (!n) return;
    ikp__put(&w->o, (const char *)d, n);
    w->offset += (int64_t)n;
}
/* t written out and emptied (its Thrift field state kept) */
static void ikp__pq_emit(ikp__pqw *w, ikp__tc *t)
{
    if (t->failed) w->failed = 1;
    else ikp__pq_out(w, t->p, t->n);
    t->n = 0;
}

/* a block of the deltas gathered: DELTA_BINARY_PACKED */
static void ikp__pq_block(ikp__pq_buf *b)
{
    uint64_t x[32];
    unsigned char width[4];
    int64_t least = b->d[0];
    unsigned i, m;
    for (i = 1; i < b->nd; i++)
        if (b->d[i] < least) least = b->d[i];
    ikp__tc_uvar(&b->v, ikp__zigzag(least));
    for (m = 0; m < 4; m++) { /* a miniblock past the values: width 0, and no bytes */
        uint64_t any = 0;
        for (i = 32 * m; i < 32 * m + 32 && i < b->nd; i++) any |= (uint64_t)b->d[i] - (uint64_t)least;
        width[m] = (unsigned char)ikp__bits(any);
    }
    ikp__tc_put(&b->v, width, 4);
    for (m = 0; m < 4 && 32 * m < b->nd; m++) {
        for (i = 0; i < 32; i++)
            x[i] = 32 * m + i < b->nd ? (uint64_t)b->d[32 * m + i] - (uint64_t)least : 0;
        ikp__pq_pack(&b->v, x, 32, width[m]);
    }
    b->nd = 0;
}
/* the signed value of a 64-bit (or, wide 0, 32-bit) two's complement pattern */
static int64_t ikp__signed(uint64_t u, int wide)
{
    if (!wide) return (u & 0x80000000u) ? (int64_t)(u & 0xFFFFFFFFu) - 0x100000000ll : (int64_t)(u & 0xFFFFFFFFu);
    return u > (uint64_t)INT64_MAX ? -(int64_t)(~u) - 1 : (int64_t)u;
}
/* a number of column c (an INT32 column's within its range) */
static void ikp__pq_num(ikp__pqw *w, int c, int64_t v)
{
    ikp__pq_buf *b = &w->col[c];
    if (w->failed) return;
    if (w->plain) { /* little-endian, 8 or 4 bytes */
        unsigned char x[8];
        ikp__wr64(x, (uint64_t)v);
        ikp__tc_put(&b->v, x, ikp__pq_cols[c].type == IKP__PQ_INT64 ? 8 : 4);
        b->count++;
        return;
    }
    if (b->count++ == 0) b->first = v;
    else { /* deltas wrap as the column's type does (readers undo them the same way) */
        b->d[b->nd++] = ikp__signed((uint64_t)v - (uint64_t)b->prev, ikp__pq_cols[c].type == IKP__PQ_INT64);
        if (b->nd == IKP__PQ_BLOCK_VALUES) ikp__pq_block(b);
    }
    b->prev = v;
}
/* an optional column's definition level for this row: 1 with a value, 0 null */
static void ikp__pq_def(ikp__pqw *w, int c, int present)
{
    ikp__pq_buf *b = &w->col[c];
    ikp__hyb_put(&b->lv, &b->lh, present != 0);
}

/* a page header: its type (0 data, 2 dictionary), body size, and its own
   header (data: rows and the values' encoding; dictionary: entries) */
static void ikp__pq_page_header(ikp__tc *h, int type, size_t body, int64_t count, int encoding)
{
    h->n = 0;
    h->depth = 0;
    h->last[0] = 0;
    ikp__tc_i32(h, 1, type);
    ikp__tc_i32(h, 2, (int32_t)body);
    ikp__tc_i32(h, 3, (int32_t)body);
    if (type == 0) {
        ikp__tc_begin(h, 5); /* DataPageHeader */
        ikp__tc_i32(h, 1, (int32_t)count);
        ikp__tc_i32(h, 2, encoding);
        ikp__tc_i32(h, 3, IKP__PE_RLE); /* levels */
        ikp__tc_i32(h, 4, IKP__PE_RLE);
    } else {
        ikp__tc_begin(h, 7); /* DictionaryPageHeader */
        ikp__tc_i32(h, 1, (int32_t)count);
        ikp__tc_i32(h, 2, IKP__PE_PLAIN);
    }
    ikp__tc_end(h);
    ikp__tc_byte(h, 0);
}
/* a text column's data page being filled, finished into its chunk's pages */
static void ikp__pq_text_page(ikp__pqw *w, ikp__pq_buf *b)
{
    if (!b->page_rows) return;
    ikp__hyb_end(&b->ix, &b->ih);
    if (b->ix.n + 1 > 0x7FFFFFFF) w->too_big = w->failed = 1;
    ikp__pq_page_header(&w->h, 0, b->ix.n + 1, (int64_t)b->page_rows, IKP__PE_DICT);
    if (w->h.failed || b->ix.failed) w->failed = 1;
    ikp__tc_put(&b->pages, w->h.p, w->h.n);
    ikp__tc_byte(&b->pages, b->ih.width);
    ikp__tc_put(&b->pages, b->ix.p, b->ix.n);
    b->ix.n = 0;
    b->page_rows = 0;
}

/* the dictionary's hash table doubled (or made), its entries put back */
static int ikp__pq_rehash(const ikp_allocator *a, ikp__pq_buf *b)
{
    size_t cap = b->htcap ? 2 * b->htcap : 64, i, k;
    uint32_t *ht = (uint32_t *)ikp__alloc(a, cap * sizeof *ht);
    if (!ht) return 0;
    memset(ht, 0, cap * sizeof *ht);
    for (i = 0; i < b->nent; i++) {
        const char *v = (const char *)b->v.p + b->ent[2 * i];
        for (k = ikp__fnv(v, b->ent[2 * i + 1]) & (cap - 1); ht[k]; k = (k + 1) & (cap - 1)) {}
        ht[k] = (uint32_t)i + 1;
    }
    ikp__free(a, b->ht);
    b->ht = ht;
    b->htcap = cap;
    return 1;
}
/* s added to the chunk's dictionary as entry e (counted from 1), in the
   hash table's slot k; the data page ends where its indices' bit width
   no longer holds the new index */
static int ikp__pq_dict_add(ikp__pqw *w, ikp__pq_buf *b, const char *s, size_t n, size_t k)
{
    unsigned char len[4];
    if (!ikp__grow(w->a, (void **)&b->ent, &b->entcap, 2 * b->nent + 2, sizeof *b->ent) ||
        b->v.n + 4 + n > 0x7FFFFFFF)
        return 0;
    ikp__wr32(len, (uint32_t)n);
    ikp__tc_put(&b->v, len, 4); /* the dictionary page's PLAIN bytes: its length, then the value */
    b->ent[2 * b->nent] = (uint32_t)(b->v.n);
    b->ent[2 * b->nent + 1] = (uint32_t)n;
    ikp__tc_put(&b->v, s, n);
    if (b->v.failed) return 0;
    b->ht[k] = (uint32_t)++b->nent;
    if ((b->nent - 1) >> b->ih.width) {
        ikp__pq_text_page(w, b);
        b->ih.width = ikp__bits(b->nent - 1);
    }
    return 1;
}
/* s as UTF-8 (Parquet's strings are): itself when valid, else a copy
   (*copy, to be freed) with U+FFFD for each byte of no valid sequence, as
   every other output writes it; NULL when out of memory */
static const char *ikp__utf8_or_copy(const ikp_allocator *a, const char *s, size_t *n, char **copy)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, len;
    *copy = NULL;
    while (i < *n && (len = ikp__utf8_len(u + i, *n - i)) != 0) i += len;
    if (i == *n) return s;
    if (*n > 0x7FFFFFFF / 3 || !(*copy = (char *)ikp__alloc(a, 3 * *n + 1))) return NULL;
    *n = ikp__utf8_fix((unsigned char *)*copy, u, *n, 0);
    return *copy;
}

/* a text value: its index in the chunk's dictionary (added if new) */
static void ikp__pq_text(ikp__pqw *w, int c, const char *raw)
{
    ikp__pq_buf *b = &w->col[c];
    size_t n, k, slot = ((size_t)raw >> 3) & 7;
    uint32_t e;
    if (w->failed) return;
    if (b->seen[slot] != raw) {
        char *copy = NULL;
        const char *s;
        n = strlen(raw);
        s = n <= 0x7FFFFFFF ? ikp__utf8_or_copy(w->a, raw, &n, &copy) : NULL;
        if (!s || (2 * (b->nent + 1) > b->htcap && !ikp__pq_rehash(w->a, b))) {
            ikp__free(w->a, copy);
            w->failed = 1;
            return;
        }
        for (k = ikp__fnv(s, n) & (b->htcap - 1); (e = b->ht[k]) != 0; k = (k + 1) & (b->htcap - 1))
            if (b->ent[2 * (e - 1) + 1] == n && memcmp(b->v.p + b->ent[2 * (e - 1)], s, n) == 0) break;
        if (!e) {
            if (!ikp__pq_dict_add(w, b, s, n, k)) {
                ikp__free(w->a, copy);
                w->failed = 1;
                return;
            }
            e = (uint32_t)b->nent;
        }
        ikp__free(w->a, copy);
        b->seen[slot] = raw;
        b->seen_ent[slot] = e - 1;
    }
    ikp__hyb_put(&b->ix, &b->ih, b->seen_ent[slot]);
    b->page_rows++;
}

/* column chunks written: a text column's dictionary page, then its data
   pages; a number column's one data page (PLAIN where all its rows are
   null, so that it has no values, or where the table is plain) */
static void ikp__pq_text_chunk(ikp__pqw *w, ikp__pq_buf *b, uint32_t size[2])
{
    int64_t at = w->offset;
    ikp__pq_text_page(w, b);
    ikp__pq_page_header(&w->h, 2, b->v.n, (int64_t)b->nent, 0);
    if (w->h.failed || b->v.failed || b->pages.failed) w->failed = 1;
    if (w->failed) return;
    ikp__pq_out(w, w->h.p, w->h.n);
    ikp__pq_out(w, b->v.p, b->v.n);
    size[0] = (uint32_t)(w->offset - at);
    ikp__pq_out(w, b->pages.p, b->pages.n);
    size[1] = (uint32_t)(w->offset - at) - size[0];
    b->v.n = b->pages.n = 0;
    b->nent = 0;
    b->ih.width = 1;
    if (b->ht) memset(b->ht, 0, b->htcap * sizeof *b->ht);
    memset(b->seen, 0, sizeof b->seen);
}
static void ikp__pq_num_chunk(ikp__pqw *w, int c, uint32_t size[2], uint32_t *delta)
{
    ikp__pq_buf *b = &w->col[c];
    const int optional = ikp__pq_cols[c].optional, deltas = b->count && !w->plain;
    unsigned char len[4], head[4 * 10];
    ikp__tc t;
    size_t body;
    int64_t at = w->offset;
    if (b->nd) ikp__pq_block(b);
    if (optional) ikp__hyb_end(&b->lv, &b->lh);
    memset(&t, 0, sizeof t); /* the delta header, four varints: head holds them */
    t.p = head;
    t.cap = sizeof head;
    if (deltas) {
        ikp__tc_uvar(&t, IKP__PQ_BLOCK_VALUES);
        ikp__tc_uvar(&t, 4);
        ikp__tc_uvar(&t, b->count);
        ikp__tc_uvar(&t, ikp__zigzag(b->first));
    }
    body = (optional ? 4 + b->lv.n : 0) + t.n + b->v.n;
    if (body > 0x7FFFFFFF) w->too_big = w->failed = 1;
    ikp__pq_page_header(&w->h, 0, body, (int64_t)w->rows, deltas ? IKP__PE_DELTA : IKP__PE_PLAIN);
    if (w->h.failed || b->v.failed || b->lv.failed) w->failed = 1;
    if (w->failed) return;
    ikp__pq_out(w, w->h.p, w->h.n);
    if (optional) { /* the levels' length, then the levels */
        ikp__wr32(len, (uint32_t)b->lv.n);
        ikp__pq_out(w, len, 4);
        ikp__pq_out(w, b->lv.p, b->lv.n);
    }
    ikp__pq_out(w, head, t.n);
    ikp__pq_out(w, b->v.p, b->v.n);
    size[0] = 0;
    size[1] = (uint32_t)(w->offset - at);
    if (deltas) *delta |= 1u << c;
    b->v.n = b->lv.n = 0;
    b->count = 0;
}

/* the bytes the row group's pages hold so far (their buffers are let go
   when it is written) */
static size_t ikp__pq_held(const ikp__pqw *w)
{
    size_t n = 0;
    int c;
    for (c = 0; c < IKP__PQ_COLS; c++) n += w->col[c].v.n + w->col[c].lv.n + w->col[c].ix.n + w->col[c].pages.n;
    return n;
}
static void ikp__tc_release(ikp__tc *t)
{
    ikp__free(t->a, t->p);
    t->p = NULL;
    t->n = t->cap = 0;
}
/* The row group filled so far, written: its column chunks in order */
static void ikp__pq_flush_group(ikp__pqw *w)
{
    ikp__pq_group g;
    int c;
    if (!w->rows || w->failed) return;
    memset(&g, 0, sizeof g);
    g.offset = w->offset;
    g.rows = (uint32_t)w->rows;
    for (c = 0; c < IKP__PQ_COLS && !w->failed; c++) {
        if (ikp__pq_cols[c].string) ikp__pq_text_chunk(w, &w->col[c], g.size[c]);
        else ikp__pq_num_chunk(w, c, g.size[c], &g.delta);
    }
    for (c = 0; c < IKP__PQ_COLS; c++) {
        ikp__tc_release(&w->col[c].v);
        ikp__tc_release(&w->col[c].lv);
        ikp__tc_release(&w->col[c].ix);
        ikp__tc_release(&w->col[c].pages);
    }
    ikp__spill_put(&w->groups, &g, sizeof g);
    w->ngroups++;
    w->total_rows += w->rows;
    w->rows = 0;
}
/* a row ended: the row group written when it is full */
static void ikp__pq_row_end(ikp__pqw *w)
{
    if (++w->rows >= w->group_rows || ((w->rows & 63) == 0 && ikp__pq_held(w) >= w->group_bytes))
        ikp__pq_flush_group(w);
}

/* a row group's RowGroup struct, a list element */
static void ikp__pq_footer_group(ikp__tc *t, const ikp__pq_group *g)
{
    int64_t at = g->offset;
    int c;
    ikp__tc_begin(t, 0); /* RowGroup */
    ikp__tc_list(t, 1, IKP__TC_STRUCT, IKP__PQ_COLS);
    for (c = 0; c < IKP__PQ_COLS; c++) {
        const ikp__pq_col_def *d = &ikp__pq_cols[c];
        const int64_t bytes = (int64_t)g->size[c][0] + g->size[c][1];
        ikp__tc_begin(t, 0); /* ColumnChunk */
        ikp__tc_i64(t, 2, at);
        ikp__tc_begin(t, 3); /* ColumnMetaData */
        ikp__tc_i32(t, 1, d->type);
        ikp__tc_list(t, 2, IKP__TC_I32, (size_t)(1 + d->string + d->optional)); /* the pages', the levels' */
        if (d->string) {
            ikp__tc_uvar(t, ikp__zigzag(IKP__PE_PLAIN));
            ikp__tc_uvar(t, ikp__zigzag(IKP__PE_DICT));
        } else ikp__tc_uvar(t, ikp__zigzag(g->delta >> c & 1 ? IKP__PE_DELTA : IKP__PE_PLAIN));
        if (d->optional) ikp__tc_uvar(t, ikp__zigzag(IKP__PE_RLE));
        ikp__tc_list(t, 3, IKP__TC_BINARY, 1);
        ikp__tc_str(t, d->name, strlen(d->name));
        ikp__tc_i32(t, 4, 0); /* UNCOMPRESSED */
        ikp__tc_i64(t, 5, g->rows);
        ikp__tc_i64(t, 6, bytes);
        ikp__tc_i64(t, 7, bytes);
        ikp__tc_i64(t, 9, at + g->size[c][0]);
        if (d->string) ikp__tc_i64(t, 11, at);
        ikp__tc_end(t);
        ikp__tc_end(t);
        at += bytes;
    }
    ikp__tc_i64(t, 2, at - g->offset);
    ikp__tc_i64(t, 3, g->rows);
    ikp__tc_end(t);
}

/* The footer, written a piece at a time: FileMetaData (its schema, rows
   and row groups, then the key-value metadata's list and elements,
   then created_by), its length and "PAR1" */
static void ikp__pq_footer_begin(ikp__pqw *w, size_t nkv)
{
    ikp__tc *t = &w->h;
    size_t g;
    int c;
    w->footer = w->offset;
    t->n = 0;
    t->depth = 0;
    t->last[0] = 0;
    ikp__tc_i32(t, 1, 2); /* version: 2, for RLE_DICTIONARY (data pages stay v1) */
    ikp__tc_list(t, 2, IKP__TC_STRUCT, IKP__PQ_COLS + 1);
    ikp__tc_begin(t, 0); /* the schema's root */
    ikp__tc_bin(t, 4, "schema");
    ikp__tc_i32(t, 5, IKP__PQ_COLS);
    ikp__tc_end(t);
    for (c = 0; c < IKP__PQ_COLS; c++) {
        const ikp__pq_col_def *d = &ikp__pq_cols[c];
        ikp__tc_begin(t, 0);
        ikp__tc_i32(t, 1, d->type);
        ikp__tc_i32(t, 3, d->optional ? IKP__PQ_OPTIONAL : IKP__PQ_REQUIRED);
        ikp__tc_bin(t, 4, d->name);
        if (d->string) ikp__tc_i32(t, 6, 0); /* UTF8 */
        if (d->string) { /* logicalType: STRING */
            ikp__tc_begin(t, 10);
            ikp__tc_begin(t, 1);
            ikp__tc_end(t);
            ikp__tc_end(t);
        }
        ikp__tc_end(t);
    }
    ikp__tc_i64(t, 3, (int64_t)w->total_rows);
    ikp__tc_list(t, 4, IKP__TC_STRUCT, w->ngroups);
    ikp__spill_rewind(&w->groups);
    for (g = 0; g < w->ngroups && !w->failed; g++) {
        ikp__pq_group gr;
        if (ikp__spill_get(&w->groups, &gr, sizeof gr)) break;
        ikp__pq_footer_group(t, &gr);
        ikp__pq_emit(w, t);
    }
    ikp__tc_list(t, 5, IKP__TC_STRUCT, nkv);
    ikp__pq_emit(w, t);
}

/* a key-value pair of the footer's metadata, an element of its list */
static void ikp__pq_kv(ikp__pqw *w, const char *key, const char *value)
{
    ikp__tc_begin(&w->h, 0);
    ikp__tc_bin(&w->h, 1, key);
    ikp__tc_bin(&w->h, 2, value);
    ikp__tc_end(&w->h);
    ikp__pq_emit(w, &w->h);
}
static void ikp__pq_footer_end(ikp__pqw *w)
{
    unsigned char len[4];
    int64_t n;
    ikp__tc_bin(&w->h, 6, "ikp " IKP_VERSION_STRING);
    ikp__tc_byte(&w->h, 0);
    ikp__pq_emit(w, &w->h);
    n = w->offset - w->footer;
    if (n > 0x7FFFFFFF) w->too_big = w->failed = 1;
    if (w->failed) return;
    ikp__wr32(len, (uint32_t)n);
    ikp__pq_out(w, len, 4);
    ikp__pq_out(w, "PAR1", 4);
}
/* >>export-rows: one capture's rows */
typedef struct ikp__pq_place {
    const char *label;
    int64_t zero_ns;        /* the capture's time 0 on the table's axis */
    uint32_t uncertainty_ns;/* of that placement */
} ikp__pq_place;

static const char *const ikp__kind_names[IKP_EVENT_KIND_COUNT] = {"region", "instant", "unmatched_begin",
                                                                   "unmatched_end"};

/* An IKP capture's lanes read from its file one at a time: once the
   capture is open its words are let go (ikp__lanes_open), and each lane's
   are read again when its rows are written (ikp__lanes_decode), every word
   of the file's buffer in order and hashed as it comes, so that a file
   changed since it was placed is still found (ikp__lanes_close). The
   export then holds one lane's words, not the capture's. */
typedef struct ikp__lanes_file {
    FILE *f;
    uint64_t lo, next;  /* buf: words [lo, next) */
    uint64_t *buf;
    size_t cap;
    uint64_t hash;      /* of words [0, next) */
    int failed;         /* reading failed (IKP_ERR_IO), or memory ran out (IKP_ERR_OUT_OF_MEMORY) */
} ikp__lanes_file;

/* the words a lane's walk reads: [base, base + its extent) */
static uint64_t ikp__lane_extent(const ikp__lane *l)
{
    return l->ring_size > l->slots ? l->ring_size : l->slots;
}

/* 1, and cap's words let go, when its lanes can be read from path one at
   a time: an IKP capture whose words were read in place, each lane after
   the one before */
static int ikp__lanes_open(ikp__lanes_file *lf, ikp_capture *cap, const char *path)
{
    uint32_t i;
    uint64_t end = 0;
    memset(lf, 0, sizeof *lf);
    if (cap->format != IKP_FORMAT_IKP || !cap->lanes || cap->index || !cap->words_in_file || !cap->owned) return 0;
    for (i = 0; i < cap->info.num_lanes; i++) {
        const ikp__lane *l = &cap->lanes[i];
        if (l->step != 1 || l->base < end || ikp__lane_extent(l) > cap->num_words - l->base) return 0;
        end = l->base + ikp__lane_extent(l);
    }
    if (cap->words_at > 0x7FFFFFFF || !(lf->f = fopen(path, "rb"))) return 0;
    setvbuf(lf->f, NULL, _IONBF, 0); /* read in whole lanes: no buffer of its own */
    if (fseek(lf->f, (long)cap->words_at, SEEK_SET) != 0) {
        fclose(lf->f);
        lf->f = NULL;
        return 0;
    }
    lf->hash = IKP__FNV_BASIS;
    ikp__free(&cap->alloc, cap->owned);
    cap->owned = NULL;
    cap->words = NULL;
    return 1;
}

/* reads the file's words on to word end (buf: [lo, end) when keep, else
   only hashed, in pieces); 0, or -1 (failed) */
static int ikp__lanes_read(ikp__lanes_file *lf, const ikp_allocator *a, uint64_t end, int keep)
{
    uint64_t *w, k, n;
    if (lf->failed) return -1;
    if (keep) lf->lo = lf->next;
    while (lf->next < end) {
        n = end - lf->next;
        if (!keep && n > 4096) n = 4096;
        if (!ikp__grow(a, (void **)&lf->buf, &lf->cap, keep ? (size_t)(end - lf->lo) : (size_t)n, 8)) {
            lf->failed = IKP_ERR_OUT_OF_MEMORY;
            return -1;
        }
        w = keep ? lf->buf + (lf->next - lf->lo) : lf->buf;
        if (fread(w, 8, (size_t)n, lf->f) != (size_t)n) { lf->failed = IKP_ERR_IO; return -1; }
        if (!ikp__is_little_endian()) /* little-endian in the file */
            for (k = 0; k < n; k++) w[k] = ikp__rd64((const unsigned char *)(w + k));
        lf->hash = ikp__words_hash_on(lf->hash, w, (size_t)n);
        lf->next += n;
    }
    return 0;
}

/* lane i of cap, decoded from its words read again */
static ikp_result ikp__lanes_decode(ikp__lanes_file *lf, const ikp_capture *cap, uint32_t i, ikp_lane_events *ev,
                                    ikp_error *err)
{
    ikp_capture c = *cap;
    ikp__lane l = cap->lanes[i];
    if (ikp__lanes_read(lf, &cap->alloc, l.base + ikp__lane_extent(&l), 1))
        return lf->failed == IKP_ERR_OUT_OF_MEMORY ? ikp__oom(err)
               : ikp__fail(err, IKP_ERR_IO, -1, (int64_t)i, "reading lane %u again from the file failed", i);
    c.words = lf->buf;
    c.num_words = (size_t)(lf->next - lf->lo);
    l.base -= lf->lo;
    return ikp__decode(&c, &l, ev, err);
}

/* the file's words read to their end: IKP_OK when their hash is still
   hash, else IKP_ERR_IO (path changed, or could not be read) or
   IKP_ERR_OUT_OF_MEMORY, said in err */
static ikp_result ikp__lanes_close(ikp__lanes_file *lf, const ikp_allocator *a, uint64_t num_words, uint64_t hash,
                                   const char *path, ikp_error *err)
{
    const int read = ikp__lanes_read(lf, a, num_words, 0) == 0;
    const int failed = lf->failed;
    const uint64_t got = lf->hash;
    if (lf->f) fclose(lf->f);
    ikp__free(a, lf->buf);
    memset(lf, 0, sizeof *lf);
    if (!read && failed == IKP_ERR_OUT_OF_MEMORY) return ikp__oom(err);
    if (!read) return ikp__fail(err, IKP_ERR_IO, -1, -1, "%s: reading it again failed", path);
    if (got != hash)
        return ikp__fail(err, IKP_ERR_IO, -1, -1, "%s: changed while it was exported (its words, read again lane by "
                         "lane, differ from those read to place it)", path);
    return IKP_OK;
}

/* every event of every lane of cap, a row each, in lane order (lf: its
   lanes read from its file) */
static ikp_result ikp__pq_rows(ikp__pqw *w, const ikp_capture *cap, ikp__lanes_file *lf, const ikp__pq_place *pl,
                               const char *axis, ikp_error *err)
{
    const ikp_capture_info *in = &cap->info;
    ikp_lane_events ev;
    ikp_lane_info li;
    ikp_result r = IKP_OK;
    char gpu[48] = "", id[32];
    uint32_t i;
    size_t k;
    if (in->device_known && !ikp__uuid_zero(cap->device.uuid)) ikp__uuid_text(cap->device.uuid, gpu, sizeof gpu);
    memset(&ev, 0, sizeof ev);
    for (i = 0; i < IKP__PQ_COLS; i++) memset(w->col[i].seen, 0, sizeof w->col[i].seen);
    for (i = 0; i < in->num_lanes && r == IKP_OK && !w->failed && !w->o.failed; i++) {
        const char *group;
        if ((r = ikp_capture_lane(cap, i, &li, err)) != IKP_OK ||
            (r = lf ? ikp__lanes_decode(lf, cap, i, &ev, err) : ikp_decode_lane(cap, i, &ev, err)) != IKP_OK)
            break;
        group = ikp_group_name(cap, li.group);
        for (k = 0; k < ev.count; k++) {
            const ikp_event *e = &ev.events[k];
            const char *name = ikp_event_name(cap, e->id);
            ikp__pq_text(w, IKP__PQ_CAPTURE, pl->label);
            ikp__pq_text(w, IKP__PQ_GPU, gpu);
            ikp__pq_text(w, IKP__PQ_HOST, in->device_known ? cap->device.host : "");
            ikp__pq_num(w, IKP__PQ_BLOCK, li.block);
            ikp__pq_num(w, IKP__PQ_GROUP, (int32_t)li.group);
            ikp__pq_text(w, IKP__PQ_GROUP_NAME, group ? group : "");
            ikp__pq_def(w, IKP__PQ_SM, li.sm != IKP_NO_SM);
            if (li.sm != IKP_NO_SM) ikp__pq_num(w, IKP__PQ_SM, (int32_t)li.sm);
            ikp__pq_num(w, IKP__PQ_LANE, i);
            if (name) ikp__pq_text(w, IKP__PQ_EVENT, name);
            else { /* a name made here, in memory the next one reuses: not remembered by address */
                snprintf(id, sizeof id, "event %u", e->id);
                ikp__pq_text(w, IKP__PQ_EVENT, id);
                w->col[IKP__PQ_EVENT].seen[((size_t)id >> 3) & 7] = NULL;
            }
            ikp__pq_num(w, IKP__PQ_EVENT_ID, (int32_t)e->id);
            ikp__pq_text(w, IKP__PQ_KIND, e->kind < IKP_EVENT_KIND_COUNT ? ikp__kind_names[e->kind] : "");
            ikp__pq_num(w, IKP__PQ_START, pl->zero_ns + ikp__ns(e->start_ps));
            ikp__pq_num(w, IKP__PQ_END, pl->zero_ns + ikp__ns(e->end_ps));
            ikp__pq_num(w, IKP__PQ_DURATION, e->end_ps - e->start_ps);
            ikp__pq_def(w, IKP__PQ_BEGIN_DATA, (e->flags & IKP_EVENT_HAS_BEGIN_DATA) != 0);
            if (e->flags & IKP_EVENT_HAS_BEGIN_DATA) ikp__pq_num(w, IKP__PQ_BEGIN_DATA, e->begin_data);
            ikp__pq_def(w, IKP__PQ_END_DATA, (e->flags & IKP_EVENT_HAS_END_DATA) != 0);
            if (e->flags & IKP_EVENT_HAS_END_DATA) ikp__pq_num(w, IKP__PQ_END_DATA, e->end_data);
            { /* null when either bound is not known (placed by first records; a lane past any) */
                const int known = li.placement_ns != 0xFFFFFFFFu && pl->uncertainty_ns < IKP_MORE_NS;
                ikp__pq_def(w, IKP__PQ_PLACEMENT, known);
                if (known) ikp__pq_num(w, IKP__PQ_PLACEMENT, (int64_t)li.placement_ns + pl->uncertainty_ns);
            }
            ikp__pq_text(w, IKP__PQ_AXIS, axis);
            ikp__pq_row_end(w);
        }
    }
    ikp_lane_events_free(cap, &ev);
    return r;
}
/* >>export-impl: the table: captures placed, rows written */
static void ikp__pq_init(ikp__pqw *w, const ikp_allocator *a, ikp_write_fn fn, void *user, uint32_t group_rows,
                         size_t group_bytes, int files)
{
    int c;
    memset(w, 0, sizeof *w);
    w->a = w->h.a = a;
    for (c = 0; c < IKP__PQ_COLS; c++) {
        ikp__pq_buf *b = &w->col[c];
        b->v.a = b->lv.a = b->ix.a = b->pages.a = a;
        b->lh.width = b->ih.width = 1;
        if (!ikp__pq_cols[c].string && !(b->d = (int64_t *)ikp__alloc(a, IKP__PQ_BLOCK_VALUES * sizeof *b->d)))
            w->failed = 1;
    }
    w->group_rows = group_rows ? group_rows : 65536;
    w->group_bytes = group_bytes;
    ikp__spill_open(&w->groups, a, files);
    ikp__spill_open(&w->kv, a, files);
    ikp__out_init(&w->o, fn, user, w->obuf, sizeof w->obuf);
    ikp__pq_out(w, "PAR1", 4);
}
static void ikp__pq_free(ikp__pqw *w)
{
    int c;
    for (c = 0; c < IKP__PQ_COLS; c++) {
        ikp__pq_buf *b = &w->col[c];
        ikp__free(w->a, b->v.p);
        ikp__free(w->a, b->lv.p);
        ikp__free(w->a, b->ix.p);
        ikp__free(w->a, b->pages.p);
        ikp__free(w->a, b->ent);
        ikp__free(w->a, b->ht);
        ikp__free(w->a, b->d);
    }
    ikp__spill_close(&w->groups);
    ikp__spill_close(&w->kv);
    ikp__free(w->a, w->h.p);
}
/* the table's end written out; the result */
static ikp_result ikp__pq_result(ikp__pqw *w, ikp_error *err)
{
    ikp__flush(&w->o);
    if (w->too_big)
        return ikp__fail(err, IKP_ERR_SIZE_OVERFLOW, -1, -1, "a page of the table would pass 2 GiB: give fewer rows a "
                         "row group (ikp_export_options.row_group_rows)");
    if (w->groups.failed || w->kv.failed) /* a temporary file (or, without one, memory) */
        return w->groups.m.failed || w->kv.m.failed ? ikp__oom(err)
               : ikp__fail(err, IKP_ERR_IO, -1, -1, "a temporary file of the export failed (tmpfile)");
    if (w->failed) return ikp__oom(err);
    if (w->o.failed) return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the table failed");
    return IKP_OK;
}

/* What a table keeps of a capture between placing it and writing its
   rows, an ikp__pq_cap each in a spill (in order): its time 0 on the
   table's axis and how sure that is, its label, its placement as a
   sentence, and a file's hash of its words. With host readings the axis
   is host CLOCK_REALTIME ns, else ns from the earliest capture's first
   record. */
typedef struct ikp__pq_cap {
    int64_t zero_ns;
    uint32_t uncertainty_ns;
    uint64_t key[3];        /* a file's: the 64-bit FNV-1a hash of its words, their count, and the
                               hash of its other bytes (header, names, clock readings) */
    char label[128];
    char alignment[768];
} ikp__pq_cap;

typedef struct ikp__pq_plan {
    ikp__spill caps;
    int64_t base_ns;
    uint32_t base_uncertainty_ns;
    const char *axis;
} ikp__pq_plan;

/* capture k's label: the options' own, else ikp_merge_labels' */
static void ikp__pq_label(const ikp_export_options *opt, const ikp__link_data *ld, uint32_t k, int hosts,
                          const uint8_t *dup, char *buf, size_t size)
{
    if (opt && opt->labels && opt->labels[k]) snprintf(buf, size, "%s", opt->labels[k]);
    else ikp__label_text(&ld[k], k, hosts, dup[k], buf, size);
}

/* The captures placed (ld: their link data, with links unless raw) and
   what the table keeps of each, spilled in p->caps (to a temporary file
   when files; ikp__pq_plan_free frees it either way) */
static ikp_result ikp__pq_plan_make(const ikp_allocator *a, ikp__link_data *ld, uint32_t n,
                                    const ikp_export_options *opt, int files, ikp__pq_plan *p, ikp_error *err)
{
    ikp_alignment *al = (ikp_alignment *)ikp__alloc(a, (size_t)n * sizeof *al);
    uint8_t *dup = (uint8_t *)ikp__alloc(a, n);
    ikp__pq_cap *c = (ikp__pq_cap *)ikp__alloc(a, sizeof *c);
    char from[128], with[128];
    ikp__pins s;
    ikp_result r = IKP_OK;
    uint32_t k;
    int hosts;
    memset(p, 0, sizeof *p);
    ikp__spill_open(&p->caps, a, files);
    s.caps = NULL;
    s.ld = ld;
    if (!al || !dup || !c) { r = ikp__oom(err); goto end; }
    p->axis = "merged_ns";
    for (k = 0; k < n; k++)
        if (!ld[k].gpu_time_known) p->axis = "capture_ns"; /* no GPU time to place it by */
    if (p->axis[0] == 'c') { /* by first records; ikp__align refuses a capture given twice, here too */
        if ((r = ikp__refuse_repeated(a, ld, n, "", err)) != IKP_OK) goto end;
        ikp__align_start(n, NULL, al);
    } else if ((r = ikp__align(a, ld, n, opt ? opt->raw : 0, al, err)) != IKP_OK) goto end;
    if (opt && opt->alignment) memcpy(opt->alignment, al, (size_t)n * sizeof *al);
    hosts = ikp__many_hosts(&s, n);
    if (ikp__label_dups(&s, n, hosts, a, dup)) { r = ikp__oom(err); goto end; }
    if (p->axis[0] == 'm' && !(opt && opt->raw) &&
        ikp__host_zero(&s, n, al, &p->base_ns, &p->base_uncertainty_ns, NULL) == IKP_OK)
        p->axis = "host_realtime_ns";
    else p->base_ns = 0;
    for (k = 0; k < n; k++) {
        memset(c, 0, sizeof *c);
        c->zero_ns = p->base_ns + al[k].zero_ns;
        c->uncertainty_ns = al[k].uncertainty_ns;
        c->key[0] = ld[k].hash;
        c->key[1] = ld[k].num_words;
        c->key[2] = ld[k].rest_hash;
        ikp__pq_label(opt, ld, k, hosts, dup, c->label, sizeof c->label);
        ikp__pq_label(opt, ld, al[k].from, hosts, dup, from, sizeof from);
        ikp__pq_label(opt, ld, al[k].disagree_with, hosts, dup, with, sizeof with);
        ikp__align_text(c->alignment, sizeof c->alignment, c->label, from, with, &al[k], &ld[k]);
        ikp__spill_put(&p->caps, c, sizeof *c);
    }
    ikp__spill_rewind(&p->caps);
    if (p->caps.failed) r = p->caps.m.failed ? ikp__oom(err) : ikp__fail(err, IKP_ERR_IO, -1, -1,
                                                                          "writing a temporary file failed");
    else ikp__ok(err);
end:
    ikp__free(a, al);
    ikp__free(a, dup);
    ikp__free(a, c);
    return r;
}

/* capture k's figures, as the footer's value "ikp.capture.K" (JSON), kept
   in w->kv until the footer */
static void ikp__pq_capture_kv(ikp__pqw *w, const ikp__pq_cap *pc, const ikp_capture *c, uint32_t k,
                               const char *source)
{
    const ikp_capture_info *in = &c->info;
    ikp__tc j;
    ikp__out o;
    char text[768], buf[1024];
    uint32_t len;
    memset(&j, 0, sizeof j);
    j.a = w->a;
    ikp__out_init(&o, ikp__tc_write, &j, buf, sizeof buf);
    ikp__puts(&o, "{");
    ikp__put_kv_s(&o, "label", pc->label, 1);
    ikp__put_kv_s(&o, "source", source, 0);
    ikp__put_kv_s(&o, "format", ikp_format_name(in->format), 0);
    if (in->device_known) ikp_device_text(&c->device, text, sizeof text);
    ikp__put_kv_s(&o, "device", in->device_known ? text : NULL, 0);
    ikp__put_kv_u(&o, "lanes", in->num_lanes);
    ikp__put_kv_u(&o, "active_lanes", in->active_lanes);
    ikp__put_kv_u(&o, "records", in->records);
    ikp__put_kv_un(&o, "dropped", in->dropped, in->drops_known);
    ikp__put_kv_un(&o, "launch", in->launch, in->launch != 0);
    ikp__put_kv_s(&o, "stale", ikp_capture_stale(in, text, sizeof text) ? text : NULL, 0);
    ikp_capture_placement(in, text, sizeof text, NULL);
    ikp__put_kv_s(&o, "placement", text, 0);
    ikp__put_kv_s(&o, "alignment", pc->alignment, 0);
    ikp__put_kv_u(&o, "start_ns", (uint64_t)pc->zero_ns);
    ikp__puts(&o, "}");
    ikp__flush(&o);
    if (o.failed || j.failed || j.n > 0x7FFFFFFF) w->failed = 1;
    else {
        len = (uint32_t)j.n;
        ikp__spill_put(&w->kv, &k, sizeof k);
        ikp__spill_put(&w->kv, &len, sizeof len);
        ikp__spill_put(&w->kv, j.p, j.n);
        w->nkv++;
    }
    ikp__free(w->a, j.p);
}

/* err's message, said of the file path */
static void ikp__in_file(ikp_error *err, ikp_result r, const char *path)
{
    char m[sizeof err->message];
    if (!err) return;
    snprintf(m, sizeof m, "%s", err->message);
    ikp__fail(err, r, err->offset, err->lane, "%s: %s", path, m);
}

/* The captures of a table: opened already (caps: what waits for the
   footer is kept in memory), or files read one at a time, each opened when
   its rows are written (what waits, in temporary files) */
typedef struct ikp__pq_src {
    const ikp_capture *const *caps;  /* NULL: paths */
    const char *const *paths;
    const ikp_decode_options *dopt;
    const ikp_allocator *a;
} ikp__pq_src;

/* how a table is written: its row groups' rows and encoded bytes, at
   most, and whether numbers are PLAIN */
typedef struct ikp__pq_form {
    uint32_t rows;
    size_t bytes;
    int plain;
} ikp__pq_form;

/* the footer: the row groups, each capture's metadata and the axis */
static void ikp__pq_footer(ikp__pqw *w, const ikp__pq_plan *p)
{
    char t[160], key[48];
    size_t e;
    ikp__pq_flush_group(w);
    if (w->failed) return;
    ikp__pq_footer_begin(w, w->nkv + 2);
    ikp__spill_rewind(&w->kv);
    for (e = 0; e < w->nkv && !w->failed; e++) {
        uint32_t k, len;
        char *v;
        if (ikp__spill_get(&w->kv, &k, sizeof k) || ikp__spill_get(&w->kv, &len, sizeof len)) break;
        if (!(v = (char *)ikp__alloc(w->a, (size_t)len + 1))) { w->failed = 1; break; }
        if (!ikp__spill_get(&w->kv, v, len)) {
            v[len] = 0;
            snprintf(key, sizeof key, "ikp.capture.%u", k + 1);
            ikp__pq_kv(w, key, v);
        }
        ikp__free(w->a, v);
    }
    if (p->axis[0] == 'h')
        snprintf(t, sizeof t, "host_realtime_ns: host CLOCK_REALTIME ns, +- %u ns (the host readings' uncertainty)",
                 p->base_uncertainty_ns);
    else if (p->axis[0] == 'm')
        snprintf(t, sizeof t, "merged_ns: ns from the earliest capture's first record (no host readings)");
    else snprintf(t, sizeof t, "capture_ns: ns from each capture's first record (a capture's stamps give no GPU time)");
    ikp__pq_kv(w, "ikp.time_axis", t);
    snprintf(t, sizeof t, "%u", (unsigned)w->nkv);
    ikp__pq_kv(w, "ikp.captures", t);
    ikp__pq_footer_end(w);
}

/* a table of captures k0..k1-1 of src, placed by p (its next records) */
static ikp_result ikp__pq_table(const ikp__pq_src *src, uint32_t k0, uint32_t k1, ikp__pq_plan *p,
                                const ikp__pq_form *form, ikp_write_fn fn, void *user, ikp_error *err)
{
    const ikp_allocator *a = src->a;
    ikp__pqw *w = (ikp__pqw *)ikp__alloc(a, sizeof *w);
    ikp__pq_cap *pc = (ikp__pq_cap *)ikp__alloc(a, sizeof *pc);
    ikp_result r = IKP_OK;
    uint32_t k;
    if (!w || !pc) {
        ikp__free(a, w);
        ikp__free(a, pc);
        return ikp__oom(err);
    }
    ikp__pq_init(w, a, fn, user, form->rows, form->bytes, !src->caps);
    w->plain = form->plain;
    for (k = k0; k < k1 && r == IKP_OK; k++) {
        ikp_capture *opened = NULL;
        const ikp_capture *c;
        ikp__lanes_file lf;
        ikp__pq_place pl;
        int lanes;
        if (ikp__spill_get(&p->caps, pc, sizeof *pc)) {
            r = ikp__fail(err, IKP_ERR_IO, -1, -1, "reading a temporary file failed");
            break;
        }
        if (!src->caps && (r = ikp_capture_open_path(src->paths[k], src->dopt, &opened, err)) != IKP_OK) {
            ikp__in_file(err, r, src->paths[k]);
            break;
        }
        if (opened && opened->rest_hash != pc->key[2]) { /* device, clock readings, names: what places and names it */
            r = ikp__fail(err, IKP_ERR_IO, -1, -1, "%s: changed while it was exported (its header, names or clock "
                          "readings differ from those read to place it)", src->paths[k]);
            ikp_capture_free(opened);
            break;
        }
        /* its words as read to place it: hashed here, or lane by lane as they are read again */
        lanes = opened && opened->num_words == pc->key[1] && ikp__lanes_open(&lf, opened, src->paths[k]);
        if (opened && !lanes && (opened->num_words != pc->key[1] ||
                                 ikp__words_hash(opened->words, opened->num_words) != pc->key[0])) {
            r = ikp__fail(err, IKP_ERR_IO, -1, -1, "%s: changed while it was exported (its words differ from "
                          "those read to place it)", src->paths[k]);
            ikp_capture_free(opened);
            break;
        }
        c = opened ? opened : src->caps[k];
        pl.label = pc->label;
        pl.zero_ns = pc->zero_ns;
        pl.uncertainty_ns = pc->uncertainty_ns;
        r = ikp__pq_rows(w, c, lanes ? &lf : NULL, &pl, p->axis, err);
        if (lanes) { /* a failure of its own rows is said first */
            ikp_error e2;
            const ikp_result rc = ikp__lanes_close(&lf, a, pc->key[1], pc->key[0], src->paths[k], &e2);
            if (r == IKP_OK && rc != IKP_OK) {
                r = rc;
                if (err) *err = e2;
            }
        }
        if (r == IKP_OK) ikp__pq_capture_kv(w, pc, c, k, src->caps ? NULL : src->paths[k]);
        ikp_capture_free(opened);
    }
    if (r == IKP_OK) {
        ikp__pq_footer(w, p);
        r = ikp__pq_result(w, err);
    }
    ikp__pq_free(w);
    ikp__free(a, w);
    ikp__free(a, pc);
    return r;
}

/* opt's form, else 65,536 rows and half the largest capture's words (at least 64 KiB) a row group */
static ikp__pq_form ikp__pq_form_of(const ikp_export_options *opt, uint64_t largest_words)
{
    ikp__pq_form c;
    c.plain = opt && opt->plain;
    c.rows = opt ? opt->row_group_rows : 0;
    c.bytes = opt && opt->row_group_bytes ? opt->row_group_bytes : (size_t)(largest_words * 8 / 2);
    if (!(opt && opt->row_group_bytes) && c.bytes < 65536) c.bytes = 65536;
    return c;
}

static void ikp__pq_plan_free(ikp__pq_plan *p)
{
    ikp__spill_close(&p->caps);
}

typedef struct ikp__pq_job {
    const ikp__pq_src *src;
    ikp__pq_plan *p;
    uint32_t k0, k1;
    ikp__pq_form form;
} ikp__pq_job;
static ikp_result ikp__pq_body(void *ctx, ikp_write_fn fn, void *user, ikp_error *err)
{
    const ikp__pq_job *j = (const ikp__pq_job *)ctx;
    return ikp__pq_table(j->src, j->k0, j->k1, j->p, &j->form, fn, user, err);
}

IKP_DEF ikp_result ikp_export_parquet(const ikp_capture *const *caps, uint32_t n, const ikp_export_options *opt,
                                      ikp_write_fn fn, void *user, ikp_error *err)
{
    const ikp_allocator *a;
    ikp__link_data *ld;
    ikp__pq_plan p;
    ikp__pq_src src;
    uint64_t largest = 0;
    ikp_result r;
    uint32_t k;
    if (!caps || !n || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "no captures to export");
    if (opt && opt->row_group_rows > 0x7FFFFFFFu)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "%u rows a row group: at most 2^31 - 1",
                         opt->row_group_rows);
    if (opt && (r = ikp__labels_distinct(opt->labels, n, err)) != IKP_OK) return r;
    for (k = 0; k < n; k++)
        if (!caps[k]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "capture %u is NULL", k + 1);
        else if (caps[k]->num_words > largest) largest = caps[k]->num_words;
    a = &caps[0]->alloc;
    if (!(ld = (ikp__link_data *)ikp__alloc(a, (size_t)n * sizeof *ld))) return ikp__oom(err);
    memset(ld, 0, (size_t)n * sizeof *ld);
    memset(&p, 0, sizeof p);
    for (k = 0; k < n; k++)
        if (ikp__link_data_of(caps[k], a, &ld[k], !(opt && opt->raw))) break;
    r = k < n ? ikp__oom(err) : ikp__pq_plan_make(a, ld, n, opt, 0, &p, err);
    ikp__link_data_free(a, ld, n);
    if (r == IKP_OK) {
        const ikp__pq_form form = ikp__pq_form_of(opt, largest);
        src.caps = caps;
        src.paths = NULL;
        src.dopt = NULL;
        src.a = a;
        r = ikp__pq_table(&src, 0, n, &p, &form, fn, user, err);
    }
    ikp__pq_plan_free(&p);
    if (r == IKP_OK) ikp__ok(err);
    return r;
}

/* Host names of many captures, each kept once: name i at names + 64 i,
   found by hash (ht: index + 1, 0 free; a power of two, at least twice
   the names) */
typedef struct ikp__hostset {
    const ikp_allocator *a;
    char (*names)[64];
    uint32_t n, cap;
    uint32_t *ht;
    size_t htcap;
} ikp__hostset;
/* host's number, added when new; -1 when out of memory */
static int32_t ikp__hostset_add(ikp__hostset *s, const char *host)
{
    size_t h, m, i;
    if (2 * ((size_t)s->n + 1) > s->htcap) { /* the table doubled, the names put back */
        size_t nc = s->htcap ? 2 * s->htcap : 16;
        uint32_t *t = (uint32_t *)ikp__alloc(s->a, nc * sizeof *t);
        if (!t) return -1;
        memset(t, 0, nc * sizeof *t);
        for (i = 0; i < s->n; i++) {
            for (h = ikp__fnv(s->names[i], strlen(s->names[i])) & (nc - 1); t[h]; h = (h + 1) & (nc - 1)) {}
            t[h] = (uint32_t)i + 1;
        }
        ikp__free(s->a, s->ht);
        s->ht = t;
        s->htcap = nc;
    }
    m = s->htcap - 1;
    for (h = ikp__fnv(host, strlen(host)) & m; s->ht[h]; h = (h + 1) & m)
        if (!strcmp(s->names[s->ht[h] - 1], host)) return (int32_t)(s->ht[h] - 1);
    if (s->n == s->cap) {
        size_t c = s->cap;
        if (!ikp__grow(s->a, (void **)&s->names, &c, (size_t)s->n + 1, sizeof *s->names)) return -1;
        s->cap = (uint32_t)c;
    }
    snprintf(s->names[s->n], sizeof s->names[0], "%s", host);
    s->ht[h] = ++s->n;
    return (int32_t)(s->n - 1);
}

/* The first reading of the files: each opened, its link data kept (its
   words: their hash; its host name: in hs) and freed again */
static ikp_result ikp__pq_read_links(const char *const *inputs, uint32_t n, const ikp_decode_options *dopt,
                                     const ikp_allocator *a, int raw, ikp__link_data *ld, ikp__hostset *hs,
                                     ikp_error *err)
{
    ikp_result r = IKP_OK;
    uint32_t k;
    for (k = 0; k < n && r == IKP_OK; k++) { /* one capture in memory at a time */
        ikp_capture *c = NULL;
        int32_t h;
        r = ikp_capture_open_path(inputs[k], dopt, &c, err);
        if (r != IKP_OK) {
            ikp__in_file(err, r, inputs[k]);
            break;
        }
        if (ikp__link_data_of(c, a, &ld[k], !raw) || (h = ikp__hostset_add(hs, c->device.host)) < 0) r = ikp__oom(err);
        else {
            ld[k].hash = ikp__words_hash(c->words, c->num_words);
            ld[k].rest_hash = c->rest_hash;
            ld[k].words = NULL;
            ld[k].host = h; /* for now: its name's number in hs */
        }
        ikp_capture_free(c);
    }
    for (k = 0; r == IKP_OK && k < n; k++) ld[k].host_name = hs->names[ld[k].host];
    return r;
}

IKP_DEF ikp_result ikp_export_parquet_files(const char *const *inputs, uint32_t n, const ikp_decode_options *dopt,
                                            const ikp_export_options *opt, const char *const *outputs,
                                            uint32_t num_outputs, ikp_error *err)
{
    ikp_allocator a;
    ikp__link_data *ld;
    ikp__hostset hs;
    ikp__pq_plan p;
    ikp__pq_src src;
    ikp__pq_job job;
    ikp_result r = IKP_OK;
    uint64_t largest = 0;
    uint32_t k;
    if (!inputs || !n || !outputs || (num_outputs != 1 && num_outputs != n))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "%s", !inputs || !n ? "no captures to export" :
                         "give one output, or one a capture");
    for (k = 0; k < n; k++)
        if (!inputs[k]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "input %u is NULL", k + 1);
    for (k = 0; k < num_outputs; k++)
        if (!outputs[k]) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "output %u is NULL", k + 1);
    if (opt && opt->row_group_rows > 0x7FFFFFFFu)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "%u rows a row group: at most 2^31 - 1",
                         opt->row_group_rows);
    if (opt && (r = ikp__labels_distinct(opt->labels, n, err)) != IKP_OK) return r;
    if ((r = ikp__check_allocator(dopt ? &dopt->allocator : NULL, err)) != IKP_OK) return r;
    a = ikp__allocator(dopt ? &dopt->allocator : NULL);
    memset(&hs, 0, sizeof hs);
    hs.a = &a;
    if (!(ld = (ikp__link_data *)ikp__alloc(&a, (size_t)n * sizeof *ld))) r = ikp__oom(err);
    else {
        memset(ld, 0, (size_t)n * sizeof *ld);
        r = ikp__pq_read_links(inputs, n, dopt, &a, opt && opt->raw, ld, &hs, err);
    }
    memset(&p, 0, sizeof p);
    if (r == IKP_OK) r = ikp__pq_plan_make(&a, ld, n, opt, 1, &p, err);
    for (k = 0; r == IKP_OK && k < n; k++)
        if (ld[k].num_words > largest) largest = ld[k].num_words;
    ikp__link_data_free(&a, ld, n); /* placed: from here on, what each capture needs is in p's spill */
    ikp__free(&a, hs.names);
    ikp__free(&a, hs.ht);
    src.caps = NULL;
    src.paths = inputs;
    src.dopt = dopt;
    src.a = &a;
    job.src = &src;
    job.p = &p;
    job.form = ikp__pq_form_of(opt, largest);
    for (k = 0; k < num_outputs && r == IKP_OK; k++) {
        job.k0 = num_outputs == 1 ? 0 : k;
        job.k1 = num_outputs == 1 ? n : k + 1;
        r = ikp__write_path(outputs[k], ikp__pq_body, &job, err);
    }
    ikp__pq_plan_free(&p);
    if (r == IKP_OK) ikp__ok(err);
    return r;
}
#endif /* IKP_NO_EXPORT */

/* >>report-analysis: one walk for statistics, diff and report */
#ifndef IKP_NO_REPORT
/* n zero bytes (all-zero doubles are 0.0 on every IEEE-754 machine) */
static void *ikp__zalloc(const ikp_allocator *a, size_t n)
{
    void *p = ikp__alloc(a, n);
    if (p) memset(p, 0, n ? n : 1);
    return p;
}
/* e^x without libm: the library links with libc alone */
static double ikp__exp(double y)
{
    double x = y < 0 ? -y : y, term = 1, sum = 1;
    int k = 0, i;
    if (x > 700) return y < 0 ? 0 : 1e300;
    while (x > 0.5) { x *= 0.5; k++; }
    for (i = 1; i < 20; i++) { term *= -x / i; sum += term; }
    while (k--) sum *= sum;
    return y < 0 ? sum : 1 / sum;      /* sum = e^-|y| */
}
/* erfc(x), x >= 0: Chebyshev fit, relative error below 1.2e-7 */
static double ikp__erfc(double x)
{
    double t = 1.0 / (1.0 + 0.5 * x);
    return t * ikp__exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
           t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
           t * (-0.82215223 + t * 0.17087277)))))))));
}

/* Two-sided Mann-Whitney rank test of sorted a[0..na) against sorted
   b[0..nb): z > 0 when b ranks higher; normal approximation with the tie
   correction and a continuity correction. */
static void ikp__rank_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, double *z, double *p)
{
    size_t i = 0, j = 0;
    double r1 = 0, ties = 0, rank = 1, n = (double)na + (double)nb, var, d;
    *z = 0;
    *p = 1;
    if (!na || !nb) return;
    while (i < na || j < nb) {
        uint64_t v = i < na && (j >= nb || a[i] <= b[j]) ? a[i] : b[j];
        size_t ca = 0, cb = 0;
        double t;
        while (i < na && a[i] == v) { i++; ca++; }
        while (j < nb && b[j] == v) { j++; cb++; }
        t = (double)(ca + cb);
        r1 += (double)ca * (rank + (t - 1) / 2); /* the mean rank of the tie group */
        ties += t * t * t - t;
        rank += t;
    }
    var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
    if (!(var > 0)) return;
    d = r1 - (double)na * ((double)na + 1) / 2 - (double)na * (double)nb / 2; /* U of a, less its mean */
    d = d > 0.5 ? d - 0.5 : d < -0.5 ? d + 0.5 : 0;
    *z = d == 0 ? 0 : -d / ikp__sqrt(var);
    *p = ikp__erfc((*z < 0 ? -*z : *z) / 1.4142135623730951);
    if (*p > 1) *p = 1;
}

typedef struct ikp__iv { int64_t s, e; } ikp__iv;   /* [s, e) in ps */
typedef struct ikp__ser { uint64_t key; uint64_t *v; size_t n, cap; } ikp__ser; /* durations, ps */
typedef struct ikp__bnd { int64_t t; int32_t d; uint32_t g; } ikp__bnd;        /* a busy edge */

#define IKP__PAIR_GROUPS 16u
#define IKP__DEPTHS 4u

typedef struct ikp__an {
    const ikp_capture *cap;
    const ikp_allocator *a;
    const uint8_t *wait;       /* per event id, or NULL */
    /* duration series by key (id << 32 | group when full, id alone else) */
    ikp__ser *ser;
    size_t nser, sercap;
    uint32_t *hash;            /* open addressing: ser index + 1, 0 empty */
    size_t hcap;
    uint64_t regions, instants, unmatched_begin, unmatched_end;
    /* per group (ids below ng) */
    uint32_t ng;
    double *g_region, *g_lspan, *g_work, *g_bspan, *g_alone;
    uint32_t *g_lanes, *g_blocks, *g_bound, *g_mark; /* g_mark: the last block counted + 1 */
    uint32_t *g_open;          /* a block's sweep: open intervals per group */
    double *p_span, *p_both, *p_a, *p_b; /* pairs, [a * 16 + b] */
    ikp_report_block *blk;
    size_t nblk, blkcap;
    /* scratch of a block */
    ikp__iv *iv, *iv2;
    size_t iv_n, iv_cap, iv2_cap, *iv_at, iv_atcap;
    uint64_t *gs;              /* (group << 32 | slot), sorted */
    size_t gscap;
    ikp__bnd *bd;
    size_t bdcap;
    double *alone;
    /* the picture */
    uint32_t *units;           /* SMs (or blocks), sorted */
    size_t nunits;
    int by_sm;
    uint64_t *rows;            /* (unit << 32 | group) of the timeline, sorted */
    size_t nrows;
    double px_per_ps;
    uint32_t width;
    ikp_report_rect *rects;
    size_t nrects, rectcap;
    size_t *last;              /* per row and depth: rect index + 1 */
    int64_t *stack;
    size_t stackcap;
    uint32_t heat_rows, heat_bins, upr;
    double *heat;
} ikp__an;

static uint64_t ikp__an_unit(const ikp__an *an, const ikp__lane *l)
{
    return an->by_sm ? l->pub.sm : l->pub.block;
}

/* the series of key, created when new; NULL when out of memory */
static ikp__ser *ikp__an_ser(ikp__an *an, uint64_t key)
{
    size_t h, i;
    if (an->nser * 2 >= an->hcap) { /* grow and rehash */
        size_t nc = an->hcap ? an->hcap * 2 : 64;
        uint32_t *nh = (uint32_t *)ikp__alloc(an->a, nc * sizeof(uint32_t));
        if (!nh) return NULL;
        memset(nh, 0, nc * sizeof(uint32_t));
        for (i = 0; i < an->nser; i++) {
            h = (size_t)(ikp__mix64(an->ser[i].key) & (nc - 1));
            while (nh[h]) h = (h + 1) & (nc - 1);
            nh[h] = (uint32_t)(i + 1);
        }
        ikp__free(an->a, an->hash);
        an->hash = nh;
        an->hcap = nc;
    }
    h = (size_t)(ikp__mix64(key) & (an->hcap - 1));
    while (an->hash[h]) {
        if (an->ser[an->hash[h] - 1].key == key) return &an->ser[an->hash[h] - 1];
        h = (h + 1) & (an->hcap - 1);
    }
    if (!ikp__grow(an->a, (void **)&an->ser, &an->sercap, an->nser + 1, sizeof(ikp__ser))) return NULL;
    memset(&an->ser[an->nser], 0, sizeof(ikp__ser));
    an->ser[an->nser].key = key;
    an->hash[h] = (uint32_t)(++an->nser);
    return &an->ser[an->nser - 1];
}

static void ikp__an_free(ikp__an *an)
{
    size_t i;
    const ikp_allocator *a = an->a;
    for (i = 0; i < an->nser; i++) ikp__free(a, an->ser[i].v);
    ikp__free(a, an->ser); ikp__free(a, an->hash);
    ikp__free(a, an->g_region); ikp__free(a, an->g_lspan); ikp__free(a, an->g_work); ikp__free(a, an->g_bspan);
    ikp__free(a, an->g_alone); ikp__free(a, an->g_lanes); ikp__free(a, an->g_blocks); ikp__free(a, an->g_bound);
    ikp__free(a, an->g_mark); ikp__free(a, an->g_open);
    ikp__free(a, an->p_span); ikp__free(a, an->p_both); ikp__free(a, an->p_a); ikp__free(a, an->p_b);
    ikp__free(a, an->blk); ikp__free(a, an->iv); ikp__free(a, an->iv2); ikp__free(a, an->iv_at);
    ikp__free(a, an->gs); ikp__free(a, an->bd); ikp__free(a, an->alone); ikp__free(a, an->units);
    ikp__free(a, an->rows); ikp__free(a, an->rects); ikp__free(a, an->last); ikp__free(a, an->stack);
    ikp__free(a, an->heat);
}

static int ikp__cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}
static int ikp__cmp_iv(const void *pa, const void *pb)
{
    const ikp__iv *a = (const ikp__iv *)pa, *b = (const ikp__iv *)pb;
    return a->s < b->s ? -1 : a->s > b->s;
}
static int ikp__cmp_bnd(const void *pa, const void *pb)
{
    const ikp__bnd *a = (const ikp__bnd *)pa, *b = (const ikp__bnd *)pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->d < b->d ? -1 : a->d > b->d; /* ends first */
}
static int ikp__cmp_blk_end(const void *pa, const void *pb)
{
    const ikp_report_block *a = (const ikp_report_block *)pa, *b = (const ikp_report_block *)pb;
    if (a->end_ps != b->end_ps) return a->end_ps > b->end_ps ? -1 : 1; /* latest first */
    return a->block < b->block ? -1 : a->block > b->block;
}

static size_t ikp__find_u64(const uint64_t *v, size_t n, uint64_t key) /* n if absent */
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (v[m] < key) lo = m + 1; else hi = m;
    }
    return lo < n && v[lo] == key ? lo : n;
}
static size_t ikp__find_u32(const uint32_t *v, size_t n, uint32_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (v[m] < key) lo = m + 1; else hi = m;
    }
    return lo < n && v[lo] == key ? lo : n;
}

/* adds [s, e) to the sorted disjoint list ending at iv[n) (s >= the last start) */
static void ikp__iv_add(ikp__iv *iv, size_t base, size_t *n, int64_t s, int64_t e)
{
    if (*n > base && s <= iv[*n - 1].e) { if (e > iv[*n - 1].e) iv[*n - 1].e = e; }
    else { iv[*n].s = s; iv[*n].e = e; (*n)++; }
}

/* the work intervals of one lane: its regions' union less its waits'
   union, appended to an->iv; returns their total length */
static ikp_result ikp__an_work(ikp__an *an, const ikp_lane_events *ev, int64_t *work, ikp_error *err)
{
    size_t k, base = an->iv_n, n = base, w0, wn, i, j;
    int64_t sum = 0;
    if (!ikp__grow(an->a, (void **)&an->iv, &an->iv_cap, an->iv_n + 2 * ev->count + 1, sizeof(ikp__iv)))
        return ikp__oom(err);
    for (k = 0; k < ev->count; k++) {
        const ikp_event *e = &ev->events[k];
        if (e->kind == IKP_EVENT_REGION && !(an->wait && an->wait[e->id]) && e->end_ps > e->start_ps)
            ikp__iv_add(an->iv, base, &n, e->start_ps, e->end_ps);
    }
    if (an->wait) { /* the waits' union after the work list, then subtract in place */
        w0 = wn = n;
        for (k = 0; k < ev->count; k++) {
            const ikp_event *e = &ev->events[k];
            if (e->kind == IKP_EVENT_REGION && an->wait[e->id] && e->end_ps > e->start_ps)
                ikp__iv_add(an->iv, w0, &wn, e->start_ps, e->end_ps);
        }
        if (wn > w0) {
            size_t out = base;
            if (!ikp__grow(an->a, (void **)&an->iv2, &an->iv2_cap, wn - base + 1, sizeof(ikp__iv))) return ikp__oom(err);
            memcpy(an->iv2, an->iv + base, (wn - base) * sizeof(ikp__iv));
            j = w0 - base;
            for (i = 0; i < w0 - base; i++) {
                int64_t s = an->iv2[i].s, e = an->iv2[i].e;
                while (j < wn - base && an->iv2[j].e <= s) j++;
                for (k = j; k < wn - base && an->iv2[k].s < e; k++) {
                    if (an->iv2[k].s > s) { an->iv[out].s = s; an->iv[out].e = an->iv2[k].s; out++; }
                    if (an->iv2[k].e > s) s = an->iv2[k].e;
                }
                if (s < e) { an->iv[out].s = s; an->iv[out].e = e; out++; }
            }
            n = out;
        }
    }
    for (k = base; k < n; k++) sum += an->iv[k].e - an->iv[k].s;
    an->iv_n = n;
    *work = sum;
    return IKP_OK;
}

/* region ends as a min-heap, h[0 .. n) */
static void ikp__ends_push(int64_t *h, size_t *n, int64_t v)
{
    size_t i = (*n)++;
    while (i && h[(i - 1) / 2] > v) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = v;
}
static void ikp__ends_pop(int64_t *h, size_t *n)
{
    size_t i = 0, c;
    int64_t v = h[--*n];
    while ((c = 2 * i + 1) < *n) {
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = v;
}

/* the timeline's bars of one lane (its row), merged to whole pixels */
static ikp_result ikp__an_bars(ikp__an *an, const ikp_lane_events *ev, size_t row, ikp_error *err)
{
    size_t k, ns = 0;
    for (k = 0; k < ev->count; k++) {
        const ikp_event *e = &ev->events[k];
        size_t d, *last;
        float x0, x1;
        if (e->kind != IKP_EVENT_REGION && e->kind != IKP_EVENT_INSTANT) continue;
        /* the regions still open, a min-heap of their ends (overlapping
           regions may end out of order): those ended by e's start leave */
        while (ns && an->stack[0] <= e->start_ps) ikp__ends_pop(an->stack, &ns);
        d = ns < IKP__DEPTHS ? ns : IKP__DEPTHS - 1;
        if (e->kind == IKP_EVENT_REGION) {
            if (!ikp__grow(an->a, (void **)&an->stack, &an->stackcap, ns + 1, sizeof(int64_t))) return ikp__oom(err);
            ikp__ends_push(an->stack, &ns, e->end_ps);
        }
        x0 = (float)((double)e->start_ps * an->px_per_ps);
        x1 = (float)((double)e->end_ps * an->px_per_ps);
        last = &an->last[row * IKP__DEPTHS + d];
        if (*last) {
            ikp_report_rect *p = &an->rects[*last - 1];
            if ((p->id == e->id && x0 <= p->x1 + 0.5f) || x1 <= p->x1 + 0.5f) { /* nothing new to see */
                if (x1 > p->x1) p->x1 = x1;
                continue;
            }
        }
        if (!ikp__grow(an->a, (void **)&an->rects, &an->rectcap, an->nrects + 1, sizeof(ikp_report_rect)))
            return ikp__oom(err);
        an->rects[an->nrects].row = (uint32_t)row;
        an->rects[an->nrects].id = e->id;
        an->rects[an->nrects].depth = (uint32_t)d;
        an->rects[an->nrects].x0 = x0;
        an->rects[an->nrects].x1 = x1;
        *last = ++an->nrects;
    }
    return IKP_OK;
}

/* busy lanes per heat bin: adds the intervals iv[b, e) of a lane on unit u */
static void ikp__an_heat(ikp__an *an, uint32_t u, size_t b, size_t e)
{
    size_t ui = ikp__find_u32(an->units, an->nunits, u), k;
    double span = (double)(an->cap->info.span_ps > 0 ? an->cap->info.span_ps : 1), bw = span / an->heat_bins;
    double *row;
    if (ui == an->nunits) return;
    row = an->heat + (ui / an->upr) * an->heat_bins;
    for (k = b; k < e; k++) {
        double s = (double)an->iv[k].s, t = (double)an->iv[k].e;
        size_t i = (size_t)(s / bw), last = (size_t)(t / bw);
        if (last >= an->heat_bins) last = an->heat_bins - 1;
        for (; i <= last && i < an->heat_bins; i++) {
            double lo = (double)i * bw, hi = lo + bw;
            double o = (t < hi ? t : hi) - (s > lo ? s : lo);
            if (o > 0) row[i] += o;
        }
    }
}

/* The sweep over a block's nb interval bounds (an->bd): each group's
   count of open intervals; time with one group busy is its alone time. The
   group alone busy longest is the one the block waits on. */
static void ikp__an_alone(ikp__an *an, size_t nb, int64_t bs)
{
    uint32_t i, bound = 0, cnt = 0, x = 0;
    double best = -1;
    int64_t prev = bs;
    size_t k;
    ikp__sort(an->bd, nb, sizeof(ikp__bnd), ikp__cmp_bnd);
    for (i = 0; i < an->ng; i++) an->alone[i] = 0;
    memset(an->g_open, 0, an->ng * sizeof(uint32_t));
    for (k = 0; k < nb; k++) {
        const ikp__bnd *b = &an->bd[k];
        if (cnt == 1 && b->t > prev) an->alone[x] += (double)(b->t - prev);
        prev = b->t;
        if (b->d > 0) { if (an->g_open[b->g]++ == 0) { cnt++; x ^= b->g; } }
        else if (--an->g_open[b->g] == 0) { cnt--; x ^= b->g; }
    }
    for (i = 0; i < an->ng; i++)
        if (an->alone[i] > 0) {
            an->g_alone[i] += an->alone[i] / 1000.0;
            if (an->alone[i] > best) { best = an->alone[i]; bound = i; }
        }
    if (best > 0) an->g_bound[bound]++;
}

/* Pairs of a block's first 16 groups: each group's busy union (its lanes'
   intervals merged), then each pair's time both busy, one alone, neither. */
static ikp_result ikp__an_pairs(ikp__an *an, const ikp__tw *w, double span, ikp_error *err)
{
    ikp__iv *u[IKP__PAIR_GROUPS];
    size_t un[IKP__PAIR_GROUPS], tot = 0, pos = 0;
    int64_t busy[IKP__PAIR_GROUPS];
    uint32_t s, i, j;
    for (i = 0; i < IKP__PAIR_GROUPS; i++) { u[i] = NULL; un[i] = 0; busy[i] = 0; }
    for (s = 0; s < w->n; s++) {
        uint32_t sl = (uint32_t)an->gs[s];
        if ((uint32_t)(an->gs[s] >> 32) < IKP__PAIR_GROUPS && (uint32_t)(an->gs[s] >> 32) < an->ng)
            tot += an->iv_at[sl + 1] - an->iv_at[sl];
    }
    if (!ikp__grow(an->a, (void **)&an->iv2, &an->iv2_cap, tot + 1, sizeof(ikp__iv))) return ikp__oom(err);
    for (s = 0; s < w->n;) {
        uint32_t g = (uint32_t)(an->gs[s] >> 32);
        size_t start = pos, n, m;
        if (g >= IKP__PAIR_GROUPS || g >= an->ng) { s++; continue; }
        for (; s < w->n && (uint32_t)(an->gs[s] >> 32) == g; s++) {
            uint32_t sl = (uint32_t)an->gs[s];
            memcpy(an->iv2 + pos, an->iv + an->iv_at[sl], (an->iv_at[sl + 1] - an->iv_at[sl]) * sizeof(ikp__iv));
            pos += an->iv_at[sl + 1] - an->iv_at[sl];
        }
        ikp__sort(an->iv2 + start, pos - start, sizeof(ikp__iv), ikp__cmp_iv);
        for (n = start, m = start; m < pos; m++) ikp__iv_add(an->iv2, start, &n, an->iv2[m].s, an->iv2[m].e);
        u[g] = an->iv2 + start; /* not NULL: the group is in this block */
        un[g] = n - start;
        for (m = 0; m < un[g]; m++) busy[g] += u[g][m].e - u[g][m].s;
    }
    for (i = 0; i < IKP__PAIR_GROUPS; i++)
        for (j = i + 1; j < IKP__PAIR_GROUPS; j++) {
            size_t p = 0, q = 0;
            int64_t both = 0;
            size_t idx = i * IKP__PAIR_GROUPS + j;
            if (!u[i] || !u[j]) continue;
            while (p < un[i] && q < un[j]) {
                int64_t lo = u[i][p].s > u[j][q].s ? u[i][p].s : u[j][q].s;
                int64_t hi = u[i][p].e < u[j][q].e ? u[i][p].e : u[j][q].e;
                if (hi > lo) both += hi - lo;
                if (u[i][p].e < u[j][q].e) p++; else q++;
            }
            an->p_span[idx] += span;
            an->p_both[idx] += (double)both;
            an->p_a[idx] += (double)(busy[i] - both);
            an->p_b[idx] += (double)(busy[j] - both);
        }
    return IKP_OK;
}

/* A block's pipeline: its lanes' slots sorted by group, the bounds of
   their intervals, then who is alone busy and how pairs overlap. */
static ikp_result ikp__an_pipeline(ikp__an *an, const ikp__tw *w, int64_t bs, int64_t be, ikp_error *err)
{
    uint32_t s, ng = 0;
    size_t nb = 0, k;
    if (!ikp__grow(an->a, (void **)&an->gs, &an->gscap, w->n, sizeof(uint64_t))) return ikp__oom(err);
    for (s = 0; s < w->n; s++) {
        ikp__lane lt;
        uint32_t g = ikp__get_lane(an->cap, w->lane[s], &lt)->pub.group;
        an->gs[s] = (uint64_t)g << 32 | s;
    }
    ikp__sort(an->gs, w->n, sizeof(uint64_t), ikp__cmp_u64);
    if (!ikp__grow(an->a, (void **)&an->bd, &an->bdcap, 2 * an->iv_n + 1, sizeof(ikp__bnd))) return ikp__oom(err);
    for (s = 0; s < w->n; s++) {
        uint32_t g = (uint32_t)(an->gs[s] >> 32), sl = (uint32_t)an->gs[s];
        if (g >= an->ng) continue;
        if (s == 0 || (uint32_t)(an->gs[s - 1] >> 32) != g) ng++;
        for (k = an->iv_at[sl]; k < an->iv_at[sl + 1]; k++) {
            an->bd[nb].t = an->iv[k].s; an->bd[nb].d = 1; an->bd[nb++].g = g;
            an->bd[nb].t = an->iv[k].e; an->bd[nb].d = -1; an->bd[nb++].g = g;
        }
    }
    if (!ng) return IKP_OK;
    ikp__an_alone(an, nb, bs);
    return ikp__an_pairs(an, w, (double)(be - bs), err);
}

/* the units (SMs, or blocks when any lane lacks its SM), the timeline's
   rows and the heatmap, before the walk */
static ikp_result ikp__an_picture_init(ikp__an *an, const ikp_report_options *opt, ikp_error *err)
{
    const ikp_capture *cap = an->cap;
    uint32_t i, k, nsample = opt && opt->timeline_sms ? opt->timeline_sms : 8, *chosen;
    size_t n = 0, nc = 0, j;
    an->by_sm = 1;
    an->units = (uint32_t *)ikp__alloc(an->a, ((size_t)cap->info.num_lanes + 1) * sizeof(uint32_t));
    if (!an->units) return ikp__oom(err);
    for (i = 0; i < cap->info.num_lanes; i++) {
        ikp__lane lt;
        const ikp__lane *l = ikp__get_lane(cap, i, &lt);
        if ((l->pub.flags & IKP_LANE_STARTED) && (!cap->lanes || l->pub.records) && l->pub.sm == IKP_NO_SM) an->by_sm = 0;
    }
    for (i = 0; i < cap->info.num_lanes; i++) {
        ikp__lane lt;
        const ikp__lane *l = ikp__get_lane(cap, i, &lt);
        if ((l->pub.flags & IKP_LANE_STARTED) && (!cap->lanes || l->pub.records)) an->units[n++] = (uint32_t)ikp__an_unit(an, l);
    }
    ikp__sort(an->units, n, sizeof(uint32_t), ikp__cmp_u32);
    for (j = 0; j < n; j++) if (!nc || an->units[nc - 1] != an->units[j]) an->units[nc++] = an->units[j];
    an->nunits = nc;
    if (nsample > nc) nsample = (uint32_t)nc;
    /* the sampled units, spread evenly (first and last included) */
    chosen = (uint32_t *)ikp__alloc(an->a, ((size_t)nsample + 1) * sizeof(uint32_t));
    an->rows = (uint64_t *)ikp__alloc(an->a, ((size_t)cap->info.num_lanes + 1) * sizeof(uint64_t));
    if (!chosen || !an->rows) { ikp__free(an->a, chosen); return ikp__oom(err); }
    for (k = 0; k < nsample; k++) chosen[k] = an->units[nsample == 1 ? 0 : (size_t)k * (nc - 1) / (nsample - 1)];
    for (i = 0; i < cap->info.num_lanes; i++) {
        ikp__lane lt;
        const ikp__lane *l = ikp__get_lane(cap, i, &lt);
        uint32_t u = (uint32_t)ikp__an_unit(an, l);
        if ((l->pub.flags & IKP_LANE_STARTED) && (!cap->lanes || l->pub.records) && ikp__find_u32(chosen, nsample, u) < nsample)
            an->rows[an->nrows++] = (uint64_t)u << 32 | l->pub.group;
    }
    ikp__free(an->a, chosen);
    ikp__sort(an->rows, an->nrows, sizeof(uint64_t), ikp__cmp_u64);
    for (j = 0, n = 0; j < an->nrows; j++) if (!n || an->rows[n - 1] != an->rows[j]) an->rows[n++] = an->rows[j];
    an->nrows = n;
    an->width = 1000;
    an->px_per_ps = (double)an->width / (double)(cap->info.span_ps > 0 ? cap->info.span_ps : 1);
    an->last = (size_t *)ikp__alloc(an->a, (an->nrows + 1) * IKP__DEPTHS * sizeof(size_t));
    an->heat_bins = opt && opt->heat_bins ? (opt->heat_bins > 1000 ? 1000 : opt->heat_bins) : 100;
    an->upr = (uint32_t)((nc + 255) / 256);
    if (!an->upr) an->upr = 1;
    an->heat_rows = (uint32_t)((nc + an->upr - 1) / an->upr);
    an->heat = (double *)ikp__alloc(an->a, ((size_t)an->heat_rows * an->heat_bins + 1) * sizeof(double));
    if (!an->last || !an->heat) return ikp__oom(err);
    memset(an->last, 0, (an->nrows + 1) * IKP__DEPTHS * sizeof(size_t));
    for (j = 0; j < (size_t)an->heat_rows * an->heat_bins; j++) an->heat[j] = 0;
    return IKP_OK;
}

/* an for cap: its per-group and per-pair sums, zeroed */
static ikp_result ikp__an_init(ikp__an *an, const ikp_capture *cap, const uint8_t *wait, ikp_error *err)
{
    uint32_t ng = cap->info.num_groups ? cap->info.num_groups : 1;
    memset(an, 0, sizeof *an);
    an->cap = cap;
    an->a = &cap->alloc;
    an->wait = wait;
    an->ng = ng;
    an->g_region = (double *)ikp__zalloc(an->a, ng * sizeof(double));
    an->g_lspan = (double *)ikp__zalloc(an->a, ng * sizeof(double));
    an->g_work = (double *)ikp__zalloc(an->a, ng * sizeof(double));
    an->g_bspan = (double *)ikp__zalloc(an->a, ng * sizeof(double));
    an->g_alone = (double *)ikp__zalloc(an->a, ng * sizeof(double));
    an->alone = (double *)ikp__zalloc(an->a, ng * sizeof(double));
    an->g_lanes = (uint32_t *)ikp__zalloc(an->a, ng * sizeof(uint32_t));
    an->g_blocks = (uint32_t *)ikp__zalloc(an->a, ng * sizeof(uint32_t));
    an->g_bound = (uint32_t *)ikp__zalloc(an->a, ng * sizeof(uint32_t));
    an->g_mark = (uint32_t *)ikp__zalloc(an->a, ng * sizeof(uint32_t));
    an->g_open = (uint32_t *)ikp__zalloc(an->a, ng * sizeof(uint32_t));
    an->p_span = (double *)ikp__zalloc(an->a, IKP__PAIR_GROUPS * IKP__PAIR_GROUPS * sizeof(double));
    an->p_both = (double *)ikp__zalloc(an->a, IKP__PAIR_GROUPS * IKP__PAIR_GROUPS * sizeof(double));
    an->p_a = (double *)ikp__zalloc(an->a, IKP__PAIR_GROUPS * IKP__PAIR_GROUPS * sizeof(double));
    an->p_b = (double *)ikp__zalloc(an->a, IKP__PAIR_GROUPS * IKP__PAIR_GROUPS * sizeof(double));
    if (!an->g_region || !an->g_lspan || !an->g_work || !an->g_bspan || !an->g_alone || !an->alone || !an->g_lanes ||
        !an->g_blocks || !an->g_bound || !an->g_mark || !an->g_open || !an->p_span || !an->p_both || !an->p_a || !an->p_b)
        return ikp__oom(err);
    return IKP_OK;
}

/* Lane l's events, slot s of the block: the counts, each region's duration
   in its series (by id; full: by id and group), the lane's work and its
   group's sums; the block's span (*bs .. *be) and work (*bwork) take it
   in. full: its bars on the timeline, its heat. */
static ikp_result ikp__an_lane(ikp__an *an, const ikp__lane *l, const ikp_lane_events *ev, uint32_t s, int full,
                               int64_t *bs, int64_t *be, int64_t *bwork, ikp_error *err)
{
    uint32_t g = l->pub.group;
    int64_t work = 0;
    size_t k;
    ikp_result r;
    an->regions += ev->regions;
    an->instants += ev->instants;
    an->unmatched_begin += ev->unmatched_begin;
    an->unmatched_end += ev->unmatched_end;
    for (k = 0; k < ev->count; k++) {
        const ikp_event *e = &ev->events[k];
        ikp__ser *sr;
        if (e->kind != IKP_EVENT_REGION) continue;
        sr = ikp__an_ser(an, full ? (uint64_t)e->id << 32 | g : e->id);
        if (!sr || !ikp__grow(an->a, (void **)&sr->v, &sr->cap, sr->n + 1, sizeof(uint64_t))) return ikp__oom(err);
        sr->v[sr->n++] = (uint64_t)(e->end_ps - e->start_ps);
    }
    an->iv_at[s] = an->iv_n;
    if ((r = ikp__an_work(an, ev, &work, err)) != IKP_OK) return r;
    if (ev->first_ps != INT64_MIN) {
        if (ev->first_ps < *bs) *bs = ev->first_ps;
        if (ev->last_ps > *be) *be = ev->last_ps;
        if (g < an->ng) {
            an->g_region[g] += (double)ev->busy_ps / 1000.0;
            an->g_lspan[g] += (double)(ev->last_ps - ev->first_ps) / 1000.0;
            an->g_lanes[g]++;
        }
    }
    if (g < an->ng) an->g_work[g] += (double)work / 1000.0;
    *bwork += work;
    if (full) {
        uint32_t u = (uint32_t)ikp__an_unit(an, l);
        size_t row = ikp__find_u64(an->rows, an->nrows, (uint64_t)u << 32 | g);
        ikp__an_heat(an, u, an->iv_at[s], an->iv_n);
        if (row < an->nrows) return ikp__an_bars(an, ev, row, err);
    }
    return IKP_OK;
}

/* The block just walked (w's slots; its lanes' span bs .. be, their work
   bwork): each of its groups counts it once, with its span; its entry in
   the blocks; full: its pipeline. */
static ikp_result ikp__an_block(ikp__an *an, ikp__tw *w, int64_t bs, int64_t be, int64_t bwork, int full,
                                ikp_error *err)
{
    const ikp__lane *l0;
    ikp__lane lt0;
    uint32_t s;
    for (s = 0; s < w->n; s++) { /* each group of the block once: its blocks and their spans */
        ikp__lane lt;
        uint32_t g = ikp__get_lane(an->cap, w->lane[s], &lt)->pub.group;
        if (g < an->ng && an->g_mark[g] != an->nblk + 1) {
            an->g_mark[g] = (uint32_t)(an->nblk + 1);
            an->g_blocks[g]++;
            an->g_bspan[g] += (double)(be - bs) / 1000.0;
        }
    }
    l0 = ikp__get_lane(an->cap, w->lane[0], &lt0);
    if (!ikp__grow(an->a, (void **)&an->blk, &an->blkcap, an->nblk + 1, sizeof(ikp_report_block))) return ikp__oom(err);
    an->blk[an->nblk].block = l0->pub.block;
    an->blk[an->nblk].sm = l0->pub.sm;
    an->blk[an->nblk].start_ps = bs;
    an->blk[an->nblk].end_ps = be;
    an->blk[an->nblk++].busy_ns = (double)bwork / 1000.0;
    return full ? ikp__an_pipeline(an, w, bs, be, err) : IKP_OK;
}

/* Decodes every lane once, block by block. full: also the per-group
   series, the pipeline and the picture. */
static ikp_result ikp__an_run(ikp__an *an, const ikp_capture *cap, int full, const ikp_report_options *opt,
                              const uint8_t *wait, ikp_error *err)
{
    ikp__tw w;
    ikp_result r;
    memset(&w, 0, sizeof w);
    if ((r = ikp__an_init(an, cap, wait, err)) != IKP_OK) return r;
    if (full && (r = ikp__an_picture_init(an, opt, err)) != IKP_OK) return r;
    w.cap = cap;
    w.grouped = 1;
    w.next_flow = 1;
    if ((r = ikp__tw_order(&w, err)) != IKP_OK) return r;
    while ((r = ikp__tw_next(&w, err)) == IKP_OK && w.n) {
        int64_t bs = INT64_MAX, be = INT64_MIN, bwork = 0;
        uint32_t s;
        an->iv_n = 0;
        if (!ikp__grow(an->a, (void **)&an->iv_at, &an->iv_atcap, (size_t)w.n + 1, sizeof(size_t))) { r = ikp__oom(err); break; }
        for (s = 0; s < w.n && r == IKP_OK; s++) {
            ikp__lane lt;
            r = ikp__an_lane(an, ikp__get_lane(cap, w.lane[s], &lt), &w.ev[s], s, full, &bs, &be, &bwork, err);
        }
        if (r != IKP_OK) break;
        an->iv_at[w.n] = an->iv_n;
        if (bs > be) continue;
        if ((r = ikp__an_block(an, &w, bs, be, bwork, full, err)) != IKP_OK) break;
    }
    ikp__tw_free(&w);
    return r;
}

/* sorts every series; returns the longest length */
static ikp_result ikp__an_sort(ikp__an *an, ikp_error *err)
{
    size_t i, most = 0;
    uint64_t *tmp;
    for (i = 0; i < an->nser; i++) if (an->ser[i].n > most) most = an->ser[i].n;
    tmp = (uint64_t *)ikp__alloc(an->a, (most + 1) * sizeof(uint64_t));
    if (!tmp) return ikp__oom(err);
    for (i = 0; i < an->nser; i++) ikp__radix_sort(an->ser[i].v, tmp, an->ser[i].n);
    ikp__free(an->a, tmp);
    return IKP_OK;
}

static int ikp__cmp_ser(const void *pa, const void *pb)
{
    uint64_t a = ((const ikp__ser *)pa)->key, b = ((const ikp__ser *)pb)->key;
    return a < b ? -1 : a > b;
}

/* a names pool: strings appended, pointers fixed up once it stops moving */
typedef struct ikp__pool { char *p; size_t n, cap; } ikp__pool;
static int ikp__pool_add(const ikp_allocator *a, ikp__pool *pl, const char *s, size_t *at)
{
    size_t len = strlen(s) + 1;
    if (!ikp__grow(a, (void **)&pl->p, &pl->cap, pl->n + len, 1)) return 0;
    memcpy(pl->p + pl->n, s, len);
    *at = pl->n;
    pl->n += len;
    return 1;
}

IKP_DEF void ikp_report_free(ikp_report *r)
{
    ikp_allocator a;
    if (!r) return;
    a = r->allocator_;
    ikp_stats_free(r->stats);
    ikp__free(&a, r->stages); ikp__free(&a, r->groups); ikp__free(&a, r->pairs); ikp__free(&a, r->blocks);
    ikp__free(&a, r->sms); ikp__free(&a, r->row_unit); ikp__free(&a, r->row_group); ikp__free(&a, r->rects);
    ikp__free(&a, r->heat); ikp__free(&a, r->heat_unit); ikp__free(&a, r->names_); ikp__free(&a, r->wait_ids);
    ikp__free(&a, r);
}

/* >>diff-verdict: verdicts: tests of a change, the rule */
IKP_DEF const char *ikp_verdict_name(ikp_verdict v)
{
    switch (v) {
    case IKP_VERDICT_SAME: return "same";
    case IKP_VERDICT_FASTER: return "faster";
    case IKP_VERDICT_SLOWER: return "slower";
    case IKP_VERDICT_ONLY_BASE: return "only-base";
    case IKP_VERDICT_ONLY_NEW: return "only-new";
    case IKP_VERDICT_INCOMPLETE: return "incomplete";
    default: return "unknown";
    }
}

/* b / a - 1; a base of 0 counts as 1 ps */
static double ikp__change(double a, double b)
{
    return a > 0 ? b / a - 1 : b > 0 ? b * 1000.0 - 1 : 0;
}

/* p of a two-sided test from z */
static double ikp__p_of_z(double z)
{
    double p = ikp__erfc((z < 0 ? -z : z) / 1.4142135623730951);
    return p > 1 ? 1 : p;
}

/* how many of sorted v[0..n) lie above x */
static size_t ikp__count_above(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (v[m] <= x) lo = m + 1; else hi = m;
    }
    return n - lo;
}

/* The tail test at pct: how many of each side lie above the base's pct-th
   percentile, as two proportions (pooled normal approximation). p = 1
   (not made) when either side expects fewer than 5 above it. */
static double ikp__tail_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, unsigned pct, double *z)
{
    double q = (100.0 - pct) / 100.0, fa, fb, f, se;
    size_t idx = (size_t)(((uint64_t)pct * na + 99) / 100);
    *z = 0;
    if ((double)na * q < 5 || (double)nb * q < 5) return 1;
    fa = (double)ikp__count_above(a, na, a[idx ? idx - 1 : 0]) / (double)na;
    fb = (double)ikp__count_above(b, nb, a[idx ? idx - 1 : 0]) / (double)nb;
    f = (fa * (double)na + fb * (double)nb) / ((double)na + (double)nb);
    se = ikp__sqrt(f * (1 - f) * (1 / (double)na + 1 / (double)nb));
    if (!(se > 0)) return 1;
    *z = (fb - fa) / se;
    return ikp__p_of_z(*z);
}

/* n durations' sum of squared distances from their mean, ns^2 */
static double ikp__sq_dev(const uint64_t *v, size_t n, double mean_ns)
{
    double s = 0;
    size_t k;
    for (k = 0; k < n; k++) {
        double x = (double)v[k] / 1000.0 - mean_ns;
        s += x * x;
    }
    return s;
}

/* The totals' test: their difference against its standard error, each
   total a sum of its side's n durations (variance n s^2). Needs 2
   durations a side; with no spread on either side any difference is
   certain. */
static double ikp__total_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
                              const ikp_event_stats *ea, const ikp_event_stats *eb, double *z)
{
    double va, vb, se, dt = eb->total_ns - ea->total_ns;
    *z = 0;
    if (na < 2 || nb < 2) return 1;
    va = ikp__sq_dev(a, na, ea->mean_ns) / (double)(na - 1);
    vb = ikp__sq_dev(b, nb, eb->mean_ns) / (double)(nb - 1);
    se = ikp__sqrt((double)na * va + (double)nb * vb);
    if (!(se > 0)) {
        *z = dt > 0 ? 1 : dt < 0 ? -1 : 0;
        return dt != 0 ? 0 : 1;
    }
    *z = dt / se;
    return ikp__p_of_z(*z);
}

/* the measures that moved each way, and the largest change each way */
typedef struct ikp__moves { uint32_t up, down; double up_max, down_min; } ikp__moves;
static void ikp__moved(ikp__moves *mv, uint32_t bit, double change, double diff_ns, double p, double z, double alpha,
                       const ikp_diff_options *o)
{
    if (!(p < alpha) || (change < o->threshold && change > -o->threshold) ||
        (diff_ns < o->min_change_ns && diff_ns > -o->min_change_ns))
        return;
    if (change > 0 && z > 0) { mv->up |= bit; if (change > mv->up_max) mv->up_max = change; }
    if (change < 0 && z < 0) { mv->down |= bit; if (change < mv->down_min) mv->down_min = change; }
}
static void ikp__settle(ikp_diff_test *t, const ikp__moves *mv)
{
    t->verdict = mv->up ? IKP_VERDICT_SLOWER : mv->down ? IKP_VERDICT_FASTER : IKP_VERDICT_SAME;
    t->measures = mv->up ? mv->up : mv->down;
    t->change = mv->up ? mv->up_max : mv->down ? mv->down_min : 0;
}

/* the four measures of sorted a (the base) against sorted b (the new
   capture), ps; their moves into mv, the verdict settled from them */
static void ikp__judge(ikp_diff_test *t, ikp__moves *mv, const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
                       const ikp_diff_options *o, uint32_t tests)
{
    ikp_event_stats ea, eb;
    double alpha = o->alpha / (tests ? tests : 1), z;
    memset(mv, 0, sizeof *mv);
    ikp__event_stats_fill(&ea, a, na);
    ikp__event_stats_fill(&eb, b, nb);
    ikp__rank_test(a, na, b, nb, &t->z, &t->p_value);
    t->p90_p = t->p99_p = t->total_p = 1;
    t->p50_change = t->p90_change = t->p99_change = t->total_change = 0;
    if (na && nb) {
        t->p50_change = ikp__change(ea.p50_ns, eb.p50_ns);
        t->p90_change = ikp__change(ea.p90_ns, eb.p90_ns);
        t->p99_change = ikp__change(ea.p99_ns, eb.p99_ns);
        t->total_change = ikp__change(ea.total_ns, eb.total_ns);
        ikp__moved(mv, IKP_MEASURE_P50, t->p50_change, eb.p50_ns - ea.p50_ns, t->p_value, t->z, alpha, o);
        t->p90_p = ikp__tail_test(a, na, b, nb, 90, &z);
        ikp__moved(mv, IKP_MEASURE_P90, t->p90_change, eb.p90_ns - ea.p90_ns, t->p90_p, z, alpha, o);
        t->p99_p = ikp__tail_test(a, na, b, nb, 99, &z);
        ikp__moved(mv, IKP_MEASURE_P99, t->p99_change, eb.p99_ns - ea.p99_ns, t->p99_p, z, alpha, o);
        t->total_p = ikp__total_test(a, na, b, nb, &ea, &eb, &z);
        ikp__moved(mv, IKP_MEASURE_TOTAL, t->total_change, /* min_change_ns a duration */
                   (eb.total_ns - ea.total_ns) / (double)(na > nb ? na : nb), t->total_p, z, alpha, o);
    }
    ikp__settle(t, mv);
}

IKP_DEF void ikp_diff_free(ikp_diff *d)
{
    ikp_allocator a;
    if (!d) return;
    a = d->allocator_;
    ikp__free(&a, d->events);
    ikp__free(&a, d->groups);
    ikp__free(&a, d->names_);
    ikp__free(&a, d);
}

typedef struct ikp__named { const char *name; size_t i; } ikp__named;
/* a group of one side of a diff: its name (at, in the pool), side << 32 |
   group, and the first sight of its name */
typedef struct ikp__gkey { const char *name; size_t at, run; uint64_t first, pos; } ikp__gkey;
static int ikp__cmp_gkey(const void *pa, const void *pb)
{
    const ikp__gkey *a = (const ikp__gkey *)pa, *b = (const ikp__gkey *)pb;
    int c = strcmp(a->name, b->name);
    return c ? c : a->first < b->first ? -1 : a->first > b->first;
}
static int ikp__cmp_gpos(const void *pa, const void *pb)
{
    const ikp__gkey *a = (const ikp__gkey *)pa, *b = (const ikp__gkey *)pb;
    if (a->pos != b->pos) return a->pos < b->pos ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}
static int ikp__cmp_named(const void *pa, const void *pb)
{
    const ikp__named *a = (const ikp__named *)pa, *b = (const ikp__named *)pb;
    int c = strcmp(a->name, b->name);
    return c ? c : a->i < b->i ? -1 : a->i > b->i;
}
/* the first entry named name not yet taken, and takes it (names may
   repeat: the k-th of a name pairs with the k-th; taken[first of a name]
   counts those of it taken); n if none */
static size_t ikp__take_named(const ikp__named *v, size_t n, const char *name, size_t *taken)
{
    size_t lo = 0, hi = n, j;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (strcmp(v[m].name, name) < 0) lo = m + 1; else hi = m;
    }
    if (lo == n) return n;
    j = lo + taken[lo];
    if (j >= n || strcmp(v[j].name, name)) return n;
    taken[lo]++;
    return j;
}

/* the block spans of an analysis, sorted (ps) */
static uint64_t *ikp__block_spans(const ikp__an *an, ikp_error *err)
{
    uint64_t *v = (uint64_t *)ikp__alloc(an->a, (an->nblk + 1) * sizeof(uint64_t)), *tmp;
    size_t i;
    if (!v) { ikp__oom(err); return NULL; }
    for (i = 0; i < an->nblk; i++) v[i] = (uint64_t)(an->blk[i].end_ps - an->blk[i].start_ps);
    tmp = (uint64_t *)ikp__alloc(an->a, (an->nblk + 1) * sizeof(uint64_t));
    if (!tmp) { ikp__free(an->a, v); ikp__oom(err); return NULL; }
    ikp__radix_sort(v, tmp, an->nblk);
    ikp__free(an->a, tmp);
    return v;
}

/* >>diff-compute: ikp_diff_compute and its sections */
/* events matched by name (nm: each side's names, pool_p their pool; eo:
   scratch of the new side's size): the base's in its order, then the new
   side's own, by id; *ev_name: each event's name offset in the pool */
static ikp_result ikp__diff_events(ikp_diff *d, const ikp__an *an, ikp__named *const *nm, size_t *const *eo,
                                   const char *pool_p, const ikp_allocator *a, size_t **ev_name_out, ikp_error *err)
{
    ikp_result r = IKP_OK;
    size_t i, k, *taken, *ev_name;
    uint32_t both = 0;
    uint8_t *matched;
    /* the new side's names sorted, for lookups; events in base order, then new only */
    ikp__sort(nm[1], an[1].nser, sizeof(ikp__named), ikp__cmp_named);
    matched = (uint8_t *)ikp__alloc(a, an[1].nser + 1);
    taken = (size_t *)ikp__alloc(a, (an[1].nser + 1) * sizeof(size_t));
    d->events = (ikp_diff_event *)ikp__alloc(a, (an[0].nser + an[1].nser + 1) * sizeof(ikp_diff_event));
    *ev_name_out = ev_name = (size_t *)ikp__alloc(a, (an[0].nser + an[1].nser + 1) * sizeof(size_t));
    if (!matched || !taken || !d->events || !ev_name) { r = ikp__oom(err); goto end; }
    memset(matched, 0, an[1].nser + 1);
    memset(taken, 0, (an[1].nser + 1) * sizeof(size_t));
    for (i = 0; i < an[0].nser; i++)
        if (ikp__take_named(nm[1], an[1].nser, nm[0][i].name, taken) < an[1].nser) both++;
    d->tests = 4 * (both + 1); /* four measures of the events in both, and of the span */
    memset(taken, 0, (an[1].nser + 1) * sizeof(size_t));
    for (i = 0; i < an[0].nser; i++) {
        ikp_diff_event *e = &d->events[d->num_events];
        const ikp__ser *sa = &an[0].ser[i];
        size_t j = ikp__take_named(nm[1], an[1].nser, nm[0][i].name, taken);
        memset(e, 0, sizeof *e);
        ev_name[d->num_events++] = (size_t)(nm[0][i].name - pool_p);
        ikp__event_stats_fill(&e->base, sa->v, sa->n);
        e->base.id = (uint32_t)sa->key;
        if (j < an[1].nser) {
            const ikp__ser *sb = &an[1].ser[nm[1][j].i];
            matched[j] = 1;
            ikp__event_stats_fill(&e->next, sb->v, sb->n);
            e->next.id = (uint32_t)sb->key;
            ikp__moves mv;
            ikp__judge(&e->test, &mv, sa->v, sa->n, sb->v, sb->n, &d->options, d->tests);
        } else {
            e->test.verdict = IKP_VERDICT_ONLY_BASE;
            e->test.p_value = 1;
            d->differs |= IKP_DIFF_EVENTS;
        }
    }
    for (k = 0; k < an[1].nser; k++) eo[1][nm[1][k].i] = k; /* series -> its place among the sorted names */
    for (k = 0; k < an[1].nser; k++) { /* new only, by id */
        size_t j = eo[1][k];
        if (!matched[j]) {
            ikp_diff_event *e = &d->events[d->num_events];
            const ikp__ser *sb = &an[1].ser[k];
            memset(e, 0, sizeof *e);
            ev_name[d->num_events++] = (size_t)(nm[1][j].name - pool_p);
            ikp__event_stats_fill(&e->next, sb->v, sb->n);
            e->next.id = (uint32_t)sb->key;
            e->test.verdict = IKP_VERDICT_ONLY_NEW;
            e->test.p_value = 1;
            d->differs |= IKP_DIFF_EVENTS;
        }
    }
end:
    ikp__free(a, matched);
    ikp__free(a, taken);
    return r;
}

/* groups by name (their name offsets in gpool, in *gr_name) */
static ikp_result ikp__diff_groups(ikp_diff *d, const ikp__an *an, const ikp_capture *const *cap,
                                   const ikp_allocator *a, ikp__pool *gpool, size_t **gr_name_out, ikp_error *err)
{
    ikp_result r = IKP_OK;
    size_t i, k, ngr, *gr_name;
    uint32_t side;
    ikp__gkey *gk;
    char t[40];
    /* groups by name: every named group of both sides, sorted by (name,
       side, group), then one diff group per name, in order of first sight
       (the base's groups, then the new side's own) */
    ngr = (size_t)an[0].ng + an[1].ng;
    d->groups = (ikp_diff_group *)ikp__alloc(a, (ngr + 1) * sizeof(ikp_diff_group));
    *gr_name_out = gr_name = (size_t *)ikp__alloc(a, (ngr + 1) * sizeof(size_t));
    gk = (ikp__gkey *)ikp__alloc(a, (ngr + 1) * sizeof(ikp__gkey));
    if (!d->groups || !gr_name || !gk) { r = ikp__oom(err); goto end; }
    for (side = 0, k = 0; side < 2; side++)
        for (i = 0; i < an[side].ng; i++) {
            if (!an[side].g_lanes[i]) continue;
            if (!ikp__pool_add(a, gpool, ikp__gr_name(cap[side], (uint32_t)i, t, sizeof t), &gk[k].at)) {
                r = ikp__oom(err);
                goto end;
            }
            gk[k].first = (uint64_t)side << 32 | i;
            gk[k++].name = NULL;
        }
    for (i = 0; i < k; i++) gk[i].name = gpool->p + gk[i].at; /* the pool has settled */
    ikp__sort(gk, k, sizeof(ikp__gkey), ikp__cmp_gkey);
    for (i = 0; i < k;) { /* one name: its first sight, for every entry of it */
        size_t j = i;
        while (j < k && !strcmp(gk[j].name, gk[i].name)) gk[j++].run = i;
        i = j;
    }
    for (i = 0; i < k; i++) gk[i].pos = gk[gk[i].run].first;
    ikp__sort(gk, k, sizeof(ikp__gkey), ikp__cmp_gpos); /* by first sight, then side and group */
    for (i = 0; i < k; i++) {
        const ikp__an *x = &an[gk[i].first >> 32];
        size_t g_at = (size_t)(uint32_t)gk[i].first;
        ikp_diff_group *g;
        double busy = x->g_bspan[g_at] > 0 ? x->g_work[g_at] / x->g_bspan[g_at] : 0;
        if (!i || gk[i].pos != gk[i - 1].pos) {
            g = &d->groups[d->num_groups];
            memset(g, 0, sizeof *g);
            gr_name[d->num_groups++] = gk[i].at;
            g->verdict = gk[i].first >> 32 ? IKP_VERDICT_ONLY_NEW : IKP_VERDICT_ONLY_BASE;
        } else {
            g = &d->groups[d->num_groups - 1];
            if (gk[i].first >> 32 && g->verdict == IKP_VERDICT_ONLY_BASE) g->verdict = IKP_VERDICT_SAME;
        }
        if (gk[i].first >> 32) { g->next_lanes = x->g_lanes[g_at]; g->next_busy = busy; }
        else { g->base_lanes = x->g_lanes[g_at]; g->base_busy = busy; }
    }
end:
    ikp__free(a, gk);
    return r;
}

/* the span: the capture's, and each block's as the samples; what differs
   in the captures' shapes */
static void ikp__diff_span(ikp_diff *d, const ikp_capture *base, const ikp_capture *next, const ikp__an *an,
                           uint64_t *const *bs)
{
    ikp__moves mv;
    double diff, apart[2] = {0, 0};
    uint32_t side;
    size_t i;
    d->span.base_ns = (double)base->info.span_ps / 1000.0;
    d->span.next_ns = (double)next->info.span_ps / 1000.0;
    d->span.change = ikp__change(d->span.base_ns, d->span.next_ns);
    diff = d->span.next_ns - d->span.base_ns;
    ikp__event_stats_fill(&d->span.base_blocks, bs[0], an[0].nblk);
    ikp__event_stats_fill(&d->span.next_blocks, bs[1], an[1].nblk);
    ikp__judge(&d->span.test, &mv, bs[0], an[0].nblk, bs[1], an[1].nblk, &d->options, d->tests);
    for (side = 0; side < 2; side++) { /* how far apart each side's blocks end */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (i = 0; i < an[side].nblk; i++) {
            if (an[side].blk[i].end_ps < lo) lo = an[side].blk[i].end_ps;
            if (an[side].blk[i].end_ps > hi) hi = an[side].blk[i].end_ps;
        }
        if (an[side].nblk) apart[side] = (double)(hi - lo) / 1000.0;
    }
    if (an[0].nblk && an[1].nblk && (diff > 0 ? diff : -diff) > (apart[0] < apart[1] ? apart[0] : apart[1]))
        ikp__moved(&mv, IKP_MEASURE_SPAN, d->span.change, diff, 0, diff, 1, &d->options);
    ikp__settle(&d->span.test, &mv);
    d->verdict = d->span.test.verdict;
    if (base->format != next->format) d->differs |= IKP_DIFF_FORMAT;
    if (base->info.timer_cycles != next->info.timer_cycles) d->differs |= IKP_DIFF_TIMER;
    if (base->info.num_blocks != next->info.num_blocks) d->differs |= IKP_DIFF_BLOCKS;
    if (base->info.num_groups != next->info.num_groups) d->differs |= IKP_DIFF_GROUPS;
    if (memcmp(base->info.grid, next->info.grid, sizeof base->info.grid)) d->differs |= IKP_DIFF_GRID;
}

/* One side of a diff: cap's lanes walked (an), its series sorted by event
   id, their names added to pool (*eo: their offsets, until the pool
   settles), *nm made for them, and its blocks' spans (*bs). */
static ikp_result ikp__diff_side(ikp__an *an, const ikp_capture *cap, const ikp_allocator *a, ikp__pool *pool,
                                 ikp__named **nm, size_t **eo, uint64_t **bs, ikp_error *err)
{
    ikp_result r = ikp__an_run(an, cap, 0, NULL, NULL, err);
    char t[40];
    size_t i;
    if (r == IKP_OK) r = ikp__an_sort(an, err);
    if (r == IKP_OK) {
        ikp__sort(an->ser, an->nser, sizeof(ikp__ser), ikp__cmp_ser); /* by event id */
        *nm = (ikp__named *)ikp__alloc(a, (an->nser + 1) * sizeof(ikp__named));
        if (!*nm) r = ikp__oom(err);
    }
    if (r == IKP_OK && !(*eo = (size_t *)ikp__alloc(a, (an->nser + 1) * sizeof(size_t)))) r = ikp__oom(err);
    for (i = 0; r == IKP_OK && i < an->nser; i++) /* event names: offsets until the pool settles */
        if (!ikp__pool_add(a, pool, ikp__ev_name(cap, (uint32_t)an->ser[i].key, t, sizeof t), &(*eo)[i]))
            r = ikp__oom(err);
    if (r == IKP_OK && !(*bs = ikp__block_spans(an, err))) r = IKP_ERR_OUT_OF_MEMORY;
    return r;
}

/* the diff's names, last: the group names (gpool) after the event names
   (pool), in one block that becomes d->names_; the offsets the sections
   kept (ev_name, gr_name) become pointers into it */
static ikp_result ikp__diff_names(ikp_diff *d, const ikp_allocator *a, ikp__pool *pool, const ikp__pool *gpool,
                                  const size_t *ev_name, const size_t *gr_name, ikp_error *err)
{
    size_t i;
    if (!ikp__grow(a, (void **)&pool->p, &pool->cap, pool->n + gpool->n + 1, 1)) return ikp__oom(err);
    if (gpool->n) memcpy(pool->p + pool->n, gpool->p, gpool->n);
    d->names_ = pool->p;
    for (i = 0; i < d->num_events; i++) {
        d->events[i].name = d->names_ + ev_name[i];
        d->events[i].base.name = d->events[i].next.name = d->events[i].name;
    }
    for (i = 0; i < d->num_groups; i++) d->groups[i].name = d->names_ + pool->n + gr_name[i];
    pool->p = NULL;
    return IKP_OK;
}

static int ikp__incomplete(const ikp_diff *d, double fraction, char *why, size_t size);
IKP_DEF ikp_result ikp_diff_compute(const ikp_capture *base, const ikp_capture *next, const ikp_diff_options *opt,
                                    ikp_diff **out, ikp_error *err)
{
    const ikp_allocator *a;
    ikp__an an[2];
    ikp__named *nm[2] = {NULL, NULL};
    const ikp_capture *cap[2];
    ikp_diff *d;
    ikp__pool pool, gpool;
    ikp_result r = IKP_OK;
    uint64_t *bs[2] = {NULL, NULL};
    size_t *eo[2] = {NULL, NULL};
    size_t i, *ev_name = NULL, *gr_name = NULL;
    uint32_t side;
    char t[40];
    if (!base || !next || !out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    *out = NULL;
    if (opt && (!(opt->threshold >= 0 && opt->threshold < 1e6) || !(opt->alpha >= 0 && opt->alpha < 1) ||
                !(opt->min_change_ns >= 0 && opt->min_change_ns < 1e15)))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1,
                         "diff options: threshold must be a fraction >= 0, alpha in [0, 1) and min_change_ns >= 0");
    a = &base->alloc;
    cap[0] = base;
    cap[1] = next;
    memset(&pool, 0, sizeof pool);
    memset(&gpool, 0, sizeof gpool);
    memset(an, 0, sizeof an);
    d = (ikp_diff *)ikp__alloc(a, sizeof *d);
    if (!d) return ikp__oom(err);
    memset(d, 0, sizeof *d);
    d->allocator_ = base->alloc;
    d->options.threshold = opt && opt->threshold > 0 ? opt->threshold : 0.02;
    d->options.alpha = opt && opt->alpha > 0 ? opt->alpha : 0.01;
    d->options.min_change_ns = opt && opt->min_change_ns > 0 ? opt->min_change_ns : 5;
    d->base_info = base->info;
    d->next_info = next->info;
    for (side = 0; side < 2 && r == IKP_OK; side++)
        r = ikp__diff_side(&an[side], cap[side], a, &pool, &nm[side], &eo[side], &bs[side], err);
    if (r != IKP_OK) goto done;
    for (side = 0; side < 2; side++)
        for (i = 0; i < an[side].nser; i++) { nm[side][i].name = pool.p + eo[side][i]; nm[side][i].i = i; }
    r = ikp__diff_events(d, an, nm, eo, pool.p, a, &ev_name, err);
    if (r == IKP_OK) r = ikp__diff_groups(d, an, cap, a, &gpool, &gr_name, err);
    if (r != IKP_OK) goto done;
    ikp__diff_span(d, base, next, an, bs);
    if ((r = ikp__diff_names(d, a, &pool, &gpool, ev_name, gr_name, err)) != IKP_OK) goto done;
    d->span.base_blocks.name = d->span.next_blocks.name = "block span";
    if (ikp__incomplete(d, 0, t, sizeof t)) d->verdict = IKP_VERDICT_INCOMPLETE;
done:
    for (side = 0; side < 2; side++) {
        ikp__an_free(&an[side]); ikp__free(a, nm[side]); ikp__free(a, bs[side]); ikp__free(a, eo[side]);
    }
    ikp__free(a, gpool.p);
    ikp__free(a, ev_name);
    ikp__free(a, gr_name);
    ikp__free(a, pool.p);
    if (r != IKP_OK) { ikp_diff_free(d); return r; }
    *out = d;
    ikp__ok(err);
    return IKP_OK;
}

IKP_DEF int ikp_diff_slower_than(const ikp_diff *d, double fraction)
{
    uint32_t i;
    if (!d) return 0;
    for (i = 0; i < d->num_events; i++)
        if (d->events[i].test.verdict == IKP_VERDICT_SLOWER && d->events[i].test.change > fraction) return 1;
    return d->span.test.verdict == IKP_VERDICT_SLOWER && d->span.test.change > fraction;
}

static int ikp__incomplete(const ikp_diff *d, double fraction, char *why, size_t size)
{
    uint64_t rb = d->base_info.records - d->base_info.anchors, rn = d->next_info.records - d->next_info.anchors;
    uint32_t i, side;
    if (!(fraction > 0)) fraction = 0.5;
    for (side = 0; side < 2; side++) { /* records of an earlier launch mixed in: not this run's */
        const uint64_t twice = side ? d->base_info.claimed_twice : d->next_info.claimed_twice;
        if (twice) {
            snprintf(why, size, "the %s capture is STALE (%llu lane opening%s found the lane open already: its "
                     "buffer was not reset since an earlier launch)", side ? "base" : "new", (unsigned long long)twice,
                     twice == 1 ? "" : "s");
            return 1;
        }
    }
    if (rn == 0) {
        snprintf(why, size, "the new capture holds no records (the base %llu)", (unsigned long long)rb);
        return 1;
    }
    for (i = 0; i < d->num_events; i++) {
        const ikp_diff_event *e = &d->events[i];
        if (e->base.count && !e->next.count) {
            snprintf(why, size, "event '%.64s' (%llu in the base) is missing from the new capture", e->name,
                     (unsigned long long)e->base.count);
            return 1;
        }
        if ((double)e->next.count < fraction * (double)e->base.count) {
            snprintf(why, size, "event '%.64s' occurs %llu times in the new capture against %llu in the base", e->name,
                     (unsigned long long)e->next.count, (unsigned long long)e->base.count);
            return 1;
        }
    }
    if ((double)rn < fraction * (double)rb) {
        snprintf(why, size, "the new capture holds %llu records against %llu in the base", (unsigned long long)rn,
                 (unsigned long long)rb);
        return 1;
    }
    return 0;
}
IKP_DEF int ikp_diff_incomplete(const ikp_diff *d, double fraction, char *why, size_t size)
{
    char tmp[2];
    int r;
    size_t k;
    if (!why || !size) { why = tmp; size = sizeof tmp; }
    why[0] = 0;
    if (!d) return 0;
    r = ikp__incomplete(d, fraction, why, size);
    for (k = 0; why[k];) { /* one line of UTF-8 */
        size_t n = (unsigned char)why[k] >= 0x20 && why[k] != 0x7f
                       ? ikp__utf8_len((const unsigned char *)why + k, strlen(why + k)) : 0;
        if (!n) why[k] = '?';
        k += n ? n : 1;
    }
    return r;
}

/* >>diff-write: a diff as text and JSON */
/* a signed percentage: "+10.0%", "-3.2%" */
static void ikp__put_pct(ikp__out *o, double frac, size_t w)
{
    char t[64];
    size_t n;
    t[0] = frac >= 0 ? '+' : '-';
    n = 1 + ikp__fmt_fixed(t + 1, sizeof t - 2, frac < 0 ? -frac * 100 : frac * 100, 1);
    t[n++] = '%';
    if (w && n >= w) ikp__put(o, " ", 1); /* columns never touch */
    for (; n < w; w--) ikp__put(o, " ", 1);
    ikp__put(o, t, n);
}
/* a probability in JSON's number syntax: 0.0123, 1.2e-30, 0 */
static void ikp__put_prob(ikp__out *o, double p)
{
    char t[64];
    int e = 0;
    if (!(p > 0)) { ikp__puts(o, "0"); return; }
    if (p >= 0.001) { ikp__put_f(o, p, 4); return; }
    while (p < 1 && e > -330) { p *= 10; e--; }
    ikp__put(o, t, ikp__fmt_fixed(t, sizeof t, p, 1));
    snprintf(t, sizeof t, "e%d", e);
    ikp__puts(o, t);
}

/* the measures that moved, by name: "p50", "p90", "p99", "total", "span",
   each after sep but the first (JSON: quoted) */
static void ikp__put_measures(ikp__out *o, uint32_t measures, const char *sep, int quoted)
{
    static const char *const name[] = {"p50", "p90", "p99", "total", "span"};
    unsigned k, n = 0;
    for (k = 0; k < 5; k++)
        if (measures >> k & 1) {
            if (n++) ikp__puts(o, sep);
            if (quoted) ikp__puts(o, "\"");
            ikp__puts(o, name[k]);
            if (quoted) ikp__puts(o, "\"");
        }
}

/* a test's verdict and what moved: "slower (p90, total; p=1.2e-15)"; the
   p is the smallest of the tests of the measures that moved, else the
   rank test's */
static void ikp__put_verdict(ikp__out *o, const ikp_diff_test *t)
{
    double p = t->p_value;
    ikp__puts(o, ikp_verdict_name(t->verdict));
    ikp__puts(o, " (");
    if (t->measures) {
        if (t->measures & IKP_MEASURE_P50) p = t->p_value; else p = 1;
        if ((t->measures & IKP_MEASURE_P90) && t->p90_p < p) p = t->p90_p;
        if ((t->measures & IKP_MEASURE_P99) && t->p99_p < p) p = t->p99_p;
        if ((t->measures & IKP_MEASURE_TOTAL) && t->total_p < p) p = t->total_p;
        ikp__put_measures(o, t->measures, ", ", 0);
        ikp__puts(o, "; ");
    }
    if (t->measures == IKP_MEASURE_SPAN) ikp__puts(o, "past the spread of block ends");
    else { ikp__puts(o, "p="); ikp__put_prob(o, p); }
    ikp__puts(o, ")");
}

/* the capture spans: "<base> us -> <new> us (<change>)" */
static void ikp__put_span_change(ikp__out *o, const ikp_diff *d)
{
    ikp__put_f(o, d->span.base_ns / 1000.0, 3);
    ikp__puts(o, " us -> ");
    ikp__put_f(o, d->span.next_ns / 1000.0, 3);
    ikp__puts(o, " us (");
    ikp__put_pct(o, d->span.change, 0);
    ikp__puts(o, ")");
}

/* what a change must pass: "<p>", between, "<threshold>% and <min> ns" */
static void ikp__put_diff_rule(ikp__out *o, const ikp_diff *d, const char *between)
{
    ikp__put_prob(o, d->options.alpha / d->tests);
    ikp__puts(o, between);
    ikp__put_f(o, d->options.threshold * 100, 1);
    ikp__puts(o, "% and ");
    ikp__put_f(o, d->options.min_change_ns, 1);
    ikp__puts(o, " ns");
}

static const char *ikp__differs_text(uint32_t bit)
{
    switch (bit) {
    case IKP_DIFF_FORMAT: return "formats";
    case IKP_DIFF_TIMER: return "timers";
    case IKP_DIFF_BLOCKS: return "block counts";
    case IKP_DIFF_GROUPS: return "group counts";
    case IKP_DIFF_GRID: return "grids";
    default: return "event sets";
    }
}

/* the text comparison's event table, names in w columns */
static void ikp__diff_text_events(ikp__out *o, const ikp_diff *d, size_t w)
{
    char t[256];
    uint32_t i;
    ikp__put_text_name(o, "event", w);
    ikp__puts(o, "   count base/new    p50 base ns     p50 new ns     p50     p90     p99     max   total  verdict\n");
    for (i = 0; i < d->num_events; i++) {
        const ikp_diff_event *e = &d->events[i];
        int has2 = e->base.count && e->next.count;
        ikp__put_text_name(o, e->name, w);
        snprintf(t, sizeof t, " %9llu/%-9llu", (unsigned long long)e->base.count, (unsigned long long)e->next.count);
        ikp__puts(o, t);
        ikp__put_f_w(o, e->base.p50_ns, 1, 12);
        ikp__put_f_w(o, e->next.p50_ns, 1, 15);
        if (has2) {
            ikp__put_pct(o, e->test.p50_change, 8);
            ikp__put_pct(o, ikp__change(e->base.p90_ns, e->next.p90_ns), 8);
            ikp__put_pct(o, ikp__change(e->base.p99_ns, e->next.p99_ns), 8);
            ikp__put_pct(o, ikp__change(e->base.max_ns, e->next.max_ns), 8);
            ikp__put_pct(o, ikp__change(e->base.total_ns, e->next.total_ns), 8);
        } else ikp__puts(o, "       -       -       -       -       -");
        ikp__puts(o, "  ");
        if (has2) ikp__put_verdict(o, &e->test);
        else ikp__puts(o, ikp_verdict_name(e->test.verdict));
        ikp__puts(o, "\n");
    }
}

/* its group table: lanes and busy fractions */
static void ikp__diff_text_groups(ikp__out *o, const ikp_diff *d, size_t w)
{
    char t[256];
    uint32_t i;
    if (d->num_groups) {
        ikp__puts(o, "\n");
        ikp__put_text_name(o, "group", w);
        ikp__puts(o, "   lanes base/new  busy base  busy new  change\n");
        for (i = 0; i < d->num_groups; i++) {
            const ikp_diff_group *g = &d->groups[i];
            ikp__put_text_name(o, g->name, w);
            snprintf(t, sizeof t, " %9u/%-9u", g->base_lanes, g->next_lanes);
            ikp__puts(o, t);
            ikp__put_f_w(o, g->base_busy * 100, 1, 9); ikp__puts(o, "%");
            ikp__put_f_w(o, g->next_busy * 100, 1, 9); ikp__puts(o, "%");
            if (g->verdict == IKP_VERDICT_SAME) {
                ikp__put_f_w(o, (g->next_busy - g->base_busy) * 100, 1, 7);
                ikp__puts(o, " pt\n");
            } else { ikp__puts(o, "  "); ikp__puts(o, ikp_verdict_name(g->verdict)); ikp__puts(o, "\n"); }
        }
    }
}

/* its span and verdict lines, and what the captures do not share */
static void ikp__diff_text_span(ikp__out *o, const ikp_diff *d)
{
    char t[256];
    uint32_t i, bit;
    ikp__puts(o, "\nspan      ");
    ikp__put_span_change(o, d);
    ikp__puts(o, "; block spans p50 ");
    ikp__put_f(o, d->span.base_blocks.p50_ns / 1000.0, 3);
    ikp__puts(o, " -> ");
    ikp__put_f(o, d->span.next_blocks.p50_ns / 1000.0, 3);
    snprintf(t, sizeof t, " us (%llu and %llu blocks, ", (unsigned long long)d->span.base_blocks.count,
             (unsigned long long)d->span.next_blocks.count);
    ikp__puts(o, t);
    ikp__put_pct(o, d->span.test.p50_change, 0);
    ikp__puts(o, "; ");
    ikp__put_verdict(o, &d->span.test);
    ikp__puts(o, ")\nverdict   ");
    ikp__puts(o, ikp_verdict_name(d->verdict));
    ikp__puts(o, d->verdict == IKP_VERDICT_INCOMPLETE ? " (below)" : " (the span's");
    if (d->verdict != IKP_VERDICT_INCOMPLETE) {
        ikp__puts(o, "; a measure (p50, p90, p99, total) moved when its test's p < ");
        ikp__put_diff_rule(o, d, " and it changed by at least ");
        ikp__puts(o, "; the capture's span when it changed as much and by more than the blocks' ends lie apart)");
    }
    ikp__puts(o, "\nevents    ");
    { /* the events' verdicts in one line: slower ones, then faster ones */
        int v, any = 0;
        for (v = IKP_VERDICT_SLOWER; v >= IKP_VERDICT_FASTER; v--) {
            int first = 1;
            for (i = 0; i < d->num_events; i++) {
                const ikp_diff_event *e = &d->events[i];
                if ((int)e->test.verdict != v) continue;
                ikp__puts(o, first ? (any ? "; " : "") : ", ");
                if (first) { ikp__puts(o, ikp_verdict_name((ikp_verdict)v)); ikp__puts(o, ": "); }
                ikp__put_text_name(o, e->name, 0);
                ikp__puts(o, " ");
                ikp__put_pct(o, e->test.change, 0);
                ikp__puts(o, " (");
                ikp__put_measures(o, e->test.measures, ", ", 0);
                ikp__puts(o, ")");
                first = 0;
                any = 1;
            }
        }
        ikp__puts(o, any ? "\n" : "none slower or faster\n");
    }
    if (ikp_diff_incomplete(d, 0, t, sizeof t)) {
        ikp__puts(o, "warning   incomplete: ");
        ikp__puts(o, t);
        ikp__puts(o, " (a gate fails on it)\n");
    }
    for (bit = 1; bit <= IKP_DIFF_EVENTS; bit <<= 1)
        if (d->differs & bit) {
            snprintf(t, sizeof t, "note      the captures' %s differ", ikp__differs_text(bit));
            ikp__puts(o, t);
            if (bit == IKP_DIFF_EVENTS) {
                ikp__puts(o, ": compared by name; only in one:");
                for (i = 0; i < d->num_events; i++)
                    if (d->events[i].test.verdict == IKP_VERDICT_ONLY_BASE ||
                        d->events[i].test.verdict == IKP_VERDICT_ONLY_NEW) {
                        ikp__puts(o, " ");
                        ikp__put_text_name(o, d->events[i].name, 0);
                        ikp__puts(o, d->events[i].test.verdict == IKP_VERDICT_ONLY_BASE ? " (base)" : " (new)");
                    }
            }
            if (bit == IKP_DIFF_BLOCKS) {
                snprintf(t, sizeof t, ": %u and %u", d->base_info.num_blocks, d->next_info.num_blocks);
                ikp__puts(o, t);
            }
            if (bit == IKP_DIFF_GROUPS) {
                snprintf(t, sizeof t, ": %u and %u", d->base_info.num_groups, d->next_info.num_groups);
                ikp__puts(o, t);
            }
            ikp__puts(o, "\n");
        }
}

IKP_DEF ikp_result ikp_diff_write_text(const ikp_diff *d, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__out o;
    char buf[4096];
    uint32_t i;
    size_t w = 10;
    if (!d || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    for (i = 0; i < d->num_events; i++) {
        size_t n = strlen(d->events[i].name);
        if (n > w) w = n > 40 ? 40 : n;
    }
    ikp__diff_text_events(&o, d, w);
    ikp__diff_text_groups(&o, d, w);
    ikp__diff_text_span(&o, d);
    return ikp__out_end(&o, err, "comparison");
}

static void ikp__put_json_dist(ikp__out *o, const ikp_event_stats *e)
{
    ikp__puts(o, "{\"count\":");
    ikp__put_u64(o, e->count);
    ikp__put_kv_f(o, "total_ns", e->total_ns);
    ikp__put_kv_f(o, "p50_ns", e->p50_ns);
    ikp__put_kv_f(o, "p90_ns", e->p90_ns);
    ikp__put_kv_f(o, "p99_ns", e->p99_ns);
    ikp__put_kv_f(o, "max_ns", e->max_ns);
    ikp__puts(o, "}");
}
/* ,"<m>_change":c,"<m>_p":p */
static void ikp__put_json_measure(ikp__out *o, const char *m, double change, double p)
{
    ikp__puts(o, ",\"");
    ikp__puts(o, m);
    ikp__puts(o, "_change\":");
    ikp__put_f(o, change, 6);
    ikp__puts(o, ",\"");
    ikp__puts(o, m);
    ikp__puts(o, "_p\":");
    ikp__put_prob(o, p);
}
static void ikp__put_json_test(ikp__out *o, const ikp_diff_test *t)
{
    ikp__puts(o, ",\"p50_change\":");
    ikp__put_f(o, t->p50_change, 6);
    ikp__puts(o, ",\"z\":");
    ikp__put_f(o, t->z, 3);
    ikp__puts(o, ",\"p_value\":");
    ikp__put_prob(o, t->p_value);
    ikp__put_json_measure(o, "p90", t->p90_change, t->p90_p);
    ikp__put_json_measure(o, "p99", t->p99_change, t->p99_p);
    ikp__put_json_measure(o, "total", t->total_change, t->total_p);
    ikp__puts(o, ",\"moved\":[");
    ikp__put_measures(o, t->measures, ",", 1);
    ikp__puts(o, "],\"moved_change\":");
    ikp__put_f(o, t->change, 6);
    ikp__puts(o, ",\"verdict\":\"");
    ikp__puts(o, ikp_verdict_name(t->verdict));
    ikp__puts(o, "\"");
}
static void ikp__put_json_capture(ikp__out *o, const ikp_capture_info *in)
{
    ikp__puts(o, "{\"format\":\"");
    ikp__puts(o, ikp_format_name(in->format));
    ikp__puts(o, "\"");
    ikp__put_kv_u(o, "blocks", in->num_blocks);
    ikp__put_kv_u(o, "num_groups", in->num_groups);
    ikp__put_kv_u(o, "records", in->records);
    ikp__puts(o, "}");
}

/* one event of the JSON comparison: both sides' figures, changes, test */
static void ikp__diff_json_event(ikp__out *o, const ikp_diff_event *e, int first)
{
    ikp__puts(o, first ? "\n{\"name\":\"" : ",\n{\"name\":\"");
    ikp__put_json_chars(o, e->name);
    ikp__puts(o, "\",\"base\":");
    if (e->base.count) ikp__put_json_dist(o, &e->base); else ikp__puts(o, "null");
    ikp__puts(o, ",\"new\":");
    if (e->next.count) ikp__put_json_dist(o, &e->next); else ikp__puts(o, "null");
    if (e->base.count && e->next.count) {
        ikp__puts(o, ",\"changes\":{\"count\":");
        ikp__put_f(o, ikp__change((double)e->base.count, (double)e->next.count), 6);
        ikp__puts(o, ",\"total\":");
        ikp__put_f(o, ikp__change(e->base.total_ns, e->next.total_ns), 6);
        ikp__puts(o, ",\"p90\":");
        ikp__put_f(o, ikp__change(e->base.p90_ns, e->next.p90_ns), 6);
        ikp__puts(o, ",\"p99\":");
        ikp__put_f(o, ikp__change(e->base.p99_ns, e->next.p99_ns), 6);
        ikp__puts(o, ",\"max\":");
        ikp__put_f(o, ikp__change(e->base.max_ns, e->next.max_ns), 6);
        ikp__puts(o, "}");
        ikp__put_json_test(o, &e->test);
    } else {
        ikp__puts(o, ",\"p50_change\":null,\"verdict\":\"");
        ikp__puts(o, ikp_verdict_name(e->test.verdict));
        ikp__puts(o, "\"");
    }
    ikp__puts(o, "}");
}

/* one group of the JSON comparison: lanes and busy fraction of each side */
static void ikp__diff_json_group(ikp__out *o, const ikp_diff_group *g, int first)
{
    ikp__puts(o, first ? "\n{\"name\":\"" : ",\n{\"name\":\"");
    ikp__put_json_chars(o, g->name);
    ikp__puts(o, "\",\"base\":");
    if (g->base_lanes) {
        ikp__puts(o, "{\"lanes\":"); ikp__put_u64(o, g->base_lanes);
        ikp__puts(o, ",\"busy_fraction\":"); ikp__put_f(o, g->base_busy, 6); ikp__puts(o, "}");
    } else ikp__puts(o, "null");
    ikp__puts(o, ",\"new\":");
    if (g->next_lanes) {
        ikp__puts(o, "{\"lanes\":"); ikp__put_u64(o, g->next_lanes);
        ikp__puts(o, ",\"busy_fraction\":"); ikp__put_f(o, g->next_busy, 6); ikp__puts(o, "}");
    } else ikp__puts(o, "null");
    ikp__puts(o, ",\"verdict\":\"");
    ikp__puts(o, ikp_verdict_name(g->verdict));
    ikp__puts(o, "\"}");
}

IKP_DEF ikp_result ikp_diff_write_json(const ikp_diff *d, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__out o;
    char buf[4096], why[256];
    uint32_t i, bit, n = 0;
    if (!d || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    ikp__puts(&o, "{\"base\":");
    ikp__put_json_capture(&o, &d->base_info);
    ikp__puts(&o, ",\"new\":");
    ikp__put_json_capture(&o, &d->next_info);
    ikp__puts(&o, ",\"options\":{\"threshold\":");
    ikp__put_f(&o, d->options.threshold, 6);
    ikp__puts(&o, ",\"alpha\":");
    ikp__put_prob(&o, d->options.alpha);
    ikp__puts(&o, ",\"min_change_ns\":");
    ikp__put_f(&o, d->options.min_change_ns, 3);
    ikp__put_kv_u(&o, "tests", d->tests);
    ikp__puts(&o, "},\"differs\":[");
    for (bit = 1; bit <= IKP_DIFF_EVENTS; bit <<= 1)
        if (d->differs & bit) {
            ikp__puts(&o, n++ ? ",\"" : "\"");
            ikp__puts(&o, ikp__differs_text(bit));
            ikp__puts(&o, "\"");
        }
    ikp__puts(&o, "],\"events\":[");
    for (i = 0; i < d->num_events; i++) ikp__diff_json_event(&o, &d->events[i], i == 0);
    ikp__puts(&o, "],\"groups\":[");
    for (i = 0; i < d->num_groups; i++) ikp__diff_json_group(&o, &d->groups[i], i == 0);
    ikp__puts(&o, "],\"span\":{\"base_ns\":");
    ikp__put_f(&o, d->span.base_ns, 3);
    ikp__puts(&o, ",\"new_ns\":");
    ikp__put_f(&o, d->span.next_ns, 3);
    ikp__puts(&o, ",\"change\":");
    ikp__put_f(&o, d->span.change, 6);
    ikp__puts(&o, ",\"blocks\":{\"base\":");
    ikp__put_json_dist(&o, &d->span.base_blocks);
    ikp__puts(&o, ",\"new\":");
    ikp__put_json_dist(&o, &d->span.next_blocks);
    ikp__puts(&o, "}");
    ikp__put_json_test(&o, &d->span.test);
    ikp__puts(&o, "},\"verdict\":\"");
    ikp__puts(&o, ikp_verdict_name(d->verdict));
    ikp__puts(&o, "\",\"incomplete\":");
    if (ikp_diff_incomplete(d, 0, why, sizeof why)) {
        ikp__puts(&o, "\"");
        ikp__put_json_chars(&o, why);
        ikp__puts(&o, "\"}\n");
    } else ikp__puts(&o, "null}\n");
    return ikp__out_end(&o, err, "comparison");
}

/* >>diff-markdown: Markdown, link and XML escapes; a diff in Markdown */
/* str with the ASCII bytes that esc names written as it says, the rest as
   the UTF-8 they are; control bytes and bytes that are not UTF-8 as '?'
   (Markdown and XML text) */
static void ikp__put_text(ikp__out *o, const char *str, const char *(*esc)(unsigned c))
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str), i = 0;
    while (i < n) {
        unsigned c = s[i];
        const char *r = c < 0x80 ? esc(c) : NULL;
        size_t len = c >= 0x20 && c != 0x7f ? ikp__utf8_len(s + i, n - i) : 0;
        if (r) ikp__puts(o, r);
        else if (len) { ikp__put(o, str + i, len); i += len; continue; }
        else ikp__put(o, "?", 1);
        i++;
    }
}
static const char *ikp__md_esc(unsigned c)
{
    switch (c) {
    case '|': return "\\|";
    case '\\': return "\\\\";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '&': return "&amp;";
    case '`': return "\\`";
    case '*': return "\\*";
    case '_': return "\\_";
    case '[': return "\\[";
    case ']': return "\\]";
    default: return NULL;
    }
}
static const char *ikp__xml_esc(unsigned c)
{
    switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    default: return NULL;
    }
}

/* Markdown table cell text: '|', '\\', '<', '>', '&' and control bytes made
   harmless, bytes that are not UTF-8 written as '?' */
static void ikp__put_md(ikp__out *o, const char *str)
{
    ikp__put_text(o, str, ikp__md_esc);
}

/* a link destination: bytes other than letters, digits, '-', '.', '_',
   '~' and '/' percent-encoded, so that spaces, parentheses and any other
   byte keep the link whole (CommonMark) */
static void ikp__put_url(ikp__out *o, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~' || c == '/')
            ikp__put(o, s, 1);
        else {
            char t[3];
            t[0] = '%'; t[1] = hex[c >> 4]; t[2] = hex[c & 15];
            ikp__put(o, t, 3);
        }
    }
}

static void ikp__put_diff_md(ikp__out *o, const ikp_diff *d)
{
    uint32_t i;
    ikp__puts(o, "| event | count base / new | p50 base (ns) | p50 new (ns) | p50 | p90 | p99 | total | verdict |\n"
                 "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (i = 0; i < d->num_events; i++) {
        const ikp_diff_event *e = &d->events[i];
        char t[96];
        ikp__puts(o, "| ");
        ikp__put_md(o, e->name);
        snprintf(t, sizeof t, " | %llu / %llu | ", (unsigned long long)e->base.count, (unsigned long long)e->next.count);
        ikp__puts(o, t);
        ikp__put_f(o, e->base.p50_ns, 1); ikp__puts(o, " | ");
        ikp__put_f(o, e->next.p50_ns, 1); ikp__puts(o, " | ");
        if (e->base.count && e->next.count) {
            ikp__put_pct(o, e->test.p50_change, 0); ikp__puts(o, " | ");
            ikp__put_pct(o, ikp__change(e->base.p90_ns, e->next.p90_ns), 0); ikp__puts(o, " | ");
            ikp__put_pct(o, ikp__change(e->base.p99_ns, e->next.p99_ns), 0); ikp__puts(o, " | ");
            ikp__put_pct(o, ikp__change(e->base.total_ns, e->next.total_ns), 0); ikp__puts(o, " | ");
        } else ikp__puts(o, "- | - | - | - | ");
        ikp__puts(o, e->test.verdict == IKP_VERDICT_SLOWER || e->test.verdict == IKP_VERDICT_FASTER ? "**" : "");
        ikp__puts(o, ikp_verdict_name(e->test.verdict));
        ikp__puts(o, e->test.verdict == IKP_VERDICT_SLOWER || e->test.verdict == IKP_VERDICT_FASTER ? "**" : "");
        if (e->test.measures) { ikp__puts(o, " ("); ikp__put_measures(o, e->test.measures, ", ", 0); ikp__puts(o, ")"); }
        ikp__puts(o, " |\n");
    }
    ikp__puts(o, "\nSpan: ");
    ikp__put_span_change(o, d);
    ikp__puts(o, "; median block span ");
    ikp__put_pct(o, d->span.test.p50_change, 0);
    ikp__puts(o, ". **Verdict: ");
    ikp__puts(o, ikp_verdict_name(d->verdict));
    if (d->span.test.measures) {
        ikp__puts(o, "** (");
        ikp__put_measures(o, d->span.test.measures, ", ", 0);
        ikp__puts(o, "; ");
    } else ikp__puts(o, "** (");
    ikp__puts(o, "each event's and the block spans' p50, p90, p99 and total tested on their own, p < ");
    ikp__put_diff_rule(o, d, ", and a change of at least ");
    ikp__puts(o, ").\n");
}

IKP_DEF ikp_result ikp_diff_write_markdown(const ikp_diff *d, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__out o;
    char buf[4096];
    if (!d || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    ikp__put_diff_md(&o, d);
    return ikp__out_end(&o, err, "comparison");
}

/* >>report-compute: ikp_report_compute and its sections */
/* stages: the analysis' series keyed (id << 32 | group), shown by group then
   id; their names' pool offsets in stage_name (event, group) */
static ikp_result ikp__report_stages(ikp_report *rp, ikp__an *an, const ikp_capture *cap, ikp__pool *pool,
                                     size_t *stage_name, ikp_error *err)
{
    size_t i;
    char t[40];
    for (i = 0; i < an->nser; i++) an->ser[i].key = an->ser[i].key << 32 | an->ser[i].key >> 32;
    ikp__sort(an->ser, an->nser, sizeof(ikp__ser), ikp__cmp_ser);
    for (i = 0; i < an->nser; i++) {
        ikp_report_stage *st = &rp->stages[rp->num_stages++];
        ikp_event_stats es;
        uint32_t id = (uint32_t)an->ser[i].key, g = (uint32_t)(an->ser[i].key >> 32);
        memset(st, 0, sizeof *st);
        ikp__event_stats_fill(&es, an->ser[i].v, an->ser[i].n);
        st->id = id;
        st->group = g;
        st->count = es.count;
        st->total_ns = es.total_ns;
        st->p50_ns = es.p50_ns;
        st->p99_ns = es.p99_ns;
        st->share = g < an->ng && an->g_region[g] > 0 ? es.total_ns / an->g_region[g] : 0;
        if (!ikp__pool_add(&cap->alloc, pool, ikp__ev_name(cap, id, t, sizeof t), &stage_name[2 * i]) ||
            !ikp__pool_add(&cap->alloc, pool, ikp__gr_name(cap, g, t, sizeof t), &stage_name[2 * i + 1]))
            return ikp__oom(err);
    }
    return IKP_OK;
}

/* groups with lanes (their names' pool offsets in group_name), and the
   pairs of the first IKP__PAIR_GROUPS groups: how much of their common span
   each works alone, both, neither */
static ikp_result ikp__report_groups(ikp_report *rp, const ikp__an *an, const ikp_capture *cap, ikp__pool *pool,
                                     size_t *group_name, ikp_error *err)
{
    uint32_t g, gi[IKP__PAIR_GROUPS];
    size_t i, j;
    char t[40];
    for (g = 0; g < IKP__PAIR_GROUPS; g++) gi[g] = UINT32_MAX;
    for (g = 0; g < an->ng; g++) {
        ikp_report_group *gr;
        if (!an->g_lanes[g] && !an->g_blocks[g]) continue;
        if (g < IKP__PAIR_GROUPS) gi[g] = rp->num_groups;
        gr = &rp->groups[rp->num_groups];
        memset(gr, 0, sizeof *gr);
        gr->group = g;
        gr->lanes = an->g_lanes[g];
        gr->blocks = an->g_blocks[g];
        gr->busy_ns = an->g_work[g];
        gr->span_ns = an->g_bspan[g];
        gr->busy_fraction = gr->span_ns > 0 ? gr->busy_ns / gr->span_ns : 0;
        if (gr->busy_fraction > 1) gr->busy_fraction = 1; /* several lanes of a group in a block */
        gr->idle_fraction = gr->span_ns > 0 ? 1 - gr->busy_fraction : 0;
        gr->alone_ns = an->g_alone[g];
        gr->blocks_bound = an->g_bound[g];
        if (!ikp__pool_add(&cap->alloc, pool, ikp__gr_name(cap, g, t, sizeof t), &group_name[rp->num_groups]))
            return ikp__oom(err);
        rp->num_groups++;
    }
    rp->pairs = (ikp_report_pair *)ikp__alloc(&cap->alloc, (IKP__PAIR_GROUPS * IKP__PAIR_GROUPS) * sizeof(ikp_report_pair));
    if (!rp->pairs) return ikp__oom(err);
    for (i = 0; i < IKP__PAIR_GROUPS; i++)
        for (j = i + 1; j < IKP__PAIR_GROUPS; j++) {
            size_t idx = i * IKP__PAIR_GROUPS + j;
            ikp_report_pair *pr;
            double sp = an->p_span[idx];
            if (!(sp > 0) || gi[i] == UINT32_MAX || gi[j] == UINT32_MAX) continue;
            pr = &rp->pairs[rp->num_pairs++];
            pr->a = gi[i];
            pr->b = gi[j];
            pr->span_ns = sp / 1000.0;
            pr->both = an->p_both[idx] / sp;
            pr->a_only = an->p_a[idx] / sp;
            pr->b_only = an->p_b[idx] / sp;
            pr->neither = 1 - pr->both - pr->a_only - pr->b_only;
            if (pr->neither < 0) pr->neither = 0;
        }
    return IKP_OK;
}

/* balance: blocks latest first (taken from the analysis), the median end,
   and by SM when lanes name their SMs */
static ikp_result ikp__report_balance(ikp_report *rp, ikp__an *an, const ikp_capture *cap, ikp_error *err)
{
    size_t i;
    rp->blocks = an->blk;
    rp->num_blocks = (uint32_t)an->nblk;
    an->blk = NULL;
    ikp__sort(rp->blocks, rp->num_blocks, sizeof(ikp_report_block), ikp__cmp_blk_end);
    if (rp->num_blocks) {
        rp->end_p50_ps = rp->blocks[rp->num_blocks / 2].end_ps;
        rp->tail_ps = rp->blocks[0].end_ps - rp->end_p50_ps;
    }
    if (!an->by_sm) return IKP_OK;
    rp->sms = (ikp_report_sm *)ikp__alloc(&cap->alloc, (an->nunits + 1) * sizeof(ikp_report_sm));
    if (!rp->sms) return ikp__oom(err);
    for (i = 0; i < an->nunits; i++) {
        memset(&rp->sms[i], 0, sizeof(ikp_report_sm));
        rp->sms[i].sm = an->units[i];
        rp->sms[i].start_ps = INT64_MAX;
        rp->sms[i].end_ps = INT64_MIN;
    }
    rp->num_sms = (uint32_t)an->nunits;
    for (i = 0; i < rp->num_blocks; i++) {
        const ikp_report_block *b = &rp->blocks[i];
        size_t u = ikp__find_u32(an->units, an->nunits, b->sm);
        if (u == an->nunits) continue;
        rp->sms[u].blocks++;
        rp->sms[u].busy_ns += b->busy_ns;
        if (b->start_ps < rp->sms[u].start_ps) rp->sms[u].start_ps = b->start_ps;
        if (b->end_ps > rp->sms[u].end_ps) rp->sms[u].end_ps = b->end_ps;
    }
    for (i = 0; i < rp->num_sms; i++)
        if (rp->sms[i].start_ps == INT64_MAX) rp->sms[i].start_ps = rp->sms[i].end_ps = 0;
    return IKP_OK;
}

/* the picture: rows, rectangles (taken from the analysis) and the heat map */
static ikp_result ikp__report_picture(ikp_report *rp, ikp__an *an, const ikp_capture *cap, ikp_error *err)
{
    const ikp_allocator *a = &cap->alloc;
    double bw = (double)(cap->info.span_ps > 0 ? cap->info.span_ps : 1) / an->heat_bins;
    size_t i;
    rp->plot_width = an->width;
    rp->row_by_sm = an->by_sm;
    rp->num_rows = (uint32_t)an->nrows;
    rp->row_unit = (uint32_t *)ikp__alloc(a, (an->nrows + 1) * sizeof(uint32_t));
    rp->row_group = (uint32_t *)ikp__alloc(a, (an->nrows + 1) * sizeof(uint32_t));
    rp->heat_unit = (uint32_t *)ikp__alloc(a, ((size_t)an->heat_rows + 1) * sizeof(uint32_t));
    rp->heat = (float *)ikp__alloc(a, ((size_t)an->heat_rows * an->heat_bins + 1) * sizeof(float));
    if (!rp->row_unit || !rp->row_group || !rp->heat_unit || !rp->heat) return ikp__oom(err);
    for (i = 0; i < an->nrows; i++) { rp->row_unit[i] = (uint32_t)(an->rows[i] >> 32); rp->row_group[i] = (uint32_t)an->rows[i]; }
    rp->rects = an->rects;
    rp->num_rects = an->nrects;
    an->rects = NULL;
    rp->heat_rows = an->heat_rows;
    rp->heat_bins = an->heat_bins;
    rp->heat_units_per_row = an->upr;
    for (i = 0; i < (size_t)an->heat_rows * an->heat_bins; i++) {
        double v = an->heat[i] / bw / an->upr;
        rp->heat[i] = (float)v;
        if (v > rp->heat_max) rp->heat_max = v;
    }
    for (i = 0; i < an->heat_rows; i++) rp->heat_unit[i] = an->units[i * an->upr];
    return IKP_OK;
}

/* ASCII letters and digits, whatever the locale */
static int ikp__alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
IKP_DEF int ikp_is_wait_name(const char *name)
{
    static const char *const words[] = {"wait", "waits", "waiting", "waited", "barrier", "sync", "stall"};
    size_t i = 0, n, k, w;
    if (!name) return 0;
    n = strlen(name);
    while (i < n) {
        char word[16];
        size_t at = i;
        while (at < n && !ikp__alnum(name[at])) at++;
        i = at;
        while (i < n && ikp__alnum(name[i]) &&
               !(i > at && name[i] >= 'A' && name[i] <= 'Z' && name[i - 1] >= 'a' && name[i - 1] <= 'z'))
            i++;
        if (i == at || i - at >= sizeof word) continue;
        for (k = 0; k < i - at; k++)
            word[k] = (char)(name[at + k] >= 'A' && name[at + k] <= 'Z' ? name[at + k] + 32 : name[at + k]);
        word[i - at] = 0;
        for (w = 0; w < sizeof words / sizeof *words; w++)
            if (!strcmp(word, words[w])) return 1;
    }
    return 0;
}

/* the events the report treats as waits, as a table by id (*wait; NULL
   when there are none): those given, else those named as waits (in the
   capture's names) unless opt->no_wait_names; *by_name says which */
static ikp_result ikp__report_waits(const ikp_capture *cap, const ikp_report_options *opt, const ikp_allocator *a,
                                    uint8_t **wait, int *by_name, ikp_error *err)
{
    uint32_t k, found = 0;
    *wait = NULL;
    *by_name = 0;
    if (!opt || !opt->num_wait_events) {
        if (opt && opt->no_wait_names) { *by_name = -1; return IKP_OK; }
        for (k = 0; k < cap->num_event_names && k < IKP_WIRE_MAX_EVENTS; k++)
            if (cap->event_names[k] && ikp_is_wait_name(cap->event_names[k])) {
                if (!*wait && !(*wait = (uint8_t *)ikp__zalloc(a, IKP_WIRE_MAX_EVENTS))) return ikp__oom(err);
                (*wait)[k] = 1;
                found++;
            }
        *by_name = found > 0;
        return IKP_OK;
    }
    if (!(*wait = (uint8_t *)ikp__zalloc(a, IKP_WIRE_MAX_EVENTS))) return ikp__oom(err);
    for (k = 0; k < opt->num_wait_events; k++) {
        if (opt->wait_events[k] >= IKP_WIRE_MAX_EVENTS) {
            ikp__free(a, *wait);
            *wait = NULL;
            return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "wait event %u: id %u is not below %u", k,
                             opt->wait_events[k], IKP_WIRE_MAX_EVENTS);
        }
        (*wait)[opt->wait_events[k]] = 1;
    }
    return IKP_OK;
}

/* The report's names, now that the pool stops growing (the device's added
   last: as given, else as the capture recorded it): the pool becomes
   rp->names_, and the offsets the sections kept (stage_name: two a stage,
   group_name: one a group) become pointers into it. */
static ikp_result ikp__report_names(ikp_report *rp, const ikp_capture *cap, const ikp_report_options *opt,
                                    ikp__pool *pool, const size_t *stage_name, const size_t *group_name,
                                    ikp_error *err)
{
    const ikp_allocator *a = &cap->alloc;
    size_t i, dev_name = 0;
    if (opt && opt->device) {
        if (!ikp__pool_add(a, pool, opt->device, &dev_name)) return ikp__oom(err);
    } else if (cap->info.device_known) {
        char dv[256];
        if (!ikp__pool_add(a, pool, ikp_device_text(&cap->device, dv, sizeof dv), &dev_name)) return ikp__oom(err);
    }
    rp->names_ = pool->p;
    pool->p = NULL;
    for (i = 0; i < rp->num_stages; i++) {
        rp->stages[i].name = rp->names_ + stage_name[2 * i];
        rp->stages[i].group_name = rp->names_ + stage_name[2 * i + 1];
    }
    for (i = 0; i < rp->num_groups; i++) rp->groups[i].name = rp->names_ + group_name[i];
    if ((opt && opt->device) || cap->info.device_known) rp->device = rp->names_ + dev_name;
    return IKP_OK;
}

IKP_DEF ikp_result ikp_report_compute(const ikp_capture *cap, const ikp_report_options *opt, ikp_report **out,
                                      ikp_error *err)
{
    const ikp_allocator *a;
    ikp_report *rp;
    ikp__an an;
    ikp__pool pool;
    ikp_result r;
    uint8_t *wait = NULL;
    size_t *stage_name = NULL, *group_name = NULL;
    if (!cap || !out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    *out = NULL;
    if (opt && opt->num_wait_events && !opt->wait_events)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL wait_events with a non-zero count");
    a = &cap->alloc;
    memset(&pool, 0, sizeof pool);
    rp = (ikp_report *)ikp__alloc(a, sizeof *rp);
    if (!rp) return ikp__oom(err);
    memset(rp, 0, sizeof *rp);
    rp->allocator_ = cap->alloc;
    if ((r = ikp__report_waits(cap, opt, a, &wait, &rp->waits_by_name, err)) != IKP_OK) { ikp__free(a, rp); return r; }
    if (wait) { /* their ids, for the texts */
        uint32_t k;
        for (k = 0; k < IKP_WIRE_MAX_EVENTS; k++) rp->waits += wait[k];
        if (!(rp->wait_ids = (uint32_t *)ikp__alloc(a, rp->waits * sizeof(uint32_t)))) {
            ikp__free(a, wait);
            ikp__free(a, rp);
            return ikp__oom(err);
        }
        for (rp->waits = 0, k = 0; k < IKP_WIRE_MAX_EVENTS; k++)
            if (wait[k]) rp->wait_ids[rp->waits++] = k;
    }
    if ((r = ikp_stats_compute(cap, &rp->stats, err)) != IKP_OK) {
        ikp__free(a, wait);
        ikp__free(a, rp->wait_ids);
        ikp__free(a, rp);
        return r;
    }
    r = ikp__an_run(&an, cap, 1, opt, wait, err);
    if (r == IKP_OK) r = ikp__an_sort(&an, err);
    if (r != IKP_OK) goto fail;
    rp->stages = (ikp_report_stage *)ikp__alloc(a, (an.nser + 1) * sizeof(ikp_report_stage));
    stage_name = (size_t *)ikp__alloc(a, (an.nser + 1) * 2 * sizeof(size_t));
    group_name = (size_t *)ikp__alloc(a, ((size_t)an.ng + 1) * sizeof(size_t));
    rp->groups = (ikp_report_group *)ikp__alloc(a, ((size_t)an.ng + 1) * sizeof(ikp_report_group));
    if (!rp->stages || !stage_name || !group_name || !rp->groups) { r = ikp__oom(err); goto fail; }
    if ((r = ikp__report_stages(rp, &an, cap, &pool, stage_name, err)) != IKP_OK ||
        (r = ikp__report_groups(rp, &an, cap, &pool, group_name, err)) != IKP_OK ||
        (r = ikp__report_balance(rp, &an, cap, err)) != IKP_OK || (r = ikp__report_picture(rp, &an, cap, err)) != IKP_OK ||
        (r = ikp__report_names(rp, cap, opt, &pool, stage_name, group_name, err)) != IKP_OK)
        goto fail;
    ikp__free(a, stage_name);
    ikp__free(a, group_name);
    ikp__free(a, wait);
    ikp__an_free(&an);
    *out = rp;
    ikp__ok(err);
    return IKP_OK;
fail:
    ikp__free(a, stage_name);
    ikp__free(a, group_name);
    ikp__free(a, wait);
    ikp__free(a, pool.p);
    ikp__an_free(&an);
    ikp_report_free(rp);
    return r;
}

/* >>report-markdown: a report in Markdown */
static void ikp__put_us(ikp__out *o, int64_t ps)
{
    ikp__put_f(o, (double)ps / 1e6, 3);
}
static void ikp__put_share(ikp__out *o, double frac) /* "12.3%" */
{
    ikp__put_f(o, frac * 100, 1);
    ikp__puts(o, "%");
}

/* # title and ## Configuration: the capture, device, grid, lanes, records, placement, warnings */
static void ikp__md_configuration(ikp__out *o, const ikp_report *r, const ikp_report_md_options *opt)
{
    char t[512];
    const ikp_stats *st = r->stats;
    const ikp_capture_info *in = &st->info;
    ikp__puts(o, "# ");
    ikp__put_md(o, opt && opt->title ? opt->title : "IKP report");
    if (ikp_capture_stale(in, t, sizeof t)) { /* before anything that reads as this launch's */
        ikp__puts(o, "\n\n**");
        ikp__put_md(o, t);
        ikp__puts(o, "**");
    }
    ikp__puts(o, "\n\n## Configuration\n\n| | |\n| --- | --- |\n");
    if (opt && opt->source) { ikp__puts(o, "| capture | "); ikp__put_md(o, opt->source); ikp__puts(o, " |\n"); }
    ikp__puts(o, "| device | ");
    ikp__put_md(o, r->device ? r->device : "not recorded in the capture");
    snprintf(t, sizeof t, " |\n| format | %s (timer: %s) |\n| grid | %u blocks x %u groups", ikp_format_name(in->format),
             in->timer_cycles ? "SM cycles" : "globaltimer ns", in->num_blocks, in->num_groups);
    ikp__puts(o, t);
    if (in->grid[0]) { snprintf(t, sizeof t, " (grid %u x %u x %u)", in->grid[0], in->grid[1], in->grid[2]); ikp__puts(o, t); }
    if (in->launch) { snprintf(t, sizeof t, " |\n| launch | %llu (counted by its buffer's resets)", (unsigned long long)in->launch); ikp__puts(o, t); }
    snprintf(t, sizeof t, " |\n| lanes | %u in the buffer, %u active |\n| records | %llu (%llu regions, %llu instants) |\n| span | ",
             in->num_lanes, in->active_lanes, (unsigned long long)in->records, (unsigned long long)st->regions,
             (unsigned long long)st->instants);
    ikp__puts(o, t);
    ikp__put_us(o, in->span_ps);
    ikp__puts(o, " us |\n");
    if (in->drops_known) { snprintf(t, sizeof t, "| dropped | %llu |\n", (unsigned long long)in->dropped); ikp__puts(o, t); }
    {
        char pl[640];
        int poor;
        ikp_capture_placement(in, pl, sizeof pl, &poor);
        ikp__puts(o, poor ? "| placement (poor) | " : "| placement | ");
        ikp__put_md(o, pl);
        ikp__puts(o, " |\n");
    }
    if (in->invalid || in->backwards || in->unfinalized_lanes || in->corrupt_lanes || in->refused_lanes || in->claimed_twice ||
        in->out_of_range || in->after_finalize || in->past_count || in->duplicate_lanes || in->bad_sm_lanes || in->may_wrap || st->unmatched_begin || st->unmatched_end) {
        snprintf(t, sizeof t, "| warnings | %llu unmatched begins, %llu unmatched ends, %llu invalid, %llu backwards, "
                 "%llu lanes unfinalized, %llu corrupt, %llu refused: see the capture's info |\n",
                 (unsigned long long)st->unmatched_begin, (unsigned long long)st->unmatched_end,
                 (unsigned long long)in->invalid, (unsigned long long)in->backwards,
                 (unsigned long long)in->unfinalized_lanes, (unsigned long long)in->corrupt_lanes,
                 (unsigned long long)in->refused_lanes);
        ikp__puts(o, t);
    }
}

/* ## Stages: each event's regions per group */
static void ikp__md_stages(ikp__out *o, const ikp_report *r)
{
    char t[512];
    uint32_t i;
    ikp__puts(o, "\n## Stages\n\nEach event's regions per group: count, total time, share of the group's lanes' "
                  "time inside regions (regions nest, so shares can add up past 100%), median and 99th percentile.\n\n"
                  "| group | event | count | total (us) | share | p50 (ns) | p99 (ns) |\n"
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (i = 0; i < r->num_stages; i++) {
        const ikp_report_stage *s = &r->stages[i];
        ikp__puts(o, "| ");
        ikp__put_md(o, s->group_name);
        ikp__puts(o, " | ");
        ikp__put_md(o, s->name);
        snprintf(t, sizeof t, " | %llu | ", (unsigned long long)s->count);
        ikp__puts(o, t);
        ikp__put_f(o, s->total_ns / 1000.0, 3); ikp__puts(o, " | ");
        ikp__put_share(o, s->share); ikp__puts(o, " | ");
        ikp__put_f(o, s->p50_ns, 1); ikp__puts(o, " | ");
        ikp__put_f(o, s->p99_ns, 1); ikp__puts(o, " |\n");
    }
}

/* JSON: the i-th object of an array (a comma before it unless i is 0),
   opened with its first key, an unsigned number */
static void ikp__put_elem_u(ikp__out *o, uint32_t i, const char *k, uint64_t v)
{
    ikp__puts(o, i ? ",\n{\"" : "\n{\""); ikp__puts(o, k); ikp__puts(o, "\":"); ikp__put_u64(o, v);
}

/* the group the blocks wait on: busy alone the longest (an index into
   r->groups), or -1 when none is (one group, or none ever alone) */
static int ikp__report_bound(const ikp_report *r)
{
    uint32_t i, best = 0;
    for (i = 1; i < r->num_groups; i++)
        if (r->groups[i].alone_ns > r->groups[best].alone_ns) best = i;
    return r->num_groups > 1 && r->groups[best].alone_ns > 0 ? (int)best : -1;
}

/* wait event k's name, as its stages name it */
static const char *ikp__report_wait_name(const ikp_report *r, uint32_t k, char *buf, size_t size)
{
    uint32_t i;
    for (i = 0; i < r->num_stages; i++)
        if (r->stages[i].id == r->wait_ids[k]) return r->stages[i].name;
    snprintf(buf, size, "event %u", r->wait_ids[k]);
    return buf;
}

/* which events the report took as waits, and why */
static void ikp__md_waits(ikp__out *o, const ikp_report *r)
{
    char t[32];
    uint32_t k;
    if (!r->waits && r->waits_by_name < 0) {
        ikp__puts(o, "No event is taken as a wait, as asked (`--wait none`): time in every region is busy.\n\n");
        return;
    }
    if (!r->waits) {
        ikp__puts(o, "No event is taken as a wait (none was given, and none is named wait, barrier, sync or stall): "
                     "time in every region is busy, so a group that waits inside a region looks busy. Say which "
                     "events wait with `--wait EVENT,...` (`ikp_report_options.wait_events`).\n\n");
        return;
    }
    ikp__puts(o, "Waits, idle rather than busy: ");
    for (k = 0; k < r->waits; k++) {
        ikp__puts(o, k ? ", `" : "`");
        ikp__put_md(o, ikp__report_wait_name(r, k, t, sizeof t));
        ikp__puts(o, "`");
    }
    ikp__puts(o, r->waits_by_name ? ", taken by name (a name holding the word wait, barrier, sync or stall); say "
                                    "which events wait with `--wait EVENT,...`, or `--wait none`.\n\n"
                                  : ", as given.\n\n");
}

/* ## Pipeline: busy, idle and alone per group; the bound; pairs of groups */
static void ikp__md_pipeline(ikp__out *o, const ikp_report *r)
{
    char t[512];
    uint32_t i;
    ikp__puts(o, "\n## Pipeline\n\nPer group, over the spans of the blocks it has lanes in: busy (inside a region");
    ikp__puts(o, r->waits ? ", less the wait events'" : "");
    ikp__puts(o, "), idle, and alone: busy while no other group of its block is, the time the block waits on it.\n\n");
    ikp__md_waits(o, r);
    ikp__puts(o, ""
                  "| group | lanes | busy | idle | alone | alone (us) | bounds blocks |\n"
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (i = 0; i < r->num_groups; i++) {
        const ikp_report_group *g = &r->groups[i];
        ikp__puts(o, "| ");
        ikp__put_md(o, g->name);
        snprintf(t, sizeof t, " | %u | ", g->lanes);
        ikp__puts(o, t);
        ikp__put_share(o, g->busy_fraction); ikp__puts(o, " | ");
        ikp__put_share(o, g->idle_fraction); ikp__puts(o, " | ");
        ikp__put_share(o, g->span_ns > 0 ? g->alone_ns / g->span_ns : 0); ikp__puts(o, " | ");
        ikp__put_f(o, g->alone_ns / 1000.0, 3);
        snprintf(t, sizeof t, " | %u of %u |\n", g->blocks_bound, g->blocks);
        ikp__puts(o, t);
    }
    if (ikp__report_bound(r) >= 0) {
        const ikp_report_group *g = &r->groups[ikp__report_bound(r)];
        ikp__puts(o, "\n**Bound by ");
        ikp__put_md(o, g->name);
        ikp__puts(o, "**: it is the only busy group ");
        ikp__put_share(o, g->span_ns > 0 ? g->alone_ns / g->span_ns : 0);
        snprintf(t, sizeof t, " of its blocks' time and the longest alone in %u of %u blocks.\n", g->blocks_bound, g->blocks);
        ikp__puts(o, t);
    }
    if (r->num_pairs) {
        ikp__puts(o, "\nPairs of groups in the same blocks, as fractions of those blocks' spans:\n\n"
                      "| A | B | both busy | A works, B waits | B works, A waits | both idle |\n"
                      "| --- | --- | ---: | ---: | ---: | ---: |\n");
        for (i = 0; i < r->num_pairs; i++) {
            const ikp_report_pair *p = &r->pairs[i];
            ikp__puts(o, "| ");
            ikp__put_md(o, r->groups[p->a].name);
            ikp__puts(o, " | ");
            ikp__put_md(o, r->groups[p->b].name);
            ikp__puts(o, " | ");
            ikp__put_share(o, p->both); ikp__puts(o, " | ");
            ikp__put_share(o, p->a_only); ikp__puts(o, " | ");
            ikp__put_share(o, p->b_only); ikp__puts(o, " | ");
            ikp__put_share(o, p->neither); ikp__puts(o, " |\n");
        }
    }
}

/* ## Balance: the tail, the SMs' spread, the blocks that end last, per SM */
static void ikp__md_balance(ikp__out *o, const ikp_report *r)
{
    char t[512];
    const ikp_capture_info *in = &r->stats->info;
    uint32_t i, show;
    ikp__puts(o, "\n## Balance\n\n");
    if (r->num_blocks) {
        snprintf(t, sizeof t, "%u blocks. The median block ends at ", r->num_blocks);
        ikp__puts(o, t);
        ikp__put_us(o, r->end_p50_ps);
        ikp__puts(o, " us and the last at ");
        ikp__put_us(o, r->blocks[0].end_ps);
        ikp__puts(o, " us: a tail of ");
        ikp__put_us(o, r->tail_ps);
        ikp__puts(o, " us (");
        ikp__put_share(o, in->span_ps > 0 ? (double)r->tail_ps / (double)in->span_ps : 0);
        ikp__puts(o, " of the span) in which fewer than half the blocks still run.\n");
    }
    if (r->num_sms) {
        int64_t s0 = INT64_MAX, s1 = INT64_MIN, e0 = INT64_MAX, e1 = INT64_MIN;
        for (i = 0; i < r->num_sms; i++) {
            const ikp_report_sm *s = &r->sms[i];
            if (s->start_ps < s0) s0 = s->start_ps;
            if (s->start_ps > s1) s1 = s->start_ps;
            if (s->end_ps < e0) e0 = s->end_ps;
            if (s->end_ps > e1) e1 = s->end_ps;
        }
        snprintf(t, sizeof t, "%u SMs: their first records from ", r->num_sms);
        ikp__puts(o, t);
        ikp__put_us(o, s0); ikp__puts(o, " to "); ikp__put_us(o, s1);
        ikp__puts(o, " us, their last from ");
        ikp__put_us(o, e0); ikp__puts(o, " to "); ikp__put_us(o, e1);
        ikp__puts(o, " us.\n");
    }
    show = r->num_blocks < 8 ? r->num_blocks : 8;
    if (show) {
        ikp__puts(o, "\nThe blocks that end last (busy: summed over the block's lanes):\n\n| block | SM | start (us) | end (us) | span (us) | busy (us) |\n"
                      "| ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (i = 0; i < show; i++) {
            const ikp_report_block *b = &r->blocks[i];
            snprintf(t, sizeof t, "| %u | ", b->block);
            ikp__puts(o, t);
            if (b->sm != IKP_NO_SM) { snprintf(t, sizeof t, "%u", b->sm); ikp__puts(o, t); } else ikp__puts(o, "-");
            ikp__puts(o, " | ");
            ikp__put_us(o, b->start_ps); ikp__puts(o, " | ");
            ikp__put_us(o, b->end_ps); ikp__puts(o, " | ");
            ikp__put_us(o, b->end_ps - b->start_ps); ikp__puts(o, " | ");
            ikp__put_f(o, b->busy_ns / 1000.0, 3); ikp__puts(o, " |\n");
        }
    }
    if (r->num_sms) {
        ikp__puts(o, "\n<details><summary>Per SM</summary>\n\n| SM | blocks | first start (us) | last end (us) | busy (us) |\n"
                      "| ---: | ---: | ---: | ---: | ---: |\n");
        for (i = 0; i < r->num_sms; i++) {
            const ikp_report_sm *s = &r->sms[i];
            snprintf(t, sizeof t, "| %u | %u | ", s->sm, s->blocks);
            ikp__puts(o, t);
            ikp__put_us(o, s->start_ps); ikp__puts(o, " | ");
            ikp__put_us(o, s->end_ps); ikp__puts(o, " | ");
            ikp__put_f(o, s->busy_ns / 1000.0, 3); ikp__puts(o, " |\n");
        }
        ikp__puts(o, "\n</details>\n");
    }
}

/* ## Picture: what it shows, and the link to it */
static void ikp__md_picture(ikp__out *o, const ikp_report *r, const char *svg_path)
{
    char t[512];
    uint32_t i, units = 0;
    for (i = 0; i < r->num_rows; i++) if (!i || r->row_unit[i] != r->row_unit[i - 1]) units++;
    snprintf(t, sizeof t, "\n## Picture\n\nTimeline of %u sampled %s (one row per %s and group, coloured by event) "
             "and the busy lanes of every %s over time.\n\n![IKP timeline and heatmap](", units,
             r->row_by_sm ? "SMs" : "blocks", r->row_by_sm ? "SM" : "block", r->row_by_sm ? "SM" : "block");
    ikp__puts(o, t);
    ikp__put_url(o, svg_path);
    ikp__puts(o, ")\n");
}

IKP_DEF ikp_result ikp_report_write_markdown(const ikp_report *r, const ikp_report_md_options *opt,
                                             ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__out o;
    char buf[8192];
    if (!r || !fn || !r->stats) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    ikp__md_configuration(&o, r, opt);
    ikp__md_stages(&o, r);
    ikp__md_pipeline(&o, r);
    ikp__md_balance(&o, r);
    if (opt && opt->svg_path) ikp__md_picture(&o, r, opt->svg_path);
    if (opt && opt->baseline) {
        ikp__puts(&o, "\n## vs baseline\n\n");
        ikp__put_diff_md(&o, opt->baseline);
    }
    return ikp__out_end(&o, err, "report");
}

/* >>report-json: a report as JSON */
static const char *const ikp__placed_names[4] = {"unknown", "globaltimer", "samples", "anchors"};

/* ikp_report_write_json's pieces (ikp__rj_*), in the order of the JSON:
   "configuration" and "placement" */
static void ikp__rj_configuration(ikp__out *o, const ikp_report *r)
{
    const ikp_capture_info *in = &r->stats->info;
    char t[768];
    int poor = 0;
    ikp__puts(o, "{\"schema\":\"ikp.report/1\",\n\"configuration\":{");
    ikp__put_kv_s(o, "device", r->device, 1);
    ikp__put_kv_s(o, "format", ikp_format_name(in->format), 0);
    ikp__put_kv_s(o, "timer", in->timer_cycles ? "cycles" : "globaltimer", 0);
    ikp__put_kv_u(o, "blocks", in->num_blocks);
    ikp__put_kv_u(o, "num_groups", in->num_groups);
    if (in->grid[0]) {
        snprintf(t, sizeof t, ",\"grid\":[%u,%u,%u]", in->grid[0], in->grid[1], in->grid[2]);
        ikp__puts(o, t);
    } else ikp__puts(o, ",\"grid\":null");
    ikp__put_kv_u(o, "lanes", in->num_lanes);
    ikp__put_kv_u(o, "active_lanes", in->active_lanes);
    ikp__put_kv_u(o, "records", in->records);
    ikp__put_kv_u(o, "regions", r->stats->regions);
    ikp__put_kv_u(o, "instants", r->stats->instants);
    ikp__put_kv_un(o, "dropped", in->dropped, in->drops_known);
    ikp__put_kv_f(o, "span_ns", (double)in->span_ps / 1000.0);
    ikp__put_kv_un(o, "launch", in->launch, in->launch != 0);
    ikp__put_kv_s(o, "stale", ikp_capture_stale(in, t, sizeof t) ? t : NULL, 0);
    ikp__puts(o, "},\n\"placement\":{");
    ikp_capture_placement(in, t, sizeof t, &poor);
    ikp__put_kv_s(o, "text", t, 1);
    ikp__puts(o, poor ? ",\"poor\":true" : ",\"poor\":false");
    ikp__put_kv_u(o, "cross_sm_ns", in->cross_sm_ns);
    ikp__put_kv_s(o, "basis", in->placement >= 0 && in->placement < 4 ? ikp__placed_names[in->placement] : "unknown", 0);
    ikp__puts(o, in->sm_exact ? ",\"sm_exact\":true" : ",\"sm_exact\":false");
    ikp__puts(o, "}");
}

/* "stages" */
static void ikp__rj_stages(ikp__out *o, const ikp_report *r)
{
    uint32_t i;
    ikp__puts(o, ",\n\"stages\":[");
    for (i = 0; i < r->num_stages; i++) {
        const ikp_report_stage *g = &r->stages[i];
        ikp__put_elem_u(o, i, "group", g->group);
        ikp__put_kv_s(o, "group_name", g->group_name, 0);
        ikp__put_kv_u(o, "id", g->id);
        ikp__put_kv_s(o, "name", g->name, 0);
        ikp__put_kv_u(o, "count", g->count);
        ikp__put_kv_f(o, "total_ns", g->total_ns);
        ikp__put_kv_f(o, "p50_ns", g->p50_ns);
        ikp__put_kv_f(o, "p99_ns", g->p99_ns);
        ikp__put_kv_f(o, "share", g->share);
        ikp__puts(o, "}");
    }
    ikp__puts(o, "]");
}

/* "pipeline": the groups, the one the blocks wait on, the pairs' overlap */
static void ikp__rj_pipeline(ikp__out *o, const ikp_report *r)
{
    uint32_t i;
    int bound = ikp__report_bound(r);
    ikp__puts(o, ",\n\"pipeline\":{\"groups\":[");
    for (i = 0; i < r->num_groups; i++) {
        const ikp_report_group *g = &r->groups[i];
        ikp__put_elem_u(o, i, "group", g->group);
        ikp__put_kv_s(o, "name", g->name, 0);
        ikp__put_kv_u(o, "lanes", g->lanes);
        ikp__put_kv_u(o, "blocks", g->blocks);
        ikp__put_kv_f(o, "busy_ns", g->busy_ns);
        ikp__put_kv_f(o, "span_ns", g->span_ns);
        ikp__put_kv_f(o, "busy_fraction", g->busy_fraction);
        ikp__put_kv_f(o, "idle_fraction", g->idle_fraction);
        ikp__put_kv_f(o, "alone_ns", g->alone_ns);
        ikp__put_kv_u(o, "blocks_bound", g->blocks_bound);
        ikp__puts(o, "}");
    }
    ikp__puts(o, "]");
    ikp__put_kv_s(o, "bound_group", bound >= 0 ? r->groups[bound].name : NULL, 0);
    ikp__puts(o, ",\"waits\":[");
    for (i = 0; i < r->waits; i++) {
        char t[32];
        if (i) ikp__puts(o, ",");
        ikp__puts(o, "\"");
        ikp__put_json_chars(o, ikp__report_wait_name(r, i, t, sizeof t));
        ikp__puts(o, "\"");
    }
    ikp__puts(o, "]");
    ikp__put_kv_s(o, "waits_taken", r->waits ? (r->waits_by_name > 0 ? "by_name" : "given")
                                    : r->waits_by_name < 0 ? "none_asked" : "none_found", 0);
    ikp__puts(o, ",\"pairs\":[");
    for (i = 0; i < r->num_pairs; i++) {
        const ikp_report_pair *p = &r->pairs[i];
        ikp__puts(o, i ? ",\n{" : "\n{");
        ikp__put_kv_s(o, "a", r->groups[p->a].name, 1);
        ikp__put_kv_s(o, "b", r->groups[p->b].name, 0);
        ikp__put_kv_f(o, "span_ns", p->span_ns);
        ikp__put_kv_f(o, "both", p->both);
        ikp__put_kv_f(o, "a_only", p->a_only);
        ikp__put_kv_f(o, "b_only", p->b_only);
        ikp__put_kv_f(o, "neither", p->neither);
        ikp__puts(o, "}");
    }
    ikp__puts(o, "]}");
}

/* "balance": the blocks' ends, and the last 8 blocks to end */
static void ikp__rj_balance(ikp__out *o, const ikp_report *r)
{
    const ikp_capture_info *in = &r->stats->info;
    char t[64];
    uint32_t i, show = r->num_blocks < 8 ? r->num_blocks : 8;
    ikp__puts(o, ",\n\"balance\":{");
    snprintf(t, sizeof t, "\"blocks\":%u", r->num_blocks);
    ikp__puts(o, t);
    if (r->num_blocks) {
        ikp__put_kv_f(o, "end_p50_ns", (double)r->end_p50_ps / 1000.0);
        ikp__put_kv_f(o, "last_end_ns", (double)r->blocks[0].end_ps / 1000.0);
        ikp__put_kv_f(o, "tail_ns", (double)r->tail_ps / 1000.0);
        ikp__put_kv_f(o, "tail_fraction", in->span_ps > 0 ? (double)r->tail_ps / (double)in->span_ps : 0);
    } else { /* no block ended a region: the keys stay, not known */
        ikp__put_kv_s(o, "end_p50_ns", NULL, 0);
        ikp__put_kv_s(o, "last_end_ns", NULL, 0);
        ikp__put_kv_s(o, "tail_ns", NULL, 0);
        ikp__put_kv_s(o, "tail_fraction", NULL, 0);
    }
    ikp__put_kv_u(o, "sms", r->num_sms);
    ikp__puts(o, ",\"last_blocks\":[");
    for (i = 0; i < show; i++) {
        const ikp_report_block *b = &r->blocks[i];
        ikp__put_elem_u(o, i, "block", b->block);
        ikp__put_kv_un(o, "sm", b->sm, b->sm != IKP_NO_SM);
        ikp__put_kv_f(o, "start_ns", (double)b->start_ps / 1000.0);
        ikp__put_kv_f(o, "end_ns", (double)b->end_ps / 1000.0);
        ikp__put_kv_f(o, "busy_ns", b->busy_ns);
        ikp__puts(o, "}");
    }
    ikp__puts(o, "]}");
}

IKP_DEF ikp_result ikp_report_write_json(const ikp_report *r, const ikp_diff *baseline, ikp_write_fn fn, void *user,
                                         ikp_error *err)
{
    ikp__out o;
    char buf[8192];
    if (!r || !fn || !r->stats) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    ikp__rj_configuration(&o, r);
    ikp__rj_stages(&o, r);
    ikp__rj_pipeline(&o, r);
    ikp__rj_balance(&o, r);
    ikp__puts(&o, ",\n\"baseline\":");
    if (!baseline) ikp__puts(&o, "null}\n");
    else {
        ikp_result rr;
        ikp__flush(&o);
        if (o.failed) return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the report failed");
        if ((rr = ikp_diff_write_json(baseline, fn, user, err)) != IKP_OK) return rr;
        ikp__puts(&o, "}\n");
    }
    return ikp__out_end(&o, err, "report");
}

/* >>report-svg: a report's picture as SVG */
/* XML text: escapes, control bytes and invalid UTF-8 as '?' */
static void ikp__put_xml(ikp__out *o, const char *str) { ikp__put_text(o, str, ikp__xml_esc); }

static const char *const ikp__palette[12] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                            "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b"};

static void ikp__put_num(ikp__out *o, double v) { ikp__put_f(o, v, 1); }

/* the time axis at y: ticks of 1, 2 or 5 x 10^k us */
static void ikp__svg_axis(ikp__out *o, double x0, double y, double w, int64_t span_ps)
{
    double us = (double)span_ps / 1e6, step = 1e-3, v;
    int k;
    if (!(us > 0)) us = 1e-3;
    while (us / step > 10) {
        if (us / (step * 2) <= 10) { step *= 2; break; }
        if (us / (step * 5) <= 10) { step *= 5; break; }
        step *= 10;
    }
    ikp__puts(o, "<line x1=\""); ikp__put_num(o, x0); ikp__puts(o, "\" y1=\""); ikp__put_num(o, y);
    ikp__puts(o, "\" x2=\""); ikp__put_num(o, x0 + w); ikp__puts(o, "\" y2=\""); ikp__put_num(o, y);
    ikp__puts(o, "\" stroke=\"#333\"/>\n");
    for (k = 0, v = 0; v <= us * 1.0000001 && k < 64; k++, v = k * step) {
        double x = x0 + v / us * w;
        ikp__puts(o, "<line x1=\""); ikp__put_num(o, x); ikp__puts(o, "\" y1=\""); ikp__put_num(o, y);
        ikp__puts(o, "\" x2=\""); ikp__put_num(o, x); ikp__puts(o, "\" y2=\""); ikp__put_num(o, y + 5);
        ikp__puts(o, "\" stroke=\"#333\"/><text x=\""); ikp__put_num(o, x); ikp__puts(o, "\" y=\"");
        ikp__put_num(o, y + 17); ikp__puts(o, "\" text-anchor=\"middle\">");
        ikp__put_f(o, v, step < 0.01 ? 3 : step < 0.1 ? 2 : step < 1 ? 1 : 0);
        ikp__puts(o, k ? "" : " us");
        ikp__puts(o, "</text>\n");
    }
}

static size_t ikp__event_index(const ikp_stats *st, uint32_t id)
{
    size_t lo = 0, hi = st->num_events;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (st->events[m].id < id) lo = m + 1; else hi = m;
    }
    return lo;
}

/* the heatmap's shade of a bin: 0 (nothing busy) .. 32 (heat_max) */
static int ikp__shade(const ikp_report *r, uint32_t row, uint32_t bin)
{
    double v = r->heat_max > 0 ? r->heat[(size_t)row * r->heat_bins + bin] / r->heat_max : 0;
    int q = (int)(v * 32 + 0.5);
    return v > 0 && q == 0 ? 1 : q > 32 ? 32 : q;
}

/* The picture's layout: the plot's left edge and width, each timeline
   row's top, the heatmap's row height. */
typedef struct ikp__svg {
    double L, W;               /* plot left edge and width */
    double *rowy;              /* top of each timeline row */
    double bottom;             /* below the last row */
    double hh;                 /* heatmap row height */
    uint32_t units;            /* SMs (or blocks) in the timeline */
    const char *unit;          /* "SM" or "block" */
} ikp__svg;

/* Row labels ("SM 3 producer") and their grey backgrounds. */
static void ikp__svg_rows(ikp__out *o, const ikp_report *r, const ikp__svg *s)
{
    uint32_t i, g;
    char t[160];
    for (i = 0; i < r->num_rows; i++) {
        const char *gname = NULL;
        ikp__puts(o, "<text x=\"");
        ikp__put_num(o, s->L - 6);
        ikp__puts(o, "\" y=\"");
        ikp__put_num(o, s->rowy[i] + 12);
        snprintf(t, sizeof t, "\" text-anchor=\"end\">%s %u ", s->unit, r->row_unit[i]);
        ikp__puts(o, t);
        { /* its group's name: the groups are in group order */
            uint32_t lo = 0, hi = r->num_groups;
            while (lo < hi) {
                g = lo + (hi - lo) / 2;
                if (r->groups[g].group < r->row_group[i]) lo = g + 1; else hi = g;
            }
            if (lo < r->num_groups && r->groups[lo].group == r->row_group[i]) gname = r->groups[lo].name;
        }
        if (gname) ikp__put_xml(o, gname);
        else { snprintf(t, sizeof t, "group %u", r->row_group[i]); ikp__puts(o, t); }
        ikp__puts(o, "</text>\n<rect x=\"");
        ikp__put_num(o, s->L);
        ikp__puts(o, "\" y=\"");
        ikp__put_num(o, s->rowy[i]);
        ikp__puts(o, "\" width=\"");
        ikp__put_num(o, s->W);
        ikp__puts(o, "\" height=\"16\" fill=\"#f3f3f3\"/>\n");
    }
}

/* The bars: outer first so inner ones paint over them, thinner the deeper
   they nest; one path per depth and colour. */
static void ikp__svg_bars(ikp__out *o, const ikp_report *r, const ikp__svg *s)
{
    static const double dh[IKP__DEPTHS] = {16, 10, 6, 3};
    const double rh = 16;
    uint32_t d, c;
    size_t k;
    for (d = 0; d < IKP__DEPTHS; d++)
        for (c = 0; c < 12; c++) {
            int any = 0;
            for (k = 0; k < r->num_rects; k++) {
                const ikp_report_rect *b = &r->rects[k];
                double w = b->x1 - b->x0;
                if (b->depth != d || b->row >= r->num_rows || ikp__event_index(r->stats, b->id) % 12 != c) continue;
                if (w < 0.6) w = 0.6;
                if (!any) { ikp__puts(o, "<path fill=\""); ikp__puts(o, ikp__palette[c]); ikp__puts(o, "\" d=\""); any = 1; }
                ikp__puts(o, "M");
                ikp__put_num(o, s->L + b->x0);
                ikp__puts(o, " ");
                ikp__put_num(o, s->rowy[b->row] + (rh - dh[d]) / 2);
                ikp__puts(o, "h");
                ikp__put_f(o, w, 2);
                ikp__puts(o, "v");
                ikp__put_num(o, dh[d]);
                ikp__puts(o, "h-");
                ikp__put_f(o, w, 2);
                ikp__puts(o, "z");
            }
            if (any) ikp__puts(o, "\"/>\n");
        }
}

/* The legend, five events a line, from y; returns the last line's y. */
static double ikp__svg_legend(ikp__out *o, const ikp_stats *st, const ikp__svg *s, double y)
{
    uint32_t i;
    for (i = 0; i < st->num_events; i++) {
        double lx = s->L + (double)(i % 5) * (s->W / 5);
        if (i && i % 5 == 0) y += 20;
        ikp__puts(o, "<rect x=\""); ikp__put_num(o, lx); ikp__puts(o, "\" y=\""); ikp__put_num(o, y - 10);
        ikp__puts(o, "\" width=\"12\" height=\"12\" fill=\""); ikp__puts(o, ikp__palette[i % 12]);
        ikp__puts(o, "\"/><text x=\""); ikp__put_num(o, lx + 17); ikp__puts(o, "\" y=\""); ikp__put_num(o, y);
        ikp__puts(o, "\">");
        ikp__put_xml(o, st->events[i].name);
        ikp__puts(o, "</text>\n");
    }
    return y;
}

/* The heatmap from y: title, row labels (every row when there is room),
   then 32 shades, one path each; a run of bins of one shade is one
   rectangle of it, and nothing busy is the background. */
static void ikp__svg_heatmap(ikp__out *o, const ikp_report *r, const ikp__svg *s, double y)
{
    const double hh = s->hh;
    uint32_t i, b, e2;
    char t[160];
    int q;
    snprintf(t, sizeof t, "<text x=\"10\" y=\"%d\" font-size=\"15\" font-weight=\"bold\">Busy lanes per %s over time "
             "(mean per bin%s; darkest = ", (int)(y - 10), s->unit,
             r->heat_units_per_row > 1 ? ", rows merge neighbours" : "");
    ikp__puts(o, t);
    ikp__put_f(o, r->heat_max, 2);
    ikp__puts(o, ")</text>\n");
    for (i = 0; i < r->heat_rows; i++) {
        if (hh >= 8 || i % (uint32_t)(10 / hh + 1) == 0) {
            ikp__puts(o, "<text x=\"");
            ikp__put_num(o, s->L - 6);
            ikp__puts(o, "\" y=\"");
            ikp__put_num(o, y + hh * i + (hh >= 8 ? hh - 1 : 8));
            snprintf(t, sizeof t, "\" text-anchor=\"end\" font-size=\"%d\">%s %u</text>\n", hh >= 8 ? 9 : 8,
                     s->unit, r->heat_unit[i]);
            ikp__puts(o, t);
        }
    }
    for (q = 1; q <= 32; q++) {
        int any = 0;
        for (i = 0; i < r->heat_rows; i++)
            for (b = 0; b < r->heat_bins; b = e2) {
                int sq = ikp__shade(r, i, b);
                double bw;
                for (e2 = b + 1; e2 < r->heat_bins && ikp__shade(r, i, e2) == sq; e2++) {}
                if (sq != q) continue;
                if (!any) {
                    snprintf(t, sizeof t, "<path fill=\"#%02x%02x%02x\" d=\"", 247 - q * (247 - 8) / 32,
                             251 - q * (251 - 48) / 32, 255 - q * (255 - 107) / 32);
                    ikp__puts(o, t);
                    any = 1;
                }
                bw = s->W * (e2 - b) / r->heat_bins + 0.05;
                ikp__puts(o, "M");
                ikp__put_num(o, s->L + s->W * b / r->heat_bins);
                ikp__puts(o, " ");
                ikp__put_num(o, y + hh * i);
                ikp__puts(o, "h");
                ikp__put_f(o, bw, 2);
                ikp__puts(o, "v");
                ikp__put_f(o, hh + 0.05, 2);
                ikp__puts(o, "h-");
                ikp__put_f(o, bw, 2);
                ikp__puts(o, "z");
            }
        if (any) ikp__puts(o, "\"/>\n");
    }
    ikp__svg_axis(o, s->L, y + hh * r->heat_rows + 4, s->W, r->stats->info.span_ps);
}

/* The layout first: each row's top (a gap between units), the heatmap's
   row height; then the timeline, its axis, the legend and the heatmap. */
IKP_DEF ikp_result ikp_report_write_svg(const ikp_report *r, ikp_write_fn fn, void *user, ikp_error *err)
{
    ikp__out o;
    char buf[8192], t[160];
    const double pitch = 18;
    double y = 46, ly, height;
    uint32_t i;
    ikp__svg s;
    if (!r || !fn || !r->stats) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    memset(&s, 0, sizeof s);
    s.L = 190;
    s.W = (double)r->plot_width;
    s.unit = r->row_by_sm ? "SM" : "block";
    s.rowy = (double *)r->allocator_.alloc(((size_t)r->num_rows + 1) * sizeof(double), r->allocator_.user);
    if (!s.rowy) return ikp__oom(err);
    for (i = 0; i < r->num_rows; i++) {
        if (i && r->row_unit[i] != r->row_unit[i - 1]) y += 6;
        if (!i || r->row_unit[i] != r->row_unit[i - 1]) s.units++;
        s.rowy[i] = y;
        y += pitch;
    }
    s.hh = r->heat_rows ? 360.0 / r->heat_rows : 0;
    if (s.hh > 10) s.hh = 10;
    if (s.hh < 2) s.hh = 2;
    height = y + 30 + 20 * ((r->stats->num_events + 4) / 5) + 40 + s.hh * r->heat_rows + 70;
    ikp__out_init(&o, fn, user, buf, sizeof buf);
    ikp__puts(&o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"");
    ikp__put_num(&o, s.L + s.W + 30);
    ikp__puts(&o, "\" height=\"");
    ikp__put_num(&o, height);
    ikp__puts(&o, "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    snprintf(t, sizeof t, "<text x=\"10\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Timeline of %u %s%s, one row per %s and group</text>\n",
             s.units, s.unit, s.units == 1 ? "" : "s", s.unit);
    ikp__puts(&o, t);
    ikp__svg_rows(&o, r, &s);
    ikp__svg_bars(&o, r, &s);
    r->allocator_.free(s.rowy, r->allocator_.user);
    y += 4;
    ikp__svg_axis(&o, s.L, y, s.W, r->stats->info.span_ps);
    ly = ikp__svg_legend(&o, r->stats, &s, y + 40);
    ikp__svg_heatmap(&o, r, &s, ly + 36);
    ikp__puts(&o, "</svg>\n");
    return ikp__out_end(&o, err, "picture");
}

#endif /* IKP_NO_REPORT */

/* >>capfile-read: capture files (.ikp) read: header, names, sections */
/* names section of a capture file: u32 length + bytes, repeated */
static ikp_result ikp__read_names(ikp_capture *cap, const unsigned char *p, uint64_t size,
                                  uint64_t base, uint32_t count, char ***dst, uint32_t *dn,
                                  uint64_t *used, ikp_error *err)
{
    uint32_t i;
    uint64_t off = *used;
    *dst = NULL;
    *dn = 0;
    if (!count) return IKP_OK;
    if (count > IKP_WIRE_MAX_EVENTS)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)base, -1,
                         "capture claims %u names (at most %u)", count, IKP_WIRE_MAX_EVENTS);
    *dst = (char **)ikp__alloc(&cap->alloc, count * sizeof(char *));
    if (!*dst) return ikp__oom(err);
    for (i = 0; i < count; i++) (*dst)[i] = NULL;
    *dn = count;
    for (i = 0; i < count; i++) {
        uint32_t len;
        if (size - off < 4)
            return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)(base + off), -1,
                             "capture names end inside the length of name %u", i);
        len = ikp__rd32(p + off);
        off += 4;
        if (len > size - off)
            return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)(base + off), -1,
                             "capture name %u claims %u bytes, %llu left", i, len,
                             (unsigned long long)(size - off));
        if (len > 255 || memchr(p + off, 0, len))
            return ikp__fail(err, IKP_ERR_BAD_NAMES, (int64_t)(base + off), -1,
                             "capture name %u: %s", i,
                             len > 255 ? "longer than 255 bytes" : "contains a NUL byte");
        if (len) {
            (*dst)[i] = ikp__strdup_n(&cap->alloc, (const char *)p + off, len);
            if (!(*dst)[i]) return ikp__oom(err);
        }
        off += len;
    }
    *used = off;
    return IKP_OK;
}

/* The sections after a capture file's buffer, from at to the end: each an
   8-byte name, a count, 4 zero bytes and count entries. Version 2 has the
   clock section only; version 3 any of clock, device (one entry) and peers,
   each at most once; version 4 also the SM clock samples. Found here (in
   the order of IKP__CLOCK, DEVICE, PEERS, SMCLK_MAGIC: where[j] their
   entries' offset, count[j] their number; 0 for a section not there) and
   checked against the file's size before any is read. */
static ikp_result ikp__find_sections(const unsigned char *p, uint64_t size, uint64_t at, uint32_t ver,
                                     uint64_t where[4], uint32_t count[4], ikp_error *err)
{
    static const char *const names[4] = {IKP__CLOCK_MAGIC, IKP__DEVICE_MAGIC, IKP__PEERS_MAGIC, IKP__SMCLK_MAGIC};
    static const uint32_t entry[4] = {IKP__CLOCK_ENTRY, IKP__DEVICE_ENTRY, IKP__PEERS_ENTRY, IKP__SMCLK_ENTRY};
    static const uint32_t most[4] = {IKP_MAX_CLOCK_SYNCS, 1, IKP_MAX_PEER_CLOCKS, IKP_MAX_SM_CLOCKS};
    static const char *const what[4] = {"clock", "device", "peers", "SM clock"};
    int seen[4] = {0, 0, 0, 0}, j;
    uint32_t k;
    if (ver == 2 && (size - at < IKP__SECTION_HEADER || memcmp(p + at, IKP__CLOCK_MAGIC, 8) != 0))
        return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)at, -1,
                         "capture file version 2 has no clock section after its buffer (%llu bytes there)",
                         (unsigned long long)(size - at));
    while (at < size) {
        uint32_t n;
        if (size - at < IKP__SECTION_HEADER)
            return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)at, -1,
                             "capture file: %llu bytes after the last section, a section header needs %u",
                             (unsigned long long)(size - at), IKP__SECTION_HEADER);
        for (j = 0; j < 4 && memcmp(p + at, names[j], 8) != 0; j++) {}
        if (j == 4 || (ver == 2 && j != 0) || (ver == 3 && j == 3)) {
            char t[9];
            for (k = 0; k < 8; k++) t[k] = p[at + k] >= 32 && p[at + k] < 127 ? (char)p[at + k] : '?';
            t[8] = 0;
            return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)at, -1,
                             "capture file version %u: unknown section \"%s\" after the buffer", ver, t);
        }
        if (seen[j])
            return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)at, -1, "capture file: a second %s section", what[j]);
        n = ikp__rd32(p + at + IKP__AT_SECTION_COUNT);
        if (n > most[j] || ikp__rd32(p + at + IKP__AT_SECTION_RESERVED) != 0)
            return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)(at + IKP__AT_SECTION_COUNT), -1,
                             "capture %s section claims %u entries (at most %u) and %u in its reserved word",
                             what[j], n, most[j], ikp__rd32(p + at + IKP__AT_SECTION_RESERVED));
        if ((uint64_t)n * entry[j] > size - at - IKP__SECTION_HEADER)
            return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)(at + IKP__AT_SECTION_COUNT), -1,
                             "capture %s section claims %u entries (%u bytes each), %llu bytes follow", what[j], n,
                             entry[j], (unsigned long long)(size - at - IKP__SECTION_HEADER));
        seen[j] = 1;
        count[j] = n;
        where[j] = at + IKP__SECTION_HEADER;
        at += IKP__SECTION_HEADER + (uint64_t)n * entry[j];
    }
    return IKP_OK;
}

/* the IKPDEVIC entry e, at file offset at */
static ikp_result ikp__read_device(ikp_capture *cap, const unsigned char *e, uint64_t at, ikp_error *err)
{
    ikp_device_id d;
    memcpy(d.uuid, e, 16);
    memcpy(d.host, e + IKP__AT_DEVICE_HOST, 64);
    d.ordinal = (int32_t)ikp__rd32(e + IKP__AT_DEVICE_ORDINAL);
    d.rank = (int32_t)ikp__rd32(e + IKP__AT_DEVICE_RANK);
    d.pci_domain = ikp__rd32(e + IKP__AT_DEVICE_PCI_DOMAIN);
    d.pci_bus = ikp__rd32(e + IKP__AT_DEVICE_PCI_BUS);
    d.pci_device = ikp__rd32(e + IKP__AT_DEVICE_PCI_DEVICE);
    d.reserved = 0;
    return ikp__set_device(cap, &d, (int64_t)at, err);
}

/* the n IKPPEERS entries at file offset at */
static ikp_result ikp__read_peers(ikp_capture *cap, const unsigned char *p, uint64_t at, uint32_t n, ikp_error *err)
{
    ikp_peer_clock *pc = (ikp_peer_clock *)ikp__alloc(&cap->alloc, (size_t)n * sizeof *pc);
    ikp_result r;
    uint32_t k;
    if (!pc) return ikp__oom(err);
    for (k = 0; k < n; k++) {
        const unsigned char *e = p + at + (uint64_t)k * IKP__PEERS_ENTRY;
        memcpy(pc[k].peer_uuid, e, 16);
        pc[k].gpu_ns = ikp__rd64(e + IKP__AT_PEER_GPU);
        pc[k].offset_ns = (int64_t)ikp__rd64(e + IKP__AT_PEER_OFFSET);
        pc[k].uncertainty_ns = ikp__rd32(e + IKP__AT_PEER_UNCERTAINTY);
        pc[k].round_trip_ns = ikp__rd32(e + IKP__AT_PEER_ROUND_TRIP);
    }
    r = ikp__set_peers(cap, pc, n, (int64_t)at, err);
    ikp__free(&cap->alloc, pc);
    return r;
}

/* the n IKPCLOCK entries at file offset at */
static ikp_result ikp__read_clock(ikp_capture *cap, const unsigned char *p, uint64_t at, uint32_t n, ikp_error *err)
{
    ikp_clock_sync *cs = (ikp_clock_sync *)ikp__alloc(&cap->alloc, (size_t)n * sizeof *cs);
    ikp_result r;
    uint32_t k;
    if (!cs) return ikp__oom(err);
    for (k = 0; k < n; k++) {
        const unsigned char *e = p + at + (uint64_t)k * IKP__CLOCK_ENTRY;
        cs[k].host_ns = (int64_t)ikp__rd64(e);
        cs[k].gpu_ns = ikp__rd64(e + IKP__AT_CLOCK_GPU);
        cs[k].uncertainty_ns = ikp__rd32(e + IKP__AT_CLOCK_UNCERTAINTY);
        cs[k].reserved = 0;
    }
    r = ikp__set_clock(cap, cs, n, (int64_t)at, err);
    ikp__free(&cap->alloc, cs);
    return r;
}

/* the n IKPSMCLK entries at file offset at (the capture keeps them) */
static ikp_result ikp__read_sm_clock(ikp_capture *cap, const unsigned char *p, uint64_t at, uint32_t n, ikp_error *err)
{
    ikp_sm_clock *sc = (ikp_sm_clock *)ikp__alloc(&cap->alloc, (size_t)n * sizeof *sc);
    uint32_t k;
    if (!sc) return ikp__oom(err);
    for (k = 0; k < n; k++) {
        const unsigned char *e = p + at + (uint64_t)k * IKP__SMCLK_ENTRY;
        sc[k].gpu_ns = ikp__rd64(e);
        sc[k].cycles = ikp__rd64(e + IKP__AT_SMCLK_CYCLES);
        sc[k].sm = ikp__rd32(e + IKP__AT_SMCLK_SM);
        sc[k].reserved = ikp__rd32(e + IKP__AT_SMCLK_RESERVED);
    }
    return ikp__adopt_sm_clock(cap, sc, n, (int64_t)at, err); /* the capture keeps sc */
}

/* the sections after a capture file's buffer (ikp__find_sections), read
   into cap: the device first, as peer measurements are checked against it */
static ikp_result ikp__read_sections(ikp_capture *cap, const unsigned char *p, uint64_t size, uint64_t at,
                                     uint32_t ver, ikp_error *err)
{
    uint64_t where[4] = {0, 0, 0, 0};
    uint32_t count[4] = {0, 0, 0, 0};
    ikp_result r = ikp__find_sections(p, size, at, ver, where, count, err);
    if (r == IKP_OK && count[1] == 1) r = ikp__read_device(cap, p + where[1], where[1], err);
    if (r == IKP_OK && count[2]) r = ikp__read_peers(cap, p, where[2], count[2], err);
    if (r == IKP_OK && count[0]) r = ikp__read_clock(cap, p, where[0], count[0], err);
    if (r == IKP_OK && count[3]) r = ikp__read_sm_clock(cap, p, where[3], count[3], err);
    return r;
}

/* the file's names (from[0..nf)) kept where the options' (*names, *n)
   name none: the options' win id by id, the file's name the ids past them
   or left unnamed (a name taken moves: from[i] becomes NULL). 0 when out
   of memory */
static int ikp__keep_names(const ikp_allocator *a, char ***names, uint32_t *n, char **from, uint32_t nf)
{
    uint32_t i;
    if (nf > *n) { /* room for the file's ids past the options' */
        char **grown = (char **)ikp__alloc(a, nf * sizeof(char *));
        if (!grown) return 0;
        for (i = 0; i < nf; i++) grown[i] = i < *n ? (*names)[i] : NULL;
        ikp__free(a, *names);
        *names = grown;
        *n = nf;
    }
    for (i = 0; i < nf; i++)
        if (!(*names)[i] && from[i]) { (*names)[i] = from[i]; from[i] = NULL; }
    return 1;
}

/* a capture file's names (event names, then group names: names_bytes
   bytes after the header), kept where the decode options name none */
static ikp_result ikp__capt_names(ikp_capture *cap, const unsigned char *p, uint64_t names_bytes, uint32_t nev,
                                  uint32_t ngr, ikp_error *err)
{
    char **en = NULL, **gn = NULL;
    uint32_t nen = 0, ngn = 0;
    uint64_t used = 0;
    ikp_result r = ikp__read_names(cap, p + IKP__CAPT_HEADER, names_bytes, IKP__CAPT_HEADER, nev, &en, &nen, &used, err);
    if (r == IKP_OK)
        r = ikp__read_names(cap, p + IKP__CAPT_HEADER, names_bytes, IKP__CAPT_HEADER, ngr, &gn, &ngn, &used, err);
    if (r == IKP_OK && used != names_bytes)
        r = ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)(IKP__CAPT_HEADER + used), -1,
                      "capture names section has %llu bytes left over", (unsigned long long)(names_bytes - used));
    if (r == IKP_OK && (!ikp__keep_names(&cap->alloc, &cap->event_names, &cap->num_event_names, en, nen) ||
                        !ikp__keep_names(&cap->alloc, &cap->group_names, &cap->num_group_names, gn, ngn)))
        r = ikp__oom(err);
    ikp__free_names(&cap->alloc, en, nen);
    ikp__free_names(&cap->alloc, gn, ngn);
    return r;
}

/* An .ikp capture file (FORMAT.md "Capture files"): its header, names and
   sections read into cap; *words_off and *nwords say where its buffer is. */
static ikp_result ikp__open_capt(ikp_capture *cap, const unsigned char *p, size_t size, uint64_t *words_off,
                                 uint64_t *nwords, ikp_error *err)
{
    uint32_t ver, fmt;
    uint64_t names_bytes;
    ikp_result r;
    if (size < IKP__CAPT_HEADER)
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)size, -1, "capture header needs %u bytes, file has %llu",
                         IKP__CAPT_HEADER, (unsigned long long)size);
    ver = ikp__rd32(p + IKP__AT_VERSION);
    fmt = ikp__rd32(p + IKP__AT_FORMAT);
    names_bytes = ikp__rd64(p + IKP__AT_NAMES_BYTES);
    *nwords = ikp__rd64(p + IKP__AT_WORDS);
    if (ver < 1 || ver > 4)
        return ikp__fail(err, IKP_ERR_BAD_VERSION, 8, -1, "capture file version %u, this library reads 1 to 4", ver);
    if (fmt >= (uint32_t)IKP_FORMAT_COUNT)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, 12, -1, "capture file format id %u unknown", fmt);
    if (names_bytes > size - IKP__CAPT_HEADER)
        return ikp__fail(err, IKP_ERR_TRUNCATED, 24, -1, "capture names claim %llu bytes, file has %llu after the header",
                         (unsigned long long)names_bytes, (unsigned long long)(size - IKP__CAPT_HEADER));
    r = ikp__capt_names(cap, p, names_bytes, ikp__rd32(p + IKP__AT_EVENTS), ikp__rd32(p + IKP__AT_GROUPS), err);
    if (r != IKP_OK) return r;
    *words_off = IKP__CAPT_HEADER + names_bytes;
    *words_off += (8 - *words_off % 8) % 8; /* the buffer is 8-byte aligned in the file */
    if (*words_off > size || *nwords > (size - *words_off) / 8)
        return ikp__fail(err, IKP_ERR_TRUNCATED, (int64_t)size, -1,
                         "capture claims %llu buffer words at offset %llu, file has %llu bytes",
                         (unsigned long long)*nwords, (unsigned long long)*words_off, (unsigned long long)size);
    if (ver >= 2) { /* sections after the buffer (version 2: the clock section only) */
        r = ikp__read_sections(cap, p, size, *words_off + *nwords * 8, ver, err);
        if (r != IKP_OK) return r;
    } else if ((size - *words_off) != *nwords * 8)
        return ikp__fail(err, IKP_ERR_BAD_HEADER, (int64_t)(*words_off + *nwords * 8), -1,
                         "capture file has %llu bytes after its buffer",
                         (unsigned long long)(size - *words_off - *nwords * 8));
    if (cap->format == IKP_FORMAT_AUTO) cap->format = (ikp_format)fmt;
    return IKP_OK;
}

/* >>capfile-write: capture files (.ikp) written */

static uint64_t ikp__names_bytes(const char *const *names, uint32_t n)
{
    uint64_t b = 0;
    uint32_t i;
    for (i = 0; i < n; i++) b += 4 + (names && names[i] ? strlen(names[i]) : 0);
    return b;
}

static int ikp__write_names(const char *const *names, uint32_t n, ikp_write_fn fn, void *user)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        unsigned char l[4];
        size_t len = names && names[i] ? strlen(names[i]) : 0;
        ikp__wr32(l, (uint32_t)len);
        if (fn(user, l, 4) || (len && fn(user, names[i], len))) return 1;
    }
    return 0;
}

/* a section's header: name, count, 4 zero bytes */
static int ikp__write_section(const char *name, uint32_t n, ikp_write_fn fn, void *user)
{
    unsigned char h[IKP__SECTION_HEADER];
    memset(h, 0, sizeof h);
    memcpy(h, name, 8);
    ikp__wr32(h + IKP__AT_SECTION_COUNT, n);
    return fn(user, h, sizeof h);
}

/* The file's header and names (FORMAT.md "Capture files"): version 1; 2
   with a clock section after the buffer; 3 when it names its device or
   holds peer measurements; 4 with SM clock samples. */
static int ikp__write_capture_header(const ikp_capture *cap, ikp_write_fn fn, void *user)
{
    static const unsigned char zeros[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const char *const *ev = (const char *const *)cap->event_names, *const *gr = (const char *const *)cap->group_names;
    const ikp_capture_info *in = &cap->info;
    unsigned char h[IKP__CAPT_HEADER];
    uint64_t nb = ikp__names_bytes(ev, cap->num_event_names) + ikp__names_bytes(gr, cap->num_group_names);
    uint32_t ver = in->sm_clocks ? 4 : in->device_known || in->peer_clocks ? 3 : in->clock_syncs ? 2 : 1;
    memset(h, 0, sizeof h);
    memcpy(h, IKP__CAPT_MAGIC, 8);
    ikp__wr32(h + IKP__AT_VERSION, ver);
    ikp__wr32(h + IKP__AT_FORMAT, (uint32_t)cap->format);
    ikp__wr32(h + IKP__AT_EVENTS, cap->num_event_names);
    ikp__wr32(h + IKP__AT_GROUPS, cap->num_group_names);
    ikp__wr64(h + IKP__AT_NAMES_BYTES, nb);
    ikp__wr64(h + IKP__AT_WORDS, (uint64_t)cap->num_words);
    return fn(user, h, sizeof h) || ikp__write_names(ev, cap->num_event_names, fn, user) ||
           ikp__write_names(gr, cap->num_group_names, fn, user) ||
           ((IKP__CAPT_HEADER + nb) % 8 && fn(user, zeros, (size_t)(8 - (IKP__CAPT_HEADER + nb) % 8)));
}

/* The buffer's words, little-endian, a chunk at a time. */
static int ikp__write_words(const uint64_t *w, size_t n, ikp_write_fn fn, void *user)
{
    unsigned char chunk[4096];
    size_t i, j;
    for (i = 0; i < n; i += sizeof chunk / 8) {
        size_t m = n - i < sizeof chunk / 8 ? n - i : sizeof chunk / 8;
        for (j = 0; j < m; j++) ikp__wr64(chunk + j * 8, w[i + j]);
        if (fn(user, chunk, m * 8)) return 1;
    }
    return 0;
}

static int ikp__write_clock(const ikp_clock_sync *c, uint32_t n, ikp_write_fn fn, void *user)
{
    unsigned char e[IKP__CLOCK_ENTRY];
    uint32_t k;
    if (ikp__write_section(IKP__CLOCK_MAGIC, n, fn, user)) return 1;
    for (k = 0; k < n; k++) {
        memset(e, 0, sizeof e);
        ikp__wr64(e, (uint64_t)c[k].host_ns);
        ikp__wr64(e + IKP__AT_CLOCK_GPU, c[k].gpu_ns);
        ikp__wr32(e + IKP__AT_CLOCK_UNCERTAINTY, c[k].uncertainty_ns);
        if (fn(user, e, sizeof e)) return 1;
    }
    return 0;
}

static int ikp__write_device(const ikp_device_id *d, ikp_write_fn fn, void *user)
{
    unsigned char e[IKP__DEVICE_ENTRY];
    memset(e, 0, sizeof e);
    memcpy(e, d->uuid, 16);
    memcpy(e + IKP__AT_DEVICE_HOST, d->host, 64);
    e[IKP__AT_DEVICE_HOST + 63] = 0;
    ikp__wr32(e + IKP__AT_DEVICE_ORDINAL, (uint32_t)d->ordinal);
    ikp__wr32(e + IKP__AT_DEVICE_RANK, (uint32_t)d->rank);
    ikp__wr32(e + IKP__AT_DEVICE_PCI_DOMAIN, d->pci_domain);
    ikp__wr32(e + IKP__AT_DEVICE_PCI_BUS, d->pci_bus);
    ikp__wr32(e + IKP__AT_DEVICE_PCI_DEVICE, d->pci_device);
    return ikp__write_section(IKP__DEVICE_MAGIC, 1, fn, user) || fn(user, e, sizeof e);
}

static int ikp__write_peers(const ikp_peer_clock *p, uint32_t n, ikp_write_fn fn, void *user)
{
    unsigned char e[IKP__PEERS_ENTRY];
    uint32_t k;
    if (ikp__write_section(IKP__PEERS_MAGIC, n, fn, user)) return 1;
    for (k = 0; k < n; k++) {
        memcpy(e, p[k].peer_uuid, 16);
        ikp__wr64(e + IKP__AT_PEER_GPU, p[k].gpu_ns);
        ikp__wr64(e + IKP__AT_PEER_OFFSET, (uint64_t)p[k].offset_ns);
        ikp__wr32(e + IKP__AT_PEER_UNCERTAINTY, p[k].uncertainty_ns);
        ikp__wr32(e + IKP__AT_PEER_ROUND_TRIP, p[k].round_trip_ns);
        if (fn(user, e, sizeof e)) return 1;
    }
    return 0;
}

static int ikp__write_sm_clock(const ikp_sm_clock *s, uint32_t n, ikp_write_fn fn, void *user)
{
    unsigned char chunk[IKP__SMCLK_ENTRY * 170];
    size_t i, j;
    if (ikp__write_section(IKP__SMCLK_MAGIC, n, fn, user)) return 1;
    for (i = 0; i < n; i += sizeof chunk / IKP__SMCLK_ENTRY) {
        size_t m = n - i < sizeof chunk / IKP__SMCLK_ENTRY ? n - i : sizeof chunk / IKP__SMCLK_ENTRY;
        for (j = 0; j < m; j++) {
            unsigned char *e = chunk + j * IKP__SMCLK_ENTRY;
            ikp__wr64(e, s[i + j].gpu_ns);
            ikp__wr64(e + IKP__AT_SMCLK_CYCLES, s[i + j].cycles);
            ikp__wr32(e + IKP__AT_SMCLK_SM, s[i + j].sm);
            ikp__wr32(e + IKP__AT_SMCLK_RESERVED, 0);
        }
        if (fn(user, chunk, m * IKP__SMCLK_ENTRY)) return 1;
    }
    return 0;
}

IKP_DEF ikp_result ikp_capture_write(const ikp_capture *cap, ikp_write_fn fn, void *user, ikp_error *err)
{
    const ikp_capture_info *in;
    if (!cap || !fn) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    in = &cap->info;
    if (ikp__write_capture_header(cap, fn, user))
        return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the capture header failed");
    if (ikp__write_words(cap->words, cap->num_words, fn, user))
        return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the capture buffer failed");
    if (in->clock_syncs && ikp__write_clock(cap->clock, in->clock_syncs, fn, user))
        return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the capture's clock failed");
    if (in->device_known && ikp__write_device(&cap->device, fn, user))
        return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the capture's device failed");
    if (in->peer_clocks && ikp__write_peers(cap->peers, in->peer_clocks, fn, user))
        return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the capture's peer clocks failed");
    if (in->sm_clocks && ikp__write_sm_clock(cap->sm_clock, in->sm_clocks, fn, user))
        return ikp__fail(err, IKP_ERR_WRITE, -1, -1, "writing the capture's SM clock samples failed");
    ikp__ok(err);
    return IKP_OK;
}

IKP_DEF ikp_result ikp_capture_write_file(const ikp_capture *cap, FILE *f, ikp_error *err)
{
    if (!f) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL file");
    return ikp_capture_write(cap, ikp_file_writer, f, err);
}

static ikp_result ikp__capture_body(void *ctx, ikp_write_fn fn, void *user, ikp_error *err)
{
    return ikp_capture_write((const ikp_capture *)ctx, fn, user, err);
}

IKP_DEF ikp_result ikp_capture_write_path(const ikp_capture *cap, const char *path, ikp_error *err)
{
    if (!cap || !path) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    return ikp__write_path(path, ikp__capture_body, (void *)(uintptr_t)cap, err);
}

/* >>names-impl: name lists parsed */
IKP_DEF void ikp_name_list_free(ikp_name_list *list)
{
    if (!list) return;
    ikp__free_names(&list->allocator_, list->names, list->count);
    list->names = NULL;
    list->count = 0;
}

IKP_DEF ikp_result ikp_name_list_parse(const char *text, size_t len, char separator,
                                       const ikp_allocator *alloc, ikp_name_list *out,
                                       ikp_error *err)
{
    size_t i, start = 0, n = 1, k = 0;
    if (!out || (!text && len)) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    memset(out, 0, sizeof *out);
    if (ikp__check_allocator(alloc, err) != IKP_OK) return IKP_ERR_INVALID_ARGUMENT;
    out->allocator_ = ikp__allocator(alloc);
    if (separator == '\n' && len && text[len - 1] == '\n') len--; /* final newline ends the list */
    for (i = 0; i < len; i++) {
        if (text[i] == 0)
            return ikp__fail(err, IKP_ERR_BAD_NAMES, (int64_t)i, -1, "name list: NUL byte at offset %llu", (unsigned long long)i);
        if (text[i] == separator) n++;
    }
    if (n > IKP_WIRE_MAX_EVENTS)
        return ikp__fail(err, IKP_ERR_BAD_NAMES, -1, -1, "name list: %llu names, at most %u",
                         (unsigned long long)n, IKP_WIRE_MAX_EVENTS);
    out->names = (char **)ikp__alloc(&out->allocator_, n * sizeof(char *));
    if (!out->names) return ikp__oom(err);
    for (i = 0; i < n; i++) out->names[i] = NULL;
    out->count = (uint32_t)n;
    for (i = 0; i <= len; i++) {
        if (i == len || text[i] == separator) {
            size_t l = i - start;
            if (separator == '\n' && l && text[i - 1] == '\r') l--;
            if (l > 255) {
                ikp_name_list_free(out);
                return ikp__fail(err, IKP_ERR_BAD_NAMES, (int64_t)start, -1,
                                 "name list: name %llu is %llu bytes long (at most 255)",
                                 (unsigned long long)k, (unsigned long long)l);
            }
            if (l) {
                out->names[k] = ikp__strdup_n(&out->allocator_, text + start, l);
                if (!out->names[k]) { ikp_name_list_free(out); return ikp__oom(err); }
            }
            k++;
            start = i + 1;
        }
    }
    ikp__ok(err);
    return IKP_OK;
}

static ikp_result ikp__read_file(const char *path, const ikp_allocator *a, unsigned char **data,
                                 size_t *size, ikp_error *err);
IKP_DEF ikp_result ikp_name_list_parse_path(const char *path, const ikp_allocator *alloc,
                                            ikp_name_list *out, ikp_error *err)
{
    ikp_allocator a = ikp__allocator(alloc);
    unsigned char *buf;
    size_t n;
    ikp_result r;
    if (!path || !out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    memset(out, 0, sizeof *out);
    if ((r = ikp__check_allocator(alloc, err)) != IKP_OK) return r;
    r = ikp__read_file(path, &a, &buf, &n, err);
    if (r != IKP_OK) return r;
    r = ikp_name_list_parse((const char *)buf, n, '\n', alloc, out, err);
    ikp__free(&a, buf);
    return r;
}

/* >>dump-impl: IKP buffer sizes and headers; the one-call dump */
IKP_DEF size_t ikp_buffer_words(uint32_t lanes, uint32_t capacity)
{
    uint64_t stride = ikp__lane_stride(capacity), n;
    if ((uint64_t)lanes > (UINT64_MAX - IKP_WIRE_HEADER_WORDS) / stride) return 0;
    n = IKP_WIRE_HEADER_WORDS + (uint64_t)lanes * stride;
    if (n > (uint64_t)((size_t)-1) / 8) return 0;
    return (size_t)n;
}

IKP_DEF ikp_result ikp_buffer_header(uint64_t *h, uint32_t lanes, uint32_t capacity, uint32_t clock_khz,
                                     ikp_error *err)
{
    uint32_t i;
    if (!h) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    if (lanes == 0 || !ikp_buffer_words(lanes, capacity))
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "%u lanes x %u records: %s", lanes, capacity,
                         lanes ? "the buffer's size overflows" : "a buffer needs at least one lane");
    ikp__ok(err);
    for (i = 0; i < IKP_WIRE_HEADER_WORDS; i++) h[i] = 0;
    h[0] = (uint64_t)IKP_WIRE_MAGIC | (uint64_t)IKP_WIRE_VERSION << 32 |
           (uint64_t)IKP_WIRE_HEADER_WORDS << 48 | (uint64_t)IKP_WIRE_LANE_WORDS << 56;
    h[1] = (uint64_t)lanes | (uint64_t)capacity << 32;
    h[2] = clock_khz;
    return IKP_OK;
}

IKP_DEF ikp_result ikp_dump_words(const uint64_t *words, size_t num_words, const ikp_dump_desc *desc,
                                  ikp_error *err)
{
    ikp_capture *cap = NULL;
    ikp_stats *st = NULL;
    ikp_result r;
    if (!desc) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL desc");
#ifdef IKP_NO_PERFETTO
    if (desc->trace_path && ikp_is_perfetto_path(desc->trace_path)) /* refused before anything is written */
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1,
                         "%s: this build leaves the Perfetto writer out (IKP_NO_PERFETTO)", desc->trace_path);
#endif
    r = ikp_capture_open(words, num_words, &desc->decode, &cap, err);
    if (r == IKP_OK && desc->capture_path) r = ikp_capture_write_path(cap, desc->capture_path, err);
    if (r == IKP_OK && desc->trace_path)
        r = ikp__trace_path(cap, &desc->trace,
#ifndef IKP_NO_PERFETTO
                            ikp_is_perfetto_path(desc->trace_path) ? ikp_write_perfetto :
#endif
                            ikp_write_chrome, desc->trace_path, err);
    if (r == IKP_OK && desc->summary) {
        r = ikp_stats_compute(cap, &st, err);
        if (r == IKP_OK) r = ikp_stats_write_text(st, ikp_file_writer, desc->summary, err);
    }
    ikp_stats_free(st);
    ikp_capture_free(cap);
    return r;
}

/* >>cuda-impl: CUDA helpers: buffers, clocks, SM clock samples */
#if IKP_HAS_CUDA
static ikp_result ikp__cuda_fail(ikp_error *err, cudaError_t e, const char *what)
{
    return ikp__fail(err, IKP_ERR_CUDA, -1, -1, "%s: %s", what, cudaGetErrorString(e));
}

IKP_DEF ikp_result ikp_cuda_device_id(int device, ikp_device_id *out, ikp_error *err)
{
    struct cudaDeviceProp prop;
    cudaError_t e;
    if (!out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    memset(out, 0, sizeof *out);
    out->ordinal = out->rank = -1;
    e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "cudaGetDeviceProperties");
    memcpy(out->uuid, prop.uuid.bytes, 16);
    out->ordinal = device;
    out->pci_domain = (uint32_t)prop.pciDomainID;
    out->pci_bus = (uint32_t)prop.pciBusID;
    out->pci_device = (uint32_t)prop.pciDeviceID;
#if defined(__unix__) || defined(__APPLE__)
    {
        struct utsname u;
        if (uname(&u) == 0) {
            size_t k = strlen(u.nodename);
            if (k >= sizeof out->host) k = sizeof out->host - 1; /* a longer name is cut */
            memcpy(out->host, u.nodename, k);
        }
    }
#endif
    ikp__ok(err);
    return IKP_OK;
}

#if IKP__KERNELS
#define IKP__PINGS 32       /* round trips per host reading */
#define IKP__PEER_PINGS 64  /* round trips per GPU-GPU measurement */
#define IKP__PING_WAIT_NS 20000000ll   /* the host waits this long for an answer */
#define IKP__PONG_WAIT_NS 100000000ull /* a kernel waits this long for a ping */
#define IKP__PING_QUIT (~0ull)
#define IKP__SAMPLE_ROUNDS 3072u /* grids of SM clock samples per download, at most */
#define IKP__GT_STEP_NS 32u /* %globaltimer's step */

static __device__ __forceinline__ unsigned long long ikp__gt(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

/* answers the host's pings: for s = 1..n, waits for flag == s, then
   writes its clock to reply[s]; leaves on IKP__PING_QUIT or when no ping
   comes for IKP__PONG_WAIT_NS */
static __global__ void ikp__pong(volatile unsigned long long *flag, volatile unsigned long long *reply, int n)
{
    int s;
    for (s = 1; s <= n; s++) {
        unsigned long long f, t, t0 = ikp__gt();
        do {
            f = *flag;
            t = ikp__gt();
            if (f == IKP__PING_QUIT || t - t0 > IKP__PONG_WAIT_NS) return;
        } while (f != (unsigned long long)s);
        reply[s] = t;
        __threadfence_system();
    }
}

/* A reset's header (FORMAT.md "Buffer header"), written after the buffer
   was zeroed: words 0-2 as given, word 6 the launch's number, counted in
   *count (the word after the buffer's, which no reset zeroes). A kernel,
   so that a CUDA graph can hold it and count its replays. */
static __global__ void ikp__write_header(unsigned long long *buf, unsigned long long h0, unsigned long long h1,
                                         unsigned long long h2, unsigned long long *count)
{
    unsigned long long n = *count + 1;
    *count = n;
    buf[0] = h0;
    buf[1] = h1;
    buf[2] = h2;
    buf[6] = n;
}

/* One sample of the clocks of the SM that runs the block: a globaltimer
   tick and the cycle at which it came, located to a few cycles as
   ikp_cuda.cuh's anchors locate theirs (there in bursts of six pairs,
   which hold fewer registers in the user's kernel). A poll of
   %globaltimer takes about as long as one tick, so the cycle read after
   a poll sees a tick lags it by up to a poll; here
   (clock64, globaltimer) pairs are read back to back in batches of
   IKP__SAMPLE_PAIRS until a tick falls between two pairs of one batch,
   and the sample is the tick with the cycle midway between them. None
   within IKP__SAMPLE_BATCHES batches, or the two pairs held more than
   IKP__SAMPLE_WIDTH cycles apart (a tool such as compute-sanitizer
   slowing the reads, or a busy SM): no sample. *count counts the samples,
   out[i] is sample i (the host copies them as they are). */
#define IKP__SAMPLE_PAIRS 8
#define IKP__SAMPLE_BATCHES 64
#define IKP__SAMPLE_WIDTH 32u
static __global__ void ikp__sample_sm(unsigned long long *count, ikp_sm_clock *out, unsigned cap)
{
    unsigned long long cc[IKP__SAMPLE_PAIRS], gg[IKP__SAMPLE_PAIRS], g = 0, c = 0, w = 0;
    unsigned sm, i;
    int b, k;
    if (threadIdx.x) return;
    for (b = 0; b < IKP__SAMPLE_BATCHES && w == 0; b++) {
#pragma unroll
        for (k = 0; k < IKP__SAMPLE_PAIRS; k++)
            asm volatile("mov.u64 %0, %%clock64;\n\tmov.u64 %1, %%globaltimer;" : "=l"(cc[k]), "=l"(gg[k])::"memory");
#pragma unroll
        for (k = 1; k < IKP__SAMPLE_PAIRS; k++)
            if (w == 0 && gg[k] != gg[k - 1]) {
                g = gg[k];
                w = cc[k] - cc[k - 1] + 1; /* + 1: never 0 once found */
                c = cc[k - 1] + (w - 1) / 2;
            }
    }
    if (w == 0 || w - 1 > IKP__SAMPLE_WIDTH) return;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    i = (unsigned)atomicAdd(count, 1ull);
    if (i >= cap) return;
    out[i].gpu_ns = g;
    out[i].cycles = c;
    out[i].sm = sm;
    out[i].reserved = 0;
}

/* A ping-pong of two GPUs through each other's memory. Role 0 stamps t0,
   writes s to the other's flag, waits for s in its own, stamps t3; role 1
   waits for s, stamps t1, answers. times[2s], times[2s + 1]: t0, t3 (role
   0) or t1 (role 1); times[0] = 1 if a wait timed out. */
static __global__ void ikp__pingpong(int role, volatile unsigned long long *mine, volatile unsigned long long *theirs,
                                     unsigned long long *times, int n)
{
    int s;
    for (s = 1; s <= n; s++) {
        unsigned long long t0 = ikp__gt(), t;
        if (role == 0) {
            *theirs = (unsigned long long)s;
            __threadfence_system();
        }
        do {
            t = ikp__gt();
            if (t - t0 > IKP__PONG_WAIT_NS) { times[0] = 1; return; }
        } while (*mine != (unsigned long long)s);
        t = ikp__gt();
        if (role == 1) {
            *theirs = (unsigned long long)s;
            __threadfence_system();
            times[2 * s] = t;
        } else {
            times[2 * s] = t0;
            times[2 * s + 1] = t;
        }
    }
}

#ifndef IKP_REALTIME_NS /* the host clock; a test may give its own (CONFIGURATION) */
#define IKP_REALTIME_NS() ikp__realtime_ns()
static int64_t ikp__realtime_ns(void)
{
    struct timespec ts;
#if defined(__unix__) || defined(__APPLE__)
    clock_gettime(CLOCK_REALTIME, &ts);
#else
    timespec_get(&ts, TIME_UTC);
#endif
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
#endif

/* One reading of the current device's clock through mapped host memory
   (IKP__PINGS + 1 words at host, device pointer dev). */
static ikp_result ikp__ping(uint64_t *host, uint64_t *dev, ikp_clock_sync *out, ikp_error *err)
{
    volatile uint64_t *h = host;
    cudaStream_t st;
    cudaError_t e;
    int s, answered = 1;
    int64_t best = INT64_MAX;
    for (s = 0; s <= IKP__PINGS; s++) h[s] = 0;
    e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "cudaStreamCreateWithFlags");
    /* flag in word 0 of the reply area's own page: reply[s] at host[s], s >= 1 */
    cudaGetLastError(); /* an earlier call's error is not the launch's */
    ikp__pong<<<1, 1, 0, st>>>((volatile unsigned long long *)dev, (volatile unsigned long long *)dev, IKP__PINGS);
    e = cudaGetLastError();
    for (s = 1; s <= IKP__PINGS && e == cudaSuccess && answered; s++) {
        int64_t h0 = IKP_REALTIME_NS(), h1;
        h[0] = (uint64_t)s;
        while (h[s] == 0 && (h1 = IKP_REALTIME_NS()) - h0 < IKP__PING_WAIT_NS) {}
        h1 = IKP_REALTIME_NS();
        if (h[s] == 0) { answered = 0; break; }
        if (h1 - h0 < best) {
            best = h1 - h0;
            out->host_ns = h0 + (h1 - h0) / 2;
            out->gpu_ns = h[s];
            out->uncertainty_ns = (uint32_t)((h1 - h0 + 1) / 2) + IKP__GT_STEP_NS;
            out->reserved = 0;
        }
    }
    h[0] = IKP__PING_QUIT;
    /* a kernel that has not started (the GPU full) leaves when it sees the
       quit flag: it is not waited for */
    if (e == cudaSuccess && answered) e = cudaStreamSynchronize(st);
    cudaStreamDestroy(st);
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "the clock reading kernel");
    if (!answered)
        return ikp__fail(err, IKP_ERR_CUDA, -1, -1, "the GPU did not answer a clock reading within %lld ms (busy?)",
                         IKP__PING_WAIT_NS / 1000000);
    ikp__ok(err);
    return IKP_OK;
}

IKP_DEF ikp_result ikp_cuda_clock_reading(ikp_clock_sync *out, ikp_error *err)
{
    uint64_t *host = NULL, *dev = NULL;
    ikp_result r;
    cudaError_t e;
    if (!out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    e = cudaHostAlloc((void **)&host, (IKP__PINGS + 1) * sizeof(uint64_t), cudaHostAllocMapped);
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "cudaHostAlloc");
    e = cudaHostGetDevicePointer((void **)&dev, host, 0);
    r = e == cudaSuccess ? ikp__ping(host, dev, out, err) : ikp__cuda_fail(err, e, "cudaHostGetDevicePointer");
    if (r != IKP_OK) cudaDeviceSynchronize(); /* a kernel that has not run yet must not find the memory gone */
    cudaFreeHost(host);
    return r;
}

/* peer over its memory; out from device's side */
static ikp_result ikp__peer_pingpong(int device, int peer, ikp_peer_clock *out, ikp_error *err)
{
    const int n = IKP__PEER_PINGS;
    const int dv[2] = {device, peer};
    unsigned long long *flag[2] = {NULL, NULL}, *times[2] = {NULL, NULL};
    uint64_t *t[2] = {NULL, NULL};
    cudaStream_t st[2] = {NULL, NULL};
    int enabled[2] = {0, 0}, k, s;
    cudaError_t e = cudaSuccess;
    ikp_result r = IKP_OK;
    int64_t best = INT64_MAX;
    for (k = 0; k < 2 && e == cudaSuccess; k++) {
        if ((e = cudaSetDevice(dv[k])) != cudaSuccess) break;
        e = cudaDeviceEnablePeerAccess(dv[1 - k], 0);
        if (e == cudaSuccess) enabled[k] = 1;
        else if (e == cudaErrorPeerAccessAlreadyEnabled) { cudaGetLastError(); e = cudaSuccess; }
        if (e == cudaSuccess) e = cudaMalloc((void **)&flag[k], 64);
        if (e == cudaSuccess) e = cudaMemset(flag[k], 0, 64);
        if (e == cudaSuccess) e = cudaMalloc((void **)&times[k], (size_t)(2 * n + 2) * 8);
        if (e == cudaSuccess) e = cudaMemset(times[k], 0, (size_t)(2 * n + 2) * 8);
        if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&st[k], cudaStreamNonBlocking);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        t[k] = (uint64_t *)IKP_MALLOC((size_t)(2 * n + 2) * 8);
        if (!t[k]) { r = ikp__oom(err); break; }
    }
    for (k = 1; k >= 0 && e == cudaSuccess && r == IKP_OK; k--) { /* the answering side first */
        if ((e = cudaSetDevice(dv[k])) != cudaSuccess) break;
        cudaGetLastError(); /* an earlier call's error is not the launch's */
        ikp__pingpong<<<1, 1, 0, st[k]>>>(k, flag[k], flag[1 - k], times[k], n);
        e = cudaGetLastError();
    }
    for (k = 0; k < 2 && e == cudaSuccess && r == IKP_OK; k++) {
        if ((e = cudaSetDevice(dv[k])) == cudaSuccess) e = cudaStreamSynchronize(st[k]);
        if (e == cudaSuccess) e = cudaMemcpy(t[k], times[k], (size_t)(2 * n + 2) * 8, cudaMemcpyDeviceToHost);
    }
    if (e != cudaSuccess) r = ikp__cuda_fail(err, e, "the GPU-GPU clock ping-pong");
    else if (r == IKP_OK && (t[0][0] || t[1][0]))
        r = ikp__fail(err, IKP_ERR_CUDA, -1, -1, "the GPU-GPU clock ping-pong timed out (a GPU busy?)");
    for (s = 1; r == IKP_OK && s <= n; s++) { /* peer - device = t1 - (t0 + t3) / 2, within (t3 - t0) / 2 */
        uint64_t t0 = t[0][2 * s], t3 = t[0][2 * s + 1], t1 = t[1][2 * s];
        if (t3 < t0 || (int64_t)(t3 - t0) >= best) continue;
        best = (int64_t)(t3 - t0);
        out->gpu_ns = t0 + (t3 - t0) / 2;
        out->offset_ns = (int64_t)(t1 - out->gpu_ns);
        out->uncertainty_ns = (uint32_t)((t3 - t0 + 1) / 2) + IKP__GT_STEP_NS;
        out->round_trip_ns = (uint32_t)(t3 - t0);
    }
    for (k = 0; k < 2; k++) { /* on its device; if that cannot be made current, freed from another */
        int here = cudaSetDevice(dv[k]) == cudaSuccess;
        if (st[k]) cudaStreamDestroy(st[k]);
        cudaFree(flag[k]);
        cudaFree(times[k]);
        if (enabled[k] && here) cudaDeviceDisablePeerAccess(dv[1 - k]);
        IKP_FREE(t[k]);
    }
    cudaGetLastError();
    return r;
}

IKP_DEF ikp_result ikp_cuda_peer_clock(int device, int peer, ikp_peer_clock *out, ikp_error *err)
{
    ikp_device_id pd;
    ikp_result r;
    int cur = 0, ab = 0, ba = 0;
    if (!out || device == peer)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "a peer clock needs two different devices");
    memset(out, 0, sizeof *out);
    if ((r = ikp_cuda_device_id(peer, &pd, err)) != IKP_OK) return r;
    memcpy(out->peer_uuid, pd.uuid, 16);
    if (cudaGetDevice(&cur) != cudaSuccess) cur = -1; /* then none to go back to */
    if (cudaDeviceCanAccessPeer(&ab, device, peer) != cudaSuccess) ab = 0;
    if (cudaDeviceCanAccessPeer(&ba, peer, device) != cudaSuccess) ba = 0;
    if (ab && ba) r = ikp__peer_pingpong(device, peer, out, err);
    else { /* through the host: both devices' readings */
        ikp_clock_sync a, b;
        cudaError_t e = cudaSetDevice(device);
        r = e == cudaSuccess ? ikp_cuda_clock_reading(&a, err) : ikp__cuda_fail(err, e, "cudaSetDevice");
        if (r == IKP_OK) {
            e = cudaSetDevice(peer);
            r = e == cudaSuccess ? ikp_cuda_clock_reading(&b, err) : ikp__cuda_fail(err, e, "cudaSetDevice");
        }
        if (r == IKP_OK) {
            out->gpu_ns = a.gpu_ns;
            out->offset_ns = ikp__clock_offset(&b) - ikp__clock_offset(&a);
            out->uncertainty_ns = a.uncertainty_ns + b.uncertainty_ns;
            out->round_trip_ns = 0;
        }
    }
    if (cur >= 0) cudaSetDevice(cur);
    cudaGetLastError();
    if (r == IKP_OK) ikp__ok(err);
    return r;
}
#else
#define IKP__NO_KERNELS_WHY (IKP__CUDA_OFF ? "this build has IKP_ENABLE=0" : "it needs ikp.h's implementation compiled by nvcc")
IKP_DEF ikp_result ikp_cuda_clock_reading(ikp_clock_sync *out, ikp_error *err)
{
    if (!out) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    return ikp__fail(err, IKP_ERR_NO_CUDA, -1, -1, "no clock reading: %s", IKP__NO_KERNELS_WHY);
}
IKP_DEF ikp_result ikp_cuda_peer_clock(int device, int peer, ikp_peer_clock *out, ikp_error *err)
{
    if (!out || device == peer)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "a peer clock needs two different devices");
    return ikp__fail(err, IKP_ERR_NO_CUDA, -1, -1, "no peer clock: %s", IKP__NO_KERNELS_WHY);
}
#endif

#if IKP__KERNELS
/* Makes buf's device current for the helpers' own launches and memory (a
   kernel cannot be launched into a stream of another device, and cudaMalloc
   takes the current device's memory), as when one thread drives several
   GPUs. Returns the device to go back to (ikp__leave_device), or -1 if
   buf's could not be made current. */
static int ikp__enter_device(const ikp_cuda_buffer *buf)
{
    int cur = 0;
    if (cudaGetDevice(&cur) != cudaSuccess) return -1;
    if (cur != buf->device_index && cudaSetDevice(buf->device_index) != cudaSuccess) return -1;
    return cur;
}

static void ikp__leave_device(const ikp_cuda_buffer *buf, int cur)
{
    if (cur >= 0 && cur != buf->device_index) cudaSetDevice(cur);
}
#endif

/* a reading for buf, on its device, into the next free slot of clock[] */
static void ikp__buffer_reading(ikp_cuda_buffer *buf)
{
#if IKP__KERNELS
    int cur = -1;
    uint64_t *dev = NULL;
    if (buf->mapped_ && buf->num_clock < 2 && (cur = ikp__enter_device(buf)) >= 0) {
        if (cudaHostGetDevicePointer((void **)&dev, buf->mapped_, 0) == cudaSuccess &&
            ikp__ping(buf->mapped_, dev, &buf->clock[buf->num_clock], NULL) == IKP_OK)
            buf->num_clock++;
        ikp__leave_device(buf, cur);
    }
    cudaGetLastError(); /* a reading that could not be taken leaves no error behind */
#else
    (void)buf;
#endif
}

#if IKP__KERNELS
/* The samples a download took, in the decoder's order, less any that
   contradict the one before them on their SM (a sampler block held up
   between its two reads, say), which would make the decoder refuse them
   all. Returns how many are kept. */
static uint32_t ikp__sm_clock_keep(ikp_sm_clock *s, uint32_t n)
{
    uint32_t i, k = 0;
    qsort(s, n, sizeof *s, ikp__cmp_sm_clock);
    for (i = 0; i < n; i++) {
        if (!ikp__sm_clock_plausible(&s[i])) continue;
        if (k && s[k - 1].sm == s[i].sm && !ikp__sm_clock_follows(&s[k - 1], &s[i])) continue;
        s[k++] = s[i];
    }
    return k;
}

/* Samples the SM clocks while stream has work (see the declaration of
   ikp_cuda_buffer_download), with buf's device current; then copies them
   to buf->sm_clock, less those that contradict the others
   (ikp__sm_clock_keep). */
static void ikp__sample_on_device(ikp_cuda_buffer *buf, cudaStream_t stream)
{
    cudaStream_t st = (cudaStream_t)buf->sample_stream_;
    const uint32_t cap = buf->sms_ * IKP__SAMPLE_ROUNDS;
    uint32_t rounds = 0;
    int64_t t0 = IKP_REALTIME_NS(), last = 0;
    unsigned long long n = 0;
    ikp_sm_clock *s;
    if (cudaMemsetAsync(buf->samples_, 0, 8, st) != cudaSuccess) { cudaGetLastError(); return; }
    while (cudaStreamQuery(stream) == cudaErrorNotReady) {
        int64_t now = IKP_REALTIME_NS(), gap = (now - t0) / 1024;
        if (gap < (int64_t)buf->sample_every_ns) gap = (int64_t)buf->sample_every_ns;
        if (rounds < IKP__SAMPLE_ROUNDS && (rounds == 0 || now - last >= gap)) {
            cudaGetLastError(); /* an earlier call's error is not the launch's */
            ikp__sample_sm<<<buf->sms_, 32, 0, st>>>((unsigned long long *)buf->samples_,
                                                      (ikp_sm_clock *)(buf->samples_ + 1), cap);
            if (cudaGetLastError() != cudaSuccess) break;
            last = now;
            rounds++;
        }
    }
    cudaGetLastError(); /* a failed query is the download's to report */
    if (!rounds || cudaStreamSynchronize(st) != cudaSuccess ||
        cudaMemcpy(&n, buf->samples_, 8, cudaMemcpyDeviceToHost) != cudaSuccess) { cudaGetLastError(); return; }
    if (n > cap) n = cap;
    if (!n) return;
    s = (ikp_sm_clock *)IKP_REALLOC(buf->sm_clock, (size_t)n * sizeof *s);
    if (!s) return;
    buf->sm_clock = s;
    if (cudaMemcpy(s, buf->samples_ + 1, (size_t)n * sizeof *s, cudaMemcpyDeviceToHost) == cudaSuccess)
        buf->num_sm_clock = ikp__sm_clock_keep(s, (uint32_t)n);
    else cudaGetLastError();
}
#endif

static void ikp__sample_while_running(ikp_cuda_buffer *buf, cudaStream_t stream)
{
#if IKP__KERNELS
    int cur = -1;
    if (!buf->sample_every_ns || !buf->samples_ || !buf->sample_stream_) return;
    if ((cur = ikp__enter_device(buf)) >= 0) {
        ikp__sample_on_device(buf, stream);
        ikp__leave_device(buf, cur);
    }
    cudaGetLastError();
#else
    (void)buf; (void)stream;
#endif
}

/* The samples' device memory, taken before the first launch that samples
   (cudaMalloc may wait for the device, so not while the kernel runs); none
   while sample_every_ns is 0. Without it the download takes no samples. */
static void ikp__sample_memory(ikp_cuda_buffer *buf)
{
#if IKP__KERNELS
    int cur = -1;
    if (!buf->sample_every_ns || buf->samples_ || !buf->sample_stream_ || !buf->sms_) return;
    if ((cur = ikp__enter_device(buf)) >= 0) { /* the sampler's device */
        if (cudaMalloc((void **)&buf->samples_, 8 + (size_t)buf->sms_ * IKP__SAMPLE_ROUNDS * sizeof(ikp_sm_clock)) !=
            cudaSuccess)
            buf->samples_ = NULL;
        ikp__leave_device(buf, cur);
    }
    cudaGetLastError();
#else
    (void)buf;
#endif
}

IKP_DEF ikp_result ikp_cuda_buffer_create(ikp_cuda_buffer *buf, uint32_t lanes, uint32_t capacity,
                                          ikp_error *err)
{
    cudaError_t e;
    int dev = 0, khz = 0;
    size_t n = ikp_buffer_words(lanes, capacity);
    if (!buf || lanes == 0 || n == 0)
        return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "bad buffer size %u lanes x %u records", lanes, capacity);
    memset(buf, 0, sizeof *buf);
    if (IKP__CUDA_OFF) { /* IKP_ENABLE=0: nothing to record into */
        buf->lanes = lanes;
        buf->capacity = capacity;
        return IKP_OK;
    }
    e = cudaGetDevice(&dev); /* the buffer's device: the reset's kernel runs there */
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "cudaGetDevice");
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) != cudaSuccess) khz = 0;
    e = cudaMalloc((void **)&buf->device, (n + 1) * sizeof(uint64_t)); /* and the resets' count */
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "cudaMalloc");
    e = cudaMemset(buf->device + n, 0, sizeof(uint64_t));
    if (e != cudaSuccess) {
        cudaFree(buf->device);
        buf->device = NULL;
        return ikp__cuda_fail(err, e, "cudaMemset");
    }
    buf->num_words = n;
    buf->lanes = lanes;
    buf->capacity = capacity;
    buf->clock_khz = khz > 0 ? (uint32_t)khz : 0;
    buf->device_index = dev;
    if (ikp_cuda_device_id(dev, &buf->gpu, NULL) != IKP_OK) memset(&buf->gpu, 0, sizeof buf->gpu);
#if IKP__KERNELS
    if (cudaHostAlloc((void **)&buf->mapped_, (IKP__PINGS + 1) * sizeof(uint64_t), cudaHostAllocMapped) != cudaSuccess) {
        buf->mapped_ = NULL; /* no readings */
        cudaGetLastError();
    }
    { /* SM clock samples: a stream of the lowest priority (else none); their
         memory is taken by the first reset that samples (ikp__sample_memory) */
        int sms = 0, least = 0, greatest = 0;
        cudaStream_t st = NULL;
        buf->sample_every_ns = IKP_SM_CLOCK_EVERY_NS;
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess && sms > 0 &&
            cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess &&
            cudaStreamCreateWithPriority(&st, cudaStreamNonBlocking, least) == cudaSuccess) {
            struct cudaFuncAttributes fa;
            buf->sample_stream_ = (void *)st;
            buf->sms_ = (uint32_t)sms;
            /* loaded now: loaded lazily at its first launch, while the kernel runs, it may wait for that */
            cudaFuncGetAttributes(&fa, ikp__sample_sm);
            cudaFuncGetAttributes(&fa, ikp__write_header); /* and not first inside a graph capture */
        }
        cudaGetLastError();
    }
#endif
    return IKP_OK;
}

/* 1 if stream is capturing a CUDA graph (0 if not); -1 with err set if
   that cannot be told, or its capture was invalidated already */
static int ikp__capturing(cudaStream_t stream, const char *what, ikp_error *err)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(stream, &cs);
    if (e != cudaSuccess) {
        ikp__cuda_fail(err, e, "cudaStreamIsCapturing");
        return -1;
    }
    if (cs == cudaStreamCaptureStatusInvalidated) {
        ikp__fail(err, IKP_ERR_CUDA, -1, -1, "%s: the stream's graph capture was invalidated already (by an "
                  "earlier call), so nothing was added to it", what);
        return -1;
    }
    return cs == cudaStreamCaptureStatusActive;
}

IKP_DEF ikp_result ikp_cuda_buffer_reset(ikp_cuda_buffer *buf, cudaStream_t stream, ikp_error *err)
{
    uint64_t h[IKP_WIRE_HEADER_WORDS];
    cudaError_t e;
    ikp_result r;
    int capturing;
    if (buf && IKP__CUDA_OFF) return IKP_OK; /* IKP_ENABLE=0 */
    if (!buf || !buf->device) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL buffer");
    if ((r = ikp_buffer_header(h, buf->lanes, buf->capacity, buf->clock_khz, err)) != IKP_OK) return r;
    if ((capturing = ikp__capturing(stream, "ikp_cuda_buffer_reset", err)) < 0) return IKP_ERR_CUDA;
    if (capturing && !IKP__KERNELS) /* refused before anything is captured */
        return ikp__fail(err, IKP_ERR_CUDA, -1, -1, "ikp_cuda_buffer_reset: the stream is capturing a CUDA graph, "
                         "and a reset captured there writes its header with a kernel of ikp.h's, which this build "
                         "lacks: compile the file that defines IKP_IMPLEMENTATION with nvcc, or reset outside the "
                         "capture before every launch of the graph");
#if IKP__KERNELS
    { /* the header, and the launch's number counted on the device; the device
         made current first, so that a failure adds nothing to a capture */
        int cur = ikp__enter_device(buf);
        if (cur < 0) return ikp__cuda_fail(err, cudaGetLastError(), "making the buffer's device current");
        e = cudaMemsetAsync(buf->device, 0, buf->num_words * sizeof(uint64_t), stream);
        if (e == cudaSuccess) {
            cudaGetLastError(); /* an earlier call's error is not the launch's */
            ikp__write_header<<<1, 1, 0, stream>>>((unsigned long long *)buf->device, h[0], h[1], h[2],
                                                   (unsigned long long *)buf->device + buf->num_words);
            e = cudaGetLastError();
            if (e != cudaSuccess) ikp__cuda_fail(err, e, "the header's kernel launch");
        } else ikp__cuda_fail(err, e, "cudaMemsetAsync");
        ikp__leave_device(buf, cur);
        if (e != cudaSuccess) return IKP_ERR_CUDA;
    }
#else
    e = cudaMemsetAsync(buf->device, 0, buf->num_words * sizeof(uint64_t), stream);
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "cudaMemsetAsync");
    h[6] = ++buf->resets_;
    /* pageable source: staged before return, so h may go out of scope */
    e = cudaMemcpyAsync(buf->device, h, sizeof h, cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "cudaMemcpyAsync");
#endif
    buf->num_clock = 0;
    buf->num_sm_clock = 0;
    if (capturing) {
        /* the samples' memory all the same (cudaMalloc is not captured; the
           capture's mode would refuse it), but no reading: its kernel
           cannot run inside a capture */
        enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
        if (cudaThreadExchangeStreamCaptureMode(&m) == cudaSuccess) {
            ikp__sample_memory(buf);
            cudaThreadExchangeStreamCaptureMode(&m);
        }
        return IKP_OK;
    }
    ikp__sample_memory(buf);
    ikp__buffer_reading(buf);
    return IKP_OK;
}

IKP_DEF ikp_result ikp_cuda_buffer_download(ikp_cuda_buffer *buf, cudaStream_t stream,
                                            uint64_t *host, ikp_error *err)
{
    cudaError_t e;
    if (buf && host && IKP__CUDA_OFF) return IKP_OK; /* IKP_ENABLE=0: num_words is 0 */
    if (!buf || !buf->device || !host) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    switch (ikp__capturing(stream, "ikp_cuda_buffer_download", err)) {
    case 0: break;
    case 1:
        return ikp__fail(err, IKP_ERR_CUDA, -1, -1, "ikp_cuda_buffer_download: the stream is capturing a CUDA graph, "
                         "and a capture cannot wait for its own work: download after cudaStreamEndCapture and a "
                         "launch of the graph (nothing was added to the capture)");
    default: return IKP_ERR_CUDA;
    }
    buf->num_sm_clock = 0;
    ikp__sample_while_running(buf, stream);
    e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "kernel or stream failed");
    e = cudaMemcpy(host, buf->device, buf->num_words * sizeof(uint64_t), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return ikp__cuda_fail(err, e, "cudaMemcpy");
    if (buf->num_clock == 2) { /* downloads without a reset between (graph replays): the last two */
        buf->clock[0] = buf->clock[1];
        buf->num_clock = 1;
    }
    ikp__buffer_reading(buf);
    return IKP_OK;
}

IKP_DEF void ikp_cuda_buffer_destroy(ikp_cuda_buffer *buf)
{
    if (!buf) return;
    if (buf->device) cudaFree(buf->device);
    if (buf->mapped_) { /* after any reading kernel still queued (one that found the GPU full) */
        int cur = 0;
        if (cudaGetDevice(&cur) == cudaSuccess && cudaSetDevice(buf->device_index) == cudaSuccess) {
            cudaDeviceSynchronize();
            cudaSetDevice(cur);
        }
        cudaFreeHost(buf->mapped_);
    }
    if (buf->samples_) cudaFree(buf->samples_); /* after the samples' stream: cudaFree waits for the device */
    if (buf->sample_stream_) cudaStreamDestroy((cudaStream_t)buf->sample_stream_);
    IKP_FREE(buf->sm_clock);
    memset(buf, 0, sizeof *buf);
}

IKP_DEF ikp_result ikp_cuda_dump(ikp_cuda_buffer *buf, cudaStream_t stream,
                                 const ikp_dump_desc *desc, ikp_error *err)
{
    ikp_allocator a;
    ikp_dump_desc d;
    uint64_t *host;
    ikp_result r;
    if (!buf || !desc) return ikp__fail(err, IKP_ERR_INVALID_ARGUMENT, -1, -1, "NULL argument");
    if (IKP__CUDA_OFF) { /* IKP_ENABLE=0: no file, and a line saying why */
        if (desc->summary) fputs("IKP: built with IKP_ENABLE=0: nothing was recorded, no trace or capture written\n",
                                 desc->summary);
        ikp__ok(err);
        return IKP_OK;
    }
    if ((r = ikp__check_allocator(&desc->decode.allocator, err)) != IKP_OK) return r;
    a = ikp__allocator(&desc->decode.allocator);
    host = (uint64_t *)ikp__alloc(&a, buf->num_words * sizeof(uint64_t));
    if (!host) return ikp__oom(err);
    r = ikp_cuda_buffer_download(buf, stream, host, err);
    d = *desc; /* the buffer's device and readings, unless the caller gives its own */
    if (!d.decode.device && !ikp__uuid_zero(buf->gpu.uuid)) d.decode.device = &buf->gpu;
    if (!d.decode.num_clock && buf->num_clock) { d.decode.clock = buf->clock; d.decode.num_clock = buf->num_clock; }
    if (!d.decode.num_sm_clock && buf->num_sm_clock) {
        d.decode.sm_clock = buf->sm_clock;
        d.decode.num_sm_clock = buf->num_sm_clock;
    }
    if (r == IKP_OK) r = ikp_dump_words(host, buf->num_words, &d, err);
    ikp__free(&a, host);
    return r;
}
#endif /* IKP_HAS_CUDA */

#ifdef __cplusplus
}
#endif
#endif /* IKP_IMPLEMENTATION_INCLUDED */
#endif /* IKP_IMPLEMENTATION */

/*
MIT License

Copyright (c) 2026 The IKP authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
*/
