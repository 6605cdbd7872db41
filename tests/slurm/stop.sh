#!/usr/bin/env bash
# Stops the test Slurm that tests/slurm/start.sh STATE_DIR started (by the pids it
# wrote, never by name) and prints where its logs are.
# Usage: tests/slurm/stop.sh STATE_DIR
set -uo pipefail
state=${1:?usage: stop.sh STATE_DIR}
stop_pidfile() {
  local file=$1
  [ -s "$file" ] || return 0
  local pid
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
}
if [ -f "$state/slurm.conf" ]; then
  SLURM_CONF="$state/slurm.conf" timeout 10 scancel --user=root --quiet 2>/dev/null || true
fi
stop_pidfile "$state/slurmd.pid"
stop_pidfile "$state/slurmctld.pid"
stop_pidfile "$state/munge/munged.pid"
echo "tests/slurm/stop.sh: stopped; logs in $state"
