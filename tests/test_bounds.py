#!/usr/bin/env python3
"""Resource bounds of build/ikp: every command's peak memory is at most a
small constant times its input plus a constant, and its time is O(n log n).

Each shape is generated here into a temporary directory (none is stored in
the repository), then every command listed for it runs under an address-space
limit of BASE + K x the input's size (RLIMIT_AS, set in the child before it
starts) and a wall-clock limit. A check passes when the command exits as
expected (0: the input is valid), was not killed (by a signal or the time
limit) and did not run out of memory. The time limit is far above what an
O(n log n) pass over these inputs takes on a slow, loaded machine; a
quadratic pass (every pair of lanes of a block, every pair of nested
regions) is far above it.

Shapes: a Triton-distributed buffer of one block of 8,192 lanes (and of
32,768 lanes), two regions a lane, the flow's FROM and TO events on every
lane; a TIRx staircase of 262,144 nested regions on one lane; a TIRx buffer
of 4,224 lanes with three nested events repeated, 1.5 M records.

IKP_TOOL names the tool (default build/ikp). An AddressSanitizer build
(a name containing "asan") reserves terabytes of address space, so it runs
with the time limit only, and the output says so."""
import array
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import IKP  # noqa: E402
from peer_words import T0, triton_dist  # noqa: E402

# Address space a command may use: BASE + K x its input's bytes (all of its
# inputs: both files for diff). BASE covers what the plain tool maps before
# it reads anything (the binary, libc, the stack, malloc's first arena) with
# room to spare; K allows the file read whole plus decoded lanes, events and
# the writers' buffers, each a few times the input.
BASE = 256 << 20
K = 16
# Wall-clock seconds a command may take: generous, since CI machines are slow
# and loaded; what it catches is minutes and quadratic blow-ups, not speed.
TIME_LIMIT = 60

ASAN = "asan" in os.path.basename(IKP)

passed = 0
failed = 0


# ---- buffers (triton-dist's: peer_words.py)

# TIRx: word 0 = groups << 32 | blocks; record k of lane L at 1 + L + k * lanes,
# stamp << 32 | L << 12 | event << 2 | type (0 begin, 1 end, 3 finalize)
def tirx(nb, ng, lanes, slots):
    """lanes: (lane, [(type, event, t_ns), ...]) pairs, any iterable"""
    n = nb * ng
    w = [0] * (1 + n * slots)
    w[0] = ng << 32 | nb
    for lane, recs in lanes:
        for k, (typ, ev, t) in enumerate(recs):
            w[1 + lane + k * n] = (t & 0xFFFFFFFF) << 32 | lane << 12 | ev << 2 | typ
    return w


def write_words(path, words):
    """Little-endian 64-bit words, as numpy's tofile writes them; the size in bytes."""
    a = array.array("Q", words)
    if sys.byteorder != "little":
        a.byteswap()
    with open(path, "wb") as f:
        a.tofile(f)
    return len(words) * 8


def td_lanes(lanes, slower=1.0):
    """Every lane: load, then compute 20 ns after it (compute `slower` times
    as long); lanes start 3 ns apart."""
    out = {}
    for g in range(lanes):
        t = T0 + 3 * g
        ld = 100 + g % 37
        cp = int((300 + g % 53) * slower)
        out[(0, g)] = [(1, 0, t), (0, 0, t + ld), (1, 1, t + ld + 20), (0, 1, t + ld + 20 + cp)]
    return out


def staircase(depth):
    """One lane: depth begins (events 0..3 in turn), then their ends in
    reverse, 1 ns apart, then a finalize."""
    recs = [(0, k % 4, T0 + k) for k in range(depth)]
    recs += [(1, k % 4, T0 + 2 * depth - k) for k in range(depth - 1, -1, -1)]
    recs.append((3, 0, T0 + 2 * depth + 1))
    return recs


def nested3(lane, reps):
    """tile { load { mma } } repeated, then a finalize; lanes start 37 ns apart."""
    t = T0 + 37 * lane
    for r in range(reps):
        d = (lane * 7 + r * 13) % 64
        yield (0, 0, t)
        yield (0, 1, t + 10)
        yield (0, 2, t + 30)
        yield (1, 2, t + 330 + d)
        yield (1, 1, t + 350 + d)
        yield (1, 0, t + 380 + d)
        t += 400 + d
    yield (3, 0, t)


# ---- running a command under the limits

def mib(n):
    return n / 1048576.0


def spawn(argv, limit):
    """Runs argv under `limit` bytes of address space (None: no limit) and
    TIME_LIMIT seconds: (exit code, timed out, seconds, peak RSS bytes, stderr).
    The peak RSS is the child's own (wait4), and includes the pages of this
    process it was forked from, before exec."""
    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limits)
        timed_out = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > TIME_LIMIT:
                timed_out = True
                os.kill(p.pid, signal.SIGKILL)
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        secs = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace").strip()
    return p.returncode, timed_out, secs, ru.ru_maxrss * 1024, stderr  # ru_maxrss: KiB on Linux


