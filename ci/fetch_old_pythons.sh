#!/usr/bin/env bash
# Downloads CPython 3.9 (with its headers) as Debian packages and unpacks them under
# DIR, for diagnose's Python-frame tests of that version:
#   DIR/3.9/usr/bin/python3.9    (Debian bullseye, 3.9.2)
# Run it with PYTHONHOME=DIR/3.9/usr. The archive is the one apt is configured with
# here, read from apt at run time (apt-get indextargets): no host is named in this
# script. Every file is pinned by name and SHA-256; a download that does not match
# stops the script.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(mkdir -p "$1" && cd "$1" && pwd)

# The Debian archive this machine's apt uses, as apt itself resolves its sources
# (sources.list, sources.list.d, one-line or deb822): the repository whose release is
# labelled "Debian" (not its security or a third-party archive). No other archive is used.
archive=$(apt-get indextargets --format '$(REPO_URI)' 'Label: Debian' 'Identifier: Packages' 2>/dev/null | head -n 1)
[ -n "$archive" ] || { echo "fetch_old_pythons: apt has no Debian archive configured (apt-get update first?)" >&2; exit 3; }
pool=${archive%/}/pool/main/p/python3.9
# version  file  sha256
packages=(
  "3.9 python3.9-minimal_3.9.2-1_amd64.deb 5d6003c5c20223a2547ac4976e09a9ec778dbe351507a6292bef3b60df5f4aa7"
  "3.9 libpython3.9-minimal_3.9.2-1_amd64.deb 594283526d67e03e3c4e96534f6bfe5da1bf41da5d49360553c9b79fbf08c4ab"
  "3.9 libpython3.9-stdlib_3.9.2-1_amd64.deb 32ac64d959ac2dbc5bb289532fc9834dab8f671b5455695a3a9315aad973c65b"
  "3.9 libpython3.9-dev_3.9.2-1_amd64.deb 3a2172f6d926cf2e98a1a2e24f5aecdc3bcd56fa7c6d9f7a3fc4892f67377d5f"
)

mkdir -p "$dir/debs"
for entry in "${packages[@]}"; do
  read -r version file sha <<<"$entry"
  url="$pool/$file"
  deb="$dir/debs/$file"
  if ! echo "$sha  $deb" | sha256sum -c --status 2>/dev/null; then
    curl -sSfL --retry 3 -o "$deb.part" "$url"
    echo "$sha  $deb.part" | sha256sum -c --quiet || { echo "fetch_old_pythons: $url is not the pinned file" >&2; exit 1; }
    mv "$deb.part" "$deb"
  fi
  dpkg-deb -x "$deb" "$dir/$version"
done

# Each must start and import what the test scripts use.
for version in 3.9; do
  PYTHONHOME="$dir/$version/usr" "$dir/$version/usr/bin/python$version" -c 'import json, socket, threading' \
    || { echo "fetch_old_pythons: python$version in $dir/$version does not run" >&2; exit 1; }
done
echo "fetch_old_pythons: python3.9 under $dir"
