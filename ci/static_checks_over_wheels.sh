#!/usr/bin/env bash
# Each catalog entry's check of the library's bytes (`hangbench catalog check`) over every
# NVIDIA NCCL wheel pip lists (nvidia-nccl-cu11, -cu12, -cu13), on a CPU machine: one wheel
# at a time is downloaded, its libnccl.so.2 read, and the wheel removed.
#   ci/static_checks_over_wheels.sh OUT_DIR [HANGBENCH]
# Writes OUT_DIR/checks.jsonl (one line per wheel: package, release, wheel name and SHA-256,
# and what `catalog check --json` said), OUT_DIR/machine.txt (commit, date, host facts) and
# OUT_DIR/README.md (ci/static_checks_table.py). Resumes: a wheel already in checks.jsonl
# is skipped. Exit 0 done; 2 usage; 3 pip or the check failed (the line says which wheel).
set -euo pipefail
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 && $1 != -* ]] || usage
out=$1
repo=$(cd "$(dirname "$0")/.." && pwd)
hangbench=${2:-$repo/build/harness/hangbench}
[[ -x $hangbench ]] || { echo "static_checks_over_wheels: $hangbench is not built (cmake --build build)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  echo "hangbench $("$hangbench" --version)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(uname -m), $(nproc) cores, no GPU (the checks read bytes; nothing is loaded)"
  echo "pip: $(pip --version | cut -d' ' -f1-2)"
} > "$out/machine.txt"
. "$repo/ci/lib/each_nvidia_wheel.sh"

# check_wheel PACKAGE VERSION WHEEL LIB: one line of checks.jsonl.
check_wheel() {
  local package=$1 version=$2 wheel=$3 lib=$4 rc=0
  # From inside the wheel's folder: the line names the library by its path in the wheel.
  (cd "$work" && "$hangbench" catalog check --json "${lib#"$work"/}") > "$work/check.json" || rc=$?
  if [[ $rc -gt 1 ]]; then echo "static_checks_over_wheels: catalog check of $wheel exited $rc" >&2; return 3; fi
  python3 - "$package" "$version" "$wheel" "$work" >> "$out/checks.jsonl" <<'PY' || return 3
import hashlib, json, sys
package, version, wheel, work = sys.argv[1:]
checked = json.load(open(f"{work}/check.json"))[0]
sha = hashlib.sha256(open(f"{work}/{wheel}", "rb").read()).hexdigest()
print(json.dumps({"package": package, "release": version, "wheel": wheel, "wheel_sha256": sha,
                  "library": checked["library"], "library_sha256": checked["sha256"],
                  "version": checked["version"], "checks": checked["checks"]}))
PY
  echo "$package $version: done" >&2
}
each_nvidia_wheel static_checks_over_wheels "$out" "$out/checks.jsonl" "$work" check_wheel || exit 3
python3 "$repo/ci/static_checks_table.py" "$out" > "$out/README.md"
