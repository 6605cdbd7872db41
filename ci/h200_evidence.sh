#!/usr/bin/env bash
# The H200 evidence plan, one part per call of the GPU machine (each call of the
# device tool is bounded to 10 minutes and starts on a bare machine). Every step
# is bounded, and each result is packed under $OUT as soon as it exists, so a
# late failure loses nothing. The matrices run through ci/nightly.sh, the same
# entry point a GPU runner calls every night.
#
#   ci/h200_evidence.sh BUNDLE teardown   socket + DDP abort (4 NCCL builds x 3 teardowns
#                                         x 3 worker gates x 2 backends), a hung abort's
#                                         cuda-gdb stacks, validate on every library
#   ci/h200_evidence.sh BUNDLE pipeline   socket + PP single-GPU cycle,
#                                         checked against the history of the first part
#   ci/h200_evidence.sh BUNDLE pp-resume  finishes a PP run stopped by its bound: the
#                                         bundle's pp-run/ (its folder) goes on with
#                                         `ci/nightly.sh --resume`, then into the history
#   ci/h200_evidence.sh BUNDLE ddp        the DDP abort matrix alone (DDP_BOUND s, default 480)
#   ci/h200_evidence.sh BUNDLE ddp-finish continues that run (still on the machine, if the
#                                         next call found it warm, else the bundle's
#                                         ddp-run/hangbench.sqlite), then validate on every library
#   ci/h200_evidence.sh BUNDLE diagnose   a hung abort's cuda-gdb stacks alone
#   ci/h200_evidence.sh BUNDLE diagnose-python  a plain PyTorch DDP script (DataLoader, forked
#                                         persistent workers, Flight Recorder on) hung in its abort over
#                                         2.17.1: diagnose --stacks (libdw + Python frames) timed, then the
#                                         old cuda-gdb path on the same hung tree (under 3 minutes)
#   ci/h200_evidence.sh BUNDLE spawn      DDP abort with loader workers spawned (posix_spawn+exec)
#                                         vs forked after init, over the two builds that hang
#   ci/h200_evidence.sh BUNDLE vendor-check  the vendor NCCL entries carried so far (parts of
#                                         ci/pack_vendor_libs.sh in BUNDLE/vendor/part-NN): listed,
#                                         and each inspected there (version through dlopen, sm_90)
#   ci/h200_evidence.sh BUNDLE validate   a hung abort's cuda-gdb stacks, then validate on every
#                                         library three times, and twice with the references
#                                         run again (time to verdict, both kinds)
#   ci/h200_evidence.sh BUNDLE reports    issue 19's reports on the GPU: `nccl inspect --json
#                                         --require-fix` on every library, `run --dry-run` of the
#                                         DDP matrix, and the spawn matrix at REPORT_TRIALS (default
#                                         5) per cell through `run --progress plain` (provenance with
#                                         GPU, driver and CUDA; the HTML report with its forest plot)
#   ci/h200_evidence.sh BUNDLE pp-smoke   pp_pipeline built there with its two smoke trials, then the
#                                         single-GPU PP matrix at PP_TRIALS (2) per cell, expectations checked
#   ci/h200_evidence.sh BUNDLE pp-build   pp_pipeline built there (CLI11 from the bundle) and its --help
#   ci/h200_evidence.sh BUNDLE vendor-carry  only restores the vendor parts this call carries
#   ci/h200_evidence.sh BUNDLE sweep      issue 15: `hangbench sweep` of every vendor entry restored so far
#                                         against the pinned references (twice: a second night with
#                                         --history), then fresh verdicts of three vendor releases timed
#   ci/h200_evidence.sh BUNDLE fresh-verdict  issue 15's time to a fresh verdict: where it goes
#                                         (ci/h200_init_probe.sh: N nccl_teardown copies at once over the
#                                         fixed reference, per configuration in PROBE_CONFIGS), then
#                                         `validate --no-reuse` timed, FRESH_ROUNDS (3) times on each
#                                         vendor entry named in VALIDATE_FRESH
#   ci/h200_evidence.sh BUNDLE torchrun   the torchrun launcher: two-rank socket teardown cells
#                                         started by torchrun (matrix-torchrun.toml), each rank's
#                                         phases attributed to its RANK and host (~1 min)
#   ci/h200_evidence.sh BUNDLE pp4        issue 26: PP4 with real NCCL, four stages on the one GPU
#                                         (NCCL_HOSTID per stage): pp_pipeline built here, a smoke per MPI
#                                         transport, then matrix-pp4's one-GPU cells (PP4_FILTERS, PP4_TRIALS,
#                                         PP4_BOUND); pp4-resume continues the run on a warm machine
#   ci/h200_evidence.sh BUNDLE ranks      issue 26: DDP abort at world size 2 and 4 on the one GPU over the
#                                         two build pairs (matrix-ranks, RANKS_FILTERS, RANKS_BOUND or STOP_AT);
#                                         NCCL_BUILD=1 builds the pairs here first (NCCL_JOBS, NCCL_WAIT); ranks-resume
#   ci/h200_evidence.sh BUNDLE catalog    issue 28: the catalog's new entry nccl-launch-blocking-proxy (NVIDIA/nccl
#                                         issue 750: CUDA_LAUNCH_BLOCKING=1, two ranks as two NCCL hosts on the one
#                                         GPU): one run of the workload per reference wheel, then `sweep --hang` over
#                                         the vendor entries carried (CATALOG_RELEASES, default 2.15.5 2.16.2 2.16.5
#                                         2.17.1 2.18.1 2.18.3; CATALOG_TRIALS 4, CATALOG_REFERENCE_TRIALS 16,
#                                         CATALOG_DEADLINE 8 s after collective_begin: it also covers the destroy and exit). Fetches nothing (~2-4 min)
#   ci/h200_evidence.sh BUNDLE catalog-remedy  issue 28: the entry's matrix over the 2.16.5 and 2.17.1 wheels (launch
#                                         blocking vs not), then one hung 2.16.5 trial diagnosed live with --stacks
#   ci/h200_evidence.sh BUNDLE sweep-ranks  issue 26: sweep --check ddp --ranks 2 over the 2.16.5, 2.17.1 and 2.18.1
#                                         wheels (SWEEP_RANKS_RELEASES), references the 2.17.1 and 2.18.1 wheels
#   ci/h200_evidence.sh BUNDLE torchrun4  issue 26: a PyTorch DDP script at 4 torchrun ranks on the one GPU,
#                                         then validate --check ddp --ranks 2 of 2.18.1
#
# BUNDLE (default .device/) is made on the build machine by ci/make_gpu_bundle.sh:
# bin/hangbench, workloads/<name>/<name>, lib/ (the harness's shared libraries the
# GPU machine lacks), nccl-*-pair.tar.xz (the pinned variants) and, for a later
# part, history.sqlite from an earlier one (the previous "night").
#   ci/h200_evidence.sh BUNDLE background PART  runs PART in its own session beyond this call;
#                                         wait-background PART waits (BG_WAIT s) and brings back its archives
#   ci/h200_evidence.sh BUNDLE nccl-build starts the pinned builds in the background (source tarballs
#                                         in BUNDLE/nccl-src); nccl-wait waits for them (NCCL_WAIT s)
# Env: OUT (results), DDP_TRIALS, DDP_BOUND, PP_TRIALS, DIAGNOSE (0: validate part without it),
# RUN_SET ("KEY=VALUE ..."): `run --set` for the matrices of pp4, ranks and torchrun4.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(cd "${1:-$repo/.device}" && pwd)
part=${2:-teardown}
out=${OUT:-/tmp/hangbench-h200}; mkdir -p "$out"
work=/tmp/hb-h200; mkdir -p "$work/logs"
hb="$bundle/bin/hangbench"
t0=$(date +%s)
run_sets=(); for kv in ${RUN_SET:-}; do run_sets+=(--set "$kv"); done
say() { echo "[h200 $part +$(( $(date +%s) - t0 ))s] $*" | tee -a "$work/logs/plan-$part.log"; }
# Per-trial folders stay here: the stores hold every trial, and 1,440 trials' logs
# would not fit the way back.
pack() { tar -C "$work" --exclude='runs/*/trials' -cJf "$out/$1.tar.xz" "${@:2}" 2>/dev/null; }

