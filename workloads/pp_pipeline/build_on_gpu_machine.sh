#!/usr/bin/env bash
# Builds the GPU binary pp_pipeline ON the GPU machine, against that machine's
# Python (3.12), CUDA, Open MPI and, when it configures, libtorch; then runs two
# short smoke trials. The harness's own dependencies are not needed: this
# configures workloads/pp_pipeline as a project of its own.
#
#   workloads/pp_pipeline/build_on_gpu_machine.sh [BUILD_DIR]
#
# BUILD_DIR defaults to <repo>/build-gpu-pp. The binary lands in
# BUILD_DIR/workloads/pp_pipeline/pp_pipeline, so run the matrices with
#   HANGBENCH_WORKLOADS_DIR=BUILD_DIR/workloads hangbench run workloads/pp_pipeline/matrix-1gpu.toml
# Environment: TORCH_DIR (Torch's CMake folder; found from python3 if unset),
# PP_WITH_TORCH=0 to skip libtorch, CUDA_ARCH (default 90), SKIP_SMOKE=1.
# The options parser (workloads/common/cli.hpp) needs CLI11's headers: libcli11-dev,
# or a copy of a CLI11 2.x include folder in <repo>/.cache/cli11/include or CLI11_INCLUDE_DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-$repo/build-gpu-pp}
arch=${CUDA_ARCH:-90}
say() { echo "[build_on_gpu_machine] $*"; }

cmake_bin=$(command -v cmake || true)
[ -z "$cmake_bin" ] && [ -x /opt/torch/.venv/bin/cmake ] && cmake_bin=/opt/torch/.venv/bin/cmake
[ -z "$cmake_bin" ] && { say "error: no cmake on PATH or in /opt/torch/.venv/bin"; exit 3; }
nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$nvcc_bin" ] || { say "error: nvcc not found (PATH or /usr/local/cuda/bin)"; exit 3; }
command -v mpicxx >/dev/null || { say "error: mpicxx not found (Open MPI development files)"; exit 3; }
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -z "${generator[*]}" ] && [ -x /opt/torch/.venv/bin/ninja ] && generator=(-G Ninja -DCMAKE_MAKE_PROGRAM=/opt/torch/.venv/bin/ninja)
# The distribution's python3 has the shared libpython to embed; a venv's may not.
python_for_embedding=/usr/bin/python3

common=(-S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
        -DCMAKE_CUDA_COMPILER="$nvcc_bin" -DCMAKE_CUDA_ARCHITECTURES="$arch"
        -DPython3_EXECUTABLE="$python_for_embedding")

torch_dir=${TORCH_DIR:-}
if [ -z "$torch_dir" ] && [ "${PP_WITH_TORCH:-1}" != 0 ]; then
  for py in python3 /opt/torch/.venv/bin/python3; do
    torch_dir=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "share/cmake/Torch"))' 2>/dev/null) && break
  done
fi

configured=0
if [ "${PP_WITH_TORCH:-1}" != 0 ] && [ -n "$torch_dir" ] && [ -d "$torch_dir" ]; then
  say "configuring with libtorch activations (Torch_DIR=$torch_dir)"
  if "$cmake_bin" "${common[@]}" -DHANGBENCH_WITH_TORCH=ON -DTorch_DIR="$torch_dir"; then
    configured=1
  else
    say "WARNING: configuring with libtorch failed (above); falling back to cudaMalloc activations"
    rm -rf "$build"
  fi
fi
if [ "$configured" = 0 ]; then
  say "configuring without libtorch (activations are cudaMalloc buffers)"
  "$cmake_bin" "${common[@]}" -DHANGBENCH_WITH_TORCH=OFF
fi
"$cmake_bin" --build "$build" --target pp_pipeline -j "$(nproc)"

binary="$build/workloads/pp_pipeline/pp_pipeline"
say "built $binary"
ldd "$binary" | grep -E 'python|mpi|cudart|torch' || true
[ "${SKIP_SMOKE:-0}" = 1 ] && exit 0

# Two smoke trials that must finish: the native progress thread under LAZY, and
# no progress source under EAGER. (none/pump under LAZY are expected to hang:
# try them through the harness, which has a timeout.)
smoke() {
  local loading=$1 progress=$2
  say "smoke: CUDA_MODULE_LOADING=$loading --progress=$progress (60 s limit)"
  if CUDA_MODULE_LOADING=$loading OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo \
     timeout 60 mpirun --allow-run-as-root --oversubscribe -np 2 \
       -x CUDA_MODULE_LOADING -x OMPI_MCA_pml -x OMPI_MCA_btl -x OMPI_MCA_btl_tcp_if_include \
       "$binary" --single-gpu --progress="$progress" --steps=3; then
    say "smoke $loading/$progress: completed"
  else
    say "smoke $loading/$progress: FAILED or timed out (exit $?)"
    return 1
  fi
}
smoke LAZY native
smoke EAGER none
