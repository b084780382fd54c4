/* ikp check-sass: the IKP regions of a compiled kernel that hold none of
   its instructions.

   A stamp orders memory operations, not register math: the compiler may
   move arithmetic out of a region, and the region then measures nothing.
   This reads the SASS listing of a binary (cuobjdump -sass, or nvdisasm of
   a cubin) one function at a time and finds, from the records' stores:
   - the stamps: 32-bit clock reads (CS2R.32, S2R or S2UR of SR_CLOCKLO or
     SR_GLOBALTIMERLO) whose value a 64-bit store writes as the high word
     of a record (tag, stamp);
   - each record's kind and event, where the tag's bits that name them
     are known: from immediates, through the masks, shifts and ORs that
     build it (a begin's bits 16..29 may carry ticks, read at run time),
     or its kind alone, where an event id computed at run time is or-ed
     or added with a constant kind;
   - the regions: each end paired with the latest unpaired begin of its
     event (of any event, for ids computed at run time; then, in stamp
     order, what is left of both sorts) whose stamp comes before it in the
     listing; where not even the kind is known, a begin
     and end that the bounded recorder stores together (at slots p and
     p + 1 of one base, one store after the other).
   A region is empty when every instruction between its two stamps is the
   recorder's own (clock reads, record stores, the store of zero that
   comes right before each stamp and never executes (it makes the stamp
   wait for the barriers before it), the moves and compares of its
   bookkeeping: MOV, IMAD.MOV, ISETP, PLOP3, SEL, VIADDMNMX, NOP, and the
   instructions that compute a record's tag). The reading is linear (the
   listing's order, branches not followed), which is the order in which
   the instructions issue within straight-line code. */
#define _POSIX_C_SOURCE 200809L
#include "sass.h"
#include "../ikp.h" /* the record layout: its IKP_WIRE_* definitions */

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* libstdc++'s demangler (extern "C"; the tool links -lstdc++): the
   Itanium C++ ABI's mangling, which nvcc's is */
char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

#define LINE_MAX_CHARS 4096
#define NREGS (256 + 64) /* R0..R255, then UR0..UR63 */
#define DEMANGLED_MAX (1u << 20) /* a longer demangled name is shown mangled */
#define DEMANGLE_SECONDS 1u
#define DEMANGLE_TIMEOUTS 4 /* after these many, the listing's other names are shown as they are */

enum { V_OTHER, V_CLOCK, V_CLOCK64, V_IMM, V_BITS /* the bits in `known` known (imm), the rest not */ };

/* a record's tag bits that name it: kind, event id, the data and anchor
   marks (bits 16..29 may carry a begin's ticks, FORMAT.md) */
#define TAG_BITS (IKP_WIRE_DATA_MARK | IKP_WIRE_ANCHOR | IKP_WIRE_EVENT_MASK << IKP_WIRE_EVENT_SHIFT | IKP_WIRE_KIND_MASK)

#define CHAIN_MAX 8 /* instructions kept of a tag's computation */

typedef struct {
    int type;
    size_t inst;    /* the instruction that produced it */
    unsigned imm;   /* V_IMM: the value; V_BITS: its known bits */
    unsigned known; /* V_BITS: which bits are known */
    size_t chain[CHAIN_MAX]; /* V_BITS: the instructions that computed it (a tag: all the recorder's own) */
    unsigned nchain;
} val;

typedef struct {
    unsigned long offset;
    unsigned char work;       /* 1: may be the kernel's own work */
    unsigned char zero_store; /* a 32-bit store of RZ: a stamp's guard when a clock read follows */
} inst;

typedef struct {
    size_t stamp, store; /* instruction indices */
    int tag_known;  /* the tag is a constant */
    int kind_known; /* its kind is (an event id computed at run time, shifted, or-ed with a constant kind) */
    unsigned tag;
    char base[24];
    long off;
    int has_addr;
    int paired; /* in a region */
} record;

typedef struct {
    size_t b, e; /* stamp instruction indices */
    long event;  /* -1: computed at run time */
} region;

