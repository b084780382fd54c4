#!/usr/bin/env python3
"""Machine-code checks of ikp_cuda.cuh that need nvcc but no GPU.

1. IKP_ENABLE=0 vanishes: tests/sass/kernels.cu built with its IKP lines
   removed (-DIKP_PLAIN) and with them present but disabled (-DIKP_ENABLE=0):
   the .text section of each kernel must be byte-identical (read straight
   from the cubin's ELF section table, no disassembler needed).
2. Hot path: hot_kernel with 16 and with 32 events; the difference in SASS
   instructions / 16 is the per-event cost: at most 6 (12 a region: ten,
   and the ticks' globaltimer read and the shift that moves it to the
   begin's tag, whose mask and or with the tag are one LOP3 in place of the
   tag's move; staged 6.5; 5.25 with IKP_TICKS=0; 6.5 with IKP_DEFER_BEGIN=0,
   which carries no ticks), and no branch, barrier-sync, memory barrier or atomic added by
   events. The same for hot_kernel built with IKP_STAGED=1, whose events
   store with STS (and no global or generic store but the stamps' own). No
   record reads the clock or %globaltimer through the warp's uniform
   datapath (S2UR), here and in the kernels of bench/events.cu.
   Every record stamp comes after a store with only register arithmetic
   between: its own, which never executes (a predicated 32-bit store of
   zero), or a record's where the compiler moved its own above that one;
   also after a barrier (wait_kernel: stamps right after __syncthreads(), a
   named bar.sync and __syncthreads_count, in every build), never straight
   after a BAR. In hot_kernel's back-to-back empty regions (default and
   staged), no instruction between a begin's stamp and its end's, nor the
   end's, waits for a scoreboard (nvdisasm -hex's control bits), but in
   the second region.
3. Work stays inside its region: in region_pinned_kernel every FFMA of the
   region lies between the begin and end timer reads; in region_mem_kernel
   (loads and stores, no pin) every LDG/STG of the region does.
0. The IKP_WIRE_* constants of ikp.h and ikp_cuda.cuh agree.
4. The header compiles warning-free: nvcc -Werror all-warnings with
   -Xcompiler -Wall,-Wextra, in both IKP_ENABLE modes and both timer kinds.
Each cubin is compiled once for its inputs (nvcc's version, the command,
the sources and headers): build/sass/cache keeps it for the runs after.
Prints "N passed, N failed"; writes the annotated hot-path listing to
build/sass/hotpath.txt.
"""
import glob
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "build", "sass")
NVCC = os.environ.get("NVCC", "nvcc")
NVDISASM = os.environ.get("NVDISASM", "nvdisasm")
ARCH = ["-gencode=arch=compute_90,code=sm_90"]
sys.path.insert(0, os.path.join(ROOT, "tests"))
from harness import check, report  # noqa: E402


_nvcc_version = []


def build_key(cmd, src):
    """what a cubin is built from: nvcc's version, the command (less its
    output), the source and every file it may include"""
    if not _nvcc_version:
        _nvcc_version.append(subprocess.run([NVCC, "--version"], capture_output=True).stdout)
    h = hashlib.sha256(_nvcc_version[0])
    h.update("\0".join(c for c in cmd if c != "-o").encode())
    deps = [src, os.path.join(ROOT, "ikp.h"), os.path.join(ROOT, "ikp_cuda.cuh")]
    deps += sorted(glob.glob(os.path.join(ROOT, "tests", "sass", "*")) + glob.glob(os.path.join(ROOT, "examples", "*.h")))
    for d in deps:
        h.update(d.encode() + b"\0")
        with open(d, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:32]


def nvcc(src, out, *flags):
    """src compiled to the cubin out, warning-free. An object is built once:
    a build of the same inputs (build_key) is copied from build/sass/cache,
    where the first build of them was kept, as make keeps an object whose
    sources have not changed"""
    cmd = [NVCC, "-cubin", "-O3"] + ARCH + ["-Xcompiler", "-Wall,-Wextra", "-Werror", "all-warnings"] + list(flags) + ["-o", out, src]
    kept = os.path.join(OUT, "cache", build_key([c for c in cmd if c != out], src) + ".cubin")
    if os.path.exists(kept):
        shutil.copyfile(kept, out)
        return True
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(" ".join(cmd))
        print(p.stdout + p.stderr)
        return False
    os.makedirs(os.path.dirname(kept), exist_ok=True)
    shutil.copyfile(out, kept + ".tmp")
    os.replace(kept + ".tmp", kept)
    return True


