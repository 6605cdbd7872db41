#!/usr/bin/env bash
# Issue 39 on the GPU machine, in one call: the catalog's entries reproduced by
# nccl_peer_death, nccl_first_collective and nccl_bootstrap_silent over NVIDIA's wheels.
#   smoke:    the peer-death workload once per chosen release, its phases and times;
#   diagnose: live diagnosis of one hung trial of each peer-death entry (the rule and its attribution);
#   sweep:    `sweep --hang` of SWEEP_HANGS over every carried wheel: one release x known-hang table;
#   matrix:   the matrices of MATRICES (the remedies; workloads/nccl_peer_death/matrix.toml by default);
#   live:     one hung trial of each of LIVE (first-collective, multi-comm, idle-peer, bootstrap-silent; abort-thread
#             on request) diagnosed live
#             with stacks, its JSON kept for `diagnose --from`.
#
#   ci/h200_catalog.sh pack BUNDLE VENDOR_PARTS_DIR   (here, from a clean commit's build)
#   ci/h200_catalog.sh run BUNDLE                     (there; results under $OUT)
#
# VENDOR_PARTS_DIR is ci/pack_vendor_libs.sh's output: its archives are restored and
# packed again as one stream (KEEP_VENDOR=1: an earlier pack's stream kept). Env (run): BUDGET (seconds the call may use, 600),
# SWEEP_TRIALS (4), SWEEP_REFERENCE_TRIALS (12), SWEEP_ALPHA (0.001), SWEEP_CONCURRENCY (12), SWEEP_TEARDOWN_TIMEOUT (the sweep's 8 s after the entry's phase), SWEEP_MAX_S (420), MATRIX_TRIALS (each matrix's own trials when unset),
# STEPS ("sweep diagnose matrix"; "loop" starts the background sweep, FINAL=1 waits for it, HOLD_S holds), SWEEP_HANGS (the peer-death entries by default),
# MATRICES (matrix files, relative to the repository, run one after the other), LIVE,
# NET_ERROR_RELEASE (2.27.7: the release nccl-net-error-swallowed is diagnosed live on).
# On a warm machine a second call adds its wheels to those the first one unpacked under
# /tmp/hb-cat, so calls can split the wheels.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?pack or run}
bundle=${2:?bundle folder}

