#!/usr/bin/env python3
"""IKP's names stay apart from those of yao-jz/intra-kernel-profiler, another
public project that calls itself "Intra-Kernel Profiler (IKP)", so that the
two can sit in one build.

That project's headers (include/intra_kernel_profiler/, commit b22ad76)
and its marker source (src/nvbit_marker_device.cu) define the macros and
extern "C" functions in THEIRS below, read the configuration macros in
THEIR_SWITCHES, and put their C++ in the namespace intra_kernel_profiler;
THEIR_PREFIXES are the families those names come in. The check: no name
that ikp.h or ikp_cuda.cuh spells (macros, functions, types, fields and
internals alike, all of which a build that includes them sees) is one of
theirs or begins with one of their prefixes, and no macro of ours is one
of the switches their headers read. Names are read from the headers'
text, comments left out."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, check, report  # noqa: E402

THEIRS = {
    "IKP_TRACE_CTX_TYPE", "IKP_TRACE_CTX_INIT", "IKP_TRACE_CTX_FLUSH",
    "IKP_TRACE_REC", "IKP_TRACE_REC_B", "IKP_TRACE_REC_E", "IKP_TRACE_REC_IF", "IKP_TRACE_REC_M",
    "IKP_NVBIT_BEGIN", "IKP_NVBIT_END", "IKP_NVBIT_LANEID", "IKP_NVBIT_LEADER_LANE", "IKP_DEF_MARKER",
    "INTRA_KERNEL_PROFILER_VERSION_MAJOR", "INTRA_KERNEL_PROFILER_VERSION_MINOR",
    "INTRA_KERNEL_PROFILER_VERSION_PATCH", "INTRA_KERNEL_PROFILER_VERSION_STRING",
    "intra_kernel_profiler", "ikp_nvbit_marker_device",
} | {"ikp_nvbit_region_%s_%d" % (k, i) for k in ("push", "pop") for i in range(7)}
THEIR_SWITCHES = {"IKP_ENABLE_NVBIT_MARKERS", "IKP_NVBIT_USE_CUPTI_CRC", "PROFILE_CAP", "PROFILE_PER_WARP_CAP"}
THEIR_PREFIXES = ("IKP_TRACE_CTX_", "IKP_TRACE_REC", "IKP_NVBIT_", "ikp_nvbit_", "INTRA_KERNEL_PROFILER_",
                  "intra_kernel_profiler")

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


def names_in(text):
    """(every identifier, the macros defined) in a header's code"""
    code = COMMENT.sub(" ", text)
    code = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', code)  # string literals: text, not names
    return set(NAME.findall(code)), set(DEFINE.findall(code))


def names(path):
    with open(path, encoding="utf-8") as f:
        return names_in(f.read())


def main():
    ours, macros = set(), set()
    for h, macro, name in (("ikp.h", "IKP_WIRE_MAGIC", "ikp_capture_open"), ("ikp_cuda.cuh", "IKP_BEGIN", "ikpd__finalize")):
        n, m = names(os.path.join(ROOT, h))
        check(len(m) > 50 and macro in m and name in n, "%s: its names read (%d names, %d macros)" % (h, len(n), len(m)))
        ours |= n
        macros |= m
    ours = {x for x in ours if x.lower().startswith(("ikp", "intra"))}
    check(len(ours) > 1000, "IKP's own names found: %d" % len(ours))
    same = sorted(ours & THEIRS)
    check(not same, "names the other project defines too: %s" % same)
    prefixed = sorted(x for x in ours if x.startswith(THEIR_PREFIXES))
    check(not prefixed, "names in the other project's families (%s): %s" % (", ".join(THEIR_PREFIXES), prefixed))
    read = sorted(macros & THEIR_SWITCHES)
    check(not read, "macros of ours that the other project's headers read: %s" % read)
    # the check sees a name of theirs where one would be: in a copy of
    # ikp_cuda.cuh with one more macro
    with open(os.path.join(ROOT, "ikp_cuda.cuh"), encoding="utf-8") as f:
        planted = f.read() + "\n#define IKP_TRACE_REC_B(ctx, id) ((void)0)\n"
    got, defined = names_in(planted)
    check("IKP_TRACE_REC_B" in got & THEIRS & defined, "a planted IKP_TRACE_REC_B is found")
    return report()


if __name__ == "__main__":
    sys.exit(main())
