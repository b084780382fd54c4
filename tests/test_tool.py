#!/usr/bin/env python3
"""End-to-end tests of build/ikp: every JSON output goes through a strict
parser (no NaN/Infinity, no duplicate keys, no control bytes, valid UTF-8),
Chrome traces are checked for proper nesting per (pid, tid), and bad input
must give a non-zero exit, one error line, and no output file."""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import IKP, ROOT, check, report, run, strict_json  # noqa: E402

SAMPLE = os.path.join(ROOT, "examples", "data", "sample.ikp")


def us_to_ns(x):
    return int(round(x * 1000))


def check_trace(path, what):
    """Strict parse + structural checks; returns the list of events."""
    try:
        with open(path, "rb") as f:
            doc = strict_json(f.read())
    except (ValueError, OSError) as e:
        check(False, "%s: strict JSON parse: %s" % (what, e))
        return []
    check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), what + ": traceEvents list")
    evs = doc.get("traceEvents", [])
    tracks = {}
    ok_fields = True
    for e in evs:
        if e.get("ph") == "X":
            ok_fields &= all(k in e for k in ("name", "pid", "tid", "ts", "dur"))
            ok_fields &= e["ts"] >= 0 and e["dur"] >= 0
            tracks.setdefault((e["pid"], e["tid"]), []).append((us_to_ns(e["ts"]), us_to_ns(e["ts"]) + us_to_ns(e["dur"])))
        elif e.get("ph") == "i":
            ok_fields &= all(k in e for k in ("name", "pid", "tid", "ts"))
        elif e.get("ph") == "M":
            ok_fields &= e.get("name") in ("process_name", "thread_name", "process_sort_index", "thread_sort_index")
        else:
            ok_fields = False
    check(ok_fields, what + ": every event has its fields")
    nested = True
    for spans in tracks.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for s, t in spans:
            while stack and stack[-1] <= s:
                stack.pop()
            if stack and stack[-1] < t:
                nested = False
            stack.append(t)
    check(nested, what + ": X events nest on every (pid, tid)")
    return evs


def tirx_words(nb, ng, recs_per_lane, t0=1000, stride=None):
    """A TIRx buffer: every lane load{ } then a finalize."""
    lanes = nb * ng
    stride = stride or lanes
    words = [0] * (1 + stride * recs_per_lane)
    words[0] = (ng << 32) | nb
    for lane in range(lanes):
        t = t0 + lane * 3
        for k in range(recs_per_lane):
            typ = 3 if k == recs_per_lane - 1 else k % 2
            words[1 + lane + k * stride] = (((t + 10 * k) & 0xFFFFFFFF) << 32) | (lane << 12) | (1 << 2) | typ
    return words


def write_words(path, words):
    with open(path, "wb") as f:
        f.write(struct.pack("<%dQ" % len(words), *words))


