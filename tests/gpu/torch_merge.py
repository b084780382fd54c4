#!/usr/bin/env python3
"""IKP inside a torch.profiler trace, on a GPU: a kernel recorded by IKP
(tests/gpu/torch_example.cu, loaded with ctypes) runs in a PyTorch process
under torch.profiler, beside PyTorch's own kernels; `ikp trace CAPTURE
--into TRACE.json` lays the capture into the profiler's Chrome trace and fits
it into its kernel's slice. Checked, three launches of different lengths: the
merged file is strict JSON holding every event of the profiler's trace and
every lane of the capture; the regions' span fits in the kernel's duration as
CUPTI timed it (no host clock enters); the tool fitted the capture into the
recorded kernel's slice, every region falls inside that slice (to the ns),
and the trace states the placement and the move (ikp_time); the move the tool states is the regions' move
(against --no-fit, IKP's own placement) and within that uncertainty plus 2 us
for the profiler's own conversion of GPU time to host time (which it does not
state; the line says how far the two conversions disagreed and where IKP's
own placement put the regions); IKP's processes do not reuse the trace's pids.
Then the kernel in a CUDA graph: its reset and launch captured by
torch.cuda.graph, three replays under the profiler, each dumped after it:
each capture is its replay's launch (1, 2, 3; not stale) and passes the same
checks inside its own replay's kernel slice.
Without PyTorch or a GPU it says so and counts nothing."""
import ctypes
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from harness import strict_json  # noqa: E402  (the tests' strict JSON reader)
IKP = os.path.join(ROOT, "build", "ikp")
LIB = os.path.join(ROOT, "build", "libikp_torch_example.so")
passed = failed = 0
# how far the profiler's own GPU-to-host conversion may stray beyond IKP's
# stated uncertainty (it states none; measured on an H100: up to 1.2 us)
PROFILER_US = 2.0


def check(ok, what):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + what)
    if ok:
        passed += 1
    else:
        failed += 1
    return ok


def kernel_slices(tr):
    """the recorded kernel's slices in the profiler's trace"""
    t = strict_json(open(tr, "rb").read())
    return [e for e in t["traceEvents"] if e.get("cat") == "kernel" and e.get("name", "").startswith("ikp_torch_saxpy")]


def check_into(cap, tr, kern, what, tmp):
    """`ikp trace CAP --into TR`: the capture laid into the trace, fitted into
    the slice kern (the profiler's record of its launch)"""
    base = os.path.join(tmp, os.path.basename(cap)[:-4])
    out, own = base + "-merged.json", base + "-unfitted.json"

    def ck(ok, msg):
        return check(ok, what + ": " + msg)

    r = subprocess.run([IKP, "trace", cap, "--into", tr, "-o", out, "--names", "load,compute,store"],
                       capture_output=True)
    err = r.stderr.decode(errors="replace")
    if not ck(r.returncode == 0, "ikp trace --into: exit 0 (%s)" % err.strip()):
        return
    unc = re.search(r"on its time axis, \+- (\d+) ns", err)
    unc_us = int(unc.group(1)) / 1000.0 if unc else None
    ck(unc is not None, "the tool states the uncertainty (%s ns)" % (unc.group(1) if unc else "?"))
    fit = re.search(r"fitted into kernel slice '(.*)' \(shifted by ([+-]\d+) ns\)", err)
    shift_us = int(fit.group(2)) / 1000.0 if fit else None
    ck(fit is not None and fit.group(1).startswith("ikp_torch_saxpy"),
          "fitted into the recorded kernel's slice (%s)" % (fit.group(0) if fit else err.strip()))
    # the same, in IKP's own placement (its clock readings only)
    r = subprocess.run([IKP, "trace", cap, "--into", tr, "-o", own, "--names", "load,compute,store", "--no-fit"],
                       capture_output=True)
    if not ck(r.returncode == 0,
                 "ikp trace --into --no-fit: exit 0 (%s)" % r.stderr.decode(errors="replace").strip()):
        return
    t, m, u = (strict_json(open(f, "rb").read()) for f in (tr, out, own))
    ck(m["baseTimeNanoseconds"] == t["baseTimeNanoseconds"] and
          m["traceEvents"][:len(t["traceEvents"])] == t["traceEvents"],
          "the profiler's trace kept whole, base and events")
    pids = {e.get("pid") for e in t["traceEvents"]}
    mine = [e for e in m["traceEvents"][len(t["traceEvents"]):]]
    regions = [e for e in mine if e.get("ph") == "X"]
    unfitted = [e for e in u["traceEvents"][len(t["traceEvents"]):] if e.get("ph") == "X"]
    lanes = {(e["pid"], e["tid"]) for e in regions}
    info = subprocess.run([IKP, "info", cap], capture_output=True).stdout.decode()
    active = re.search(r"lanes +\d+ in buffer, (\d+) active", info)
    ck(active is not None and len(lanes) == int(active.group(1)),
          "every active lane in the merged trace (%d of %s)" % (len(lanes), active.group(1) if active else "?"))
    ck(not (pids & {e["pid"] for e in mine}), "IKP's pids are not the trace's")
    lo, hi = kern["ts"], kern["ts"] + kern["dur"]
    first = min(e["ts"] for e in regions)
    last = max(e["ts"] + e["dur"] for e in regions)
    tol = unc_us if unc_us is not None else 0.0
    # The regions' span against the kernel's duration: both are differences
    # of the GPU's globaltimer (IKP's cycle records are mapped to it), so no
    # host clock enters: the span fits in the slice, to one 32 ns tick a side.
    ck(last - first <= kern["dur"] + 0.064,
          "the regions' span (%.3f us) fits in the kernel's duration (%.3f us)" % (last - first, kern["dur"]))
    # Where the span sits: fitted into the slice, every region lies inside it
    # (the tool moves the capture the least that puts it there), to the ns
    # the trace's ts hold (read here as doubles: 2 ns allowed).
    ck(first >= lo - 0.002 and last <= hi + 0.002,
          "every region inside the kernel's slice [%.3f, %.3f] us: regions [%.3f, %.3f] (%.3f us after its "
          "start, %.3f us before its end)" % (lo, hi, first, last, first - lo, hi - last))
    note = m.get("ikp_time", "")
    ck("into kernel slice 'ikp_torch_saxpy" in note and "+- %d ns" % round(tol * 1000) in note,
          "the merged trace states IKP's placement and the move (%s)" % note[:160])
    # The move: two mappings of GPU time to host time meet here, IKP's (its
    # clock readings, +- tol) and the profiler's own (CUPTI's, which the trace
    # does not state). Measured on an H100 before the fit: the regions ended
    # 0.2-1.2 us after the slice, beyond IKP's +- 0.9 us alone (BENCHMARKS.md).
    # So the move may pass IKP's stated uncertainty by up to PROFILER_US; the
    # line says how far the conversions disagreed (at least the move) and
    # where IKP's own placement (--no-fit) put the regions.
    ufirst = min(e["ts"] for e in unfitted) if unfitted else float("nan")
    ulast = max(e["ts"] + e["dur"] for e in unfitted) if unfitted else float("nan")
    ck(shift_us is not None and abs(ufirst + shift_us - first) <= 0.0015,
          "the stated move (%s us) is the regions' move from IKP's own placement (%.3f us)" %
          ("?" if shift_us is None else "%+.3f" % shift_us, first - ufirst))
    ck(shift_us is not None and abs(shift_us) <= tol + PROFILER_US,
          "the move into the slice (%s us) within IKP's +- %.3f us and the profiler's %.1f us: the two "
          "conversions disagreed by at least %.3f us; unfitted, the regions [%.3f, %.3f] were %.3f us after the "
          "slice's start, %.3f us before its end (inside it within IKP's bound alone: %s)" %
          ("?" if shift_us is None else "%+.3f" % shift_us, tol, PROFILER_US,
           abs(shift_us) if shift_us is not None else float("nan"), ufirst, ulast, ufirst - lo, hi - ulast,
           "yes" if ufirst >= lo - tol and ulast <= hi + tol else "no"))


