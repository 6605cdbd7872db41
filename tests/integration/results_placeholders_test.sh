#!/usr/bin/env bash
# ci/results_placeholders.sh on a .tar.xz: every member names <repo> instead of the
# folder, keeps its whole content (a longer or shorter path changes its length), and
# the archive still opens; a binary member that names the folder is refused (exit 3).
set -euo pipefail
root=${1:?repository root}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree/logs"
for i in $(seq 50); do echo "line $i of /machine/repo-folder/workloads/x.py and more" >> "$work/tree/logs/a.txt"; done
printf 'tail without the folder\n' > "$work/tree/b.txt"
tar -C "$work/tree" -cJf "$work/archive.tar.xz" .
bash "$root/ci/results_placeholders.sh" --repo /machine/repo-folder --out /nowhere "$work/archive.tar.xz"
mkdir "$work/out"; tar -C "$work/out" -xJf "$work/archive.tar.xz"
[ "$(grep -c '<repo>/workloads/x.py and more' "$work/out/logs/a.txt")" = 50 ] || { echo "FAIL: a.txt lost lines or kept the folder"; exit 1; }
grep -q /machine/repo-folder "$work/out/logs/a.txt" && { echo "FAIL: the folder is still named"; exit 1; }
[ "$(cat "$work/out/b.txt")" = "tail without the folder" ] || { echo "FAIL: b.txt changed"; exit 1; }
# A binary member naming the folder: refused, the archive left as it was.
printf '\0\1/machine/repo-folder\0' > "$work/tree/c.bin"
tar -C "$work/tree" -cJf "$work/binary.tar.xz" .
before=$(sha256sum < "$work/binary.tar.xz")
set +e; bash "$root/ci/results_placeholders.sh" --repo /machine/repo-folder --out /nowhere "$work/binary.tar.xz" 2>/dev/null; rc=$?; set -e
[ "$rc" = 3 ] || { echo "FAIL: a binary member gave exit $rc, not 3"; exit 1; }
[ "$(sha256sum < "$work/binary.tar.xz")" = "$before" ] || { echo "FAIL: the refused archive changed"; exit 1; }
echo "PASS"
