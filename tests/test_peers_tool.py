#!/usr/bin/env python3
"""build/ikp on Triton-distributed and transformer_nuggets buffers, saved the
way their users save them (numpy.save of the copied tensor, or
tensor.cpu().numpy().tofile()). The buffers come from encoders written here
from the formats' descriptions, not from ikp.h; every region of the trace is
compared with what was encoded. Needs numpy (make test installs it)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, report, run, strict_json  # noqa: E402
from peer_words import EMPTY, T0, triton_dist  # noqa: E402

import numpy as np  # noqa: E402


def as_int64(words):
    """The device buffer as the int64 tensor both tools allocate."""
    return np.array([w - (1 << 64) if w >= 1 << 63 else w for w in words], dtype=np.int64)


def regions_of(trace_bytes):
    """(block, track, name, start ns, dur ns, args) of every complete event:
    the JSON's pid and tid less one (they are 1-based there)."""
    doc = strict_json(trace_bytes)
    out = []
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            out.append((e["pid"] - 1, e["tid"] - 1, e["name"], int(round(e["ts"] * 1000)),
                        int(round(e["dur"] * 1000)), e.get("args", {})))
    return out


def triton_dist_tests(tmp):
    wrap = (T0 | 0xFFFFFFFF) + 1  # a 2^32 boundary of globaltimer_lo
    base = wrap - 3000
    lanes = {
        (0, 0): [(1, 3, base), (1, 5, base + 10), (0, 5, base + 50), (0, 3, base + 100)],   # nested
        (0, 1): [(1, 1, base + 10), (1, 2, base + 30), (0, 1, base + 50), (0, 2, base + 80)],  # overlap
        (1, 0): [(1, 4, wrap - 1000), (0, 4, wrap + 500)],                                # across the wrap
        (1, 1): [(1, 4, base + 200), (0, 4, base + 260), (1, 4, base + 300), (0, 4, base + 420)],
    }
    want = sorted([
        (0, 0, "task 3", 0, 100), (0, 0, "task 5", 10, 40),
        (0, 1, "task 1", 10, 40), (0, 1, "task 2", 30, 50),
        (1, 0, "task 4", 2000, 1500),
        (1, 1, "task 4", 200, 60), (1, 1, "task 4", 300, 120)])
    names = "--names", ",".join("task %d" % i for i in range(8))
    for fill, how in ((EMPTY, "npy"), (0xFFFFFFFFFFFFFFFF, "tofile"), (0, "npy")):
        words = triton_dist(3, 2, lanes, 5, fill, sms=[7, 3, 0])
        path = os.path.join(tmp, "td_%x.%s" % (fill, "npy" if how == "npy" else "bin"))
        if how == "npy":
            np.save(path, as_int64(words))
        else:
            as_int64(words).tofile(path)
        rc, so, se = run("trace", path, "-o", "-", *names)
        got = regions_of(so) if rc == 0 else []
        got_plain = sorted((p, t if t < 2 else t - 2, n, s, d) for p, t, n, s, d, _ in got)
        check(rc == 0 and got_plain == want, "triton-dist fill 0x%x (%s): every region as encoded: %r" % (fill, how, got))
        # overlap: task 1 and task 2 of (0, 1) on two tracks, nesting on one
        tids01 = {t for p, t, n, s, d, _ in got if p == 0 and n in ("task 1", "task 2")}
        tids00 = {t for p, t, n, s, d, _ in got if p == 0 and n in ("task 3", "task 5")}
        check(len(tids01) == 2 and len(tids00) == 1, "triton-dist: overlapping regions on two tracks, nested on one")
        rc, so, se = run("info", path)
        check(rc == 0 and b"format      triton-dist" in so and b"2 groups" in so and b"another format" not in so,
              "triton-dist detected with %x fill: %r" % (fill, so))
    path = os.path.join(tmp, "td.npy")
    np.save(path, as_int64(triton_dist(3, 2, lanes, 5, sms=[7, 3, 0])))
    rc, so, se = run("trace", path, "-o", "-", "--by", "sm")
    doc = strict_json(so) if rc == 0 else {"traceEvents": []}
    pnames = {e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "process_name"}
    check(pnames == {"SM 7", "SM 3"}, "triton-dist --by sm: SMs from the block words: %r" % pnames)
    # AMD: 10 ns ticks
    rc, so, se = run("trace", path, "-o", "-", "--timer-unit", "10ns", *names)
    got = sorted((p, n, s, d) for p, t, n, s, d, _ in regions_of(so)) if rc == 0 else []
    check(rc == 0 and (1, "task 4", 20000, 15000) in got and (0, "task 3", 0, 1000) in got,
          "--timer-unit 10ns scales every stamp: %r" % got)
    # statistics: task 4 has three regions: 1500, 60, 120 ns
    rc, so, se = run("summary", path, "--json", *names)
    st = strict_json(so) if rc == 0 else {}
    ev = {e["name"]: e for e in st.get("events", [])}
    t4 = ev.get("task 4", {})
    check(t4.get("count") == 3 and abs(t4.get("total_ns", 0) - 1680) < 1e-6 and abs(t4.get("max_ns", 0) - 1500) < 1e-6,
          "triton-dist summary: task 4 statistics %r" % t4)
    # truncated: a slice short
    words = triton_dist(3, 2, {(0, 0): []}, 1)
    bad = os.path.join(tmp, "td_trunc.bin")
    as_int64(words[:-2]).tofile(bad)
    rc, so, se = run("info", bad, "--format", "triton-dist")
    check(rc == 1 and b"block words" in se and b"buffer holds" in se, "truncated triton-dist: %r" % se)


