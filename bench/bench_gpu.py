#!/usr/bin/env python3
"""make bench-gpu: the cost per event of IKP through its public macros, this
version and the previous release (its headers from git history: the
Makefile's PREV_COMMIT), beside Triton's Proton, on
the same eight kernel shapes, printed as one Markdown table for
BENCHMARKS.md.

Two rounds, each running DIR/events_<build> and DIR/events_prev_<build> in
turn for every build (default, ring, staged, staged_ring), then six more
programs for the rows below the table (events_default_unpinned: the work
not pinned in its regions; events_staged_flush_each: the staged build
testing in every iteration whether to flush; events_floor_proton,
events_floor_pairs and events_floor_global: a clock read and a store an
event with no check, not a recorder; events_floor_checked: the pairs' floor
with the bounded builds' check, nothing flushed; bench/events.cu), then
bench/proton_events.py: alternating keeps a slow drift of the GPU (clocks,
temperature) from favouring one side. The table gives the ns per event (the
mean of the two rounds), ratios (each computed per round, the worse round
shown) and the goals; a second table gives each round's values. Last, the
median length of the regions in two kernels of four regions an iteration,
read by DIR/ikp from round 1's captures of each main build: whether a
recorder makes the regions after the first one longer than their work. The
goals are reported, not enforced: the exit status is 1 only when a program
fails, a capture check (every record kept, or the ring full) fails, or the
region lengths cannot be read from the captures.

Usage: bench_gpu.py --bin DIR [--quick] [--main]   (--quick: K = 200 instead
of 4000; --main: the default and staged builds, this version's and the
previous release's, and Proton, nothing else: the rows the goals on those
builds need, in about half the time)
"""
import argparse
import datetime
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

BUILDS = ["default", "ring", "staged", "staged ring"]
# current headers only, for the rows beside the table: (row, program)
PAIRS_FLOOR = "floor: IKP's pairs, no check"
GLOBAL_FLOOR = "floor: IKP's pairs to global memory, no check"
CHECKED_FLOOR = "floor: IKP's pairs, IKP's check"
EXTRA = [("default, work not pinned", "events_default_unpinned"),
         ("staged, flush tested each iteration", "events_staged_flush_each"),
         ("floor: Proton's records, no check", "events_floor_proton"),
         (PAIRS_FLOOR, "events_floor_pairs"),
         (CHECKED_FLOOR, "events_floor_checked"),
         (GLOBAL_FLOOR, "events_floor_global")]
CONFIGS = [(4, 1, 16), (4, 4, 16), (16, 1, 16), (16, 4, 16), (4, 1, 256), (4, 4, 256), (16, 1, 256), (16, 4, 256)]
PROTON = {"default": "Proton", "default:optimizations=clock32": "Proton clock32"}
CLOCK32 = "Proton clock32"
ROUNDS = 2
HERE = os.path.dirname(os.path.abspath(__file__))


def label(cfg):
    wps, r, w = cfg
    return f"{wps}w R{r} {w}"


def events_program(build, prev):
    """the events program of a main build: events_<build>, events_prev_<build>"""
    return f"events_{'prev_' if prev else ''}{build.replace(' ', '_')}"


def programs(bindir, quick):
    """(row prefix, command) for one round, in the order they run"""
    extra = ["--quick"] if quick else []
    out = []
    for build in BUILDS:
        out.append(("", [os.path.join(bindir, events_program(build, False))] + extra))
        out.append(("prev ", [os.path.join(bindir, events_program(build, True))] + extra))
    for _, prog in EXTRA:
        out.append(("", [os.path.join(bindir, prog)] + extra))
    out.append(("proton", [sys.executable, os.path.join(HERE, "proton_events.py")] + extra))
    return out


def have_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        return False


class Results:
    def __init__(self):
        self.ns = {}            # (row, cfg) -> [ns per event of each round]
        self.passed = 0         # capture checks
        self.failed = 0
        self.problems = []      # failed checks and programs, said at the end
        self.device = None
        self.versions = {}      # "" / "prev " -> IKP version
        self.k = None
        self.triton = None
        self.proton_skipped = None
        self.prev_skipped = None  # why the previous release's rows are not measured

    def add(self, row, cfg, rnd, value):
        self.ns.setdefault((row, cfg), [None] * ROUNDS)[rnd] = value

    def parse(self, prefix, cmd, rnd, out):
        """reads one program's output; the events programs' capture checks are counted"""
        checked = set()
        for line in out.splitlines():
            m = re.match(r"events: (.*), (\d+) SMs, IKP (\S+) \(.*\), K=(\d+)", line)
            if m:
                self.device = self.device or f"{m.group(1)}, {m.group(2)} SMs"
                self.versions[prefix] = m.group(3)
                self.k = m.group(4)
            m = re.match(r"proton: .*, triton (\S+),", line)
            if m:
                self.triton = m.group(1)
            if line.startswith("skipped: Proton"):
                self.proton_skipped = line[len("skipped: Proton "):].strip("()")
            if line.startswith("skipped: prev "):  # the previous release's headers were not there
                self.prev_skipped = line[len("skipped: "):]
                return
            if line.startswith("events {"):
                d = json.loads(line[len("events "):])
                cfg = (d["wps"], d["R"], d["W"])
                self.add(prefix + d["build"], cfg, rnd, d["ns_per_event"])
                checked.add(cfg)
                if d["check"] == "ok":
                    self.passed += 1
                else:
                    self.failed += 1
                    self.problems.append(f"round {rnd + 1}, {cmd[0]}, {label(cfg)}: capture check: {d['check']}")
            if line.startswith("proton {"):
                d = json.loads(line[len("proton "):])
                self.add(PROTON[d["mode"]], (d["wps"], d["R"], d["W"]), rnd, d["ns_per_event"])
        if prefix != "proton":
            for cfg in CONFIGS:
                if cfg not in checked:  # a program that stopped early: its checks fail
                    self.failed += 1
                    self.problems.append(f"round {rnd + 1}, {cmd[0]}, {label(cfg)}: no result")


