#!/usr/bin/env bash
# Why the GPU corpus's collective_mismatch_nccl gets no Flight Recorder dump (issue 38):
# launches the case under torchrun with the Flight Recorder on, asks each rank for a dump
# through its pipe, and logs when each dump file appears (or that none did within
# WAIT s), with `diagnose --stacks` taken 3 s and 20 s after the ask, so the stacks of
# the threads that should write the dump are in the evidence.
#   ci/h200_fr_probe.sh BUNDLE   (there, after ci/h200_diagnose.sh pack; results under $OUT)
# Env: CASE (collective_mismatch_nccl), WAIT (40), PROBE_ENV (extra VAR=VALUE words for the job;
# by default TORCH_CPP_LOG_LEVEL=INFO, so the job's log says where each rank wrote its dump,
# or why it did not).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(realpath "${1:?bundle folder}")
out=${OUT:-/tmp/hangbench-fr-probe}; mkdir -p "$out"
case=${CASE:-collective_mismatch_nccl}
work=/tmp/hb-fr-probe/$case; rm -rf "$work"; mkdir -p "$work/fr"
hb="$bundle/bin/hangbench"
export PATH=/usr/local/cuda/bin:/opt/torch/.venv/bin:$PATH
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="$bundle/lib:$torch_dir/lib"
t0=$(date +%s%N)
say() { local ms=$(( ($(date +%s%N) - t0) / 1000000 )); echo "[fr-probe +$((ms / 1000)).$(printf '%03d' $((ms % 1000)))s] $*" | tee -a "$work/probe.log"; }
( cd "$work" && exec env ${PROBE_ENV:-TORCH_CPP_LOG_LEVEL=INFO} TORCH_FR_BUFFER_SIZE=2000 TORCH_FR_DUMP_TEMP_FILE="$work/fr/nccl_trace_rank_" \
    TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$work/fr/nccl_pipe_rank_" HB_CORPUS_ROLES="$work/roles.json" \
    setsid torchrun --standalone --nproc-per-node 2 "$repo/tests/diagnose_corpus/gpu_cases/$case/main.py" \
    > "$work/job.log" 2>&1 ) &
agent=$!
for _ in $(seq 180); do [ -f "$work/roles.json.rank0" ] && [ -f "$work/roles.json.rank1" ] && break; sleep 0.5; done
say "roles: $(cat "$work"/roles.json.rank* 2>/dev/null | tr '\n' ' ')"
sleep 4   # as the corpus settles: the ranks are in their mismatched calls
say "pipes: $(ls "$work/fr" | tr '\n' ' ')"
for r in 0 1; do echo 1 > "$work/fr/nccl_pipe_rank_$r.pipe" & done
say "asked both ranks"
asked=$(date +%s)
for i in $(seq $(( ${WAIT:-40} * 2 ))); do
  for r in 0 1; do
    f="$work/fr/nccl_trace_rank_$r"
    [ -f "$f" ] && [ ! -f "$work/seen.$r" ] && { touch "$work/seen.$r"; say "rank $r dump: $(stat -c %s "$f") bytes"; }
  done
  el=$(( $(date +%s) - asked ))
  if [ "$el" -ge 3 ] && [ ! -f "$work/d3.json" ]; then timeout 30 "$hb" diagnose --tree "$agent" --stacks --json > "$work/d3.json" 2>"$work/d3.err"; say "diagnose at 3 s: exit $?"; fi
  if [ "$el" -ge 20 ] && [ ! -f "$work/d20.json" ]; then timeout 30 "$hb" diagnose --tree "$agent" --stacks --json > "$work/d20.json" 2>"$work/d20.err"; say "diagnose at 20 s: exit $?"; fi
  [ -f "$work/seen.0" ] && [ -f "$work/seen.1" ] && [ -f "$work/d20.json" ] && break
  sleep 0.5
done
say "after the wait: $(ls -la "$work/fr" | tail -n +2 | tr '\n' ';')"
# PyTorch's own default dump places, in case the job wrote elsewhere than it was told.
say "default places: $(ls -la "$HOME/.cache/torch" /tmp 2>&1 | grep -E 'trace_rank|^/' | tr '\n' ';')"
say "the job on its dumps: $(grep -E 'dump|Flight Recorder|trace' "$work/job.log" | cut -c1-240 | tr '\n' ';')"
pkill -KILL -f "gpu_cases/$case/main.py"; kill -KILL -- -"$agent" 2>/dev/null; wait 2>/dev/null
tar -C /tmp/hb-fr-probe -cJf "$out/fr-probe-$case.tar.xz" "$case"