if [ "$mode" = pack ]; then
  # One xz stream for the tools and one for the libraries (a dictionary larger than a
  # library: releases share most of their bytes), so that more fit in one call.
  parts=${3:?vendor parts folder}
  stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/tools/bin" "$stage/tools/lib" "$stage/vendor" "$bundle"
  strip -o "$stage/tools/bin/hangbench" "$repo/build/harness/hangbench"
  for w in nccl_peer_death nccl_first_collective nccl_bootstrap_silent nccl_launch_blocking nccl_teardown; do
    mkdir -p "$stage/tools/workloads/$w"
    strip -o "$stage/tools/workloads/$w/$w" "$repo/build/workloads/$w/$w"
  done
  for soname in libfmt.so.9 libtomlplusplus.so.3 libsqlite3.so.0 libelf.so.1 libdw.so.1 libseccomp.so.2; do
    cp -L "$(ldd "$repo/build/harness/hangbench" | awk -v s="$soname" '$1 == s {print $3}')" "$stage/tools/lib/$soname"
  done
  tar -C "$stage/tools" -cf - . | xz -T2 -9 > "$bundle/tools.tar.xz"
  # VENDOR_AS_IS=1: the part's archives travel as they are (bundle/vendor-parts/), no second
  # compression: slimmed releases share few bytes (2.21.5 and 2.22.3: 10.9 + 10.3 MB alone,
  # 21.2 MB in one stream with a 1 GiB dictionary), so the one stream saves nothing for them.
  rm -rf "$bundle/vendor-parts"
  if [ "${VENDOR_AS_IS:-0}" = 1 ]; then
    rm -f "$bundle/vendor.tar.xz"; mkdir -p "$bundle/vendor-parts"
    for archive in "$parts"/*/*.tar.xz "$parts"/*.tar.xz; do [ -f "$archive" ] && cp "$archive" "$bundle/vendor-parts/"; done
  # KEEP_VENDOR=1 keeps a bundle's vendor.tar.xz (five minutes of xz here) and renews the tools only.
  elif [ "${KEEP_VENDOR:-0}" != 1 ] || [ ! -f "$bundle/vendor.tar.xz" ]; then
    for archive in "$parts"/*/*.tar.xz "$parts"/*.tar.xz; do [ -f "$archive" ] && tar -C "$stage/vendor" -xJf "$archive"; done
    tar -C "$stage/vendor" -cf - . | xz -T1 --lzma2=preset=9e,dict=1024MiB > "$bundle/vendor.tar.xz"
  fi
  # SWEEP_FROM=DIR: an earlier call's sweep folder, carried so that a fresh machine resumes it.
  if [ -n "${SWEEP_FROM:-}" ]; then tar -C "$SWEEP_FROM" -cJf "$bundle/sweep.tar.xz" .; else rm -f "$bundle/sweep.tar.xz"; fi
  git -C "$repo" rev-parse HEAD > "$bundle/commit.txt"
  git -C "$repo" status --porcelain | grep -v '^??' > "$bundle/dirty.txt" || true
  du -sh "$bundle"/* "$bundle"; exit 0
fi

# The sweep in the background (STEPS "loop"): a process of its own session outlives the
# call that started it (until the machine is given back), so later calls carry more
# wheels while it sweeps. Each round sweeps every verified library with --resume (what
# earlier rounds finished is reused); it ends once a call has said FINAL=1 and a round
# has seen every library there is. Started from a copy of this file (a later call's
# working tree replaces the original under a running bash).
if [ "$mode" = loop ]; then
  work=/tmp/hb-cat; hb="$work/tools/bin/hangbench"
  log() { echo "[sweep-loop $(date -u +%H:%M:%S)] $*" >> "$work/logs/loop.log"; }
  hang_args=(); for h in ${SWEEP_HANGS:-all}; do hang_args+=(--hang "$h"); done
  touch "$work/swept-libraries.txt"
  while :; do
    ls "$HANGBENCH_NCCL_CACHE"/vendor/*/.verified 2>/dev/null | sed 's|/\.verified$|/lib/libnccl.so.2|' | sort -V \
      > "$work/loop-libraries.txt"
    n=$(wc -l < "$work/loop-libraries.txt")
    if cmp -s "$work/loop-libraries.txt" "$work/swept-libraries.txt"; then
      [ -f "$work/final" ] && { log "done: $n libraries"; touch "$work/sweep-done"; exit 0; }
      sleep 2; continue
    fi
    log "round over $n libraries"
    s=$(date +%s%N)
    "$hb" sweep "${hang_args[@]}" --list "$work/loop-libraries.txt" --resume \
      --trials "${SWEEP_TRIALS:-4}" --reference-trials "${SWEEP_REFERENCE_TRIALS:-12}" --alpha "${SWEEP_ALPHA:-0.001}" \
      --concurrency "${SWEEP_CONCURRENCY:-12}" --timeout 60 ${SWEEP_TEARDOWN_TIMEOUT:+--teardown-timeout "$SWEEP_TEARDOWN_TIMEOUT"} --out "$work/sweep" > "$work/sweep.md" 2>> "$work/sweep.err"
    rc=$?
    echo "round libraries=$n exit=$rc seconds=$(( ($(date +%s%N) - s) / 1000000 ))ms" >> "$work/sweep-timing.txt"
    log "round over $n libraries: exit $rc"
    cp "$work/loop-libraries.txt" "$work/swept-libraries.txt"   # exit 2 (a reference not yet here): wait for more
  done
fi

out=${OUT:-/tmp/hangbench-h200}; mkdir -p "$out"
work=/tmp/hb-cat; mkdir -p "$work/logs" "$work/tools"
t0=$(date +%s)
budget=${BUDGET:-600}   # seconds this call may use; each step checks what is left
left() { echo $(( budget - ($(date +%s) - t0) )); }
say() { echo "[h200-catalog +$(( $(date +%s) - t0 ))s] $*" | tee -a "$work/logs/plan.log"; }
# The tools once per bundle commit: a background sweep may be running them.
if [ "$(cat "$work/tools/commit.txt" 2>/dev/null)" != "$(cat "$bundle/commit.txt")" ]; then
  tar -C "$work/tools" -xJf "$bundle/tools.tar.xz" && cp "$bundle/commit.txt" "$work/tools/commit.txt"
