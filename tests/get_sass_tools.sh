#!/bin/sh
# Puts nvdisasm and cuobjdump at $1/: the toolkit's where on PATH, else the
# ones NVIDIA publishes on PyPI (nvidia-cuda-nvdisasm, nvidia-cuda-cuobjdump,
# pinned), fetched with pip (5.5 MB of wheels, once). A tool already in $1
# is kept.
set -e
dir=$1
VERSION=13.5.37
mkdir -p "$dir"
for tool in nvdisasm cuobjdump; do
  [ -x "$dir/$tool" ] && continue
  if command -v $tool >/dev/null 2>&1; then
    ln -sf "$(command -v $tool)" "$dir/$tool"
    continue
  fi
  echo "fetching $tool from PyPI (nvidia-cuda-$tool==$VERSION)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$dir/whl" "nvidia-cuda-$tool==$VERSION"
  python3 - "$dir" "$tool" <<'PY'
import glob, os, sys, zipfile
d, tool = sys.argv[1], sys.argv[2]
whl = sorted(glob.glob(os.path.join(d, "whl", "nvidia_cuda_%s-*.whl" % tool)))[-1]
with zipfile.ZipFile(whl) as z:
    name = [n for n in z.namelist() if n.endswith("/bin/" + tool)][0]
    with open(os.path.join(d, tool + ".tmp"), "wb") as f:
        f.write(z.read(name))
os.chmod(os.path.join(d, tool + ".tmp"), 0o755)
os.rename(os.path.join(d, tool + ".tmp"), os.path.join(d, tool))
PY
done
