#!/usr/bin/env python3
"""The cost per event of Triton's Proton intra-kernel profiler (Triton 3.6,
instrumentation backend) on the kernel shapes of bench/events.cu, for the
table of bench/bench_gpu.py (make bench-gpu).

Kernel: SMs * WPS / 4 programs of 4 warps (128 threads, one fp32 each); K
iterations of R scopes, each W/R dependent FMAs (x * 1.0001 + 0.5, one
fma.rn.f32 as in bench/events.cu). Proton records per warp (its default
granularity), so every warp records 2*R*K events, as every IKP lane does.
Proton's scope names are compile-time strings, so every scope is "work"
(bench/events.cu computes its event ids at run time).

Off: the same kernel with no Proton session (pl.enter_scope/exit_scope then
compile to nothing). On: a Proton session of each mode (MODES below); one
mode that fails is reported and the others still measured. Every launch is
timed by CUDA events recorded from Triton launch hooks added after Proton's,
so that they run inside Proton's: its per-launch work before and after the
kernel is not timed, as bench/events.cu resets its buffer outside the timed
span. Median of 20 launches after 5 warm-ups; off is measured before and
after the on runs. ns per event = (on - off) / (2*R*K).

Usage: proton_events.py [--quick] [--every-record] [WORKDIR]
  --quick: K = 200 instead of 4000. --every-record: Proton keeping every
  record (EVERY_RECORD_MODES below) instead of its default and clock32
  modes; not part of make bench-gpu, for its slowness. Proton's output files
  go to WORKDIR, default a temporary directory removed at the end.
Without torch, triton.profiler or a CUDA device it prints one line,
"skipped: Proton (<reason>)", and exits 0.
"""
import json
import os
import statistics
import sys
import tempfile
import traceback

N_WARM, N_RUNS = 5, 20
CONFIGS = [(4, 1, 16), (4, 4, 16), (16, 1, 16), (16, 4, 16), (4, 1, 256), (4, 4, 256), (16, 1, 256), (16, 4, 256)]
# Proton's modes: its default (64-bit clocks) and clock32 (32-bit), each
# keeping the newest records a warp that its shared-memory buffer holds (256
# here). With --every-record, instead: clock32 with a buffer in global memory
# large enough for every record (a power of two per warp, as Proton asks),
# which keeps them all, as IKP's bounded builds do. Proton reads that buffer
# on the host after every launch, 1.4-25 s a launch on an H100 in these
# shapes (not timed: outside the launch hooks), so that mode takes the
# median of EVERY_RECORD_RUNS launches after one warm-up.
MODES = ["default", "default:optimizations=clock32"]
EVERY_RECORD_MODES = ["default:optimizations=clock32:buffer_type=global"]
EVERY_RECORD_WARM, EVERY_RECORD_RUNS = 1, 3
RECORD_BYTES = 8  # a clock32 record: a tag word and a clock word


def mode_string(mode, records):
    """the mode Proton is started with: a global buffer sized for records a warp"""
    if "buffer_type=global" not in mode:
        return mode
    if "clock32" not in mode:
        raise ValueError(f"{mode}: a global buffer is sized for clock32 records only")
    per_warp = 1
    while per_warp < records * RECORD_BYTES:
        per_warp *= 2
    return f"{mode}:buffer_size={4 * per_warp}"  # 4 warps a program

SKIP = None
try:
    import torch
except Exception as e:  # not only ImportError: a broken install raises others
    SKIP = f"import torch: {e}"
if SKIP is None:
    try:
        import triton
        import triton.language as tl
        from triton import knobs
        import triton.profiler as proton
        import triton.profiler.language as pl
    except Exception as e:
        SKIP = f"import triton.profiler: {e}"

