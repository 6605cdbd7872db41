#!/usr/bin/env bash
# Downloads CPython 3.9 and 3.10 (with their headers) as Debian/Ubuntu packages and
# unpacks them under DIR, for diagnose's Python-frame tests of those versions:
#   DIR/3.9/usr/bin/python3.9    (Debian bullseye, 3.9.2)
#   DIR/3.10/usr/bin/python3.10  (Ubuntu jammy's release, 3.10.4; never leaves the pool)
# Run them with PYTHONHOME=DIR/3.X/usr. Every file is pinned by name and SHA-256;
# a download that does not match stops the script.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(mkdir -p "$1" && cd "$1" && pwd)

debian=http://deb.debian.org/debian/pool/main/p/python3.9
ubuntu=http://archive.ubuntu.com/ubuntu/pool/main/p/python3.10
# version  url  sha256
packages=(
  "3.9 $debian/python3.9-minimal_3.9.2-1_amd64.deb 5d6003c5c20223a2547ac4976e09a9ec778dbe351507a6292bef3b60df5f4aa7"
  "3.9 $debian/libpython3.9-minimal_3.9.2-1_amd64.deb 594283526d67e03e3c4e96534f6bfe5da1bf41da5d49360553c9b79fbf08c4ab"
  "3.9 $debian/libpython3.9-stdlib_3.9.2-1_amd64.deb 32ac64d959ac2dbc5bb289532fc9834dab8f671b5455695a3a9315aad973c65b"
  "3.9 $debian/libpython3.9-dev_3.9.2-1_amd64.deb 3a2172f6d926cf2e98a1a2e24f5aecdc3bcd56fa7c6d9f7a3fc4892f67377d5f"
  "3.10 $ubuntu/python3.10-minimal_3.10.4-3_amd64.deb beb041e53740a7720e4289f0caf3e418469951cd66bb5efbefb298e6b016a187"
  "3.10 $ubuntu/libpython3.10-minimal_3.10.4-3_amd64.deb e83f695339a6b6b691ccfe11e50a54693606371d294351bdeaaedf2fcc1ba09a"
  "3.10 $ubuntu/libpython3.10-stdlib_3.10.4-3_amd64.deb 9f631dd658cf253c4a0016d17072056218d8f839383fb41c28fbba1f860364d4"
  "3.10 $ubuntu/libpython3.10-dev_3.10.4-3_amd64.deb 89246f12cdfb1fac7675bc94d5cc8b9c72320f152e855197668305c73c8588ec"
)

mkdir -p "$dir/debs"
for entry in "${packages[@]}"; do
  read -r version url sha <<<"$entry"
  deb="$dir/debs/${url##*/}"
  if ! echo "$sha  $deb" | sha256sum -c --status 2>/dev/null; then
    curl -sSfL --retry 3 -o "$deb.part" "$url"
    echo "$sha  $deb.part" | sha256sum -c --quiet || { echo "fetch_old_pythons: $url is not the pinned file" >&2; exit 1; }
    mv "$deb.part" "$deb"
  fi
  dpkg-deb -x "$deb" "$dir/$version"
done

# Each must start and import what the test scripts use.
for version in 3.9 3.10; do
  PYTHONHOME="$dir/$version/usr" "$dir/$version/usr/bin/python$version" -c 'import json, socket, threading' \
    || { echo "fetch_old_pythons: python$version in $dir/$version does not run" >&2; exit 1; }
done
echo "fetch_old_pythons: python3.9 and python3.10 under $dir"
