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
touch "$out/checks.jsonl"
for cuda in 11 12 13; do
  package=nvidia-nccl-cu$cuda
  versions=$(pip index versions "$package" 2>/dev/null | sed -n 's/^Available versions: //p' | tr -d ',')
  [[ -n $versions ]] || { echo "static_checks_over_wheels: pip lists no versions of $package" >&2; exit 3; }
  echo "$package: $versions" >> "$out/machine.txt"
  for version in $versions; do
    if grep -q "\"package\": \"$package\", \"release\": \"$version\"" "$out/checks.jsonl"; then continue; fi
    rm -rf "$work"/*
    if ! pip download --no-deps --quiet \
        "$package==$version" -d "$work" >/dev/null 2>"$work/pip.err"; then
      echo "static_checks_over_wheels: pip download $package==$version failed: $(tail -1 "$work/pip.err")" >&2
      exit 3
    fi
    wheel=$(cd "$work" && ls ./*.whl | head -1)
    wheel=${wheel#./}
    (cd "$work" && unzip -q -o "$wheel" 'nvidia/nccl/lib/libnccl.so*')
    lib=$(cd "$work" && ls nvidia/nccl/lib/libnccl.so* | head -1)
    set +e
    (cd "$work" && "$hangbench" catalog check --json "$lib") > "$work/check.json"
    rc=$?
    set -e
    if [[ $rc -gt 1 ]]; then echo "static_checks_over_wheels: catalog check of $wheel exited $rc" >&2; exit 3; fi
    python3 - "$package" "$version" "$wheel" "$work" >> "$out/checks.jsonl" <<'PY'
import hashlib, json, sys
package, version, wheel, work = sys.argv[1:]
checked = json.load(open(f"{work}/check.json"))[0]
sha = hashlib.sha256(open(f"{work}/{wheel}", "rb").read()).hexdigest()
print(json.dumps({"package": package, "release": version, "wheel": wheel, "wheel_sha256": sha,
                  "library": checked["library"], "library_sha256": checked["sha256"],
                  "version": checked["version"], "checks": checked["checks"]}))
PY
    echo "$package $version: done" >&2
  done
done
python3 "$repo/ci/static_checks_table.py" "$out" > "$out/README.md"
