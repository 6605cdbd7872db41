#!/usr/bin/env bash
# Replaces the machines' working folders in result files with the placeholders
# results/README.md names: the repository copy becomes <repo>, the run's output
# folder <out>. Text files are edited in place, .xz files through xz, .tar.xz
# archives member by member; binary
# files (SQLite, pickles) are refused, since a length-prefixed string cannot be
# edited safely: leave them out of results/ or keep them as they are.
#   ci/results_placeholders.sh --repo DIR --out DIR FILE...
set -euo pipefail
usage() { echo "usage: $0 --repo DIR --out DIR FILE..." >&2; exit 2; }
repo=""; out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) [ $# -ge 2 ] || usage; repo=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --) shift; break ;;
    -*) usage ;;
    *) break ;;
  esac
done
[ -n "$repo" ] && [ -n "$out" ] && [ $# -gt 0 ] || usage
# sed with | as delimiter: the folders must not hold one.
case "$repo$out" in *'|'*) echo "$0: a folder with '|' in its name" >&2; exit 2 ;; esac
script="s|$repo|<repo>|g; s|$out|<out>|g"
# An archive is unpacked, its members edited one by one and packed again: sed over the
# tar stream itself would change each member's length but not its header (that
# truncated every member of an archive once; ci/salvage_rewritten_tar.py).
edit_archive() {
  local f=$1 dir; dir=$(mktemp -d)
  tar -C "$dir" -xJf "$f"
  while IFS= read -r -d '' m; do
    if grep -Iq . "$m"; then sed -i "$script" "$m"
    elif grep -aq -e "$repo" -e "$out" "$m"; then echo "$0: $f: member ${m#"$dir"/} is binary and names a folder; left as it is" >&2; rm -rf "$dir"; exit 3
    fi
  done < <(find "$dir" -type f -print0)
  tar -C "$dir" --sort=name -cJf "$f.tmp" . && mv "$f.tmp" "$f"
  rm -rf "$dir"
}
for f in "$@"; do
  case "$f" in
    *.tar.xz) edit_archive "$f" ;;
    *.xz) tmp=$(mktemp); xz -dc "$f" | sed "$script" > "$tmp"; xz -9 -c "$tmp" > "$f"; rm -f "$tmp" ;;
    *) if grep -Iq . "$f"; then sed -i "$script" "$f"; else echo "$0: $f is binary; left as it is" >&2; exit 3; fi ;;
  esac
done