def elf_sections(path):
    """name -> bytes of every section of a 64-bit little-endian ELF file."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not an ELF64 file: " + path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = []
    for i in range(shnum):
        name, typ, flags, addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        hdrs.append((name, typ, off, size))
    stro, strs = hdrs[shstrndx][2], hdrs[shstrndx][3]
    strtab = data[stro:stro + strs]
    out = {}
    for name, typ, off, size in hdrs:
        n = strtab[name:strtab.index(b"\0", name)].decode()
        out[n] = data[off:off + size] if typ != 8 else b""  # SHT_NOBITS
    return out


_cache = {}


def listing(cubin, kind):
    """nvdisasm's listing of a cubin (kind "hex": with each instruction's
    words), made once for its bytes, as its cubin is"""
    with open(cubin, "rb") as f:
        kept = os.path.join(OUT, "cache", hashlib.sha256(f.read()).hexdigest()[:32] + "." + kind)
    if os.path.exists(kept):
        with open(kept) as f:
            return f.read()
    p = subprocess.run([NVDISASM] + (["-hex"] if kind == "hex" else []) + ["-c", cubin], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    os.makedirs(os.path.dirname(kept), exist_ok=True)
    with open(kept + ".tmp", "w") as f:
        f.write(p.stdout)
    os.replace(kept + ".tmp", kept)
    return p.stdout


def sass(cubin, kernel):
    """list of (opcode with modifiers, full text) of one kernel, NOPs dropped;
    a label is kept as ("LABEL", name) in its place."""
    if cubin not in _cache:
        text = listing(cubin, "sass")
        funcs, cur = {}, None
        for line in text.splitlines():
            h = re.match(r"\.text\.(\w+):", line)
            if h:
                cur = funcs.setdefault(h.group(1), [])
                continue
            lab = re.match(r"\s*(\.L_x_\d+):", line)
            if lab and cur is not None:
                cur.append(("LABEL", lab.group(1)))
                continue
            m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
            if not m or cur is None:
                continue
            text = m.group(1)
            words = text.split()
            op = words[1] if words[0].startswith("@") else words[0]
            if op != "NOP":
                cur.append((op, text))
        _cache[cubin] = funcs
    return [x for x in _cache[cubin].get(kernel, []) if x[0] != "LABEL"]


def waits(cubin, kernel):
    """list of (full text, wait mask) of one kernel's instructions, NOPs
    dropped: the mask of scoreboards each waits for before it issues (bits
    116..121 of its 128-bit word, the control bits nvdisasm -hex shows)"""
    out, cur, lines = [], None, listing(cubin, "hex").splitlines()
    for i, line in enumerate(lines):
        h = re.match(r"\.text\.(\w+):", line)
        if h:
            cur = h.group(1)
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]{16} \*/", line)
        if not m or cur != kernel or i + 1 >= len(lines):
            continue
        hi = re.search(r"/\* (0x[0-9a-f]{16}) \*/", lines[i + 1])
        words = m.group(1).split()
        if hi and (words[1] if words[0].startswith("@") else words[0]) != "NOP":
            out.append((m.group(1), int(hi.group(1), 16) >> 52 & 0x3F))
    return out


def regions_wait_nowhere(cubin, what):
    """hot_kernel's regions are empty and back to back: between a begin's
    stamp and its end's, and at the end's stamp, no instruction waits for
    a scoreboard (a store reading its registers, a read coming back): a
    wait there is counted in the region, and one for a store lasts until
    the store has read its registers (BENCHMARKS.md "Cost per event"). One region
    may: the second, where the registers' rotation starts (the one empty
    region of 16 that a GPU reads up to 15 cycles, tests/gpu)."""
    ins = waits(cubin, "hot_kernel")
    st = [i for i, (t, _) in enumerate(ins) if re.match(r"CS2R\.32 R\d+, SR_CLOCKLO$", t)]
    bad = [k for k, (b, e) in enumerate(zip(st[0::2], st[1::2])) if any(ins[j][1] for j in range(b + 1, e + 1))]
    check(len(st) >= 32 and len(bad) <= 1 and (not bad or bad[0] == 1),
          "%s: %d regions, none but the second waits between a begin's stamp and its end's or at the end's (%d do: "
          "regions %s)" % (what, len(st) // 2, len(bad), ", ".join(str(k + 1) for k in bad[:4])))


def not_taken(cubin, kernel):
    """The kernel's instructions with the automatic anchors' bodies left out
    (what a record runs when no anchor is due), and how many such bodies: a
    predicated forward branch over code that reads %globaltimer or calls
    the bursts' one copy, ikpd__auto_tick (the branches inside such a body,
    the anchor's own, are part of it)."""
    sass(cubin, kernel)
    full = _cache[cubin].get(kernel, [])
    where = {t: i for i, (op, t) in enumerate(full) if op == "LABEL"}
    skip, bodies = set(), 0
    for i, (op, t) in enumerate(full):
        m = re.search(r"\((\.L_x_\d+)\)", t)
        if i in skip:
            continue
        if op.startswith("BRA") and t.startswith("@") and m and where.get(m.group(1), -1) > i:
            body = range(i + 1, where[m.group(1)])
            if any("SR_GLOBALTIMER" in full[j][1] or "ikpd__auto_tick" in full[j][1] for j in body):
                skip.update(body)
                bodies += 1
    return [x for i, x in enumerate(full) if i not in skip and x[0] != "LABEL"], bodies


