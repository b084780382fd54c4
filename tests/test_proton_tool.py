#!/usr/bin/env python3
"""`ikp` on Triton Proton's Chrome traces (host only, part of make test and
make check).

The traces in examples/data/proton were written by Triton 3.6.0's Proton on
an H200 (tests/gpu/proton_spin.py); tests/gpu/test_proton.py checks the same
reading against IKP's own recording on the GPU. Here every expected figure is
computed from the file's own numbers: a scope's length in ns is its dur
(cycles / 1000) x 1000 / the rate given. Variants of the real files (no
Frequency key, init and final stamps, cut short, not Proton's) are made by
editing their JSON.

Usage: test_proton_tool.py   (IKP_TOOL: another build of the tool, e.g. under ASan: tests/harness.py)
"""
import json
import os
import subprocess
import sys
import tempfile

from harness import IKP, check, report

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "examples", "data", "proton")


def ikp(*args):
    return subprocess.run([IKP] + list(args), capture_output=True, text=True)


def raw_events(path):
    return [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]


def summary(path, *opts):
    r = ikp("summary", "--json", *opts, path)
    return (json.loads(r.stdout) if r.returncode == 0 else None), r


def lengths_match(path, rate_opts, rate, what, ns_already=False):
    s, r = summary(path, *rate_opts)
    check(s is not None, f"{what}: ikp summary {' '.join(rate_opts)} reads it ({r.stderr.strip()})")
    if s is None:
        return None
    check(s["format"] == "proton", f"{what}: format proton ({s['format']})")
    by = {}
    for e in raw_events(path):
        by.setdefault(e["name"], []).append(float(e["dur"]) * 1000.0 / (1.0 if ns_already else rate))
    got = {e["name"]: e for e in s["events"]}
    check(set(got) == set(by), f"{what}: the scopes {sorted(by)} ({sorted(got)})")
    for name, d in by.items():
        if name not in got:
            continue
        want = sum(d) / len(d)
        check(got[name]["count"] == len(d), f"{what}: {name} x{len(d)} ({got[name]['count']})")
        # each stamp rounded to the ns: a length within 1 ns
        check(abs(got[name]["mean_ns"] - want) <= 1.0, f"{what}: {name} mean {got[name]['mean_ns']} ns, "
              f"from the file {want:.2f}")
        check(abs(got[name]["max_ns"] - max(d)) <= 1.0 and abs(got[name]["min_ns"] - min(d)) <= 1.0,
              f"{what}: {name} min/max")
    return s


def write(dirname, name, doc):
    p = os.path.join(dirname, name)
    with open(p, "w") as f:
        json.dump(doc, f)
    return p


