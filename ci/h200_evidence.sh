#!/usr/bin/env bash
# The H200 evidence plan, in one call of the GPU machine (each step bounded, each
# result packed under $OUT as soon as it exists, so a late failure loses nothing).
#
# Expects a bundle folder (default .device/) made on the build machine by
# ci/make_gpu_bundle.sh: bin/ (hangbench, stripped), workloads/<name>/<name>,
# nccl/<variant>/lib/libnccl.so.2 for the variants built there, and NCCL
# source tarballs for the variants to build here (nccl-<v>-1.tar.gz).
#   ci/h200_evidence.sh [BUNDLE]      env: OUT (results), DDP_TRIALS, PP_TRIALS
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(cd "${1:-$repo/.device}" && pwd)
out=${OUT:-/tmp/hangbench-h200}; mkdir -p "$out"
work=/tmp/hb-h200; mkdir -p "$work/logs"
hb="$bundle/bin/hangbench"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ddp_trials=${DDP_TRIALS:-8}; pp_trials=${PP_TRIALS:-8}
t0=$(date +%s)
say() { echo "[h200 +$(( $(date +%s) - t0 ))s] $*" | tee -a "$work/logs/plan.log"; }
pack() { tar -C "$work" -cJf "$out/$1.tar.xz" "${@:2}" 2>/dev/null; }

# The binaries were built elsewhere and look for recipes and matrices under the
# source folder they were configured in; make that path lead here.
# HANGBENCH_BUILT_SOURCE names it (the build's CMAKE_SOURCE_DIR).
built_source=${HANGBENCH_BUILT_SOURCE:-}
if [ -n "$built_source" ] && [ ! -e "$built_source" ]; then mkdir -p "$(dirname "$built_source")" && ln -s "$repo" "$built_source"; fi
export PATH=/usr/local/cuda/bin:/opt/torch/.venv/bin:$PATH
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="$bundle/lib:$torch_dir/lib"
export HANGBENCH_WORKLOADS_DIR="$work/workloads"
export HANGBENCH_NCCL_CACHE="$work/nccl"
mkdir -p "$HANGBENCH_WORKLOADS_DIR" "$HANGBENCH_NCCL_CACHE/shim"
cp -a "$bundle/workloads/." "$HANGBENCH_WORKLOADS_DIR/"
cp -a "$bundle/nccl/." "$HANGBENCH_NCCL_CACHE/"
[ -f "$bundle/nccl-2.17.1-pair.tar.xz" ] && tar -C "$HANGBENCH_NCCL_CACHE" -xJf "$bundle/nccl-2.17.1-pair.tar.xz"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; python3 -c 'import torch; print("torch", torch.__version__)';
  mpirun --version | head -1; nproc; date -u; } > "$work/logs/machine.txt" 2>&1
say "machine: $(tr '\n' ' ' < "$work/logs/machine.txt")"

# 1. The 2.18.1 variants, built here (16 cores) from the pinned tarball while the rest runs.
(
  "$hb" nccl build --offline --jobs 10 --cuda-home /usr/local/cuda --cache "$work/nccl-cache" \
     --source-tarball "$bundle/nccl-2.18.1-1.tar.gz" --variant 2.18.1 --variant 2.18.1-noshutdown \
     > "$work/logs/nccl-build.log" 2>&1
  echo "exit $?" >> "$work/logs/nccl-build.log"
  for v in 2.18.1 2.18.1-noshutdown; do
    d=$(ls -d "$work/nccl-cache/variants/$v-"* 2>/dev/null | head -1)
    [ -n "$d" ] && mkdir -p "$HANGBENCH_NCCL_CACHE/$v" && cp -a "$d/." "$HANGBENCH_NCCL_CACHE/$v/"
  done
) &
nccl_build=$!

# 2. pp_pipeline is built here: it embeds this machine's Python 3.12.
( SKIP_SMOKE=1 CMAKE_BUILD_PARALLEL_LEVEL=4 bash "$repo/workloads/pp_pipeline/build_on_gpu_machine.sh" "$work/build-pp" \
    > "$work/logs/pp-build.log" 2>&1; echo "exit $?" >> "$work/logs/pp-build.log"
  mkdir -p "$HANGBENCH_WORKLOADS_DIR/pp_pipeline"
  cp "$work/build-pp/workloads/pp_pipeline/pp_pipeline" "$HANGBENCH_WORKLOADS_DIR/pp_pipeline/" ) &
pp_build=$!

# 3. The compat shim, derived from this machine's libtorch and the oldest NCCL.
"$hb" nccl shim --torch-lib "$torch_dir/lib/libtorch_cuda.so" --nccl "$HANGBENCH_NCCL_CACHE/2.17.1/lib/libnccl.so.2" \
   -o "$HANGBENCH_NCCL_CACHE/shim/libnccl_compat_shim.so" > "$work/logs/shim.log" 2>&1
