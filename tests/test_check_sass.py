#!/usr/bin/env python3
"""ikp check-sass on compiled kernels (needs nvcc, no GPU).

tests/sass/regions.cu built with each recorder variant; its SASS listed by
nvdisasm and by cuobjdump (SASS_TOOLS: the folder holding both, filled by
tests/get_sass_tools.sh), and the binary given to the tool directly:
- the unpinned kernel of four regions of four FMAs is flagged (in the
  default build, its first three events: the compiler moves their FMAs to
  the fourth), with event ids constant and computed at run time;
- the same kernel with IKP_PIN is not; nor is a region around a load and a
  store; a region with nothing in it is;
- the examples (built by make test) are not flagged, nor are make
  bench-gpu's events kernels, except the build with the work not pinned;
- bad input and bad usage get an exit status and a message naming them;
- kernels are named demangled, as binutils' c++filt names them (a name
  that does not demangle, or whose demangling blows up, as it is), and as
  the listing has them with --mangled.
Prints "N passed, N failed".
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, IKP, check, report  # noqa: E402

NVCC = os.environ.get("NVCC", "nvcc")
TOOLS = os.path.abspath(os.environ.get("SASS_TOOLS", os.path.join(ROOT, "build", "tools")))
OUT = os.path.join(ROOT, "build", "check-sass")
SRC = os.path.join(ROOT, "tests", "sass", "regions.cu")
ENV = dict(os.environ, PATH=TOOLS + os.pathsep + os.environ.get("PATH", ""))
ENV.pop("IKP_CUOBJDUMP", None)

VARIANTS = {
    "default": [],
    "staged": ["-DIKP_STAGED=1"],
    "ring": ["-DIKP_RING=1"],
    "staged_ring": ["-DIKP_STAGED=1", "-DIKP_RING=1"],
    "globaltimer": ["-DIKP_TIMER=IKP_TIMER_GLOBAL"],
    "begin_at_once": ["-DIKP_DEFER_BEGIN=0"],
}
# the kernels of regions.cu as the listing names them, and as the tool does (c++filt's names)
DEMANGLED = {
    "_Z11fma_regionsILb0ELb0EEvPfiPm": "void fma_regions<false, false>(float*, int, unsigned long*)",
    "_Z11fma_regionsILb1ELb0EEvPfiPm": "void fma_regions<true, false>(float*, int, unsigned long*)",
    "_Z11fma_regionsILb0ELb1EEvPfiPm": "void fma_regions<false, true>(float*, int, unsigned long*)",
    "_Z11fma_regionsILb1ELb1EEvPfiPm": "void fma_regions<true, true>(float*, int, unsigned long*)",
}
UNPINNED, PINNED = DEMANGLED["_Z11fma_regionsILb0ELb0EEvPfiPm"], DEMANGLED["_Z11fma_regionsILb1ELb0EEvPfiPm"]
UNPINNED_RT, PINNED_RT = DEMANGLED["_Z11fma_regionsILb0ELb1EEvPfiPm"], DEMANGLED["_Z11fma_regionsILb1ELb1EEvPfiPm"]
# a line begins with the kernel's name, which may hold spaces but not ": "
LINE = re.compile(r"^(.+?): (event (\d+)(?: \([^)]*\))?|event computed at run time): (\d+) of (\d+) regions? holds? ")
SUMMARY = re.compile(r"(\d+) regions? checked, (\d+) holds? no")
LIST = re.compile(r"^(.+?): (event (\d+)(?: \([^)]*\))?|event computed at run time): stamps at /\*[0-9a-f]+\*/ and "
                  r"/\*[0-9a-f]+\*/, (\d+) instructions? of the kernel's between$")
CXXFILT = shutil.which("c++filt")


def tool(*args, stdin=None, env=ENV):
    p = subprocess.run([IKP, "check-sass"] + list(args), capture_output=True, input=stdin, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def program_listing(path):
    """cuobjdump -sass of a program, made once for its bytes (a program's
    listing takes cuobjdump 2 s; the tool reads it from its standard input
    as it reads cuobjdump's output through a pipe)"""
    with open(path, "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()[:32]
    kept = os.path.join(OUT, "programs", os.path.basename(path) + "." + key + ".txt")
    if os.path.exists(kept):  # made before: the same check as when made
        with open(kept, "rb") as f:
            text = f.read()
        check(b"CLOCKLO" in text, "%s: the listing kept for it reads the clock" % path)
        return text
    p = subprocess.run([os.path.join(TOOLS, "cuobjdump"), "-sass", path], capture_output=True, env=ENV)
    if not check(p.returncode == 0 and b"CLOCKLO" in p.stdout, "cuobjdump -sass %s: %s" % (path, p.stderr[-500:])):
        return p.stdout
    os.makedirs(os.path.dirname(kept), exist_ok=True)
    with open(kept + ".tmp", "wb") as f:
        f.write(p.stdout)
    os.replace(kept + ".tmp", kept)
    return p.stdout


def build(name, flags):
    """the variant's cubin, rebuilt when older than its sources"""
    cubin = os.path.join(OUT, name + ".cubin")
    srcs = [SRC, os.path.join(ROOT, "ikp_cuda.cuh")]
    if os.path.exists(cubin) and all(os.path.getmtime(cubin) >= os.path.getmtime(s) for s in srcs):
        # built before: the same count of checks as a build (an empty or cut file would not be a cubin)
        with open(cubin, "rb") as f:
            ok = f.read(4) == b"\x7fELF"
        return cubin if check(ok, "%s: the cubin built before is an ELF file" % name) else None
    cmd = [NVCC, "-cubin", "-O3", "-std=c++17", "-gencode=arch=compute_90,code=sm_90"] + flags + ["-o", cubin + ".tmp", SRC]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if not check(p.returncode == 0, "nvcc %s: %s" % (name, p.stderr[-2000:])):
        return None
    os.replace(cubin + ".tmp", cubin)
    return cubin


def listing(cubin, how):
    """the cubin's listing by nvdisasm or cuobjdump, made once for the
    cubin's bytes (kept beside it, as the cubin is kept for its sources)"""
    cmd = [os.path.join(TOOLS, "nvdisasm"), "-c", cubin] if how == "nvdisasm" else \
          [os.path.join(TOOLS, "cuobjdump"), "-sass", cubin]
    path = cubin + "." + how + ".txt"
    with open(cubin, "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()
    if os.path.exists(path + ".key") and open(path + ".key").read() == key:
        text, err, rc = open(path).read(), "", 0
    else:
        p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
        text, err, rc = p.stdout, p.stderr, p.returncode
        with open(path, "w") as f:
            f.write(text)
        if rc == 0:
            with open(path + ".key", "w") as f:
                f.write(key)
    check(rc == 0 and ("CLOCKLO" in text or "GLOBALTIMERLO" in text), "%s of %s: %s" % (how, cubin, err[-500:]))
    return path


def matches(out, pattern, value):
    """{(kernel, event or None): [value(match), ...]} over the lines pattern matches"""
    got = {}
    for ln in out.splitlines():
        m = pattern.match(ln)
        if m:
            got.setdefault((m.group(1), int(m.group(3)) if m.group(3) else None), []).append(value(m))
    return got


def flagged(out):
    """{(kernel, event or None): (empty, total)} from the tool's report lines"""
    return {k: v[-1] for k, v in matches(out, LINE, lambda m: (int(m.group(4)), int(m.group(5)))).items()}


def regions(out):
    """{(kernel, event or None): [instructions between, ...]} from --list"""
    return matches(out, LIST, lambda m: int(m.group(4)))


def check_variant(name, flags):
    cubin = build(name, flags)
    if not cubin:
        return
    outs = {}
    for how in ("nvdisasm", "cuobjdump"):
        path = listing(cubin, how)
        rc, out, err = tool("--list", "--names", "e0,e1,e2,e3,e4,e5,e6,nothing,memory", path)
        outs[how] = out
        what = "%s (%s)" % (name, how)
        check(rc == 3, "%s: exit status %d, want 3 (empty regions): %s" % (what, rc, err))
        # the names: demangled; with --mangled as the listing has them, the lines otherwise the same
        check(not re.search(r"^_Z", out, re.M) and UNPINNED + ": " in out,
              "%s: kernel names not demangled: %s" % (what, out))
        rc, mangled, err = tool("--list", "--mangled", "--names", "e0,e1,e2,e3,e4,e5,e6,nothing,memory", path)
        for m, d in DEMANGLED.items():
            check(m + ": " in mangled, "%s --mangled: %s not named" % (what, m))
            mangled = mangled.replace(m + ": ", d + ": ")
        check(rc == 3 and mangled == out, "%s: --mangled differs in more than the names: %d %r" % (what, rc, err))
        got, regs = flagged(out), regions(out)
        # the unpinned kernel: flagged; in the default build events 0-2 exactly
        unpinned = {ev for (k, ev) in got if k == UNPINNED}
        check(unpinned and unpinned <= {0, 1, 2, 3}, "%s: unpinned kernel not flagged: %s" % (what, unpinned))
        if name == "default":
            check(unpinned == {0, 1, 2}, "%s: unpinned kernel's empty events %s, want 0, 1, 2" % (what, unpinned))
            check(all(got[(UNPINNED, ev)][0] == got[(UNPINNED, ev)][1] for ev in unpinned),
                  "%s: some regions of the unpinned events hold work: %s" % (what, got))
        if name in ("default", "staged", "ring", "staged_ring", "globaltimer"):
            check((UNPINNED_RT, None) in got, "%s: unpinned kernel with run-time ids not flagged" % what)
        # pinned: every event checked, none flagged
        for kern in (PINNED, PINNED_RT):
            check(not any(k == kern for (k, _) in got), "%s: pinned kernel %s flagged: %s" % (what, kern, got))
            n = sum(len(v) for (k, _), v in regs.items() if k == kern)
            check(n >= 4, "%s: %d regions of %s checked, want 4 or more" % (what, n, kern))
        check(all(v >= 4 for ev in range(4) for v in regs.get((PINNED, ev), [])) and
              all((PINNED, ev) in regs for ev in range(4)),
              "%s: a pinned region holds fewer than its 4 FMAs: %s" % (what, {e: regs.get((PINNED, e)) for e in range(4)}))
        # nothing in event 7 (named "nothing"), a load and a store in 8
        check(got.get(("empty_and_memory", 7)) == (1, 1), "%s: empty region not flagged: %s" % (what, got))
        check(("empty_and_memory", 8) not in got and regs.get(("empty_and_memory", 8), [0])[0] >= 2,
              "%s: the region around memory: %s" % (what, regs.get(("empty_and_memory", 8))))
        check("event 7 (nothing): 1 of 1 region holds no instruction" in out, "%s: event name in the report" % what)
        check(not any(k == "plain" for (k, _) in regs), "%s: a region found in the kernel without IKP" % what)
        check("IKP_PIN" in out, "%s: the advice names IKP_PIN" % what)
    check(flagged(outs["nvdisasm"]) == flagged(outs["cuobjdump"]),
          "%s: nvdisasm and cuobjdump listings read differently" % name)
    # the binary itself: the tool runs cuobjdump
    rc, out, err = tool("--list", "--names", "e0,e1,e2,e3,e4,e5,e6,nothing,memory", cubin)
    check(rc == 3 and out == outs["cuobjdump"], "%s: the cubin read through cuobjdump: %d %s" % (name, rc, err))


def check_examples():
    for ex in ("minimal", "warp_specialized", "persistent", "peer_ring", "gemm"):
        path = os.path.join(ROOT, "build", ex)
        if not check(os.path.exists(path), "build/%s missing (make test builds it)" % ex):
            continue
        # minimal read as a program (the tool runs cuobjdump), the others' listings given
        rc, out, err = tool(path) if ex == "minimal" else tool("-", stdin=program_listing(path))
        m = SUMMARY.search(out)
        check(rc == 0 and m and int(m.group(1)) >= 3 and m.group(2) == "0",
              "example %s: exit %d, %s %s" % (ex, rc, out, err))
        if ex == "minimal":  # one kernel of its own; ikp.h's helper kernels are not counted as the user's
            check("ikp check-sass: 1 kernel (and 4 of ikp.h's own, left out)," in out,
                  "example minimal: its one kernel counted, ikp.h's four said apart (%s)" % out.strip()[-200:])


def check_bad_input(tmp):
    def write(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path
    cases = [
        (write("empty.txt", b""), 1, "no SASS instructions found"),
        (write("text.txt", b"hello\nworld\n"), 1, "no SASS instructions found"),
        (write("long.txt", b"/*0000*/ NOP ;" + b" " * 10000 + b"\n"), 1, "line 1 is longer than 4096"),
        (write("l4097.txt", b"x" * 4097 + b"\n"), 1, "line 1 is longer than 4096"),
        (write("l4096.txt", b"x" * 4096 + b"\n"), 1, "no SASS instructions found"),  # 4096 is not longer
        (write("nul.txt", b"\0" * 100000), 1, "line 1 holds a NUL byte"),
        (write("noikp.txt", b"\tFunction : k\n        /*0000*/    MOV R1, c[0x0][0x28] ;\n        /*0010*/    EXIT ;\n"),
         1, "no IKP region found"),
        (write("binary.bin", bytes(range(256)) * 4), 1, "line 1 holds a NUL byte"),
        (os.path.join(tmp, "missing.txt"), 1, "missing.txt: cannot open"),
    ]
    for path, want, msg in cases:
        rc, out, err = tool(path)
        check(rc == want and msg in err, "%s: exit %d (want %d), stderr %r" % (os.path.basename(path), rc, want, err))
    # an ELF file when cuobjdump cannot be run
    elf = write("fake.elf", b"\x7fELF" + b"\0" * 60)
    rc, out, err = tool(elf, env=dict(ENV, IKP_CUOBJDUMP=os.path.join(tmp, "no-such-cuobjdump")))
    check(rc == 1 and "cannot run" in err and "IKP_CUOBJDUMP" in err, "ELF without cuobjdump: %d %r" % (rc, err))
    rc, out, err = tool(elf)
    check(rc == 1 and "failed" in err, "an ELF cuobjdump refuses: %d %r" % (rc, err))
    # a listing refused while cuobjdump still writes: the listing's fault is said, not only "cuobjdump failed"
    fake = write("fake-cuobjdump", b"#!/bin/sh\nexec yes " + b"x" * 5000 + b"\n")
    os.chmod(fake, 0o755)
    try:
        p = subprocess.run([IKP, "check-sass", elf], capture_output=True, timeout=30, env=dict(ENV, IKP_CUOBJDUMP=fake))
        err = p.stderr.decode()
        check(p.returncode == 1 and "line 1 is longer than 4096" in err and "failed" not in err,
              "a listing refused mid-stream: its own fault said: %d %r" % (p.returncode, err))
    except subprocess.TimeoutExpired:
        check(False, "a listing refused mid-stream: the tool blocked")
    # no cuobjdump on PATH: the one make deps put in build/tools, beside the tool, is used
    path = "/usr/bin:/bin"
    cubin = build("default", [])
    if cubin:
        rc, out, err = tool(cubin, env=dict(ENV, PATH=path))
        check(SUMMARY.search(out) is not None and "cannot run" not in err,
              "no cuobjdump on PATH (%s: %s): build/tools' used: %d %r" % (
                  path, shutil.which("cuobjdump", path=path), rc, err))
    # devices, FIFOs and directories: refused at once, never read or waited on
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    for what, path, needle in (("/dev/zero", "/dev/zero", "a character device"), ("a FIFO", fifo, "a FIFO"),
                               ("a directory", tmp, "a directory")):
        try:
            p = subprocess.run([IKP, "check-sass", path], capture_output=True, timeout=20, env=ENV)
            check(p.returncode == 1 and needle in p.stderr.decode(), "%s: refused (%r)" % (what, p.stderr))
        except subprocess.TimeoutExpired:
            check(False, "%s: the tool blocked" % what)
    with open("/dev/zero", "rb") as zero:
        try:
            p = subprocess.run([IKP, "check-sass", "-"], stdin=zero, capture_output=True, timeout=20, env=ENV)
            check(p.returncode == 1 and "standard input is a character device" in p.stderr.decode(),
                  "/dev/zero on standard input: refused (%r)" % p.stderr)
        except subprocess.TimeoutExpired:
            check(False, "/dev/zero on standard input: the tool read on")
    for args, msg in ((["--bogus", elf], "unknown option"), ([elf, elf], "one file"), ([], "needs a file"),
                      (["--names"], "--names needs a value")):
        rc, out, err = tool(*args)
        check(rc == 2 and msg in err, "usage %s: exit %d, %r" % (args, rc, err))
    # standard input
    lst = os.path.join(OUT, "default.cubin.nvdisasm.txt")
    if os.path.exists(lst):
        with open(lst, "rb") as f:
            rc, out, err = tool("-", stdin=f.read())
        check(rc == 3 and (UNPINNED, 0) in flagged(out), "a listing on standard input: %d %r" % (rc, err))


def exponential_name(steps):
    """a valid mangled name whose demangled length doubles with each step
    (each function type takes the previous one twice): some hundred bytes,
    and gigabytes demangled"""
    def sub(k):
        return "S_" if k == 0 else "S%s_" % "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[k - 1]
    return "_Z1fFviiE" + "".join("Fv%s%sE" % (sub(k), sub(k)) for k in range(steps))


def check_names():
    """kernel names: demangled as c++filt names them, in a listing made of
    the empty region of regions.cu's empty_and_memory under other names"""
    lst = os.path.join(OUT, "default.cubin.cuobjdump.txt")
    if not check(os.path.exists(lst), "names: %s missing (check_variant writes it)" % lst):
        return
    with open(lst) as f:
        text = f.read()
    m = re.search(r"^\s*Function : empty_and_memory\n(.*?)^\s*\.{10}\n", text, re.M | re.S)
    if not check(m is not None, "names: empty_and_memory's body not found in the cuobjdump listing"):
        return
    body = m.group(1) + "\t\t..........\n"

    def run(names, *args):
        """the listing of the names on standard input: exit status, output, errors, the kernels flagged"""
        src = "".join("\t\tFunction : %s\n%s" % (n, body) for n in names)
        try:
            p = subprocess.run([IKP, "check-sass"] + list(args) + ["-"], capture_output=True, input=src.encode(),
                               env=ENV, timeout=120)
        except subprocess.TimeoutExpired:
            return -1, "", "timed out after 120 s", []
        return p.returncode, p.stdout.decode(), p.stderr.decode(), [k for (k, ev) in flagged(p.stdout.decode())]
    long_name = "_ZN" + "".join("13namespace_%03d" % i for i in range(60)) + "6kernelILi7EEEvPf"  # 880 bytes
    demangles = [
        "_Z8ikp_workILi1EEvPy",  # void ikp_work<1>(unsigned long long*)
        "_ZN5outer5innerIJifEE3runILi4ELb1EEEvPKfifj",  # a member template of a variadic class template
        "_ZN12_GLOBAL__N_16kernelEv",  # (anonymous namespace)::kernel()
        "_Z6launchIZ3usevEUlvE_EvT_",  # a lambda as the template argument
        "_Z2skINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEvPKT_",
        long_name,  # longer than a name's 511 bytes before
    ]
    short_std = ["_Z2skISoEvPKT_"]  # std::ostream: c++filt -i's short form of the standard abbreviation So
    as_is = ["_Z", "_Zfoo", "i", "plain_kernel", "_Z1fv$x", "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"]
    if not check(CXXFILT is not None,
                 "names: c++filt (binutils) not found: the names cannot be compared (make check-tools says so)"):
        return

    def cxxfilt(names, *args):
        p = subprocess.run([CXXFILT] + list(args), capture_output=True, text=True,
                           input="".join(n + "\n" for n in names))
        got = p.stdout.split("\n")[:len(names)]
        check(p.returncode == 0 and len(got) == len(names), "c++filt %s: %d %r" % (args, p.returncode, p.stderr))
        return got
    want = dict(zip(demangles + as_is, cxxfilt(demangles + as_is)))
    want.update(zip(short_std, cxxfilt(short_std, "-i")))
    check(want.get("_Z8ikp_workILi1EEvPy") == "void ikp_work<1>(unsigned long long*)" and
          want.get(long_name, "").endswith("::namespace_059::kernel<7>(float*)"),
          "c++filt's names: %r" % want.get("_Z8ikp_workILi1EEvPy"))
    check(all(want.get(n) == n for n in as_is), "c++filt changed a name that does not demangle: %r" %
          {n: want.get(n) for n in as_is})
    check(all(want.get(n) != n for n in demangles + short_std), "c++filt left a name mangled")
    check(cxxfilt(list(DEMANGLED)) == list(DEMANGLED.values()), "regions.cu's kernels as c++filt names them")
    names = demangles + short_std + as_is
    rc, out, err, got = run(names)
    check(rc == 3 and sorted(got) == sorted(want[n] for n in names),
          "names demangled as c++filt: exit %d %r\n  got  %s\n  want %s" % (rc, err, sorted(got),
                                                                          sorted(want[n] for n in names)))
    check("ikp check-sass: %d kernels," % len(names) in out, "names: kernels counted: %r" % out[-300:])
    rc, out, err, got = run(names, "--mangled")
    check(rc == 3 and sorted(got) == sorted(names), "--mangled: names as in the listing: %d %r %s" % (rc, err, got))
    # demangled to gigabytes: shown as it is, in about a second; after four such names the rest are not tried
    bomb = [exponential_name(30 + i) for i in range(5)]
    t0 = time.time()
    rc, out, err, got = run([bomb[0], "_Z8ikp_workILi1EEvPy"])
    check(rc == 3 and sorted(got) == sorted([bomb[0], "void ikp_work<1>(unsigned long long*)"]) and
          time.time() - t0 < 30, "a name that demangles to gigabytes: as it is, the next demangled: %d %r %s %.1f s" %
          (rc, err, got, time.time() - t0))
    t0 = time.time()
    rc, out, err, got = run(bomb + ["_Z8ikp_workILi1EEvPy"])
    check(rc == 3 and sorted(got) == sorted(bomb + ["_Z8ikp_workILi1EEvPy"]) and time.time() - t0 < 60,
          "five such names: as they are, and the rest of the listing's names too: %d %r %s %.1f s" %
          (rc, err, got, time.time() - t0))


def check_bench():
    """make bench-gpu's kernels measure regions that hold their work: pinned,
    none is flagged; the build with the work not pinned is"""
    for prog in ("default", "ring", "staged", "staged_ring", "staged_flush_each", "default_unpinned"):
        path = os.path.join(ROOT, "build", "events_" + prog)
        if not check(os.path.exists(path), "build/events_%s missing (make test builds it)" % prog):
            continue
        listing = program_listing(path)
        rc, out, err = tool("-", stdin=listing)
        m = SUMMARY.search(out)
        if prog == "default_unpinned":
            check(rc == 3 and m and int(m.group(2)) >= 6,
                  "events_%s: want its R = 4 kernels flagged: exit %d, %s %s" % (prog, rc, out, err))
        else:
            check(rc == 0 and m and int(m.group(1)) >= 10 and m.group(2) == "0",
                  "events_%s: exit %d, %s %s" % (prog, rc, out, err))
            # and every region holds at least its 4 FMAs (the fewest in any shape)
            rc, out, err = tool("--list", "-", stdin=listing)
            counts = [int(x.group(4)) for x in (LIST.match(line) for line in out.splitlines()) if x]
            check(rc == 0 and len(counts) >= 10 and min(counts) >= 4,
                  "events_%s --list: exit %d, instructions between stamps %s %s" % (prog, rc, counts, err))


def main():
    os.makedirs(OUT, exist_ok=True)
    if not check(os.path.exists(os.path.join(TOOLS, "nvdisasm")) and os.path.exists(os.path.join(TOOLS, "cuobjdump")),
                 "nvdisasm and cuobjdump not in %s (tests/get_sass_tools.sh puts them there)" % TOOLS):
        return report()
    for name, flags in VARIANTS.items():
        check_variant(name, flags)
    check_names()
    check_examples()
    check_bench()
    with tempfile.TemporaryDirectory() as tmp:
        check_bad_input(tmp)
    return report()


if __name__ == "__main__":
    sys.exit(main())
