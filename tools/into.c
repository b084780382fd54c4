/* ikp trace --into: a torch.profiler (Kineto) Chrome trace with a capture
   laid in. Only what is needed is read from it: the top-level
   "baseTimeNanoseconds" (its ts are us after that many ns of
   CLOCK_REALTIME), where its top-level "traceEvents" array ends, and the
   kernel slices in it (the fit, below); the rest is copied as it is. */
#include "into.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *json_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}
/* why the last json_skip failed, and where */
static const char *json_why = "";
static const char *json_at;
static const char *json_fail(const char *why, const char *at)
{
    json_why = why;
    json_at = at;
    return NULL;
}
static int json_digit(const char *p, const char *e) { return p < e && *p >= '0' && *p <= '9'; }
/* past the string at p's '"' (RFC 8259: no raw control byte, known escapes) */
static const char *json_str(const char *p, const char *e)
{
    for (p++; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return json_fail("a raw control byte inside a string", p);
        if (c != '\\') continue;
        if (++p >= e) break;
        if (*p == 'u') {
            int k;
            for (k = 1; k <= 4; k++)
                if (p + k >= e || !strchr("0123456789abcdefABCDEF", p[k]) || !p[k]) return json_fail("a bad \\u escape", p);
            p += 4;
        } else if (!*p || !strchr("\"\\/bfnrt", *p))
            return json_fail("an unknown escape in a string", p);
    }
    return json_fail("a string that does not end", e);
}
/* past the number or literal at p */
static const char *json_scalar(const char *p, const char *e)
{
    static const char *const lit[] = {"true", "false", "null"};
    const char *q = p;
    size_t k;
    for (k = 0; k < 3; k++)
        if ((size_t)(e - p) >= strlen(lit[k]) && !memcmp(p, lit[k], strlen(lit[k]))) return p + strlen(lit[k]);
    if (q < e && *q == '-') q++;
    if (q < e && *q == '0') q++;
    else if (json_digit(q, e)) while (json_digit(q, e)) q++;
    else return json_fail("a value that is not JSON", p);
    if (q < e && *q == '.') {
        if (!json_digit(++q, e)) return json_fail("a number with no digit after '.'", q);
        while (json_digit(q, e)) q++;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        if (++q < e && (*q == '+' || *q == '-')) q++;
        if (!json_digit(q, e)) return json_fail("a number with no digit in its exponent", q);
        while (json_digit(q, e)) q++;
    }
    return q;
}
#define JSON_MAX_DEPTH 4096
/* past the JSON value at p, checked as RFC 8259 says (NULL if it is not
   one, or nests deeper than JSON_MAX_DEPTH: json_why and json_at say why) */
static const char *json_skip(const char *p, const char *e)
{
    char stack[JSON_MAX_DEPTH];
    int depth = 0, key = 0; /* key: an object member's key comes next */
    for (;;) {
        p = json_ws(p, e);
        if (p >= e) return json_fail("it ends inside a value", e);
        if (key && *p != '"') return json_fail("an object member without a string key", p);
        if (*p == '"') {
            if (!(p = json_str(p, e))) return NULL;
        } else if (*p == '{' || *p == '[') {
            if (depth == JSON_MAX_DEPTH) return json_fail("values nested deeper than 4096", p);
            stack[depth++] = *p == '{' ? '}' : ']';
            p = json_ws(p + 1, e);
            if (p < e && *p == stack[depth - 1]) { depth--; p++; }
            else { key = stack[depth - 1] == '}'; continue; } /* its first member or element */
        } else if (!(p = json_scalar(p, e))) return NULL;
        for (;;) { /* after a value or a key: the next one, or closes */
            p = json_ws(p, e);
            if (!depth) return p;
            if (key) {
                if (p < e && *p == ':') { p++; key = 0; break; }
                return json_fail("an object key without ':'", p);
            }
            if (p < e && *p == ',') { p++; key = stack[depth - 1] == '}'; break; }
            if (p < e && *p == stack[depth - 1]) { depth--; p++; continue; }
            return json_fail("a value followed by neither ',' nor the bracket that closes it", p);
        }
    }
}
/* one member of a JSON object, at its key's '"': the key's bytes (within
   the quotes) in [*k, *k + *kl), its value's in [*v, *ve) with no white
   space after. Returns past the member and its comma; NULL if malformed. */
