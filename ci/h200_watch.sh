#!/usr/bin/env bash
# Issue 42 on the GPU machine, in one call: `hangbench watch` over real GPU jobs.
#   1. ddp-abort: a DataLoader DDP job hung in its abort over NVIDIA's 2.17.1, launched
#      by torchrun under watch (default signals), PyTorch's heartbeat monitor set to end
#      the job after HEARTBEAT s: the evidence must come first;
#   2. ddp-abort-gpu: the same job, progress read from NVML alone (--signals gpu): a job
#      whose GPU went idle is flagged;
#   3. gil-convoy: the diagnose corpus's GIL convoy (tests/diagnose_corpus/gpu_cases);
#   4. healthy-gpu: a healthy all-reduce loop, progress read from NVML alone, for
#      HEALTHY_SECONDS: never flagged (this is the NVML reader's test on a real GPU).
#
#   ci/h200_watch.sh pack BUNDLE NCCL_ARCHIVE   (here, from a clean commit's build;
#                                                NCCL_ARCHIVE as ci/h200_diagnose.sh packs it)
#   ci/h200_watch.sh run BUNDLE                 (there; results under $OUT)
# Env (run): IDLE (15), KILL_AFTER (20), HEARTBEAT (60), HEALTHY_SECONDS (45), CASES (all four),
# CASE_TIMEOUT (240: seconds one watched case may take before it is killed).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?pack or run}
bundle=$(realpath -m "${2:?bundle folder}")   # absolute: each case runs in a folder of its own

if [ "$mode" = pack ]; then
  archive=${3:?the nccl-2.17.1.tar.xz of ci/h200_diagnose.sh pack}
  mkdir -p "$bundle/bin" "$bundle/lib"
  strip -o "$bundle/bin/hangbench" "$repo/build/harness/hangbench"
  for soname in libfmt.so.9 libtomlplusplus.so.3 libsqlite3.so.0 libelf.so.1 libdw.so.1 libseccomp.so.2; do
    cp -L "$(ldd "$repo/build/harness/hangbench" | awk -v s="$soname" '$1 == s {print $3}')" "$bundle/lib/$soname"
  done
  [ "$(realpath "$archive")" = "$(realpath -m "$bundle/nccl-2.17.1.tar.xz")" ] || cp "$archive" "$bundle/nccl-2.17.1.tar.xz"
  git -C "$repo" rev-parse HEAD > "$bundle/commit.txt"
  du -sh "$bundle"; exit 0
fi

out=${OUT:-/tmp/hangbench-watch}; mkdir -p "$out"
work=/tmp/hb-watch; rm -rf "$work"; mkdir -p "$work/logs"
hb="$bundle/bin/hangbench"
t0=$(date +%s)
say() { echo "[h200-watch +$(( $(date +%s) - t0 ))s] $*" | tee -a "$work/logs/plan.log"; }
export PATH=/usr/local/cuda/bin:/opt/torch/.venv/bin:$PATH
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="$bundle/lib:$torch_dir/lib"
[ -f "$bundle/nccl-2.17.1.tar.xz" ] && tar -C "$work" -xJf "$bundle/nccl-2.17.1.tar.xz"   # the ddp-abort cases only
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; python3 -c 'import torch; print("torch", torch.__version__)';
  "$hb" --version; nproc; date -u; echo "scripts and corpus from tree ${HANGBENCH_TREE_COMMIT:-(not given)}"; } > "$work/logs/machine.txt" 2>&1
say "machine: $(tr '\n' ' ' < "$work/logs/machine.txt")"
idle=${IDLE:-15}; kill_after=${KILL_AFTER:-20}
cases=${CASES:-ddp-abort ddp-abort-gpu gil-convoy healthy-gpu}
preload="$work/2.17.1/lib/libnccl.so.2 $work/2.17.1/lib/libnccl_compat_shim.so"
ddp=(torchrun --standalone --nproc-per-node 2 "$repo/workloads/ddp_python/ddp_ranks.py" --placement shared-gpu)

