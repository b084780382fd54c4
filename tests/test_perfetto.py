#!/usr/bin/env python3
"""The Perfetto writer against Perfetto's own schema: every .pftrace that
build/ikp writes is parsed with perfetto_trace_pb2 (the PyPI package
`perfetto`, with `protobuf`) and read the way Perfetto's trace processor
reads it (sequences, incremental state, interned names, the sequence clock,
slice stacks per track, flows). For every capture the other runners open
(saved by test_host and test_peers in build/test-out/captures), for the
bundled sample and the fuzz corpus, and for captures made here with flows
and counters:
  - every region of the JSON trace is a slice of the protobuf trace with
    the same block, lane, name, start, duration and arguments, and no
    slice is extra; instants and counters likewise;
  - the blocks' tracks are children of one track of the launch, the lanes'
    children of their block's (no process or thread tracks);
  - slices nest on every track; every interned id resolves;
  - flows connect the intended events (recomputed here from the JSON)."""
import glob
import json
import os
import re
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, check, report, run, strict_json  # noqa: E402

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as PB  # noqa: E402

SAMPLE = os.path.join(ROOT, "examples", "data", "sample.ikp")
SUFFIX = re.compile(r" \[\d+\]")  # extra-track numbers, wherever they are
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4


def ann_value(a):
    if a.HasField("bool_value"):
        return a.bool_value
    if a.HasField("uint_value"):
        return a.uint_value
    if a.HasField("int_value"):
        return a.int_value
    if a.HasField("string_value"):
        return a.string_value
    return None


def read_pftrace(data, errors):
    """Reads a trace as the trace processor does. Returns (slices, links,
    counters, tracks): slices [(uuid, name, ts, dur, args)], links
    [(src slice index, dst slice index)], counters {uuid: [(ts, v)]},
    tracks {uuid: descriptor}."""
    trace = PB.Trace()
    trace.ParseFromString(data)  # DecodeError on malformed input
    tracks, seqs, events = {}, {}, []
    for order, pk in enumerate(trace.packet):
        if pk.HasField("track_descriptor"):  # needs no sequence
            d = pk.track_descriptor
            if d.uuid in tracks:
                errors.append("track uuid %d described twice" % d.uuid)
            tracks[d.uuid] = d
            continue
        if not pk.HasField("trusted_packet_sequence_id"):
            errors.append("packet %d has no sequence id" % order)
            continue
        st = seqs.setdefault(pk.trusted_packet_sequence_id, {"gen": None})
        if pk.sequence_flags & 1:
            st["gen"] = {"names": {}, "ann": {}, "defaults": None, "clock": None}
        gen = st["gen"]
        if gen is None:
            errors.append("packet %d before its sequence was cleared" % order)
            continue
        if pk.HasField("trace_packet_defaults"):
            gen["defaults"] = pk.trace_packet_defaults
        if pk.HasField("interned_data"):
            for e in pk.interned_data.event_names:
                if e.iid in gen["names"]:
                    errors.append("event name iid %d interned twice" % e.iid)
                gen["names"][e.iid] = e.name
            for e in pk.interned_data.debug_annotation_names:
                if e.iid in gen["ann"]:
                    errors.append("annotation name iid %d interned twice" % e.iid)
                gen["ann"][e.iid] = e.name
        if pk.HasField("clock_snapshot"):
            clocks = {c.clock_id: c for c in pk.clock_snapshot.clocks}
            if all(c < 64 for c in clocks) and 6 in clocks:  # builtin clocks only: how they relate, trace-wide
                continue
            if 64 not in clocks or 6 not in clocks or not clocks[64].is_incremental:
                errors.append("clock snapshot without the incremental clock 64 and BOOTTIME")
                continue
            gen["clock"] = [clocks[64].timestamp, clocks[64].timestamp, clocks[6].timestamp]
            continue
        if not pk.HasField("track_event"):
            continue
        te = pk.track_event
        if not pk.HasField("timestamp"):
            errors.append("event without a timestamp")
            continue
        cid = pk.timestamp_clock_id or (gen["defaults"].timestamp_clock_id if gen["defaults"] else 0)
        if cid == 64:
            if gen["clock"] is None:
                errors.append("sequence clock used before its snapshot")
                continue
            gen["clock"][0] += pk.timestamp
            ts = gen["clock"][0] - gen["clock"][1] + gen["clock"][2]
        else:
            ts = pk.timestamp
        uuid = te.track_uuid if te.HasField("track_uuid") else (
            gen["defaults"].track_event_defaults.track_uuid if gen["defaults"] else 0)
        name = None
        if te.HasField("name_iid"):
            name = gen["names"].get(te.name_iid)
            if name is None:
                errors.append("event name iid %d does not resolve" % te.name_iid)
        args = {}
        for a in te.debug_annotations:
            an = gen["ann"].get(a.name_iid)
            if an is None:
                errors.append("annotation name iid %d does not resolve" % a.name_iid)
            args[an] = ann_value(a)
        events.append((ts, order, uuid, te.type, name, args, list(te.flow_ids), list(te.terminating_flow_ids),
                       te.counter_value))
    for e in events:
        if e[2] not in tracks:
            errors.append("track uuid %d has no descriptor" % e[2])
    for d in tracks.values():
        if d.HasField("parent_uuid") and d.parent_uuid not in tracks:
            errors.append("track %d: parent %d has no descriptor" % (d.uuid, d.parent_uuid))
        if d.HasField("thread") and not any(p.HasField("process") and p.process.pid == d.thread.pid
                                            for p in tracks.values()):
            errors.append("thread track %d: no process %d" % (d.uuid, d.thread.pid))
    events.sort(key=lambda e: (e[0], e[1]))  # the trace processor's order
    slices, links, counters, stacks, active = [], [], {}, {}, {}
    for ts, _, uuid, typ, name, args, fl, term, cv in events:
        sid = None
        if typ == BEGIN:
            sid = len(slices)
            slices.append([uuid, name, ts, None, args])
            stacks.setdefault(uuid, []).append(sid)
        elif typ == END:
            if not stacks.get(uuid):
                errors.append("slice end on track %d with no open slice" % uuid)
                continue
            sid = stacks[uuid].pop()
            slices[sid][3] = ts - slices[sid][2]
        elif typ == INSTANT:
            sid = len(slices)
            slices.append([uuid, name, ts, 0, args])
        elif typ == COUNTER:
            counters.setdefault(uuid, []).append((ts, cv))
            continue
        for f in fl:
            if f in active:
                errors.append("flow id %d reused" % f)
            active[f] = sid
        for f in term:
            if f in active:
                links.append((active.pop(f), sid))
            else:
                errors.append("flow %d ends before it begins" % f)
    if any(stacks.values()):
        errors.append("slices left open")
    if active:
        errors.append("%d flows never ended" % len(active))
    return slices, links, counters, tracks


