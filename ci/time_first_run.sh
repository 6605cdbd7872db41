#!/usr/bin/env bash
# Times the README's two commands as a new user meets them: a fresh clone of this
# checkout's HEAD in a temporary folder, no compiler cache, the first command
# (set-up, configure, build, `hangbench run`) and then the second (`bash ci/test.sh`).
# Writes OUT/timing.json (each step's seconds and exit code, the machine, its load,
# the commit) and OUT/ninja-first.tsv, OUT/ninja-second.tsv (every file ninja built,
# its seconds, slowest first: where the compile time goes).
#   ci/time_first_run.sh [OUT]     (default OUT: results/first-run-<UTC date>)
#   FIRST_ONLY=1 ci/time_first_run.sh OUT    the first command alone
# Run it on an otherwise idle machine: other builds make every figure pessimistic.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results/first-run-$(date -u +%Y-%m-%d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q --no-hardlinks "$root" "$work/hangbench"
cd "$work/hangbench"
export CCACHE_DISABLE=1  # a fresh clone on a new machine has no compiler cache

steps=()
# step NAME COMMAND...: runs it, records its seconds and exit code; stops at a failure.
step() {
  local name=$1; shift
  local start end rc=0
  start=$(date +%s.%N)
  "$@" >"$work/$name.log" 2>&1 || rc=$?  # logs hold this machine's paths: not kept
  end=$(date +%s.%N)
  steps+=("$(printf '{"step": "%s", "seconds": %.1f, "exit_code": %d}' "$name" "$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')" "$rc")")
  echo "time_first_run: $name: $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%d", b - a}') s, exit $rc" >&2
  # hangbench run exits 1 when an expectation is contradicted: a result, not a failure of the set-up.
  [ "$rc" -eq 0 ] || { [ "$name" = first-run ] && [ "$rc" -eq 1 ]; } || { tail -n 30 "$work/$name.log" >&2; finish 1; }
}

# ninja's log (start and end in ms, then the output file) from line FROM on →
# "seconds<TAB>file", slowest first. ninja appends to it, so a build's lines follow the last's.
ninja_times() {
  tail -n +"$1" build/.ninja_log | awk -F'\t' '!/^#/ {printf "%.2f\t%s\n", ($2 - $1) / 1000, $4}' | sort -rn
}

finish() {
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  {
    printf '{\n  "schema": "hangbench.first-run/1",\n'
    printf '  "date": "%s",\n  "commit": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(git rev-parse HEAD)"
    printf '  "machine": {"cpus": %d, "cpu": "%s", "memory_gib": %d, "kernel": "%s"},\n' "$(nproc)" \
      "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)" \
      "$(awk '/MemTotal/ {print int($2 / 1048576)}' /proc/meminfo)" "$(uname -sr)"
    printf '  "load_before": "%s",\n  "load_after": "%s",\n  "ccache": "disabled",\n' "$load_before" "$load_after"
    printf '  "targets_first": %s,\n  "targets_second": %s,\n' "${targets_first:-null}" "${targets_second:-null}"
    printf '  "steps": [\n    %s\n  ]\n}\n' "$(IFS=$'\n'; echo "${steps[*]}" | paste -sd, | sed 's/},{/},\n    {/g')"
  } >"$out/timing.json"
  echo "time_first_run: wrote $out/timing.json" >&2
  exit "${1:-0}"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# The README's first command, a step at a time.
step setup bash ci/setup.sh
step configure cmake --preset default
step build cmake --build --preset default
ninja_times 1 >"$out/ninja-first.tsv"
targets_first=$(wc -l <"$out/ninja-first.tsv")
first_lines=$(wc -l <build/.ninja_log)
step first-run build/harness/hangbench run --progress plain
# FIRST_ONLY=1: the first command alone (the second takes 15 minutes more).
[ "${FIRST_ONLY:-0}" = 1 ] && finish 0
# The README's second command, whole: what it builds is what the first did not.
step test bash ci/test.sh
ninja_times $((first_lines + 1)) >"$out/ninja-second.tsv"
targets_second=$(wc -l <"$out/ninja-second.tsv")
finish 0
