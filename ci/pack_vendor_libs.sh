#!/usr/bin/env bash
# Packs every vendor entry of an NCCL cache (`hangbench nccl fetch`) for the GPU
# machine: each library slimmed for transport (`hangbench nccl slim --entry-out`:
# only sm_90 code kept, size and host code unchanged, the original's SHA-256 in
# the manifest), one xz archive per entry, the archives spread over part folders
# of at most --max-part-mib each, so that one part travels in one device call
# (the device tool carries up to 64 MiB of ignored paths per call).
#   ci/pack_vendor_libs.sh CACHE OUTDIR [--max-part-mib 60] [--keep-sm 90]
# Writes OUTDIR/part-NN/<entry>.tar.xz and OUTDIR/parts.tsv (part, archive,
# bytes, package, version, NCCL version). Env: HANGBENCH (default
# build/harness/hangbench), XZ_OPT (default -6 -T2).
# The GPU side: ci/unpack_vendor_libs.sh CACHE OUTDIR/part-NN...
set -euo pipefail
usage() { echo "usage: $0 CACHE OUTDIR [--max-part-mib N] [--keep-sm SM]" >&2; exit 2; }
[ $# -ge 2 ] || usage
cache=$1; outdir=$2; shift 2
max_mib=60; keep_sm=90
while [ $# -gt 0 ]; do
  case "$1" in
    --max-part-mib) [ $# -ge 2 ] || usage; max_mib=$2; shift 2 ;;
    --keep-sm) [ $# -ge 2 ] || usage; keep_sm=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ "$max_mib" =~ ^[0-9]+$ && "$max_mib" -gt 0 ]] || { echo "$0: --max-part-mib must be a positive number" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
hb=${HANGBENCH:-$repo/build/harness/hangbench}
[ -x "$hb" ] || { echo "$0: no hangbench at $hb (build it, or set HANGBENCH)" >&2; exit 2; }
[ -d "$cache/vendor" ] || { echo "$0: $cache/vendor does not exist (run hangbench nccl fetch first)" >&2; exit 2; }
export XZ_OPT=${XZ_OPT:--6 -T2}
max_bytes=$((max_mib * 1024 * 1024))
mkdir -p "$outdir"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/archives"

field() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print("" if v is None else v)' "$1" "$2"; }

for entry in "$cache"/vendor/*/; do
  entry=${entry%/}; name=$(basename "$entry")
  [ -f "$entry/manifest.json" ] && [ -f "$entry/lib/libnccl.so.2" ] || { echo "skip $name: no manifest or library" >&2; continue; }
  stage="$work/stage/$name"
  if [ -n "$(field "$entry/manifest.json" slimmed_for_transport)" ]; then
    mkdir -p "$work/stage"; cp -a "$entry" "$stage"        # slimmed already: its manifest keeps the original's hash
  else
    "$hb" nccl slim "$entry/lib/libnccl.so.2" --entry-out "$stage" --keep-sm "$keep_sm" >/dev/null
  fi
  tar -C "$work/stage" -cJf "$work/archives/$name.tar.xz" "$name"
  rm -rf "$stage"
  echo "packed $name: $(stat -c %s "$work/archives/$name.tar.xz") bytes" >&2
done

# First fit, largest archive first.
declare -a part_bytes=()
printf 'part\tarchive\tbytes\tpackage\tversion\tnccl\n' > "$outdir/parts.tsv"
while read -r bytes archive; do
  [ -n "$archive" ] || continue
  if [ "$bytes" -gt "$max_bytes" ]; then
    echo "$0: $(basename "$archive") is $bytes bytes, more than a part of $max_mib MiB" >&2; exit 1
  fi
  part=-1
  for i in "${!part_bytes[@]}"; do
    if [ $((part_bytes[i] + bytes)) -le "$max_bytes" ]; then part=$i; break; fi
  done
  if [ "$part" -lt 0 ]; then part=${#part_bytes[@]}; part_bytes+=(0); fi
  part_bytes[part]=$((part_bytes[part] + bytes))
  dir=$(printf '%s/part-%02d' "$outdir" $((part + 1))); mkdir -p "$dir"
  mv "$archive" "$dir/"
  name=$(basename "$archive" .tar.xz)
  manifest="$cache/vendor/$name/manifest.json"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$dir")" "$name.tar.xz" "$bytes" "$(field "$manifest" package)" \
    "$(field "$manifest" package_version)" "$(field "$manifest" nccl_version)" >> "$outdir/parts.tsv"
done < <(for a in "$work"/archives/*.tar.xz; do [ -e "$a" ] && echo "$(stat -c %s "$a") $a"; done | sort -rn)

for i in "${!part_bytes[@]}"; do
  printf 'part-%02d %d bytes (%d MiB max)\n' $((i + 1)) "${part_bytes[i]}" "$max_mib"
done
