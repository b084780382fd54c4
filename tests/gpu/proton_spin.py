#!/usr/bin/env python3
"""Triton's Proton (instrumentation backend, data="trace") on a kernel whose
regions are known: every warp of every program spins KA SM cycles in scope
"load", then KB in scope "compute", REPS times; in the warp-specialized
variant warp 0 of each program takes only "load" and the others only
"compute" (a branch on the warp's index, read by inline PTX); in the wait
variant warp 0 spins KA cycles in "load" while every warp then waits at a
barrier (tl.debug_barrier) in "wait", REPS times.

Usage: proton_spin.py OUTDIR [KA KB REPS PROGRAMS]
Writes OUTDIR/spin_<mode>.chrome_trace for each mode and variant run, and
prints one line per trace: its file, events, scopes and median durations as
the file has them (cycles / 1000, "us at 1000 MHz").
"""
import json
import os
import subprocess
import sys

import torch
import triton
import triton.language as tl
import triton.profiler as proton
import triton.profiler.language as pl

pl.enable_semantic("triton")


@triton.jit
def _clock():
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _warp():
    return tl.inline_asm_elementwise("mov.u32 $0, %tid.x;", "=r", [], dtype=tl.int32, is_pure=True, pack=1) // 32


@triton.jit
def _spin(k):
    t0 = _clock()
    t = t0
    while t - t0 < k:
        t = _clock()
    return t


@triton.jit
def spin_kernel(sink, KA, KB, REPS):
    t = _clock()
    for i in range(REPS):
        pl.enter_scope("load")
        t = _spin(KA)
        pl.exit_scope("load")
        pl.enter_scope("compute")
        t = _spin(KB)
        pl.exit_scope("compute")
    tl.store(sink + tl.program_id(0), t, mask=t == 12345)


@triton.jit
def spin_ws_kernel(sink, KA, KB, REPS):
    t = _clock()
    if _warp() == 0:
        for i in range(REPS):
            pl.enter_scope("load")
            t = _spin(KA)
            pl.exit_scope("load")
    else:
        for i in range(REPS):
            pl.enter_scope("compute")
            t = _spin(KB)
            pl.exit_scope("compute")
    tl.store(sink + tl.program_id(0), t, mask=t == 12345)


@triton.jit
def spin_wait_kernel(sink, KA, KB, REPS):
    # warp 0 spins KA cycles in "load" while the others wait at the barrier, in "wait"
    t = _clock()
    for i in range(REPS):
        if _warp() == 0:
            pl.enter_scope("load")
            t = _spin(KA)
            pl.exit_scope("load")
        pl.enter_scope("wait")
        tl.debug_barrier()
        pl.exit_scope("wait")
    tl.store(sink + tl.program_id(0), t, mask=t == 12345)


def run(out, name, kern, mode, ka, kb, reps, programs):
    sink = torch.zeros(programs, device="cuda", dtype=torch.int64)
    kern[(programs, )](sink, ka, kb, reps, num_warps=4)  # compile and warm up outside the session
    torch.cuda.synchronize()
    base = os.path.join(out, name)
    sess = proton.start(base, backend="instrumentation", mode=mode, data="trace")
    kern[(programs, )](sink, ka, kb, reps, num_warps=4)
    torch.cuda.synchronize()
    proton.finalize(sess)
    path = base + ".chrome_trace"
    d = json.load(open(path))
    evs = d["traceEvents"] if isinstance(d, dict) else d
    by = {}
    for e in evs:
        if e.get("ph") == "X":
            by.setdefault(e.get("name"), []).append(float(e.get("dur", 0)))
    med = {k: sorted(v)[len(v) // 2] for k, v in by.items()}
    print("proton_spin " + json.dumps({"file": os.path.basename(path), "mode": mode, "events": len(evs),
                                       "counts": {k: len(v) for k, v in by.items()}, "median_dur": med,
                                       "bytes": os.path.getsize(path)}), flush=True)


def main():
    out = sys.argv[1]
    ka, kb, reps, programs = (int(x) for x in sys.argv[2:6]) if len(sys.argv) > 5 else (20000, 40000, 4, 8)
    os.makedirs(out, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    print(f"proton_spin: {props.name}, {props.multi_processor_count} SMs, triton {triton.__version__}", flush=True)
    which = sys.argv[6] if len(sys.argv) > 6 else "all"
    if which in ("all", "plain"):
        run(out, "spin_default", spin_kernel, "default", ka, kb, reps, programs)
        run(out, "spin_clock32", spin_kernel, "default:optimizations=clock32", ka, kb, reps, programs)
    if which in ("all", "ws"):
        run(out, "spin_ws", spin_ws_kernel, "default", ka, kb, reps, programs)
    if which == "wait":
        run(out, "spin_wait", spin_wait_kernel, "default", ka, kb, reps, programs)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--isolated":  # each variant in its own process, so one that hangs
        out = sys.argv[2]                                   # or fails leaves the others' traces
        rc = 0
        for which in ("plain", "ws"):
            try:
                r = subprocess.run([sys.executable, __file__, out] + sys.argv[3:7] + [which], timeout=120)
                rc |= r.returncode
            except subprocess.TimeoutExpired:
                print(f"proton_spin {which}: timed out", flush=True)
                rc = 1
        sys.exit(rc)
    sys.exit(main())