def chain(tracks, uuid):
    """The track and its ancestors, the launch's track last ([] if one is missing
    or the parents loop)."""
    out = []
    while uuid in tracks and len(out) < 8:
        out.append(tracks[uuid])
        if not tracks[uuid].HasField("parent_uuid"):
            return out
        uuid = tracks[uuid].parent_uuid
    return []


def lane_of(tracks, uuid):
    """(block name, lane name) of a track: the launch's grandchild on its way
    up (a lane's further tracks are the lane's children)."""
    c = chain(tracks, uuid)
    if len(c) < 3:
        return None
    return (c[-2].name, c[-3].name)


def launches(tracks):
    """The launches' tracks: those at the top that others name as parent."""
    parents = {d.parent_uuid for d in tracks.values() if d.HasField("parent_uuid")}
    return {u: d for u, d in tracks.items() if not d.HasField("parent_uuid") and u in parents}


def read_json(data, errors):
    """The JSON as Perfetto's importer reads it: slices [(proc, lane, name,
    ts, dur, args)], links [(src, dst)] from "s"/"f" events, counters."""
    doc = strict_json(data)
    procs, threads, out, flows, counters = {}, {}, [], [], {}
    evs = doc["traceEvents"]
    for e in evs:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    order = sorted(range(len(evs)), key=lambda i: (round(evs[i].get("ts", 0) * 1000), i))
    stacks, active, links = {}, {}, []
    for i in order:
        e = evs[i]
        ph = e["ph"]
        if ph == "M":
            continue
        ts = round(e["ts"] * 1000)
        key = (e["pid"], e["tid"])
        if ph in ("X", "i"):
            if key[0] == 0 or key[1] == 0:
                errors.append("pid or tid 0: Perfetto drops these events")
            dur = round(e["dur"] * 1000) if ph == "X" else 0
            st = stacks.setdefault(key, [])
            while st and st[-1][0] <= ts:
                st.pop()
            sid = len(out)
            lane = SUFFIX.sub("", threads.get(key, ""))
            out.append((procs.get(e["pid"]), lane, e["name"], ts, dur, e.get("args", {})))
            st.append((ts + dur, sid))
        elif ph in ("s", "f"):
            st = stacks.get(key) or []
            if not st:
                errors.append("flow event with no enclosing slice")
                continue
            if ph == "s":
                active[e["id"]] = st[-1][1]
            elif e["id"] in active:
                links.append((active.pop(e["id"]), st[-1][1]))
            else:
                errors.append("flow %d ends before it begins" % e["id"])
        elif ph == "C":
            counters.setdefault((procs.get(e["pid"]), e["name"]), []).append((ts, e["args"]["value"]))
    return out, links, counters


def nests(spans):
    spans = sorted(spans, key=lambda s: (s[0], -s[1]))
    stack = []
    for s, t in spans:
        while stack and stack[-1] <= s:
            stack.pop()
        if stack and stack[-1] < t:
            return False
        stack.append(t)
    return True


def identities(slices):
    """slice index -> (process, lane, name, k): k-th of that name in its lane"""
    by, ids = {}, {}
    for i in sorted(range(len(slices)), key=lambda i: (slices[i][3], -slices[i][4], i)):
        p, lane, name = slices[i][0], slices[i][1], slices[i][2]
        k = by.get((p, lane, name), 0)
        by[(p, lane, name)] = k + 1
        ids[i] = (p, lane, name, k)
    return ids


def expected_links(slices, pairs):
    """links recomputed from the JSON's slices: (src identity, dst identity, src, dst).
    The rule (GUIDE.md, --flow): each TO gets at most one link; a lane with FROM
    events links its own TOs to them; a lane with only TOs links to the block's
    one FROM lane, or, when several lanes have FROMs, by payload to the block's
    k-th FROM of that payload in time order (without payloads: no link).
    Between two lanes: by payload when both sides carry one, else by order."""
    ids = identities(slices)
    lanes = {}
    for i, s in enumerate(slices):
        if "unmatched" in s[5]:
            continue
        lanes.setdefault(s[0], {}).setdefault(s[1], []).append(i)

    def paid(idx):
        return all("begin_data" in slices[i][5] for i in idx)

    out = []
    for frm, to in pairs:
        for proc, ls in lanes.items():
            A = {la: sorted((i for i in ia if slices[i][2] == frm), key=lambda i: ids[i][3]) for la, ia in ls.items()}
            A = {la: v for la, v in A.items() if v}
            for lb, ib in sorted(ls.items()):
                B = sorted((i for i in ib if slices[i][2] == to), key=lambda i: ids[i][3])
                if not B:
                    continue
                if lb in A or len(A) == 1:
                    src = A[lb] if lb in A else next(iter(A.values()))
                elif len(A) > 1 and paid(B) and all(paid(v) for v in A.values()):
                    src = sorted((i for v in A.values() for i in v), key=lambda i: (slices[i][3], slices[i][1], ids[i][3]))
                else:
                    continue
                if paid(src) and paid(B):
                    byp = {}
                    for i in src:
                        byp.setdefault(slices[i][5]["begin_data"], []).append(i)
                    seen = {}
                    for i in B:
                        v = slices[i][5]["begin_data"]
                        k = seen.get(v, 0)
                        seen[v] = k + 1
                        if k < len(byp.get(v, [])):
                            out.append((byp[v][k], i))
                else:
                    out.extend(zip(src, B))
    return [(ids[a], ids[b], slices[a], slices[b]) for a, b in out]