export HANGBENCH_SOURCE_DIR="$repo"   # matrices and recipes come from this checkout
export PATH=/usr/local/cuda/bin:/opt/torch/.venv/bin:$PATH
torch_dir=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
export LD_LIBRARY_PATH="$bundle/lib:$torch_dir/lib"
export HANGBENCH_WORKLOADS_DIR="$work/workloads"
export HANGBENCH_NCCL_CACHE="$work/nccl"
mkdir -p "$HANGBENCH_WORKLOADS_DIR" "$HANGBENCH_NCCL_CACHE/shim"
cp -a "$bundle/workloads/." "$HANGBENCH_WORKLOADS_DIR/"
for pair in "$bundle"/nccl-*-pair.tar.xz; do   # once per machine: a warm one has them
  [ -f "$HANGBENCH_NCCL_CACHE/.$(basename "$pair").done" ] && continue
  tar -C "$HANGBENCH_NCCL_CACHE" -xJf "$pair" && touch "$HANGBENCH_NCCL_CACHE/.$(basename "$pair").done"
done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; python3 -c 'import torch; print("torch", torch.__version__)';
  mpirun --version | head -1; cuda-gdb --version | head -1; nproc; date -u; } > "$work/logs/machine.txt" 2>&1
say "machine: $(tr '\n' ' ' < "$work/logs/machine.txt")"
say "nccl variants: $(cd "$HANGBENCH_NCCL_CACHE" && ls -d */ | tr '\n' ' ')"
# Vendor NCCL entries, slimmed for transport by ci/pack_vendor_libs.sh: each call may carry
# part folders as $bundle/vendor/part-NN (or name them in VENDOR_PARTS); a warm machine keeps earlier ones.
for vendor_part in ${VENDOR_PARTS:-} "$bundle"/vendor/part-*; do
  [ -d "$vendor_part" ] || continue
  # A warm machine keeps earlier parts; the mark names the part by its archives, not its folder's name.
  done_mark="$HANGBENCH_NCCL_CACHE/.vendor-$(ls "$vendor_part" | sha256sum | cut -c1-16).done"
  [ -f "$done_mark" ] && continue
  "$repo/ci/unpack_vendor_libs.sh" "$HANGBENCH_NCCL_CACHE" "$vendor_part" >> "$work/logs/vendor-unpack.log" 2>&1 \
    && touch "$done_mark"
  say "vendor $(basename "$vendor_part"): exit $? ($(tail -1 "$work/logs/vendor-unpack.log"))"
done

# The history of the earlier part (a previous "night"), when the bundle carries it
# and this machine has none of its own (a warm machine keeps the previous call's).
[ -f "$bundle/history.sqlite" ] && [ ! -f "$work/history.sqlite" ] && cp "$bundle/history.sqlite" "$work/history.sqlite"

# The cache folder of a vendor release carried so far ("" when none): nvidia-nccl-cu11/12/13-REL-KEY.
vendor_entry() { ls -d "$HANGBENCH_NCCL_CACHE"/vendor/nvidia-nccl-cu1[123]-"$1"-* 2>/dev/null | head -1; }