say "shim: exit $? ($(tail -1 "$work/logs/shim.log"))"

# Hung trials' stacks are taken once, by the diagnose step below, not per trial.
sed 's/^stacks = true/stacks = false/' "$repo/workloads/ddp_abort/matrix-h200.toml" > "$work/ddp.toml"
sed 's/^stacks = true/stacks = false/' "$repo/workloads/pp_pipeline/matrix-1gpu.toml" > "$work/pp.toml"

# 4. DDP abort, the 2.17.1 pair, while 2.18.1 builds.
say "ddp part A (2.17.1, 2.17.1+backport)"
timeout 330 "$hb" run --matrix "$work/ddp.toml" --out "$work/ddp-2.17.1" --trials "$ddp_trials" --concurrency 6 --timeout 10 \
   --filter nccl=2.17.1 --filter nccl=2.17.1+backport > "$work/logs/ddp-a.log" 2>&1
say "ddp part A: exit $?"
pack ddp-2.17.1 ddp-2.17.1 logs

# 5. pp single-GPU cycle, alongside part B.
wait $pp_build; say "pp build: $(tail -1 "$work/logs/pp-build.log")"
( timeout 240 "$hb" run --matrix "$work/pp.toml" --out "$work/pp-1gpu" --trials "$pp_trials" --concurrency 3 \
     > "$work/logs/pp.log" 2>&1; echo "exit $?" >> "$work/logs/pp.log" ) &
pp_run=$!

wait $nccl_build; say "nccl build: $(tail -1 "$work/logs/nccl-build.log")"
"$hb" nccl list --cache "$work/nccl-cache" > "$work/logs/nccl-list.txt" 2>&1
for lib in "$HANGBENCH_NCCL_CACHE"/*/lib/libnccl.so.2 "$torch_dir/../nvidia/nccl/lib/libnccl.so.2" /lib/x86_64-linux-gnu/libnccl.so.2; do
  echo "== $lib"; "$hb" nccl inspect "$lib"; echo "exit $?"; nm -D "$lib" | grep -c ' U shutdown'
done > "$work/logs/inspect.txt" 2>&1

say "ddp part B (2.18.1, 2.18.1-noshutdown)"
timeout 200 "$hb" run --matrix "$work/ddp.toml" --out "$work/ddp-2.18.1" --trials "$ddp_trials" --concurrency 12 --timeout 10 \
   --filter nccl=2.18.1 --filter nccl=2.18.1-noshutdown > "$work/logs/ddp-b.log" 2>&1
say "ddp part B: exit $?"
pack ddp-2.18.1 ddp-2.18.1 logs
wait $pp_run; say "pp: $(tail -1 "$work/logs/pp.log")"
pack pp-1gpu pp-1gpu logs

# 6. One hung abort diagnosed from outside, with cuda-gdb stacks (unstripped 2.17.1).
say "diagnose"
mkdir -p "$work/diag"
( cd "$work/diag" && exec "$HANGBENCH_WORKLOADS_DIR/ddp_abort/ddp_abort" --backend=direct \
    --nccl-lib="$HANGBENCH_NCCL_CACHE/2.17.1/lib/libnccl.so.2" --teardown=exit --workers=after --epochs=2 --steps=4 \
    > "$work/diag/ddp.log" 2>&1 ) &
rank=$!
sleep 9
timeout 60 "$hb" diagnose --tree $rank --stacks --timeout 40 --markdown "$work/diag/diagnose.md" > "$work/diag/diagnose.txt" 2>&1
say "diagnose: exit $?"
timeout 20 "$hb" diagnose --tree $rank --json > "$work/diag/diagnose.json" 2>&1
kill -KILL -- $rank 2>/dev/null; pkill -KILL -f 'ddp_abort' 2>/dev/null
pack diag diag logs

# 7. validate: the GPU machine's own NCCL builds, then one pinned variant.
say "validate"
mkdir -p "$work/validate"
for name in torch-2.28.9:$torch_dir/../nvidia/nccl/lib/libnccl.so.2 system-2.28.3:/lib/x86_64-linux-gnu/libnccl.so.2 \
            2.18.1-noshutdown:$HANGBENCH_NCCL_CACHE/2.18.1-noshutdown/lib/libnccl.so.2; do
  s=$(date +%s%N)
  timeout 90 "$hb" validate --nccl "${name#*:}" --reference-dir "$HANGBENCH_NCCL_CACHE" --out "$work/validate/runs" \
     --markdown "$work/validate/${name%%:*}.md" --json "$work/validate/${name%%:*}.json" > "$work/validate/${name%%:*}.txt" 2>&1
  rc=$?; e=$(date +%s%N)
  echo "${name%%:*} exit=$rc seconds=$(( (e - s) / 1000000 ))ms" >> "$work/validate/time-to-verdict.txt"
done
say "validate done"
pack validate validate logs
say "end"
pack logs logs