def compare(cap_args, what, pairs=(), counters=(), extra=()):
    """Writes both traces of a capture and compares them; returns the number of slices."""
    with tempfile.TemporaryDirectory() as tmp:
        js, pf = os.path.join(tmp, "t.json"), os.path.join(tmp, "t.pftrace")
        opts = list(extra)
        if pairs:
            opts += ["--flow", ",".join("%s:%s" % p for p in pairs)]
        if counters:
            opts += ["--counter", ",".join(counters)]
        rj = run("trace", *cap_args, "-o", js, *opts)
        rp = run("trace", *cap_args, "-o", pf, *opts)
        if not check(rj[0] == 0 and rp[0] == 0, what + ": both traces written"):
            print(rj[2].decode(errors="replace"), rp[2].decode(errors="replace"), file=sys.stderr)
            return 0
        with open(js, "rb") as f:
            jdata = f.read()
        with open(pf, "rb") as f:
            pdata = f.read()
    errors = []
    try:
        slices, links, pcount, tracks = read_pftrace(pdata, errors)
    except Exception as e:  # noqa: BLE001 - a parse failure is the finding
        check(False, "%s: Perfetto's schema parses the trace: %s" % (what, e))
        return 0
    check(True, what + ": Perfetto's schema parses the trace")
    check(not errors, "%s: trace processor reading: %s" % (what, "; ".join(sorted(set(errors))[:5])))
    # one launch above every block, every block above its lanes
    top = launches(tracks)
    names = [d.name for d in top.values()]
    check(len(top) == (1 if slices else len(top)) and len(top) <= 1 and
          all(re.fullmatch(r"(.+: )?launch( \d+)? \(\S+ capture, \d+ lanes?\)(: STALE: .+)?", n) for n in names),
          "%s: one launch track at the top (%r)" % (what, names))
    depth = {}
    for uuid, *_ in slices:
        c = chain(tracks, uuid)
        depth[len(c)] = depth.get(len(c), 0) + 1
    check(set(depth) <= {3, 4} and all(chain(tracks, u)[-1].uuid in top for u, *_ in slices),
          "%s: every slice under launch, block and lane (depths %r)" % (what, depth))
    check(not any(d.HasField("process") or d.HasField("thread") for d in tracks.values()),
          what + ": no process or thread tracks (a launch's blocks are its children)")
    jerr = []
    jsl, jlinks, jcount = read_json(jdata, jerr)
    check(not jerr, "%s: JSON reading: %s" % (what, "; ".join(sorted(set(jerr))[:5])))
    # the same slices
    pl = []
    for uuid, name, ts, dur, args in slices:
        lane = lane_of(tracks, uuid)
        pl.append((lane[0] if lane else None, SUFFIX.sub("", lane[1]) if lane else None, name, ts, dur,
                   tuple(sorted(args.items()))))
    jl = [(p, lane, n, ts, dur, tuple(sorted(a.items()))) for p, lane, n, ts, dur, a in jsl]
    check(sorted(pl, key=repr) == sorted(jl, key=repr),
          "%s: the protobuf's %d slices are the JSON's %d (block, lane, name, start, duration, args)"
          % (what, len(pl), len(jl)))
    # nesting per track
    per = {}
    for uuid, name, ts, dur, args in slices:
        per.setdefault(uuid, []).append((ts, ts + dur))
    check(all(nests(v) for v in per.values()), what + ": slices nest on every track")
    # counters
    pc = {}
    for uuid, series in pcount.items():
        d = tracks[uuid]
        block = tracks.get(d.parent_uuid)
        pc[(block.name if block else None, d.name)] = series
    check(pc == jcount, "%s: counter tracks equal (%d, %d)" % (what, len(pc), len(jcount)))
    # flows
    if pairs:
        exp = expected_links(jsl, pairs)
        pids = identities([(x[0], x[1], x[2], x[3], x[4]) for x in pl])
        jids = identities(jl)
        want_pb = {(a, b) for a, b, sa, sb in exp if sa[3] < sb[3] + sb[4]}
        got_pb = {(pids[a], pids[b]) for a, b in links}
        check(got_pb == want_pb, "%s: protobuf flows connect the intended events (%d of %d expected, %d found)"
              % (what, len(want_pb & got_pb), len(want_pb), len(got_pb)))
        allx = {(a, b) for a, b, sa, sb in exp}
        surely = {(a, b) for a, b, sa, sb in exp if sa[3] < sb[3]}
        got_js = {(jids[a], jids[b]) for a, b in jlinks}
        check(got_js <= allx and surely <= got_js,
              "%s: JSON flows connect the intended events (%d found, %d sure of %d)"
              % (what, len(got_js), len(surely & got_js), len(surely)))
        check(len(exp) > 0, what + ": the capture has links to draw")
    return len(pl)