# Pinned variants a background build (nccl-build) has finished so far: each appears whole
# (staged, then renamed), so a part can use the first pair while the second still builds.
publish_built_nccl_variants() {
  local m d v
  for m in "$work"/nccl-build/variants/*/manifest.json; do
    [ -f "$m" ] || continue
    d=$(dirname "$m"); v=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['variant'])" "$m")
    [ -f "$HANGBENCH_NCCL_CACHE/$v/lib/libnccl.so.2" ] && continue
    mkdir -p "$HANGBENCH_NCCL_CACHE/$v/lib" && cp "$d/lib/libnccl.so.2" "$HANGBENCH_NCCL_CACHE/$v/lib/" && cp "$m" "$HANGBENCH_NCCL_CACHE/$v/"
    say "nccl build: published $v"
  done
}
publish_built_nccl_variants

# The compat shim, derived from this machine's libtorch and the oldest NCCL.
"$hb" nccl shim --torch-lib "$torch_dir/lib/libtorch_cuda.so" --nccl "$HANGBENCH_NCCL_CACHE/2.17.1/lib/libnccl.so.2" \
   -o "$HANGBENCH_NCCL_CACHE/shim/libnccl_compat_shim.so" > "$work/logs/shim.log" 2>&1
say "shim: exit $? ($(tail -1 "$work/logs/shim.log"))"

nightly() {   # nightly NAME BOUND_S [--resume] MATRIX...
  local name=$1 bound=$2 flags=(--gpu); shift 2
  [ "${1:-}" = --resume ] && { flags+=(--resume); shift; }
  local matrices=""; for m in "$@"; do case "$m" in /*) matrices+="$m " ;; *) matrices+="$repo/$m " ;; esac; done
  HANGBENCH="$hb" NIGHTLY_MATRICES="$matrices" NIGHTLY_RUN_TIMEOUT="$bound" NIGHTLY_RUN_SET="stacks=false" \
    bash "$repo/ci/nightly.sh" "${flags[@]}" --out "$work/$name" --history "$work/history.sqlite" >> "$work/logs/$name.log" 2>&1
  say "$name: nightly ${flags[*]} exit $? ($(tail -1 "$work/logs/$name.log"))"
  cp "$work/history.sqlite" "$work/$name/history.sqlite"
}

# Hung trials' stacks are taken once, by the diagnose step: the GPU plan's runs set
# stacks=false (run --set; NIGHTLY_RUN_SET for the nightly's) and TRIALS per cell when given.
quiet_run_args() {   # quiet_run_args REL [TRIALS]: the arguments of `run` for workloads/REL
  echo "--matrix $repo/workloads/$1 --set stacks=false${2:+ --trials $2}"
}

# pp_pipeline is built here: it embeds this machine's Python 3.12.
build_pp() {
  CLI11_INCLUDE_DIR="$bundle/cli11/include" SKIP_SMOKE=${PP_SKIP_SMOKE:-1} CMAKE_BUILD_PARALLEL_LEVEL=16 bash "$repo/workloads/pp_pipeline/build_on_gpu_machine.sh" "$work/build-pp" \
      > "$work/logs/pp-build.log" 2>&1
  say "pp build: exit $?"
  mkdir -p "$HANGBENCH_WORKLOADS_DIR/pp_pipeline"
  cp "$work/build-pp/workloads/pp_pipeline/pp_pipeline" "$HANGBENCH_WORKLOADS_DIR/pp_pipeline/"
}

# SIGKILL to a process and its descendants, children first (a rank and its loader
# workers), found by parent pid: no pattern that could match another program.
kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
  kill -KILL "$1" 2>/dev/null
}

# One hung abort seen from outside, with cuda-gdb stacks of the unstripped 2.17.1.
# Symbols of libnccl and libc only: libtorch_cuda's alone take cuda-gdb over a minute.
diagnose_hung_abort() {
  say "diagnose"
  mkdir -p "$work/diag"
  ( cd "$work/diag" && exec "$HANGBENCH_WORKLOADS_DIR/ddp_abort/ddp_abort" --backend=direct \
      --nccl-lib="$HANGBENCH_NCCL_CACHE/2.17.1/lib/libnccl.so.2" --teardown=exit --workers=after --epochs=2 --steps=4 \
      > "$work/diag/ddp.log" 2>&1 ) &
  local rank=$!
  for _ in $(seq 60); do grep -q "teardown 'exit' begins" "$work/diag/ddp.log" 2>/dev/null && break; sleep 0.5; done
  sleep 3
  # JSON (with the stacks, so `diagnose --from` can judge it again) and Markdown in one attach.
  timeout 150 "$hb" diagnose --tree $rank --stacks --debugger cuda-gdb --symbols libnccl,libc.so.6 --timeout 60 \
    --json --markdown "$work/diag/diagnose.md" > "$work/diag/diagnose.json" 2> "$work/diag/diagnose.err"
  say "diagnose: exit $?"
  kill_tree $rank
  pack diag diag logs
}

# The PyTorch user's view of a hung abort: workloads/ddp_python/abort_with_loader.py over
# 2.17.1 (preloaded with the compat shim), diagnosed by the libdw + Python-frame path, then by
# the old path (cuda-gdb on every process, the Flight Recorder off) on the same tree for comparison.
diagnose_python() {
  say "diagnose-python"
  local d="$work/diag-python"; mkdir -p "$d/fr"
  ( cd "$d" && LD_PRELOAD="$HANGBENCH_NCCL_CACHE/2.17.1/lib/libnccl.so.2 $HANGBENCH_NCCL_CACHE/shim/libnccl_compat_shim.so" \
      TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$d/fr/nccl_trace_rank_" \
      TORCH_NCCL_DEBUG_INFO_PIPE_FILE="$d/fr/nccl_pipe_rank_" \
      exec python3 "$repo/workloads/ddp_python/abort_with_loader.py" > "$d/script.log" 2>&1 ) &
  local rank=$!
  for _ in $(seq 120); do grep -q abort_begins "$d/script.log" 2>/dev/null && break; sleep 0.5; done
  sleep 3   # past the healthy abort's 0.5 s: a rank still in the abort now is hung
  if grep -q abort_done "$d/script.log"; then say "diagnose-python: the abort returned (no hang)"; fi
  local s e
  s=$(date +%s%N)
  timeout 60 "$hb" diagnose --tree $rank --stacks --timeout 20 --json --markdown "$d/diagnose.md" --timings \
    > "$d/diagnose.json" 2> "$d/diagnose.err"
  local rc=$?; e=$(date +%s%N)
  echo "libdw+python exit=$rc seconds=$(( (e - s) / 1000000 ))ms" > "$d/timing.txt"
  "$hb" diagnose --from "$d/diagnose.json" > "$d/diagnose.txt" 2>&1
  say "diagnose-python (libdw): exit $rc in $(( (e - s) / 1000000 )) ms ($(tr '\n' ' ' < "$d/diagnose.err"))"
  # The same tree again, text only (the on-call engineer's command), timed.
  s=$(date +%s%N)
  timeout 60 "$hb" diagnose --tree $rank --stacks --timeout 20 --timings > "$d/diagnose-text.txt" 2> "$d/diagnose-text.err"
  rc=$?; e=$(date +%s%N)
  echo "libdw+python text exit=$rc seconds=$(( (e - s) / 1000000 ))ms" >> "$d/timing.txt"
  say "diagnose-python (text): exit $rc in $(( (e - s) / 1000000 )) ms ($(tr '\n' ' ' < "$d/diagnose-text.err"))"
  # DIAG_CUDA_GDB=0: the libdw path alone (the cuda-gdb comparison takes up to 150 s).
  [ "${DIAG_CUDA_GDB:-1}" = 0 ] && { kill_tree $rank; pack diag-python diag-python logs; return; }
  s=$(date +%s%N)
  timeout 150 "$hb" diagnose --tree $rank --stacks --debugger cuda-gdb --debugger-everywhere \
    --symbols libnccl,libc.so.6 --timeout 60 --json > "$d/diagnose-cuda-gdb.json" 2> "$d/diagnose-cuda-gdb.err"
  rc=$?; e=$(date +%s%N)
  echo "cuda-gdb-everywhere exit=$rc seconds=$(( (e - s) / 1000000 ))ms" >> "$d/timing.txt"
  say "diagnose-python (cuda-gdb everywhere): exit $rc in $(( (e - s) / 1000000 )) ms"
  kill_tree $rank
  pack diag-python diag-python logs
}

# The pinned NCCL variants built on this machine's cores, in the background of
# whatever the call does (own session: it outlives the call on a warm machine), from
# source tarballs the bundle carries (bundle/nccl-src/nccl-<v>-1.tar.gz, checked
# against third_party/nccl/pins.toml). When done, each variant is laid out as
# $HANGBENCH_NCCL_CACHE/<variant>/lib/libnccl.so.2 and packed for the way back.
start_nccl_build() {
  [ -f "$work/nccl-build.started" ] && return
  ls "$bundle"/nccl-src/nccl-*.tar.gz > /dev/null 2>&1 || { say "nccl build: no source tarballs in the bundle"; return; }
  touch "$work/nccl-build.started"
  local tarballs=(); for t in "$bundle"/nccl-src/nccl-*.tar.gz; do tarballs+=(--source-tarball "$t"); done
  setsid bash -c '
    nice -n 10 "$0" nccl build "${@:3}" --offline --cache "$1/nccl-build" -j "${NCCL_JOBS:-10}" > "$1/logs/nccl-build.log" 2>&1
    rc=$?
    for m in "$1"/nccl-build/variants/*/manifest.json; do
      d=$(dirname "$m"); v=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"variant\"])" "$m")
      mkdir -p "$2/$v/lib" && cp "$d/lib/libnccl.so.2" "$2/$v/lib/" && cp "$m" "$2/$v/"
    done
    echo "$rc" > "$1/nccl-build.done"' "$hb" "$work" "$HANGBENCH_NCCL_CACHE" "${tarballs[@]}" \
    >> "$work/logs/nccl-build-outer.log" 2>&1 < /dev/null &   # not the call's stdout: the call would wait for the build
  say "nccl build: started in the background (${#tarballs[@]} args)"
}

# Waits (at most $1 s) for start_nccl_build; then the compat shim from 2.17.1.
wait_nccl_build() {
  local bound=$1 waited=0
  while [ ! -f "$work/nccl-build.done" ] && [ $waited -lt "$bound" ]; do sleep 5; waited=$((waited + 5)); done
  say "nccl build: $([ -f "$work/nccl-build.done" ] && echo "exit $(cat "$work/nccl-build.done")" || echo "not done after ${bound}s"); variants: $(cd "$HANGBENCH_NCCL_CACHE" && ls -d */ 2>/dev/null | tr '\n' ' ')"
  "$hb" nccl shim --torch-lib "$torch_dir/lib/libtorch_cuda.so" --nccl "$HANGBENCH_NCCL_CACHE/2.17.1/lib/libnccl.so.2" \
     -o "$HANGBENCH_NCCL_CACHE/shim/libnccl_compat_shim.so" > "$work/logs/shim.log" 2>&1
  say "shim: exit $?"
}