static const char *json_member(const char *p, const char *e, const char **k, size_t *kl, const char **v,
                               const char **ve)
{
    const char *kend;
    *k = p + 1;
    if (!(p = json_skip(p, e)) || p >= e || *p != ':') return NULL;
    for (kend = p - 1; kend > *k && *kend != '"'; kend--) {} /* the key's closing quote */
    *kl = (size_t)(kend - *k);
    *v = json_ws(p + 1, e);
    if (!(p = json_skip(*v, e))) return NULL;
    for (*ve = p; *ve > *v && json_ws(*ve - 1, *ve) == *ve; (*ve)--) {} /* white space before p */
    if (p < e && *p == ',') p = json_ws(p + 1, e);
    return p;
}
/* the top-level key "ikp_time" (k = 1) or "ikp_time_K" (2 <= K < 64): K, else 0 */
static int ikp_time_key(const char *k, size_t kl)
{
    int v = 0;
    size_t i;
    if (kl < 8 || memcmp(k, "ikp_time", 8)) return 0;
    if (kl == 8) return 1;
    if (kl > 11 || k[8] != '_' || k[9] == '0') return 0;
    for (i = 9; i < kl; i++) {
        if (k[i] < '0' || k[i] > '9') return 0;
        v = v * 10 + (k[i] - '0');
    }
    return v >= 2 && v < 64 ? v : 0;
}
int torch_scan(const char *t, size_t n, uint64_t *base, const char **open, const char **close, int *empty,
               uint64_t *ikp_keys, const char **why)
{
    static char msg[160];
    const char *p = json_ws(t, t + n), *e = t + n, *end;
    int have_base = 0;
    *close = NULL;
    if (p >= e || *p != '{') { *why = "not a JSON object"; return 1; }
    if (!(end = json_skip(p, e)) || json_ws(end, e) != e) { /* the whole text, as a strict reader takes it */
        snprintf(msg, sizeof msg, "not JSON: %s at byte %llu", end ? "text after the top-level object" : json_why,
                 (unsigned long long)((end ? end : json_at) - t));
        *why = msg;
        return 1;
    }
    p = json_ws(p + 1, e);
    while (p < e && *p == '"') {
        const char *k, *v, *ve;
        size_t kl;
        if (!(p = json_member(p, e, &k, &kl, &v, &ve))) { *why = "malformed JSON"; return 1; }
        *ikp_keys |= (uint64_t)1 << ikp_time_key(k, kl); /* (bit 0: other keys) */
        if (kl == 19 && !memcmp(k, "baseTimeNanoseconds", 19)) {
            char num[32];
            size_t m = 0;
            while (v + m < ve && m < sizeof num - 1 && v[m] >= '0' && v[m] <= '9') { num[m] = v[m]; m++; }
            num[m] = 0;
            if (!m || m > 19 || v + m != ve) { *why = "its baseTimeNanoseconds is not a whole number of ns"; return 1; }
            *base = strtoull(num, NULL, 10);
            have_base = 1;
        } else if (kl == 11 && !memcmp(k, "traceEvents", 11)) {
            if (*v != '[') { *why = "its traceEvents is not an array"; return 1; }
            *open = v;
            *close = ve - 1; /* json_skip ended past its ']' */
            *empty = json_ws(v + 1, e) == *close;
        }
    }
    if (p >= e || *p != '}') { *why = "malformed JSON"; return 1; }
    if (!have_base) { *why = "it has no baseTimeNanoseconds (not a torch.profiler trace?)"; return 1; }
    if (!*close) { *why = "it has no traceEvents array"; return 1; }
    return 0;
}

