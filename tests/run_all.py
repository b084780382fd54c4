#!/usr/bin/env python3
"""Runs test runners, each of which prints "N passed, N failed" as its last
line, several at a time, then prints the totals as the final line.

Usage: run_all.py [-j JOBS] RUNNER...
A RUNNER is "GROUP|COMMAND" or "GROUP<AFTER,...|COMMAND" (or a bare
COMMAND, a group of its own). The runners of one group run one after
another, in the order given (they share files: a program and its ASan
build writing one directory); a group named after '<' waits until each of
those groups has finished (it reads what they wrote). Otherwise up to JOBS
runners (default: the cores) run at once, the first given first.
Progress: "== [k/n] COMMAND" when a runner starts; its output, whole, and
"-- [k/n] S s" when it ends; a runner that prints no result line, or exits
non-zero with none failed, counts as one failure."""
import os
import re
import subprocess
import sys
import tempfile
import time

RESULT = re.compile(rb"^([0-9]+) passed, ([0-9]+) failed", re.M)


def parse(args):
    jobs = os.cpu_count() or 1
    if len(args) >= 2 and args[0] == "-j":
        jobs = max(1, int(args[1]))
        args = args[2:]
    runners = []
    for k, a in enumerate(args):
        head, sep, cmd = a.partition("|")
        if not sep or " " in head:  # a bare command
            head, cmd = "#%d" % k, a
        group, _, after = head.partition("<")
        runners.append({"k": k + 1, "group": group, "after": [g for g in after.split(",") if g], "cmd": cmd})
    return jobs, runners


def main():
    jobs, runners = parse(sys.argv[1:])
    n = len(runners)
    groups = {}
    for r in runners:
        groups.setdefault(r["group"], []).append(r)
    unknown = sorted({g for r in runners for g in r["after"] if g not in groups})
    if unknown:
        print("run_all: no runners in the groups %s" % ", ".join(unknown))
        print("0 passed, 1 failed")
        return 1
    pending = list(runners)
    running = {}   # group -> (runner, process, log file, start)
    left = {g: len(rs) for g, rs in groups.items()}
    tp = tf = 0
    status = 0
    t_all = time.time()
    while pending or running:
        # start what may start: its group idle and first in line, the groups it waits for done
        for r in list(pending):
            if len(running) >= jobs:
                break
            g = r["group"]
            if g in running or groups[g][0] is not r or any(left[a] for a in r["after"]):
                continue
            pending.remove(r)
            log = tempfile.TemporaryFile()
            print("== [%d/%d] %s" % (r["k"], n, r["cmd"]), flush=True)
            p = subprocess.Popen(["sh", "-c", r["cmd"]], stdout=log, stderr=subprocess.STDOUT)
            running[g] = (r, p, log, time.time())
        if not running:  # nothing can start: a wait on a group that waits back
            print("run_all: the groups wait on each other: %s" % ", ".join(sorted({r["group"] for r in pending})))
            tf += 1
            status = 1
            break
        time.sleep(0.05)
        for g, (r, p, log, t0) in list(running.items()):
            rc = p.poll()
            if rc is None:
                continue
            del running[g]
            groups[g].pop(0)
            left[g] -= 1
            log.seek(0)
            out = log.read()
            log.close()
            sys.stdout.buffer.write(out)
            if out and not out.endswith(b"\n"):
                sys.stdout.buffer.write(b"\n")
            sys.stdout.flush()
            print("-- [%d/%d] %d s" % (r["k"], n, round(time.time() - t0)), flush=True)
            found = RESULT.findall(out)
            if not found:
                print("runner printed no result line: %s" % r["cmd"])
                tf += 1
                status = 1
            else:
                p_, f_ = int(found[-1][0]), int(found[-1][1])
                tp += p_
                tf += f_
                if rc != 0 and f_ == 0:
                    print("runner exited %d: %s" % (rc, r["cmd"]))
                    tf += 1
            if rc != 0:
                status = 1
    print("-- all: %d s, %d at a time" % (round(time.time() - t_all), jobs))
    print("%d passed, %d failed" % (tp, tf))
    return 1 if status or tf else 0


if __name__ == "__main__":
    sys.exit(main())