# a stamp's store that never executes: a predicated 32-bit store of zero
def blocking_store(op, text):
    return op in ("STG.E", "STG.E.STRONG.GPU", "ST.E") and text.startswith("@") and text.rstrip().endswith(", RZ")


def record_stamps(ins):
    """indices of the record stamps: 32-bit timer reads (anchors read in
    pairs, a globaltimer read at most two instructions later, or as plain
    64-bit CS2R)"""
    return [i for i, (op, t) in enumerate(ins) if ("SR_CLOCKLO" in t or "SR_GLOBALTIMERLO" in t) and op == "CS2R.32"
            and not any("SR_GLOBALTIMER" in x or "SR_CLOCKLO" in x for _, x in ins[i + 1:i + 2])
            and not any("SR_GLOBALTIMER" in x or "SR_CLOCKLO" in x for _, x in ins[max(0, i - 1):i])]


def store_before(ins, i):
    """1 if, walking back from instruction i, a store (the stamp's own that
    never executes, or a record's) comes before any barrier or other kind of
    instruction, with only register arithmetic between (which a warp issues
    without waiting for a barrier it reached)"""
    for j in range(i - 1, -1, -1):
        op, t = ins[j]
        if op.split(".")[0] in ("STG", "STS", "ST"):
            return 1
        if op.split(".")[0] in ("ISETP", "IMAD", "MOV", "IADD3", "VIADD", "VIADDMNMX", "LOP3", "SEL", "IMNMX", "SHF", "LEA"):
            continue
        return 0
    return 0


def stamps_follow_stores(ins, what):
    """every record stamp comes after a store (its own that never executes,
    or, where the compiler moved that one up, a record's), with only
    register arithmetic between"""
    st = record_stamps(ins)
    bad = [i for i in st if not store_before(ins, i)]
    check(st and not bad, "%s: each of %d record stamps after a store, with only register arithmetic between (%d not: %s)"
          % (what, len(st), len(bad), "; ".join(ins[i - 1][1] + " | " + ins[i][1] for i in bad[:2]) if bad else ""))


def uniform_timer_reads(ins):
    """the clock or %globaltimer reads of ins through the warp's uniform datapath (S2UR)"""
    return sum(1 for op, t in ins if op.startswith("S2UR") and ("SR_CLOCK" in t or "SR_GLOBALTIMER" in t))