# The built variants for the way back: one xz stream per pair, split under 16 MiB.
pack_nccl_builds() {
  local stage; stage=$(mktemp -d)
  for pair in "2.17.1 2.17.1+backport" "2.18.1 2.18.1-noshutdown"; do
    set -- $pair
    [ -f "$HANGBENCH_NCCL_CACHE/$1/lib/libnccl.so.2" ] || continue
    tar -C "$HANGBENCH_NCCL_CACHE" -cf - "$@" | xz -T8 --lzma2=preset=6,dict=192MiB > "$stage/nccl-$1-pair.tar.xz"
    split -b 15m -d "$stage/nccl-$1-pair.tar.xz" "$out/nccl-$1-pair.tar.xz.part-"
  done
  rm -rf "$stage"
}

# Each cell of a run's report.json in one line: hangs of n, the verdict, the transport.
cells_summary() {
  [ -f "$1" ] || { say "no report $1"; return; }
  python3 - "$1" <<'PY' 2>&1 | tee -a "$work/logs/plan-$part.log"
import json, sys
for c in json.load(open(sys.argv[1]))["cells"]:
    print(f"{c['id']}: {c['hangs']}/{c['n']} hung, verdict {c['verdict']}")
PY
}

# Issue 26's PP4 smoke: four stages on one GPU under mpirun, once per MPI transport,
# the native thread (must complete) and no progress source (must hang: 40 s bound).
pp4_smoke() {
  local d="$work/pp4-smoke"; mkdir -p "$d"
  local ucx=(-x OMPI_MCA_pml=ucx -x OMPI_MCA_pml_ucx_tls=any -x OMPI_MCA_pml_ucx_devices=any -x OMPI_MCA_btl=self -x OMPI_MCA_osc=^ucx -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo
             -x UCX_RNDV_THRESH=65536)
  local ob1=(-x OMPI_MCA_pml=ob1 -x OMPI_MCA_btl=self,tcp -x OMPI_MCA_btl_tcp_if_include=lo
             -x OMPI_MCA_btl_tcp_eager_limit=65536 -x OMPI_MCA_btl_tcp_progress_thread=0)
  for mpi in ${PP4_SMOKE_MPI:-ucx ob1}; do
    for progress in native none; do
      local -n vars=$mpi
      local bound=40; [ $progress = none ] && bound=25
      # mpirun and its ranks in a session of their own: a hung smoke's ranks, left when
      # timeout kills mpirun, are ended as that session (no name pattern).
      ( cd "$d" && HANGBENCH_TRIAL_DIR="$d" exec setsid timeout --signal=KILL $bound mpirun --allow-run-as-root --oversubscribe -np 4           -x CUDA_MODULE_LOADING=LAZY -x NCCL_DEBUG=INFO -x HANGBENCH_TRIAL_DIR "${vars[@]}"           "$HANGBENCH_WORKLOADS_DIR/pp_pipeline/pp_pipeline" --placement=shared-gpu --link=nccl --progress=$progress           --steps=4 --activation-elements=16777216 > "$d/$mpi-$progress.log" 2>&1 ) &
      local sid=$! rc; wait "$sid"; rc=$?   # the subshell's pid is the session's id (setsid, no fork)
      say "pp4 smoke $mpi/$progress: exit $rc ($([ $progress = native ] && echo 'want 0' || echo 'want 137: killed while hung'))"
      pkill -KILL -s "$sid" 2>/dev/null; sleep 1
      grep -h "via NET\|NCCL_HOSTID\|cold call\|model predicts" "$d/$mpi-$progress.log" "$d"/nccl-debug.rank*.log 2>/dev/null | head -8 \
        >> "$d/summary.txt"
      mkdir -p "$d/$mpi-$progress"; mv "$d"/nccl-debug.rank*.log "$d/$mpi-$progress/" 2>/dev/null
    done
  done
}

# validate: the GPU machine's own NCCL builds, then every pinned variant, while
# the call has time left (STOP_AT seconds after the part's start). ROUND (default
# 1) names the outputs of a repetition: round 1 writes Markdown too.
# One timed `hangbench validate`: validate_one LABEL LIB BASE [OPTION...] writes
# BASE.json and BASE.txt and appends "LABEL exit=RC seconds=Nms" to the timing log.
validate_one() {
  local label=$1 lib=$2 base=$3 s e rc; shift 3
  s=$(date +%s%N)
  timeout 60 "$hb" validate --nccl "$lib" --reference-dir "$HANGBENCH_NCCL_CACHE" --out "$work/validate/runs" \
     "$@" --json "$base.json" > "$base.txt" 2>&1
  rc=$?; e=$(date +%s%N)
  echo "$label exit=$rc seconds=$(( (e - s) / 1000000 ))ms start_ns=$s end_ns=$e" >> "$work/validate/time-to-verdict.txt"
  say "validate $label: exit $rc"
}

validate_all() {
  local round=${1:-1}
  say "validate round $round"
  mkdir -p "$work/validate"
  for name in torch-2.28.9:$torch_dir/../nvidia/nccl/lib/libnccl.so.2 system-2.28.3:/lib/x86_64-linux-gnu/libnccl.so.2 \
              2.18.1-noshutdown:$HANGBENCH_NCCL_CACHE/2.18.1-noshutdown/lib/libnccl.so.2 \
              2.17.1:$HANGBENCH_NCCL_CACHE/2.17.1/lib/libnccl.so.2 \
              2.17.1+backport:$HANGBENCH_NCCL_CACHE/2.17.1+backport/lib/libnccl.so.2 \
              2.18.1:$HANGBENCH_NCCL_CACHE/2.18.1/lib/libnccl.so.2; do
    [ $(( $(date +%s) - t0 )) -gt "${STOP_AT:-540}" ] && { say "validate: no time left for ${name%%:*}"; break; }
    if [ "$round" = 1 ]; then
      validate_one "round=1 ${name%%:*}" "${name#*:}" "$work/validate/${name%%:*}" --markdown "$work/validate/${name%%:*}.md"
    else
      validate_one "round=$round ${name%%:*}" "${name#*:}" "$work/validate/round$round-${name%%:*}"
    fi
  done
  say "validate round $round done"
  rm -rf "$work/validate/runs/"*/trials
  pack validate validate logs
}

ddp_matrix() { echo "$repo/workloads/ddp_abort/matrix-h200.toml"; }
# The nightly's trials per cell: DDP_TRIALS for the DDP parts, PP_TRIALS for the PP ones
# (every matrix of that nightly call).
export NIGHTLY_TRIALS=${NIGHTLY_TRIALS:-}

