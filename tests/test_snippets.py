#!/usr/bin/env python3
"""The code shown to users compiles as written:
 - every ```c, ```cpp and ```cuda block of README.md and GUIDE.md (c blocks as C99 with gcc
   and clang and as C++ with g++; cpp blocks as C++; cuda blocks with nvcc);
 - the quick starts in the opening comments of ikp.h (decode, as C and C++;
   profile, with nvcc) and ikp_cuda.cuh (both kernels, with nvcc).
Warnings are errors. A header snippet is a whole function or kernel; the test
adds only the #include lines and the names it refers to from outside."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, report  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NVCC = os.environ.get("NVCC", "nvcc")
W = ["-Wall", "-Wextra", "-pedantic", "-Werror"]
NVW = ["-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra"]
ARCH = ["-gencode=arch=compute_90,code=sm_90"]


def compile_ok(what, cmd):
    p = subprocess.run(cmd, capture_output=True, cwd=ROOT)
    msg = (p.stdout + p.stderr).decode(errors="replace")
    check(p.returncode == 0, "%s compiles: %s\n%s" % (what, " ".join(cmd), msg[-2000:]))


def doc_blocks(name):
    text = open(os.path.join(ROOT, name), encoding="utf-8").read()
    return [(name, lang, code) for lang, code in re.findall(r"^```(c|cpp|cuda)\n(.*?)^```", text, flags=re.S | re.M)]


def header_snippet(path, first_line_prefix):
    """The lines of a header comment from the one starting with the prefix
    to the closing brace at its indentation, dedented."""
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if line.strip().startswith(first_line_prefix):
            indent = len(line) - len(line.lstrip())
            for j in range(i + 1, len(lines)):
                if lines[j] == " " * indent + "}":
                    return "\n".join(l[indent:] for l in lines[i:j + 1]) + "\n"
    check(False, "%s: snippet '%s' not found" % (path, first_line_prefix))
    return None


def main():
    tmp = tempfile.mkdtemp(prefix="ikp-snippets-")
    readme, guide = doc_blocks("README.md"), doc_blocks("GUIDE.md")
    check(len(readme) >= 2, "README.md has its code blocks (%d found)" % len(readme))
    check(len(guide) >= 2, "GUIDE.md has its code blocks (%d found)" % len(guide))
    for n, (doc, lang, code) in enumerate(readme + guide):
        what = "%s block %d (%s)" % (doc, n + 1, lang)
        if lang == "c":
            src = os.path.join(tmp, "readme%d.c" % n)
            open(src, "w").write(code)
            for cc in (["gcc", "-std=c99"], ["clang", "-std=c99"], ["g++", "-x", "c++", "-std=c++11"]):
                compile_ok(what + " with " + cc[0], cc + W + ["-I.", "-c", src, "-o", os.path.join(tmp, "o.o")])
        elif lang == "cpp":
            src = os.path.join(tmp, "readme%d.cpp" % n)
            open(src, "w").write(code)
            compile_ok(what, ["g++", "-std=c++17"] + W + ["-I.", "-c", src, "-o", os.path.join(tmp, "o.o")])
        else:
            src = os.path.join(tmp, "readme%d.cu" % n)
            open(src, "w").write(code)
            compile_ok(what, [NVCC, "-std=c++17"] + ARCH + NVW + ["-I.", "-c", src, "-o", os.path.join(tmp, "o.o")])

    decode = header_snippet("ikp.h", "int decode(")
    if decode:
        src = os.path.join(tmp, "h_decode.c")
        open(src, "w").write("#include <stdio.h>\n#include <string.h>\n#define IKP_IMPLEMENTATION\n"
                             "#include \"ikp.h\"\n" + decode)
        for cc in (["gcc", "-std=c99"], ["clang", "-std=c99"], ["g++", "-x", "c++", "-std=c++11"]):
            compile_ok("ikp.h quick start (decode) with " + cc[0], cc + W + ["-I.", "-c", src, "-o", os.path.join(tmp, "o.o")])
    profile = header_snippet("ikp.h", "void profile(")
    enum = "enum { EV_LOAD, EV_MATH, EV_DONE };"
    k1 = header_snippet("ikp_cuda.cuh", "__global__ void k(")
    k2 = header_snippet("ikp_cuda.cuh", "__global__ void ks(")
    if profile and k1:
        # both quick starts in one translation unit: the host one launches the
        # device one's kernel with ikp_cuda_buffer.device (so their types agree)
        src = os.path.join(tmp, "h_profile.cu")
        open(src, "w").write("#include <cstdio>\n#include <cstring>\n#include <cstdint>\n#include \"ikp_cuda.cuh\"\n"
                             "#define IKP_IMPLEMENTATION\n#include \"ikp.h\"\n" + enum + "\n" + k1 + profile)
        check("k<<<" in profile, "ikp.h's host quick start launches ikp_cuda.cuh's kernel k")
        compile_ok("ikp.h and ikp_cuda.cuh quick starts in one file", [NVCC, "-std=c++17"] + ARCH + NVW +
                   ["-I.", "-c", src, "-o", os.path.join(tmp, "o.o")])
    text = open(os.path.join(ROOT, "ikp_cuda.cuh"), encoding="utf-8").read()
    check(enum in text, "ikp_cuda.cuh quick start declares its event ids")
    if k1 and k2:
        src = os.path.join(tmp, "c_quick.cu")
        open(src, "w").write("#include <cstdint>\n#include \"ikp_cuda.cuh\"\n" + enum + "\n" + k1 + k2)
        for staged in ("0", "1"):
            compile_ok("ikp_cuda.cuh quick start (IKP_STAGED=%s)" % staged,
                       [NVCC, "-std=c++17", "-DIKP_STAGED=" + staged] + ARCH + NVW +
                       ["-I.", "-c", src, "-o", os.path.join(tmp, "o.o")])
    tool_help_in_guide()
    contents_in_order()
    return report()


def tool_help_in_guide():
    """GUIDE's "The `ikp` tool in full" holds `ikp --help` as the tool prints it, line for line (the
    indented block after the heading's first paragraph)."""
    tool = os.environ.get("IKP_TOOL") or os.path.join(ROOT, "build", "ikp")
    p = subprocess.run([tool, "--help"], capture_output=True, text=True)
    guide = open(os.path.join(ROOT, "GUIDE.md"), encoding="utf-8").read()
    at = guide.find("## The `ikp` tool in full")
    sec = guide[at:guide.find("\n## ", at + 5)] if at >= 0 else ""
    m = re.search(r"\n\n((?:    .*\n|\n)+?)\n(?! )", sec)
    copy = [l[4:] for l in m.group(1).splitlines()] if m else []
    helps = p.stdout.splitlines()
    first = next((i for i, (a, b) in enumerate(zip(copy, helps)) if a != b.rstrip()), min(len(copy), len(helps)))
    check(p.returncode == 0 and len(helps) > 50 and [l.rstrip() for l in helps] == copy,
          "GUIDE's copy of ikp --help is the tool's (%d lines, %d in GUIDE; first differing line %d: %r / %r)"
          % (len(helps), len(copy), first + 1, helps[first] if first < len(helps) else None,
             copy[first] if first < len(copy) else None))


