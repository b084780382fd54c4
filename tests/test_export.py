#!/usr/bin/env python3
"""`ikp export`: the Parquet tables it writes, read by two real engines,
pyarrow and DuckDB (pinned in build/pydeps by make deps), never by a reader
of our own. For every capture the tests save (every input format) and the
bundled ones: both engines read the table; its rows, per kind and per
event, equal `ikp summary --json`; each region's event, start and length
equal the JSON trace's (ns); payload columns are null exactly where the
trace has no payload; times past 2^53 stay exact; the footer's metadata
holds each capture's figures. Then: several captures in one table and, with
-o DIR/, a file each in a Hive-style layout that one glob reads; UTF-8
names; an empty capture; row groups; bad input refused with a message
and no file left.
Usage: PYTHONPATH=build/pydeps test_export.py (IKP_TOOL: the tool to test)"""
import collections
import glob
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import IKP, ROOT, check, report, run, strict_json  # noqa: E402

try:
    import duckdb
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq
except ImportError as e:
    check(False, "pyarrow and duckdb import (make deps installs them into build/pydeps): %s" % e)
    sys.exit(report())

TMP = tempfile.mkdtemp(prefix="ikp-export-")
DATA = os.path.join(ROOT, "examples", "data")
SAVED = os.path.join(ROOT, "build", "test-out", "captures")
COLUMNS = ["capture", "gpu", "host", "block", "group", "group_name", "sm", "lane", "event", "event_id", "kind",
           "start_ns", "end_ns", "duration_ps", "begin_data", "end_data", "placement_ns", "time_axis"]
TEXT = ["capture", "gpu", "host", "group_name", "event", "kind", "time_axis"]


def export(inputs, out, *extra):
    rc, _, err = run("export", *inputs, "-o", out, *extra)
    return rc, err.decode(errors="replace").strip()


def summary(cap, *extra):
    rc, out, _ = run("summary", cap, "--json", *extra)
    return strict_json(out) if rc == 0 else None


def trace(cap, *extra):
    """the capture's JSON trace: regions (X) and instants (i)"""
    path = os.path.join(TMP, "trace.json")
    rc, _, _ = run("trace", cap, "-o", path, *extra)
    if rc != 0:
        return None
    evs = strict_json(open(path, "rb").read())["traceEvents"]
    return [e for e in evs if e.get("ph") in ("X", "i")]


def junk_path():
    """a file that is no capture"""
    p = os.path.join(TMP, "junk.bin")
    open(p, "wb").write(b"not a capture at all")
    return p


def duck(sql):
    return duckdb.sql(sql).fetchall()