def bounded(label, args, input_bytes, expect=0):
    """Runs the tool with args under BASE + K * input_bytes of address space
    and TIME_LIMIT seconds; one "ok" or "FAIL" line; counts the check."""
    global passed, failed
    limit = BASE + K * input_bytes
    rc, timed_out, secs, rss, stderr = spawn([IKP] + args, None if ASAN else limit)
    figures = "%.2f s, peak RSS %.1f MiB, limit %s" % (
        secs, mib(rss), "%d s" % TIME_LIMIT if ASAN else "%.1f MiB, %d s" % (mib(limit), TIME_LIMIT))
    why = None
    if timed_out:
        why = "over the time limit, killed after %.1f s" % secs
    elif rc < 0:
        why = "killed by %s" % signal.Signals(-rc).name
    elif "out of memory" in stderr.lower():
        why = "ran out of memory (exit %d)" % rc
    elif rc != expect:
        why = "exit status %d, expected %d" % (rc, expect)
    what = "%s: ikp %s" % (label, " ".join(os.path.basename(a) if os.path.isabs(a) and a != "/dev/null" else a
                                            for a in args))
    if why is None:
        passed += 1
        print("ok   %s (%s)" % (what, figures))
    else:
        failed += 1
        last = stderr.splitlines()[-1] if stderr else ""
        print("FAIL %s: %s (%s)%s" % (what, why, figures, "; stderr: " + last[:300] if last else ""))
    sys.stdout.flush()


# ---- the shapes

def triton_dist_shape(tmp, lanes):
    a = os.path.join(tmp, "td%d.bin" % lanes)
    b = os.path.join(tmp, "td%d-slower.bin" % lanes)
    size = write_words(a, triton_dist(1, lanes, td_lanes(lanes), 4, sms=[5]))
    write_words(b, triton_dist(1, lanes, td_lanes(lanes, 1.05), 4, sms=[5]))
    label = "triton-dist, 1 block x %d lanes, %d KiB" % (lanes, size >> 10)
    opts = ["--names", "load,compute", "--format", "triton-dist"]
    cmds = [
        (["report", a, "-o", os.path.join(tmp, "td.md")] + opts, [a]),
        (["diff", a, a] + opts, [a, a]),
        (["diff", a, b] + opts, [a, b]),
        (["trace", a, "-o", os.path.join(tmp, "td.json"), "--flow", "load:compute", "--counter", "load,compute"] + opts,
         [a]),
        (["trace", a, "-o", os.path.join(tmp, "td.pftrace")] + opts, [a]),
        (["info", a, "--format", "triton-dist"], [a]),
        (["summary", a] + opts, [a]),
    ]
    for args, inputs in cmds:
        bounded(label, args, sum(os.path.getsize(f) for f in inputs))


def staircase_shape(tmp, depth):
    path = os.path.join(tmp, "stairs.bin")
    recs = staircase(depth)
    size = write_words(path, tirx(1, 1, [(0, recs)], len(recs)))
    del recs
    label = "tirx staircase, %d nested regions on one lane, %d KiB" % (depth, size >> 10)
    cmds = [
        (["report", path, "-o", os.path.join(tmp, "stairs.md")], [path]),
        (["trace", path, "-o", os.path.join(tmp, "stairs.json")], [path]),
        (["summary", path], [path]),
        (["diff", path, path], [path, path]),
    ]
    for args, inputs in cmds:
        bounded(label, args, sum(os.path.getsize(f) for f in inputs))


def nested_shape(tmp, nb, ng, reps):
    path = os.path.join(tmp, "nested.bin")
    lanes = nb * ng
    slots = 6 * reps + 1
    size = write_words(path, tirx(nb, ng, ((l, nested3(l, reps)) for l in range(lanes)), slots))
    label = "tirx %d lanes x 3 nested events, %.2f M records, %.1f MiB" % (lanes, lanes * slots / 1e6, mib(size))
    opts = ["--names", "tile,load,mma"]
    cmds = [
        (["trace", path, "-o", "/dev/null"] + opts, [path]),
        (["report", path, "-o", os.path.join(tmp, "nested.md")] + opts, [path]),
        (["diff", path, path] + opts, [path, path]),
    ]
    for args, inputs in cmds:
        bounded(label, args, sum(os.path.getsize(f) for f in inputs))


def main():
    t0 = time.monotonic()
    if ASAN:
        print("note: %s is an ASan build, which reserves terabytes of address space: "
              "no address-space limit, the time limit (%d s) kept" % (IKP, TIME_LIMIT))
    else:
        print("limits: address space %d MiB + %d x input, %d s a command; tool %s" % (BASE >> 20, K, TIME_LIMIT, IKP))
    floor = spawn(["true"], None)[3]
    print("peak RSS counts the pages of this process a command is forked from: %.1f MiB for true(1)" % mib(floor))
    with tempfile.TemporaryDirectory(prefix="ikp-bounds-") as tmp:
        triton_dist_shape(tmp, 8192)
        triton_dist_shape(tmp, 32768)
        staircase_shape(tmp, 1 << 18)
        nested_shape(tmp, 132, 32, 60)
    print("(%.1f s in all)" % (time.monotonic() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