def contents_in_order():
    """ikp.h's CONTENTS is its section tags in file order, each with the description its tag line
    gives, under the layer headings; the declarations and the implementation go through the same
    layers in the same order, and an implementation's tag names a topic of its layer."""
    text = open(os.path.join(ROOT, "ikp.h"), encoding="utf-8").read()
    tags = re.findall(r"^/\* >>([a-z0-9-]+): (.*) \*/$", text, re.M)
    at = text.find("\n   CONTENTS\n")
    block = text[at:text.find("\n\n", at + 1)]
    halves, layers, listed, cur = {}, None, [], None
    for line in block.split("\n"):
        m = re.match(r"^       (Declarations|Implementation):$", line)
        if m:
            layers = halves.setdefault(m.group(1), [])
            continue
        m = re.match(r"^         (\S.*)$", line)
        if m and layers is not None:
            cur = (m.group(1), [])
            layers.append(cur)
            continue
        m = re.match(r"^           ([a-z0-9-]+) +(.*)$", line)
        if m and cur is not None:
            listed.append((m.group(1), m.group(2)))
            cur[1].append(m.group(1))
    check(tags and listed == tags, "ikp.h's CONTENTS lists its %d tags in file order with their descriptions "
          "(first difference: %s)" % (len(tags), next(((a, b) for a, b in zip(listed + [None] * len(tags),
                                                       tags + [None] * len(listed)) if a != b), None)))
    d, i = halves.get("Declarations", []), halves.get("Implementation", [])
    check(d and [n for n, _ in d] == [n for n, _ in i], "CONTENTS: the declarations and the implementation "
          "go through the same layers (%s; %s)" % ([n for n, _ in d], [n for n, _ in i]))
    topics = {n: set(t) for n, t in d}
    bad = [t for n, ts in i for t in ts if t.split("-")[0] not in topics.get(n, ()) and n != "base"]
    check(not bad, "CONTENTS: every implementation section names a topic of its layer (%s)" % bad)


if __name__ == "__main__":
    sys.exit(main())
