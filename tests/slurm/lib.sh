# Helpers of the Slurm tests (sourced). SLURM_CONF points at the test cluster
# that tests/slurm/start.sh started; HB_BINARY_DIR and HB_SOURCE_DIR come from ctest.
set -euo pipefail
: "${SLURM_CONF:?the Slurm tests need the test cluster (ctest fixture Slurm)}"
HB="$HB_BINARY_DIR/harness/hangbench"
export HANGBENCH_WORKLOADS_DIR="$HB_BINARY_DIR/workloads"
export HANGBENCH_SOURCE_DIR="$HB_SOURCE_DIR"

fail() {
  echo "FAIL: $*" >&2
  local state
  state=$(dirname "$SLURM_CONF")
  for log in "$state"/slurmctld.log "$state"/slurmd.log; do
    [ -f "$log" ] && { echo "---- last lines of $log" >&2; tail -n 30 "$log" >&2; }
  done
  exit 1
}

# The job's state as scontrol shows it (COMPLETED, FAILED, RUNNING, ...); for an
# array, one word per task.
job_states() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' '; }

# Waits until job $1 has ended, failing after $2 seconds (a bound, not a pace).
wait_for_job() {
  local job=$1 limit=$2 states
  local deadline=$((SECONDS + limit))
  while [ $SECONDS -lt $deadline ]; do
    states=$(job_states "$job")
    if [ -n "$states" ] && ! echo "$states" | grep -Eq 'PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUED'; then
      echo "$states"
      return 0
    fi
    sleep 0.5
  done
  fail "job $job still not done after $limit s: $(job_states "$job"); squeue: $(squeue 2>&1 | tr '\n' ' ')"
}