# ---- an IKP buffer written here (globaltimer ns lanes), with payloads
def ikp_buffer(lanes_recs, ng, cap=64):
    """lanes_recs: {(block, group): [(kind, id, t_or_data)]}, kind B/E/I/D"""
    nb = max(b for b, g in lanes_recs) + 1
    lanes = nb * ng
    w = [0] * (8 + lanes * (9 + cap))
    w[0] = 0x31504B49 | (1 << 32) | (8 << 48) | (8 << 56)
    w[1] = lanes | (cap << 32)
    w[2] = 1980000
    for (b, g), recs in lanes_recs.items():
        base = 8 + (b * ng + g) * (9 + cap)
        w[base] = 0x4C41 | ((b % 132) << 32)
        w[base + 1] = b | (g << 32) | (ng << 48)
        w[base + 2] = nb | (1 << 32) | (1 << 48)
        w[base + 3] = 1000
        for k, (kind, eid, v) in enumerate(recs):
            if kind == "D":
                tag, hi = 0x80000000 | (eid << 2), v
            else:
                tag, hi = (eid << 2) | {"B": 1, "E": 2, "I": 3}[kind], v
            w[base + 8 + k] = (hi << 32) | tag
        w[base + 5] = 1000 + 100000
        w[base + 7] = (1 << 63) | len(recs)
    return struct.pack("<%dQ" % len(w), *w)


def pipeline(nb, k_tiles, payload_both, seed):
    """producer: load k (payload k) ; two consumers: wait_full (payload k when
    payload_both) then mma; some loads start after the consumer waits"""
    import random
    rnd = random.Random(seed)
    L = {}
    for b in range(nb):
        t = 2000
        prod, loads = [], []
        for k in range(k_tiles):
            t += rnd.randint(5, 40)
            s0 = t
            t += rnd.randint(50, 300)
            prod += [("B", 0, s0), ("D", 0, k), ("E", 0, t)]
            loads.append((s0, t))
        L[(b, 0)] = prod
        # with payloads the consumers take the tiles two at a time in swapped
        # order (1, 0, 3, 2, ...): pairing by order would link the wrong ones
        perm = [k ^ 1 if payload_both and (k ^ 1) < k_tiles else k for k in range(k_tiles)]
        for c in (1, 2):
            t = 2000 + rnd.randint(-30, 30)
            recs = []
            for k in perm:
                s0 = max(t, loads[k][0] + rnd.randint(-60, 100)) if k else t
                e0 = max(s0 + 1, loads[k][1] + rnd.randint(1, 50))
                recs += [("B", 1, s0)] + ([("D", 1, k)] if payload_both else []) + [("E", 1, e0)]
                m1 = e0 + rnd.randint(100, 400)
                recs += [("B", 2, e0 + 1), ("E", 2, m1)]
                t = m1 + 1
            if c == 2:
                recs.append(("I", 3, t + 5))
            L[(b, c)] = recs
    return ikp_buffer(L, 3, cap=8 * k_tiles + 8)


def main():
    tmp = tempfile.mkdtemp(prefix="ikp-pf-")
    names = ["--names", "load,wait_full,mma,done", "--groups", "producer,consumer 0,consumer 1"]
    # flows and counters on made captures: by order and by payload, both groupings
    for payload in (False, True):
        path = os.path.join(tmp, "pipe%d.bin" % payload)
        with open(path, "wb") as f:
            f.write(pipeline(4, 12, payload, seed=7 + payload))
        what = "pipeline, %s" % ("by payload" if payload else "by order")
        n = compare([path] + names, what, pairs=[("load", "wait_full"), ("mma", "done")],
                    counters=["load", "mma"])
        check(n > 4 * 12 * 5, what + ": slices compared")
        compare([path] + names, what + ", --by sm", pairs=[("load", "wait_full")], counters=["wait_full"],
                extra=["--by", "sm"])
    # flows on the bundled sample (load -> compute, by order; step -> load nested)
    compare([SAMPLE], "sample, flows", pairs=[("load", "compute"), ("wait", "step")], counters=["load"])
    compare([SAMPLE, "--by", "sm"], "sample, --by sm")
    # every capture the C runners opened, and the fuzz corpus
    saved = sorted(glob.glob(os.path.join(ROOT, "build", "test-out", "captures", "*.ikp")))
    check(len(saved) >= 20, "captures saved by test_host and test_peers (%d)" % len(saved))
    for p in saved:
        compare([p], os.path.basename(p))
    corpus = sorted(glob.glob(os.path.join(ROOT, "fuzz", "corpus", "e2e", "*")))
    for p in corpus:
        rc, _, _ = run("info", p)
        if rc == 0:
            compare([p], "corpus " + os.path.basename(p))
    # output format selection
    out = os.path.join(tmp, "x.trace")
    rc, _, _ = run("trace", SAMPLE, "-o", out, "--output-format", "perfetto")
    with open(out, "rb") as f:
        head = f.read(1)
    check(rc == 0 and head == b"\x0a", "--output-format perfetto writes protobuf whatever the name")
    out2 = os.path.join(tmp, "x.pftrace")
    rc, _, _ = run("trace", SAMPLE, "-o", out2, "--output-format", "json")
    with open(out2, "rb") as f:
        head = f.read(1)
    check(rc == 0 and head == b"{", "--output-format json writes JSON whatever the name")
    for bad, why in ((["--flow", "load"], "a flow without a colon"), (["--flow", "load:nope"], "an unknown event"),
                     (["--flow", "load:load"], "an event linked to itself"), (["--counter", "nope"], "an unknown counter"),
                     (["--output-format", "xml"], "an unknown output format")):
        o = os.path.join(tmp, "bad.pftrace")
        rc, _, err = run("trace", SAMPLE, "-o", o, *bad)
        check(rc == 2 and b"error" in err and not os.path.exists(o), "refused: " + why)
    host_time(tmp)
    merged(tmp)
    archive(tmp)
    sm_clock(tmp)
    return report()


