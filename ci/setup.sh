#!/usr/bin/env bash
# Installs what hangbench needs to build and test on Debian 12 (as root, or with sudo).
# Every library is a Debian package; nothing is downloaded from elsewhere.
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
  python3-dev libelf-dev libdw-dev binutils procps iproute2 gdb >/dev/null
# nccl fetch: unzip reads wheels, pip downloads them; pack_vendor_libs.sh: xz.
$SUDO apt-get install -y -qq --no-install-recommends unzip python3-pip xz-utils >/dev/null
