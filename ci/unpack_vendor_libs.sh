#!/usr/bin/env bash
# The GPU side of ci/pack_vendor_libs.sh: restores the vendor entries of one or
# more part folders into CACHE/vendor/ (their manifests say "slimmed_for_transport"
# and keep the original library's SHA-256), and checks each library against the
# SHA-256 its manifest names. Entries already there are replaced.
#   ci/unpack_vendor_libs.sh CACHE PART_DIR...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 CACHE PART_DIR..." >&2; exit 2; }
cache=$1; shift
mkdir -p "$cache/vendor"
restored=0
for part in "$@"; do
  [ -d "$part" ] || { echo "$0: $part is not a folder" >&2; exit 2; }
  for archive in "$part"/*.tar.xz; do
    [ -e "$archive" ] || continue
    name=$(basename "$archive" .tar.xz)
    tmp=$(mktemp -d "$cache/vendor/.unpack-XXXXXX")
    tar -C "$tmp" -xJf "$archive"
    [ -f "$tmp/$name/manifest.json" ] && [ -f "$tmp/$name/lib/libnccl.so.2" ] \
      || { echo "$0: $archive does not hold $name/{manifest.json,lib/libnccl.so.2}" >&2; rm -rf "$tmp"; exit 3; }
    want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["library_sha256"])' "$tmp/$name/manifest.json")
    got=$(sha256sum "$tmp/$name/lib/libnccl.so.2" | cut -d' ' -f1)
    [ "$want" = "$got" ] || { echo "$0: $name: library SHA-256 $got, manifest says $want" >&2; rm -rf "$tmp"; exit 3; }
    rm -rf "$cache/vendor/$name"
    mv "$tmp/$name" "$cache/vendor/$name"
    rmdir "$tmp"
    restored=$((restored + 1))
  done
done
echo "restored $restored vendor entries into $cache/vendor"
