#!/usr/bin/env bash
# The ci/ scripts' usage texts: wrong arguments print the header comment (what the
# script does and its options), without '#' marks or lines of the script itself,
# and exit 2.
set -uo pipefail
root=${1:?usage: ci_usage_test.sh SOURCE_DIR}
failed=0
check() {  # check SCRIPT EXPECTED-LINE ARGS...
  local script=$1 expected=$2; shift 2
  local out rc
  out=$(bash "$root/$script" "$@" 2>&1 </dev/null); rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: $script $*: exit $rc, not 2"; failed=1; }
  grep -qF -- "$expected" <<<"$out" || { echo "FAIL: $script: no '$expected' in:"; echo "$out"; failed=1; }
  if grep -Eq '^#|set -[eu]|^usage\(\)' <<<"$out"; then
    echo "FAIL: $script: the usage shows script lines or '#' marks:"; echo "$out"; failed=1
  fi
}
check ci/slurm/submit.sh "submit.sh --out DIR [--shards N]"
check ci/nightly.sh "ci/nightly.sh [--gpu] [--resume]" --no-such-option
check ci/static_checks_over_wheels.sh "ci/static_checks_over_wheels.sh OUT_DIR [HANGBENCH]"
check ci/bootstrap_root_over_wheels.sh "ci/bootstrap_root_over_wheels.sh OUT_DIR [HANGBENCH]"
[ "$failed" -eq 0 ] && echo "PASS: usage texts"
exit "$failed"