def main():
    try:
        import torch
    except ImportError:
        print("skipped: PyTorch is not installed (nothing counted)")
        return 0
    if not torch.cuda.is_available():
        print("skipped: no GPU (nothing counted)")
        return 0
    lib = ctypes.CDLL(LIB)
    n = 1 << 18
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    torch.cuda.synchronize()
    tmp = tempfile.mkdtemp(prefix="ikp-torch-")
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    for k, rounds in enumerate((2000, 20000, 100000)):
        cap, tr = (os.path.join(tmp, "%s-%d.%s" % (w, k, e)) for w, e in (("cap", "ikp"), ("torch", "json")))
        with torch.profiler.profile(activities=acts) as prof:
            z = x * 2  # PyTorch's own kernels before and after
            rc = lib.ikp_torch_example(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()), n, rounds,
                                       cap.encode())
            w = y + z
            torch.cuda.synchronize()
        prof.export_chrome_trace(tr)
        check(rc == 0, "launch %d (%d FMA rounds): recorded and dumped" % (k, rounds))
        kern = kernel_slices(tr)
        if check(len(kern) == 1, "the profiler timed the recorded kernel once (%d)" % len(kern)):
            check_into(cap, tr, kern[0], "launch %d" % k, tmp)
    # The kernel in a CUDA graph (torch.cuda.graph), the reset captured with it:
    # three replays under the profiler, each dumped after it; each capture is
    # its own replay (numbered 1, 2, 3) and lands in its own replay's slice.
    check(lib.ikp_torch_graph_buffer(n) == 0, "graph: the buffer, made before the capture")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        rc = lib.ikp_torch_graph_capture(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()), n, 20000,
                                         ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
    check(rc == 0, "graph: the reset and the kernel captured by torch.cuda.graph")
    tr = os.path.join(tmp, "torch-graph.json")
    caps = [os.path.join(tmp, "cap-graph-%d.ikp" % k) for k in range(3)]
    with torch.profiler.profile(activities=acts) as prof:
        for k in range(3):
            z = x * 2
            g.replay()
            rc = lib.ikp_torch_graph_dump(caps[k].encode(), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
            check(rc == 0, "graph replay %d: dumped" % (k + 1))
            w = y + z
        torch.cuda.synchronize()
    prof.export_chrome_trace(tr)
    lib.ikp_torch_graph_free()
    kern = sorted(kernel_slices(tr), key=lambda e: e["ts"])
    if check(len(kern) == 3, "the profiler timed the three replays' kernels (%d)" % len(kern)):
        for k in range(3):
            info = subprocess.run([IKP, "info", caps[k]], capture_output=True).stdout.decode()
            check(re.search(r"^launch +%d \(" % (k + 1), info, re.M) is not None and "STALE" not in info,
                  "graph replay %d: the capture is launch %d of its buffer, not stale" % (k + 1, k + 1))
            check_into(caps[k], tr, kern[k], "graph replay %d" % (k + 1), tmp)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