def outputs_and_inputs(tmp, bare):
    """Output files (-o cases, links, concurrency, signals), inputs that are
    not regular files, long names: end to end."""
    out = os.path.join(tmp, "h.json")
    rc, so, se = run("trace", SAMPLE, "-o", out)
    good = open(out, "rb").read()
    # -o naming the input (also through another name): refused, input intact
    before = open(bare, "rb").read()
    link = os.path.join(tmp, "same.bin")
    os.link(bare, link)
    for o in (bare, link):
        rc, so, se = run("trace", bare, "-o", o)
        check(rc == 2 and b"names the input file" in se, "-o naming the input is refused (%r)" % se)
    check(open(bare, "rb").read() == before, "the input is untouched")
    rc, so, se = run("trace", SAMPLE, "-o", "")
    check(rc == 2 and b"-o needs a file name" in se, "-o '' is a usage error")
    # -o -: the trace on standard output, byte for byte the file's
    rc, so, se = run("trace", SAMPLE, "-o", "-")
    check(rc == 0 and so == good, "-o - writes the same trace to standard output")
    # I/O errors say why
    rc, so, se = run("trace", SAMPLE, "-o", "/dev/full")
    check(rc == 1 and b"No space left on device" in se, "a full device says why (%r)" % se)
    rc, so, se = run("trace", SAMPLE, "-o", tmp)
    check(rc == 1 and b"is a directory" in se, "a directory as output says so (%r)" % se)
    # a symbolic link planted at the old fixed temporary name is not followed
    victim = os.path.join(tmp, "victim")
    with open(victim, "wb") as f:
        f.write(b"precious")
    os.symlink(victim, out + ".ikp-tmp")
    rc, so, se = run("trace", SAMPLE, "-o", out)
    check(rc == 0 and open(victim, "rb").read() == b"precious", "planted link: its target untouched")
    check(open(out, "rb").read() == good, "planted link: the output written whole")
    if os.path.lexists(out + ".ikp-tmp"):
        os.remove(out + ".ikp-tmp")
    if os.path.islink(out):
        os.remove(out)
    # not regular files, as IN and as --names @FILE: refused at once, never read
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    for what, path, needle in (("/dev/zero", "/dev/zero", b"character device"),
                               ("a FIFO", fifo, b"FIFO"), ("a directory", tmp, b"a directory")):
        try:
            p = subprocess.run([IKP, "trace", path, "-o", out], capture_output=True, timeout=20)
            check(p.returncode == 1 and needle in p.stderr, "%s as IN: refused (%r)" % (what, p.stderr))
            p = subprocess.run([IKP, "trace", SAMPLE, "-o", out, "--names", "@" + path], capture_output=True, timeout=20)
            check(p.returncode == 1 and needle in p.stderr, "%s as --names @FILE: refused (%r)" % (what, p.stderr))
            p = subprocess.run([IKP, "trace", SAMPLE, "-o", out, "--into", path], capture_output=True, timeout=20)
            check(p.returncode == 1 and needle in p.stderr, "%s as --into TRACE: refused (%r)" % (what, p.stderr))
        except subprocess.TimeoutExpired:
            check(False, "%s: the tool blocked" % what)
    with open("/dev/zero", "rb") as zero:  # a device on standard input never ends: refused before a byte is read
        try:
            p = subprocess.run([IKP, "info", "-"], stdin=zero, capture_output=True, timeout=20)
            check(p.returncode == 1 and b"standard input is a character device" in p.stderr,
                  "/dev/zero on standard input: refused (%r)" % p.stderr)
        except subprocess.TimeoutExpired:
            check(False, "/dev/zero on standard input: the tool read on")
    check(open(out, "rb").read() == good, "refused inputs leave the output untouched")
    # concurrent writers of one output: each run whole, never a mix
    outs = {}
    srcs = [SAMPLE, bare]
    for src in srcs:
        o = os.path.join(tmp, "one.json")
        run("trace", src, "-o", o)
        outs[src] = open(o, "rb").read()
    shared = os.path.join(tmp, "shared.json")
    ok_all = True
    whole = True
    for rnd in range(3):
        procs = [subprocess.Popen([IKP, "trace", srcs[k % 2], "-o", shared], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for k in range(8)]
        ok_all &= all(p.wait() == 0 for p in procs)
        data = open(shared, "rb").read()
        whole &= data in outs.values()
    check(ok_all, "8 concurrent writers all succeed")
    check(whole, "the shared output is always one writer's whole trace")
    check(not [f for f in os.listdir(tmp) if f.endswith(".ikp-tmp")], "no temporary file left by concurrent writers")
    # SIGTERM and SIGINT while writing: the temporary file goes, an earlier output stays
    big = os.path.join(tmp, "big.bin")
    write_words(big, tirx_words(512, 2, 400))
    for sig in (signal.SIGTERM, signal.SIGINT):
        tgt = os.path.join(tmp, "sig.json")
        with open(tgt, "wb") as f:
            f.write(b"earlier")
        seen = False
        for attempt in range(5):
            p = subprocess.Popen([IKP, "trace", big, "-o", tgt], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t_end = time.time() + 20
            while time.time() < t_end and p.poll() is None:
                if [f for f in os.listdir(tmp) if f.startswith("sig.json.") and f.endswith(".ikp-tmp")]:
                    p.send_signal(sig)
                    seen = True
                    break
            p.wait()
            if seen:
                break
            with open(tgt, "wb") as f:
                f.write(b"earlier")
        check(seen and p.returncode == -sig, "signal %d delivered while the trace was written" % sig)
        check(not [f for f in os.listdir(tmp) if f.endswith(".ikp-tmp")], "signal %d: temporary file removed" % sig)
        check(open(tgt, "rb").read() == b"earlier", "signal %d: the earlier output untouched" % sig)
    # an event name over 255 bytes from the command line: refused like one from a file
    rc, so, se = run("trace", SAMPLE, "-o", out, "--names", "a," + "x" * 300)
    check(rc == 2 and b"at most 255" in se, "a 300-byte name on the command line is refused (%r)" % se)


def name_lists(tmp, bare, bare2, names_file):
    """--names, --groups and --labels given twice: the later list replaces the
    earlier, which is freed (no LeakSanitizer report from the ASan build).
    A bad --names/--groups @FILE: exit 1 and one error line naming the file
    and the problem."""
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=1").lstrip(":")

    def tool(*args):
        p = subprocess.run([IKP] + list(args), capture_output=True, env=env)
        return p.returncode, p.stdout, p.stderr

    def trace_names(path):
        try:
            evs = strict_json(open(path, "rb").read())["traceEvents"]
        except (ValueError, OSError, KeyError):
            return set(), set()
        return ({e["name"] for e in evs if e.get("ph") == "X"},
                {e["args"]["name"] for e in evs if e.get("ph") == "M" and e.get("name") in ("thread_name", "process_name")})

    out = os.path.join(tmp, "twice.json")
    for what, args, want, gone in (
            ("--names list then @FILE, --groups twice",
             ["--names", "first,list", "--names", "@" + names_file, "--groups", "g0,g1", "--groups", "warp0,warp1"],
             {'quote " back \\ tab\t\x01', "warp1"}, {"first", "list", "g1"}),
            ("--names @FILE then list",
             ["--names", "@" + names_file, "--names", "load,mma"], {"load", "mma"}, {'quote " back \\ tab\t\x01'})):
        rc, so, se = tool("trace", bare, "-o", out, *args)
        xs, meta = trace_names(out)
        check(rc == 0 and b"LeakSanitizer" not in se, "trace with %s: exit 0, nothing leaked (%r)" % (what, se[-600:]))
        check(want <= xs | meta and not gone & (xs | meta), "trace with %s: the later list counts (%r)" % (what, xs | meta))
    rc, so, se = tool("summary", SAMPLE, "--names", "a,b", "--names", "c,d,e", "--groups", "x", "--groups", "y")
    check(rc == 0 and b"LeakSanitizer" not in se and b"\nd " in so and b"\nb " not in so,
          "summary with --names and --groups twice: the later names, nothing leaked (%r)" % se[-600:])
    # --names shorter than the capture's own names: those past it are kept
    # (load, wait, compute, step: --names a,b renames load and wait only)
    rc, so, se = tool("summary", SAMPLE, "--names", "a,b")
    rows = [l.split()[0] for l in so.decode().split("\n") if l[:1].isalpha() and len(l.split()) == 9][1:]
    check(rc == 0 and rows == ["a", "b", "compute", "step"],
          "summary --names a,b of a capture naming four events: a, b and its own compute and step (%s)" % rows)
    mo = os.path.join(tmp, "twice-merged.json")
    rc, so, se = tool("merge", bare, bare2, "-o", mo, "--align", "start", "--names", "a,b", "--names", "c,d",
                      "--groups", "g,h", "--groups", "w0,w1", "--labels", "one,two", "--labels", "left,right")
    xs, meta = trace_names(mo)
    check(rc == 0 and b"LeakSanitizer" not in se, "merge with lists twice: exit 0, nothing leaked (%r)" % se[-600:])
    check(xs == {"c", "d"} and "w1" in meta and "right block 0" in meta and not {"a", "g", "one block 0"} & (xs | meta),
          "merge with lists twice: the later lists count (%r)" % (xs | meta))
    rc, so, se = tool("info", bare, bare2, "--format", "tirx", "--names", "a", "--names", "b", "--groups", "g",
                      "--groups", "w")
    check(rc == 0 and b"LeakSanitizer" not in se, "info of two captures with lists twice: nothing leaked (%r)" % se[-600:])
    # a bad file: one line, once "error:", naming the file and what is wrong
    nul = os.path.join(tmp, "nul-names.txt")
    with open(nul, "wb") as f:
        f.write(b"load\nm\0ma\n")
    long_name = os.path.join(tmp, "long-names.txt")
    with open(long_name, "wb") as f:
        f.write(b"load\n" + b"x" * 300 + b"\n")
    missing = os.path.join(tmp, "no-such-names.txt")
    for what, path, needle in (("a missing file", missing, b"No such file or directory"),
                               ("a file with a NUL byte", nul, b"NUL byte at offset 6"),
                               ("a file with a 300-byte name", long_name, b"at most 255"),
                               ("a directory", tmp, b"is a directory")):
        for opt in ("--names", "--groups"):
            for cmd in (["trace", bare, "-o", out], ["merge", bare, bare2, "-o", mo, "--align", "start"]):
                rc, so, se = tool(*(cmd + ["--names", "first,list", opt, "@" + path]))
                lines = se.strip().split(b"\n")
                check(rc == 1 and se.count(b"error:") == 1 and len(lines) == 1 and lines[0].startswith(b"ikp: error: ")
                      and opt.encode() in lines[0] and path.encode() in lines[0] and needle in lines[0],
                      "%s %s @FILE, %s: exit 1, one error line naming the file and the problem (%r)"
                      % (cmd[0], opt, what, se))


def duplicates_and_detection(tmp):
    """Duplicate (block, group) claims; a stray TIRx record; finalize; n/a drops."""
    # IKP buffer: 6 lanes x 4 records; lane 3 = block 1 group 1 of 2, lane 4 = block 1 group 1 of 3
    cap = 4
    words = [0] * (8 + 6 * (9 + cap))
    words[0] = 0x31504B49 | (1 << 32) | (8 << 48) | (8 << 56)
    words[1] = 6 | (cap << 32)
    for lane, ng, t0, ev in ((3, 2, 1000, 0), (4, 3, 1500, 1)):
        h = 8 + lane * (9 + cap)
        words[h] = 0x4C41
        words[h + 1] = 1 | (1 << 32) | (ng << 48)
        words[h + 2] = 3 | (1 << 32) | (1 << 48)
        words[h + 3] = 900
        words[h + 5] = 3000
        words[h + 7] = (1 << 63) | 2
        words[h + 8] = (t0 << 32) | (ev << 2) | 1
        words[h + 9] = ((t0 + 1000) << 32) | (ev << 2) | 2
    path = os.path.join(tmp, "dup.bin")
    write_words(path, words)
    out = os.path.join(tmp, "dup.json")
    rc, so, se = run("trace", path, "-o", out)
    check(rc == 0 and b"warning" in se, "duplicate lanes: decoded with a warning (%r)" % se)
    evs = check_trace(out, "duplicate lanes trace")
    xs = [e for e in evs if e.get("ph") == "X"]
    check(len(xs) == 2 and xs[0]["tid"] != xs[1]["tid"], "duplicate lanes on tracks of their own")
    rc, so, se = run("info", path)
    check(b"1 lanes claim a (block, group) an earlier lane claims" in so, "info counts duplicate lanes")
    # a stray TIRx record naming lane 4096 + its position: still tirx, said so
    words = tirx_words(4, 1, 3)
    words[1 + 2 + 4] += 4096 << 12
    path = os.path.join(tmp, "stray.bin")
    write_words(path, words)
    rc, so, se = run("info", path)
    check(rc == 0 and b"format      tirx" in so and b"not unanimous" in so and b"1 records name a lane past" in so,
          "a stray record does not flip detection (%r)" % so)
    check(b"dropped     n/a" in so, "peer formats: dropped is n/a")
    rc, so, se = run("summary", path, "--json")
    try:
        st = strict_json(so)
        check(st["dropped"] is None and st["out_of_range"] == 1, "summary --json: dropped null, out_of_range 1")
    except ValueError as e:
        check(False, "summary --json: %s" % e)
    # records after a finalize: left out, counted, shown on request
    words = tirx_words(1, 1, 3)  # begin, end, finalize
    words += [((500 + 10 * k) << 32) | (1 << 2) | (k % 2) for k in range(4)]  # stale launch after it
    path = os.path.join(tmp, "stale.bin")
    write_words(path, words)
    rc, so, se = run("trace", path, "-o", out)
    xs = [e for e in check_trace(out, "stale trace") if e.get("ph") == "X"]
    check(rc == 0 and len(xs) == 1, "records after a finalize left out (%d regions)" % len(xs))
    rc, so, se = run("info", path)
    check(b"4 records after their lane's finalize record" in so, "info reports records after finalize (%r)" % so)
    rc, so, se = run("trace", path, "-o", out, "--keep-after-finalize")
    xs = [e for e in check_trace(out, "kept stale trace") if e.get("ph") == "X"]
    check(rc == 0 and len(xs) == 3, "--keep-after-finalize shows them (%d regions)" % len(xs))


def npy_files(tmp, bare):
    """NumPy's own .npy files, read directly."""
    try:
        import numpy as np
    except ImportError:
        if os.environ.get("IKP_QUICK"):  # make check: python3 alone
            print("  (.npy files written by numpy: left to make test, numpy is not installed)")
        else:
            check(False, "numpy is not installed (make test installs it into build/pydeps)")
        return
    ref = os.path.join(tmp, "ref.json")
    run("trace", bare, "-o", ref)
    want = open(ref, "rb").read()
    arr = np.fromfile(bare, dtype="<u8")
    out = os.path.join(tmp, "npy.json")
    for what, a in (("uint64", arr), ("int64", arr.view(np.int64)), ("2-D uint64", arr.reshape(1, -1))):
        p = os.path.join(tmp, "buf.npy")
        np.save(p, a)
        rc, so, se = run("trace", p, "-o", out)
        check(rc == 0 and open(out, "rb").read() == want, "np.save of %s reads like the bare buffer (%r)" % (what, se))
    p = os.path.join(tmp, "v2.npy")
    with open(p, "wb") as f:
        np.lib.format.write_array(f, arr, version=(2, 0))
    rc, so, se = run("trace", p, "-o", out)
    check(rc == 0 and open(out, "rb").read() == want, "npy format 2.0 read")
    for what, a, needle in (("big-endian", arr.astype(">u8"), b"big-endian"),
                            ("float64", arr.astype(np.float64), b"'<f8'"),
                            ("int32", arr.astype(np.int32), b"'<i4'"),
                            ("Fortran 2-D", np.asfortranarray(np.stack([arr, arr], axis=1)), b"Fortran")):
        p = os.path.join(tmp, "bad.npy")
        np.save(p, a)
        rc, so, se = run("trace", p, "-o", out)
        check(rc == 1 and needle in se, "npy %s: a clear error (%r)" % (what, se))
    p = os.path.join(tmp, "buf.npy")
    np.save(p, arr)
    data = open(p, "rb").read()
    cut = os.path.join(tmp, "cut.npy")
    with open(cut, "wb") as f:
        f.write(data[:-8])
    rc, so, se = run("trace", cut, "-o", out)
    check(rc == 1 and b"needs" in se, "npy cut short: truncated (%r)" % se)
    p = os.path.join(tmp, "buf.npz")
    np.savez(p, arr)
    rc, so, se = run("trace", p, "-o", out)
    check(rc == 1 and b"zip archive" in se, "an .npz says what it is (%r)" % se)


def torch_fit(tmp, cap, base, zero):
    """--into fits the capture into its kernel's slice: the least move that
    puts every IKP event inside the slice, the move stated on stderr; the
    slice picked among several; malformed kernel events passed over."""
    import re
    tp, mo = os.path.join(tmp, "fit-torch.json"), os.path.join(tmp, "fit-merged.json")
    t0 = zero - base  # IKP's own placement: ns after the trace's base

    def slice_json(name, lo, dur):  # a kernel slice of [lo, lo + dur] ns, as Kineto writes it (us, 3 decimals)
        return ('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %.3f, "dur": %.3f, '
                '"args": {"device": 0}}' % (name, lo / 1000.0, dur / 1000.0))

    def fit(events, *extra):
        """ikp trace --into a trace of these events (JSON texts): (exit status,
        stderr, IKP's events as [start, end] ns after the base, the stated
        shift or None)"""
        with open(tp, "w") as f:
            f.write('{"baseTimeNanoseconds": %d, "traceEvents": [\n%s\n], "traceName": "t.json"}' %
                    (base, ",\n".join(events)))
        if os.path.exists(mo):
            os.remove(mo)
        rc, so, se = run("trace", cap, "--into", tp, "-o", mo, *extra)
        spans = []
        try:  # (a trace of malformed events is not JSON: nor is what holds it)
            for e in strict_json(open(mo, "rb").read())["traceEvents"][len(events):] if rc == 0 else []:
                if e.get("ph") in ("X", "i"):
                    spans.append((us_to_ns(e["ts"]), us_to_ns(e["ts"]) + us_to_ns(e.get("dur", 0))))
        except ValueError:
            spans = None
        m = re.search(rb"fitted into kernel slice '([^']*)' \(shifted by ([+-]\d+) ns\)\n$", se)
        return rc, se, spans, (m.group(1).decode(), int(m.group(2))) if m else None

    rc, se, own, _ = fit([], "--no-fit")
    if not check(rc == 0 and own and b"IKP's own placement (--no-fit)" in se,
                 "--into --no-fit: exit 0, says so (%r)" % se):
        return
    first, last = min(s for s, _ in own), max(t for _, t in own)
    span = last - first
    check(first == t0, "--into --no-fit: the capture's time 0 at its host time")
    # off by about 1 us either way: the least move that puts every event inside
    for off in (1234, -900):
        lo, dur = t0 + off, span + 100
        rc, se, spans, got = fit([slice_json("ikp_kernel", lo, dur)])
        inside = bool(spans) and all(lo <= s and t <= lo + dur for s, t in spans)
        check(rc == 0 and got is not None and got[0] == "ikp_kernel" and inside,
              "--into: fitted into a kernel slice %+d ns off, every event inside it (%r)" % (off, se))
        moved = min(s for s, _ in spans) - first if spans else None
        check(got is not None and moved == got[1], "--into: the stated shift (%s) is the events' move (%s ns)" %
              (got and got[1], moved))
        least = min(s for s, _ in spans) == lo if off > 0 else max(t for _, t in spans) == lo + dur
        check(spans and least, "--into: the least move (%+d ns off): an edge of the capture on the slice's" % off)
        check(re.search(rb"on its time axis, \+- (\d+) ns", se) and se.count(b"\n") == 1,
              "--into: one line, the uncertainty still stated as before")
        rc, se, spans, got = fit([slice_json("ikp_kernel", lo, dur)], "--no-fit")
        check(rc == 0 and got is None and spans and min(s for s, _ in spans) == first,
              "--into --no-fit: IKP's own placement beside a slice %+d ns off" % off)
    # the span a tick longer than the slice: centred on it
    rc, se, spans, got = fit([slice_json("ikp_kernel", t0 - 900, span - 50)])
    check(rc == 0 and got and spans and abs((min(s for s, _ in spans) + max(t for _, t in spans)) -
                                            (2 * (t0 - 900) + span - 50)) <= 1,
          "--into: a span up to a tick a side longer than the slice is centred on it (%r)" % se)
    # slices that do not qualify: too far, too short
    for lo, dur, why in ((t0 + 50000, span + 100, rb"IKP's own placement \(no kernel slice within (\d+\.\d{3}) us: "
                                                  rb"the nearest needs a move of \+50\.000 us\)"),
                         (t0, span - 100, rb"IKP's own placement \(no kernel slice as long as its span()")):
        rc, se, spans, got = fit([slice_json("ikp_kernel", lo, dur)])
        m, unc = re.search(why, se), re.search(rb"on its time axis, \+- (\d+) ns", se)
        # how far it may move: its stated uncertainty and 5 us
        within = not m or not m.group(1) or (unc and float(m.group(1)) == round(5 + int(unc.group(1)) / 1000.0, 3))
        check(rc == 0 and got is None and m and within and se.count(b"\n") == 1 and spans and
              min(s for s, _ in spans) == first, "--into: %s: IKP's own placement, exit 0, said (%r)" % (why[30:], se))
    # several slices: only those at least as long as the span; the most overlap; whatever their order
    two = [slice_json("too_short", t0, span - 100), slice_json("later", t0 + 3000, span + 100),
           slice_json("earlier", t0 - 1000, span + 100)]
    for events in (two, two[::-1]):
        rc, se, spans, got = fit(events)
        check(rc == 0 and got == ("earlier", -900), "--into: of several slices, the long enough one overlapping "
              "the capture most (%r)" % se)
    # --kernel: only slices whose name holds NAME; an error when none does
    named = [slice_json("void at::native::mul_kernel", t0 + 300, span + 100),
             slice_json("ikp_saxpy<float>", t0 + 1234, span + 100)]
    rc, se, spans, got = fit(named)
    check(rc == 0 and got == ("void at::native::mul_kernel", 300),
          "--into: without --kernel, the slice overlapping most (%r)" % se)
    rc, se, spans, got = fit(named, "--kernel", "saxpy")
    check(rc == 0 and got == ("ikp_saxpy<float>", 1234), "--into --kernel saxpy: that slice (%r)" % se)
    rc, se, spans, got = fit(named, "--kernel", "nope")
    check(rc == 1 and b"--kernel nope" in se and se.count(b"\n") == 1 and not os.path.exists(mo),
          "--into --kernel naming no slice: exit 1, one line, no output (%r)" % se)
    rc, se, spans, got = fit(named, "--kernel", "mul", "--kernel", "saxpy")
    check(rc == 0 and got and got[0] == "ikp_saxpy<float>", "--into: the last --kernel counts")
    rc, se, spans, got = fit([slice_json("ikp_saxpy", t0 + 50000, span)], "--kernel", "saxpy")
    check(rc == 0 and got is None and b"no kernel slice within" in se, "--into --kernel: a named slice too far: "
          "IKP's own placement, exit 0 (%r)" % se)
    # malformed kernel events, each nearer than the good slice: passed over
    lo, dur = "%.3f" % ((t0 + 100) / 1000.0), "%.3f" % ((span + 100) / 1000.0)
    bad = ['{"ph": "X", "cat": "kernel", "name": "bad", "ts": "%s", "dur": %s}' % (lo, dur),  # ts a string
           '{"ph": "X", "cat": "kernel", "name": "bad", "ts": %s}' % lo,  # no dur
           '{"ph": "X", "cat": "kernel", "name": "bad", "ts": %s, "dur": -%s}' % (lo, dur),
           '{"ph": "X", "cat": "kernel", "name": "bad", "ts": %s, "dur": 1e400}' % lo,
           '{"ph": "X", "cat": "kernel", "name": "bad", "ts": %s, "dur": 123456789012345678901234567890}' % lo,
           '{"ph": "X", "cat": "kernel", "name": "bad", "ts": %s, "dur": 2000000000000000.000}' % lo,  # 63 years
           '{"ph": "X", "cat": "kernel", "name": "bad", "ts": -%s, "dur": 1e300}' % lo,
           '{"ph": "X", "cat": "kernel", "name": "bad", "ts": %s, "dur": null}' % lo,
           '{"ph": "X", "cat": "kernel", "name": "bad", "ts": %s, "dur": {"us": %s}}' % (lo, dur),
           '{"ph": "B", "cat": "kernel", "name": "bad", "ts": %s, "dur": %s}' % (lo, dur),
           '{"cat": "kernel", "name": "bad", "ts": %s, "dur": %s}' % (lo, dur),
           '{"ph": "X", "cat": "kernels", "name": "bad", "ts": %s, "dur": %s}' % (lo, dur),
           '{"ph": "X", "cat": "cpu_op", "name": "bad", "ts": %s, "dur": %s, "args": {"ph": "X", "cat": "kernel", '
           '"name": "bad", "ts": %s, "dur": %s}}' % (lo, dur, lo, dur),
           '1', '"kernel"', '[{"ph": "X", "cat": "kernel", "name": "bad", "ts": %s, "dur": %s}]' % (lo, dur), 'null']
    rc, se, spans, got = fit(bad + [slice_json("good", t0 + 2000, span + 100)])
    check(rc == 0 and got == ("good", 2000), "--into: malformed kernel events passed over (%r)" % se)
    rc, se, spans, got = fit(['{"ph":"X","cat":"kernel","name":"exp","ts":%.16e,"dur":%.6E}' %
                              ((t0 + 1234) / 1000.0, (span + 100) / 1000.0)])
    check(rc == 0 and got == ("exp", 1234), "--into: ts and dur in exponent form (%r)" % se)
    # any JSON in traceEvents: no crash (cut, bytes changed), the fit or an error
    good = '{"baseTimeNanoseconds": %d, "traceEvents": [%s, %s]}' % (
        base, slice_json('k\\u00e9\\n\\"x', t0 + 500, span + 100), ",".join(bad))
    import random
    rnd = random.Random(7)
    survived = True
    for k in range(40):
        b = bytearray(good.encode())
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] = rnd.choice(b'{}[]",:0-.e \\\x00\xff')
        with open(tp, "wb") as f:
            f.write(bytes(b[:rnd.randrange(len(b) // 2, len(b) + 1)] if k % 3 == 0 else b))
        rc, so, se = run("trace", cap, "--into", tp, "-o", mo)
        survived &= rc in (0, 1) and se.startswith(b"ikp: ") and se.count(b"\n") == 1
    check(survived, "--into: traces with bytes changed or cut: exit 0 or 1, one line, no crash")
    with open(tp, "w") as f:
        f.write(good)
    rc, so, se = run("trace", cap, "--into", tp, "-o", mo)
    check(rc == 0 and b"fitted into kernel slice 'k? \"x' (shifted by +500 ns)" in se,
          "--into: the slice's name shown with its escapes read (%r)" % se)
    # --kernel and --no-fit go with --into only, and not together
    for args in (("--kernel", "k"), ("--no-fit",), ("--into", tp, "--kernel", "k", "--no-fit"),
                 ("--into", tp, "--kernel", "")):
        rc, so, se = run("trace", cap, "-o", mo, *args)
        check(rc == 2 and se.count(b"\n") == 2 and b"--help" in se,
              "trace %s: usage error (%r)" % (" ".join(args), se))
    rc, so, se = run("summary", cap, "--no-fit")
    check(rc == 2 and b"unexpected argument '--no-fit'" in se, "summary --no-fit: unexpected argument")


def torch_note_and_far(tmp, cap, zero):
    """--into states in the trace what IKP's times are (a key per capture laid
    in), keeps the trace's own axis past 2^53 ns, and reads numbers with
    huge exponents in bounded time."""
    tp, mo, m2 = (os.path.join(tmp, n) for n in ("note-torch.json", "note-merged.json", "note-merged2.json"))
    rc, so, se = run("trace", cap, "-o", os.path.join(tmp, "own.json"))
    own = strict_json(open(os.path.join(tmp, "own.json"), "rb").read()) if rc == 0 else {}
    span = max((round(e["ts"] * 1000) + round(e.get("dur", 0) * 1000) for e in own.get("traceEvents", [])
                if e.get("ph") in ("X", "i")), default=0)
    # base 2^54 ns back: ts of 1.8e13 us, past 2^53 ns; the slice 1 us after IKP's own placement
    base = zero - (1 << 54)
    lo = (zero - base + 1000) / 1000.0
    with open(tp, "w") as f:
        f.write('{"baseTimeNanoseconds": %d, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "far \\"k\\"", '
                '"ts": %.3f, "dur": %.3f}], "displayTimeUnit": "ms"}' % (base, lo, (span + 500) / 1000.0))
    rc, so, se = run("trace", cap, "--into", tp, "-o", mo)
    d = strict_json(open(mo, "rb").read()) if rc == 0 else {}
    xs = [e["ts"] for e in d.get("traceEvents", [])[1:] if e.get("ph") in ("X", "i")]
    check(rc == 0 and xs and abs(min(xs) - lo) < 0.01 and b"(shifted by +1000 ns)" in se,
          "--into past 2^53 ns: the capture on the trace's own axis, fitted (first %r, slice %r)" %
          (min(xs) if xs else None, lo))
    note = d.get("ikp_time", "")
    check("moved +1000 ns into kernel slice 'far \"k\"'" in note and "baseTimeNanoseconds %d" % base in note and
          "time 0 of the capture is %d ns" % zero in note and d.get("displayTimeUnit") == "ms",
          "--into: the trace says what IKP's times are, under ikp_time (%r)" % note[:200])
    rc, so, se = run("trace", cap, "--into", mo, "-o", m2, "--no-fit")
    d2 = strict_json(open(m2, "rb").read()) if rc == 0 else {}
    check(rc == 0 and d2.get("ikp_time") == note and "not moved (--no-fit)" in d2.get("ikp_time_2", ""),
          "--into a trace that holds a capture already: strict JSON, the second under ikp_time_2")
    # numbers with exponents of a million: read in bounded time (was a million divisions each)
    with open(tp, "w") as f:
        f.write('{"baseTimeNanoseconds": %d, "traceEvents": [%s]}' %
                (base, ",".join(['{"ph":"X","cat":"kernel","ts":0e-999999,"dur":1e-999999}'] * 100000)))
    try:
        r = subprocess.run([IKP, "trace", cap, "--into", tp, "-o", mo], capture_output=True, timeout=60)
        ok = r.returncode == 0
    except subprocess.TimeoutExpired:
        ok = False
    check(ok, "--into 100,000 events with exponents of -999999: done within 60 s")


def host_time_and_torch(tmp):
    """--time host keeps every ns in JSON (an offset stated beside), --into
    lays a capture into a torch.profiler trace, and usage errors are one line.
    The torch trace is written here in Kineto's layout (a real one, on a GPU:
    tests/gpu/torch_merge.py)."""
    cap = os.path.join(ROOT, "examples", "data", "launch1.ikp")
    rc, so, se = run("info", cap)
    import re
    m = re.search(rb"time 0 = CLOCK_REALTIME (\d+) ns \+- (\d+) ns", so)
    if not check(rc == 0 and m is not None, "the shipped launch has host time: %s" % so[-300:]):
        return
    zero = int(m.group(1))
    out = os.path.join(tmp, "host.json")
    rc, so, se = run("trace", cap, "--time", "host", "-o", out)
    d = strict_json(open(out, "rb").read()) if rc == 0 else {}
    off = int(d.get("otherData", {}).get("ikp_ts_offset_ns", "0"))
    xs = [e for e in d.get("traceEvents", []) if e.get("ph") == "X"]
    check(rc == 0 and off == zero - zero % 1000000000, "--time host: ikp_ts_offset_ns is time 0's whole seconds")
    check(xs and min(round(e["ts"] * 1000) for e in xs) + off == zero,
          "--time host: offset + ts x 1000 gives time 0 exactly, read as doubles")
    check(xs and max(e["ts"] for e in xs) < 1e7, "--time host: ts small enough for a double to hold every ns")
    # a trace in Kineto's layout: ts in us after baseTimeNanoseconds
    base = zero - 3600 * 10 ** 9
    kernel_ts = (zero - base) / 1000.0
    torch = {"schemaVersion": 1, "deviceProperties": [{"id": 0}], "displayTimeUnit": "ms",
             "baseTimeNanoseconds": base,
             "traceEvents": [{"ph": "X", "cat": "kernel", "name": "pipeline", "pid": 0, "tid": 7,
                              "ts": kernel_ts, "dur": 20.0, "args": {"device": 0}},
                             {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 4242, "tid": 4242,
                              "ts": kernel_ts - 50, "dur": 5.0}],
             "traceName": "t.json"}
    tp = os.path.join(tmp, "torch.json")
    with open(tp, "w") as f:
        json.dump(torch, f, indent=1)
    mo = os.path.join(tmp, "merged.json")
    rc, so, se = run("trace", cap, "--into", tp, "-o", mo)
    check(rc == 0 and se.endswith(b"laid in on its time axis, +- %s ns), fitted into kernel slice 'pipeline' "
                                  b"(shifted by +0 ns)\n" % m.group(2)),
          "--into: exit 0, fitted into the slice it lies in (%s)" % se.decode(errors="replace").strip())
    if rc == 0:
        md = strict_json(open(mo, "rb").read())
        mine = md["traceEvents"][2:]
        mx = [e for e in mine if e.get("ph") == "X"]
        check({k: md[k] for k in torch if k != "traceEvents"} == {k: torch[k] for k in torch if k != "traceEvents"}
              and md["traceEvents"][:2] == torch["traceEvents"], "--into: the torch trace kept whole")
        check(mx and abs(min(e["ts"] for e in mx) - kernel_ts) < 0.0015, "--into: the capture's time 0 at its host time")
        check(all(e["pid"] >= 1 << 30 for e in mine), "--into: IKP's pids from 2^30")
        # a second capture laid into the result: processes of its own, its own ikp_time key
        other = os.path.join(ROOT, "examples", "data", "launch2.ikp")
        mo2 = os.path.join(tmp, "merged2.json")
        rc, so, se = run("trace", other, "--into", mo, "-o", mo2, "--no-fit")
        if check(rc == 0, "--into twice: exit 0 (%r)" % se):
            m2 = strict_json(open(mo2, "rb").read())
            first = {e["pid"] for e in mine}
            second = {e["pid"] for e in m2["traceEvents"][len(md["traceEvents"]):]}
            check(second and not first & second, "--into twice: the second capture's processes are its own")
            check("ikp_time" in m2 and "ikp_time_2" in m2 and "from %d" % ((1 << 30) - (1 << 24)) in m2["ikp_time_2"],
                  "--into twice: ikp_time_2 says where its processes start")
    # a capture whose file name is not UTF-8: the note in the trace is still UTF-8 (U+FFFD for the byte)
    odd = os.path.join(tmp.encode(), b"launch\xff.ikp")
    shutil.copyfile(cap, odd)
    rc, so, se = run("trace", odd, "--into", tp, "-o", mo)
    raw = open(mo, "rb").read() if rc == 0 else b""
    try:
        raw.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError:
        utf8 = False
    check(rc == 0 and utf8 and "launch\ufffd.ikp" in strict_json(raw).get("ikp_time", ""),
          "--into from a file name that is not UTF-8: the output is UTF-8 (%r)" % se)
    with open(os.path.join(tmp, "empty-events.json"), "w") as f:
        json.dump({"baseTimeNanoseconds": base, "traceEvents": []}, f)
    rc, so, se = run("trace", cap, "--into", os.path.join(tmp, "empty-events.json"), "-o", mo)
    check(rc == 0 and strict_json(open(mo, "rb").read())["traceEvents"], "--into an empty traceEvents: valid JSON")
    for body, why in ((b'{"traceEvents": []}', b"no baseTimeNanoseconds"),
                      (b'{"baseTimeNanoseconds": 5, "traceEvents": [', b"not JSON: it ends inside a value"),
                      (b'{"baseTimeNanoseconds": 5, "traceEvents": ["a\x01b"]}', b"not JSON: a raw control byte"),
                      (b'{"baseTimeNanoseconds": 5, "traceEvents": []} {}', b"not JSON: text after the top-level"),
                      (b'{"baseTimeNanoseconds": 5, "traceEvents": [],}', b"not JSON: an object member without"),
                      (b'{"baseTimeNanoseconds": 5, "traceEvents": [{"dur": 5.}]}', b"not JSON: a number with no digit"),
                      (b'{"baseTimeNanoseconds": 5, "traceEvents": [{"ts": 0x10}]}', b"not JSON: a value followed by"),
                      (b'{"baseTimeNanoseconds": 5, "traceEvents": [], "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                       b"not JSON: values nested deeper than 4096"),
                      (b'[1, 2]', b"not a JSON object"),
                      (b'{"baseTimeNanoseconds": 1.5e18, "traceEvents": []}', b"not a whole number")):
        bad = os.path.join(tmp, "bad-torch.json")
        with open(bad, "wb") as f:
            f.write(body)
        rc, so, se = run("trace", cap, "--into", bad, "-o", mo)
        check(rc == 1 and why in se and se.count(b"\n") == 1, "--into %r: exit 1, %r (%r)" % (body[:30], why, se))
    with open(os.path.join(tmp, "spaced.json"), "w") as f:  # valid JSON with spaces around the colons
        f.write('{"baseTimeNanoseconds" : %d , "traceEvents" : [ ] }' % base)
    rc, so, se = run("trace", cap, "--into", os.path.join(tmp, "spaced.json"), "-o", mo)
    check(rc == 0 and strict_json(open(mo, "rb").read())["traceEvents"], "--into: keys with spaces before the colon")
    with open(os.path.join(tmp, "cut.json"), "w") as f:  # cut inside traceEvents, no closing bracket
        f.write('{"baseTimeNanoseconds":1,"traceEvents":[' + " " * 70000)
    rc, so, se = run("trace", cap, "--into", os.path.join(tmp, "cut.json"), "-o", mo)
    check(rc == 1 and b"not JSON: it ends inside a value" in se, "--into a trace cut inside traceEvents: exit 1, not JSON")
    with open(os.path.join(tmp, "deep.json"), "w") as f:  # valid, nested 300 deep: read (it was refused past 256)
        f.write('{"baseTimeNanoseconds": %d, "traceEvents": [], "x": %s%s}' % (base, "[" * 300, "]" * 300))
    rc, so, se = run("trace", cap, "--into", os.path.join(tmp, "deep.json"), "-o", mo)
    check(rc == 0 and strict_json(open(mo, "rb").read())["traceEvents"], "--into a trace nested 300 deep: read (%r)" % se)
    torch_fit(tmp, cap, base, zero)
    # a base 54 days back (ts of 4.66e12 us: what torch.profiler wrote on an H100, its base near the boot)
    torch_fit(tmp, cap, zero - 4662277939666539, zero)
    torch_note_and_far(tmp, cap, zero)
    rc, so, se = run("summary", cap, "--flow", "a:b")
    check(rc == 2 and b"unexpected argument '--flow'" in se, "an option of another command: unexpected, not 'no value'")
    noclock = os.path.join(tmp, "noclock.bin")  # a bare buffer (1 lane, 4 slots, nothing recorded): no clock readings
    with open(noclock, "wb") as f:
        f.write(struct.pack("<21Q", 0x31504B49 | 1 << 32 | 8 << 48 | 8 << 56, 1 | 4 << 32, 1980000, *([0] * 18)))
    rc, so, se = run("trace", noclock, "--into", tp, "-o", mo)
    check(rc == 1 and b"needs host time" in se, "--into a capture without clock readings: exit 1, says why (%r)" % se)
    rc, so, se = run("trace", cap, "--into", tp, "-o", os.path.join(tmp, "m.pftrace"))
    check(rc == 2 and b"Chrome JSON" in se, "--into with a Perfetto output: usage error")
    # usage errors: one line and where the help is; help on request
    for args, want in ((("trace", cap, "--names"), b"no value after '--names'"),
                       (("trace", cap, "-o"), b"no value after '-o'"),
                       (("diff", cap, cap, "--threshold"), b"no value after '--threshold'"),
                       (("trace", cap, "--nope"), b"unexpected argument '--nope'")):
        rc, so, se = run(*args)
        check(rc == 2 and want in se and se.count(b"\n") == 2 and b"--help" in se,
              "%s: exit 2, one line and the help's place (%r)" % (" ".join(args[2:]), se))
    # standard input: one input, read as a file would be
    for path in (SAMPLE, os.path.join(ROOT, "examples", "data", "peers", "triton-dist.npy")):
        with open(path, "rb") as f:
            data = f.read()
        a = subprocess.run([IKP, "summary", path, "--json"], capture_output=True)
        b = subprocess.run([IKP, "summary", "-", "--json"], input=data, capture_output=True)
        check(b.returncode == 0 and a.stdout == b.stdout and a.stdout, "summary - (%s on stdin) as the file" %
              os.path.basename(path))
    b = subprocess.run([IKP, "info", "-"], stdin=os.open(tmp, os.O_RDONLY), capture_output=True)
    check(b.returncode == 1 and b.stderr.count(b"\n") == 1 and b"offset" not in b.stderr and b"lane" not in b.stderr,
          "info - from a directory: one line, no offset or lane (%r)" % b.stderr)
    b = subprocess.run([IKP, "diff", "-", "-"], input=b"", capture_output=True)
    check(b.returncode == 2 and b"one input only" in b.stderr, "diff - -: usage error")
    rc, so, se = run("info", noclock)
    check(rc == 0 and b"host time   not known" in so, "info says when a capture has no clock readings")
    rc, so, se = run("info", SAMPLE)
    check(rc == 0 and re.search(rb"\nhost time   time 0 = CLOCK_REALTIME \d+ ns \+- \d+ ns", so) is not None,
          "info states the host time of a capture with clock readings (%r)" % so[-400:])
    for args in (("trace", "--help"), ("--help",), ("help",)):
        rc, so, se = run(*args)
        check(rc == 0 and b"usage: ikp trace" in so and b"--into" in so, "ikp %s: the help on stdout" % " ".join(args))
    # a command's help: its usage, its notes, the shared options where it reads captures, no other command's
    for cmd, own, shared in (("report", b"--svg", True), ("diff", b"--fail-if-slower", True),
                             ("merge", b"--labels", True), ("check-sass", b"--list", False)):
        rc, so, se = run(cmd, "-h")
        check(rc == 0 and so.startswith(b"usage: ikp " + cmd.encode()) and own in so and
              (b"--keep-after-finalize" in so) == shared and b"ikp trace" not in so and b"--into" not in so,
              "ikp %s -h: its own help (%r)" % (cmd, so[:120]))
    rc, so, se = run("--help")
    check(all(b"ikp %-7s " % c in so for c in (b"trace", b"summary", b"info", b"merge", b"diff", b"report",
                                                b"check-sass")), "ikp --help: every command's usage")
    rc, so, se = run("frobnicate", "--help")
    check(rc == 2 and b"unknown command 'frobnicate'" in se and se.count(b"\n") == 2, "an unknown command: exit 2, one line")


def main():
    tmp = tempfile.mkdtemp(prefix="ikp-tool-")
    out = os.path.join(tmp, "t.json")

    # the bundled sample, end to end
    rc, so, se = run("trace", SAMPLE, "-o", out)
    check(rc == 0, "trace sample exits 0 (%r)" % se)
    evs = check_trace(out, "sample trace")
    xs = [e for e in evs if e.get("ph") == "X"]
    check(len(xs) > 100, "sample has regions")
    check(any(e.get("name") == "thread_name" and e["args"]["name"] == "producer" for e in evs), "group names from the capture")
    check(any(e.get("name") == "compute" for e in xs), "event names from the capture")
    check(any(e.get("args", {}).get("begin_data") == 3 for e in xs), "payload shown as args")
    check(min(e["ts"] for e in xs) == 0.0, "ts relative to the earliest record")
    check(not [f for f in os.listdir(tmp) if f.endswith(".ikp-tmp")], "no temporary file left")

    rc, so, se = run("summary", SAMPLE, "--json")
    check(rc == 0, "summary --json exits 0")
    try:
        st = strict_json(so)
        names = {e["name"]: e for e in st["events"]}
        keys = {"name", "count", "total_ns", "min_ns", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns"}
        check(all(keys <= set(e) for e in st["events"]), "summary event keys")
        for n, e in names.items():
            count = sum(1 for x in xs if x["name"] == n)
            check(e["count"] == count, "summary count of %s matches the trace (%d vs %d)" % (n, e["count"], count))
            check(e["min_ns"] <= e["p50_ns"] <= e["p90_ns"] <= e["p99_ns"] <= e["max_ns"], "ordered percentiles of " + n)
            total = sum(us_to_ns(x["dur"]) for x in xs if x["name"] == n)
            check(abs(e["total_ns"] - total) <= count, "total of %s matches the trace durations" % n)
        check(st["dropped"] == 0 and st["unmatched_begin"] == 0, "clean sample")
        check(all(0 < g["busy_fraction"] <= 1 for g in st["groups"]), "busy fractions in (0, 1]")
    except (ValueError, KeyError) as e:
        check(False, "summary JSON: %s" % e)

    rc, so, se = run("summary", SAMPLE)
    check(rc == 0 and b"p99_ns" in so and b"compute" in so, "summary text table")
    rc, so, se = run("info", SAMPLE)
    check(rc == 0 and b"format      ikp (timer: SM cycles)" in so and b"lanes       528 in buffer, 528 active" in so, "info")

    rc, so, se = run("trace", SAMPLE, "-o", out, "--by", "sm")
    check(rc == 0, "--by sm")
    evs = check_trace(out, "--by sm trace")
    check(any(e.get("name") == "process_name" and e["args"]["name"].startswith("SM ") for e in evs), "SM processes")

    # a TIRx bare buffer (numpy tofile layout), names from the command line and a file
    nb, ng = 2, 2
    words = [0] * (1 + nb * ng * 4)
    words[0] = (ng << 32) | nb
    for lane in range(nb * ng):
        recs = [(0, 1, 1000 + lane), (0, 0, 1100 + lane * 7), (1, 1, 1500), (1, 0, 1900)]
        for k, (typ, ev, t) in enumerate(recs):
            words[1 + lane + k * nb * ng] = ((t & 0xFFFFFFFF) << 32) | (lane << 12) | (ev << 2) | typ
    bare = os.path.join(tmp, "tirx.bin")
    with open(bare, "wb") as f:
        f.write(struct.pack("<%dQ" % len(words), *words))
    names_file = os.path.join(tmp, "names.txt")
    with open(names_file, "wb") as f:
        f.write(b'quote " back \\ tab\t\x01\n\xff\xfe bad utf8\n')
    rc, so, se = run("trace", bare, "-o", out, "--names", "@" + names_file, "--groups", "warp0,warp1")
    check(rc == 0, "tirx bare buffer with names (%r)" % se)
    evs = check_trace(out, "tirx trace with odd names")
    names = {e["name"] for e in evs if e.get("ph") == "X"}
    check('quote " back \\ tab\t\x01' in names, "escaped name round-trips")
    check("\ufffd\ufffd bad utf8" in names, "invalid UTF-8 replaced")
    check(any(e.get("ph") == "M" and e["args"].get("name") == "warp1" for e in evs), "group names from --groups")
    rc, so, se = run("info", bare)
    check(rc == 0 and b"tirx" in so and b"2 blocks x 2 groups" in so, "tirx info")
    # two TIRx captures: 32-bit stamps give no GPU time, so no clock places
    # them; the refusal names --align start, which puts each one's first
    # record at 0 or at the times given; info and merge take --format
    bare2 = os.path.join(tmp, "tirx2.bin")
    with open(bare2, "wb") as f:
        f.write(struct.pack("<%dQ" % len(words), *words))
    mo = os.path.join(tmp, "tirx-merged.json")
    rc, so, se = run("merge", bare, bare2, "-o", mo)
    check(rc == 1 and b"--align start" in se and b"align_start" not in se and not os.path.exists(mo),
          "merge of two tirx captures refused, naming --align start (%r)" % se[-300:])
    rc, so, se = run("merge", bare, bare2, "-o", mo, "--align", "start=0,5000", "--format", "tirx")
    d = strict_json(open(mo, "rb").read()) if rc == 0 else {}
    starts = sorted({(e["pid"] > 2, round(float(e["ts"]) * 1000)) for e in d.get("traceEvents", [])
                     if e.get("ph") == "X" and e.get("tid") == 1 and e["pid"] in (1, 3)})
    od = d.get("otherData", {})
    check(rc == 0 and b"first record" in se and "placed by its first record" in od.get("ikp_capture_2", ""),
          "--align start: placed by first records, said (%r, %r)" % (se[-200:], od))
    check(starts == [(False, 0), (True, 5000)], "--align start=0,5000: the second capture 5 us later (%r)" % starts)
    for args, why, msg in ((["--align", "start=1"], "one start for two captures", b"gives 1 start times"),
                           (["--align", "start=1,x"], "a start that is no number", b"whole ns"),
                           (["--align", "sideways"], "an unknown --align", b"--align takes"),
                           (["--align", "start", "--raw"], "--raw with --align start", b"choose one"),
                           (["--format", "nope"], "an unknown --format", b"unknown format")):
        rc, so, se = run("merge", bare, bare2, "-o", mo, *args)
        check(rc == 2 and msg in se, "merge: %s is a usage error (%r)" % (why, se[-200:]))
    rc, so, se = run("info", bare, bare2, "--format", "tirx", "--timer-unit", "10ns")
    check(rc == 0 and so.count(b"tirx") >= 2 and b"alignment   none" in so,
          "info of two captures takes --format and --timer-unit (%r)" % so[-300:])
    rc, so, se = run("trace", bare, "-o", out, "--by", "sm")
    check(rc == 1 and b"SM ids" in se and se.count(b"(lane ") == 1,
          "--by sm on a format without SM ids is an error, its lane named once (%r)" % se)
    name_lists(tmp, bare, bare2, names_file)
    host_time_and_torch(tmp)

    # bad input: non-zero exit, one line naming the problem, no output left behind
    good = open(out, "rb").read()
    cases = []
    empty = os.path.join(tmp, "empty.ikp")
    open(empty, "wb").close()
    cases.append(("empty file", empty, b"empty"))
    data = open(SAMPLE, "rb").read()
    for cut, what in ((4, "inside the magic"), (20, "inside the header"), (60, "inside the names"), (len(data) - 8, "inside the buffer")):
        p = os.path.join(tmp, "cut%d.ikp" % cut)
        with open(p, "wb") as f:
            f.write(data[:cut])
        cases.append(("capture cut " + what, p, b"offset"))
    p = os.path.join(tmp, "zeros.bin")
    with open(p, "wb") as f:
        f.write(b"\0" * 4096)
    cases.append(("all-zero buffer", p, b"never initialised"))
    p = os.path.join(tmp, "ones.bin")
    with open(p, "wb") as f:
        f.write(b"\xff" * 4096)
    cases.append(("all-ones buffer", p, b"neither"))
    cases.append(("missing file", os.path.join(tmp, "nope.ikp"), b"cannot open"))
    for what, path, needle in cases:
        rc, so, se = run("trace", path, "-o", out)
        lines = se.strip().split(b"\n")
        check(rc == 1, what + ": exit 1 (got %d)" % rc)
        check(len(lines) == 1 and lines[0].startswith(b"ikp: error: ") and needle in lines[0], what + ": one error line (%r)" % se)
        check(open(out, "rb").read() == good, what + ": earlier output untouched")
        check(not [f for f in os.listdir(tmp) if f.endswith(".ikp-tmp")], what + ": no temporary file")
    fresh = os.path.join(tmp, "fresh.json")
    rc, so, se = run("trace", empty, "-o", fresh)
    check(rc == 1 and not os.path.exists(fresh), "no output file on error")
    rc, so, se = run("trace", SAMPLE, "-o", os.path.join(tmp, "no", "dir", "x.json"))
    check(rc == 1 and b"No such file or directory" in se, "unwritable output path says why (%r)" % se)
    rc, so, se = run("trace", SAMPLE, "--format", "nope")
    check(rc == 2, "unknown --format is a usage error")
    rc, so, se = run("bogus")
    check(rc == 2, "unknown command is a usage error")
    rc, so, se = run("trace", bare, "--format", "ikp", "-o", out)
    check(rc == 1 and b"no IKP magic" in se, "forcing a TIRx buffer through the IKP decoder")

    outputs_and_inputs(tmp, bare)
    duplicates_and_detection(tmp)
    npy_files(tmp, bare)

    return report()


if __name__ == "__main__":
    sys.exit(main())
