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
KW, WREPS = 200000, 3  # the wait: warp 0 spins KW cycles, the other warps wait for it at a barrier
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


def wait_lengths(ikp, path, opts):
    """Mean ns of "load" on warp 0 and of "wait" on the other warps, as ikp reads path (None: unread)."""
    out = path + ".trace.json"
    r = run([ikp, "trace"] + opts + [path, "-o", out])
    if r.returncode:
        return None
    ev = json.load(open(out))["traceEvents"]
    tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    got = {}
    for e in ev:
        if e.get("ph") == "X":
            warp = int(tn[(e["pid"], e["tid"])].split()[-1])
            if (e["name"] == "load" and warp == 0) or (e["name"] == "wait" and warp > 0):
                got.setdefault(e["name"], []).append(float(e["dur"]) * 1000.0)
    return {k: sum(v) / len(v) for k, v in got.items()}


def waits(ikp, here, build, out, gpu):
    """A wait at a barrier: warp 0 spins KW cycles in "load", every warp then
    waits at the block's barrier in "wait". IKP's stamp after the barrier is
    read after it, so the waiting warps' "wait" lasts about as long as warp
    0's spin; Proton's closing stamp is read as the barrier is issued, before
    it completes, so its "wait" reads a few dozen cycles (checked: under 5%
    of the spin, so the check can fail either way)."""
    r = run([sys.executable, os.path.join(here, "proton_spin.py"), out, str(KW), "0", str(WREPS), str(PROGRAMS),
             "wait"], timeout=300)
    check(r.returncode == 0, f"Proton ran the wait kernel on {gpu}")
    twin = os.path.join(out, "twin_wait")
    r2 = run([os.path.join(build, "proton_twin"), twin, str(KW), "0", str(WREPS), str(PROGRAMS), "wait"], timeout=60)
    check(r2.returncode == 0, "IKP recorded the same wait")
    if r.returncode or r2.returncode:
        return
    path = os.path.join(out, "spin_wait.chrome_trace")
    mine = wait_lengths(ikp, twin + ".ikp", [])
    theirs = wait_lengths(ikp, path, ["--device", gpu])
    raw = {}
    for e in json.load(open(path))["traceEvents"]:
        if e.get("ph") == "X":
            raw.setdefault(e["name"], []).append(float(e["dur"]) * 1000.0)
    face = {k: sum(v) / len(v) for k, v in raw.items()}
    if not mine or not theirs or set(mine) != {"load", "wait"} or set(theirs) != {"load", "wait"}:
        check(False, f"load and wait read from both ({mine}, {theirs})")
        return
    print(f"  wait at a barrier, ns a region, warp 0's load / the other warps' wait: IKP {mine['load']:.0f} / "
          f"{mine['wait']:.0f}; Proton read by ikp {theirs['load']:.0f} / {theirs['wait']:.0f}; Proton's own "
          f"'us' x 1000 (all warps) {face.get('load', 0):.0f} / {face.get('wait', 0):.0f}")
    check(abs(theirs["load"] / mine["load"] - 1) <= 0.05, f"wait kernel: Proton's load {theirs['load']:.0f} ns, "
          f"IKP's {mine['load']:.0f} ns (checked: 5%)")
    check(mine["wait"] >= 0.9 * mine["load"], f"IKP: the waiting warps' wait {mine['wait']:.0f} ns covers warp 0's "
          f"spin {mine['load']:.0f} ns")
    check(theirs["wait"] <= 0.05 * mine["load"], f"Proton: the waiting warps' wait reads {theirs['wait']:.0f} ns "
          f"of a {mine['load']:.0f} ns wait (its stamp is read before the barrier completes)")


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
    waits(ikp, here, build, out, gpu)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
