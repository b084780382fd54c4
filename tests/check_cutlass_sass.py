#!/usr/bin/env python3
"""make test: CUTLASS's ping-pong GEMM kernel, instrumented by
examples/cutlass_patch.py, against CUTLASS's own. No GPU needed.

- build/cutlass_gemm_off.cubin or the program build/cutlass_gemm_off (the
  edited header, -DIKP_ENABLE=0) and
  build/cutlass_gemm_orig.cubin (CUTLASS's header, unpatched): the GEMM
  kernel's SASS is the same, instruction by instruction and byte by byte;
- build/cutlass_gemm (IKP on): the kernel holds the recorder's stamps,
  `ikp check-sass` finds none of its regions empty, and it keeps CUTLASS's
  registers with no local memory (no spills), as the other two do.

cuobjdump: SASS_TOOLS/cuobjdump (make deps puts one in build/tools), else
the one on PATH. Ends with "N passed, N failed".
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.path.join(ROOT, "build")
TOOLS = os.environ.get("SASS_TOOLS", os.path.join(B, "tools"))
passed = failed = 0


def check(ok, what):
    global passed, failed
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if ok:
        passed += 1
    else:
        failed += 1


def cuobjdump():
    t = os.path.join(TOOLS, "cuobjdump")
    return t if os.access(t, os.X_OK) else "cuobjdump"


def kernels(path):
    """{function: [(instruction, encoding)]} of a binary or cubin's SASS."""
    out = subprocess.run([cuobjdump(), "-sass", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("cuobjdump -sass %s failed: %s" % (path, out.stderr.strip()[-300:]))
    funcs, cur, last = {}, None, None
    ins = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")
    enc2 = re.compile(r"^\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")
    for line in out.stdout.splitlines():
        m = re.match(r"^\s*Function : (\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            last = None
            continue
        m = ins.match(line)
        if m and cur is not None:
            last = [re.sub(r"\s+", " ", m.group(2)), m.group(3)]
            cur.append(last)
            continue
        m = enc2.match(line)
        if m and last is not None:
            last[1] += m.group(1)
            last = None
    return funcs


def gemm_kernel(path):
    funcs = kernels(path)
    names = [f for f in funcs if "device_kernel" in f and "GemmUniversal" in f]
    check(len(names) == 1, "%s: one CUTLASS GEMM kernel in the SASS (%d)" % (os.path.relpath(path, ROOT), len(names)))
    return (names[0], funcs[names[0]]) if names else (None, [])


def main():
    # the -DIKP_ENABLE=0 build: its device code (make test), or the program (make cutlass)
    off = "cutlass_gemm_off.cubin" if os.path.exists(os.path.join(B, "cutlass_gemm_off.cubin")) else "cutlass_gemm_off"
    need = [os.path.join(B, n) for n in ("cutlass_gemm", off, "cutlass_gemm_orig.cubin")]
    missing = [n for n in need if not os.path.exists(n)]
    if missing:
        check(False, "built first (make cutlass): %s" % ", ".join(os.path.relpath(n, ROOT) for n in missing))
        print("%d passed, %d failed" % (passed, failed))
        return 1
    on_name, on = gemm_kernel(need[0])
    off_name, off = gemm_kernel(need[1])
    orig_name, orig = gemm_kernel(need[2])
    check(off_name == orig_name == on_name, "the same kernel (mangled name) in the three builds")
    same_text = [a[0] for a in off] == [a[0] for a in orig]
    same_bytes = [a[1] for a in off] == [a[1] for a in orig]
    first = next((i for i, (a, b) in enumerate(zip(off, orig)) if a != b), min(len(off), len(orig)))
    check(len(off) > 1000 and same_text and same_bytes,
          "IKP_ENABLE=0: the kernel's SASS equals CUTLASS's own, unpatched: %d and %d instructions, %s%s"
          % (len(off), len(orig), "identical" if same_text and same_bytes else "first difference at instruction %d" % first,
             "" if same_text and same_bytes else ": %r against %r" % (off[first] if first < len(off) else None,
                                                                       orig[first] if first < len(orig) else None)))
    # the recording build: 5 regions a tile and the two lanes' opening and closing
    stamps = sum(1 for t, _ in on if "SR_CLOCKLO" in t and t.startswith("CS2R"))
    check(len(on) > len(off) and stamps >= 12,
          "IKP on: the recorder is in the kernel (%d instructions, %d more than CUTLASS's own; %d stamps)"
          % (len(on), len(on) - len(off), stamps))
    # registers and local memory (spills) of the kernel in each build
    use = {}
    for n in need:
        out = subprocess.run([cuobjdump(), "-res-usage", n], capture_output=True, text=True).stdout.splitlines()
        for i, line in enumerate(out[:-1]):
            if on_name and on_name in line:
                m = re.search(r"REG:(\d+).*LOCAL:(\d+)", out[i + 1])
                if m:
                    use[n] = (int(m.group(1)), int(m.group(2)))
    regs = [use.get(n) for n in need]
    check(None not in regs and len(set(regs)) == 1 and regs[0][1] == 0,
          "the same registers, no local memory, in the three builds (REG, LOCAL: %s)" % regs)
    ikp = os.path.join(B, "ikp")
    env = dict(os.environ)
    env["PATH"] = TOOLS + os.pathsep + env.get("PATH", "")
    p = subprocess.run([ikp, "check-sass", "--names", "load,wait,mma,tail,epilogue", need[0]], capture_output=True,
                       text=True, env=env)
    check(p.returncode == 0 and " 0 hold no instruction" in p.stdout,
          "ikp check-sass build/cutlass_gemm: no region left empty (%s)" % (p.stdout + p.stderr).strip()[-300:])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
