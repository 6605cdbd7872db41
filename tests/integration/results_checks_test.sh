#!/usr/bin/env bash
# ci/check_results_commits.py and ci/check_results_archives.py, the two checks of
# results/ (issue 41), on folders made to break them: they must refuse a commit
# outside HEAD's history, one of no repository, "unknown", a shallow clone that lacks
# the commit and a folder with no .git, and an archive whose tar headers no longer
# match its data (as results/h200-2026-12-04-many-ranks/ranks4/phases.tar.xz did
# once, its paths rewritten after tar wrote it) or an xz stream cut short; and pass
# what is sound.
set -uo pipefail
root=${1:?usage: results_checks_test.sh SOURCE_DIR}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
expect() {  # expect RC PATTERN -- COMMAND...: the command exits RC and prints PATTERN
  local want=$1 pattern=$2 out rc; shift 3
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL: $* exited $rc (want $want) and printed (want '$pattern'):"; echo "$out"; failed=1
  else
    echo "ok: $want '$pattern' from ${*: -2}"
  fi
}
report() {  # report DIR COMMIT: a run report recording COMMIT
  mkdir -p "$1" && printf '{"provenance": {"hangbench_commit": "%s"}}\n' "$2" > "$1/report.json"
}

# A repository with a side branch that HEAD does not descend from.
repo=$work/repo
git init -q "$repo" && git -C "$repo" config user.email t@example.invalid && git -C "$repo" config user.name t
git -C "$repo" commit -q --allow-empty -m one && first=$(git -C "$repo" rev-parse --short=12 HEAD)
git -C "$repo" checkout -q -b side && git -C "$repo" commit -q --allow-empty -m side
side=$(git -C "$repo" rev-parse --short=12 HEAD)
git -C "$repo" checkout -q - && git -C "$repo" commit -q --allow-empty -m two
head=$(git -C "$repo" rev-parse --short=12 HEAD)
commits="$root/ci/check_results_commits.py"

report "$work/good/set-a/run" "$head"
report "$work/good/set-b" "$first-dirty+diff.0123456789ab"
mkdir -p "$work/good/set-c/logs" && printf 'NVIDIA H100\nhangbench 0.1.0 (%s)\n' "$first" > "$work/good/set-c/logs/machine.txt"
expect 0 "3 recorded commit(s) of 3 set(s) found in HEAD's history" -- "$python" "$commits" "$work/good" "$repo"
report "$work/legacy/set" "$first-dirty"
expect 0 "record a bare '-dirty'" -- "$python" "$commits" "$work/legacy" "$repo"

report "$work/side/set" "$side"
expect 1 "set/: \`$side\` (1 file, e.g. set/report.json): a commit, but not in HEAD's history" -- "$python" "$commits" "$work/side" "$repo"
report "$work/none/set" "0123456789ab"
expect 1 "no such commit in this repository" -- "$python" "$commits" "$work/none" "$repo"
report "$work/unknown/set" "unknown"
expect 1 "set/: \`unknown\` (1 file, e.g. set/report.json): not a commit" -- "$python" "$commits" "$work/unknown" "$repo"
mkdir -p "$work/machine/set" && printf 'hangbench 0.1.0 (%s)\n' "$side" > "$work/machine/set/machine.txt"
expect 1 "e.g. set/machine.txt): a commit, but not in HEAD's history" -- "$python" "$commits" "$work/machine" "$repo"
mkdir -p "$work/xz/set" && printf '{"provenance": {"hangbench_commit": "%s"}}\n' "$side" | xz > "$work/xz/set/report.json.xz"
expect 1 "e.g. set/report.json.xz): a commit, but not in HEAD's history" -- "$python" "$commits" "$work/xz" "$repo"

git clone -q --depth 1 "file://$repo" "$work/shallow" 2>/dev/null
report "$work/old/set" "$first"
expect 1 "the clone is shallow" -- "$python" "$commits" "$work/old" "$work/shallow"
mkdir -p "$work/nogit"
expect 1 "is not a git checkout" -- env GIT_CEILING_DIRECTORIES="$work" "$python" "$commits" "$work/good" "$work/nogit"

# Archives: one sound, one rewritten after tar wrote it (a path in a member made
# shorter, the header's size left as it was), one xz stream cut short.
archives="$root/ci/check_results_archives.py"
mkdir -p "$work/arch/set/run/a" "$work/arch/set/run/b"
for m in a b; do
  for i in $(seq 40); do echo "{\"metric\":\"nccl_path\",\"value\":\"/a/long/working/folder/lib/libnccl.so.2\",\"i\":$i}"; done \
    > "$work/arch/set/run/$m/phases.jsonl"
done
tar -C "$work/arch/set/run" -cJf "$work/arch/set/sound.tar.xz" a b
tar -C "$work/arch/set/run" -cf - a b | sed 's|/a/long/working/folder|<out>|g' | xz > "$work/arch/set/rewritten.tar.xz"
xz -k "$work/arch/set/run/a/phases.jsonl"
head -c 100 "$work/arch/set/run/a/phases.jsonl.xz" > "$work/arch/set/cut.json.xz"
expect 1 "BROKEN: 2:" -- "$python" "$archives" "$work/arch"
expect 1 "set/rewritten.tar.xz: tar exits 2" -- "$python" "$archives" "$work/arch"
expect 1 "set/cut.json.xz: does not decompress" -- "$python" "$archives" "$work/arch"
rm "$work/arch/set/rewritten.tar.xz" "$work/arch/set/cut.json.xz"
expect 0 "2 compressed file(s)" -- "$python" "$archives" "$work/arch"

[ "$failed" -eq 0 ] && echo "PASS: the results checks refuse what they must"
exit "$failed"