if SKIP is None:
    pl.enable_semantic("triton")  # Proton instruments Gluon kernels only, unless told

    @triton.jit
    def scopes_kernel(sink, K, R: tl.constexpr, W: tl.constexpr):
        lanes = tl.arange(0, 128)
        x = lanes.to(tl.float32) * 1e-3
        for it in range(K):
            for r in tl.static_range(R):
                pl.enter_scope("work")
                for j in tl.static_range(W // R):
                    x = x * 1.0001 + 0.5
                pl.exit_scope("work")
        tl.store(sink + tl.program_id(0) * 128 + lanes, x, mask=x == 12345.0)


class LaunchTimer:
    """Times each launch with CUDA events from launch hooks. Enter hooks run in
    the order added and exit hooks in reverse, so, added after a Proton session
    has started, they bracket the kernel inside Proton's own hooks."""

    def __enter__(self):
        self.events = []
        knobs.runtime.launch_enter_hook.add(self.enter)
        knobs.runtime.launch_exit_hook.add(self.exit)
        return self

    def __exit__(self, *exc):
        knobs.runtime.launch_enter_hook.remove(self.enter)
        knobs.runtime.launch_exit_hook.remove(self.exit)

    def enter(self, metadata):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        self.events.append((start, end))

    def exit(self, metadata):
        self.events[-1][1].record()

    def ms(self):
        torch.cuda.synchronize()
        return [start.elapsed_time(end) for start, end in self.events]


def launches(modes):
    """(warm-ups, timed launches) of each mode on in measure()"""
    return (EVERY_RECORD_WARM, EVERY_RECORD_RUNS) if modes is EVERY_RECORD_MODES else (N_WARM, N_RUNS)


def median_ms(launch, warm=N_WARM, runs=N_RUNS):
    """median launch time (ms) of `runs` launches after `warm` warm-ups"""
    for _ in range(warm):
        launch()
    torch.cuda.synchronize()
    with LaunchTimer() as timer:
        for _ in range(runs):
            launch()
        times = timer.ms()
    return statistics.median(times)


def measure(workdir, sink, sms, k, wps, r, w, modes):
    """off, each mode on, off again: one JSON line per mode; returns the
    number of modes that failed"""
    grid = (sms * wps // 4, )

    def launch():
        scopes_kernel[grid](sink, k, R=r, W=w, num_warps=4)

    off = median_ms(launch)
    on = {}
    failed = 0
    warm, runs = launches(modes)
    for mode in modes:
        started = mode_string(mode, 2 * r * k)
        name = os.path.join(workdir, f"proton_{wps}w_R{r}_W{w}_{started.replace(':', '_').replace('=', '_')}")
        try:
            session = proton.start(name, backend="instrumentation", mode=started, data="tree")
            try:
                on[mode] = (started, median_ms(launch, warm, runs))
            finally:
                proton.finalize(session)
        except Exception:  # one mode's failure (Proton's own errors too) leaves the others measured
            print(f"proton error: {wps}w R{r} {w}, mode {started}:\n{traceback.format_exc()}", flush=True)
            failed += 1
    off2 = median_ms(launch)
    for mode, (started, on_ms) in on.items():
        row = {"mode": mode, "started": started, "runs": runs, "wps": wps, "R": r, "W": w, "K": k,
               "off_ms": round(off, 5), "off2_ms": round(off2, 5), "on_ms": round(on_ms, 5),
               "ns_per_event": round((on_ms - off) * 1e6 / (2 * r * k), 3)}
        print("proton " + json.dumps(row), flush=True)
    return failed


def main(argv):
    quick = "--quick" in argv
    modes = EVERY_RECORD_MODES if "--every-record" in argv else MODES
    rest = [a for a in argv if a not in ("--quick", "--every-record")]
    if SKIP is not None:
        print(f"skipped: Proton ({SKIP})")
        return 0
    if not torch.cuda.is_available():
        print("skipped: Proton (no CUDA device for torch)")
        return 0
    k = 200 if quick else 4000
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    warm, runs = launches(modes)
    print(f"proton: {props.name}, {sms} SMs, triton {triton.__version__}, K={k}, "
          f"median of {runs} after {warm} warm-up", flush=True)
    sink = torch.zeros(sms * 16 // 4 * 128, device="cuda", dtype=torch.float32)
    status = 0
    with tempfile.TemporaryDirectory(prefix="proton_events_") as tmp:
        workdir = rest[0] if rest else tmp
        os.makedirs(workdir, exist_ok=True)
        for wps, r, w in CONFIGS:
            try:
                if measure(workdir, sink, sms, k, wps, r, w, modes):
                    status = 1
            except Exception:
                print(f"proton error: {wps}w R{r} {w}:\n{traceback.format_exc()}", flush=True)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
