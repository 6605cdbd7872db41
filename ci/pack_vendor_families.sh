#!/usr/bin/env bash
# Packs ci/pack_vendor_libs.sh's per-release archives again for the GPU machine in parts of
# whole families: the builds of one minor release (and one CUDA major) share most of their
# bytes, so one xz stream per part with a large dictionary carries a family for little more
# than one build (2.28.7 and 2.28.9: 17.2 MB together, 17.2 MB alone). The zero runs that
# slimming left are made holes first and the tar is sparse, so xz reads only the kept code.
# The releases of --first (every catalog entry's references) go into the first parts.
#   ci/pack_vendor_families.sh VENDOR_PARTS_DIR OUTDIR [--max-part-mb 55] [--first "2.16.5 2.17.1 ..."]
# Writes OUTDIR/gNN/part.tar.xz (each under --max-part-mb, a part over it split in two) and
# OUTDIR/parts.tsv (part, bytes, libraries). ci/h200_catalog.sh carries one part a call
# (VENDOR_AS_IS=1 and the part's folder as VENDOR_PARTS_DIR). Exit 0; 2 usage.
set -euo pipefail
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
src=$1; out=$2; shift 2
max_mb=55; first=""
while [ $# -gt 0 ]; do
  case "$1" in
    --max-part-mb) [ $# -ge 2 ] || usage; max_mb=$2; shift 2 ;;
    --first) [ $# -ge 2 ] || usage; first=$2; shift 2 ;;
    *) usage ;;
  esac
done
[ -d "$src" ] || { echo "$0: $src is not a folder (ci/pack_vendor_libs.sh's output)" >&2; exit 2; }
mkdir -p "$out"; out=$(cd "$out" && pwd)
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
declare -A archive_bytes=()
for a in "$src"/*/*.tar.xz "$src"/*.tar.xz; do
  [ -f "$a" ] || continue
  tar -C "$stage" -xJf "$a"
  archive_bytes[$(basename "$a" .tar.xz)]=$(stat -c %s "$a")
done
for lib in "$stage"/*/lib/libnccl.so.2; do fallocate --dig-holes "$lib"; done
sizes=$(for k in "${!archive_bytes[@]}"; do echo "$k ${archive_bytes[$k]}"; done)
# Groups: the --first releases, then families in release order, each part estimated at the
# largest build of each family it holds plus 15 % of its others.
groups=$(MAX=$((max_mb * 1000000)) FIRST="$first" python3 -c '
import os, re, sys
size = dict((k, int(v)) for k, v in (l.split() for l in sys.stdin if l.strip()))
def fam(e):
    m = re.match(r"nvidia-nccl-(cu\d+)-(\d+)\.(\d+)\.", e); return (m.group(1), int(m.group(3))) if m else (e, 0)
def rel(e):
    m = re.match(r"nvidia-nccl-cu\d+-([0-9.]+(?:\.post\d+)?)-", e); return m.group(1) if m else ""
def est(g):
    f = {}
    for e in g: f.setdefault(fam(e), []).append(size[e])
    return sum(max(v) + 0.15 * (sum(v) - max(v)) for v in f.values())
first = set(os.environ["FIRST"].split())
cap = int(os.environ["MAX"])
def fill(entries, groups):
    for e in entries:
        for g in groups:
            if est(g + [e]) <= cap: g.append(e); break
        else: groups.append([e])
    return groups
order = lambda e: ({"cu12": 0, "cu13": 1, "cu11": 2}.get(fam(e)[0], 3), fam(e)[1], e)
lead = fill(sorted((e for e in size if rel(e) in first), key=order), [])
rest = fill(sorted((e for e in size if rel(e) not in first), key=order), [[]])
for g in lead + [g for g in rest if g]: print(" ".join(g))
' <<< "$sizes")
compress() {   # compress DIR ENTRIES...: one part; split in two when over the limit
  local dir=$1; shift
  mkdir -p "$dir"
  tar -C "$stage" -S -cf - "$@" | xz -T1 --lzma2=preset=2,dict=512MiB > "$dir/part.tar.xz"
  if [ "$(stat -c %s "$dir/part.tar.xz")" -gt $((max_mb * 1000000)) ] && [ $# -gt 1 ]; then
    local half=$(( $# / 2 )); rm -rf "$dir"
    compress "${dir}a" "${@:1:$half}"; compress "${dir}b" "${@:$((half + 1))}"
    return
  fi
  printf '%s\t%s\t%s\n' "$(basename "$dir")" "$(stat -c %s "$dir/part.tar.xz")" "$*" >> "$out/parts.tsv"
}
printf 'part\tbytes\tlibraries\n' > "$out/parts.tsv"
n=0
while read -r entries; do
  n=$((n + 1)); compress "$out/g$(printf %02d $n)" $entries &
  [ $((n % 2)) -eq 0 ] && wait
done <<< "$groups"
wait
column -t -s $'\t' "$out/parts.tsv" | cut -c1-160