def hot_path(src, what, flags, more_bad, sts=False, tag=None, limit=7.0):
    """hot_kernel built with 16 and 32 events (IKP_ANCHOR_EVERY=0, the
    default): at most `limit` SASS instructions per event, none of the
    forbidden opcodes added (and with sts, one STS per event). Writes the
    annotated listing for the plain build. Returns the 32-event cubin."""
    tag = tag if tag is not None else "s" if sts else ""
    c16, c32 = os.path.join(OUT, "hot%s16.cubin" % tag), os.path.join(OUT, "hot%s32.cubin" % tag)
    flags = ["-DIKP_ANCHOR_EVERY=0"] + list(flags)
    if not (nvcc(src, c16, "-DHOT_EVENTS=16", *flags) and nvcc(src, c32, "-DHOT_EVENTS=32", *flags)):
        check(False, "hotpath.cu builds (%s)" % what)
        return c32
    a, b = sass(c16, "hot_kernel"), sass(c32, "hot_kernel")
    per_event = (len(b) - len(a)) / 16.0
    check(0 < per_event <= limit, "%s: %.2f SASS instructions per event (at most %g)" % (what, per_event, limit))
    s2ur = uniform_timer_reads(b)
    check(s2ur == 0, "%s: no timer read through the uniform datapath (%d S2UR)" % (what, s2ur))
    stamps_follow_stores(b, what)
    if tag in ("", "s"):
        regions_wait_nowhere(c32, what)
    if sts:
        n = sum(1 for op, _ in b if op.startswith("STS")) - sum(1 for op, _ in a if op.startswith("STS"))
        check(n == 16, "%s: one STS per event (%d more with 16 more events)" % (what, n))
    for bad in ["BRA", "BSSY", "BSYNC", "MEMBAR", "ATOM", "ATOMG", "RED", "BAR", "WARPSYNC"] + more_bad:
        na = sum(1 for op, t in a if op.split(".")[0] == bad and not blocking_store(op, t))
        nb = sum(1 for op, t in b if op.split(".")[0] == bad and not blocking_store(op, t))
        check(na == nb, "%s: events add no %s (%d with 16 events, %d with 32; the stamps' stores that never execute not counted)" % (what, bad, na, nb))
    if not sts and not tag:  # annotated listing: the instructions between two timer reads in the middle
        stamps = [i for i, (op, t) in enumerate(b) if "SR_CLOCKLO" in t]
        mid = len(stamps) // 2
        with open(os.path.join(OUT, "hotpath.txt"), "w") as f:
            f.write("hot_kernel, 32 events, sm_90, -O3: %d instructions, 16 events: %d; per event %.2f\n" % (len(b), len(a), per_event))
            for i in range(stamps[mid - 1], stamps[mid + 1]):
                f.write("  %s\n" % b[i][1])
    return c32


def anchored_path(src, what, flags, sts=False):
    """With automatic anchors (IKP_ANCHOR_EVERY=65536): the same kernel's
    path when no anchor is due adds at most 13 instructions per event on
    average (the compare with the due stamp and the branch over the anchor
    on each end), one anchor body per end (8 of the 16 added events are
    ends), and no memory barrier, atomic or barrier."""
    c16, c32 = os.path.join(OUT, "hota%s16.cubin" % what[:1]), os.path.join(OUT, "hota%s32.cubin" % what[:1])
    flags = ["-DIKP_ANCHOR_EVERY=65536"] + list(flags)
    if not (nvcc(src, c16, "-DHOT_EVENTS=16", *flags) and nvcc(src, c32, "-DHOT_EVENTS=32", *flags)):
        check(False, "hotpath.cu builds (%s)" % what)
        return
    (a, na), (b, nb) = not_taken(c16, "hot_kernel"), not_taken(c32, "hot_kernel")
    per_event = (len(b) - len(a)) / 16.0
    check(0 < per_event <= 13, "%s: %.2f SASS instructions per event when no anchor is due (at most 13)" % (what, per_event))
    check(nb - na == 8, "%s: one automatic-anchor branch per end (%d more with 8 more ends)" % (what, nb - na))
    if sts:
        n = sum(1 for op, _ in b if op.startswith("STS")) - sum(1 for op, _ in a if op.startswith("STS"))
        check(n == 16, "%s: one STS per event when no anchor is due (%d more with 16 more events)" % (what, n))
    for bad in ["MEMBAR", "ATOM", "ATOMG", "RED", "BAR", "WARPSYNC"]:
        n = sum(1 for op, _ in b if op.split(".")[0] == bad) - sum(1 for op, _ in a if op.split(".")[0] == bad)
        check(n == 0, "%s: events add no %s" % (what, bad))


