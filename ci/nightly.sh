#!/usr/bin/env bash
# The nightly job: build (or reuse) hangbench, run the standard matrices, write
# JUnit/Markdown/HTML into OUT, append every run to the history store and check
# tonight against the previous nights. docs/nightly.md describes it.
#
#   ci/nightly.sh [--gpu] [--resume] [--history FILE] [--out DIR]
#
# --gpu        also build or reuse the NCCL variants and run the GPU matrices the
#              machine allows (nvidia-smi -L: DDP abort and PP on 1 GPU, PP4 on 4+)
# --resume     continue the runs a stopped job left unfinished in OUT (a run
#              already complete is reported and checked again, not rerun)
# --history    the persistent history store (default .cache/hangbench-history.sqlite)
# --out        artifacts folder (default .cache/nightly-out)
#
# Environment:
#   HANGBENCH          a built hangbench binary to reuse (else: cmake preset build)
#   NIGHTLY_MATRICES   space-separated matrix files replacing the standard set; an entry
#                      FILE::axis=value,axis=value runs only those cells (run --filter;
#                      values of one axis are alternatives), e.g. the PP4 pair below
#   NIGHTLY_TRIALS     trials per cell for every matrix (default: the matrix's own)
#   NIGHTLY_RUN_SET    "KEY=VALUE ..." set on every matrix of a fresh run (run --set),
#                      e.g. "stacks=false"; a resumed run keeps the sets it started with
#   NIGHTLY_NIGHTS     previous nights pooled by `history check` (default 14)
#   NIGHTLY_ALPHA      significance level of the regression test (default 0.01)
#   NIGHTLY_NCCL_BUILD_ARGS  extra arguments of `hangbench nccl build` (--gpu)
#   NIGHTLY_TORCH_LIB  libtorch_cuda.so, for the compat shim of the c10d cells (--gpu)
#   NIGHTLY_RUN_TIMEOUT  seconds one matrix may run; then it is stopped like ^C
#                      (reports written, marked interrupted, appended to the history)
#   NIGHTLY_WATCH      a user's training command (split on spaces; name a script for
#                      anything else) run after the matrices under `hangbench watch`
#                      (docs/watch.md): its evidence in OUT/watch-evidence, its events
#                      kept beside the history (watch-events.jsonl) and listed on history.md
#   NIGHTLY_WATCH_IDLE, NIGHTLY_WATCH_KILL_AFTER  watch's --idle (300) and --kill-after (60)
#
# Exit: 0 all good; 1 an expectation contradicted, a regression found or the
#       watched command hung; 2 usage error; 3 infrastructure error (build, a run
#       that could not run, a watched command that failed).
set -uo pipefail

# The header comment above, without its '#' marks.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
GPU=0
RESUME=0
HISTORY="$ROOT/.cache/hangbench-history.sqlite"
OUT="$ROOT/.cache/nightly-out"
while [ $# -gt 0 ]; do
  case "$1" in
    --gpu) GPU=1 ;;
    --resume) RESUME=1 ;;
    --history) [ $# -ge 2 ] || usage; HISTORY="$2"; shift ;;
    --out) [ $# -ge 2 ] || usage; OUT="$2"; shift ;;
    -h|--help) usage ;;
    *) echo "nightly: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
NIGHTS="${NIGHTLY_NIGHTS:-14}"
ALPHA="${NIGHTLY_ALPHA:-0.01}"
mkdir -p "$OUT/runs" "$OUT/junit" "$OUT/reports" "$(dirname "$HISTORY")" || exit 3
log() { echo "nightly: $*" >&2; }

# --- build or reuse -----------------------------------------------------------
PRESET=default; [ "$GPU" = 1 ] && PRESET=full
if [ -n "${HANGBENCH:-}" ]; then
  [ -x "$HANGBENCH" ] || { log "HANGBENCH=$HANGBENCH is not an executable"; exit 2; }
  HB="$HANGBENCH"
