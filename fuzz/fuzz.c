/* libFuzzer harnesses for every entry point of ikp.h that reads outside data.
   Built once per target with -DFUZZ_TARGET=n (see Makefile `fuzz`):
     1 ikp        IKP buffer decoder (forced format), then JSON + statistics
     2 tirx       TIRx decoder (forced), then JSON + statistics
     3 flashinfer flashinfer decoder (forced), then JSON + statistics
     4 capture    .ikp capture / bare buffer reader (auto-detect), then JSON + statistics
     5 names      name-list parser (comma and newline lists)
     6 e2e        auto-detect + every writer, --by block and --by sm
     7 apinames   event and group names given through ikp_decode_options (any
                  bytes, any length: NUL-separated in the input), then every writer
     8 tritondist Triton-distributed decoder (forced; 1 ns or 10 ns ticks by the
                  first byte), then JSON + statistics
     9 nuggets    transformer_nuggets legacy decoder (forced); the first byte
                  gives --units (0: inferred), the words follow
    10 nuggetscompact  the same for the compact layout
   Every call must return a result code; ASan/UBSan/LSan catch the rest. */
#define IKP_IMPLEMENTATION
#define IKP_NO_CUDA
#include "../ikp.h"
#include <stdlib.h>
#include <string.h>

static int sink(void *u, const void *d, size_t n)
{
    size_t *total = (size_t *)u;
    const unsigned char *p = (const unsigned char *)d;
    if (n) *total += p[0] + p[n - 1]; /* touch the output */
    return 0;
}

static void use(ikp_capture *cap, ikp_group_by by)
{
    size_t total = 0;
    ikp_stats *st = NULL;
    ikp_chrome_options o;
    o.by = by;
    ikp_write_chrome(cap, &o, sink, &total, NULL);
    if (ikp_stats_compute(cap, &st, NULL) == IKP_OK) {
        ikp_stats_write_text(st, sink, &total);
        ikp_stats_write_json(st, sink, &total);
        ikp_info_write_text(st, sink, &total);
        ikp_stats_free(st);
    }
}

static void words_opt(const uint8_t *data, size_t size, ikp_format f, uint32_t units, uint32_t tick_ps)
{
    size_t n = size / 8;
    uint64_t *w = (uint64_t *)malloc(n ? n * 8 : 8);
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    const char *names[3] = {"a \"b\"", "\x01", "\xff"};
    if (!w) return;
    memcpy(w, data, n * 8);
    memset(&o, 0, sizeof o);
    o.format = f;
    o.num_units = units;
    o.timer_unit_ps = tick_ps;
    o.event_names = names;
    o.num_event_names = 3;
    if (ikp_capture_open(w, n, &o, &cap, NULL) == IKP_OK) {
        use(cap, IKP_BY_BLOCK);
        ikp_capture_free(cap);
    }
    free(w);
}

static void words(const uint8_t *data, size_t size, ikp_format f) { words_opt(data, size, f, 0, 0); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if FUZZ_TARGET == 1
    words(data, size, IKP_FORMAT_IKP);
#elif FUZZ_TARGET == 8
    if (size >= 8) words_opt(data + 8, size - 8, IKP_FORMAT_TRITON_DIST, 0, (data[0] & 1) ? 10000 : 0);
#elif FUZZ_TARGET == 9 || FUZZ_TARGET == 10
    if (size >= 8)
        words_opt(data + 8, size - 8, FUZZ_TARGET == 9 ? IKP_FORMAT_NUGGETS : IKP_FORMAT_NUGGETS_COMPACT, data[0] % 16, 0);
#elif FUZZ_TARGET == 2
    words(data, size, IKP_FORMAT_TIRX);
#elif FUZZ_TARGET == 3
    words(data, size, IKP_FORMAT_FLASHINFER);
#elif FUZZ_TARGET == 4
    ikp_capture *cap = NULL;
    if (ikp_capture_open_file_data(data, size, NULL, &cap, NULL) == IKP_OK) {
        use(cap, IKP_BY_BLOCK);
        ikp_capture_free(cap);
    }
#elif FUZZ_TARGET == 5
    ikp_name_list l;
    if (ikp_name_list_parse((const char *)data, size, ',', NULL, &l, NULL) == IKP_OK) ikp_name_list_free(&l);
    if (ikp_name_list_parse((const char *)data, size, '\n', NULL, &l, NULL) == IKP_OK) {
        ikp_capture *cap = NULL;
        ikp_decode_options o;
        uint64_t w[8 + 9 + 2];
        memset(&o, 0, sizeof o);
        memset(w, 0, sizeof w);
        ikp_buffer_header(w, 1, 2, 0);
        w[8] = IKP_WIRE_LANE_MAGIC;
        w[8 + 1] = 1ull << 48;
        w[16] = (5ull << 32) | IKP_WIRE_KIND_BEGIN | (1u << 2);
        w[17] = (9ull << 32) | IKP_WIRE_KIND_END | (1u << 2);
        o.event_names = (const char *const *)l.names;
        o.num_event_names = l.count;
        o.group_names = (const char *const *)l.names;
        o.num_group_names = l.count;
        if (ikp_capture_open(w, 19, &o, &cap, NULL) == IKP_OK) {
            use(cap, IKP_BY_BLOCK);
            ikp_capture_free(cap);
        }
        ikp_name_list_free(&l);
    }
#elif FUZZ_TARGET == 7
    /* names split at NUL bytes; every name an event name and a group name
       of a small IKP buffer (2 groups, events 0..3 on both lanes) */
    const char **names = (const char **)malloc((size + 1) * sizeof(char *));
    char *copy = (char *)malloc(size + 1);
    uint32_t n = 0;
    size_t i, start = 0;
    ikp_decode_options o;
    ikp_capture *cap = NULL;
    uint64_t w[8 + 2 * (9 + 8)];
    if (names && copy) {
        int lane, k;
        memcpy(copy, data, size);
        copy[size] = 0;
        for (i = 0; i <= size; i++)
            if (i == size || copy[i] == 0) { names[n++] = copy + start; start = i + 1; }
        memset(w, 0, sizeof w);
        ikp_buffer_header(w, 2, 8, 0);
        for (lane = 0; lane < 2; lane++) {
            uint64_t *h = w + 8 + lane * 17;
            h[0] = IKP_WIRE_LANE_MAGIC;
            h[1] = (uint64_t)lane << 32 | 2ull << 48;
            h[3] = 100;
            for (k = 0; k < 8; k++)
                h[8 + k] = (uint64_t)(200 + 10 * k) << 32 | (uint32_t)(k / 2 + lane) << 2 |
                           (k % 2 ? IKP_WIRE_KIND_END : IKP_WIRE_KIND_BEGIN);
        }
        memset(&o, 0, sizeof o);
        o.event_names = names;
        o.num_event_names = n;
        o.group_names = names;
        o.num_group_names = n;
        if (ikp_capture_open(w, sizeof w / 8, &o, &cap, NULL) == IKP_OK) {
            use(cap, IKP_BY_BLOCK);
            ikp_capture_free(cap);
        }
    }
    free(names);
    free(copy);
#else
    ikp_capture *cap = NULL;
    if (ikp_capture_open_file_data(data, size, NULL, &cap, NULL) == IKP_OK) {
        use(cap, IKP_BY_BLOCK);
        use(cap, IKP_BY_SM);
        ikp_capture_free(cap);
    }
#endif
    return 0;
}
