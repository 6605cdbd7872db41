#!/usr/bin/env bash
# Acceptance of issue 17: the GPU-free default matrix as a 4-task job array plus a
# merge job (ci/slurm/submit.sh) on the real test Slurm; the merged report's
# counts, intervals and p-values equal an unsharded run's, cell by cell.
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/hb-slurm-shards.XXXXXX)
trap 'rm -rf "$work"' EXIT

HANGBENCH="$HB" bash "$HB_SOURCE_DIR/ci/slurm/submit.sh" --shards 4 --out "$work/sharded" || fail "submit.sh failed"
read -r array merge < "$work/sharded/slurm/jobs"
# Meanwhile the same matrix unsharded, outside Slurm.
"$HB" run --out "$work/whole" --format json > "$work/whole.log" 2>&1 || fail "the unsharded run failed: $(tail "$work/whole.log")"
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
echo "PASS: 4 shards on Slurm merged into the unsharded run's statistics"