def main():
    os.makedirs(OUT, exist_ok=True)
    src = os.path.join(ROOT, "tests", "sass", "kernels.cu")
    hot = os.path.join(ROOT, "tests", "sass", "hotpath.cu")

    # 0. the wire-format constants are the same in both headers
    def wire(path):
        return sorted(re.sub(r"\s+", " ", re.sub(r"/\*.*?\*/", "", l)).strip()
                      for l in open(os.path.join(ROOT, path)) if l.startswith("#define IKP_WIRE_"))
    wh, wc = wire("ikp.h"), wire("ikp_cuda.cuh")
    check(len(wh) >= 15 and wh == wc, "IKP_WIRE_* definitions agree between ikp.h and ikp_cuda.cuh (%d vs %d)" % (len(wh), len(wc)))

    # 1. byte identity with IKP_ENABLE=0
    plain, off, on = (os.path.join(OUT, n + ".cubin") for n in ("plain", "disabled", "enabled"))
    ok = nvcc(src, plain, "-DIKP_PLAIN") and nvcc(src, off, "-DIKP_ENABLE=0") and nvcc(src, on)
    check(ok, "kernels.cu builds in all three ways, warning-free")
    if ok:
        sp, so, se = elf_sections(plain), elf_sections(off), elf_sections(on)
        for k in ("simple_kernel", "warp_specialized_kernel", "persistent_kernel"):
            name = ".text." + k
            check(name in sp and len(sp[name]) > 0, "%s present in the plain build" % k)
            check(sp.get(name) == so.get(name), "%s: .text with IKP_ENABLE=0 is byte-identical to the kernel without IKP lines (%d vs %d bytes)" % (k, len(sp.get(name, b"")), len(so.get(name, b""))))
            check(se.get(name) != sp.get(name), "%s: profiling on changes the code (the comparison can fail)" % k)

    # 1b. a production build of a program that holds ikp.h's implementation
    # (examples/minimal.cu) keeps none of IKP's device code: no kernel or
    # device function of ikp.h's helpers in its cubin, or in the executable
    # as cuobjdump lists it; with IKP on they are there (the check can fail)
    ex = os.path.join(ROOT, "examples", "minimal.cu")
    names = {}
    for how, flags in (("off", ["-DIKP_ENABLE=0"]), ("on", [])):
        cub = os.path.join(OUT, "minimal_%s.cubin" % how)
        if check(nvcc(ex, cub, *flags), "examples/minimal.cu builds as a cubin (%s)" % how):
            names[how] = [n for n in elf_sections(cub) if n.startswith(".text.")]
    if len(names) == 2:
        ikp_off = [n for n in names["off"] if "ikp" in n]
        check(names["off"] and not ikp_off, "IKP_ENABLE=0: no IKP device code in the cubin (%s)" % ikp_off)
        check(any("ikp__" in n for n in names["on"]), "IKP on: the helpers' kernels are in the cubin (%s)" % names["on"])
    cuobjdump = os.path.join(os.path.dirname(NVDISASM), "cuobjdump")
    exe = os.path.join(OUT, "minimal_off")
    cmd = [NVCC, "-O3"] + ARCH + ["-DIKP_ENABLE=0", "-o", exe, ex]
    kept = os.path.join(OUT, "cache", build_key(cmd[:-3] + [ex], ex) + ".exe")
    built = os.path.exists(kept) or subprocess.run(cmd, capture_output=True).returncode == 0
    if built and not os.path.exists(kept):  # the program built once for its inputs, as the cubins are
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        shutil.copyfile(exe, kept + ".tmp")
        os.replace(kept + ".tmp", kept)
    elif built:
        shutil.copyfile(kept, exe)
    if check(built, "examples/minimal.cu builds with IKP_ENABLE=0"):
        p = subprocess.run([cuobjdump, "-sass", exe], capture_output=True, text=True)
        funcs = re.findall(r"Function : (\S+)", p.stdout)
        check(p.returncode == 0 and funcs and not [f for f in funcs if "ikp" in f],
              "IKP_ENABLE=0: cuobjdump lists no IKP function in the executable (%s)" % funcs)

    # 4. warning-free in every mode
    for flags in (["-DIKP_TIMER=IKP_TIMER_GLOBAL"], ["-DIKP_RING=1"], ["-DIKP_ENABLE=0", "-DIKP_RING=1"],
                  ["-DIKP_STAGED=1"], ["-DIKP_STAGED=1", "-DIKP_RING=1"], ["-DIKP_ENABLE=0", "-DIKP_STAGED=1"]):
        check(nvcc(src, os.path.join(OUT, "mode.cubin"), *flags), "kernels.cu warning-free with " + " ".join(flags))

    # 2. per-event cost, then the same for the staged hot path: a shared-memory
    # store per event and no global or generic one
    h32 = hot_path(hot, "hot path", [], [], limit=6.0)
    hot_path(hot, "staged hot path", ["-DIKP_STAGED=1"], ["STG", "ST"], sts=True, limit=6.5)
    # a begin stored at once is a record of its own: its compare and decrement too
    hot_path(hot, "hot path, IKP_DEFER_BEGIN=0", ["-DIKP_DEFER_BEGIN=0"], [], tag="n", limit=6.5)
    hot_path(hot, "hot path, IKP_TICKS=0", ["-DIKP_TICKS=0"], [], tag="t", limit=5.25)

    # 2b. the kernels make bench-gpu times (bench/events.cu, every shape), in its four builds:
    # no record reads a timer through the warp's uniform datapath (S2UR of the clock or of
    # %globaltimer: the staged build once read the ticks' %globaltimer so in one shape, and a move
    # after it waited for that read in every loop iteration)
    ev = os.path.join(ROOT, "bench", "events.cu")
    for what, flags in (("default", []), ("staged", ["-DIKP_STAGED=1"]), ("ring", ["-DIKP_RING=1"]),
                        ("staged ring", ["-DIKP_STAGED=1", "-DIKP_RING=1"])):
        cub = os.path.join(OUT, "events_%s.cubin" % what.replace(" ", "_"))
        if not nvcc(ev, cub, "-std=c++17", "-I" + ROOT, *flags):
            check(False, "bench/events.cu builds warning-free (%s)" % what)
            continue
        sass(cub, "")
        kernels = sorted(k for k in _cache[cub] if k.startswith("_Z13events_kernelILb1"))
        uniform = sum(uniform_timer_reads(sass(cub, k)) for k in kernels)
        check(len(kernels) == 4 and uniform == 0,
              "bench/events.cu, %s: no timer read through the uniform datapath in its %d recording kernels "
              "(%d S2UR)" % (what, len(kernels), uniform))
    anchored_path(hot, "hot path with automatic anchors", [])
    anchored_path(hot, "staged hot path with automatic anchors", ["-DIKP_STAGED=1"], sts=True)

    # stamps after waits, in every build: each right after its store, none
    # straight after a BAR.SYNC
    for flags in ([], ["-DIKP_STAGED=1"], ["-DIKP_RING=1"], ["-DIKP_STAGED=1", "-DIKP_RING=1"],
                  ["-DIKP_TIMER=IKP_TIMER_GLOBAL"], ["-DIKP_DEFER_BEGIN=0"], ["-DIKP_TICKS=0"]):
        what = "wait_kernel" + ("".join(" " + f[2:] for f in flags) or " default")
        cub = os.path.join(OUT, "wait.cubin")
        if not nvcc(hot, cub, "-DHOT_EVENTS=2", *flags):
            check(False, "hotpath.cu builds (%s)" % what)
            continue
        _cache.pop(cub, None)
        ins = sass(cub, "wait_kernel")
        stamps_follow_stores(ins, what)
        bars = [i for i, (op, t) in enumerate(ins) if op.startswith("BAR.")]
        check(len(bars) >= 3, "%s: its three barriers found (%d)" % (what, len(bars)))
        shadow = [i for i in record_stamps(ins) if i > 0 and ins[i - 1][0].startswith("BAR.")]
        check(not shadow, "%s: no record stamp right after a barrier (%d)" % (what, len(shadow)))

    # 3. region work stays between its stamps
    for kern, kinds in (("region_pinned_kernel", ("FFMA",)), ("region_mem_kernel", ("LDG.E", "STG.E"))):
        ins = sass(h32, kern)
        # record stamps read the low clock word (CS2R.32 / S2UR); anchors read it
        # in pairs, a globaltimer read at most two instructions later, or as a
        # plain 64-bit CS2R
        stamps = [i for i, (op, t) in enumerate(ins) if "SR_CLOCKLO" in t and op != "CS2R"
                  and not any("SR_GLOBALTIMER" in x for _, x in ins[i + 1:i + 3])]
        work = [i for i, (op, t) in enumerate(ins) if op in kinds and not blocking_store(op, t)]
        check(len(stamps) == 2, "%s: two record stamps found (%d)" % (kern, len(stamps)))
        check(len(work) >= len(kinds), "%s: region work found (%d)" % (kern, len(work)))
        if len(stamps) >= 2 and work:
            inside = all(stamps[0] < i < stamps[-1] for i in work)
            check(inside, "%s: all %d %s between the begin and end stamps (stamps at %d, %d; work %d..%d)" % (kern, len(work), "/".join(kinds), stamps[0], stamps[-1], work[0], work[-1]))

    return report()


if __name__ == "__main__":
    sys.exit(main())
