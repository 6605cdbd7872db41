#!/usr/bin/env bash
# Starts a real one-node Slurm on this machine for the tests: munged, slurmctld and
# slurmd as root, with every file (configuration, sockets, state, logs) in STATE_DIR.
# Debian's slurm-wlm and munge (ci/setup.sh). Clients find it through
# SLURM_CONF=STATE_DIR/slurm.conf. On failure it prints the daemons' logs and exits 1:
# a Slurm test never skips.
# Usage: tests/slurm/start.sh STATE_DIR
set -euo pipefail
state=${1:?usage: start.sh STATE_DIR}
here=$(cd "$(dirname "$0")" && pwd)

fail() {
  echo "tests/slurm/start.sh: $*" >&2
  for log in "$state"/munged.log "$state"/slurmctld.log "$state"/slurmd.log; do
    [ -f "$log" ] && { echo "---- $log" >&2; tail -n 60 "$log" >&2; }
  done
  "$here/stop.sh" "$state" >/dev/null 2>&1 || true
  exit 1
}

for tool in munged slurmctld slurmd sinfo; do
  command -v "$tool" >/dev/null || fail "$tool not found: install slurm-wlm and munge (bash ci/setup.sh)"
done
[ "$(id -u)" -eq 0 ] || fail "the test Slurm runs its daemons as root; run the tests as root"

"$here/stop.sh" "$state" >/dev/null 2>&1 || true   # what a killed earlier run left
rm -rf "$state"
ports=${HANGBENCH_TEST_SLURM_PORTS:-6817-6818}
# Another slurmctld/slurmd on these ports would answer our clients: refuse it.
for port in ${ports%-*} ${ports#*-}; do
  if ss -Htln "sport = :$port" 2>/dev/null | grep -q .; then
    fail "port $port is in use ($(ss -Htlnp "sport = :$port" 2>/dev/null | tr -s ' ' | head -n 1)); stop that daemon or set HANGBENCH_TEST_SLURM_PORTS=A-B"
  fi
done
mkdir -p "$state/spool" "$state/ctld" "$state/munge"
chmod 700 "$state/munge"
key=/etc/munge/munge.key
[ -r "$key" ] || fail "no munge key at $key (the munge package creates it)"

# munged on a private socket, so that a system munged (or none) does not matter.
munged --force --socket="$state/munge/munge.socket" --key-file="$key" --pid-file="$state/munge/munged.pid" \
  --log-file="$state/munged.log" --seed-file="$state/munge/munged.seed" ||
  fail "munged did not start"

node=$(hostname -s)
cpus=$(nproc)
memory_mb=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
cat >"$state/slurm.conf" <<CONF
# Written by tests/slurm/start.sh: a one-node test cluster.
ClusterName=hangbench-test
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${ports%-*}
SlurmdPort=${ports#*-}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
LaunchParameters=use_interactive_step
KillWait=5
MinJobAge=600
InactiveLimit=0
NodeName=$node CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
export SLURM_CONF="$state/slurm.conf"

slurmctld -f "$SLURM_CONF" -i || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"

# Wait for the node to come up, with a bound only to fail instead of hanging.
deadline=$((SECONDS + 30))
while [ $SECONDS -lt $deadline ]; do
  if timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then
    echo "tests/slurm/start.sh: Slurm up on $node ($cpus CPUs), SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.1
done
fail "the node did not become idle within 30 s: $(timeout 5 sinfo -N 2>&1 | tr '\n' ' ')"