def host_time(tmp):
    """--time host: a capture with clock readings (written by test_host as
    build/test-out/clock.ikp: time 0 is host 1794999999999960999 ns, one
    2 us region from it). Perfetto's trace clock (BOOTTIME in the snapshot)
    starts at that base and a track states it; the JSON's ts are the base
    plus the capture times, less the base's whole seconds (ikp_ts_offset_ns);
    a capture without readings is refused."""
    cap = os.path.join(ROOT, "build", "test-out", "clock.ikp")
    base = 1794999999999960999
    check(os.path.exists(cap), "test_host wrote %s" % cap)
    if not os.path.exists(cap):
        return
    out = os.path.join(tmp, "host.pftrace")
    rc, _, err = run("trace", cap, "-o", out, "--time", "host")
    check(rc == 0, "trace --time host: exit 0 (%r)" % err[-200:])
    t = PB.Trace()
    t.ParseFromString(open(out, "rb").read())
    boot = [c.timestamp for p in t.packet if p.HasField("clock_snapshot") for c in p.clock_snapshot.clocks if c.clock_id == 6]
    check(boot == [base], "Perfetto: the trace clock starts at the host base (%r)" % boot)
    names = [p.track_descriptor.name for p in t.packet if p.HasField("track_descriptor") and p.track_descriptor.name]
    check(any("CLOCK_REALTIME" in n and str(base) in n for n in names), "Perfetto: a track states the base")
    deltas = [p.timestamp for p in t.packet if p.HasField("track_event")]
    check(deltas == [0, 2000], "Perfetto: the region on the lane clock from the base (%r)" % deltas)
    rc, js, err = run("trace", cap, "-o", "-", "--time", "host")
    d = strict_json(js) if rc == 0 else {}
    xs = [e for e in d.get("traceEvents", []) if e.get("ph") == "X"]
    # past 2^53 ns a double would lose the ns: ts is the base less its whole
    # seconds (stated as ikp_ts_offset_ns), in us with ns decimals
    check(len(xs) == 1 and re.search(rb'"ts":999960\.999,"dur":2\.000', js) is not None and
          d.get("otherData", {}).get("ikp_ts_offset_ns") == "1794999999000000000" and
          int(d["otherData"]["ikp_ts_offset_ns"]) + round(xs[0]["ts"] * 1000) == base,
          "JSON: ts is the base less ikp_ts_offset_ns, in us with ns decimals, exact as a double")
    check(d.get("otherData", {}).get("ikp_time_base_ns") == str(base), "JSON: otherData states the base")
    rc, _, err = run("trace", cap, "-o", "-", "--time", "capture")
    check(rc == 0, "--time capture: exit 0")
    noclock = os.path.join(tmp, "noclock.bin")  # a bare buffer: 1 lane, a 1 us region in globaltimer ns, no readings
    g0 = 1795000000000000000
    lane = [0x4C41, 1 << 48, 1 | 1 << 32 | 1 << 48, g0, 0, g0 + 2000, 0, 1 << 63 | 2,
            ((g0 + 500) & 0xFFFFFFFF) << 32 | 1 << 2 | 1, ((g0 + 1500) & 0xFFFFFFFF) << 32 | 1 << 2 | 2, 0, 0, 0]
    with open(noclock, "wb") as f:
        f.write(struct.pack("<21Q", 0x31504B49 | 1 << 32 | 8 << 48 | 8 << 56, 1 | 4 << 32, 1980000, *([0] * 5), *lane))
    rc, _, err = run("trace", noclock, "-o", os.path.join(tmp, "x.json"), "--time", "host")
    check(rc == 1 and b"no reading of the GPU clock" in err, "--time host without readings: exit 1 and why (%r)" % err[-200:])
    rc, _, err = run("trace", SAMPLE, "-o", os.path.join(tmp, "x.json"), "--time", "gpu")
    check(rc == 2 and b"--time takes capture or host" in err, "--time gpu: bad usage")


