"""Shared by the Python test runners: counted checks, the closing
"N passed, N failed" line, and a strict JSON parser."""
import json
import sys

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