/* ---- the fit. Every record of a launch lies inside that launch's kernel
   slice in the torch trace, both timed by the GPU's globaltimer; but the
   slice is placed on the host clock by CUPTI's conversion and the capture
   by IKP's own clock readings, which disagree by about 1 us. So the
   capture is moved the least that puts it inside the slice of its launch:
   among the kernel slices at least as long as its span (less a tick a
   side), the one overlapping it most, else the nearest. The move is taken
   only up to IKP's stated uncertainty plus FIT_SLACK_NS (5 us): the two
   conversions were measured up to 1.2 us apart, which that leaves room
   for; a slice that needs more is more likely another launch's, and IKP's
   own placement is kept. */
#define FIT_TICK_NS 32       /* one tick of the globaltimer */
/* ts, dur beyond 2^60 ns (36 years): not a kernel's. (Kineto's ts are not
   small: its base is often the host's boot, a real trace's ts 4.7e12 us.) */
#define FIT_MAX_NS (1LL << 60)
#define FIT_FAR_NS (4 * FIT_MAX_NS) /* a capture this far after the base fits no slice */

typedef struct kslice {
    int64_t lo, hi;   /* ns after baseTimeNanoseconds */
    const char *name; /* as written in the JSON (escapes and all); NULL: none */
    size_t name_n;
} kslice;

/* the JSON number in [p, e), in us, as ns rounded to the nearest, read
   exactly and whatever the locale: 1 if it is one from 0 to FIT_MAX_NS */
static int json_us_to_ns(const char *p, const char *e, int64_t *ns)
{
    uint64_t m = 0; /* its first 18 significant digits */
    long x = 3;     /* the number is m * 10^x ns */
    int neg = p < e && *p == '-', sig = 0;
    p += neg;
    if (p >= e || *p < '0' || *p > '9' || (*p == '0' && p + 1 < e && p[1] >= '0' && p[1] <= '9')) return 0;
    for (; p < e && *p >= '0' && *p <= '9'; p++)
        if (sig < 18) { m = m * 10 + (uint64_t)(*p - '0'); sig += m != 0; } else x++;
    if (p < e && *p == '.') {
        if (++p >= e || *p < '0' || *p > '9') return 0;
        for (; p < e && *p >= '0' && *p <= '9'; p++)
            if (sig < 18) { m = m * 10 + (uint64_t)(*p - '0'); sig += m != 0; x--; }
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        long ex = 0;
        int eneg = ++p < e && *p == '-';
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') return 0;
        for (; p < e && *p >= '0' && *p <= '9'; p++)
            if (ex < 100000) ex = ex * 10 + (*p - '0');
        x += eneg ? -ex : ex;
    }
    if (p != e || (neg && m)) return 0;
    for (; m && x > 0; x--) {
        if (m > (uint64_t)FIT_MAX_NS) return 0;
        m *= 10;
    }
    if (x < -19) m = 0, x = -1; /* (and no million divisions for an exponent of -999999) */
    for (; x < -1; x++) m /= 10;
    if (x == -1) m = (m + 5) / 10;
    if (m > (uint64_t)FIT_MAX_NS) return 0;
    *ns = (int64_t)m;
    return 1;
}

/* 1 if the element of traceEvents in [p, e) is a kernel slice (an object
   with "cat":"kernel", "ph":"X" and numbers ts and dur, from 0 to
   FIT_MAX_NS), then in *k; else 0 */
static int kernel_slice(const char *p, const char *e, kslice *k)
{
    int cat = 0, ph = 0, ts = 0, dur = 0;
    int64_t t = 0, d = 0;
    if (*p != '{') return 0;
    k->name = NULL;
    k->name_n = 0;
    p = json_ws(p + 1, e);
    while (p < e && *p == '"') {
        const char *key, *v, *ve;
        size_t kl;
        if (!(p = json_member(p, e, &key, &kl, &v, &ve))) return 0;
        if (kl == 3 && !memcmp(key, "cat", 3)) cat = ve - v == 8 && !memcmp(v, "\"kernel\"", 8);
        else if (kl == 2 && !memcmp(key, "ph", 2)) ph = ve - v == 3 && !memcmp(v, "\"X\"", 3);
        else if (kl == 2 && !memcmp(key, "ts", 2)) ts = json_us_to_ns(v, ve, &t);
        else if (kl == 3 && !memcmp(key, "dur", 3)) dur = json_us_to_ns(v, ve, &d);
        else if (kl == 4 && !memcmp(key, "name", 4)) {
            k->name = *v == '"' ? v + 1 : NULL;
            k->name_n = *v == '"' ? (size_t)(ve - v - 2) : 0;
        }
    }
    k->lo = t;
    k->hi = t + d;
    return p < e && *p == '}' && cat && ph && ts && dur;
}

