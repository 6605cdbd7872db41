#!/usr/bin/env bash
# Acceptance of issue 17: the GPU-free default matrix as a 4-task job array plus a
# merge job (ci/slurm/submit.sh) on the real test Slurm; the merged report's
# counts, intervals and p-values equal an unsharded run's, cell by cell.
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/hb-slurm-shards.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The same matrix unsharded, outside Slurm, first: one at a time, so that neither
# run's healthy trials are slowed towards the hang timeout by the other.
"$HB" run --out "$work/whole" --format json > "$work/whole.log" 2>&1 || fail "the unsharded run failed: $(tail "$work/whole.log")"
HANGBENCH="$HB" bash "$HB_SOURCE_DIR/ci/slurm/submit.sh" --shards 4 --out "$work/sharded" || fail "submit.sh failed"
read -r array merge < "$work/sharded/slurm/jobs"
states=$(wait_for_job "$merge" 600)
for k in 0 1 2 3; do echo "---- shard $k"; cat "$work/sharded/slurm/shard-$k.out"; done
echo "---- merge"; cat "$work/sharded/slurm/merge.out"
[ "$(job_states "$array")" = "COMPLETED " ] || fail "the shard array ended $(job_states "$array")"
[ "$states" = "COMPLETED " ] || fail "the merge job ended $states"
for k in 0 1 2 3; do
  grep -q "shard $k/4" "$work/sharded/slurm/shard-$k.out" || fail "task $k did not run shard $k/4"
done
python3 "$HB_SOURCE_DIR/tests/slurm/compare_reports.py" "$work/whole/report.json" "$work/sharded/merged/report.json" ||
  fail "the merged report differs from the unsharded run's"
# Shards that do not make one run: exit 2, the problem named, nothing written.
set +e
"$HB" merge "$work/sharded/shard-0" "$work/sharded/shard-1" "$work/sharded/shard-2" --out "$work/bad1" 2> "$work/bad1.err"
rc_missing=$?
"$HB" merge "$work/sharded"/shard-* "$work/sharded/shard-3" --out "$work/bad2" 2> "$work/bad2.err"
rc_twice=$?
set -e
[ "$rc_missing" = 2 ] && grep -q "shard(s) 3/4 missing" "$work/bad1.err" || fail "a missing shard: exit $rc_missing, $(cat "$work/bad1.err")"
[ "$rc_twice" = 2 ] && grep -q "shard 3/4 given twice" "$work/bad2.err" || fail "a shard twice: exit $rc_twice, $(cat "$work/bad2.err")"
[ ! -e "$work/bad1" ] && [ ! -e "$work/bad2" ] || fail "a refused merge wrote its output folder"
echo "PASS: 4 shards on Slurm merged into the unsharded run's statistics; bad shard sets refused with exit 2"