case "$part" in
  teardown)
    say "nightly: socket + DDP abort"
    NIGHTLY_TRIALS=${DDP_TRIALS:-} nightly night-teardown 400 workloads/socket_teardown/matrix.toml "$(ddp_matrix)"
    pack night-teardown night-teardown logs
    diagnose_hung_abort
    validate_all ;;
  ddp)
    say "nightly: DDP abort"
    NIGHTLY_TRIALS=${DDP_TRIALS:-} nightly night-ddp "${DDP_BOUND:-480}" "$(ddp_matrix)"
    pack night-ddp night-ddp logs ;;
  ddp-finish)
    # The run folder of the `ddp` part: still here on a warm machine, else its store from the bundle.
    run="$work/night-ddp/runs/ddp_abort-matrix-h200"
    if [ ! -f "$run/hangbench.sqlite" ] && [ -f "$bundle/ddp-run/hangbench.sqlite" ]; then
      mkdir -p "$run"; cp "$bundle/ddp-run/hangbench.sqlite" "$run/"; say "ddp run from the bundle"
    fi
    say "nightly --resume: DDP abort"
    NIGHTLY_TRIALS=${DDP_TRIALS:-} nightly night-ddp "${DDP_BOUND:-300}" --resume "$(ddp_matrix)"
    pack night-ddp night-ddp logs
    validate_all ;;
  diagnose)
    diagnose_hung_abort ;;
  diagnose-python)
    diagnose_python ;;
  spawn)
    say "nightly: DDP abort with spawned workers"
    NIGHTLY_TRIALS=${DDP_TRIALS:-} nightly night-spawn "${DDP_BOUND:-300}" "$repo/workloads/ddp_abort/matrix-spawn.toml"
    pack night-spawn night-spawn logs ;;
  validate)
    [ "${DIAGNOSE:-1}" = 1 ] && diagnose_hung_abort
    for round in 1 2 3; do validate_all $round; done
    # Time to verdict when the references must run too: one vulnerable and one fixed candidate.
    for name in 2.17.1 2.18.1; do
      validate_one "$name (references run too)" "$HANGBENCH_NCCL_CACHE/$name/lib/libnccl.so.2" \
        "$work/validate/$name-fresh" --no-reuse
    done
    rm -rf "$work/validate/runs/"*/trials
    pack validate validate logs ;;
  reports)
    mkdir -p "$work/reports"
    for name in torch-2.28.9:$torch_dir/../nvidia/nccl/lib/libnccl.so.2 system-2.28.3:/lib/x86_64-linux-gnu/libnccl.so.2 \
                2.17.1:$HANGBENCH_NCCL_CACHE/2.17.1/lib/libnccl.so.2 2.17.1+backport:$HANGBENCH_NCCL_CACHE/2.17.1+backport/lib/libnccl.so.2 \
                2.18.1:$HANGBENCH_NCCL_CACHE/2.18.1/lib/libnccl.so.2 \
                2.18.1-noshutdown:$HANGBENCH_NCCL_CACHE/2.18.1-noshutdown/lib/libnccl.so.2; do
      timeout 60 "$hb" nccl inspect --json --require-fix "${name#*:}" > "$work/reports/inspect-${name%%:*}.json" \
        2> "$work/reports/inspect-${name%%:*}.err"
      say "inspect --require-fix ${name%%:*}: exit $?"
    done
    timeout 60 "$hb" run --dry-run $(quiet_run_args ddp_abort/matrix-h200.toml) > "$work/reports/ddp-dry-run.txt" 2>&1
    say "run --dry-run ddp: exit $?"
    # Only the pinned builds the bundle carries (REPORT_NCCL, e.g. '"2.17.1", "2.18.1"'):
    # the other cells are filtered out, and comparisons naming them read "not run".
    spawn_filters=(); for v in $(echo "${REPORT_NCCL:-}" | tr -d '",'); do spawn_filters+=(--filter "nccl=$v"); done
    timeout 300 "$hb" run $(quiet_run_args ddp_abort/matrix-spawn.toml "${REPORT_TRIALS:-5}") "${spawn_filters[@]}" \
      --out "$work/reports/spawn-run" --progress plain \
      > "$work/reports/spawn-run.txt" 2> "$work/reports/spawn-run.err"
    say "run --progress plain spawn: exit $? ($(grep -c 'progress:' "$work/reports/spawn-run.err") progress lines)"
    # Keep the hung trials' evidence folders (the HTML report links them), not every trial's logs.
    find "$work/reports/spawn-run/trials" -mindepth 3 -maxdepth 3 ! -name evidence -exec rm -rf {} + 2>/dev/null
    pack reports reports logs ;;
  pp-resume)
    build_pp
    run="$work/night-pipeline/runs/pp_pipeline-matrix-1gpu"
    if [ ! -f "$run/hangbench.sqlite" ]; then mkdir -p "$(dirname "$run")"; cp -a "$bundle/pp-run" "$run"; fi
    NIGHTLY_TRIALS=${PP_TRIALS:-} nightly night-pipeline 300 --resume "$repo/workloads/pp_pipeline/matrix-1gpu.toml"
    pack night-pipeline night-pipeline logs ;;
  pipeline)
    build_pp
    say "nightly: socket + PP"
    NIGHTLY_TRIALS=${PP_TRIALS:-} nightly night-pipeline 420 workloads/socket_teardown/matrix.toml "$repo/workloads/pp_pipeline/matrix-1gpu.toml"
    pack night-pipeline night-pipeline logs ;;
  torchrun)
    command -v torchrun >/dev/null || { say "no torchrun on PATH"; exit 3; }
    say "torchrun launcher: $(torchrun --help 2>&1 | head -1)"
    timeout --signal=TERM --kill-after=30 300 "$hb" run --matrix "$repo/workloads/socket_teardown/matrix-torchrun.toml" \
      --out "$work/torchrun" > "$work/logs/torchrun.log" 2>&1
    say "run exit $? (0: every expectation confirmed)"
    # Which ranks and hosts the phase lines named, per cell: the attribution the launcher gives.
    python3 - "$work/torchrun/report.json" <<'PY' 2>&1 | tee -a "$work/logs/plan-$part.log"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cells"]:
    print(f"{c['id']}: {c['hangs']}/{c['n']} hung, verdict {c['verdict']}")
for t in r["trials"]:
    seen = sorted({(p["rank"], p.get("host", "")) for p in t["phases"]})
    print(f"  {t['cell_id']} #{t['index']} {t['outcome']}: phases from (rank, host) {seen}")