fi
hb="$work/tools/bin/hangbench"
export LD_LIBRARY_PATH="$work/tools/lib"
export HANGBENCH_NCCL_CACHE="$work/nccl" HANGBENCH_WORKLOADS_DIR="$work/tools/workloads"
mkdir -p "$HANGBENCH_NCCL_CACHE/vendor"
[ -f "$bundle/vendor.tar.xz" ] && tar -C "$HANGBENCH_NCCL_CACHE/vendor" -xJf "$bundle/vendor.tar.xz"
for archive in "$bundle"/vendor-parts/*.tar.xz; do   # VENDOR_AS_IS: one archive per release, unpacked at once
  [ -f "$archive" ] && tar -C "$HANGBENCH_NCCL_CACHE/vendor" -xJf "$archive" &
done
wait
verify() {   # one library against its manifest's SHA-256, once per machine
  local entry=$1 want
  [ -f "$entry/.verified" ] && return
  want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["library_sha256"])' "$entry/manifest.json")
  if [ "$(sha256sum "$entry/lib/libnccl.so.2" | cut -d' ' -f1)" = "$want" ]; then touch "$entry/.verified"
  else say "SHA-256 mismatch: $entry"; rm -rf "$entry"; fi
}
for entry in "$HANGBENCH_NCCL_CACHE"/vendor/*/; do verify "$entry" & done
wait
ls "$HANGBENCH_NCCL_CACHE"/vendor/*/lib/libnccl.so.2 | sort -V > "$work/libraries.txt"
# Each release also as <cache>/<release> for the matrix's {nccl_cache}/{nccl}.
for entry in "$HANGBENCH_NCCL_CACHE"/vendor/*/; do
  rel=$(basename "$entry" | sed -E 's/^nvidia-nccl-cu[0-9]+-([0-9.]+(\.post[0-9]+)?)-[0-9a-f]+$/\1/')
  ln -sfn "$entry" "$HANGBENCH_NCCL_CACHE/$rel"
done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; "$hb" --version; nproc; date -u;
  echo "bundle commit $(cat "$bundle/commit.txt") dirty: $(wc -l < "$bundle/dirty.txt") tracked files"; } \
  > "$work/logs/machine.txt" 2>&1
say "machine: $(tr '\n' ' ' < "$work/logs/machine.txt"); $(wc -l < "$work/libraries.txt") libraries"
pd="$HANGBENCH_WORKLOADS_DIR/nccl_peer_death/nccl_peer_death"   # the smoke's workload
lib_of() { echo "$HANGBENCH_NCCL_CACHE/$1/lib/libnccl.so.2"; }
steps=${STEPS:-sweep diagnose matrix}
# Only what the steps wrote: the unpacked wheels under nccl/ are over a gigabyte.
pack() {
  local parts=()
  for p in logs libraries.txt loop-libraries.txt smoke sweep sweep.md sweep.err sweep-timing.txt matrix matrices diagnose live; do
    [ -e "$work/$p" ] && parts+=("$p")
  done
  tar -C "$work" -cJf "$out/catalog.tar.xz" "${parts[@]}" 2>/dev/null
}

