#!/usr/bin/env bash
# Issue 42 under a real Slurm: a two-rank srun job whose ranks hang (each blocked
# reading its own pipe). `hangbench watch --slurm-job` reads every node, flags the
# hang, takes the evidence of every node (diagnose --slurm-job) and, with
# --kill-after 0, ends the job through scancel. Then ci/slurm/watch.sbatch wraps
# the same srun line: its events and evidence land in WATCH_OUT and the batch job
# exits 124.
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/hb-slurm-watch.XXXXXX)
job=""
trap '[ -n "$job" ] && scancel "$job" 2>/dev/null; rm -rf "$work"' EXIT
J="$HB_BINARY_DIR/workloads/test_workloads/hb_test_watch_job"

# Waits until file $1 has $2 lines "mode pipe" (both ranks started), bounded.
wait_for_ranks() {
  local deadline=$((SECONDS + 120))
  while [ $SECONDS -lt $deadline ]; do
    local n
    n=$(grep -c 'mode pipe' "$1" 2>/dev/null || true)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.2
  done
  fail "the ranks never started: $(cat "$1" 2>/dev/null)"
}

job=$(sbatch --parsable -n2 --output="$work/job.out" --wrap "srun -n2 '$J' --mode=pipe") || fail "sbatch failed"
job=${job%%;*}
wait_for_ranks "$work/job.out" 2
rc=0
timeout 300 "$HB" watch --slurm-job "$job" --idle 3 --events "$work/events.jsonl" --evidence "$work/evidence" \
  --kill-after 0 > "$work/watch.out" 2>&1 || rc=$?
cat "$work/watch.out"
[ "$rc" -eq 124 ] || fail "watch --slurm-job exited $rc, not 124 (hung, evidence captured)"
python3 - "$work/events.jsonl" <<'PY' || fail "the hang event is not as expected: $(cat "$work/events.jsonl")"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(events) == 1 and events[0]["event"] == "hang", events
e = events[0]
assert e["ranks"] == [0, 1], e["ranks"]
assert e["seconds_since_progress"] <= 3 + 2, e["seconds_since_progress"]
assert e["job"].startswith("slurm-"), e["job"]
PY
grep -q '"cross_rank"' "$work/evidence/diagnosis.json" || fail "no every-node evidence in diagnosis.json"
states=$(wait_for_job "$job" 60)
echo "$states" | grep -q CANCELLED || fail "--kill-after did not end job $job (state $states)"
job=""

# The sbatch template around the same srun line.
job=$(sbatch --parsable -n2 --output="$work/template.out" \
  --export="ALL,HANGBENCH=$HB,WATCH_OUT=$work/w,WATCH_IDLE=3,WATCH_ARGS=--kill-after 0" \
  "$HB_SOURCE_DIR/ci/slurm/watch.sbatch" srun -n2 "$J" --mode=pipe) || fail "sbatch of ci/slurm/watch.sbatch failed"
job=${job%%;*}
wait_for_job "$job" 240 > /dev/null
cat "$work/template.out"
grep -q "exited 124" "$work/template.out" || fail "the template's watch did not exit 124"
grep -q '"event":"hang"' "$work/w/events.jsonl" || fail "no hang event in WATCH_OUT/events.jsonl"
[ -s "$work/w/evidence/diagnosis.json" ] || fail "no evidence in WATCH_OUT/evidence: $(ls "$work/w/evidence" 2>&1); events: $(cat "$work/w/events.jsonl")"
job=""
echo "PASS: watch --slurm-job and ci/slurm/watch.sbatch"
