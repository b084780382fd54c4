"""Shared by the Python test runners: counted checks, the closing
"N passed, N failed" line, a strict JSON parser, and the tool under test."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the tool under test: build/ikp, or IKP_TOOL (relative to the repository)
IKP = os.environ.get("IKP_TOOL") or os.path.join(ROOT, "build", "ikp")
if not os.path.isabs(IKP):
    IKP = os.path.join(ROOT, IKP)


def run(*args):
    """Runs the tool: (exit status, stdout bytes, stderr bytes)."""
    p = subprocess.run([IKP] + list(args), capture_output=True)
    return p.returncode, p.stdout, p.stderr

passed = 0
failed = 0


def check(cond, what):
    """Counts one check; prints what failed."""
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, file=sys.stderr)
    return bool(cond)


def report():
    """Prints the closing line; returns the exit status."""
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def strict_json(data):
    """Parses bytes as strict JSON: invalid UTF-8, NaN/Infinity, duplicate
    keys and raw control characters raise ValueError."""
    def no_const(c):
        raise ValueError("non-standard constant " + c)

    def no_dups(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(pairs)
    text = data.decode("utf-8")
    return json.loads(text, parse_constant=no_const, object_pairs_hook=no_dups, strict=True)