# 1. Smoke: each release once, both ways, four at a time; phases and exit codes.
if [[ " $steps " == *" smoke "* ]]; then
  mkdir -p "$work/smoke"
  for rel in 2.19.3 2.22.3 2.23.4 2.25.1 2.26.2 2.27.7 2.28.3 2.28.9; do
    [ -f "$(lib_of "$rel")" ] || continue
    for mode in "--error-wait=5 --after-error=abort" "--error-wait=0 --after-error=exit"; do
      tag="$rel-$(echo "$mode" | tr -cd 'a-z0-9=' | cut -c1-40)"
      ( s=$(date +%s%N)
        HANGBENCH_PHASE_FILE="$work/smoke/$tag.phases" timeout -s KILL 30 "$pd" --nccl-lib="$(lib_of "$rel")" $mode \
          > "$work/smoke/$tag.out" 2>&1
        rc=$?; e=$(date +%s%N)
        echo "$rel [$mode] exit $rc in $(( (e - s) / 1000000 )) ms; last phase: $(grep '"phase"' "$work/smoke/$tag.phases" | tail -1 | cut -c1-60); error: $(grep -o '"async_error","value":"[^"]*"' "$work/smoke/$tag.phases" | head -1)" \
          >> "$work/smoke/summary.txt" ) &
      while [ "$(jobs -r | wc -l)" -ge 4 ]; do sleep 0.2; done
    done
  done
  wait
  sort -V "$work/smoke/summary.txt" -o "$work/smoke/summary.txt"
  say "smoke:"; cat "$work/smoke/summary.txt" | tee -a "$work/logs/plan.log"
  pack
fi

# 2. One hung trial of each shape of LIVE diagnosed with stacks, while it hangs
# (before the matrices and the sweep: the shortest step, and the one a cut-off call must not lose).
live_diagnose() {   # live_diagnose NAME WORKLOAD RELEASE PHASE ARGS...
  local name=$1 w=$2 rel=$3 phase=$4; shift 4
  local d="$work/${live_dir:-live}/$name"; mkdir -p "$d"
  [ -f "$(lib_of "$rel")" ] || { say "live $name: no $rel"; return; }
  [ "$(left)" -gt 45 ] || { say "live $name: no time left"; return; }
  # Under a shell that stays (two commands: bash does not exec the last): the ranks'
  # launcher, read with them, so that a killed rank counts as a missing rank of the job.
  HANGBENCH_PHASE_FILE="$d/phases.jsonl" setsid bash -c '"$0" "$@"; exit $?' \
    "$HANGBENCH_WORKLOADS_DIR/$w/$w" --nccl-lib="$(lib_of "$rel")" "$@" > "$d/job.log" 2>&1 &
  local job=$!
  for _ in $(seq 160); do   # until the phase, or until the job has ended (a failed start costs no 40 s)
    grep -q "\"$phase\"" "$d/phases.jsonl" 2>/dev/null && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.25
  done
  sleep "${LIVE_SETTLE:-4}"
  if ! kill -0 "$job" 2>/dev/null; then   # it ended: nothing hangs, nothing to diagnose
    say "live $name ($rel): the job ended before diagnose (last phase $(grep -o '"phase":"[a-z_0-9]*"' "$d/phases.jsonl" | tail -1)): no hang"
    wait "$job" 2>/dev/null; return
  fi
  local s; s=$(date +%s%N)
  timeout 60 "$hb" diagnose --tree "$job" --stacks --json > "$d/diagnose.json" 2> "$d/diagnose.err"
  say "live $name ($rel): exit $? in $(( ($(date +%s%N) - s) / 1000000 )) ms; last phase $(grep -o '"phase":"[a-z_0-9]*"' "$d/phases.jsonl" | tail -1)"
  "$hb" diagnose --from "$d/diagnose.json" > "$d/diagnose.txt" 2>&1
  sed -n 1,8p "$d/diagnose.txt" | cut -c1-220 | tee -a "$work/logs/plan.log"
  kill -KILL -- -"$job" 2>/dev/null; kill -KILL "$job" 2>/dev/null; wait "$job" 2>/dev/null
}
if [[ " $steps " == *" live "* ]]; then
  for l in ${LIVE:-first-collective multi-comm idle-peer bootstrap-silent}; do
    case "$l" in
      first-collective) live_diagnose first-collective nccl_first_collective 2.22.3 collective_begin --order=post-then-signal ;;
      multi-comm) live_diagnose multi-comm nccl_peer_death "${MULTI_COMM_RELEASE:-2.22.3}" abort_begin \
        --comms=2 --peer-death=killed-after-post --error-wait=5 --abort-order=each ;;
      idle-peer) live_diagnose idle-peer nccl_peer_death "${IDLE_PEER_RELEASE:-2.18.3}" abort_begin \
        --peer-death=idle --error-wait=5 ;;
      bootstrap-silent) live_diagnose bootstrap-silent nccl_bootstrap_silent "${BOOTSTRAP_RELEASE:-2.22.3}" init_begin \
        --intruder=silent ;;
      abort-thread) live_diagnose abort-thread nccl_peer_death "${ABORT_THREAD_RELEASE:-2.18.1}" abort_begin \
        --peer-death=killed-after-post --error-wait=5 --abort-from=thread ;;
    esac
  done
  pack
fi
# 3. The remedies: each matrix of MATRICES (abort vs leave on 2.25.1, wait for NCCL vs a
# timeout of one's own on 2.27.7, by default), one after the other, each bounded by what is left.
if [[ " $steps " == *" matrix "* ]]; then
  for m in ${MATRICES:-workloads/nccl_peer_death/matrix.toml}; do
    # Its workload's folder and its own name: two workloads' matrix.toml must not share a folder.
    name="$(basename "$(dirname "$m")")-$(basename "$m" .toml)"; dest="$work/matrices/$name"
    [ "$m" = workloads/nccl_peer_death/matrix.toml ] && dest="$work/matrix"   # where earlier calls kept it
    mkdir -p "$(dirname "$dest")"
    bound=$(( $(left) - 15 ))
    [ "$bound" -gt 20 ] || { say "matrix $name: no time left"; continue; }
    # A path relative to the repository: reports record --matrix as given, and this
    # machine's path is not part of the evidence.
    (cd "$repo" && timeout --signal=TERM --kill-after=5 "$bound" "$hb" run \
      --matrix "$m" --set stacks=false ${MATRIX_TRIALS:+--trials "$MATRIX_TRIALS"} \
      --out "$dest" --progress plain > "$work/logs/matrix-$name.log" 2>&1)
    say "matrix $name: exit $?"; tail -15 "$work/logs/matrix-$name.log" | tee -a "$work/logs/plan.log"
    pack
  done
