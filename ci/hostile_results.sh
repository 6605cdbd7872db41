#!/usr/bin/env bash
# Runs the hostile set (tests/hostile/hostile.sh) on a built tree and writes its table,
# with its totals and provenance (date, machine, the commit that ran), into results/.
# Run it from a clean, committed tree: a dirty one would not say what ran.
#
# Usage: ci/hostile_results.sh [BUILD_DIR] [SET_NAME]
#   BUILD_DIR  the build tree with harness/hangbench (default: build)
#   SET_NAME   the folder under results/ (default: cpu-<today>-hostile)
# Environment: HOSTILE_MACHINE, the machine in words (default: "CPU machine, N cores").
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
set_name=${2:-cpu-$(date -u +%Y-%m-%d)-hostile}
case "$build" in -*) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;; esac
hb="$build/harness/hangbench"
[ -x "$hb" ] || { echo "hostile_results.sh: no $hb; build the hangbench target first" >&2; exit 2; }
commit=$(git -C "$root" describe --always --abbrev=12 --dirty 2>/dev/null || echo unknown)
case "$commit" in *-dirty) echo "hostile_results.sh: the tree is dirty ($commit); commit first" >&2; exit 2 ;; esac
machine=${HOSTILE_MACHINE:-"CPU machine, $(nproc) cores"}
out="$root/results/$set_name"
mkdir -p "$out"
export HOSTILE_PROVENANCE="Ran $(date -u +%Y-%m-%dT%H:%M:%SZ) on a $machine ($(uname -sr), as $(id -un)), hangbench at commit $commit, by \`ci/hostile_results.sh\`; regenerate with it, never by hand."
bash "$root/tests/hostile/hostile.sh" "$hb" --table "$out/hostile.md"
rc=$?
echo "hostile_results.sh: wrote $out/hostile.md (suite exit $rc)"
exit $rc
