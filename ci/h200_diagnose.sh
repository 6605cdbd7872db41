#!/usr/bin/env bash
# Issue 38 on the GPU machine, in one call: the GPU part of the diagnose corpus
# (tests/diagnose_corpus/gpu_cases: torchrun jobs, every rank on the one GPU as its
# own NCCL host) judged by the wait-for graph, then diagnose's time on a DataLoader
# DDP job hung in its abort over NVIDIA's 2.17.1 at 2 and 8 torchrun ranks.
#
#   ci/h200_diagnose.sh pack BUNDLE NCCL_2_17_1_LIB SHIM   (here: a clean commit's build)
#   ci/h200_diagnose.sh run BUNDLE                          (there; results under $OUT)
#
# BUNDLE holds bin/hangbench (stripped), lib/ (the harness's Debian libraries the GPU
# image lacks) and nccl-2.17.1.tar.xz (the wheel's library slimmed to sm_90, and the
# libtorch compat shim made by `hangbench nccl shim`). Env: TIMING_REPEATS (3),
# TIMING_RANKS ("2 8"), TIMING_FR ("off on": the timed job without and with the Flight
# Recorder; with it, diagnose waits for each rank's dump, which PyTorch's monitor thread
# writes when it next polls its pipe, every TORCH_NCCL_COORD_CHECK_MILSEC, 1000 ms by
# default), CORPUS_REPEAT (1), CASES (the GPU corpus's cases, all by default).
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?pack or run}
bundle=${2:?bundle folder}

if [ "$mode" = pack ]; then
  lib=${3:?libnccl.so.2 of 2.17.1, slimmed}; shim=${4:?libnccl_compat_shim.so}
  mkdir -p "$bundle/bin" "$bundle/lib"
  strip -o "$bundle/bin/hangbench" "$repo/build/harness/hangbench"
  # CLI11 (header only) for pp_pipeline, built there for the PP4 case (it embeds CPython 3.12).
  mkdir -p "$bundle/cli11/include" && cp -a /usr/include/CLI "$bundle/cli11/include/"
  for soname in libfmt.so.9 libtomlplusplus.so.3 libsqlite3.so.0 libelf.so.1 libdw.so.1 libseccomp.so.2; do
    cp -L "$(ldd "$repo/build/harness/hangbench" | awk -v s="$soname" '$1 == s {print $3}')" "$bundle/lib/$soname"
  done
  stage=$(mktemp -d); mkdir -p "$stage/2.17.1/lib"
  cp "$lib" "$stage/2.17.1/lib/libnccl.so.2"; cp "$shim" "$stage/2.17.1/lib/"
  tar -C "$stage" -cf - . | xz -T2 -6 > "$bundle/nccl-2.17.1.tar.xz"; rm -rf "$stage"
  du -sh "$bundle"; exit 0
fi

out=${OUT:-/tmp/hangbench-h200}; mkdir -p "$out"
work=/tmp/hb-diag; rm -rf "$work"; mkdir -p "$work/logs"
hb="$bundle/bin/hangbench"
t0=$(date +%s)
say() { echo "[h200-diagnose +$(( $(date +%s) - t0 ))s] $*" | tee -a "$work/logs/plan.log"; }
export PATH=/usr/local/cuda/bin:/opt/torch/.venv/bin:$PATH
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="$bundle/lib:$torch_dir/lib"
tar -C "$work" -xJf "$bundle/nccl-2.17.1.tar.xz"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; python3 -c 'import torch; print("torch", torch.__version__)';
  "$hb" --version; nproc; date -u; echo "scripts and corpus from tree ${HANGBENCH_TREE_COMMIT:-(not given)}"; } > "$work/logs/machine.txt" 2>&1
say "machine: $(tr '\n' ' ' < "$work/logs/machine.txt")"

# Kills a process tree (the torchrun agent and its ranks and workers), stopped ones too.
kill_tree() {
  local pids; pids=$(ps -o pid= --ppid "$1" 2>/dev/null)
  for p in $pids; do kill_tree "$p"; done
  kill -CONT "$1" 2>/dev/null; kill -KILL "$1" 2>/dev/null
}

