#!/usr/bin/env python3
"""Runs the examples on the GPU and checks what they recorded, also under
compute-sanitizer and (example 1) Nsight Compute.
Usage: check_examples.py [EXAMPLE ...]  (default: all of them)"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import test_tool  # noqa: E402  (trace checks)
from harness import check, report, strict_json  # noqa: E402

B = os.path.join(ROOT, "build")
CLEAN = ("dropped", "unmatched_begin", "unmatched_end", "backwards", "unfinalized_lanes", "invalid", "claimed_twice")


def summary(path):
    """ikp summary --json of a capture (None if it does not read)"""
    p = subprocess.run([os.path.join(B, "ikp"), "summary", path, "--json"], capture_output=True)
    try:
        return strict_json(p.stdout) if p.returncode == 0 else None
    except ValueError:
        return None


def clean_capture(st):
    """a capture with nothing lost or broken: its counts that say otherwise"""
    return {k: st[k] for k in CLEAN if st[k]} if st else {"unreadable": 1}


def under_ncu(out):
    """Example 1 under Nsight Compute, kernel replay, its default sections:
    ncu runs each kernel several times, saving and restoring the memory it
    writes between passes, so the capture holds the last pass's records:
    every lane once, nothing lost, as in a run without it."""
    base = os.path.join(out, "minimal-ncu")
    try:
        p = subprocess.run(["ncu", "--target-processes", "all", os.path.join(B, "minimal"), base],
                           capture_output=True, text=True, timeout=480)
    except FileNotFoundError:
        check(False, "ncu not found (it comes with the CUDA Toolkit)")
        return
    except subprocess.TimeoutExpired:
        check(False, "minimal under ncu: did not end within 480 s")
        return
    text = p.stdout + p.stderr
    check(p.returncode == 0 and "==PROF==" in text, "minimal runs under ncu (%s)" % text[-300:])
    st, plain = summary(base + ".ikp"), summary(os.path.join(out, "minimal.ikp"))
    check(st is not None and not clean_capture(st) and plain is not None and st["active_lanes"] == plain["active_lanes"] and
          st["records"] == plain["records"],
          "minimal under ncu: a clean capture, every lane once, the records of a run without ncu (%s; %s of %s lanes)" %
          (clean_capture(st), st and st["active_lanes"], plain and plain["active_lanes"]))
    info = subprocess.run([os.path.join(B, "ikp"), "info", base + ".ikp"], capture_output=True, text=True).stdout
    print("ikp info of the capture under ncu:\n" + info)
    warn = [l for l in info.splitlines() if l.startswith("warning") and "placement" not in l]
    check(not warn, "minimal under ncu: no warning but placement (%s)" % warn)


def main():
    out = os.path.join(B, "gpu-out")
    os.makedirs(out, exist_ok=True)
    examples = (("minimal", []), ("warp_specialized", []), ("persistent", []), ("gemm", ["1024"]), ("harness", []))
    only = sys.argv[1:]
    check(all(o in [e for e, _ in examples] for o in only), "examples named exist (%s)" % only)
    for ex, extra in examples:
        if only and ex not in only:
            continue
        base = os.path.join(out, ex)
        p = subprocess.run([os.path.join(B, ex), base] + extra, capture_output=True, text=True)
        print(p.stdout[-1500:])
        check(p.returncode == 0, "%s runs and computes the right result (%s)" % (ex, p.stderr[-300:]))
        evs = test_tool.check_trace(base + ".json", ex)  # strict JSON, fields, nesting: counted checks
        check(len(evs) > 0, "%s: trace has events" % ex)
        plain = summary(base + ".ikp")  # the capture taken without a tool
        check(plain is not None, ex + ": ikp summary reads the capture")
        check(not clean_capture(plain), ex + ": clean capture (%r)" % clean_capture(plain))
        if ex == "harness":
            # the recorded launch: every lane opened and closed, the early-return lanes too
            # (they hold no region), the timed repeats not recorded
            xs = [e for e in evs if e.get("ph") == "X"]
            check(plain is not None and plain["active_lanes"] == 500 * 8 and plain["unfinalized_lanes"] == 0 and
                  plain["claimed_twice"] == 0,
                  "harness: all 4000 lanes opened once and finalized, the early return's included (%s active)" %
                  (plain and plain["active_lanes"]))
            check(len(xs) == 3 * 3999, "harness: 3 regions a row of 3999, one launch recorded (%d regions)" % len(xs))
        if ex == "warp_specialized":
            # producer loads overlap consumer computes in the same block
            xs = [e for e in evs if e.get("ph") == "X"]
            overlap = 0
            blocks = {e["pid"] for e in xs}
            for b in blocks:
                loads = [(e["ts"], e["ts"] + e["dur"]) for e in xs if e["pid"] == b and e["name"] == "load" and e["tid"] == 1]
                comps = [(e["ts"], e["ts"] + e["dur"]) for e in xs if e["pid"] == b and e["name"] == "compute" and e["tid"] == 2]
                if any(ls < ce and cs < le for ls, le in loads for cs, ce in comps):
                    overlap += 1
            check(overlap >= len(blocks) // 2, "warp_specialized: producer and consumer overlap in %d of %d blocks" % (overlap, len(blocks)))
        # under the sanitizers twice: as sized, and with 3 records per lane so
        # that every lane overflows (drops are counted, nothing is written past it)
        for cap in (None, "3"):
            env = dict(os.environ)
            if cap:
                env["IKP_EXAMPLE_CAPACITY"] = cap
            for tool in ("memcheck", "racecheck", "synccheck"):
                try:
                    p = subprocess.run(["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", os.path.join(B, ex),
                                        base + "-" + tool] + extra, capture_output=True, text=True, env=env)
                except FileNotFoundError:
                    check(False, "compute-sanitizer not found (it comes with the CUDA Toolkit)")
                    continue
                tail = (p.stdout + p.stderr)[-400:]
                text = p.stdout + p.stderr
                clean = "ERROR SUMMARY: 0 errors" in text or "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" in text
                check(p.returncode == 0 and clean, "%s clean under %s%s (%s)" % (ex, tool, " with overflowing lanes" if cap else "", tail))
                if not cap:  # the capture taken under the tool: as one without it
                    st = summary(base + "-" + tool + ".ikp")
                    check(st is not None and not clean_capture(st) and plain is not None and
                          st["active_lanes"] == plain["active_lanes"],
                          "%s under %s: a clean capture, every lane once (%s)" % (ex, tool, clean_capture(st)))
            if cap:
                st = summary(base + "-synccheck.ikp")
                check(st is not None and st["dropped"] > 0 and st["records"] <= 3 * st["active_lanes"],
                      "%s overflow counted (%s dropped)" % (ex, st and st["dropped"]))
    if not only or "minimal" in only:
        under_ncu(out)
    return report()


if __name__ == "__main__":
    sys.exit(main())
