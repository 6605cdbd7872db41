#!/usr/bin/env bash
# Downloads CPython 3.9 and 3.13 (with their headers) as Debian packages and unpacks them
# under DIR, for diagnose's Python-frame tests of those versions and for
# ci/gen_python_layouts.py (their internal headers):
#   DIR/3.9/usr/bin/python3.9     (Debian bullseye, 3.9.2); run it with PYTHONHOME=DIR/3.9/usr
#   DIR/3.13/python3.13           (Debian trixie, 3.13.5): a launcher that runs
#                                 DIR/3.13/usr/bin/python3.13 under trixie's own loader and libc
#                                 (glibc 2.41, unpacked beside it: Debian 12's 2.36 is older
#                                 than the 2.38 it needs); it sets PYTHONHOME itself
#   DIR/3.X/usr/include/python3.X their headers, internal/ included
# The archive is the one apt is configured with
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
pool=${archive%/}/pool/main
# version  pool folder  file  sha256. The trixie files are those its Packages index names
# (Filename, SHA256). Debian drops a file from the pool a while after a newer revision
# replaces it in trixie; pin that revision the same way then.
packages=(
  "3.9 p/python3.9 python3.9-minimal_3.9.2-1_amd64.deb 5d6003c5c20223a2547ac4976e09a9ec778dbe351507a6292bef3b60df5f4aa7"
  "3.9 p/python3.9 libpython3.9-minimal_3.9.2-1_amd64.deb 594283526d67e03e3c4e96534f6bfe5da1bf41da5d49360553c9b79fbf08c4ab"
  "3.9 p/python3.9 libpython3.9-stdlib_3.9.2-1_amd64.deb 32ac64d959ac2dbc5bb289532fc9834dab8f671b5455695a3a9315aad973c65b"
  "3.9 p/python3.9 libpython3.9-dev_3.9.2-1_amd64.deb 3a2172f6d926cf2e98a1a2e24f5aecdc3bcd56fa7c6d9f7a3fc4892f67377d5f"
  "3.13 p/python3.13 python3.13-minimal_3.13.5-2+deb13u5_amd64.deb c1fda9e7b1bf15b2fa75a238d8a8710e142fe14c722fc650c5fc614f078c9073"
  "3.13 p/python3.13 libpython3.13-minimal_3.13.5-2+deb13u5_amd64.deb a4aa6a9a8c77f87bfe545e1d14ec42c001d189ace90e3aa75deec882b39dee49"
  "3.13 p/python3.13 libpython3.13-stdlib_3.13.5-2+deb13u5_amd64.deb db161322a3481d2c0c3b9a3b9a03c3ab0e2b1718f54b88755fb4a3f939165b84"
  "3.13 p/python3.13 libpython3.13-dev_3.13.5-2+deb13u5_amd64.deb 4bd7b17ffbeb367ce1fef8b6ff02536a25f29fc07372d1bdd3ed1e1faa5b9409"
  "3.13 g/glibc libc6_2.41-12+deb13u5_amd64.deb b59b0625cd1a791375d40dab23a4d5d3d0641e3d0a773501becdc3725b7f99cf"
)

mkdir -p "$dir/debs"
for entry in "${packages[@]}"; do
  read -r version folder file sha <<<"$entry"
  url="$pool/$folder/$file"
  deb="$dir/debs/$file"
  if ! echo "$sha  $deb" | sha256sum -c --status 2>/dev/null; then
    curl -sSfL --retry 3 -o "$deb.part" "$url"
    echo "$sha  $deb.part" | sha256sum -c --quiet || { echo "fetch_old_pythons: $url is not the pinned file" >&2; exit 1; }
    mv "$deb.part" "$deb"
  fi
  dpkg-deb -x "$deb" "$dir/$version"
done

# 3.13 needs glibc 2.38: its launcher runs it under the loader and libc unpacked beside it
# (/proc/PID/maps still shows usr/bin/python3.13, where diagnose finds _PyRuntime).
cat >"$dir/3.13/python3.13" <<'LAUNCHER'
#!/bin/sh
# CPython 3.13 from Debian trixie under trixie's loader and libc (ci/fetch_old_pythons.sh).
here=$(dirname "$(readlink -f "$0")")
export PYTHONHOME="$here/usr"
exec "$here/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$here/usr/lib/x86_64-linux-gnu" \
  "$here/usr/bin/python3.13" "$@"
LAUNCHER
chmod +x "$dir/3.13/python3.13"

# Each must start and import what the test scripts use.
PYTHONHOME="$dir/3.9/usr" "$dir/3.9/usr/bin/python3.9" -c 'import json, socket, threading' \
  || { echo "fetch_old_pythons: python3.9 in $dir/3.9 does not run" >&2; exit 1; }
"$dir/3.13/python3.13" -c 'import json, socket, threading' \
  || { echo "fetch_old_pythons: python3.13 in $dir/3.13 does not run" >&2; exit 1; }
echo "fetch_old_pythons: python3.9 and python3.13 under $dir"