# 1. The GPU corpus, with the Flight Recorder on (its dump pipe is how a mismatch is told),
# each case with a folder of its own for the dumps: a case must never read the dump a
# case before it left behind.
mkdir -p "$work/gpu-corpus"
cases=${CASES:-$(for e in "$repo"/tests/diagnose_corpus/gpu_cases/*/expect.json; do basename "$(dirname "$e")"; done)}
# A case that runs one of the project's workloads ({workloads} in its launch.json) gets
# it built here first: pp_pipeline embeds this machine's CPython.
export HANGBENCH_WORKLOADS_DIR="$work/workloads"
for c in $cases; do
  grep -q '{workloads}/pp_pipeline' "$repo/tests/diagnose_corpus/gpu_cases/$c/launch.json" || continue
  [ -x "$HANGBENCH_WORKLOADS_DIR/pp_pipeline/pp_pipeline" ] && break
  CLI11_INCLUDE_DIR="$bundle/cli11/include" SKIP_SMOKE=1 CMAKE_BUILD_PARALLEL_LEVEL=16 \
    bash "$repo/workloads/pp_pipeline/build_on_gpu_machine.sh" "$work/build-pp" > "$work/logs/pp-build.log" 2>&1
  say "pp_pipeline build: exit $?"
  mkdir -p "$HANGBENCH_WORKLOADS_DIR/pp_pipeline"
  cp "$work/build-pp/workloads/pp_pipeline/pp_pipeline" "$HANGBENCH_WORKLOADS_DIR/pp_pipeline/" 2>/dev/null
  break
done
for c in $cases; do
  mkdir -p "$work/fr/$c"
  # PyTorch 2.11's names (TORCH_FR_*): with the older ones no corpus rank ever dumped on the
  # H100, while ci/h200_fr_probe.sh's ranks, started with these, did.
  TORCH_FR_BUFFER_SIZE=2000 TORCH_FR_DUMP_TEMP_FILE="$work/fr/$c/nccl_trace_rank_" \
  TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$work/fr/$c/nccl_pipe_rank_" \
    timeout 200 python3 "$repo/tests/diagnose_corpus/run_corpus.py" --cases "$repo/tests/diagnose_corpus/gpu_cases" \
      --hangbench "$hb" --workloads "$HANGBENCH_WORKLOADS_DIR" --roles-timeout 90 --case-timeout 150 --settle 4 --repeat "${CORPUS_REPEAT:-1}" \
      --only "$c" --keep "$work/gpu-corpus" --markdown "$work/gpu-corpus/$c.md" >> "$work/gpu-corpus.log" 2>&1
  say "gpu corpus $c: exit $? ($(tail -1 "$work/gpu-corpus.log"))"
  # Which Flight Recorder files the ranks wrote, and when (the dumps themselves stay here: they name this machine).
  ls -la --time-style=+%T.%N "$work/fr/$c" > "$work/logs/fr-files-$c.txt" 2>&1
done
cat "$work"/gpu-corpus/*.md > "$work/gpu-corpus/corpus.md" 2>/dev/null
tar -C "$work" -cJf "$out/gpu-corpus.tar.xz" gpu-corpus gpu-corpus.log logs

# 2. diagnose's time on a DataLoader DDP job hung in its abort over 2.17.1, at N ranks.
timing_run() {   # timing_run RANKS REPEAT FR(on|off)
  local n=$1 i=$2 fr=$3 d="$work/timing/ranks$1-fr$3-$2"; mkdir -p "$d/fr"
  local fr_env=(TORCH_NCCL_TRACE_BUFFER_SIZE=0)
  [ "$fr" = on ] && fr_env=(TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$d/fr/nccl_trace_rank_"
    TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$d/fr/nccl_pipe_rank_")
  ( cd "$d" && LD_PRELOAD="$work/2.17.1/lib/libnccl.so.2 $work/2.17.1/lib/libnccl_compat_shim.so" \
      HANGBENCH_PHASE_FILE="$d/phases.jsonl" exec env "${fr_env[@]}" setsid torchrun --standalone --nproc-per-node "$n" "$repo/workloads/ddp_python/ddp_ranks.py" \
        --placement shared-gpu > "$d/job.log" 2>&1 ) &
  local agent=$!
  for _ in $(seq 240); do   # until every rank is in its teardown, or the job has ended
    [ "$(cat "$d/phases.jsonl" 2>/dev/null | grep -c teardown_begin)" -ge "$n" ] && break
    kill -0 "$agent" 2>/dev/null || break
    sleep 0.5
  done
  sleep 3   # past the healthy abort's 0.5 s: a rank still in its abort now is hung
  local ended; ended=$(cat "$d/phases.jsonl" 2>/dev/null | grep -c teardown_end)
  local s e rc
  s=$(date +%s%N)
  timeout 60 "$hb" diagnose --tree "$agent" --stacks --json --timings > "$d/diagnose.json" 2> "$d/diagnose.err"
  rc=$?; e=$(date +%s%N)
  "$hb" diagnose --from "$d/diagnose.json" > "$d/diagnose.txt" 2>&1
  echo "{\"ranks\": $n, \"flight_recorder\": \"$fr\", \"repeat\": $i, \"exit\": $rc, \"seconds\": $(( (e - s) / 1000000 )).0e-3, \"teardown_end\": ${ended:-0}}" >> "$work/timing/timings.jsonl"
  say "ranks $n, Flight Recorder $fr, #$i: diagnose exit $rc in $(( (e - s) / 1000000 )) ms; ranks past their abort: ${ended:-0}; $(tr '\n' ' ' < "$d/diagnose.err" | cut -c1-300)"
  kill_tree "$agent"; wait "$agent" 2>/dev/null
}
mkdir -p "$work/timing"
for n in ${TIMING_RANKS:-2 8}; do
  for fr in ${TIMING_FR:-off on}; do
    for i in $(seq "${TIMING_REPEATS:-3}"); do
      timing_run "$n" "$i" "$fr"
      # After each run: a call cut off by its limit still brings back what it timed.
      tar -C "$work" --exclude='*/fr/*' -cJf "$out/timing.tar.xz" timing logs
    done
  done
done
tar -C "$work" --exclude='*/fr/*' -cJf "$out/timing.tar.xz" timing logs
say "done"