else
  # Both presets build in build/ (full adds the libtorch and CUDA workloads); the
  # default build preset builds only the first run's targets, "all" every GPU-free one.
  BUILD_DIR="$ROOT/build"; BUILD_PRESET=all; [ "$PRESET" = full ] && BUILD_PRESET=full
  # The full preset compiles the libtorch workloads against the pinned torch wheel.
  if [ "$PRESET" = full ]; then bash "$ROOT/ci/setup-torch.sh" || { log "torch set-up failed"; exit 3; }; fi
  configured() { [ -f "$BUILD_DIR/build.ninja" ] &&
    { [ "$PRESET" = default ] || grep -q '^HANGBENCH_WITH_TORCH:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; }; }
  (cd "$ROOT" && { configured || cmake --preset "$PRESET"; } &&
     cmake --build --preset "$BUILD_PRESET") || { log "build failed"; exit 3; }
  HB="$BUILD_DIR/harness/hangbench"
  export HANGBENCH_WORKLOADS_DIR="${HANGBENCH_WORKLOADS_DIR:-$BUILD_DIR/workloads}"
fi
log "hangbench: $HB ($("$HB" --version 2>/dev/null))"

# --- the matrices -------------------------------------------------------------
MATRICES=()
PP4_PAIR="mpi=ucx-tcp,loading=LAZY,cold_call=launch,progress=native,progress=none"
if [ -n "${NIGHTLY_MATRICES:-}" ]; then
  read -r -a MATRICES <<< "$NIGHTLY_MATRICES"
else
  MATRICES=("$ROOT/workloads/socket_teardown/matrix.toml" "$ROOT/workloads/mpi_progress/matrix-ci.toml")
  if [ "$GPU" = 1 ]; then
    GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    log "$GPUS GPU(s)"
    if [ "${GPUS:-0}" -ge 1 ]; then
      # NCCL variants: built once, then reused from the cache (a CI cache keeps it).
      "$HB" nccl build ${NIGHTLY_NCCL_BUILD_ARGS:-} || { log "hangbench nccl build failed"; exit 3; }
      # The DDP matrix reads {nccl_cache}/<variant>/lib/libnccl.so.2: link the
      # cached variants under their names.
      NCCL_CACHE_ROOT="${HANGBENCH_NCCL_CACHE:-$ROOT/.cache/nccl}"
      LAYOUT="$OUT/nccl"; mkdir -p "$LAYOUT"
      for dir in "$NCCL_CACHE_ROOT"/variants/*/; do
        [ -f "$dir/manifest.json" ] || continue
        name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["variant"])' "$dir/manifest.json")
        ln -sfn "$dir" "$LAYOUT/$name"
      done
      if [ -n "${NIGHTLY_TORCH_LIB:-}" ] && [ -e "$LAYOUT/2.17.1/lib/libnccl.so.2" ]; then
        mkdir -p "$LAYOUT/shim"
        "$HB" nccl shim --torch-lib "$NIGHTLY_TORCH_LIB" --nccl "$LAYOUT/2.17.1/lib/libnccl.so.2" \
          -o "$LAYOUT/shim/libnccl_compat_shim.so" || { log "compat shim failed"; exit 3; }
      fi
      export HANGBENCH_NCCL_CACHE="$LAYOUT"
      # libtorch's version goes into every run's provenance (HANGBENCH_* is recorded),
      # so the history marks a libtorch change between nights.
      TORCH_VERSION=$(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || true)
      [ -n "$TORCH_VERSION" ] && export HANGBENCH_TORCH_VERSION="$TORCH_VERSION"
      MATRICES+=("$ROOT/workloads/ddp_abort/matrix-h200.toml" "$ROOT/workloads/pp_pipeline/matrix-1gpu.toml")
      # The PP4 cycle with real NCCL, four stages on one GPU (one NCCL host each): the
      # cell pair that says whether the native progress thread still breaks it.
      [ "${GPUS:-0}" -lt 4 ] && MATRICES+=("$ROOT/workloads/pp_pipeline/matrix-pp4.toml::$PP4_PAIR,placement=shared-gpu")
    fi
    [ "${GPUS:-0}" -ge 4 ] && MATRICES+=("$ROOT/workloads/pp_pipeline/matrix-pp4.toml::$PP4_PAIR,placement=gpu-per-rank")
  fi
fi

# --- run, report, append, check -----------------------------------------------
WORST=0   # the job's exit code: 1 beats 3 beats 2 beats 0
note_rc() {
  local rc=$1
  case "$rc" in
    0) ;;
    1) WORST=1 ;;
    2) [ "$WORST" = 0 ] && WORST=2 ;;
    *) [ "$WORST" != 1 ] && WORST=3 ;;
  esac
}
SUMMARY="$OUT/nightly.md"
printf '# hangbench nightly %s\n\n| matrix | run | run exit | history check |\n| --- | --- | --- | --- |\n' \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$SUMMARY"
for entry in "${MATRICES[@]}"; do
  matrix=${entry%%::*}
  filters=()
  name_suffix=""
  if [ "$entry" != "$matrix" ]; then
    IFS=, read -r -a pairs <<< "${entry#*::}"
    for pair in "${pairs[@]}"; do filters+=(--filter "$pair"); done
    name_suffix="-$(printf '%s' "${entry#*::}" | sha256sum | cut -c1-8)"
  fi
  [ -f "$matrix" ] || { log "no matrix $matrix"; note_rc 2; continue; }
  name="$(basename "$(dirname "$matrix")")-$(basename "$matrix" .toml)$name_suffix"
  run_dir="$OUT/runs/$name"
  run_ids=""
  log "running $matrix -> $run_dir"
  bound=()
  [ -n "${NIGHTLY_RUN_TIMEOUT:-}" ] && bound=(timeout --signal=TERM --kill-after=60 "$NIGHTLY_RUN_TIMEOUT")
  # With --resume, a run folder that already holds a store is continued (its
  # unfinished run) or, when every run in it is complete, only reported again.
  sets=(); for kv in ${NIGHTLY_RUN_SET:-}; do sets+=(--set "$kv"); done
  command=(run --matrix "$matrix" --out "$run_dir" "${filters[@]}" "${sets[@]}" ${NIGHTLY_TRIALS:+--trials "$NIGHTLY_TRIALS"})
  if [ "$RESUME" = 1 ] && [ -f "$run_dir/hangbench.sqlite" ]; then
    if "$HB" report --list --json --out "$run_dir" |
        python3 -c 'import json, sys; sys.exit(0 if any(r["status"] != "complete" for r in json.load(sys.stdin)["runs"]) else 1)'; then
      log "$name: resuming its unfinished run"; command=(run --resume --out "$run_dir")
    else
      log "$name: complete already, reported again"; command=(report --out "$run_dir"); bound=()
    fi
  fi
  "${bound[@]}" "$HB" "${command[@]}" >> "$OUT/reports/$name.log" 2>&1
  run_rc=$?
  # Stopped by the bound: hangbench wrote its reports and marked the run interrupted.
  if [ "$run_rc" = 124 ]; then log "$name: stopped after NIGHTLY_RUN_TIMEOUT=${NIGHTLY_RUN_TIMEOUT}s"; run_rc=3; fi
  note_rc "$run_rc"
  for ext in xml:junit md:reports html:reports; do
    [ -f "$run_dir/report.${ext%%:*}" ] && cp "$run_dir/report.${ext%%:*}" "$OUT/${ext##*:}/$name.${ext%%:*}"
  done
  check_rc="-"
  if [ -f "$run_dir/hangbench.sqlite" ]; then
    run_ids=$("$HB" history append --store "$HISTORY" "$run_dir/hangbench.sqlite") || { note_rc 3; run_ids=""; }
    for run_id in $run_ids; do
      # The history page links each night to this copy (kept in OUT night after night).
      [ -f "$run_dir/report.html" ] && cp "$run_dir/report.html" "$OUT/reports/$run_id.html"
      "$HB" history check --store "$HISTORY" --run "$run_id" --nights "$NIGHTS" --alpha "$ALPHA" \
        --junit "$OUT/junit/$name-history-$run_id.xml" >> "$OUT/reports/$name-history-check.txt"
      check_rc=$?
      note_rc "$check_rc"
    done
  fi
  echo "| $name | $(echo $run_ids) | $run_rc | $check_rc |" >> "$SUMMARY"
done

# --- a user's training command under hangbench watch --------------------------
WATCH_EVENTS="$(dirname "$HISTORY")/watch-events.jsonl"   # night after night, beside the history
if [ -n "${NIGHTLY_WATCH:-}" ]; then
  read -r -a watched <<< "$NIGHTLY_WATCH"
  night_events="$OUT/watch-events.jsonl"
  rm -f "$night_events"
  log "watching ${watched[*]}"
  "$HB" watch --idle "${NIGHTLY_WATCH_IDLE:-300}" --kill-after "${NIGHTLY_WATCH_KILL_AFTER:-60}" \
    --job "nightly-$(date -u +%Y-%m-%dT%H:%M:%SZ)" --evidence "$OUT/watch-evidence" --events "$night_events" \
    -- "${watched[@]}" >> "$OUT/reports/watch.log" 2>&1
  watch_rc=$?
  [ -f "$night_events" ] && cat "$night_events" >> "$WATCH_EVENTS"
  hangs=$(grep -c '"event":"hang"' "$night_events" 2>/dev/null || true)
  echo "| watch: ${watched[0]##*/} | ${hangs:-0} hang(s) | $watch_rc | - |" >> "$SUMMARY"
  case "$watch_rc" in
    0) ;;
    124) log "the watched command hung: evidence in $OUT/watch-evidence"; note_rc 1 ;;
    *) log "the watched command exited $watch_rc"; note_rc 3 ;;
  esac
