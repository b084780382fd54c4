#!/usr/bin/env python3
"""End-to-end tests of build/ikp: every JSON output goes through a strict
parser (no NaN/Infinity, no duplicate keys, no control bytes, valid UTF-8),
Chrome traces are checked for proper nesting per (pid, tid), and bad input
must give a non-zero exit, one error line, and no output file."""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, report, strict_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IKP = os.environ.get("IKP_TOOL") or os.path.join(ROOT, "build", "ikp")
if not os.path.isabs(IKP):
    IKP = os.path.join(ROOT, IKP)
SAMPLE = os.path.join(ROOT, "examples", "data", "sample.ikp")
def run(*args):
    p = subprocess.run([IKP] + list(args), capture_output=True)
    return p.returncode, p.stdout, p.stderr


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
    check(not os.path.exists(out + ".ikp-tmp"), "no temporary file left")

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
    rc, so, se = run("trace", bare, "-o", out, "--by", "sm")
    check(rc == 1 and b"SM ids" in se, "--by sm on a format without SM ids is an error")

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
        check(not os.path.exists(out + ".ikp-tmp"), what + ": no temporary file")
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

    return report()


if __name__ == "__main__":
    sys.exit(main())