def main():
    tmp = tempfile.mkdtemp(prefix="ikp-proton-tool-")
    files = ["spin_default", "spin_clock32", "spin_ws", "spin_wait"]
    for f in files:
        path = os.path.join(DATA, f + ".chrome_trace")
        lengths_match(path, ["--device", "h200"], 1.98, f + " --device h200")
        lengths_match(path, ["--device", "NVIDIA H100 PCIe"], 1.755, f + " --device 'NVIDIA H100 PCIe'")
        # the names CUDA gives the boards (cudaDeviceProp::name), as tests/gpu/test_proton.py passes them
        for name, rate in (("NVIDIA H100 80GB HBM3", 1.98), ("NVIDIA H200", 1.98), ("NVIDIA A100-SXM4-80GB", 1.41)):
            lengths_match(path, ["--device", name], rate, f"{f} --device '{name}'")
        lengths_match(path, ["--cycles-per-ns", "1.5"], 1.5, f + " --cycles-per-ns 1.5")
        r = ikp("info", path)
        check(r.returncode != 0 and "--cycles-per-ns" in r.stderr and "--device" in r.stderr,
              f"{f}: no rate: refused, saying how to give one ({r.stderr.strip()})")
        r = ikp("info", "--device", "rtx9999", path)
        check(r.returncode != 0 and "rtx9999" in r.stderr and "h200" in r.stderr,
              f"{f}: an unknown GPU named ({r.stderr.strip()})")
        r = ikp("info", "--device", "h200", path)
        check(r.returncode == 0 and "1980 MHz, the boost clock of h200: an assumption" in r.stdout and
              "earliest event" in r.stdout and "not in the file: Proton's drops" in r.stdout and "clock32's wraps" in
              r.stdout, f"{f}: info states the rate, the placement it rests on and what the file cannot say")
        # the SMs and CTAs the file names
        raw = raw_events(path)
        t = os.path.join(tmp, f + ".json")
        r = ikp("trace", "--device", "h200", "--by", "sm", path, "-o", t)
        check(r.returncode == 0, f"{f}: ikp trace --by sm ({r.stderr.strip()})")
        if r.returncode == 0:
            names = {e["args"]["name"] for e in json.load(open(t))["traceEvents"]
                     if e.get("ph") == "M" and e.get("name") == "process_name"}
            cores = {"SM " + e["pid"].split(" Core")[1].split(" ")[0] for e in raw}
            check(all(any(n.startswith(c) for n in names) for c in cores), f"{f}: a track per SM the file names "
                  f"({sorted(cores)[:4]}..., {sorted(names)[:4]}...)")
    # the warp-specialized kernel: warp 0 loads, the others compute
    ws = os.path.join(DATA, "spin_ws.chrome_trace")
    t = os.path.join(tmp, "ws.json")
    r = ikp("trace", "--device", "h200", ws, "-o", t)
    if r.returncode == 0:
        d = json.load(open(t))["traceEvents"]
        tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in d if e.get("name") == "thread_name"}
        on = {}
        for e in d:
            if e.get("ph") == "X":
                on.setdefault(e["name"], set()).add(tname.get((e["pid"], e["tid"])))
        check(on.get("load") == {"warp 0"} and "warp 0" not in on.get("compute", {"warp 0"}),
              f"spin_ws: load on warp 0 alone, compute on the others ({on})")
    else:
        check(False, "spin_ws: ikp trace " + r.stderr)
    # a wait at a barrier (spin_wait: warp 0 spins 200,000 cycles in "load", every warp then waits at the
    # barrier in "wait"; twin_wait.ikp: IKP's recording of the same, the same H200): IKP's stamp after the
    # barrier is read after it, Proton's before the barrier completes
    got = {}
    for name, path, opts in (("ikp", os.path.join(DATA, "twin_wait.ikp"), []),
                             ("proton", os.path.join(DATA, "spin_wait.chrome_trace"), ["--device", "h200"])):
        t = os.path.join(tmp, name + "-wait.json")
        r = ikp("trace", *opts, path, "-o", t)
        if not check(r.returncode == 0, f"wait kernel: ikp trace {os.path.basename(path)} ({r.stderr.strip()[:200]})"):
            continue
        d = json.load(open(t))["traceEvents"]
        tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in d if e.get("name") == "thread_name"}
        for e in d:
            if e.get("ph") == "X":
                warp = int(tn[(e["pid"], e["tid"])].split()[-1])
                if (e["name"] == "load") == (warp == 0):
                    got.setdefault((name, e["name"]), []).append(float(e["dur"]) * 1000)
    mean = {k: sum(v) / len(v) for k, v in got.items()}
    check(len(mean) == 4 and mean[("ikp", "wait")] >= 0.9 * mean[("ikp", "load")] and
          mean[("proton", "wait")] <= 0.05 * mean[("ikp", "load")] and
          abs(mean[("proton", "load")] / mean[("ikp", "load")] - 1) <= 0.05,
          f"wait kernel: IKP's waits cover warp 0's spin, Proton's read almost nothing, the spins agree ({mean})")
    # every command
    for cmd in (["report"], ["report", "--json"], ["diff", ws], ["export", "-o", os.path.join(tmp, "ws.parquet")]):
        args = [cmd[0], "--device", "h200"] + cmd[1:] + [ws]
        if cmd[0] == "diff":
            args = ["diff", "--device", "h200", ws, ws]
        r = ikp(*args)
        check(r.returncode == 0, f"ikp {' '.join(args[:3])} on a Proton trace ({r.stderr.strip()[:300]})")
    sample = os.path.join(HERE, "..", "examples", "data", "sample.ikp")
    r = ikp("merge", "--device", "h200", "--align", "start", sample, ws, "-o", os.path.join(tmp, "m.json"))
    check(r.returncode == 0, f"ikp merge an IKP capture with a Proton trace, --align start ({r.stderr.strip()[:300]})")
    # variants
    doc = json.load(open(ws))
    nofreq = json.loads(json.dumps(doc))
    for e in nofreq["traceEvents"]:
        e.get("args", {}).pop("Frequency (MHz)", None)
    p = write(tmp, "nofreq.chrome_trace", nofreq)
    s = lengths_match(p, [], 1.0, "no Frequency key: ns already", ns_already=True)
    check(s is not None and "in ns already" in s.get("source", "") and "no init and final stamps" in s.get("source", ""),
          "no Frequency key: said so, and that nothing checks it")
    # read as ns, checked against each CTA's own init and final %globaltimer stamps: a window that holds its
    # events passes, one shorter than them (the values were cycles after all) is refused
    for slack, ok in ((50, True), (-5000, False)):
        v = json.loads(json.dumps(nofreq))
        first, last = {}, {}
        for e in v["traceEvents"]:
            first[e["pid"]] = min(first.get(e["pid"], 1e30), float(e["ts"]))
            last[e["pid"]] = max(last.get(e["pid"], 0.0), float(e["ts"]) + float(e["dur"]))
        for e in v["traceEvents"]:
            e["args"]["Init Time (ns)"] = 7_000_000
            e["args"]["Post Final Time (ns)"] = 7_000_000 + int((last[e["pid"]] - first[e["pid"]]) * 1000) + slack
        p = write(tmp, f"nofreq_stamped{slack}.chrome_trace", v)
        r = ikp("info", p)
        check((r.returncode == 0 and "within its init and final stamps" in r.stdout) if ok else
              (r.returncode != 0 and "its times are not ns" in r.stderr),
              f"no Frequency key, stamps {'holding' if ok else 'shorter than'} each CTA's events: "
              f"{'read' if ok else 'refused'} ({r.stdout.strip()[-200:]} {r.stderr.strip()[-300:]})")
    stamped = json.loads(json.dumps(doc))
    ctas = sorted({e["pid"] for e in stamped["traceEvents"]})
    init = {pid: 5_000_000_000 + 700 * k for k, pid in enumerate(ctas)}
    ends = {}
    for e in stamped["traceEvents"]:
        ends[e["pid"]] = max(ends.get(e["pid"], 0.0), float(e["ts"]) + float(e["dur"]))
    for e in stamped["traceEvents"]:
        # ts as Proton writes it: (cycles after the CTA's start + its init less the earliest) / 1000
        e["args"]["Init Time (ns)"] = init[e["pid"]]
        e["args"]["Post Final Time (ns)"] = init[e["pid"]] + int(ends[e["pid"]] * 1000 / 1.9) + 50
    p = write(tmp, "stamped.chrome_trace", stamped)
    r = ikp("info", p)
    check(r.returncode == 0 and "lower bound" in r.stdout and "init %globaltimer stamp" in r.stdout,
          f"init and final stamps: the rate's lower bound, CTAs by their init ({r.stdout.strip()[-400:]} {r.stderr})")
    s, r = summary(p, "--device", "h200")
    check(s is not None and "init %globaltimer" in s.get("source", ""), "init stamps with --device h200")
    # cross-warp pairs (two events of no length joined by bind_id, as Proton's writer makes them): the arrows
    # join the pairs by bind_id, not by order (the pairs cross: 0 -> 300 and 100 -> 200 cycles), with and
    # without newer Proton's flow_out / flow_in marks
    for marked in (False, True):
        pid, evs = "k Core3 CTA0", []
        for bind, (t_out, t_in) in ((7, (0, 300)), (8, (100, 200))):
            for t, tid, mark in ((t_out, "warp 2 (line 0)", "flow_out"), (t_in, "warp 5 (line 0)", "flow_in")):
                e = {"name": "async_copy", "cat": "flow", "ph": "X", "pid": pid, "tid": tid, "ts": t / 1000.0,
                     "dur": 0, "bind_id": bind, "args": {"Frequency (MHz)": 1000.0, "call_stack": []}}
                if marked:
                    e[mark] = True
                evs.append(e)
        evs.append({"name": "load", "cat": "k", "ph": "X", "pid": pid, "tid": "warp 2 (line 0)", "ts": 0.0,
                    "dur": 0.05, "args": {"Frequency (MHz)": 1000.0}})
        # a scope of one cycle (under a ns at 2 cycles/ns: its ends round to one ns) stays a region
        evs.append({"name": "tick", "cat": "k", "ph": "X", "pid": pid, "tid": "warp 5 (line 0)", "ts": 0.401,
                    "dur": 0.001, "args": {"Frequency (MHz)": 1000.0}})
        p = write(tmp, f"flows{int(marked)}.chrome_trace", {"displayTimeUnit": "ns", "traceEvents": evs})
        out = os.path.join(tmp, f"flows{int(marked)}.json")
        r = ikp("trace", "--cycles-per-ns", "2", p, "-o", out)
        got, names = {}, set()
        if r.returncode == 0:
            for e in json.load(open(out))["traceEvents"]:
                if e.get("ph") in ("s", "f"):
                    got.setdefault(e["id"], {})[e["ph"]] = round(e["ts"] * 1000)
                elif e.get("ph") == "i":
                    names.add(e["name"])
        pairs = sorted((v.get("s"), v.get("f")) for v in got.values())
        check(r.returncode == 0 and pairs == [(0, 150), (50, 100)] and "2 flows drawn" in r.stderr,
              f"cross-warp pairs{' (marked)' if marked else ''}: arrows (ns) {pairs}, want [(0, 150), (50, 100)] "
              f"({r.stderr.strip()[-300:]})")
        s, r = summary(p, "--cycles-per-ns", "2")
        tick = [e for e in (s or {}).get("events", []) if e["name"] == "tick"]
        check(s is not None and s["unmatched_begin"] == s["unmatched_end"] == 0 and len(tick) == 1 and
              tick[0]["count"] == 1 and tick[0]["max_ns"] <= 1, f"a scope of one cycle: a region ({tick})")
        check(s is not None and names == {"async_copy (out)", "async_copy (in)"} and s["instants"] == 4 and
              "4 ends of cross-warp pairs" in s.get("source", ""),
              f"cross-warp pairs{' (marked)' if marked else ''}: named (out) and (in), counted in the source "
              f"({names}, {s.get('source') if s else r.stderr})")
    # bind ids reused by every CTA (each pair within its CTA) and ids that are no integers (no pair: plain
    # instants, never a crash)
    evs = []
    for cta in (0, 1):
        pid = f"k Core{cta} CTA{cta}"
        for t, tid in ((0, "warp 0 (line 0)"), (100, "warp 1 (line 0)")):
            evs.append(json.dumps({"name": "copy", "cat": "flow", "ph": "X", "pid": pid, "tid": tid, "ts": t / 1000.0,
                                   "dur": 0, "bind_id": 0, "args": {"Frequency (MHz)": 1000.0}}))
        for bad in ("1e400", "-1", "0.5", '"x"', "18446744073709551616"):  # the text as written, not Python's
            evs.append('{"name": "odd", "cat": "flow", "ph": "X", "pid": "%s", "tid": "warp 0 (line 0)", "ts": 0.2, '
                       '"dur": 0, "bind_id": %s, "args": {"Frequency (MHz)": 1000.0}}' % (pid, bad))
    p = os.path.join(tmp, "reused.chrome_trace")
    with open(p, "w") as f:
        f.write('{"traceEvents": [' + ", ".join(evs) + "]}")
    out = os.path.join(tmp, "reused.json")
    r = ikp("trace", "--cycles-per-ns", "2", p, "-o", out)
    names = sorted({e["name"] for e in json.load(open(out))["traceEvents"] if e.get("ph") == "i"}) if r.returncode == 0 else []
    check(r.returncode == 0 and "2 flows drawn" in r.stderr and names == ["copy (in)", "copy (out)", "odd"],
          f"bind ids reused by each CTA: a pair in each; ids that are no integers: no pair ({names}, {r.stderr.strip()[-300:]})")
    # bad files: clear errors, never a crash
    text = open(ws).read()
    for name, body, want in (("cut", text[: len(text) // 2], "byte"),
                             ("notproton", json.dumps({"traceEvents": [{"ph": "X", "name": "a", "pid": "foo",
                                                                        "tid": "warp 0", "ts": 1, "dur": 2}]}),
                              "not a Proton trace"),
                             ("nothread", json.dumps({"traceEvents": [{"ph": "X", "name": "a", "pid": "k Core1 CTA0",
                                                                       "tid": "lane 0", "ts": 1, "dur": 2}]}),
                              "not a Proton trace"),
                             ("empty", json.dumps({"traceEvents": []}), "no events"),
                             ("kineto", json.dumps({"traceEvents": [{"ph": "X", "name": "k", "pid": 1, "tid": 2,
                                                                     "ts": 3, "dur": 4}]}), "not a Proton trace"),
                             ("notrace", json.dumps({"foo": 1}), "traceEvents"),
                             ("trailing", text + "}", "after the trace's end")):
        p = os.path.join(tmp, name + ".chrome_trace")
        with open(p, "w") as f:
            f.write(body)
        r = ikp("info", "--device", "h200", p)
        check(r.returncode != 0 and want in r.stderr and "Traceback" not in r.stderr and r.returncode < 128,
              f"{name}: refused with '{want}' ({r.returncode}: {r.stderr.strip()[:300]})")
    r = ikp("info", "--format", "proton", os.path.join(HERE, "..", "examples", "data", "sample.ikp"))
    check(r.returncode != 0 and "no JSON" in r.stderr, f"--format proton on an .ikp file: refused ({r.stderr.strip()})")
    return report()


if __name__ == "__main__":
    sys.exit(main())
