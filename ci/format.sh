#!/usr/bin/env bash
# Formats the project's C++ and CUDA sources with clang-format and the
# repository's .clang-format (Google style, 120 columns).
#   ci/format.sh           rewrite the files in place
#   ci/format.sh --check   list the files that differ; exit 1 if any does
set -euo pipefail
cd "$(dirname "$0")/.."
# The files were formatted by Debian 12's clang-format 14; other versions break lines differently.
format=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$format" ] || { echo "format.sh: clang-format-14 not found (apt-get install clang-format-14)" >&2; exit 3; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cc' | grep -v -e '^third_party/' -e '^results/' -e '^tests/fixtures/')
if [ "${1:-}" = --check ]; then
  differ=0
  for f in "${files[@]}"; do
    "$format" --style=file "$f" | cmp -s - "$f" || { echo "$f"; differ=1; }
  done
  exit $differ
fi
"$format" --style=file -i "${files[@]}"
