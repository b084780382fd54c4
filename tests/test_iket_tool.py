#!/usr/bin/env python3
"""`ikp` on NVIDIA IKET's trace.json (host only, part of make test and make check).

examples/data/iket/twin.trace.json was written by IKET 4.8.1 (nvidia-cutlass-dsl,
`run-iket profile --warp-trace --postprocess json`) on an H200 around
build/proton_twin, which records the same warps with IKP (twin.ikp, the same
run; examples/data/iket/README.md). Every expected figure is computed from the
files' own numbers. The layouts IKET's docs describe (4.7 and later: names and
locations in tables; 4.6: in place) are built here with ranges, payloads,
inner events, graph launches and three-dimensional grids, and broken files
get clear errors.

Usage: test_iket_tool.py   (IKP_TOOL: another build of the tool, e.g. under ASan: tests/harness.py)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from harness import IKP, check, report

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "examples", "data", "iket")
REAL = os.path.join(DATA, "twin.trace.json")
TWIN = os.path.join(DATA, "twin.ikp")


def ikp(*args):
    return subprocess.run([IKP] + list(args), capture_output=True, text=True)


def write(dirname, name, doc):
    p = os.path.join(dirname, name)
    with open(p, "w") as f:
        json.dump(doc, f)
    return p


def trace_events(path, tmp, *opts):
    """The Chrome trace ikp writes of path: (events, process names, thread names), or None."""
    out = os.path.join(tmp, os.path.basename(path) + ".json")
    r = ikp("trace", *opts, path, "-o", out)
    if r.returncode:
        check(False, f"ikp trace {os.path.basename(path)} ({r.stderr.strip()[:300]})")
        return None
    ev = json.load(open(out))["traceEvents"]
    pn = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    return ev, pn, tn


def regions(path, tmp):
    """{(block, warp): [(name, start ns, length ns), ...]} and {(block, warp): [(name, ns, payload)]}"""
    got = trace_events(path, tmp)
    if not got:
        return {}, {}
    ev, pn, tn = got
    reg, inst = {}, {}
    for e in ev:
        if e.get("ph") not in ("X", "i"):
            continue
        key = (int(pn[e["pid"]].split()[1]), int(tn[(e["pid"], e["tid"])].split()[1]))
        t = round(e["ts"] * 1000)
        if e["ph"] == "X":
            reg.setdefault(key, []).append((e["name"], t, round(e["dur"] * 1000), e.get("args", {})))
        else:
            inst.setdefault(key, []).append((e["name"], t, e.get("args", {}).get("begin_data")))
    return reg, inst


def real_file(tmp):
    doc = json.load(open(REAL))
    loc = doc["locationTable"]
    launches = doc["launches"] + [k for v in doc["graphLaunches"].values() for k in v]
    t0 = min(w["startTs"] for la in launches for w in la["warpLifetimes"])
    r = ikp("info", REAL)
    check(r.returncode == 0 and "IKET trace (format version 1) of %d launches" % len(launches) in r.stdout and
          "_Z4twinxxiiPm (context 1, grid 4)" in r.stdout and "trace-local" in r.stdout,
          f"the real trace: its launches and timebase said ({r.stdout.strip()[-500:]} {r.stderr.strip()})")
    # every warp lifetime a region "warp lifetime" of its length, on its launch's CTA and warp
    reg, _ = regions(REAL, tmp)
    base, want = 0, {}
    for la in launches:
        gx, gy = la["gridDimX"], la["gridDimY"]
        for w in la["warpLifetimes"]:
            L = loc[w["locIdx"]]
            x, y, z = L["ctaId"]
            key = (base + x + gx * (y + gy * z), L["warpId"])
            want.setdefault(key, []).append((w["startTs"] - t0, w["endTs"] - w["startTs"]))
        base += gx * gy * la["gridDimZ"]
    got = {k: sorted((t, d) for n, t, d, _ in v if n == "warp lifetime") for k, v in reg.items()}
    check(got == {k: sorted(v) for k, v in want.items()},
          f"the real trace: {sum(map(len, want.values()))} warp lifetimes, each on its CTA's warp, from its "
          f"start, of its length in ns ({len(got)} lanes read, {len(want)} wanted)")
    # IKP's recording of the same warps lies inside each warp's lifetime (IKET's stamps read as ns of
    # %globaltimer, as IKP's are): IKP's first begin at most 2 us after the warp starts, its last end at
    # most 2 us before the warp ends
    info = ikp("info", TWIN).stdout
    m = re.search(r"GPU (\d+)\.\d+ ns", info)
    twin_reg, _ = regions(TWIN, tmp)
    tw = [la for la in launches if la["kernelName"] == "_Z4twinxxiiPm"][0]
    life = {(loc[w["locIdx"]]["ctaId"][0], loc[w["locIdx"]]["warpId"]): w for w in tw["warpLifetimes"]}
    lead, lag = [], []
    if m and twin_reg:
        g0 = int(m.group(1))
        for key, v in twin_reg.items():
            first, last = min(t for _, t, _, _ in v), max(t + d for _, t, d, _ in v)
            lead.append(g0 + first - life[key]["startTs"])
            lag.append(life[key]["endTs"] - (g0 + last))
    check(len(lead) == 32 and 0 < min(lead) and max(lead) < 2000 and 0 < min(lag) and max(lag) < 2000,
          f"the real trace: IKP's records of the same 32 warps inside their lifetimes (IKP's first begin "
          f"{min(lead, default=None)}..{max(lead, default=None)} ns after the warp's start, its last end "
          f"{min(lag, default=None)}..{max(lag, default=None)} ns before its end)")
    # every command
    for args in (["summary", "--json", REAL], ["report", REAL, "-o", os.path.join(tmp, "r.md")],
                 ["report", "--json", REAL], ["diff", REAL, REAL],
                 ["export", REAL, "-o", os.path.join(tmp, "iket.parquet")],
                 ["merge", "--align", "start", TWIN, REAL, "-o", os.path.join(tmp, "m.json")],
                 ["trace", REAL, "-o", os.path.join(tmp, "iket.pftrace")]):
        r = ikp(*args)
        check(r.returncode == 0, f"ikp {' '.join(args[:2])} on an IKET trace ({r.stderr.strip()[:300]})")
    s = json.loads(ikp("summary", "--json", REAL).stdout or "{}")
    check(s.get("format") == "iket" and s.get("timer") == "ns" and "IKET trace" in s.get("source", ""),
          f"summary --json: format, timer and source ({s.get('format')}, {s.get('timer')})")


def loc(sm, cta, warp):
    return {"smId": sm, "tpcId": sm // 2, "gpcId": sm // 16, "ctaId": list(cta), "warpId": warp}


def layouts(tmp):
    big = (1 << 60) + 7  # past 2^53: read exactly
    doc = {
        "graphLaunches": {
            "graph_exec_1:0": [{"contextId": 9, "gridId": 5, "kernelName": "g", "gridDimX": 1, "gridDimY": 1,
                                "gridDimZ": 1, "blockDimX": 32, "blockDimY": 1, "blockDimZ": 1, "ranges": [],
                                "markers": [], "warpLifetimes": [{"startTs": big + 5000, "endTs": big + 5064,
                                                                  "locIdx": 0}]}],
            "graph_exec_1:1": [{"contextId": 9, "gridId": 6, "kernelName": "g", "gridDimX": 1, "gridDimY": 1,
                                "gridDimZ": 1, "blockDimX": 32, "blockDimY": 1, "blockDimZ": 1, "ranges": [],
                                "markers": [], "warpLifetimes": [{"startTs": big + 6000, "endTs": big + 6096,
                                                                  "locIdx": 0}]}]},
        "launches": [{
            "blockDimX": 64, "blockDimY": 1, "blockDimZ": 1, "contextId": 9, "gridDimX": 2, "gridDimY": 2,
            "gridDimZ": 1, "gridId": 4, "kernelName": "k",
            "markers": [
                {"color": 0, "locIdx": 2, "markerNameIdx": 1, "payloadType": 16, "payloadVal": (1 << 40) + 3,
                 "timestamp": big + 300},
                {"color": 0, "locIdx": 3, "markerNameIdx": 1, "timestamp": big + 400},
                {"color": 0, "locIdx": 4, "markerNameIdx": 1, "timestamp": big + 450}],
            "ranges": [
                {"endTs": big + 1000, "internalEvents": [
                    {"eventId": 1, "payloadType": 5, "payloadVal": (1 << 64) - 5, "timestamp": big + 100},
                    {"eventId": 5, "timestamp": big + 500},
                    {"eventId": 2, "payloadType": 6, "payloadVal": 77, "timestamp": big + 1000}],
                 "rangeColor": 0, "rangeId": 0, "rangeNameIdx": 0, "rangeScope": 0, "rangeType": 1,
                 "startTs": big + 100, "warpLocIdxs": [2, 2]},
                {"endTs": big + 700, "internalEvents": [], "rangeColor": 0, "rangeId": 0, "rangeNameIdx": 0,
                 "rangeScope": 0, "rangeType": 1, "startTs": big + 700, "warpLocIdxs": [3, 3]},
                {"endTs": big + 100, "internalEvents": [], "rangeColor": 0, "rangeId": 0, "rangeNameIdx": 0,
                 "rangeScope": 0, "rangeType": 1, "startTs": big + 900, "warpLocIdxs": [3, 3]}],
            "warpLifetimes": [{"endTs": big + 1032, "locIdx": 2, "startTs": big + 32},
                              {"endTs": big + 1100, "locIdx": 3, "startTs": big}]}],
        "locationTable": [loc(3, (0, 0, 0), 0), loc(4, (0, 0, 0), 1), loc(5, (1, 1, 0), 1), loc(6, (0, 1, 0), 0),
                          loc(7, (1, 0, 0), -1)],
        "meta": {"version": 1},
        "stringTable": ["mainloop", "tile"],
    }
    p = write(tmp, "tables.trace.json", doc)
    reg, inst = regions(p, tmp)
    # in the file's order: the graph's two replays blocks 0 and 1, launch k blocks 2..5 (2 + x + 2 y)
    check(sorted((n, t, d) for n, t, d, _ in reg.get((5, 1), [])) ==
          [("mainloop", 100, 900), ("warp lifetime", 32, 1000)],
          f"a range and a lifetime on CTA (1, 1)'s warp 1, block 5, their ns exact past 2^53 ({reg.get((5, 1))})")
    a = [x for n, _, _, x in reg.get((5, 1), []) if n == "mainloop"]
    check(a == [{"begin_data": 0xFFFFFFFB, "end_data": 77}],
          f"a range's payloads at its start and end: the begin's and the end's, low 32 bits ({a})")
    check(sorted(inst.get((5, 1), [])) == [("mainloop event 5", 500, None), ("tile", 300, 3)],
          f"a marker (its 64-bit payload's low 32 bits) and an inner event as instants ({inst.get((5, 1))})")
    check(sorted((n, t, d) for n, t, d, _ in reg.get((4, 0), [])) == [("mainloop", 700, 0), ("warp lifetime", 0, 1100)],
          f"a range of no length kept, in its lifetime; one that ends before it starts left out ({reg.get((4, 0))})")
    check(sorted((k, n, d) for k, v in reg.items() for n, _, d, _ in v if k[0] < 2) ==
          [((0, 0), "warp lifetime", 64), ((1, 0), "warp lifetime", 96)],
          f"each graph replay a launch of its own ({[k for k in reg if k[0] < 2]})")
    r = ikp("info", p)
    check(r.returncode == 0 and "graph_exec_1:0" in r.stdout and "graph_exec_1:1" in r.stdout and
          "1 ranges that end before they start left out" in r.stdout and
          "1 events of a warp or CTA IKET does not name left out" in r.stdout and
          "1 payloads wider than 32 bits cut" in r.stdout, f"what was left out or cut, said ({r.stdout.strip()[-500:]})")
    # the 4.6 layout: names and locations in place, no grid given (read from the CTAs)
    old = {"launches": [{"gridId": 0, "kernelName": "old", "ranges": [
        {"rangeName": "mainloop", "rangeScope": 0, "startTs": 1000, "endTs": 2500,
         "warpLocs": [loc(1, (2, 0, 0), 3)], "internalEvents": []}],
        "markers": [{"markerName": "check", "timestamp": 1500, "location": loc(1, (2, 0, 0), 3),
                     "payloadType": 0, "payloadVal": 0}],
        "warpLifetimes": [{"startTs": 900, "endTs": 3800, "warpLocation": loc(1, (2, 0, 0), 3)},
                          {"startTs": 950, "endTs": 3000, "warpLocation": loc(0, (0, 0, 0), 0)}]}]}
    p = write(tmp, "old.trace.json", old)
    reg, inst = regions(p, tmp)
    check(sorted((n, t, d) for n, t, d, _ in reg.get((2, 3), [])) == [("mainloop", 100, 1500),
                                                                       ("warp lifetime", 0, 2900)] and
          inst.get((2, 3)) == [("check", 600, None)] and ("warp lifetime", 50, 2050) in
          [(n, t, d) for n, t, d, _ in reg.get((0, 0), [])],
          f"the 4.6 layout read ({reg}, {inst})")
    r = ikp("info", p)
    check(r.returncode == 0 and "the 4.6 layout" in r.stdout and "grid        3 blocks x 4 groups" in r.stdout,
          f"the 4.6 layout: said, the grid from its CTAs ({r.stdout.strip()[:300]})")
    return doc


def broken(tmp, doc):
    text = json.dumps(doc)
    la = doc["launches"][0]

    def edited(f):
        d = json.loads(text)
        f(d)
        return json.dumps(d)
    cases = [
        ("cut", text[: len(text) // 2], "byte"),
        ("trailing", text + "]", "after the trace's end"),
        ("nostart", edited(lambda d: d["launches"][0]["ranges"][0].pop("startTs")), "without startTs"),
        ("float", edited(lambda d: d["launches"][0]["ranges"][0].update(startTs=1.5)), "unsigned integer"),
        ("negative", edited(lambda d: d["launches"][0]["warpLifetimes"][0].update(startTs=-3)), "unsigned integer"),
        ("name", edited(lambda d: d["launches"][0]["ranges"][0].update(rangeNameIdx=9)), "past the stringTable"),
        ("where", edited(lambda d: d["launches"][0]["markers"][0].update(locIdx=99)), "past the locationTable"),
        ("grid", edited(lambda d: d["launches"][0].update(gridDimY=1)), "outside its grid"),
        ("nolaunch", json.dumps({"stringTable": [], "locationTable": []}), "without \"launches\""),
        ("empty", json.dumps({"launches": [], "graphLaunches": {}}), "no launches"),
        ("lanes", json.dumps({"launches": [{"gridDimX": 4000000, "warpLifetimes": [
            {"startTs": 0, "endTs": 1, "warpLocation": loc(0, (0, 0, 0), 1023)}]}]}), "over the 1 GiB"),
        ("wrap", json.dumps({"launches": [{"gridDimX": 2147483648, "gridDimY": 2147483648, "gridDimZ": 4,
                                           "warpLifetimes": [{"startTs": 0, "endTs": 1,
                                                              "warpLocation": loc(0, (0, 0, 0), 0)}]}]}), "2^31 CTAs"),
        ("depth", edited(lambda d: d["locationTable"][2].update(ctaId=[1, 1, 4611686018427387904])), "outside its grid"),
        ("backslash", text[:text.index('"mainloop"') + 9] + "\\", "byte"),
    ]
    assert la["gridDimY"] == 2
    for name, body, want in cases:
        p = os.path.join(tmp, name + ".trace.json")
        with open(p, "w") as f:
            f.write(body)
        r = ikp("info", p)
        check(r.returncode not in (0,) and r.returncode < 128 and want in r.stderr,
              f"{name}: refused with '{want}' ({r.returncode}: {r.stderr.strip()[:300]})")
    r = ikp("info", "--format", "iket", os.path.join(HERE, "..", "examples", "data", "proton",
                                                     "spin_ws.chrome_trace"))
    check(r.returncode != 0 and "launches" in r.stderr, f"--format iket on a Proton trace: refused ({r.stderr.strip()})")
    r = ikp("info", "--format", "iket", TWIN)
    check(r.returncode != 0 and "no JSON" in r.stderr, f"--format iket on an .ikp file: refused ({r.stderr.strip()})")


def main():
    tmp = tempfile.mkdtemp(prefix="ikp-iket-tool-")
    real_file(tmp)
    doc = layouts(tmp)
    broken(tmp, doc)
    return report()


if __name__ == "__main__":
    sys.exit(main())