# ---- transformer_nuggets
def nuggets(units, max_events, regions, counts=None):
    """regions: {unit: [(slot, start, dur, tag, tid)]}; slice 1 + 4 * max_events"""
    S = 1 + 4 * max_events
    w = [0] * (units * S)
    for u, rs in regions.items():
        w[u * S] = counts[u] if counts else 0
        for slot, s, d, tag, tid in rs:
            if slot < max_events:
                w[u * S + 1 + 4 * slot:u * S + 5 + 4 * slot] = [s, d, tag, tid]
    return w


def nuggets_compact(units, max_events, anchors, regions):
    """regions: {unit: [(slot, start, dur, tag)]}; slice 1 + max_events"""
    S = 1 + max_events
    w = [0] * (units * S)
    for u, a in anchors.items():
        w[u * S] = a
    for u, rs in regions.items():
        for slot, s, d, tag in rs:
            w[u * S + 1 + slot] = (tag & 0xFF) << 56 | (d & 0xFFFFFF) << 32 | (s & 0xFFFFFFFF)
    return w


def nuggets_tests(tmp):
    regs = {0: [(1, T0, 1000, 1, 0), (0, T0 + 100, 200, 2, 0)],          # nested, slots out of order
            1: [(0, T0 + 10, 50, 1, 33), (1, T0 + 40, 50, 2, 33)],        # overlap, tid 33
            3: [(k, T0 + 500 + 10 * k, 5, 3, 3) for k in range(6)]}       # atomic: 6 asked, 4 kept
    words = nuggets(4, 4, regs, counts=[2, 2, 0, 6])
    path = os.path.join(tmp, "nug.bin")
    as_int64(words).tofile(path)
    want = sorted([(0, "r1", 0, 1000), (0, "r2", 100, 200), (1, "r1", 10, 50), (1, "r2", 40, 50)] +
                  [(3, "r3", 500 + 10 * k, 5) for k in range(4)])
    for extra in ((), ("--units", "4"), ("--format", "nuggets", "--units", "4")):
        rc, so, se = run("trace", path, "-o", "-", "--names", "r0,r1,r2,r3", *extra)
        got = regions_of(so) if rc == 0 else []
        check(sorted((p, n, s, d) for p, t, n, s, d, _ in got) == want, "nuggets %r: regions %r" % (extra, got))
        check(all(a.get("tid") == (33 if p == 1 else 0 if p == 0 else 3) for p, t, n, s, d, a in got),
              "nuggets: the record's tid kept as an argument")
        check(len({t for p, t, n, s, d, a in got if p == 1}) == 2 and {t for p, t, n, s, d, a in got if p == 0} == {0},
              "nuggets: overlap on two tracks, nesting on one")
        check((b"inferred" in se) == (not extra), "nuggets: the tool says when it inferred the units: %r" % se)
    rc, so, se = run("summary", path, "--json", "--names", "r0,r1,r2,r3")
    st = strict_json(so) if rc == 0 else {}
    ev = {e["name"]: e for e in st.get("events", [])}
    check(ev.get("r3", {}).get("count") == 4 and abs(ev.get("r1", {}).get("total_ns", 0) - 1050) < 1e-6 and
          ev.get("r2", {}).get("max_ns") == 200, "nuggets summary: per-tag statistics %r" % ev)
    rc, so, se = run("summary", path)
    check(rc == 0 and b"units       4 of 17 words" in so, "nuggets summary text: %r" % so[:300])
    rc, so, se = run("info", path)
    check(rc == 0 and b"format      nuggets (" in so and b"units       4 of 17 words" in so and b"dropped     2" in so,
          "nuggets info: units and dropped regions: %r" % so)
    check(b"(inferred from the data; pass --units if wrong)" in so and b"num_units" not in so,
          "nuggets info: the inferred units, in the tool's words: %r" % so)
    # wrong --units
    rc, so, se = run("info", path, "--units", "3")
    check(rc == 1 and b"does not divide into 3 units" in se, "nuggets --units 3: %r" % se)
    rc, so, se = run("info", path, "--format", "nuggets", "--units", "34")
    check(rc == 1 and b"1 count + 4 x max_events" in se, "nuggets --units 34: %r" % se)
    for bad in ("0", "x", "-1", "99999999999"):
        rc, so, se = run("info", path, "--units", bad)
        check(rc == 2 and b"--units takes" in se, "--units %s is a usage error" % bad)
    # compact: anchor just before a 2^32 boundary; a region of 20 ms, then one 25 ms later
    a0 = (T0 | 0xFFFFFFFF) - 255
    words = nuggets_compact(3, 5, {0: a0, 1: a0 + 900},
                            {0: [(0, a0 + 16, 1000, 1), (1, a0 + 300, 100, 2)],
                             1: [(0, a0 + 1000, 20000000, 4), (1, a0 + 1000 + 25000000, 10, 5)]})
    path = os.path.join(tmp, "nugc.npy")
    np.save(path, as_int64(words))
    rc, so, se = run("trace", path, "-o", "-")
    got = regions_of(so) if rc == 0 else []
    plain = sorted((p, n, s, d) for p, t, n, s, d, _ in got)
    check(plain == sorted([(0, "event 1", 0, 1000), (0, "event 2", 284, 100),
                           (1, "event 4", 984, 20000000 - (1 << 24)), (1, "event 5", 984 + 25000000, 10)]),
          "nuggets-compact regions across a 2^32 boundary: %r" % plain)
    check([n for p, t, n, s, d, a in got if a.get("may_wrap")] == ["event 4"], "nuggets-compact: the 20 ms region is flagged")
    rc, so, se = run("info", path)
    check(rc == 0 and b"format      nuggets-compact" in so and b"1 regions may be longer than shown" in so,
          "nuggets-compact info: %r" % so)
    # cannot be told apart: an empty buffer
    z = os.path.join(tmp, "zeros.bin")
    np.zeros(40, dtype=np.int64).tofile(z)
    rc, so, se = run("info", z)
    # the library names its options (num_units, the format); the tool says which flags set them
    check(rc == 1 and b"pass --format (nuggets or nuggets-compact) and --units" in se and b"num_units" not in se,
          "all-zero buffer: %r" % se)
    rc, so, se = run("info", z, "--format", "nuggets-compact")
    check(rc == 1 and b"pass --units (the buffer" in se and b"num_units" not in se, "all-zero compact buffer: %r" % se)


def usage_tests():
    for bad in ("3", "10", "0ns", "2us", "5ms", "ns", "1001ns"):
        rc, so, se = run("info", "x", "--timer-unit", bad)
        check(rc == 2 and b"--timer-unit takes" in se, "--timer-unit %s is a usage error: %r" % (bad, se))
    rc, so, se = run("info", "x", "--format", "nugget")
    check(rc == 2 and b"triton-dist, nuggets, nuggets-compact" in se, "unknown format lists the new ones")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        triton_dist_tests(tmp)
        nuggets_tests(tmp)
        usage_tests()
    return report()


if __name__ == "__main__":
    sys.exit(main())