# the kernels whose region lengths are read from round 1's captures
LENGTH_CONFIGS = [(4, 4, 16), (4, 4, 256)]


def dump_prefix(dumpdir, prefix, cmd):
    """round 1 writes the main builds' captures here (IKP_EVENTS_DUMP)"""
    name = os.path.basename(cmd[0])
    if prefix == "proton" or not any(name == events_program(b, p) for b in BUILDS for p in (False, True)):
        return None
    return os.path.join(dumpdir, name + "_")


def run_all(bindir, quick, res, dumpdir):
    for rnd in range(ROUNDS):
        for prefix, cmd in programs(bindir, quick):
            print(f"round {rnd + 1}: {shlex.join(cmd)}", file=sys.stderr, flush=True)
            env = dict(os.environ)
            env.pop("IKP_EVENTS_DUMP", None)
            dump = dump_prefix(dumpdir, prefix, cmd) if rnd == 0 else None
            if dump:
                env["IKP_EVENTS_DUMP"] = dump
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
                out, err, rc = p.stdout, p.stderr, p.returncode
            except (OSError, subprocess.TimeoutExpired) as e:
                out, err, rc = "", str(e), None
            res.parse(prefix, cmd, rnd, out)
            if rc != 0:
                res.problems.append(f"round {rnd + 1}, {shlex.join(cmd)}: " +
                                  (f"did not run: {err}" if rc is None else f"exit {rc}"))
                sys.stderr.write(out[-3000:] + err[-3000:])


def region_lengths(bindir, dumpdir, res):
    """rows of the median region length (each event's p50, the median over
    events), the first region of an iteration against the other three (and
    the longest event's p50), read by the ikp tool from round 1's captures"""
    tool = os.path.join(bindir, "ikp")
    rows = []
    for b in BUILDS:
        for p in (False, True):
            name = events_program(b, p)
            row = [("prev " if p else "") + b]
            for wps, r, w in LENGTH_CONFIGS:
                path = os.path.join(dumpdir, f"{name}_{wps}w_R{r}_{w}.bin")
                try:
                    out = subprocess.run([tool, "summary", path, "--json"], capture_output=True, text=True,
                                         timeout=600)
                    events = json.loads(out.stdout)["events"] if out.returncode == 0 else None
                except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
                    events = None
                if not events:
                    res.problems.append(f"region lengths: {tool} summary {path} failed")
                    row += ["n/a", "n/a"]
                    continue
                try:
                    first = [e["p50_ns"] for e in events if e["id"] % r == 0]
                    rest = [e["p50_ns"] for e in events if e["id"] % r != 0]
                    row += [fmt(statistics.median(first), 1),
                            f"{fmt(statistics.median(rest), 1)} ({fmt(max(rest), 1)})"]
                except (TypeError, KeyError, ValueError, statistics.StatisticsError):
                    res.problems.append(f"region lengths: {tool} summary {path}: no regions read")
                    row += ["n/a", "n/a"]
            rows.append(row)
    return rows


def fmt(x, nd=2):
    return "n/a" if x is None else f"{x:.{nd}f}"


def ratio_rounds(res, num, den, cfg):
    """num / den in each round; None where a value is missing or den <= 0"""
    a, b = res.ns.get((num, cfg)), res.ns.get((den, cfg))
    if not a or not b:
        return None
    out = [x / y if x is not None and y is not None and y > 0 else None for x, y in zip(a, b)]
    return None if None in out else out


