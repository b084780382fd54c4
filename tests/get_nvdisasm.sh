#!/bin/sh
# Puts an nvdisasm at $1/nvdisasm: the toolkit's if on PATH, else the one
# NVIDIA publishes on PyPI (nvidia-cuda-nvdisasm, pinned), fetched with pip.
set -e
dir=$1
mkdir -p "$dir"
if command -v nvdisasm >/dev/null 2>&1; then
  ln -sf "$(command -v nvdisasm)" "$dir/nvdisasm"
  exit 0
fi
NVDISASM_VERSION=13.5.37
echo "fetching nvdisasm from PyPI (nvidia-cuda-nvdisasm==$NVDISASM_VERSION)"
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$dir/whl" "nvidia-cuda-nvdisasm==$NVDISASM_VERSION"
python3 - "$dir" <<'PY'
import glob, os, sys, zipfile
d = sys.argv[1]
whl = sorted(glob.glob(os.path.join(d, "whl", "nvidia_cuda_nvdisasm-*.whl")))[-1]
with zipfile.ZipFile(whl) as z:
    name = [n for n in z.namelist() if n.endswith("/bin/nvdisasm")][0]
    with open(os.path.join(d, "nvdisasm"), "wb") as f:
        f.write(z.read(name))
os.chmod(os.path.join(d, "nvdisasm"), 0o755)
PY
