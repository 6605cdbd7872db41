#!/usr/bin/env bash
# Fetches torch 2.11.0's wheel (CUDA 13.0 build, the one the GPU machine runs)
# from PyPI and unpacks its C++ part (headers, libraries, CMake config) into
# .cache/torch/site/torch, for -DHANGBENCH_WITH_TORCH=ON builds of
# workloads/ddp_abort. Skips what is already there. About 530 MB to download.
#
#   ci/setup-torch.sh [CACHE_DIR]        (default: <repo>/.cache/torch)
#   cmake -S . -B build -DHANGBENCH_WITH_TORCH=ON \
#         -DTorch_DIR=<CACHE_DIR>/site/torch/share/cmake/Torch
#
# The build also needs CUDA 13 headers and nccl.h (libtorch's CUDA headers include
# them): a CUDA 13.0 toolkit at /usr/local/cuda, or CUDAToolkit_ROOT pointing at one.
# Nothing is linked against CUDA libraries at build time.
set -euo pipefail
TORCH_VERSION="2.11.0"
REPO_ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE_DIR="${1:-$REPO_ROOT/.cache/torch}"
SITE_DIR="$CACHE_DIR/site"
PYTHON="${PYTHON:-python3}"

if [ -f "$SITE_DIR/torch/share/cmake/Torch/TorchConfig.cmake" ] && [ -f "$SITE_DIR/torch/lib/libtorch_cuda.so" ]; then
  echo "setup-torch: libtorch already unpacked in $SITE_DIR/torch"
  exit 0
fi
mkdir -p "$CACHE_DIR" "$SITE_DIR"

wheel="$(ls "$CACHE_DIR"/torch-"$TORCH_VERSION"-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$wheel" ]; then
  echo "setup-torch: downloading torch==$TORCH_VERSION (manylinux x86_64, cu130) from PyPI"
  # The wheel's Python tag is irrelevant for the C++ part; pin one that exists.
  "$PYTHON" -m pip download --no-deps --only-binary=:all: --implementation cp --python-version 3.11 \
    --platform manylinux_2_28_x86_64 --dest "$CACHE_DIR" "torch==$TORCH_VERSION"
  wheel="$(ls "$CACHE_DIR"/torch-"$TORCH_VERSION"-*.whl | head -n1)"
fi

echo "setup-torch: unpacking the C++ part of $(basename "$wheel")"
"$PYTHON" - "$wheel" "$SITE_DIR" <<'PY'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
wanted = ("torch/include/", "torch/lib/", "torch/share/", "torch/version.py")
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if m.startswith(wanted)]
    z.extractall(dest, members)
print(f"setup-torch: {len(members)} files into {dest}/torch")
PY
echo "setup-torch: done; configure with -DHANGBENCH_WITH_TORCH=ON -DTorch_DIR=$SITE_DIR/torch/share/cmake/Torch"
