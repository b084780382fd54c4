#!/usr/bin/env python3
"""`ikp diff` and `ikp report` as a user runs them, on the captures that
test_analysis saved with known answers (build/test-out/analysis): the
report's figures, its picture rendered to PNG by rsvg-convert and read
back pixel by pixel, the diff's JSON and exit status, and bad usage."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import IKP, ROOT, check, report, run, strict_json  # noqa: E402

A = os.path.join(ROOT, "build", "test-out", "analysis")
SAMPLE = os.path.join(ROOT, "examples", "data", "sample.ikp")
PALETTE = ["4e79a7", "f28e2b", "e15759", "76b7b2", "59a14f", "edc948"]


def png_pixels(path):
    """(width, height, set of RGB colours) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "unexpected PNG type"
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        for x in range(0, stride, bpp):
            colours.add("%02x%02x%02x" % (line[x], line[x + 1], line[x + 2]))
        prev = line
    return w, h, colours


def render(svg, png):
    p = subprocess.run(["rsvg-convert", svg, "-o", png], capture_output=True)
    check(p.returncode == 0, "rsvg-convert renders %s: %s" % (svg, p.stderr.decode(errors="replace")))
    return p.returncode == 0


def svg_size(svg):
    head = open(svg).read(600)
    m = re.search(r'<svg [^>]*width="([\d.]+)" height="([\d.]+)"', head)
    return (float(m.group(1)), float(m.group(2))) if m else (0, 0)


def cap(name):
    return os.path.join(A, name + ".ikp")