def trace_processor(tmp, z, mp, host0):
    """Perfetto's own trace processor (v58 or later; IKP_TRACE_PROCESSOR names
    its trace_processor_shell, which no package ships: without it these
    checks are not run, and say so): the archive's slices are the merged
    trace's, and a trace of another machine added to it (a slice 1 ms after
    the merged time 0 by REALTIME) lands 1 ms after the first capture's 0."""
    tps = os.environ.get("IKP_TRACE_PROCESSOR")
    if not tps:
        print("not run: Perfetto's trace processor on the archive (set IKP_TRACE_PROCESSOR to a v58+ "
              "trace_processor_shell)")
        return
    import subprocess
    import zipfile

    def query(sql, trace):
        q = os.path.join(tmp, "q.sql")
        with open(q, "w") as f:
            f.write(sql)
        r = subprocess.run([tps, "-q", q, trace], capture_output=True, text=True, timeout=600)
        return r.stdout if r.returncode == 0 else None
    sql = "select s.ts, s.dur, s.name, t.name from slice s join track t on s.track_id = t.id order by 1, 2, 3, 4;"
    a, b = query(sql, z), query(sql, mp)
    check(a is not None and a == b and a.count("\n") > 1, "trace processor: the archive's slices are the merged "
          "trace's (%s rows)" % (a.count("\n") - 1 if a else None))
    t = PB.Trace()
    p = t.packet.add()
    p.trusted_packet_sequence_id = 7
    for cid, ts in ((6, 5_000_000_000), (1, host0 + 1_000_000)):
        c = p.clock_snapshot.clocks.add()
        c.clock_id, c.timestamp = cid, ts
    p = t.packet.add()
    p.trusted_packet_sequence_id = 7
    p.track_descriptor.uuid, p.track_descriptor.name = 99, "cpu"
    for typ, ts in ((BEGIN, 5_000_000_000), (END, 5_000_000_500)):
        p = t.packet.add()
        p.trusted_packet_sequence_id, p.timestamp = 7, ts
        p.track_event.type, p.track_event.track_uuid = typ, 99
        if typ == BEGIN:
            p.track_event.name = "cpu_slice"
    z2 = os.path.join(tmp, "with-cpu.zip")
    with zipfile.ZipFile(z) as src, zipfile.ZipFile(z2, "w", zipfile.ZIP_STORED) as dst:
        man = strict_json(src.read("perfetto_manifest.json"))
        man["perfetto_manifest"]["files"].append({"path": "cpu.pftrace", "machine": {"name": "host"}})
        dst.writestr("perfetto_manifest.json", '{"perfetto_manifest":' + json.dumps(man["perfetto_manifest"]) + "}")
        for n in src.namelist()[1:]:
            dst.writestr(n, src.read(n))
        dst.writestr("cpu.pftrace", t.SerializeToString())
    # GUIDE's line for a host trace without clocks: a JSON file synced to a capture's BOOTTIME
    z3 = os.path.join(tmp, "with-json.zip")
    with zipfile.ZipFile(z) as src, zipfile.ZipFile(z3, "w", zipfile.ZIP_STORED) as dst:
        man = strict_json(src.read("perfetto_manifest.json"))["perfetto_manifest"]
        ref = man["files"][0]["path"]
        man["files"].append({"path": "cpu.json", "clocks": {"offset_ns": 250, "sync_to": {"file": ref, "clock": "BOOTTIME"}}})
        dst.writestr("perfetto_manifest.json", '{"perfetto_manifest":' + json.dumps(man) + "}")
        for n in src.namelist()[1:]:
            dst.writestr(n, src.read(n))
        dst.writestr("cpu.json", json.dumps({"traceEvents": [{"ph": "X", "name": "cpu_op", "pid": 1, "tid": 1,
                                                             "ts": 1000.0, "dur": 5.0}]}))
    out = query("select ts from slice where name = 'cpu_op';", z3)
    check(out is not None and out.strip().splitlines()[-1] == str(1_000_000 + 250),
          "trace processor: a JSON host trace synced to a capture's BOOTTIME lands at its ts + offset_ns on the "
          "merged axis (%r)" % (out.strip().splitlines()[-1] if out else None))
    out = query("select (select ts from slice where name = 'cpu_slice') - (select min(ts) from slice where "
                "name != 'cpu_slice') as d;", z2)
    first = query("select min(ts) from slice;", mp)
    d = int(out.strip().splitlines()[-1]) if out else None
    f0 = int(first.strip().splitlines()[-1]) if first else None
    check(d is not None and f0 is not None and d == 1_000_000 - f0, "trace processor: another machine's trace meets "
          "the archive by REALTIME (its slice %s ns after the first capture slice, want %s)" %
          (d, 1_000_000 - f0 if f0 is not None else None))


def archive(tmp):
    """ikp merge -o X.zip: a stored ZIP of perfetto_manifest.json and a
    Perfetto trace a capture. Read with Python's zipfile (every CRC checked),
    every file with Perfetto's schema and as the trace processor reads it:
    together their slices are exactly the merged trace's (the same tracks,
    names, ns); every track uuid is described once across the files; each
    file's clock snapshot ties its BOOTTIME to REALTIME as the merged trace's
    host time does; the manifest holds only the fields Perfetto documents."""
    import zipfile
    a2 = [os.path.join(ROOT, "build", "test-out", f) for f in ("merge_a.ikp", "merge_b.ikp")]
    l3 = [os.path.join(ROOT, "examples", "data", "launch%d.ikp" % k) for k in (3, 1, 2)]
    documented = {"perfetto_manifest": {"version", "trace_time", "files", "attributes"}}
    file_keys, machine_keys = {"path", "machine", "machines", "clocks"}, {"name", "id"}
    for what, ins in (("two GPUs (peer memory)", a2), ("three launches of one GPU", l3)):
        z = os.path.join(tmp, "ranks.zip")
        mp = os.path.join(tmp, "ranks-merged.pftrace")
        rc, _, err = run("merge", *ins, "-o", z)
        rc2, _, _ = run("merge", *ins, "-o", mp)
        rc3, js, _ = run("merge", *ins, "-o", "-", "--time", "host")
        if not check(rc == 0 and rc2 == 0, "%s: merge -o ranks.zip (%r)" % (what, err[-300:])):
            continue
        errors = []
        ms, _, _, mtracks = read_pftrace(open(mp, "rb").read(), errors)
        want = sorted((lane_of(mtracks, u), n, t, d) for u, n, t, d, _ in ms)
        m = re.search(r"time 0 of the merged trace is (\d+) ns", strict_json(js)["otherData"]["ikp_time"]) if rc3 == 0 else None
        host0 = int(m.group(1)) if m else None
        with zipfile.ZipFile(z) as a:
            infos = a.infolist()
            check(a.testzip() is None and all(i.compress_type == zipfile.ZIP_STORED for i in infos) and
                  infos[0].filename == "perfetto_manifest.json" and len(infos) == len(ins) + 1,
                  "%s: a stored ZIP, its CRCs right, the manifest first, a file a capture (%r)" %
                  (what, [(i.filename, i.compress_type) for i in infos]))
            doc = strict_json(a.read("perfetto_manifest.json"))
            man = doc["perfetto_manifest"]
            keys_ok = set(doc) == {"perfetto_manifest"} and set(man) <= documented["perfetto_manifest"] and all(
                set(f) <= file_keys and set(f.get("machine", {})) <= machine_keys for f in man["files"])
            check(keys_ok and man["version"] == 1 and [f["path"] for f in man["files"]] ==
                  [i.filename for i in infos[1:]] and len({f["machine"]["name"] for f in man["files"]}) == 1,
                  "%s: the manifest: version 1, every file by path on one machine, no field Perfetto does not "
                  "document (%r)" % (what, man))
            got, described, snaps = [], {}, []
            for f in man["files"]:
                data = a.read(f["path"])
                errs = []
                sl, _, _, tracks = read_pftrace(data, errs)
                check(not errs, "%s: %s reads cleanly (%r)" % (what, f["path"], errs[:3]))
                for u in tracks:
                    described[u] = described.get(u, 0) + 1
                got += [(lane_of(tracks, u), n, t, d) for u, n, t, d, _ in sl]
                t = PB.Trace()
                t.ParseFromString(data)
                for pk in t.packet:
                    c = {x.clock_id: x.timestamp for x in pk.clock_snapshot.clocks} if pk.HasField("clock_snapshot") else {}
                    if 1 in c:
                        snaps.append(c[1] - c[6])
                names = [d.name for d in tracks.values() if "time 0 at" in d.name]
                check(len(names) == 1, "%s: %s states its placement in a track (%r)" % (what, f["path"], names))
            check(sorted(got) == want, "%s: the files' slices together are the merged trace's (%d, %d merged)" %
                  (what, len(got), len(want)))
            check(all(v == 1 for v in described.values()), "%s: every track uuid described once across the files" % what)
            check(host0 is not None and snaps == [host0] * len(ins),
                  "%s: each file's REALTIME - BOOTTIME is the merged trace's host time of its 0 (%r, %r)" %
                  (what, snaps, host0))
    trace_processor(tmp, z, mp, host0)
    names = [i.filename for i in zipfile.ZipFile(z).infolist()]
    check(names == ["perfetto_manifest.json", "gpu-0-1.pftrace", "gpu-0-2.pftrace", "gpu-0-3.pftrace"],
          "file names from the labels (%r)" % names)
    rc, _, _ = run("merge", *l3, "-o", z, "--labels", "rank 0,Rank-0,rank/0")
    names = [i.filename for i in zipfile.ZipFile(z).infolist()]
    check(rc == 0 and names == ["perfetto_manifest.json", "rank-0.pftrace", "rank-0-2.pftrace", "rank-0-3.pftrace"],
          "labels that read the same as file names told apart (%r)" % names)
    for args, msg in ((["--time", "host"], b"--time host"), (["--output-format", "json"], b"Perfetto traces")):
        o = os.path.join(tmp, "bad.zip")
        rc, _, err = run("merge", *l3, "-o", o, *args)
        check(rc == 2 and msg in err and not os.path.exists(o), "merge -o X.zip %s refused (%r)" % (args, err[-200:]))