typedef struct {
    char name[LINE_MAX_CHARS + 1]; /* as the listing has it */
    char *demangled;               /* malloc'd; NULL: shown as it is */
    int demangle_tried;
    int demangle_timeouts;         /* of the listing's names so far (not reset) */
    inst *in;
    size_t n_in, cap_in;
    record *rec;
    size_t n_rec, cap_rec;
    region *reg;
    size_t n_reg, cap_reg;
    val v[NREGS];
    size_t last_def[NREGS];
    int has_def[NREGS];
    size_t guard;  /* the last store of RZ since the last clock read, + 1 (0: none) */
} func;

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t c = *cap ? *cap : 64;
    void *q;
    if (need <= *cap) return 0;
    while (c < need) {
        if (c > ((size_t)-1) / 2 / size) return -1;
        c *= 2;
    }
    q = realloc(*p, c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

/* R<n> -> n, UR<n> -> 256 + n; RZ, URZ and anything else -> -1. Suffixes
   such as .reuse and .64 are ignored. */
static int reg_num(const char *s)
{
    int base = 0, n = 0, digits = 0;
    if (s[0] == 'U' && s[1] == 'R') { base = 256; s += 2; }
    else if (s[0] == 'R') s += 1;
    else return -1;
    while (*s >= '0' && *s <= '9' && digits < 4) { n = n * 10 + (*s - '0'); s++; digits++; }
    if (!digits || (*s && *s != '.')) return -1;
    if (base == 0 && n > 254) return -1;
    if (base && n > 63) return -1;
    return base + n;
}

static int parse_imm(const char *s, unsigned *v)
{
    char *end;
    unsigned long x;
    int neg = 0;
    if (*s == '-') { neg = 1; s++; }
    if (*s < '0' || *s > '9') return 0;
    x = strtoul(s, &end, 0);
    if (*end) return 0;
    *v = neg ? (unsigned)(0u - (unsigned)x) : (unsigned)x;
    return 1;
}

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* opcode's first component equals one of the names */
static int op_is(const char *op, const char *const *names)
{
    size_t n = strcspn(op, ".");
    for (; *names; names++)
        if (strlen(*names) == n && !strncmp(op, *names, n)) return 1;
    return 0;
}

static void func_reset(func *f)
{
    free(f->demangled);
    f->demangled = NULL;
    f->demangle_tried = 0;
    f->n_in = f->n_rec = f->n_reg = 0;
    f->guard = 0;
    f->name[0] = 0;
    memset(f->v, 0, sizeof f->v);
    memset(f->has_def, 0, sizeof f->has_def);
}

/* the address operand's last [...]: base register text and offset */
static void parse_addr(const char *a, record *r)
{
    const char *lb = strrchr(a, '['), *rb;
    size_t n, k;
    r->has_addr = 0;
    if (!lb || !(rb = strchr(lb, ']'))) return;
    lb++;
    n = (size_t)(rb - lb);
    for (k = 0; k < n && lb[k] != '+' && lb[k] != '-'; k++) {}
    if (k >= sizeof r->base) return;
    memcpy(r->base, lb, k);
    r->base[k] = 0;
    r->off = 0;
    if (k < n) {
        char tmp[32];
        size_t m = n - k;
        char *end;
        if (m >= sizeof tmp) return;
        memcpy(tmp, lb + k, m);
        tmp[m] = 0;
        r->off = strtol(tmp, &end, 0);
        if (*end) return;
    }
    r->has_addr = 1;
}

static void set_def(func *f, int reg, val v, size_t i)
{
    if (reg < 0 || reg >= NREGS) return;
    f->v[reg] = v;
    f->last_def[reg] = i;
    f->has_def[reg] = 1;
}

/* a 32-bit clock read (CS2R, S2R or S2UR of SR_CLOCKLO or
   SR_GLOBALTIMERLO) into d, instruction v.inst: 1 if op is one, else 0 */
static int add_clock(func *f, inst *it, const char *op, char **ops, int n, int d, val v)
{
    if (!op_is(op, (const char *const[]){"CS2R", "S2R", "S2UR", NULL}) || n != 2 ||
        !(starts(ops[1], "SR_CLOCKLO") || starts(ops[1], "SR_GLOBALTIMERLO")))
        return 0;
    it->work = 0;
    /* the stamp's guard: the last store of RZ before it (ptxas may put
       independent instructions between the two) */
    if (f->guard) f->in[f->guard - 1].work = 0;
    f->guard = 0;
    if (starts(op, "CS2R") && !strstr(op, ".32")) { /* 64-bit: an anchor's reading, not a stamp */
        v.type = V_CLOCK64;
        set_def(f, d, v, v.inst);
        v.type = V_OTHER;
        set_def(f, d + 1, v, v.inst);
    } else {
        v.type = V_CLOCK;
        set_def(f, d, v, v.inst);
    }
    return 1;
}

/* a half-precision value as the disassembler prints it (decimal, exact):
   its 16 bits, 1 if it is one (a normal or subnormal half, or 0) */
static int parse_half(const char *s, unsigned *bits)
{
    char *end;
    double x = strtod(s, &end), m;
    unsigned sign = 0, e = 0;
    if (end == s || *end) return 0;
    if (x < 0) sign = 0x8000u, x = -x;
    if (x == 0) { *bits = sign; return 1; }
    if (!(x < 65520.0)) return 0;
    m = x * 16777216.0; /* in units of 2^-24, the least subnormal */
    if (m < 1024.0) { /* subnormal */
        if (m != (double)(unsigned)m) return 0;
        *bits = sign | (unsigned)m;
        return 1;
    }
    while (m >= 2048.0) m *= 0.5, e++;
    if (m != (double)(unsigned)m || e > 29) return 0;
    *bits = sign | (e + 1) << 10 | ((unsigned)m - 1024u);
    return 1;
}

/* a move into d, instruction v.inst: MOV d, s; MOV32I d, imm; IMAD.MOV(.U32)
   / IMAD.U32 d, RZ, RZ, s; HFMA2.MMA d, -RZ, RZ, hi, lo (two halves: ptxas
   makes constants so). 1 if op is one, else 0 */
static int add_move(func *f, inst *it, const char *op, char **ops, int n, int d, val v)
{
    const char *src = NULL;
    unsigned hi, lo;
    if (starts(op, "HFMA2") && n == 5 && !strcmp(ops[1], "-RZ") && !strcmp(ops[2], "RZ") && parse_half(ops[3], &hi) &&
        parse_half(ops[4], &lo)) {
        v.imm = hi << 16 | lo;
        v.type = V_IMM;
    } else {
        int s;
        if ((!strcmp(op, "MOV") || !strcmp(op, "UMOV") || !strcmp(op, "MOV32I")) && n == 2) src = ops[1];
        else if ((starts(op, "IMAD.MOV") || !strcmp(op, "IMAD.U32")) && n == 4 && !strcmp(ops[1], "RZ") &&
                 !strcmp(ops[2], "RZ"))
            src = ops[3];
        if (!src) return 0;
        s = reg_num(src);
        if (s >= 0) v = f->v[s];
        else if (parse_imm(src, &v.imm)) v.type = V_IMM;
    }
    it->work = 0;
    set_def(f, d, v, v.inst);
    return 1;
}

/* a 64-bit store of a register pair, instruction i: a record when the high
   word is a stamp. 1 if op is such a store, 0 if not, -1 out of memory */
static int add_record(func *f, inst *it, const char *op, char **ops, int n, size_t i)
{
    record *r;
    int t;
    if (!op_is(op, (const char *const[]){"STG", "STS", "ST", NULL}) || !strstr(op, ".64") || n != 2) return 0;
    t = reg_num(ops[1]);
    if (t < 0 || t >= 254 || (t & 1) || f->v[t + 1].type != V_CLOCK) return 1;
    if (grow((void **)&f->rec, &f->cap_rec, f->n_rec + 1, sizeof *f->rec)) return -1;
    r = &f->rec[f->n_rec++];
    memset(r, 0, sizeof *r);
    r->stamp = f->v[t + 1].inst;
    r->store = i;
    {   /* a tag is known when its kind, event and marks are (bits 16..29 may carry ticks) */
        const unsigned known = f->v[t].type == V_IMM ? ~0u : f->v[t].type == V_BITS ? f->v[t].known : 0u;
        r->tag_known = (known & TAG_BITS) == TAG_BITS;
        r->kind_known = (known & IKP_WIRE_KIND_MASK) == IKP_WIRE_KIND_MASK;
        unsigned k;
        r->tag = f->v[t].imm & known;
        if (f->v[t].type == V_BITS) /* the tag's computation: a begin's ticks shifted and masked into it */
            for (k = 0; k < f->v[t].nchain; k++) f->in[f->v[t].chain[k]].work = 0;
    }
    parse_addr(ops[0], r);
    it->work = 0;
    if (f->has_def[t]) f->in[f->last_def[t]].work = 0; /* the tag's computation */
    return 1;
}

/* an operand's known bits: *bits their values, the mask returned which
   (RZ and immediates: all; a register: what its value says) */
static unsigned known_bits(const func *f, const char *s, unsigned *bits)
{
    int r = reg_num(s);
    *bits = 0;
    if (!strcmp(s, "RZ") || !strcmp(s, "URZ")) return ~0u;
    if (r < 0) return parse_imm(s, bits) ? ~0u : 0u;
    *bits = f->v[r].imm;
    return f->v[r].type == V_IMM ? ~0u : f->v[r].type == V_BITS ? f->v[r].known : 0u;
}

/* LOP3.LUT d, a, b, c, lut: the bits of d that the known bits of a, b
   and c settle (a bit is known where every value the unknown inputs may
   take gives the same) */
static void lop3_bits(const func *f, char **ops, val *v)
{
    unsigned x[3], m[3], lut, bit, known = 0, out = 0;
    int k;
    for (k = 0; k < 3; k++) m[k] = known_bits(f, ops[1 + k], &x[k]);
    if (!parse_imm(ops[4], &lut)) return;
    for (bit = 0; bit < 32; bit++) {
        int seen = 0, same = 1, first = 0, combo;
        for (combo = 0; combo < 8; combo++) {
            int in[3], o;
            for (k = 0; k < 3; k++) {
                if (m[k] >> bit & 1) in[k] = x[k] >> bit & 1;
                else in[k] = combo >> k & 1;
                if ((m[k] >> bit & 1) && (combo >> k & 1)) goto next; /* a known input: one value */
            }
            o = lut >> (in[0] << 2 | in[1] << 1 | in[2]) & 1;
            if (!seen) first = o, seen = 1;
            else if (o != first) same = 0;
        next:;
        }
        if (seen && same) known |= 1u << bit, out |= (unsigned)first << bit;
    }
    if (known) v->type = V_BITS, v->known = known, v->imm = out;
}

/* the instructions that computed register operand s, added to v's */
static void chain_from(const func *f, const char *s, val *v)
{
    int r = reg_num(s);
    unsigned k;
    if (r < 0 || f->v[r].type != V_BITS) return;
    for (k = 0; k < f->v[r].nchain && v->nchain < CHAIN_MAX; k++) v->chain[v->nchain++] = f->v[r].chain[k];
}

/* a record's tag computed at run time: its known bits, through LOP3.LUT
   (an event id or ticks masked and or-ed with constants), a shift left
   (IMAD.SHL.U32 d, a, 2^k, RZ; SHF.L.U32 d, a, k, RZ) and an add of a
   kind to an id shifted left by 2 (IADD3 d, a, imm, RZ; VIADD d, a, imm:
   its low two bits) */
static void tag_bits(const func *f, const char *op, char **ops, int n, val *v)
{
    unsigned imm, x, m;
    v->nchain = 1;
    v->chain[0] = v->inst;
    if (starts(op, "LOP3.LUT") && n >= 5) {
        lop3_bits(f, ops, v);
        chain_from(f, ops[1], v);
        chain_from(f, ops[2], v);
        chain_from(f, ops[3], v);
        /* a | imm with a an event id shifted left by 2 (low bits 0): the kind, imm's */
        if (!strcmp(ops[4], "0xfc") && !strcmp(ops[3], "RZ") && parse_imm(ops[2], &imm) &&
            !(v->type == V_BITS && (v->known & IKP_WIRE_KIND_MASK) == IKP_WIRE_KIND_MASK)) {
            if (v->type != V_BITS) v->type = V_BITS, v->known = 0, v->imm = 0;
            v->known |= IKP_WIRE_KIND_MASK;
            v->imm = (v->imm & ~IKP_WIRE_KIND_MASK) | (imm & IKP_WIRE_KIND_MASK);
        }
    } else if (((starts(op, "IMAD.SHL") && n == 4) || (starts(op, "SHF.L.U32") && n == 4)) && !strcmp(ops[3], "RZ") &&
             parse_imm(ops[2], &imm)) {
        unsigned sh = 0;
        if (starts(op, "IMAD.SHL")) { if (!imm || (imm & (imm - 1))) return; while (!(imm >> sh & 1)) sh++; }
        else sh = imm;
        if (sh > 31) return;
        m = known_bits(f, ops[1], &x);
        v->type = V_BITS, v->known = m << sh | ((1u << sh) - 1), v->imm = x << sh;
        chain_from(f, ops[1], v);
    } else if ((!strcmp(op, "IADD3") && n == 4 && !strcmp(ops[3], "RZ") && parse_imm(ops[2], &imm)) ||
               (!strcmp(op, "VIADD") && n == 3 && parse_imm(ops[2], &imm)))
        v->type = V_BITS, v->known = IKP_WIRE_KIND_MASK, v->imm = imm & IKP_WIRE_KIND_MASK;
}

/* one instruction: opcode op, n operands ops[] */
static int add_inst(func *f, unsigned long offset, const char *op, char **ops, int n)
{
    static const char *const neutral[] = {"NOP", "ISETP", "UISETP", "PLOP3", "UPLOP3", "SEL", "VIADDMNMX", "YIELD", NULL};
    size_t i = f->n_in;
    inst *it;
    int d = n > 0 ? reg_num(ops[0]) : -1, k, width = 1, stored;
    val v;
    if (grow((void **)&f->in, &f->cap_in, i + 1, sizeof *f->in)) return -1;
    it = &f->in[f->n_in++];
    it->offset = offset;
    it->work = !op_is(op, neutral);
    it->zero_store = op_is(op, (const char *const[]){"STG", "STS", "ST", NULL}) && !strstr(op, ".64") &&
                     !strstr(op, ".128") && n == 2 && !strcmp(ops[1], "RZ");
    if (it->zero_store) f->guard = i + 1;
    v.type = V_OTHER;
    v.inst = i;
    v.imm = 0;
    v.known = 0;
    v.nchain = 0;
    if (strstr(op, ".64") || strstr(op, ".WIDE")) width = 2;
    if (strstr(op, ".128")) width = 4;
    if (add_clock(f, it, op, ops, n, d, v) || add_move(f, it, op, ops, n, d, v)) return 0;
    if ((stored = add_record(f, it, op, ops, n, i)) != 0) return stored < 0 ? -1 : 0;
    tag_bits(f, op, ops, n, &v);
    for (k = 0; k < width; k++) set_def(f, d < 0 ? -1 : d + k, v, i);
    return 0;
}

static int cmp_size(size_t a, size_t b) { return a < b ? -1 : a > b; }

static int cmp_rec_stamp(const void *pa, const void *pb)
{
    return cmp_size((*(const record *const *)pa)->stamp, (*(const record *const *)pb)->stamp);
}

/* records sorted by event, then stamp */
static int cmp_rec_event(const void *pa, const void *pb)
{
    const record *a = *(const record *const *)pa, *b = *(const record *const *)pb;
    unsigned ea = a->tag >> IKP_WIRE_EVENT_SHIFT & IKP_WIRE_EVENT_MASK, eb = b->tag >> IKP_WIRE_EVENT_SHIFT & IKP_WIRE_EVENT_MASK;
    if (ea != eb) return ea < eb ? -1 : 1;
    return cmp_size(a->stamp, b->stamp);
}

static int cmp_region(const void *pa, const void *pb)
{
    const region *a = (const region *)pa, *b = (const region *)pb;
    if (a->event != b->event) return a->event < b->event ? -1 : 1;
    if (a->b != b->b) return cmp_size(a->b, b->b);
    return cmp_size(a->e, b->e);
}

static int add_region(func *f, size_t b, size_t e, long event)
{
    region *g;
    if (grow((void **)&f->reg, &f->cap_reg, f->n_reg + 1, sizeof *f->reg)) return -1;
    g = &f->reg[f->n_reg++];
    g->b = b;
    g->e = e;
    g->event = event;
    return 0;
}

static void put_name(FILE *out, const char *const *names, size_t num_names, long event)
{
    if (event >= 0 && (size_t)event < num_names && names[event] && names[event][0]) {
        const char *s;
        fputs(" (", out);
        for (s = names[event]; *s; s++) fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
        fputc(')', out);
    }
}

/* name demangled as binutils' c++filt shows it, in a malloc'd
   string; NULL when it does not demangle. Only a name that begins with _Z
   is tried (the demangler reads "i" as the type int, c++filt leaves it).
   A name of a few hundred characters whose substitutions nest can demangle
   to gigabytes, for minutes: the demangler runs in a child process, given
   DEMANGLE_SECONDS (*timeouts counts the names that took longer), and a
   name longer than DEMANGLED_MAX demangled is not taken. */
static char *demangle(const char *name, int *timeouts)
{
    int fd[2], status = 0;
    pid_t pid;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (strncmp(name, "_Z", 2) || pipe(fd)) return NULL;
    pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return NULL;
    }
    if (pid == 0) {
        int st = -1;
        char *s;
        size_t n, off = 0;
        close(fd[0]);
        signal(SIGALRM, SIG_DFL);
        alarm(DEMANGLE_SECONDS);
        s = __cxa_demangle(name, NULL, NULL, &st);
        if (st || !s || (n = strlen(s)) == 0 || n > DEMANGLED_MAX) _exit(1);
        n++; /* the NUL too: the parent takes only a whole name */
        while (off < n) {
            ssize_t w = write(fd[1], s + off, n - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    for (;;) {
        ssize_t r;
        if (len == cap) {
            char *q;
            if (cap > DEMANGLED_MAX) break; /* more than the child writes */
            q = (char *)realloc(buf, cap ? cap * 2 : 256);
            if (!q) break;
            buf = q;
            cap = cap ? cap * 2 : 256;
        }
        r = read(fd[0], buf + len, cap - len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(fd[0]);
    kill(pid, SIGKILL); /* gone already, unless the reading above stopped early */
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) ++*timeouts;
    if (!buf || len < 2 || len > DEMANGLED_MAX + 1 || buf[len - 1] || memchr(buf, 0, len - 1) ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* the function's name as shown: demangled, unless mangled is set, it
   does not demangle or DEMANGLE_TIMEOUTS names have timed out */
static const char *shown(func *f, int mangled)
{
    if (!mangled && !f->demangle_tried && f->demangle_timeouts < DEMANGLE_TIMEOUTS) {
        f->demangle_tried = 1;
        f->demangled = demangle(f->name, &f->demangle_timeouts);
    }
    return f->demangled ? f->demangled : f->name;
}

/* tags of unknown kind: a begin and end stored together by one record,
   at [base + o] and [base + o + 8], one after the other. 0, or -1 out of memory */
static int pair_stored_together(func *f)
{
    size_t i;
    for (i = 0; i + 1 < f->n_rec; i++) {
        record *x = &f->rec[i], *y = &f->rec[i + 1], *b, *e;
        if (x->kind_known || y->kind_known || x->paired || !x->has_addr || !y->has_addr || strcmp(x->base, y->base))
            continue;
        if (x->off + 8 == y->off) b = x, e = y;
        else if (y->off + 8 == x->off) b = y, e = x;
        else continue;
        if (b->stamp >= e->stamp) continue;
        if (add_region(f, b->stamp, e->stamp, -1)) return -1;
        x->paired = y->paired = 1;
    }
    return 0;
}

/* kinds known, events computed at run time: in the order of the stamps,
   each end closes the latest open begin. by: room for every record.
   0, or -1 out of memory */
static int pair_run_time(func *f, record **by, ikp_sass_summary *sum)
{
    size_t i, j, n = 0;
    for (i = 0; i < f->n_rec; i++) {
        record *r = &f->rec[i];
        unsigned kind = r->tag & IKP_WIRE_KIND_MASK;
        if (r->tag_known || !r->kind_known || (kind != IKP_WIRE_KIND_BEGIN && kind != IKP_WIRE_KIND_END)) continue;
        by[n++] = r;
    }
    qsort(by, n, sizeof *by, cmp_rec_stamp);
    for (i = j = 0; i < n; i++) {
        if ((by[i]->tag & IKP_WIRE_KIND_MASK) == IKP_WIRE_KIND_BEGIN) by[j++] = by[i];
        else if (j) {
            j--;
            if (add_region(f, by[j]->stamp, by[i]->stamp, -1)) return -1;
            by[j]->paired = by[i]->paired = 1;
        } else
            sum->unpaired++;
    }
    sum->unpaired += j;
    return 0;
}

/* constant tags: by event, each end closes its event's latest open begin.
   by: room for every record. 0, or -1 out of memory */
static int pair_by_event(func *f, record **by, ikp_sass_summary *sum)
{
    size_t i, j, n = 0, begin_of_group;
    for (i = 0; i < f->n_rec; i++) {
        record *r = &f->rec[i];
        unsigned kind = r->tag & IKP_WIRE_KIND_MASK;
        if (!r->tag_known || (r->tag & IKP_WIRE_DATA_MARK) || (kind != IKP_WIRE_KIND_BEGIN && kind != IKP_WIRE_KIND_END)) continue;
        by[n++] = r;
    }
    qsort(by, n, sizeof *by, cmp_rec_event);
    for (begin_of_group = 0; begin_of_group < n; begin_of_group = j) {
        unsigned ev = by[begin_of_group]->tag >> IKP_WIRE_EVENT_SHIFT & IKP_WIRE_EVENT_MASK;
        size_t top = begin_of_group; /* by[begin_of_group .. top) is a stack of open begins */
        for (j = begin_of_group; j < n && (by[j]->tag >> IKP_WIRE_EVENT_SHIFT & IKP_WIRE_EVENT_MASK) == ev; j++) {
            if ((by[j]->tag & IKP_WIRE_KIND_MASK) == IKP_WIRE_KIND_BEGIN) by[top++] = by[j];
            else if (top > begin_of_group) {
                top--;
                if (add_region(f, by[top]->stamp, by[j]->stamp, (long)ev)) return -1;
                by[top]->paired = by[j]->paired = 1;
            } else
                sum->unpaired++;
        }
        sum->unpaired += top - begin_of_group;
    }
    return 0;
}

/* what the two passes left: a begin whose event is computed at run time
   (a constant id with a begin's ticks or-ed in from a loop-carried
   register reads so) and an end of a known event, or the other way round:
   in the order of the stamps each end closes the latest open begin. by:
   room for every record. 0, or -1 out of memory */
static int pair_leftovers(func *f, record **by, ikp_sass_summary *sum)
{
    size_t i, j, n = 0;
    int mixed = 0;
    for (i = 0; i < f->n_rec; i++) {
        record *r = &f->rec[i];
        unsigned kind = r->tag & IKP_WIRE_KIND_MASK;
        if (r->paired || !r->kind_known || (r->tag_known && (r->tag & IKP_WIRE_DATA_MARK)) ||
            (kind != IKP_WIRE_KIND_BEGIN && kind != IKP_WIRE_KIND_END))
            continue;
        mixed |= r->tag_known ? 1 : 2;
        by[n++] = r;
    }
    if (mixed != 3) return 0; /* only one sort: the passes above said all there is */
    qsort(by, n, sizeof *by, cmp_rec_stamp);
    for (i = j = 0; i < n; i++) {
        if ((by[i]->tag & IKP_WIRE_KIND_MASK) == IKP_WIRE_KIND_BEGIN) by[j++] = by[i];
        else if (j) {
            j--;
            if (add_region(f, by[j]->stamp, by[i]->stamp, by[i]->tag_known ? (long)(by[i]->tag >> IKP_WIRE_EVENT_SHIFT &
                                                                                    IKP_WIRE_EVENT_MASK) : -1))
                return -1;
            by[j]->paired = by[i]->paired = 1;
            sum->unpaired -= sum->unpaired >= 2 ? 2 : sum->unpaired;
        }
    }
    return 0;
}

/* one region, however many stores wrote its stamps */
static void unique_regions(func *f)
{
    size_t i, j;
    if (f->n_reg) qsort(f->reg, f->n_reg, sizeof *f->reg, cmp_region);
    for (i = j = 0; i < f->n_reg; i++)
        if (!j || cmp_region(&f->reg[j - 1], &f->reg[i])) f->reg[j++] = f->reg[i];
    f->n_reg = j;
}

/* "KERNEL: event N (NAME)" or "KERNEL: event computed at run time", which
   begins a line about a region */
static void put_region_event(FILE *out, func *f, int mangled, const char *const *names, size_t num_names, long event)
{
    fprintf(out, "%s: ", shown(f, mangled));
    if (event >= 0) {
        fprintf(out, "event %ld", event);
        put_name(out, names, num_names, event);
    } else
        fputs("event computed at run time", out);
}

/* --list: each region and the kernel's instructions in it (work[i]: work
   instructions before instruction i), then each begin or end not paired */
static void list_regions(func *f, const size_t *work, const char *const *names, size_t num_names, int mangled,
                         FILE *out)
{
    size_t i;
    for (i = 0; i < f->n_reg; i++) {
        const region *g = &f->reg[i];
        put_region_event(out, f, mangled, names, num_names, g->event);
        fprintf(out, ": stamps at /*%04lx*/ and /*%04lx*/, %lu instruction%s of the kernel's between\n",
                f->in[g->b].offset, f->in[g->e].offset, (unsigned long)(work[g->e] - work[g->b + 1]),
                work[g->e] - work[g->b + 1] == 1 ? "" : "s");
    }
    for (i = 0; i < f->n_rec; i++) {
        const record *r = &f->rec[i];
        unsigned kind = r->tag & IKP_WIRE_KIND_MASK;
        if (r->paired || !r->kind_known || (r->tag & IKP_WIRE_DATA_MARK) || (kind != IKP_WIRE_KIND_BEGIN && kind != IKP_WIRE_KIND_END))
            continue;
        fprintf(out, "%s: %s of ", shown(f, mangled), kind == IKP_WIRE_KIND_BEGIN ? "a begin" : "an end");
        if (r->tag_known) {
            fprintf(out, "event %u", r->tag >> IKP_WIRE_EVENT_SHIFT & IKP_WIRE_EVENT_MASK);
            put_name(out, names, num_names, (long)(r->tag >> IKP_WIRE_EVENT_SHIFT & IKP_WIRE_EVENT_MASK));
        } else
            fputs("an event computed at run time", out);
        fprintf(out, " (stamp at /*%04lx*/) not paired\n", f->in[r->stamp].offset);
    }
}

/* per event, the empty regions and the first of them (work as above) */
static void report_empty(func *f, const size_t *work, const char *const *names, size_t num_names, int mangled,
                         FILE *out, ikp_sass_summary *sum)
{
    size_t i, j;
    for (i = 0; i < f->n_reg; i = j) {
        size_t total = 0, empty = 0, first = 0;
        for (j = i; j < f->n_reg && f->reg[j].event == f->reg[i].event; j++) {
            const region *g = &f->reg[j];
            total++;
            if (work[g->e] - work[g->b + 1] == 0) {
                if (!empty) first = j;
                empty++;
            }
        }
        if (!empty) continue;
        sum->empty += empty;
        put_region_event(out, f, mangled, names, num_names, f->reg[i].event);
        fprintf(out, ": %lu of %lu region%s hold%s no instruction of the kernel's (first: stamps at /*%04lx*/ and /*%04lx*/)\n",
                (unsigned long)empty, (unsigned long)total, total == 1 ? "" : "s", empty == 1 ? "s" : "",
                f->in[f->reg[first].b].offset, f->in[f->reg[first].e].offset);
    }
}

/* 1 if name (mangled as the listing has it) is one of ikp.h's own kernels:
   ikp__*, as a C++ name (_Z, L when static, its length) or as it is */
static int ikp_helper(const char *name)
{
    if (name[0] == '_' && name[1] == 'Z') {
        name += 2;
        if (*name == 'L') name++;
        if (*name < '1' || *name > '9') return 0;
        while (*name >= '0' && *name <= '9') name++;
    }
    return !strncmp(name, "ikp__", 5);
}

/* pairs the function's records into regions, checks them, reports */
static int finish(func *f, const char *const *names, size_t num_names, int list, int mangled, FILE *out,
                  ikp_sass_summary *sum)
{
    record **by = NULL;
    size_t *work = NULL; /* work[i]: work instructions before instruction i */
    size_t i;
    int rc = -1;
    if (!f->n_in) return 0;
    if (!f->n_rec && ikp_helper(f->name)) { /* IKP's, not the user's */
        sum->helpers++;
        return 0;
    }
    sum->kernels++;
    sum->instructions += f->n_in;
    sum->records += f->n_rec;
    f->n_reg = 0;
    if (pair_stored_together(f)) goto out;
    by = (record **)malloc((f->n_rec ? f->n_rec : 1) * sizeof *by);
    if (!by || pair_run_time(f, by, sum) || pair_by_event(f, by, sum) || pair_leftovers(f, by, sum)) goto out;
    unique_regions(f);
    sum->regions += f->n_reg;
    work = (size_t *)malloc((f->n_in + 1) * sizeof *work);
    if (!work) goto out;
    work[0] = 0;
    for (i = 0; i < f->n_in; i++) work[i + 1] = work[i] + f->in[i].work;
    if (list) list_regions(f, work, names, num_names, mangled, out);
    report_empty(f, work, names, num_names, mangled, out, sum);
    rc = 0;
out:
    free(by);
    free(work);
    return rc;
}

static void set_err(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    if (!size) return;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

/* One line of in into line (its newline dropped, NUL-terminated): 1, or 0
   at the end of the input; -1 for a line of more than LINE_MAX_CHARS
   characters, -2 for a NUL byte (neither is a listing's). */
static int read_line(FILE *in, char *line, size_t *len)
{
    int c;
    size_t n = 0;
    while ((c = getc(in)) != EOF && c != '\n') {
        if (c == 0) return -2;
        if (n == LINE_MAX_CHARS) return -1;
        line[n++] = (char)c;
    }
    line[n] = 0;
    *len = n;
    return c == EOF && n == 0 ? 0 : 1;
}

/* the name that a line that starts a function gives: "Function : NAME"
   (cuobjdump), ".section .text.NAME," (nvdisasm); NULL for another line */
static const char *function_start(const char *p)
{
    const char *q = NULL;
    if (starts(p, "Function : ")) q = p + 11;
    else if (starts(p, ".section") && (q = strstr(p, ".text.")) != NULL) q += 6;
    return q;
}

/* an instruction, from p (a line past its leading blanks, cut up here):
   an offset in a comment, [@P0] OPCODE a, b, c ; Another line is passed
   over. 0, or -1 out of memory. */
static int read_inst(func *f, char *p)
{
    char *body, *semi, *ops[8], *s, *end;
    char op[64];
    unsigned long off;
    int n = 0;
    size_t k;
    if (p[0] != '/' || p[1] != '*' || !((p[2] >= '0' && p[2] <= '9') || (p[2] >= 'a' && p[2] <= 'f'))) return 0;
    off = strtoul(p + 2, &end, 16);
    if (end[0] != '*' || end[1] != '/') return 0;
    body = (char *)skip_space(end + 2);
    if (*body == '{') body = (char *)skip_space(body + 1);
    if (*body == '@') body = (char *)skip_space(body + strcspn(body, " \t"));
    semi = strchr(body, ';');
    if (!semi) return 0;
    *semi = 0;
    k = strcspn(body, " \t");
    if (!k || k >= sizeof op) return 0;
    memcpy(op, body, k);
    op[k] = 0;
    s = (char *)skip_space(body + k);
    while (*s && n < 8) {
        char *c = strchr(s, ','), *t;
        if (c) *c = 0;
        t = s + strlen(s);
        while (t > s && (t[-1] == ' ' || t[-1] == '\t')) *--t = 0;
        ops[n++] = s;
        if (!c) break;
        s = (char *)skip_space(c + 1);
    }
    if (!f->name[0]) strcpy(f->name, "(unnamed function)");
    return add_inst(f, off, op, ops, n);
}

int ikp_sass_check(FILE *in, const char *label, const char *const *names, size_t num_names, int list, int mangled,
                   FILE *out, ikp_sass_summary *sum, char *err, size_t err_size)
{
    char line[LINE_MAX_CHARS + 1];
    func *f = (func *)calloc(1, sizeof *f);
    unsigned long lineno = 0;
    int rc = 1;
    memset(sum, 0, sizeof *sum);
    if (!f) { set_err(err, err_size, "out of memory"); return 1; }
    func_reset(f);
    for (;;) {
        const char *p, *q;
        size_t len = 0;
        int got = read_line(in, line, &len);
        lineno += got != 0;
        if (got == -1) {
            set_err(err, err_size, "%s: line %lu is longer than %d characters: not a SASS listing", label, lineno,
                    LINE_MAX_CHARS);
            goto out;
        }
        if (got == -2) {
            set_err(err, err_size, "%s: line %lu holds a NUL byte: not a SASS listing", label, lineno);
            goto out;
        }
        if (!got) break;
        while (len && line[len - 1] == '\r') line[--len] = 0;
        p = skip_space(line);
        if ((q = function_start(p)) != NULL) {
            size_t k = strcspn(q, ", \t");
            if (finish(f, names, num_names, list, mangled, out, sum)) { set_err(err, err_size, "out of memory"); goto out; }
            func_reset(f);
            if (k >= sizeof f->name) k = sizeof f->name - 1;
            memcpy(f->name, q, k);
            f->name[k] = 0;
        } else if (read_inst(f, line + (p - line))) {
            set_err(err, err_size, "out of memory");
            goto out;
        }
    }
    if (ferror(in)) { set_err(err, err_size, "%s: read error", label); goto out; }
    if (finish(f, names, num_names, list, mangled, out, sum)) { set_err(err, err_size, "out of memory"); goto out; }
    if (!sum->instructions) {
        set_err(err, err_size, "%s: no SASS instructions found (expected the output of cuobjdump -sass or nvdisasm)",
                label);
        goto out;
    }
    rc = 0;
out:
    free(f->demangled);
    free(f->in);
    free(f->rec);
    free(f->reg);
    free(f);
    return rc;
}