fi

# 4. The entries over every carried wheel: one table, a column per entry. --resume: what
# this folder's earlier calls finished is reused (a cut-off sweep, or wheels carried in parts).
if [[ " $steps " == *" sweep "* ]]; then
  if [ -f "$bundle/sweep.tar.xz" ] && [ ! -d "$work/sweep" ]; then
    mkdir -p "$work/sweep" && tar -C "$work/sweep" -xJf "$bundle/sweep.tar.xz"
    say "sweep: resumed from the carried folder ($(ls "$work/sweep" | wc -l) entries)"
  fi
  s=$(date +%s%N)
  bound=$(( $(left) - 40 )); [ "$bound" -gt "${SWEEP_MAX_S:-420}" ] && bound=${SWEEP_MAX_S:-420}
  hang_args=(); for h in ${SWEEP_HANGS:-nccl-progress-abort-spin nccl-net-error-swallowed}; do hang_args+=(--hang "$h"); done
  timeout "$bound" "$hb" sweep "${hang_args[@]}" --list "$work/libraries.txt" --resume \
    --trials "${SWEEP_TRIALS:-4}" --reference-trials "${SWEEP_REFERENCE_TRIALS:-12}" --alpha "${SWEEP_ALPHA:-0.001}" \
    --concurrency "${SWEEP_CONCURRENCY:-12}" --timeout 60 ${SWEEP_TEARDOWN_TIMEOUT:+--teardown-timeout "$SWEEP_TEARDOWN_TIMEOUT"} --out "$work/sweep" \
    > "$work/sweep.md" 2> "$work/sweep.err"
  rc=$?; e=$(date +%s%N)
  echo "sweep ${hang_args[*]} exit=$rc seconds=$(( (e - s) / 1000000 ))ms" \
    >> "$work/sweep-timing.txt"
  say "sweep: exit $rc in $(( (e - s) / 1000000 )) ms"; head -30 "$work/sweep.md" | tee -a "$work/logs/plan.log"
  tail -5 "$work/sweep.err" | tee -a "$work/logs/plan.log"
  pack
fi

# 5. One hung trial of each peer-death entry diagnosed live, with stacks (under diagnose/).
if [[ " $steps " == *" diagnose "* ]]; then
  live_dir=diagnose live_diagnose progress-abort-spin nccl_peer_death 2.25.1 abort_begin --error-wait=5 --after-error=abort
  live_dir=diagnose live_diagnose net-error-swallowed nccl_peer_death "${NET_ERROR_RELEASE:-2.27.7}" peer_dead \
    --error-wait=0 --after-error=exit
  pack
fi

# 6. The background sweep: started once (STEPS "loop"); FINAL=1 tells it no more wheels come,
# and this call waits for its last round (as long as BUDGET allows).
if [[ " $steps " == *" loop "* ]]; then
  if ! pgrep -f "hb-cat/loop.sh loop" > /dev/null; then
    cp "$0" "$work/loop.sh"; rm -f "$work/sweep-done" "$work/final"
    SWEEP_HANGS="${SWEEP_HANGS:-all}" setsid nohup bash "$work/loop.sh" loop "$bundle" > "$work/logs/loop.out" 2>&1 < /dev/null &
    say "loop: started"
  fi
  [ "${FINAL:-0}" = 1 ] && touch "$work/final"
  if [ "${FINAL:-0}" = 1 ]; then
    while [ ! -f "$work/sweep-done" ] && [ "$(left)" -gt 25 ]; do sleep 2; done
  else   # HOLD_S: seconds this call keeps the machine busy sweeping before it returns
    end=$(( $(date +%s) + ${HOLD_S:-0} ))
    while [ "$(date +%s)" -lt "$end" ] && [ "$(left)" -gt 25 ]; do sleep 2; done
  fi
  say "loop: $(tail -2 "$work/logs/loop.log" 2>/dev/null | tr '\n' ' ')"
  pack
fi

say "done"