fi

"$HB" history --store "$HISTORY" --nights "$NIGHTS" --alpha "$ALPHA" --format html \
  --report-link 'reports/{run}.html' --out "$OUT/history.html" || note_rc 3
"$HB" history --store "$HISTORY" --nights "$NIGHTS" --format markdown --out "$OUT/history.md" || note_rc 3
# The watched commands' hangs of every night, after the matrices' history.
if [ -s "$WATCH_EVENTS" ] && [ -f "$OUT/history.md" ]; then
  python3 - "$WATCH_EVENTS" >> "$OUT/history.md" <<'PY' || note_rc 3
import datetime, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
hangs = [e for e in rows if e.get("event") == "hang"]
print("\n## Watched commands (hangbench watch)\n")
print("| night | job | shape | catalog | seconds since progress | ranks | action |")
print("| --- | --- | --- | --- | --: | --- | --- |")
for e in hangs[-50:]:
    when = datetime.datetime.fromtimestamp(e["t"], datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    ranks = ",".join(str(r) for r in e.get("ranks", [])) or "-"
    print(f"| {when} | {e['job']} | {e['shape']} | {e.get('catalog_id') or '-'} | "
          f"{e['seconds_since_progress']} | {ranks} | {e.get('action', '')} |")
if not hangs:
    print("No hang in any watched command.")
PY
fi
log "artifacts in $OUT; history $HISTORY; exit $WORST"
exit "$WORST"
