#!/usr/bin/env bash
# Installs what hangbench needs to build and test on Debian 12 (as root, or with sudo).
# Every library is a Debian package; only the test interpreters of fetch_old_pythons.sh
# are downloaded as .debs directly (apt's Debian archive, pinned by SHA-256).
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config git \
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libboost-math-dev \
  libsqlite3-dev sqlite3 libfmt-dev libssl-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libopenmpi-dev openmpi-bin libucx-dev \
  python3-dev libelf-dev libdw-dev libseccomp-dev binutils procps iproute2 gdb clang-format-14 >/dev/null
# The HTML report's layout test renders it in a real browser (headless).
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
# A real one-node Slurm for the Slurm tests (tests/slurm/start.sh runs its daemons).
$SUDO apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null

# CPython 3.9 and 3.13 (pinned Debian .debs from apt's configured archive, checked by SHA-256) for
# diagnose's Python-frame tests of those versions and ci/gen_python_layouts.py's test (their
# headers); tests/CMakeLists.txt and python_layout_test look in .cache/old-pythons.
$SUDO apt-get install -y -qq --no-install-recommends curl >/dev/null
"$(dirname "$0")/fetch_old_pythons.sh" "$(cd "$(dirname "$0")/.." && pwd)/.cache/old-pythons"

# py-spy (PyPI), only for benchmarks/diagnose_stacks: diagnose's Python frames side by side with it.
python3 -m pip install -q py-spy >/dev/null 2>&1 || python3 -m pip install -q --break-system-packages py-spy >/dev/null 2>&1 || echo "setup: py-spy not installed (its benchmark rows will say so)"
# nccl fetch: unzip reads wheels, pip downloads them; pack_vendor_libs.sh: xz.
$SUDO apt-get install -y -qq --no-install-recommends unzip python3-pip xz-utils >/dev/null