# watch_case NAME [env ...] -- WATCH_OPTIONS -- COMMAND...: one watched job, its outcome on one line.
watch_case() {
  local name=$1; shift
  local d="$work/$name"; mkdir -p "$d"
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local opts=(); while [ "$1" != "--" ]; do opts+=("$1"); shift; done; shift
  local s e rc
  s=$(date +%s%N)
  local case_idle=$idle; [ "$name" = healthy-gpu ] && case_idle=8   # NVML's reads, every second: a short idle
  ( cd "$d" && exec env "${envs[@]}" timeout -s KILL "${CASE_TIMEOUT:-240}" "$hb" watch --idle "$case_idle" --evidence "$d/evidence" \
      --events "$d/events.jsonl" --prometheus "$d/hangbench.prom" --job "$name" "${opts[@]}" -- "$@" \
      > "$d/job.log" 2> "$d/watch.err" )
  rc=$?; e=$(date +%s%N)
  local first; first=$(head -c 600 "$d/events.jsonl" 2>/dev/null | head -1)
  echo "{\"case\": \"$name\", \"exit\": $rc, \"seconds\": $(( (e - s) / 1000000 )).0e-3, \"events\": $(grep -c . "$d/events.jsonl" 2>/dev/null || echo 0)}" \
    >> "$work/outcomes.jsonl"
  say "$name: watch exit $rc in $(( (e - s) / 1000000 )) ms; first event: ${first:0:400}"
  [ -f "$d/evidence/diagnosis.txt" ] && sed -n 1,8p "$d/evidence/diagnosis.txt" | cut -c1-220 | tee -a "$work/logs/plan.log"
  pkill -KILL -f "$repo/tests/diagnose_corpus/gpu_cases" 2>/dev/null; pkill -KILL -f ddp_ranks.py 2>/dev/null
  return 0
}

for c in $cases; do
  case $c in
    ddp-abort)
      watch_case ddp-abort LD_PRELOAD="$preload" TORCH_NCCL_ENABLE_MONITORING=1 \
        TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC="${HEARTBEAT:-60}" -- --kill-after "$kill_after" -- "${ddp[@]}" ;;
    ddp-abort-gpu)
      watch_case ddp-abort-gpu LD_PRELOAD="$preload" -- --signals gpu --kill-after "$kill_after" -- "${ddp[@]}" ;;
    gil-convoy)
      # No phase lines: progress is the Flight Recorder's (GPU and CPU stay busy in a spinning NCCL kernel).
      mkdir -p "$work/gil-convoy/fr"
      watch_case gil-convoy NCCL_DEBUG=WARN TORCH_NCCL_TRACE_BUFFER_SIZE=2000 \
        TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$work/gil-convoy/fr/nccl_trace_rank_" \
        TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$work/gil-convoy/fr/nccl_pipe_rank_" -- --kill-after "$kill_after" -- \
        torchrun --standalone --nproc-per-node 2 "$repo/tests/diagnose_corpus/gpu_cases/gil_convoy_nccl_send/main.py" ;;
    healthy-gpu)
      # The job runs for ever: it is ended from outside after HEALTHY_SECONDS, and must have no hang event.
      ( sleep "${HEALTHY_SECONDS:-45}"; pkill -TERM -f healthy_ddp_training/main.py ) &
      watch_case healthy-gpu NCCL_DEBUG=WARN -- --signals gpu -- \
        torchrun --standalone --nproc-per-node 2 "$repo/tests/diagnose_corpus/gpu_cases/healthy_ddp_training/main.py"
      wait ;;
  esac
  tar -C "$work" --exclude=./2.17.1 -cJf "$out/watch.tar.xz" .   # never NCCL's own library
done
say "done"
tar -C "$work" --exclude=./2.17.1 -cJf "$out/watch.tar.xz" .