def merged(tmp):
    """ikp merge of two GPUs' captures (written by test_merge: GPU 1's clock
    100 us ahead of GPU 0's, a peer measurement says 100.030 us +- 100 ns;
    GPU 0 "raise" at 0 and "work" 1000..2000 ns, GPU 1 "seen" 570 ns after,
    on the merged axis). Read by Perfetto's schema and as JSON: the same
    slices at those times, each capture's blocks under its launch's track, the
    placement stated; --raw leaves GPU 1 100 us late; bad merges refused."""
    a = os.path.join(ROOT, "build", "test-out", "merge_a.ikp")
    b = os.path.join(ROOT, "build", "test-out", "merge_b.ikp")
    check(os.path.exists(a) and os.path.exists(b), "test_merge wrote %s and %s" % (a, b))
    if not (os.path.exists(a) and os.path.exists(b)):
        return
    pf = os.path.join(tmp, "merged.pftrace")
    rc, _, err = run("merge", a, b, "-o", pf)
    check(rc == 0 and b"+- 0.100 us (peer memory, from GPU 0)" in err, "merge: exit 0, placement said (%r)" % err[-300:])
    errors = []
    slices, _, _, tracks = read_pftrace(open(pf, "rb").read(), errors)
    check(not errors, "merged Perfetto trace reads cleanly (%r)" % errors[:3])
    got = sorted((lane_of(tracks, s[0])[0], s[1], s[2], s[3]) for s in slices)
    want = sorted([("GPU 0 block 0", "raise", 0, 0), ("GPU 0 block 0", "work", 1000, 1000),
                   ("rank 1 GPU 1 block 0", "seen", 570, 0)])
    check(got == want, "Perfetto: each GPU's events in its own block track, placed (%r)" % got)
    top = sorted(d.name for d in launches(tracks).values())
    check(top == ["GPU 0: launch (ikp capture, 1 lane)", "rank 1 GPU 1: launch (ikp capture, 1 lane)"],
          "Perfetto: one launch track per capture (%r)" % top)
    under = sorted((chain(tracks, s[0])[-1].name, lane_of(tracks, s[0])[0]) for s in slices)
    check(under == sorted([("GPU 0: launch (ikp capture, 1 lane)", "GPU 0 block 0")] * 2 +
                          [("rank 1 GPU 1: launch (ikp capture, 1 lane)", "rank 1 GPU 1 block 0")]),
          "Perfetto: each capture's blocks under its own launch (%r)" % under)
    notes = [d.name for d in tracks.values() if d.name.startswith("rank 1 GPU 1 (GPU-b0b0")]
    check(len(notes) == 1 and "+- 0.100 us, by a measurement over peer memory" in notes[0],
          "Perfetto: a track states GPU 1's placement and uncertainty (%r)" % notes)
    rc, js, err = run("merge", a, b, "-o", "-")
    d = strict_json(js) if rc == 0 else {}
    ev = sorted((e["name"], round(float(e["ts"]) * 1000), e["pid"]) for e in d.get("traceEvents", []) if e.get("ph") in ("X", "i"))
    check(ev == [("raise", 0, 1), ("seen", 570, 2), ("work", 1000, 1)], "JSON: the same events and pids (%r)" % ev)
    od = d.get("otherData", {})
    check("+- 0.100 us" in od.get("ikp_capture_2", "") and "the reference" in od.get("ikp_capture_1", ""),
          "JSON: otherData states each capture's placement (%r)" % od)
    # host time of the merged time 0, from the most exact source: GPU 1's readings (+- 500 ns) and
    # its placement (+- 100 ns) beat GPU 0's readings (+- 700 ns): GPU 1's first record is host
    # G0 + 100000 + 1600 - 140000, and it sits 570 ns after time 0
    rc, _, err = run("merge", a, b, "-o", pf, "--time", "host")
    t = PB.Trace()
    t.ParseFromString(open(pf, "rb").read())
    boot = sorted(set(c.timestamp for p in t.packet if p.HasField("clock_snapshot") for c in p.clock_snapshot.clocks if c.clock_id == 6))
    base = 1795000000000000000 + 100000 + 1600 - 140000 - 570
    check(rc == 0 and boot == [base, base + 570], "--time host: the lanes' clocks start at the host base (%r)" % boot)
    rc, js, err = run("merge", a, b, "-o", "-", "--raw")
    d = strict_json(js) if rc == 0 else {}
    seen = [float(e["ts"]) for e in d.get("traceEvents", []) if e.get("name") == "seen"]
    check(seen == [100.6] and b"raw GPU clock" in err, "--raw: GPU 1 100 us late (%r)" % seen)
    for args, code, why, msg in (([a], 2, "one capture", b"at least two"),
                                 ([a, a], 1, "a capture twice", b"again"),
                                 ([a, SAMPLE], 1, "a capture nothing links", b"cannot be placed"),
                                 ([a, b, "--labels", "x"], 2, "labels for one capture of two", b"--labels names 1"),
                                 ([a, b, "--labels", "x,x"], 1, "one label for two captures", b"both labelled 'x'"),
                                 ([a, b, "--time", "gpu"], 2, "a bad --time", b"--time takes")):
        o = os.path.join(tmp, "bad-merge.json")
        rc, _, err = run("merge", *args, "-o", o)
        check(rc == code and msg in err and not os.path.exists(o), "merge refuses %s (%d, %r)" % (why, rc, err[-200:]))
    for o in (os.path.join(tmp, "bad-labels.parquet"),):
        rc, _, err = run("export", a, b, "--labels", "x,x", "-o", o)
        wrote = os.path.exists(o) and (not os.path.isdir(o) or os.listdir(o))
        check(rc == 1 and b"captures 1 and 2 are both labelled 'x'" in err and not wrote,
              "export -o %s refuses one label for two captures (%d, %r)" % (os.path.basename(o.rstrip(os.sep)) or o,
                                                                             rc, err[-200:]))
    rc, out, _ = run("info", a, b)
    check(rc == 0 and b"alignment   2 captures" in out and b"+- 0.100 us (peer memory" in out,
          "info of two captures: their placement")
    check(b"any two captures within +- 0.100 us of each other" in out, "info of two captures: their pair's bound")
    # two launches of one GPU whose host readings disagree (test_merge): placed
    # by the GPU's clock, merged with a warning, never refused
    l1 = os.path.join(ROOT, "build", "test-out", "launch1.ikp")
    l2 = os.path.join(ROOT, "build", "test-out", "launch2.ikp")
    rc, js, err = run("merge", l1, l2, "-o", "-")
    d = strict_json(js) if rc == 0 else {}
    od = d.get("otherData", {}).get("ikp_capture_2", "")
    check(rc == 0 and b"warning: the host clock link between GPU 0 #1 and GPU 0 #2" in err
          and b"host times are this much less certain" in err,
          "merge of two launches whose host readings disagree: a warning, exit 0 (%r)" % err[-300:])
    check("+- 0.000 us, by the same GPU's clock" in od and "disagree by" in od,
          "JSON: otherData states the exact placement and the disagreement (%r)" % od)
    rc, out, _ = run("info", l1, l2)
    check(rc == 0 and b"disagreement: the host clock link with GPU 0 #1" in out,
          "info of the two launches: the disagreement (%r)" % out[-300:])
    # export warns as merge does (it stayed silent)
    with tempfile.TemporaryDirectory() as tmp:
        rc, _, err = run("export", l1, l2, "-o", os.path.join(tmp, "t.parquet"))
    check(rc == 0 and b"warning: the host clock link between " + l1.encode() + b" and " + l2.encode() in err and
          b"host times are this much less certain" in err,
          "export of the two launches: the disagreement warned, as merge warns (%r)" % err[-300:])


