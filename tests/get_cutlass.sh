#!/bin/sh
# Puts CUTLASS's C++ headers at $1/ (include/ and tools/util/include/), for
# examples/cutlass_gemm.cu: from NVIDIA's nvidia-cutlass wheel on PyPI,
# pinned and checked by its SHA-256, fetched with pip (6.4 MB, once) into
# $1/whl. Nothing of CUTLASS is kept in the repository. Offline: put the
# wheel in $1/whl first (or give pip a wheel directory: PIP_FIND_LINKS=DIR
# PIP_NO_INDEX=1). Ends by touching $1/.stamp.
set -e
dir=$1
VERSION=4.2.0.0
SHA256=f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6
mkdir -p "$dir/whl"
if [ ! -f "$dir/whl/nvidia_cutlass-$VERSION-py3-none-any.whl" ]; then
  echo "fetching CUTLASS's headers from PyPI (nvidia-cutlass==$VERSION)"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$dir/whl" "nvidia-cutlass==$VERSION"
fi
python3 - "$dir" "$VERSION" "$SHA256" <<'PY'
import hashlib, os, shutil, sys, zipfile
d, version, want = sys.argv[1], sys.argv[2], sys.argv[3]
whl = os.path.join(d, "whl", "nvidia_cutlass-%s-py3-none-any.whl" % version)
got = hashlib.sha256(open(whl, "rb").read()).hexdigest()
if got != want:
    sys.exit("get_cutlass.sh: %s has SHA-256 %s, not the pinned %s" % (whl, got, want))
src = "cutlass_library/source/"
trees = ("include/", "tools/util/include/")
tmp = os.path.join(d, "tree.tmp")
shutil.rmtree(tmp, ignore_errors=True)
n = 0
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        rel = name[len(src):] if name.startswith(src) else None
        if rel is None or name.endswith("/") or not rel.startswith(trees):
            if name.endswith("licenses/LICENSE.txt"):
                os.makedirs(tmp, exist_ok=True)
                with open(os.path.join(tmp, "LICENSE.txt"), "wb") as f:
                    f.write(z.read(name))
            continue
        out = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(z.read(name))
        n += 1
for t in ("include/cutlass/gemm/kernel/sm90_gemm_tma_warpspecialized_pingpong.hpp", "include/cute/tensor.hpp",
          "tools/util/include/cutlass/util/packed_stride.hpp"):
    if not os.path.isfile(os.path.join(tmp, t)):
        sys.exit("get_cutlass.sh: %s is not in %s" % (t, whl))
for t in ("include", "tools", "LICENSE.txt"):
    p = os.path.join(d, t)
    if os.path.isdir(p):
        shutil.rmtree(p)
    elif os.path.exists(p):
        os.remove(p)
    if os.path.exists(os.path.join(tmp, t)):
        os.rename(os.path.join(tmp, t), p)
shutil.rmtree(tmp)
print("CUTLASS %s: %d headers in %s/include and %s/tools/util/include" % (version, n, d, d))
PY
touch "$dir/.stamp"