PY
    pack torchrun torchrun logs ;;
  vendor-check)
    # The vendor entries restored so far: listed, and each slimmed library inspected on the GPU
    # machine (ncclGetVersion through dlopen, static reading, fatbin, runs on sm_90).
    mkdir -p "$work/vendor-check"
    "$hb" nccl list --cache "$HANGBENCH_NCCL_CACHE" > "$work/vendor-check/list.txt" 2>&1
    "$hb" nccl list --cache "$HANGBENCH_NCCL_CACHE" --json > "$work/vendor-check/list.json" 2>&1
    for lib in "$HANGBENCH_NCCL_CACHE"/vendor/*/lib/libnccl.so.2; do
      [ -f "$lib" ] || continue
      name=$(basename "$(dirname "$(dirname "$lib")")")
      timeout 60 "$hb" nccl inspect --json "$lib" > "$work/vendor-check/$name.inspect.json" 2>&1
      say "inspect $name: exit $? ($(grep -o '"runs": "[a-z]*"' "$work/vendor-check/$name.inspect.json"))"
    done
    pack vendor-check vendor-check logs ;;
  pp-build)
    # The pp_pipeline build there (CPython 3.12 embedded, CLI11 from the bundle), then its --help.
    build_pp
    "$HANGBENCH_WORKLOADS_DIR/pp_pipeline/pp_pipeline" --help > "$work/logs/pp-help.txt" 2>&1
    say "pp_pipeline --help: exit $? ($(head -1 "$work/logs/pp-help.txt"))"
    pack pp-build logs ;;
  pp-smoke)
    # pp_pipeline after a change of its code: built with the build script's two smoke trials
    # (they must finish), then every cell of the single-GPU matrix through the harness,
    # PP_TRIALS (default 2) each, its expectations checked (run's exit 0).
    PP_SKIP_SMOKE=0 build_pp
    grep -E "smoke|exit" "$work/logs/pp-build.log" | tail -6 | while read -r line; do say "$line"; done
    timeout --signal=TERM --kill-after=30 360 "$hb" run $(quiet_run_args pp_pipeline/matrix-1gpu.toml "${PP_TRIALS:-2}") \
      --out "$work/pp-smoke" > "$work/logs/pp-smoke.log" 2>&1
    say "pp matrix: exit $? (0: every expectation confirmed)"
    python3 - "$work/pp-smoke/report.json" <<'PY' 2>&1 | tee -a "$work/logs/plan-$part.log"
import json, sys
for c in json.load(open(sys.argv[1]))["cells"]:
    print(f"{c['id']}: {c['hangs']}/{c['n']} hung, verdict {c['verdict']}")
PY
    pack pp-smoke pp-smoke logs ;;
  vendor-carry)
    # Only carries vendor parts to a warm machine (the preamble unpacks them); says what it holds.
    say "vendor entries now: $(ls -d "$HANGBENCH_NCCL_CACHE"/vendor/*/ 2>/dev/null | wc -l)" ;;
  sweep)
    # Issue 15: every vendor entry carried so far against the pinned references in one wave,
    # then the same sweep again as a second night (its history must show no change), then
    # fresh verdicts (references run too) timed.
    mkdir -p "$work/sweep"
    ls "$HANGBENCH_NCCL_CACHE"/vendor/*/lib/libnccl.so.2 > "$work/sweep/libraries.txt"
    say "sweep: $(wc -l < "$work/sweep/libraries.txt") libraries"
    for night in $(seq "${SWEEP_NIGHTS:-2}"); do
      s=$(date +%s%N)
      timeout 540 "$hb" sweep --list "$work/sweep/libraries.txt" --reference-dir "$HANGBENCH_NCCL_CACHE" \
        --trials "${SWEEP_TRIALS:-7}" --out "$work/sweep/night$night" --history "$work/sweep/history.sqlite" \
        ${SWEEP_CONCURRENCY:+--concurrency $SWEEP_CONCURRENCY} $([ $night = 2 ] && echo --no-reuse) \
        ${SWEEP_TEARDOWN_TIMEOUT:+--teardown-timeout $SWEEP_TEARDOWN_TIMEOUT} \
        > "$work/sweep/night$night.md" 2> "$work/sweep/night$night.err"
      rc=$?; e=$(date +%s%N)
      echo "sweep night=$night exit=$rc seconds=$(( (e - s) / 1000000 ))ms" >> "$work/sweep/timing.txt"
      say "sweep night $night: exit $rc in $(( (e - s) / 1000000 )) ms: $(head -1 "$work/sweep/night$night.md")"
      rm -rf "$work/sweep/night$night/"*/trials
      pack sweep sweep logs
      [ $(( $(date +%s) - t0 )) -gt "${STOP_AT:-420}" ] && break
    done
    mkdir -p "$work/validate"
    for name in ${VALIDATE_FRESH-nvidia-nccl-cu12-2.17.1 nvidia-nccl-cu12-2.18.1 nvidia-nccl-cu12-2.28.9}; do
      lib=$(ls "$HANGBENCH_NCCL_CACHE"/vendor/$name-*/lib/libnccl.so.2 2>/dev/null | head -1)
      [ -n "$lib" ] || continue
      for round in 1 2 3; do
        [ $(( $(date +%s) - t0 )) -gt "${STOP_AT:-540}" ] && break
        validate_one "fresh $name round=$round" "$lib" "$work/validate/fresh-$name-$round" --no-reuse
      done
    done
    rm -rf "$work/validate/runs/"*/trials
    pack sweep sweep validate logs ;;
  catalog)
    # Issue 28: a new catalog entry swept over NVIDIA's wheels, its references among them.
    mkdir -p "$work/catalog"
    : > "$work/catalog/libraries.txt"
    if [ "${CATALOG_RELEASES:-}" = all ]; then   # every vendor entry carried so far
      ls "$HANGBENCH_NCCL_CACHE"/vendor/*/lib/libnccl.so.2 > "$work/catalog/libraries.txt"
    else
      for rel in ${CATALOG_RELEASES:-2.15.5 2.16.2 2.16.5 2.17.1 2.18.1 2.18.3}; do
        entry=$(vendor_entry "$rel")
        if [ -n "$entry" ]; then echo "$entry/lib/libnccl.so.2" >> "$work/catalog/libraries.txt"; else say "catalog: no vendor entry $rel"; fi
      done
    fi
    say "catalog: $(wc -l < "$work/catalog/libraries.txt") libraries"
    # One plain run per reference wheel first (its phases and stderr), bounded: the hang's silhouette.
    lb="$HANGBENCH_WORKLOADS_DIR/nccl_launch_blocking/nccl_launch_blocking"
    for rel in ${CATALOG_SMOKE-2.16.5 2.17.1}; do
      lib=$(grep -m1 -- "-$rel-" "$work/catalog/libraries.txt")
      [ -n "$lib" ] || continue
      s=$(date +%s%N)
      HANGBENCH_PHASE_FILE="$work/catalog/smoke-$rel.phases" NCCL_DEBUG=INFO timeout 25 "$lb" --nccl-lib="$lib" \
        > "$work/catalog/smoke-$rel.out" 2>&1
      rc=$?; e=$(date +%s%N)
      say "catalog smoke $rel: exit $rc in $(( (e - s) / 1000000 )) ms (124 = still in its all-reduce after 25 s);" \
        "last phase $(tail -1 "$work/catalog/smoke-$rel.phases" 2>/dev/null | cut -c1-80)"
    done
    s=$(date +%s%N)
    timeout 300 "$hb" sweep --hang nccl-launch-blocking-proxy --list "$work/catalog/libraries.txt" \
      --trials "${CATALOG_TRIALS:-4}" --reference-trials "${CATALOG_REFERENCE_TRIALS:-16}" \
      --concurrency "${CATALOG_CONCURRENCY:-16}" --timeout 40 --teardown-timeout "${CATALOG_DEADLINE:-8}" \
      --out "$work/catalog/sweep" > "$work/catalog/sweep.md" 2> "$work/catalog/sweep.err"
    rc=$?; e=$(date +%s%N)
    echo "sweep --hang nccl-launch-blocking-proxy exit=$rc seconds=$(( (e - s) / 1000000 ))ms" > "$work/catalog/timing.txt"
    say "catalog sweep: exit $rc in $(( (e - s) / 1000000 )) ms: $(head -1 "$work/catalog/sweep.md")"
    rm -rf "$work/catalog/sweep/"*/trials
    pack catalog catalog logs ;;
  catalog-remedy)
    # Issue 28: the entry's own matrix over its two wheels (launch blocking vs not: the
    # "unset CUDA_LAUNCH_BLOCKING" remedy), then one hung trial diagnosed live (the
    # nccl-launch-blocking rule and its attribution). Needs the 2.16.5 and 2.17.1 wheels.
    for rel in 2.16.5 2.17.1; do
      entry=$(vendor_entry "$rel")
      [ -n "$entry" ] && ln -sfn "$entry" "$HANGBENCH_NCCL_CACHE/$rel"
    done
    if [ "${REMEDY_MATRIX:-1}" = 1 ]; then   # 0: only the live diagnosis
      timeout --signal=TERM --kill-after=20 "${REMEDY_BOUND:-240}" "$hb" run \
        --matrix "$repo/workloads/nccl_launch_blocking/matrix.toml" --filter ranks=2 --set stacks=false \
        --out "$work/catalog-remedy" --progress plain > "$work/logs/catalog-remedy-run.log" 2>&1
      say "catalog-remedy matrix: exit $?"
      cells_summary "$work/catalog-remedy/report.json"
    fi
    d="$work/catalog-diagnose"; mkdir -p "$d"
    ( cd "$d" && HANGBENCH_PHASE_FILE="$d/phases.jsonl" CUDA_LAUNCH_BLOCKING=1 NCCL_DEBUG=INFO exec \
        "$HANGBENCH_WORKLOADS_DIR/nccl_launch_blocking/nccl_launch_blocking" \
        --nccl-lib="$HANGBENCH_NCCL_CACHE/2.16.5/lib/libnccl.so.2" > "$d/workload.log" 2>&1 ) &
    rank0=$!
    for _ in $(seq 80); do [ "$(grep -c collective_begin "$d/phases.jsonl" 2>/dev/null)" -ge 2 ] && break; sleep 0.5; done
    sleep 3   # the healthy collectives take well under a second
    s=$(date +%s%N)
    timeout 60 "$hb" diagnose --tree $rank0 --stacks --timeout 20 --json --markdown "$d/diagnose.md" --timings \
      > "$d/diagnose.json" 2> "$d/diagnose.err"
    rc=$?; e=$(date +%s%N)
    echo "diagnose --stacks --json exit=$rc seconds=$(( (e - s) / 1000000 ))ms" > "$d/timing.txt"
    timeout 30 "$hb" diagnose --tree $rank0 > "$d/diagnose.txt" 2>&1
    say "catalog-diagnose: exit $rc; $(sed -n 3p "$d/diagnose.txt" | cut -c1-160)"
    kill_tree $rank0
    pack catalog-remedy catalog-remedy catalog-diagnose logs ;;
  sweep-ranks)
    # Issue 26: `sweep --check ddp --ranks 2`: NVIDIA's wheels judged across two ranks on the
    # one GPU, the references being the 2.17.1 (close-only) and 2.18.1 (shutdown) wheels.
    refs="$work/sweep-ranks-refs"; mkdir -p "$refs" "$work/sweep-ranks"; : > "$work/sweep-ranks/libraries.txt"
    for rel in ${SWEEP_RANKS_RELEASES:-2.16.5 2.17.1 2.18.1}; do
      entry=$(vendor_entry "$rel")
      [ -n "$entry" ] || { say "sweep-ranks: no vendor entry $rel"; continue; }
      ln -sfn "$entry" "$refs/$rel"; echo "$entry/lib/libnccl.so.2" >> "$work/sweep-ranks/libraries.txt"
    done
    s=$(date +%s%N)
    timeout 400 "$hb" sweep --check ddp --ranks 2 --placement shared-gpu --list "$work/sweep-ranks/libraries.txt" \
      --reference-dir "$refs" --vulnerable 2.17.1 --fixed 2.18.1 --out "$work/sweep-ranks/sweep" \
      > "$work/sweep-ranks/sweep.md" 2> "$work/sweep-ranks/sweep.err"
    rc=$?; e=$(date +%s%N)
    echo "sweep --check ddp --ranks 2 exit=$rc seconds=$(( (e - s) / 1000000 ))ms" > "$work/sweep-ranks/timing.txt"
    say "sweep-ranks: exit $rc in $(( (e - s) / 1000000 )) ms: $(head -1 "$work/sweep-ranks/sweep.md")"
    rm -rf "$work/sweep-ranks/sweep/"*/trials
    pack sweep-ranks sweep-ranks logs ;;
  fresh-verdict)
    nvidia-smi -q > "$work/logs/nvidia-smi-q.txt" 2>&1
    say "persistence mode: $(grep -m1 -i 'Persistence Mode' "$work/logs/nvidia-smi-q.txt" | tr -s ' ')"
    # shellcheck disable=SC2086
    timeout 240 "$repo/ci/h200_init_probe.sh" "$HANGBENCH_WORKLOADS_DIR/nccl_teardown/nccl_teardown" \
      "$HANGBENCH_NCCL_CACHE/2.17.1+backport/lib/libnccl.so.2" "$work/init-probe" \
      ${PROBE_CONFIGS:-1 1 21 21:--cuda-connections=1} \
      > "$work/logs/init-probe.txt" 2>&1
    say "init probe: exit $? $(tr '\n' '|' < "$work/init-probe/summary.txt")"
    rm -f "$work/init-probe"/config-*/phases-*.jsonl
    pack fresh-verdict init-probe logs
    mkdir -p "$work/validate"
    for name in ${VALIDATE_FRESH-nvidia-nccl-cu12-2.17.1 nvidia-nccl-cu12-2.18.1}; do
      lib=$(ls "$HANGBENCH_NCCL_CACHE"/vendor/$name-*/lib/libnccl.so.2 2>/dev/null | head -1)
      [ -n "$lib" ] || { say "fresh: no vendor entry $name"; continue; }
      for round in $(seq "${FRESH_ROUNDS:-3}"); do
        [ $(( $(date +%s) - t0 )) -gt "${STOP_AT:-500}" ] && break
        validate_one "fresh $name round=$round" "$lib" "$work/validate/fresh-$name-$round" --no-reuse ${FRESH_ARGS:-}
      done
    done
    rm -rf "$work/validate/runs/"*/trials
    pack fresh-verdict init-probe validate logs ;;
  pp4|pp4-resume)
    # Issue 26: PP4 with real NCCL, all four stages on the one GPU (one NCCL host each,
    # NET/Socket between them). pp4: pp_pipeline built here, one smoke trial per MPI
    # transport (native must complete, none must hang), then the matrix's one-GPU
    # cells (PP4_FILTERS) at PP4_TRIALS (its own 20) per cell, bounded by PP4_BOUND;
    # pp4-resume continues that run on a warm machine.
    [ "${NCCL_BUILD:-0}" = 1 ] && start_nccl_build
    [ -x "$HANGBENCH_WORKLOADS_DIR/pp_pipeline/pp_pipeline" ] || build_pp
    if [ "$part" = pp4 ] && [ "${PP4_SMOKE:-1}" = 1 ]; then pp4_smoke; fi
    filters=()
    for f in ${PP4_FILTERS:-placement=shared-gpu cold_call=launch mpi=ucx-tcp}; do filters+=(--filter "$f"); done
    run_args=(run --matrix "$repo/workloads/pp_pipeline/matrix-pp4.toml" --out "$work/pp4" "${filters[@]}" "${run_sets[@]}"
              ${PP4_TRIALS:+--trials "$PP4_TRIALS"} --progress plain)
    [ "$part" = pp4-resume ] && run_args=(run --resume --out "$work/pp4" --progress plain)
    timeout --signal=TERM --kill-after=20 "${PP4_BOUND:-400}" "$hb" "${run_args[@]}" > "$work/logs/pp4-run.log" 2>&1
    say "pp4 matrix: exit $? (0: every expectation confirmed; 124: stopped by its bound, resume with pp4-resume)"
    cells_summary "$work/pp4/report.json"
    pack pp4 pp4 logs ;;
  ranks|ranks-resume)
    # Issue 26: the DDP abort at world size 2 and 4 over the two build pairs, ranks on the
    # one GPU (RANKS_FILTERS), bounded by RANKS_BOUND; ranks-resume continues it. The
    # builds: carried in the bundle, or built here in the background by an earlier call.
    [ "${NCCL_BUILD:-0}" = 1 ] && start_nccl_build
    if [ -f "$work/nccl-build.started" ]; then
      wait_nccl_build "${NCCL_WAIT:-300}"
      # NCCL_PACK=0: the builds stay on the machine (their way back is ~40 MB of a call's output).
      [ -f "$work/nccl-build.packed" ] || [ "${NCCL_PACK:-1}" = 0 ] || { pack_nccl_builds; touch "$work/nccl-build.packed"; }
    fi
    # RANKS_VENDOR_AS="2.17.1 2.18.1": where no pinned build of that release is here, NVIDIA's
    # wheel build of the same release (a vendor entry carried in the bundle) stands in under
    # its name; the run's provenance keeps each library's path and SHA-256.
    for v in ${RANKS_VENDOR_AS:-}; do
      [ -e "$HANGBENCH_NCCL_CACHE/$v/lib/libnccl.so.2" ] && continue
      entry=$(vendor_entry "$v")
      [ -n "$entry" ] && ln -sfn "$entry" "$HANGBENCH_NCCL_CACHE/$v" && say "ranks: $v is NVIDIA's wheel build ($entry)"
    done
    ranks_run=${RANKS_RUN:-ranks}   # the run's folder under the work dir (two runs: two names)
    run_args=(run --matrix "$repo/workloads/ddp_abort/matrix-ranks.toml" --out "$work/$ranks_run" --progress plain "${run_sets[@]}"
              ${RANKS_TRIALS:+--trials "$RANKS_TRIALS"})
    for f in ${RANKS_FILTERS:-placement=shared-gpu}; do run_args+=(--filter "$f"); done
    [ "$part" = ranks-resume ] && run_args=(run --resume --out "$work/$ranks_run" --progress plain)
    # STOP_AT (seconds after the part's start) bounds the run by what the call has left.
    bound=${RANKS_BOUND:-480}
    [ -n "${STOP_AT:-}" ] && bound=$(( STOP_AT - ($(date +%s) - t0) ))
    say "ranks matrix: bounded at ${bound}s"
    timeout --signal=TERM --kill-after=20 "$bound" "$hb" "${run_args[@]}" >> "$work/logs/ranks-run.log" 2>&1
    say "ranks matrix: exit $?"
    cells_summary "$work/$ranks_run/report.json"
    pack "$ranks_run" "$ranks_run" logs ;;
  torchrun4)
    # Issue 26: a plain PyTorch DDP script at 4 torchrun ranks on the one GPU, over 2.17.1,
    # its backport and torch's own NCCL; then validate --check ddp --ranks 2 of 2.18.1.
    # TORCHRUN_RESUME=1: continue the run an earlier call on this (warm) machine left.
    torchrun_args=(run --matrix "$repo/workloads/ddp_python/matrix-torchrun.toml"
                   --out "$work/torchrun4" "${run_sets[@]}" --progress plain ${TORCHRUN_TRIALS:+--trials "$TORCHRUN_TRIALS"})
    for f in ${TORCHRUN_FILTERS:-placement=shared-gpu}; do torchrun_args+=(--filter "$f"); done
    [ "${TORCHRUN_RESUME:-0}" = 1 ] && torchrun_args=(run --resume --out "$work/torchrun4" --progress plain)
    timeout --signal=TERM --kill-after=20 "${TORCHRUN_BOUND:-300}" "$hb" "${torchrun_args[@]}" >> "$work/logs/torchrun4-run.log" 2>&1
    say "torchrun4 matrix: exit $?"
    cells_summary "$work/torchrun4/report.json"
    mkdir -p "$work/validate"
    [ "${TORCHRUN_VALIDATE:-1}" = 1 ] && validate_one "ddp ranks=2 2.18.1" "$HANGBENCH_NCCL_CACHE/2.18.1/lib/libnccl.so.2" "$work/validate/ddp-ranks2-2.18.1"       --check ddp --ranks 2 --placement shared-gpu
    pack torchrun4 torchrun4 validate logs ;;
  nccl-build) start_nccl_build ;;
  watchdog-smoke)
    # Issue 26: the watchdog teardown at world size 2 over a fixed build, once per --stall
    # (WATCHDOG_STALLS, default missing-rank): 0 when the abort returns, 124 when it hung.
    d="$work/watchdog-smoke"; mkdir -p "$d"
    for stall in ${WATCHDOG_STALLS:-missing-rank}; do
      for v in ${WATCHDOG_BUILDS:-2.17.1+backport}; do
        mkdir -p "$d/$stall-$v"
        ( cd "$d/$stall-$v" && HANGBENCH_TRIAL_DIR="$d/$stall-$v" HANGBENCH_PHASE_FILE="$d/$stall-$v/phases.jsonl" \
            timeout --signal=KILL "${WATCHDOG_BOUND:-45}" mpirun --allow-run-as-root --oversubscribe -np 2 \
            -x HANGBENCH_TRIAL_DIR -x HANGBENCH_PHASE_FILE -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH \
            "$HANGBENCH_WORKLOADS_DIR/ddp_abort/ddp_abort" --backend=direct \
            --nccl-lib="$HANGBENCH_NCCL_CACHE/$v/lib/libnccl.so.2" --placement=shared-gpu --teardown=watchdog \
            --stall="$stall" --workers=after --epochs=1 --steps=4 --collective-timeout=1.0 > "$d/$stall-$v/out.log" 2>&1 )
        say "watchdog smoke $stall $v: exit $? (0: the abort returned; 137: killed after ${WATCHDOG_BOUND:-45} s)"
        grep -h "stall\|teardown done\|watchdog" "$d/$stall-$v/out.log" | head -6 | tee -a "$work/logs/plan-$part.log"
      done
    done
    pack watchdog-smoke watchdog-smoke logs ;;
  nccl-wait) wait_nccl_build "${NCCL_WAIT:-300}" ;;
  background)
    # Another part ($3) in its own session, outliving this call on a warm machine, so that
    # the next calls (carrying vendor parts, say) overlap it; wait-background brings it back.
    bg=${3:?background needs the part to run}
    rm -f "$work/bg-$bg.done"; mkdir -p "$work/bg-out-$bg"
    OUT="$work/bg-out-$bg" setsid bash -c '"$@"; echo $? > "'"$work/bg-$bg.done"'"' bash \
      bash "$0" "$bundle" "$bg" > "$work/logs/bg-$bg.log" 2>&1 < /dev/null &
    say "background: $bg started" ;;
  wait-background)
    # Waits (BG_WAIT s, default 540) for a background part, then brings back what it packed.
    bg=${3:?wait-background needs the part}; waited=0
    while [ ! -f "$work/bg-$bg.done" ] && [ $waited -lt "${BG_WAIT:-540}" ]; do sleep 5; waited=$((waited + 5)); done
    say "background $bg: $([ -f "$work/bg-$bg.done" ] && echo "exit $(cat "$work/bg-$bg.done")" || echo "still running after ${waited}s")"
    cp -a "$work/bg-out-$bg/." "$out/" 2>/dev/null; cp "$work/logs/bg-$bg.log" "$work/logs/plan-$bg.log" "$out/" 2>/dev/null ;;
  *) say "unknown part '$part' (background, wait-background, nccl-build, nccl-wait, pp4, pp4-resume, ranks, ranks-resume, torchrun4, teardown, ddp, ddp-finish, diagnose, diagnose-python, spawn, validate, reports, pipeline, pp-resume, torchrun, vendor-check, vendor-carry, pp-build, pp-smoke, sweep, sweep-ranks, catalog, catalog-remedy, fresh-verdict)"; exit 2 ;;
esac
say "end"
pack logs logs