def sm_clock(tmp):
    """A capture with SM clock samples (written by test_merge as
    build/test-out/smclock.ikp: a cycle lane of SM 7 whose clock slows from
    2.0 to 1.9 cycles/ns at a sample, instants 200 us apart): ikp info
    states the samples; the Perfetto trace and the JSON place the instants
    200 us apart, which two anchors alone would not."""
    cap = os.path.join(ROOT, "build", "test-out", "smclock.ikp")
    check(os.path.exists(cap), "test_merge wrote %s" % cap)
    if not os.path.exists(cap):
        return
    rc, out, _ = run("info", cap)
    check(rc == 0 and b"SM clocks   24 samples on 2 SMs; 1 cycle lanes placed through them" in out,
          "info states the SM clock samples (%r)" % out[-300:])
    pf = os.path.join(tmp, "smclock.pftrace")
    rc, _, err = run("trace", cap, "-o", pf)
    errors = []
    slices, _, _, _ = read_pftrace(open(pf, "rb").read(), errors) if rc == 0 else ([], 0, 0, 0)
    starts = sorted(s[2] for s in slices)
    check(rc == 0 and not errors and starts == [0, 200000, 400000, 600000, 800000],
          "Perfetto: the instants 200 us apart (%r %r)" % (starts, errors[:2]))
    rc, js, _ = run("trace", cap, "-o", "-")
    d = strict_json(js) if rc == 0 else {}
    ts = sorted(round(float(e["ts"]) * 1000) for e in d.get("traceEvents", []) if e.get("ph") == "i")
    check(ts == [0, 200000, 400000, 600000, 800000], "JSON: the instants 200 us apart (%r)" % ts)


if __name__ == "__main__":
    sys.exit(main())
