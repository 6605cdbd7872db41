#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, a full build (the libtorch and CUDA
# workloads are compiled too, though nothing GPU runs here), then ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
bash ci/setup-torch.sh
cmake --preset full
cmake --build --preset full
ctest --preset full
