#!/usr/bin/env python3
"""Triton's Proton read by `ikp`, against IKP's own recording of the same work
(part of `make gpu-test`).

tests/gpu/proton_spin.py runs a Triton kernel under Proton (instrumentation
backend, data="trace"): 8 programs of 4 warps, each warp spinning KA SM cycles
in scope "load" and KB in "compute", 4 times; then a warp-specialized variant
(warp 0 "load" only, the others "compute" only). build/proton_twin records the
same spins with IKP's macros. `ikp summary --json` reads both, the Proton trace
with `--device` named by the GPU (its boost clock): every scope's mean length
in ns must match IKP's within 5%, and Proton's own numbers taken as us (its
1000 MHz label) must not (they are cycles: 1.7-2x too long on an H100 or
H200), so the check could catch a reader that forgot the rate.

Usage: test_proton.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

KA, KB, REPS, PROGRAMS = 20000, 40000, 4, 8
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + what)
    else:
        failed += 1
        print("FAIL " + what)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        print("$ " + " ".join(cmd) + "\n" + r.stdout + r.stderr)
    return r


def means(summary):
    return {e["name"]: e["mean_ns"] for e in summary["events"]}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    ikp = os.path.join(build, "ikp")
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import torch
        gpu = torch.cuda.get_device_name(0)
    except Exception as e:  # no torch or no GPU: a failure, not a skip
        check(False, f"torch and a GPU to run Triton's Proton on ({e})")
        print(f"{passed} passed, {failed} failed")
        return 1
    out = tempfile.mkdtemp(prefix="ikp-proton-")
    for variant in ("plain", "ws"):
        r = run([sys.executable, os.path.join(here, "proton_spin.py"), out, str(KA), str(KB), str(REPS),
                 str(PROGRAMS), variant], timeout=300)
        check(r.returncode == 0, f"Proton ran the {variant} kernel on {gpu}")
        if r.returncode:
            continue
        for line in r.stdout.splitlines():
            if line.startswith("proton_spin "):
                print("  " + line)
        traces = ["spin_default", "spin_clock32"] if variant == "plain" else ["spin_ws"]
        twin = os.path.join(out, "twin_" + variant)
        r = run([os.path.join(build, "proton_twin"), twin, str(KA), str(KB), str(REPS), str(PROGRAMS)] +
                (["ws"] if variant == "ws" else []), timeout=60)
        check(r.returncode == 0, f"IKP recorded the same {variant} work")
        if r.returncode:
            continue
        s = run([ikp, "summary", "--json", twin + ".ikp"])
        ref = means(json.loads(s.stdout)) if s.returncode == 0 else {}
        check(set(ref) == {"load", "compute"}, f"IKP's capture holds load and compute ({sorted(ref)})")
        for t in traces:
            path = os.path.join(out, t + ".chrome_trace")
            s = run([ikp, "summary", "--json", "--device", gpu, path])
            check(s.returncode == 0, f"ikp summary --device '{gpu}' {t}.chrome_trace")
            if s.returncode:
                continue
            got = means(json.loads(s.stdout))
            raw = {}
            for e in json.load(open(path))["traceEvents"]:
                if e.get("ph") == "X":
                    raw.setdefault(e["name"], []).append(float(e["dur"]) * 1000.0)
            for name in ("load", "compute"):
                if name not in got or name not in ref:
                    check(False, f"{t}: {name} in both captures")
                    continue
                rel = got[name] / ref[name] - 1
                check(abs(rel) <= 0.05, f"{t}: {name} {got[name]:.1f} ns a scope, IKP's own {ref[name]:.1f} ns "
                      f"({rel * 100:+.2f}%, checked: 5%)")
                face = sum(raw[name]) / len(raw[name])
                check(abs(face / ref[name] - 1) > 0.2, f"{t}: {name} read at Proton's 1000 MHz label would be "
                      f"{face:.1f} ns ({(face / ref[name] - 1) * 100:+.1f}%): the rate matters")
            d = run([ikp, "diff", "--device", gpu, twin + ".ikp", path])
            check(d.returncode == 0 and "load" in d.stdout and "compute" in d.stdout,
                  f"{t}: ikp diff IKP's capture against Proton's trace of the same work")
            r = run([ikp, "info", path])
            check(r.returncode != 0 and "--cycles-per-ns" in r.stderr,
                  f"{t}: without a rate ikp refuses and says how to give one")
            if variant == "ws":
                s = run([ikp, "summary", "--json", "--device", gpu, path])
                groups = {g["name"]: g for g in json.loads(s.stdout).get("groups", [])}
                check(len(groups) == 4, f"{t}: four warps, one group each ({sorted(groups)})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