def check_capture(cap, what, *extra):
    """one capture exported alone, read by both engines, against the tool's
    own summary and trace of it"""
    out = os.path.join(TMP, "one.parquet")
    if os.path.exists(out):
        os.remove(out)
    rc, err = export([cap], out, *extra)
    if not check(rc == 0, "%s: exported (%s)" % (what, err)):
        return
    st, evs = summary(cap, *extra), trace(cap, *extra)
    t = pq.read_table(out)
    rows = t.to_pylist()
    check(t.schema.names == COLUMNS, "%s: the columns, in order (%s)" % (what, t.schema.names))
    n_duck = duck("select count(*) from read_parquet('%s')" % out)[0][0]
    check(n_duck == len(rows), "%s: DuckDB and pyarrow read the same rows (%d, %d)" % (what, n_duck, len(rows)))
    if st is None or evs is None:
        check(False, "%s: summary and trace of the capture" % what)
        return
    kinds = collections.Counter(r["kind"] for r in rows)
    check(kinds["region"] == st["regions"] and kinds["instant"] == st["instants"] and
          kinds["unmatched_begin"] == st["unmatched_begin"] and kinds["unmatched_end"] == st["unmatched_end"],
          "%s: rows per kind as the summary counts (%s; %d regions, %d instants)" %
          (what, dict(kinds), st["regions"], st["instants"]))
    # per event: count and total as the summary's, summed by DuckDB from duration_ps
    per = {name: (n, tot) for name, n, tot in duck(
        "select event, count(*), sum(duration_ps) from read_parquet('%s') where kind = 'region' group by event" % out)}
    bad = [e["name"] for e in st["events"] if e["count"] and (
        per.get(e["name"], (0, 0))[0] != e["count"] or abs(per[e["name"]][1] / 1000.0 - e["total_ns"]) > 0.002)]
    check(not bad, "%s: each event's count and total_ns as the summary's (%d events; differing: %s)" %
          (what, len(st["events"]), bad[:5]))
    md = {k.decode(): v.decode() for k, v in (pq.read_metadata(out).metadata or {}).items()}
    info = json.loads(md.get("ikp.capture.1", "{}"))
    check(info.get("records") == st["records"] and info.get("active_lanes") == st["active_lanes"] and
          info.get("format") and "placement" in info and md.get("ikp.captures") == "1" and "ikp.time_axis" in md,
          "%s: the footer holds the capture's figures (%s)" % (what, sorted(md)))
    # the trace: each region's name, start (ns after time 0) and length; payloads
    zero = info.get("start_ns", 0)
    mine = collections.Counter((r["event"], r["start_ns"] - zero, r["end_ns"] - r["start_ns"]) for r in rows
                               if r["kind"] == "region")
    theirs = collections.Counter((e["name"], round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in evs
                                 if e["ph"] == "X" and not e.get("args", {}).get("unmatched"))
    check(mine == theirs, "%s: each region's event, start and length as the JSON trace's (%d regions; %d differ)" %
          (what, sum(theirs.values()), sum((mine - theirs).values()) + sum((theirs - mine).values())))
    durs = all(abs(r["duration_ps"] - 1000 * (r["end_ns"] - r["start_ns"])) <= 1000 for r in rows)
    check(durs, "%s: duration_ps within 1 ns of end_ns - start_ns (exact from the stamps)" % what)
    pay = collections.Counter((r["event"], r["begin_data"], r["end_data"]) for r in rows if r["kind"] == "region")
    tpay = collections.Counter((e["name"], e.get("args", {}).get("begin_data"), e.get("args", {}).get("end_data"))
                               for e in evs if e["ph"] == "X" and not e.get("args", {}).get("unmatched"))
    check(pay == tpay, "%s: begin_data and end_data null exactly where the trace has no payload" % what)
    # placement and the axis
    axes = {r["time_axis"] for r in rows}
    check(len(axes) <= 1 and all(r["placement_ns"] is not None and r["placement_ns"] >= 0 for r in rows
                                 if r["time_axis"] != "capture_ns"),
          "%s: one time axis, placements stated (null only where captures are placed by their first records: %s)" %
          (what, axes))
    return rows, md


def ikp_words(lanes, sms=None):
    """an IKP buffer: lanes = [[(kind, id, t)]] (globaltimer ns lanes), each finalized; lane i on SM i, or
    sms[i]"""
    cap = 16 if len(lanes) < 64 else 4
    w = [0] * (8 + len(lanes) * (9 + cap))
    w[0] = 0x31504B49 | (1 << 32) | (8 << 48) | (8 << 56)
    w[1] = len(lanes) | (cap << 32)
    for i, recs in enumerate(lanes):
        b = 8 + i * (9 + cap)
        w[b] = 0x4C41 | ((sms[i] if sms else i) << 32)
        w[b + 1] = i | (1 << 48)
        w[b + 2] = len(lanes) | (1 << 32) | (1 << 48)
        w[b + 3] = 1000
        for k, (kind, eid, t) in enumerate(recs):
            w[b + 8 + k] = (t << 32) | (eid << 2) | {"B": 1, "E": 2, "I": 3}[kind]
        w[b + 5] = 900000
        w[b + 7] = (1 << 63) | len(recs)
    return struct.pack("<%dQ" % len(w), *w)


def main():
    # every capture the C tests saved (every input format and their edge
    # cases), then the bundled ones
    saved = sorted(glob.glob(os.path.join(SAVED, "*")))
    check(len(saved) >= 10, "the C tests' saved captures are there (%d; run through make test)" % len(saved))
    for cap in saved:
        check_capture(cap, os.path.basename(cap))
    peers = sorted(glob.glob(os.path.join(DATA, "peers", "*.bin")) + glob.glob(os.path.join(DATA, "peers", "*.npy")))
    for cap in peers:
        check_capture(cap, "peers/" + os.path.basename(cap))
    launches = [os.path.join(DATA, "launch%d.ikp" % k) for k in (1, 2, 3)]
    got = check_capture(launches[0], "launch1.ikp")
    if got:
        rows, md = got
        # host time: past 2^53, exact in both engines
        big = [r["start_ns"] for r in rows[:1000]]
        dk = [v for (v,) in duck("select start_ns from read_parquet('%s') limit 1000" % os.path.join(TMP, "one.parquet"))]
        check(min(big) > 2 ** 53 and big == dk and rows[0]["time_axis"] == "host_realtime_ns",
              "launch1: host CLOCK_REALTIME ns past 2^53, the same integers in both engines (%d)" % big[0])
        check(all(r["sm"] is not None for r in rows), "launch1: every row's SM known")
    nug = os.path.join(DATA, "peers", "nuggets.npy")
    rows = pq.read_table(os.path.join(TMP, "one.parquet")).to_pylist() if check_capture(nug, "nuggets again") else []
    check(rows and all(r["sm"] is None for r in rows), "nuggets: sm null on every row (the format has no SM)")

    # UTF-8 names, through --names
    names = "l\u00e4dt,\u7b49\u5f85,\u8ba1\u7b97 \U0001f680,step"
    got = check_capture(launches[0], "launch1 with UTF-8 names", "--names", names)
    if got:
        evs = {v for (v,) in duck("select distinct event from read_parquet('%s')" % os.path.join(TMP, "one.parquet"))}
        check(evs == set(names.split(",")), "UTF-8 event names read back by DuckDB (%s)" % sorted(evs))

    # names, a host name and labels that are not UTF-8 (test_analysis saved
    # badtext.ikp): U+FFFD in their place, so that both engines read the
    # table (DuckDB refused the whole file, pyarrow could not convert it),
    # and ikp info prints the host name as UTF-8
    bad = os.path.join(ROOT, "build", "test-out", "analysis", "badtext.ikp")
    if check(os.path.exists(bad), "test_analysis saved badtext.ikp (run through make test)"):
        out = os.path.join(TMP, "badtext.parquet")
        rc, err = export([bad], out, "--labels", b"r\xffun")
        try:
            rows = pq.read_table(out).to_pylist() if rc == 0 else []
            dk = duck("select distinct event, host, capture from read_parquet('%s') order by 1" % out)
        except Exception as x:  # noqa: BLE001 (what the engines raise on bad UTF-8)
            rows, dk = [], repr(x)
        evs = sorted({r["event"] for r in rows})
        check(rc == 0 and "lo\ufffdad" in evs and "mm\ufffd\ufffd" in evs and
              {r["host"] for r in rows} == {"n\ufffdode\x01"} and
              {r["capture"] for r in rows} == {"r\ufffdun"} and isinstance(dk, list) and len(dk) == len(evs),
              "names, host and label not UTF-8: U+FFFD, read by pyarrow and DuckDB (%s; %s; %s)" % (err, evs, dk))
        rc, so, _ = run("info", bad)
        try:
            text = so.decode("utf-8")
        except UnicodeDecodeError as x:
            text = "not UTF-8: %s" % x
        check(rc == 0 and "host n\ufffdode\ufffd" in text, "ikp info prints the host name as UTF-8 (%s)" %
              [l for l in text.split("\n") if "device" in l])

    # an empty capture: no rows, a valid table, its figures in the footer
    empty = os.path.join(TMP, "empty.ikp")
    open(empty, "wb").write(ikp_words([[], []]))
    out = os.path.join(TMP, "empty.parquet")
    rc, err = export([empty], out)
    check(rc == 0 and pq.read_table(out).num_rows == 0 and
          duck("select count(*) from read_parquet('%s')" % out)[0][0] == 0 and
          json.loads(pq.read_metadata(out).metadata[b"ikp.capture.1"])["records"] == 0,
          "an empty capture: a table of no rows, read by both (%s)" % err)

    # a lane header naming SM 2^31 + 1 (damaged): sm null, not negative
    badsm = os.path.join(TMP, "badsm.ikp")
    open(badsm, "wb").write(ikp_words([[("B", 1, 10), ("E", 1, 30)]] * 2, sms=[0x80000001, 7]))
    out = os.path.join(TMP, "badsm.parquet")
    rc, err = export([badsm], out)
    sms = [r["sm"] for r in pq.read_table(out).to_pylist()] if rc == 0 else []
    check(sms == [None, 7], "a lane naming SM 2^31 + 1: its sm null, the other lane's 7 (%s; %s)" % (sms, err))

    # 300 distinct events in one row group (the text columns' dictionaries grow)
    many = os.path.join(TMP, "many.ikp")
    open(many, "wb").write(ikp_words([[("B", i, 10 + i), ("E", i, 30 + 2 * i)] for i in range(300)]))
    got = check_capture(many, "300 lanes of distinct events")
    if got:
        n = duck("select count(distinct event), count(distinct event_id) from read_parquet('%s')" %
                 os.path.join(TMP, "one.parquet"))[0]
        check(n == (300, 300), "300 distinct event names and ids read back (%s)" % (n,))

    # the encodings on values made by test_analysis (extremes, wraps, runs,
    # every bit width, all-null pages, dictionaries past each bit width)
    enc = os.path.join(ROOT, "build", "test-out", "analysis", "encodings")
    if check(os.path.exists(enc + ".parquet") and os.path.exists(enc + ".txt"),
             "test_analysis wrote encodings.parquet and .txt (run through make test)"):
        want = open(enc + ".txt", encoding="utf-8").read().split("\n")[:-1]
        line = lambda row: "\t".join("null" if v is None else str(v) for v in row)
        t = pq.read_table(enc + ".parquet")
        got = [line(r.values()) for r in t.to_pylist()]
        bad = [k for k, (g, w) in enumerate(zip(got, want)) if g != w]
        check(len(got) == len(want) == 3100 and not bad,
              "pyarrow reads every value written (%d rows, %d differ, first %s)" % (len(got), len(bad), bad[:3]))
        dk = [line(r) for r in duck("select * from read_parquet('%s') order by lane" % (enc + ".parquet"))]
        bad = [k for k, (g, w) in enumerate(zip(dk, want)) if g != w]
        check(len(dk) == 3100 and not bad, "DuckDB reads every value written (%d differ, first %s)" % (len(bad), bad[:3]))
        check(pq.read_metadata(enc + ".parquet").num_row_groups == 4, "1000 rows a row group: 4 groups")
        plain = pq.read_table(enc + "-plain.parquet") if os.path.exists(enc + "-plain.parquet") else None
        check(plain is not None and plain.equals(t), "numbers PLAIN: the same table")

    # the encodings FORMAT.md names, as the footer declares them: numbers
    # DELTA_BINARY_PACKED (PLAIN where a chunk is all null, or with --plain),
    # text dictionary-encoded; --plain the same table
    one, plain = os.path.join(TMP, "enc.parquet"), os.path.join(TMP, "enc-plain.parquet")
    rc, err = export([launches[0]], one)
    rc2, err2 = export([launches[0]], plain, "--plain")
    if check(rc == 0 and rc2 == 0, "launch1 exported, and with --plain (%s; %s)" % (err, err2)):
        def encodings(path):
            m = pq.read_metadata(path)
            return {m.schema.column(c).name: {e for g in range(m.num_row_groups)
                                              for e in m.row_group(g).column(c).encodings} for c in range(m.num_columns)}
        e, ep = encodings(one), encodings(plain)
        nums = [c for c in COLUMNS if c not in TEXT]
        check(all(e[c] == {"PLAIN", "RLE_DICTIONARY"} for c in TEXT) and
              all("DELTA_BINARY_PACKED" in e[c] or c in ("begin_data", "end_data") for c in nums) and
              all("DELTA_BINARY_PACKED" not in ep[c] and "PLAIN" in ep[c] for c in nums),
              "the footer's encodings: text dictionary, numbers delta (plain with --plain): %s" % e)
        check(pq.read_table(plain).equals(pq.read_table(one)) and os.path.getsize(plain) > 4 * os.path.getsize(one),
              "--plain: the same table, over 4x the bytes (%d, %d)" % (os.path.getsize(plain), os.path.getsize(one)))

    # several captures: one table, and a file each (Hive-style), on one axis
    one = os.path.join(TMP, "three.parquet")
    hive = os.path.join(TMP, "hive") + "/"
    rc1, err1 = export(launches, one)
    rc2, err2 = export(launches, hive)
    check(rc1 == 0 and rc2 == 0, "three launches exported, to one file and to a directory (%s; %s)" % (err1, err2))
    a = duck("select capture, count(*), min(start_ns), max(end_ns) from read_parquet('%s') group by 1 order by 1" % one)
    b = duck("select capture, count(*), min(start_ns), max(end_ns) from read_parquet('%s*/*.parquet', "
             "hive_partitioning = true) group by 1 order by 1" % hive)
    check(len(a) == 3 and a == b, "one table or a file each: the same rows and times, read with one glob (%s)" % a)
    parts = duck("select distinct capture_index from read_parquet('%s*/*.parquet', hive_partitioning = true) "
                 "order by 1" % hive)
    check([int(p) for (p,) in parts] == [1, 2, 3], "the Hive key capture_index: 1, 2, 3 (%s)" % parts)
    dset = ds.dataset(hive, format="parquet", partitioning="hive")
    check(dset.count_rows() == sum(n for _, n, _, _ in a), "pyarrow reads the directory as one dataset (%d rows)" %
          dset.count_rows())
    check(a[0][2] < a[1][2] < a[2][2] and a[0][3] < a[1][2],
          "the launches in order on one axis, apart (%s)" % [(c, s) for c, _, s, _ in a])
    st = [summary(p) for p in launches]
    check(all(s and n == s["regions"] + s["instants"] for s, (_, n, _, _) in zip(st, a)),
          "each launch's rows as its summary counts")

    # -o DIR/ again: the directory replaced whole, only this export's
    # captures in it (GUIDE's glob reads one run); a failed export, a
    # refused one and a directory holding other files leave it as it was
    def tree(d):
        """DIR's folders (ending in /) and files, relative to it"""
        out = []
        for r, ds_, fs in os.walk(d):
            out += [os.path.relpath(os.path.join(r, x), d) + "/" for x in ds_]
            out += [os.path.relpath(os.path.join(r, x), d) for x in fs]
        return sorted(out)

    def snapshot(d):
        return {p: open(os.path.join(d, p), "rb").read() for p in tree(d) if not p.endswith("/")}
    rc, err = export(launches[:1], hive)
    rows = duck("select count(*), count(distinct capture_index) from read_parquet('%s*/*.parquet', "
                "hive_partitioning = true)" % hive)[0]
    check(rc == 0 and tree(hive) == ["capture_index=1/", "capture_index=1/ikp.parquet"] and
          rows == (a[0][1], 1) and "replaced" in err,
          "-o DIR/ over a three-capture export: DIR holds this export's one capture, the glob reads its rows "
          "alone (%s; %s; %s)" % (tree(hive), rows, err))
    before = snapshot(hive)
    rc, err = export([launches[1], launches[2], junk_path()], hive)
    check(rc == 1 and "junk" in err and snapshot(hive) == before,
          "-o DIR/, the third input refused: DIR as the earlier export left it (%s; %s)" % (err, tree(hive)))
    rc, err = export(launches[1:], hive, "--labels", "x,x")
    check(rc == 1 and snapshot(hive) == before, "-o DIR/, the labels refused: DIR as it was (%s)" % err)
    leftover = [p for p in os.listdir(TMP) if ".ikp-tmp" in p or ".ikp-old" in p]
    check(not leftover, "no directory left beside DIR by the failed exports (%s)" % leftover)
    other = os.path.join(TMP, "other")
    os.makedirs(os.path.join(other, "capture_index=1"))
    open(os.path.join(other, "notes.txt"), "w").write("mine")
    rc, err = export(launches[:1], other + "/")
    check(rc == 2 and "notes.txt" in err and tree(other) == ["capture_index=1/", "notes.txt"],
          "-o DIR/ where DIR holds a file no export wrote: refused, the file kept (%s)" % err)
    rc, err = export(launches[:1], os.path.join(hive, "capture_index=1", "ikp.parquet"))
    check(rc == 0, "a one-file export into the directory export's file (%s)" % err)
    keep = os.path.join(TMP, "keep")
    os.makedirs(os.path.join(keep, "capture_index=1"))
    kept = os.path.join(keep, "capture_index=1", "ikp.parquet")
    open(kept, "wb").write(open(launches[0], "rb").read())
    rc, err = export([kept], keep + "/")
    check(rc == 2 and "input" in err and os.path.exists(os.path.join(keep, "capture_index=1", "ikp.parquet")),
          "-o DIR/ that would replace an input file: refused, the input kept (%s)" % err)
    # past a file-size limit (ulimit -f) on the second file: said (EFBIG, not
    # SIGXFSZ's silent death), DIR as it was, nothing left beside it
    import resource
    import subprocess
    limit = (os.path.getsize(os.path.join(hive, "capture_index=1", "ikp.parquet")) * 3) // 2
    sample = os.path.join(DATA, "sample.ikp")
    p = subprocess.run([IKP, "export", launches[0], sample, "-o", hive], capture_output=True,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    err = p.stderr.decode(errors="replace")
    leftover = [p for p in os.listdir(TMP) if ".ikp-tmp" in p or ".ikp-old" in p]
    check(p.returncode == 1 and "File too large" in err and snapshot(hive) == before and not leftover,
          "-o DIR/ past ulimit -f on its second file: exit 1, said, DIR as it was, nothing left (exit %d, %s, %s)" %
          (p.returncode, err.strip(), leftover))
    out = os.path.join(TMP, "big.parquet")
    p = subprocess.run([IKP, "export", sample, "-o", out], capture_output=True,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 1 and "File too large" in err and not os.path.exists(out) and
          not [f for f in os.listdir(TMP) if f.endswith(".ikp-tmp")],
          "one file past ulimit -f: exit 1, said, no file and no temporary file left (exit %d, %s)" %
          (p.returncode, err.strip()))
    rc, err = export(launches, hive)
    check(rc == 0 and len(duck("select distinct capture_index from read_parquet('%s*/*.parquet', "
                               "hive_partitioning = true)" % hive)) == 3 and os.stat(hive).st_mode & 0o777 != 0o700,
          "-o DIR/ again with three: three folders, DIR's permissions not mkdtemp's 0700 (%s)" % err)

    # -o DIR/ of many captures stats each input a bounded number of times
    # (an LD_PRELOAD shim counts the stat calls: a count, not a time): twice
    # as many captures, at most 4 more calls each, where stating every input
    # again for every output made the calls grow with their square
    shim = os.path.join(TMP, "stat_count.so")
    built = subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O1", "-o", shim,
                            os.path.join(ROOT, "tests", "stat_count.c"), "-ldl"], capture_output=True)
    counts = []
    base = bytearray(open(os.path.join(DATA, "peers", "tirx.bin"), "rb").read())
    for n in (40, 80):
        files = []
        for k in range(n):  # distinct captures: the first record k ns later (TIRx: placed by first records)
            f = os.path.join(TMP, "many%d_%d.bin" % (n, k))
            b = bytearray(base)
            struct.pack_into("<I", b, 12, struct.unpack_from("<I", b, 12)[0] + k)
            open(f, "wb").write(bytes(b))
            files.append(f)
        cnt = os.path.join(TMP, "stat_count.txt")
        env = dict(os.environ, LD_PRELOAD=shim, IKP_STAT_COUNT=cnt,
                   ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
        p = subprocess.run([IKP, "export"] + files + ["-o", os.path.join(TMP, "many%d" % n) + "/"],
                           capture_output=True, env=env)
        counts.append(int(open(cnt).read()) if p.returncode == 0 and os.path.exists(cnt) else -1)
    check(built.returncode == 0 and counts[0] > 0 and counts[1] - counts[0] <= 4 * 40,
          "-o DIR/ of 40 and 80 captures: stat calls grow by at most 4 a capture (%s; %s)" %
          (counts, built.stderr.decode(errors="replace").strip()[:200]))

    # README's "Many ranks" queries, on the table of the bundled launches
    # they say they ran on: each runs in DuckDB and answers what README shows
    # below it; its counts agree with the summaries
    import re
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    pairs = re.findall(r"^```sql\n(.*?)^```\n\n```\n(.*?)^```", text, flags=re.S | re.M)
    check(len(pairs) == 3, "README has three queries, each with its answer (%d)" % len(pairs))
    cwd = os.getcwd()
    os.chdir(TMP)
    try:
        os.replace(one, os.path.join(TMP, "run.parquet"))
        for k, (sql, shown) in enumerate(pairs):
            got = ["  ".join(str(v) for v in row) for row in duck(sql)]
            want = [" ".join(l.split()) for l in shown.strip().split("\n")[1:]]
            check([" ".join(g.split()) for g in got] == want,
                  "README query %d answers as shown (%s)" % (k + 1, got[:2]))
        waits = duck("SELECT capture, count(*) FROM 'run.parquet' WHERE event = 'wait' GROUP BY 1 ORDER BY 1")
        comp = duck("SELECT capture, count(*) FROM 'run.parquet' WHERE event = 'compute' GROUP BY 1 ORDER BY 1")
    finally:
        os.chdir(cwd)
    ev = [{e["name"]: e["count"] for e in x["events"]} if x else {} for x in st]
    check([n for _, n in waits] == [e.get("wait") for e in ev] and [n for _, n in comp] == [e.get("compute") for e in ev],
          "the queries' counts of wait and compute as the launches' summaries (%s, %s)" % (waits, comp))

    # row groups: the same table, cut in more groups
    small, whole = os.path.join(TMP, "small.parquet"), os.path.join(TMP, "whole.parquet")
    rc, err = export([launches[0]], small, "--row-group", "1000")
    rc2, _ = export([launches[0]], whole)
    meta = pq.read_metadata(small) if rc == 0 and rc2 == 0 else None
    check(meta is not None and meta.num_row_groups == (meta.num_rows + 999) // 1000 and
          pq.read_metadata(whole).num_row_groups == 1 and pq.read_table(small).equals(pq.read_table(whole)),
          "--row-group 1000: %s groups, the same rows as in one (%s)" % (meta.num_row_groups if meta else "?", err))

    # bad input: refused, said, no file left
    junk = os.path.join(TMP, "junk.bin")
    open(junk, "wb").write(b"not a capture at all")
    out = os.path.join(TMP, "junk.parquet")
    rc, err = export([launches[0], junk], out)
    check(rc == 1 and "junk.bin" in err and not os.path.exists(out), "a bad input: exit 1, named, no file (%s)" % err)
    rc, err = export([launches[0], launches[0]], out)
    check(rc == 1 and "again" in err and not os.path.exists(out), "a capture given twice: refused (%s)" % err)
    tirx = os.path.join(DATA, "peers", "tirx.bin")
    rc, err = export([tirx, tirx], out)
    check(rc == 1 and "again" in err and not os.path.exists(out),
          "a capture without GPU time given twice: refused too (%s)" % err)
    rc, err = export([launches[0]], out, "--row-group", "0")
    check(rc == 2 and "--row-group" in err, "--row-group 0: a usage error (%s)" % err)
    rc, err = export([launches[0]], launches[0])
    check(rc == 2 and "input" in err, "-o naming an input: refused (%s)" % err)
    # a table written by the export, given back as a capture: refused, named
    rc, _, err = run("info", whole)
    check(rc == 1 and b"Apache Parquet file" in err, "ikp info on an exported table: refused, named (%r)" % err)
    return report()


if __name__ == "__main__":
    sys.exit(main())