/* a JSON string's bytes (no quotes) as text for a message or a match:
   escapes decoded (those of characters past ASCII as '?'), control
   characters as spaces. out holds n + 1 bytes. */
static void json_text(const char *s, size_t n, char *out)
{
    size_t i = 0, o = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i++];
        if (c == '\\' && i < n) {
            c = (unsigned char)s[i++];
            if (c == 'u') {
                unsigned u = 0, h;
                for (h = 0; h < 4 && i < n && strchr("0123456789abcdefABCDEF", s[i]); h++, i++)
                    u = u * 16 + (unsigned)(s[i] <= '9' ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10);
                c = (unsigned char)(h == 4 && u < 0x80 ? u : '?');
            } else if (!strchr("\"\\/", c)) c = ' '; /* \b \f \n \r \t */
        }
        out[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    out[o] = 0;
}

/* the least move (ns) that puts [t0, t0 + span] inside [lo, hi]; centred
   when the span is the longer (by at most a tick a side) */
static int64_t fit_shift(int64_t t0, int64_t span, int64_t lo, int64_t hi)
{
    if (span > hi - lo) return lo - t0 + (hi - lo - span) / 2;
    if (t0 < lo) return lo - t0;
    if (t0 + span > hi) return hi - t0 - span;
    return 0;
}

int fit_kernel(const char *open, const char *close, int64_t t0, int64_t span, int64_t bound, const char *want,
               const char *torch_path, kernel_fit *f)
{
    const char *p = json_ws(open + 1, close);
    char *text = NULL;  /* a slice's name as text, for want */
    size_t text_n = 0;
    kslice k, best;
    int64_t best_overlap = -1, best_dist = 0, best_shift = 0;
    long named = 0; /* kernel slices (whose name holds want) */
    memset(f, 0, sizeof *f);
    memset(&best, 0, sizeof best);
    while (p < close) {
        const char *q = json_skip(p, close + 1); /* past the element (torch_scan read them all) */
        int is;
        if (!q || q == p) break;
        is = kernel_slice(p, q, &k);
        p = q < close && *q == ',' ? json_ws(q + 1, close) : q;
        if (!is) continue;
        if (want) {
            if (!k.name) continue;
            if (k.name_n + 1 > text_n) {
                char *grown = (char *)realloc(text, k.name_n + 1);
                if (!grown) { free(text); fprintf(stderr, "ikp: error: out of memory\n"); return 1; }
                text = grown;
                text_n = k.name_n + 1;
            }
            json_text(k.name, k.name_n, text);
            if (!strstr(text, want)) continue;
        }
        named++;
        if (k.hi - k.lo < span - 2 * FIT_TICK_NS || t0 > FIT_FAR_NS) continue;
        {
            int64_t t1 = t0 + span, overlap = (k.hi < t1 ? k.hi : t1) - (k.lo > t0 ? k.lo : t0);
            int64_t dist = k.lo > t1 ? k.lo - t1 : t0 > k.hi ? t0 - k.hi : 0, shift = fit_shift(t0, span, k.lo, k.hi);
            if (overlap < 0) overlap = 0;
            /* the most overlap, then the least distance, then the least move; the first of equals */
            if (best_overlap < 0 || overlap > best_overlap || (overlap == best_overlap && (dist < best_dist ||
                (dist == best_dist && (shift < 0 ? -shift : shift) < (best_shift < 0 ? -best_shift : best_shift))))) {
                best = k;
                best_overlap = overlap;
                best_dist = dist;
                best_shift = shift;
            }
        }
    }
    free(text);
    if (want && !named) {
        fprintf(stderr, "ikp: error: --kernel %s: no kernel slice in %s has a name holding it\n", want, torch_path);
        return 1;
    }
    if (best_overlap >= 0 && (best_shift < 0 ? -best_shift : best_shift) <= bound && t0 + best_shift >= 0) {
        f->fitted = 1;
        f->shift = best_shift;
        if (best.name && !(f->name = (char *)malloc(best.name_n + 1))) {
            fprintf(stderr, "ikp: error: out of memory\n");
            return 1;
        }
        if (best.name) json_text(best.name, best.name_n, f->name);
    } else if (best_overlap >= 0)
        snprintf(f->why, sizeof f->why, "no kernel slice within %.3f us: the nearest needs a move of %+.3f us",
                 (double)bound / 1000, (double)best_shift / 1000);
    else if (named && t0 <= FIT_FAR_NS)
        snprintf(f->why, sizeof f->why, "no kernel slice as long as its span of %.3f us", (double)span / 1000);
    else if (named) snprintf(f->why, sizeof f->why, "no kernel slice within %.3f us", (double)bound / 1000);
    else snprintf(f->why, sizeof f->why, "no kernel slice in the trace");
    return 0;
}