def main():
    for n in ("overlap", "tail", "base", "base2", "mma10", "extra", "blocks", "blocks49", "straggler"):
        if not check(os.path.exists(cap(n)), "test_analysis saved %s.ikp (run it first)" % n):
            return report()
    if not check(shutil.which("rsvg-convert") is not None, "rsvg-convert is installed (make test installs it)"):
        return report()
    tmp = tempfile.mkdtemp(prefix="ikp-report-")

    # the device: as the capture names it (what ikp info prints), else said to be missing; --device wins
    sample = os.path.join(ROOT, "examples", "data", "sample.ikp")
    rc, so, se = run("report", sample)
    rc2, info, _ = run("info", sample)
    m = re.search(rb"\ndevice      (GPU-[0-9a-f-]{36}[^\n]*)\n", info)
    check(rc == 0 and rc2 == 0 and m is not None and b"| device | " + m.group(1) + b" |" in so,
          "report names the capture's device as info does (%r)" % (m and m.group(1)))
    # README's command on the bundled capture names the producer: the
    # consumers wait at the barrier for its loads, and their `wait` is taken
    # as a wait by its name (and said so); every bundled launch the same
    for path in [sample] + [os.path.join(ROOT, "examples", "data", "launch%d.ikp" % k) for k in (1, 2, 3)]:
        rc, so, se = run("report", path, "-o", "-")
        bound = re.search(rb"\*\*Bound by ([^*]+)\*\*[^\n]* in ([0-9]+) of ([0-9]+) blocks", so)
        check(rc == 0 and bound and bound.group(1) == b"producer" and bound.group(2) == bound.group(3) and
              b"Waits, idle rather than busy: `wait`, taken by name" in so,
              "README's ikp report on %s: bound by the producer in every block, the wait taken by name (%r)" %
              (os.path.basename(path), bound and bound.group(0)))
    # one definition of a group's busy fraction (inside a region, over its
    # blocks' spans): summary, diff and report (no waits) give one number
    l1, l2 = (os.path.join(ROOT, "examples", "data", "launch%d.ikp" % k) for k in (1, 2))
    _, sj, _ = run("summary", l1, "--json")
    _, dj, _ = run("diff", l1, l2, "--json")
    _, rj, _ = run("report", l1, "--json", "--wait", "none")
    s_, d_, r_ = ({g["name"]: g["busy_fraction"] for g in strict_json(sj)["groups"]},
                  {g["name"]: g["base"]["busy_fraction"] for g in strict_json(dj)["groups"]},
                  {g["name"]: g["busy_fraction"] for g in strict_json(rj)["pipeline"]["groups"]})
    check(set(s_) == {"producer", "consumer"} and all(abs(s_[k] - d_[k]) < 1e-6 and abs(s_[k] - r_[k]) <= 5e-4
                                                       for k in s_),
          "busy fraction: summary %s, diff %s, report %s (its JSON to 3 digits): one definition" % (s_, d_, r_))
    rc, so, se = run("report", sample, "--wait", "none", "-o", "-")
    check(rc == 0 and b"No event is taken as a wait, as asked" in so, "--wait none: no wait, said (%r)" % se)
    rc, so, se = run("report", sample, "--json")
    p = strict_json(so)["pipeline"] if rc == 0 else {}
    check(p.get("waits") == ["wait"] and p.get("waits_taken") == "by_name" and p.get("bound_group") == "producer",
          "report --json: the waits taken and why, the producer bound (%s)" % {k: p.get(k) for k in ("waits", "waits_taken")})
    rc, so, se = run("report", cap("base"), "-o", "-")
    check(rc == 0 and b"No event is taken as a wait (none was given, and none is named" in so,
          "a capture with no event named as a wait: the hint to say which (%r)" % so[:0])
    rc, so, se = run("report", cap("base"))
    check(rc == 0 and b"| device | not recorded in the capture |" in so, "a capture with no device: said")
    rc, so, se = run("report", sample, "--device", "H200 test rig")
    check(rc == 0 and b"| device | H200 test rig |" in so, "--device names it")

    # report: the known overlap (both 20%, producer alone 50%, consumer alone 30%)
    md = os.path.join(tmp, "overlap.md")
    rc, so, se = run("report", cap("overlap"), "-o", md)
    check(rc == 0, "report overlap: %s" % se)
    text = open(md).read() if rc == 0 else ""
    check("| producer | consumer | 20.0% | 50.0% | 30.0% | 0.0% |" in text, "overlap fractions in the pairs table")
    check("**Bound by producer**" in text, "the producer bounds the block")
    check("| producer | 1 | 70.0% | 30.0% | 50.0% |" in text, "producer busy, idle and alone")
    check("![IKP timeline and heatmap](overlap.svg)" in text, "the picture linked beside the report")
    svg = os.path.join(tmp, "overlap.svg")
    check(os.path.exists(svg), "the picture written beside the report")
    png = os.path.join(tmp, "overlap.png")
    if os.path.exists(svg) and render(svg, png):
        w, h, colours = png_pixels(png)
        sw, sh = svg_size(svg)
        check((w, h) == (int(round(sw)), int(round(sh))), "PNG %dx%d is the SVG's size %gx%g" % (w, h, sw, sh))
        check(PALETTE[0] in colours and PALETTE[1] in colours, "bars of load and mma drawn in their colours")
        check("08306b" in colours, "the heatmap's darkest shade (the busiest bin) drawn")
        check("ffffff" in colours, "a white background")

    # the tail, and the slowest block named
    rc, so, se = run("report", cap("tail"), "-o", "-")
    check(rc == 0 and b"a tail of 4.000 us" in so, "report tail: %s" % se)
    check(b"| 7 | 27 | 0.000 | 5.000 | 5.000 |" in so, "the last block (7, on SM 27) listed first")
    check(b"**Bound by epilogue**" in so, "group 2 (named epilogue) bounds most blocks")
    check(not os.path.exists(os.path.join(ROOT, "-.svg")), "-o - writes no picture")

    # the bundled sample: every event's colour in the rendering
    md = os.path.join(tmp, "sample.md")
    rc, so, se = run("report", SAMPLE, "-o", md, "--wait", "wait", "--device", "NVIDIA H100 80GB HBM3")
    check(rc == 0, "report sample: %s" % se)
    text = open(md).read() if rc == 0 else ""
    check("| device | NVIDIA H100 80GB HBM3 |" in text, "the device named")
    check("less the wait events'" in text, "waits said")
    for sec in ("## Configuration", "## Stages", "## Pipeline", "## Balance", "## Picture", "<details>"):
        check(sec in text, "sample report has " + sec)
    if render(os.path.join(tmp, "sample.svg"), os.path.join(tmp, "sample.png")):
        w, h, colours = png_pixels(os.path.join(tmp, "sample.png"))
        check(all(c in colours for c in PALETTE[:4]), "the sample's 4 events drawn in their colours")
        check(w > 1000 and h > 400, "a picture of readable size (%dx%d)" % (w, h))

    # --svg elsewhere, --sms, --base
    svg2 = os.path.join(tmp, "pic.svg")
    rc, so, se = run("report", cap("mma10"), "--svg", svg2, "--sms", "2", "--base", cap("base"))
    check(rc == 0 and os.path.exists(svg2), "report --svg writes the picture there: %s" % se)
    check(b"## vs baseline" in so and b"| mma | 2048 / 2048 |" in so and b"**slower**" in so,
          "report --base: the vs baseline section finds mma slower")
    check(b"Timeline of 2 sampled SMs" in so, "--sms 2: two SMs in the timeline")
    if os.path.exists(svg2):
        check(render(svg2, os.path.join(tmp, "pic.png")), "the --svg picture renders")

    # the picture's link is relative to the report, wherever each goes, and
    # stays one link whatever the name holds; a picture over the report is refused
    os.makedirs(os.path.join(tmp, "d"))
    os.makedirs(os.path.join(tmp, "my pics"))
    for svg_arg, link in ((os.path.join("d", "p.svg"), "p.svg"),
                          (os.path.join("my pics", "p (1).svg"), "../my%20pics/p%20%281%29.svg"),
                          (os.path.join(tmp, "top.svg"), "../top.svg")):
        rc, so, se = subprocess.run([os.path.abspath(IKP), "report",
                                     os.path.abspath(cap("base")), "-o", os.path.join("d", "r.md"), "--svg", svg_arg],
                                    cwd=tmp, capture_output=True).returncode, None, None
        text = open(os.path.join(tmp, "d", "r.md")).read() if rc == 0 else ""
        check(rc == 0 and "](%s)\n" % link in text and os.path.exists(os.path.join(tmp, svg_arg)),
              "report -o d/r.md --svg %s: linked as %s" % (svg_arg, link))
    rc, so, se = run("report", cap("base"), "-o", os.path.join(tmp, "same.md"), "--svg", os.path.join(tmp, "same.md"))
    check(rc == 2 and b"are one file" in se and not os.path.exists(os.path.join(tmp, "same.md")),
          "report -o X.md --svg X.md: refused, nothing written (%d: %s)" % (rc, se))
    rc, so, se = run("report", cap("base"), "-o", os.path.join(tmp, "d", "s.md"), "--svg",
                     os.path.join(tmp, "d", "..", "d", "s.md"))
    check(rc == 2 and b"are one file" in se, "the same file by another path: refused")

    # the gate: a new capture that cannot stand in for the base fails it,
    # with the reason, even when nothing is slower
    empty = os.path.join(tmp, "empty.bin")
    with open(empty, "wb") as f:  # an IKP buffer reset and never written: 1 lane of 4 slots
        f.write(struct.pack("<21Q", 0x31504B49 | 1 << 32 | 8 << 48 | 8 << 56, 1 | 4 << 32, 1980000, *([0] * 18)))
    stale = os.path.join(tmp, "stale.bin")
    with open(stale, "wb") as f:  # one lane, one region, and header word 5: 2 lanes found open already
        f.write(struct.pack("<8Q", 0x31504B49 | 1 << 32 | 8 << 48 | 8 << 56, 1 | 4 << 32, 1980000, 0, 0, 2, 1, 0))
        f.write(struct.pack("<8Q", 0x4C41, 1 << 48, 1 | 1 << 32 | 1 << 48, 10**6, 0, 10**6 + 5000, 0,
                            1 << 63 | 2))
        f.write(struct.pack("<5Q", 5 | 1000 << 32, 6 | 2000 << 32, 0, 0, 0))
    for new, why in ((empty, b"holds no records"), (cap("extra"), b"event 'load' (2048 in the base) is missing"),
                     (stale, b"the new capture is STALE (2 lane openings")):
        rc, so, se = run("diff", cap("base"), new, "--fail-if-slower", "5")
        check(rc == 3 and b"cannot stand in for" in se and why in se, "diff --fail-if-slower, %s: exit 3 (%d: %s)" % (
            os.path.basename(new), rc, se.decode(errors="replace").strip()))
        check(re.search(b"\nwarning   incomplete: [^\n]*" + re.escape(why), so) is not None,
              "the text says why")
        rc, so, se = run("diff", cap("base"), new, "--json")
        check(rc == 0 and why.decode() in (strict_json(so).get("incomplete") or ""), "JSON incomplete says why")
        check(strict_json(so)["verdict"] == "incomplete", "its verdict: incomplete, not same")
    rc, so, se = run("diff", cap("base"), cap("base2"), "--json")
    check(rc == 0 and strict_json(so)["incomplete"] is None, "a complete capture: incomplete null")

    # diff: the known 10% change, JSON as the contract says
    rc, so, se = run("diff", cap("base"), cap("mma10"), "--json")
    check(rc == 0, "diff --json: %s" % se)
    try:
        d = strict_json(so)
    except ValueError as e:
        d = None
        check(False, "diff --json is strict JSON: %s" % e)
    if d:
        ev = {e["name"]: e for e in d["events"]}
        check(set(ev) == {"load", "mma", "epilogue"}, "events by name")
        check(ev["mma"]["verdict"] == "slower", "mma slower")
        check(ev["load"]["verdict"] == "same" and ev["epilogue"]["verdict"] == "same", "the unchanged ones same")
        for name, e in ev.items():
            want = e["new"]["p50_ns"] / e["base"]["p50_ns"] - 1
            check(abs(e["p50_change"] - want) < 1e-5, "%s: p50_change = new/base - 1" % name)
            check(set(e["base"]) == {"count", "total_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns"}, "%s: base figures" % name)
        check(0.07 < ev["mma"]["p50_change"] < 0.13, "mma's change near 10%")
        check([g["name"] for g in d["groups"]] == ["producer", "consumer"], "groups by name")
        check(all(0 <= g["base"]["busy_fraction"] <= 1 for g in d["groups"]), "busy fractions")
        check(d["span"]["verdict"] == "slower" and d["verdict"] == "slower", "the whole capture slower")
        check(d["span"]["base_ns"] > 0 and "blocks" in d["span"], "span figures")
    rc, so, se = run("diff", cap("base"), cap("mma10"))
    check(rc == 0 and re.search(rb"\nmma +2048/2048 .*slower \(p50[^;]*; p=", so) is not None, "text table: %s" % so[:400])
    rc, so, se = run("diff", cap("base"), cap("mma10"), "--fail-if-slower", "5")
    check(rc == 3 and b"slower than" in se, "--fail-if-slower 5: exit 3 (%d)" % rc)
    # a slowdown however it is spread: 49 blocks of 100 ten times as long (the
    # median block unchanged), or one block of 100
    for new, what in (("blocks49", "p90, total"), ("straggler", "span")):
        rc, so, se = run("diff", cap("blocks"), cap(new), "--fail-if-slower", "5")
        check(rc == 3 and b"slower than" in se and b"verdict   slower" in so and what.encode() in so,
              "--fail-if-slower 5, %s: exit 3, slower by %s (%d: %s)" % (new, what, rc, so.decode(errors="replace")[-600:]))
    rc, so, se = run("diff", cap("blocks"), cap("blocks"), "--fail-if-slower", "0")
    check(rc == 0 and b"verdict   same" in so, "blocks against itself: same, exit 0 (%d)" % rc)
    rc, so, se = run("diff", cap("base"), cap("mma10"), "--fail-if-slower", "25")
    check(rc == 0, "--fail-if-slower 25: exit 0 (%d)" % rc)
    rc, so, se = run("diff", cap("mma10"), cap("base"), "--fail-if-slower", "0")
    check(rc == 0 and b"faster" in so, "faster never fails (%d)" % rc)
    rc, so, se = run("diff", cap("base"), cap("mma10"), "--threshold", "15", "--fail-if-slower", "5", "--json")
    check(rc == 0 and d is not None and strict_json(so)["events"][1]["verdict"] == "same",
          "--threshold 15: a 10% change is `same`")

    rc, so, se = run("diff", cap("base"), cap("mma10"), "--min-change", "50", "--json")
    check(rc == 0 and strict_json(so)["events"][1]["verdict"] == "same" and
          strict_json(so)["options"]["min_change_ns"] == 50, "--min-change 50: mma's ~30 ns change is `same`")
    rc, so, se = run("diff", cap("base"), cap("mma10"), "--min-change", "-1")
    check(rc == 2 and b"--min-change" in se, "--min-change -1: exit 2")

    # identical captures, and two runs of one distribution
    rc, so, se = run("diff", cap("base"), cap("base"), "--fail-if-slower", "0", "--json")
    check(rc == 0 and all(e["verdict"] == "same" and e["p50_change"] == 0 for e in strict_json(so)["events"]),
          "a capture against itself: same, no change")
    rc, so, se = run("diff", cap("base"), cap("base2"), "--json")
    check(rc == 0 and strict_json(so)["verdict"] == "same", "two runs of one distribution: same")

    # different event sets and grids: listed, never silent
    rc, so, se = run("diff", cap("base"), cap("extra"))
    check(rc == 0 and b"only in one: load (base) extra (new)" in so, "events in one capture listed: %s" % so[-300:])
    check(b"block counts differ: 64 and 24" in so, "different block counts said")
    rc, so, se = run("diff", cap("base"), cap("extra"), "--json")
    j = strict_json(so)
    check("event sets" in j["differs"] and "block counts" in j["differs"], "JSON differs lists them")
    check({e["name"]: e["verdict"] for e in j["events"]}.get("extra") == "only-new", "extra only-new")

    # --json: the report's facts, strict JSON, agreeing with the Markdown, the
    # summary's JSON (the names they share) and the diff's JSON (the baseline)
    for n in ("overlap", "tail"):
        rc, so, se = run("report", cap(n), "--json")
        rc2, mdo, _ = run("report", cap(n), "-o", "-")
        rc3, sj, _ = run("summary", cap(n), "--json")
        if not check(rc == 0 and rc2 == 0 and rc3 == 0, "report %s --json: exit 0 (%s)" % (n, se)):
            continue
        j, st = strict_json(so), strict_json(sj)
        check(j["schema"] == "ikp.report/1" and
              list(j) == ["schema", "configuration", "placement", "stages", "pipeline", "balance", "baseline"],
              "%s: the documented top-level keys (%s)" % (n, list(j)))
        shared = [k for k in j["configuration"] if k in st]
        check(len(shared) >= 12 and all(j["configuration"][k] == st[k] for k in shared),
              "%s: configuration as the summary's JSON names and values (%s)" % (n, shared))
        bound = re.search(rb"\*\*Bound by ([^*]+)\*\*", mdo)
        check(j["pipeline"]["bound_group"] == (bound.group(1).decode() if bound else None),
              "%s: the bound group as the Markdown says (%s)" % (n, j["pipeline"]["bound_group"]))
        counts = {}
        for sgi in j["stages"]:
            counts[sgi["name"]] = counts.get(sgi["name"], 0) + sgi["count"]
        check(counts == {e["name"]: e["count"] for e in st["events"] if e["count"]},
              "%s: the stages' counts add up to the summary's per event" % n)
        check(j["baseline"] is None and j["balance"]["blocks"] > 0 and "tail_ns" in j["balance"],
              "%s: balance stated, no baseline" % n)
    rc, so, se = run("report", cap("mma10"), "--base", cap("base"), "--json")
    rc2, dj, _ = run("diff", cap("base"), cap("mma10"), "--json")
    check(rc == 0 and rc2 == 0 and strict_json(so)["baseline"] == strict_json(dj),
          "report --base --json: its baseline is ikp diff --json of the two (%s)" % se)
    rc, so, se = run("report", cap("tail"), "--json")
    check(b"a tail of" not in so and strict_json(so)["balance"]["tail_ns"] == 4000.0,
          "report tail --json: the tail in ns (4 us)")
    rc, so, se = run("report", cap("noregions"), "--json")
    bal = strict_json(so)["balance"] if rc == 0 else {}
    keys = ["blocks", "end_p50_ns", "last_end_ns", "tail_ns", "tail_fraction", "sms", "last_blocks"]
    check(list(bal) == keys and all(bal[k] is None for k in keys[1:5]),
          "report --json of a capture with no regions: every balance key GUIDE lists, null where not known (%s)" % bal)
    rc, so, se = run("report", cap("base"), "--json", "--svg", os.path.join(tmp, "x.svg"))
    check(rc == 2 and b"--json writes no picture" in se, "--json with --svg: refused (%s)" % se.strip())

    # bad usage and bad input: exit 2 and 1 with a message
    for args, want, what in [
            (("diff", cap("base")), 2, "two input files"),
            (("diff", cap("base"), cap("base"), "--fail-if-slower", "abc"), 2, "percentage"),
            (("diff", cap("base"), cap("base"), "--threshold", "0"), 2, "above 0"),
            (("diff", cap("base"), os.path.join(tmp, "missing.ikp")), 1, "missing.ikp"),
            (("report", cap("base"), "--wait", "nosuch"), 2, "no event 'nosuch'"),
            (("report", cap("base"), "--sms", "0"), 2, "--sms"),
            (("report", cap("base"), "-o", cap("base")), 2, "names the input file"),
            (("report", cap("base"), "--base", cap("mma10"), "-o", cap("mma10")), 2, "given with --base"),
            (("report", cap("base"), "--svg", cap("base")), 2, "would replace an input file"),
            (("report", cap("base"), "-o", os.path.join(tmp, "no", "such", "dir.md")), 1, "No such file or directory")]:
        rc, so, se = run(*args)
        check(rc == want and what.encode() in se, "%s: exit %d and says %r (got %d: %s)" % (
            " ".join(args[:2]), want, what, rc, se.decode(errors="replace").strip()))
    shutil.rmtree(tmp)
    return report()


if __name__ == "__main__":
    sys.exit(main())
