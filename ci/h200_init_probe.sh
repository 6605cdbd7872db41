#!/usr/bin/env bash
# Where a fresh verdict's time goes on the GPU machine: N copies of nccl_teardown
# started at once on one GPU (as validate starts its 21 trials), each writing its
# phases; for each configuration, the seconds from launch to device_ready (CUDA
# context), init_done (NCCL init) and teardown_end, as median and max over the
# copies. While the widest configuration initialises, every thread's kernel wait
# channel and CPU time are sampled once, to tell a shared driver lock from CPU
# contention.
#
#   ci/h200_init_probe.sh WORKLOAD LIBNCCL OUT_DIR [CONFIG...]
#
# A CONFIG is "N" or "N:ENV=VALUE,ENV=VALUE" or "N:--workload-option", e.g.
# 21:--sync=blocking or 21:CUDA_DEVICE_MAX_CONNECTIONS=1. Writes OUT_DIR/probe.tsv
# (one line per copy) and OUT_DIR/summary.txt; prints the summary.
set -uo pipefail
workload=$1 lib=$2 out=$3; shift 3
configs=("$@"); [ ${#configs[@]} -gt 0 ] || configs=(1 1 7 21)
mkdir -p "$out"
printf 'config\tcopy\texit\tlaunch\tdevice_ready\tinit_done\tteardown_end\n' > "$out/probe.tsv"
: > "$out/summary.txt"

sample_waits() {   # every thread of every copy: comm, state, wchan, utime+stime ticks
  local when=$1 dir=$2
  for pid in $(pgrep -x nccl_teardown); do
    for t in /proc/$pid/task/*; do
      printf '%s %s %s %s %s\n' "$pid" "$(cat "$t/comm" 2>/dev/null)" "$(cut -d' ' -f3 "$t/stat" 2>/dev/null)" \
        "$(cat "$t/wchan" 2>/dev/null)" "$(awk '{print $14+$15}' "$t/stat" 2>/dev/null)"
    done
  done > "$dir/waits-$when.txt"
}

for i in "${!configs[@]}"; do
  config=${configs[$i]}
  n=${config%%:*}; extra=""; [ "$config" != "$n" ] && extra=${config#*:}
  envs=(); opts=()
  IFS=',' read -ra items <<< "$extra"
  for item in "${items[@]}"; do
    case $item in --*) opts+=("$item") ;; ?*) envs+=("$item") ;; esac
  done
  dir="$out/config-$i"; mkdir -p "$dir"
  launch=$(date +%s.%N)
  pids=()
  for c in $(seq "$n"); do
    env "${envs[@]}" HANGBENCH_PHASE_FILE="$dir/phases-$c.jsonl" \
      "$workload" --nccl-lib="$lib" --teardown=abort --workers-forked=after "${opts[@]}" \
      > "$dir/out-$c.log" 2>&1 &
    pids+=($!)
  done
  if [ "$n" -ge 16 ]; then sleep 1.5; sample_waits 1.5s "$dir"; fi
  for c in $(seq "$n"); do
    wait "${pids[$((c - 1))]}"; echo "$c $?" >> "$dir/exits.txt"
  done
  python3 - "$config" "$launch" "$dir" "$n" >> "$out/probe.tsv" <<'EOF'
import json, sys
config, launch, folder, n = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
exits = dict(line.split() for line in open(f"{folder}/exits.txt"))
for c in range(1, n + 1):
    t = {}
    try:
        for line in open(f"{folder}/phases-{c}.jsonl"):
            j = json.loads(line)
            if "phase" in j: t[j["phase"]] = j["t"] - launch
    except OSError:
        pass
    f = lambda k: f"{t[k]:.3f}" if k in t else "-"
    print(f"{config}\t{c}\t{exits.get(str(c), '?')}\t0\t{f('device_ready')}\t{f('init_done')}\t{f('teardown_end')}")
EOF
done

python3 - "$out/probe.tsv" > "$out/summary.txt" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("config\tcopies\tfailed\tdevice_ready median/max\tinit_done median/max\tteardown_end median/max")
seen = []
for r in rows:
    if r["config"] not in seen: seen.append(r["config"])
for config in seen:
    rs = [r for r in rows if r["config"] == config]
    def span(key):
        v = [float(r[key]) for r in rs if r[key] != "-"]
        return f"{statistics.median(v):.2f}/{max(v):.2f}" if v else "-"
    failed = sum(r["exit"] != "0" for r in rs)
    print(f"{config}\t{len(rs)}\t{failed}\t{span('device_ready')}\t{span('init_done')}\t{span('teardown_end')}")
EOF
cat "$out/summary.txt"