int mem_writer(void *u, const void *d, size_t n)
{
    membuf_ *m = (membuf_ *)u;
    if (m->n + n > m->cap) {
        size_t c = m->cap ? m->cap : 1 << 16;
        char *q;
        while (c < m->n + n) c *= 2;
        if (!(q = (char *)realloc(m->p, c))) return 1;
        m->p = q;
        m->cap = c;
    }
    memcpy(m->p + m->n, d, n);
    m->n += n;
    return 0;
}

ikp_result into_body(const void *ctx, ikp_write_fn fn, void *user, ikp_error *e)
{
    const into_job *j = (const into_job *)ctx;
    size_t head = (size_t)(j->close - j->torch);
    if (fn(user, j->torch, head) || (!j->empty && j->events_n && fn(user, ",", 1)) ||
        fn(user, j->events, j->events_n) || fn(user, j->close, 1) || fn(user, j->note, j->note_n) ||
        fn(user, j->close + 1, j->torch_n - head - 1)) {
        if (e) snprintf(e->message, sizeof e->message, "writing the trace failed");
        return IKP_ERR_WRITE;
    }
    return IKP_OK;
}

/* the bytes of the UTF-8 sequence s starts with (RFC 3629: no overlong
   form, surrogate or code point past U+10FFFF), 0 if it is none */
static size_t utf8_at(const unsigned char *s, size_t left)
{
    const size_t n = s[0] < 0x80 ? 1 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3
                     : s[0] >= 0xF0 && s[0] < 0xF5 ? 4 : 0;
    unsigned long cp;
    size_t i;
    if (n <= 1 || n > left) return n == 1;
    cp = s[0] & (0x7F >> n);
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return n;
}

/* text as a JSON string's contents: quotes, backslashes and control
   characters escaped (the rest is the UTF-8 it was read as) */
int put_json_text(membuf_ *m, const char *text)
{
    size_t left = strlen(text);
    while (left) {
        unsigned char c = (unsigned char)*text;
        size_t u = c >= 0x80 ? utf8_at((const unsigned char *)text, left) : 1;
        char b[8];
        if (c >= 0x80 && u) { /* a whole UTF-8 sequence, as it is */
            if (mem_writer(m, text, u)) return 1;
            text += u;
            left -= u;
            continue;
        }
        if (c >= 0x80) memcpy(b, "\xef\xbf\xbd", 4); /* a byte that is not UTF-8: U+FFFD */
        else if (c == '"' || c == '\\') { b[0] = '\\'; b[1] = (char)c; b[2] = 0; }
        else if (c < 0x20 || c == 0x7f) snprintf(b, sizeof b, "\\u%04x", c);
        else { b[0] = (char)c; b[1] = 0; }
        if (mem_writer(m, b, strlen(b))) return 1;
        text++;
        left--;
    }
    return 0;
}