def worse(res, num, den, cfg):
    r = ratio_rounds(res, num, den, cfg)
    return None if r is None else max(r)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def report(res, cmd, lengths):
    cols = [label(c) for c in CONFIGS]
    ns_rows = BUILDS + ["prev " + b for b in BUILDS] + list(PROTON.values()) + [r for r, _ in EXTRA]
    skipped = res.proton_skipped is not None

    def cell(row, cfg, each):
        v = res.ns.get((row, cfg))
        if row in PROTON.values() and skipped:
            return "skipped"
        if not v or None in v:
            return "n/a"
        return " / ".join(fmt(x) for x in v) if each else fmt(sum(v) / len(v))

    # ns per event (mean of the rounds), ratios (worse round), goals
    rows = [[f"{r} (ns)"] + [cell(r, c, False) for c in CONFIGS] for r in ns_rows]
    ratios = [("default", CLOCK32), ("staged", CLOCK32), ("staged ring", CLOCK32)] + [(b, "prev " + b) for b in BUILDS]
    ratios += [(r, CLOCK32) for r, _ in EXTRA]
    ratios += [("default", GLOBAL_FLOOR), ("staged", PAIRS_FLOOR), ("staged", CHECKED_FLOOR),
               (CHECKED_FLOOR, PAIRS_FLOOR)]
    for num, den in ratios:
        rows.append([f"{num} / {den}"] + [
            "skipped" if den in PROTON.values() and skipped else fmt(worse(res, num, den, c)) for c in CONFIGS])
    goals = {"PASS": 0, "FAIL": 0, "not measured": 0}

    def judge(num, den, cfg, limit):
        """a goal in one column, on the worse round's ratio"""
        v = None if den == CLOCK32 and skipped else worse(res, num, den, cfg)
        verdict = "not measured" if v is None else "PASS" if v <= limit else "FAIL"
        goals[verdict] += 1
        return verdict

    rows.append(["goal: staged <= 0.9 x Proton clock32"] + [judge("staged", CLOCK32, c, 0.9) for c in CONFIGS])
    rows.append(["goal: default <= 1.0 x (R1), 1.2 x (R4) Proton clock32"] +
                [judge("default", CLOCK32, c, 1.0 if c[1] == 1 else 1.2) for c in CONFIGS])
    for b in BUILDS:
        rows.append([f"goal: {b} <= 1.03 x prev {b}"] + [judge(b, "prev " + b, c, 1.03) for c in CONFIGS])

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cur, prev = res.versions.get("", "?"), res.versions.get("prev ", "?")
    print(f"device: {res.device or 'unknown'}; {now}")
    print(f"command: {cmd}")
    print(f"IKP {cur} (current headers; rows without 'prev') and {prev} (the previous release's; rows 'prev'), K={res.k}, "
          f"median of 20 launches after 5 warm-ups, {ROUNDS} rounds; Proton: "
          f"{'triton ' + res.triton if res.triton else 'not measured'}")
    print()
    print(table(["ns per event (mean of the rounds); ratios: the worse round"] + cols, rows))
    print()
    print(f"Goals (reported, not enforced): {goals['PASS']} PASS, {goals['FAIL']} FAIL, "
          f"{goals['not measured']} not measured.")
    if skipped:
        print(f"Proton skipped ({res.proton_skipped}): its rows and the goals against it are not measured "
              f"({len(CONFIGS)} columns skipped).")
    if res.prev_skipped:
        print(f"The previous release skipped ({res.prev_skipped}): its rows and the goals against it are not "
              "measured.")
    print()
    print(table(["ns per event, round 1 / round 2"] + cols, [[r] + [cell(r, c, True) for c in CONFIGS] for r in ns_rows]))
    print()
    header = ["median region length, ns (round 1's capture)"]
    for wps, r, w in LENGTH_CONFIGS:
        header += [f"{wps}w R{r} {w}: first region", f"{wps}w R{r} {w}: the other {r - 1} (longest event)"]
    print(table(header, lengths))
    print(f"(each region is {LENGTH_CONFIGS[0][2] // LENGTH_CONFIGS[0][1]} or {LENGTH_CONFIGS[1][2] // LENGTH_CONFIGS[1][1]} "
          "dependent FMAs, 4 cycles each; the first region of an iteration follows the loop's branch, the others "
          "the previous region's records)")
    print()
    for p in res.problems:
        print(f"FAILED: {p}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="the directory of the events binaries (make's build/)")
    ap.add_argument("--quick", action="store_true", help="K = 200 instead of 4000")
    ap.add_argument("--main", action="store_true", help="the default and staged builds and Proton only")
    args = ap.parse_args()
    if args.main:
        BUILDS[:] = ["default", "staged"]
        EXTRA[:] = []
    n = ROUNDS * len(programs(args.bin, args.quick))
    if not have_gpu():
        print(f"skipped: {n} GPU measurements (no GPU on this machine)")
        print(f"0 passed, 0 failed, {n} skipped")
        return 0
    res = Results()
    with tempfile.TemporaryDirectory() as dumpdir:
        run_all(args.bin, args.quick, res, dumpdir)
        lengths = region_lengths(args.bin, dumpdir, res)
    report(res, shlex.join([os.path.basename(sys.executable)] + sys.argv), lengths)
    tail = f", {len(CONFIGS)} skipped" if res.proton_skipped else ""
    if res.prev_skipped:
        tail += f", {ROUNDS * len(BUILDS) * len(CONFIGS)} skipped (the previous release)"
    print(f"{res.passed} passed, {res.failed} failed{tail}")
    return 1 if res.problems else 0


if __name__ == "__main__":
    sys.exit(main())
