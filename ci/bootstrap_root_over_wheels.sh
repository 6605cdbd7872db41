#!/usr/bin/env bash
# NCCL's bootstrap root against a connection that is no rank's, over every NVIDIA NCCL wheel pip
# lists (nvidia-nccl-cu11, -cu12, -cu13), on a CPU machine: the root needs no GPU
# (catalog/nccl-bootstrap-silent-connection.toml). One wheel at a time is downloaded and its
# libnccl.so.2 loaded by workloads/nccl_bootstrap_silent/root_probe.py once per intruder mode
# (silent, closed, wrong-magic, none); each time a rank's bootstrap connection follows, and
# `hangbench diagnose --tree PID --stacks --json` reads the process 1.5 s later.
#   ci/bootstrap_root_over_wheels.sh OUT_DIR [HANGBENCH]
# Writes OUT_DIR/probes.jsonl (one line per wheel: package, release, wheel and library SHA-256,
# and per mode the findings' rules, whether nccl-bootstrap-silent-peer named the intruder, the
# root thread's innermost NCCL frames, whether the root thread is still there, whether the
# rank's connection was refused, and the bytes of it the root left unread), OUT_DIR/machine.txt
# and OUT_DIR/README.md (ci/bootstrap_root_table.py). Resumes: a wheel already in probes.jsonl
# is skipped. A library whose unique id the probe cannot read (NCCL before 2.16 laid its handle
# out otherwise) is recorded as not judged, with the probe's reason.
# Env: PACKAGES ("11 12 13"), MODES ("silent closed wrong-magic none"; silent and none are needed).
# Exit 0 done; 2 usage; 3 pip, the probe or diagnose failed (the line says which wheel).
set -euo pipefail
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 && $1 != -* ]] || usage
out=$1
repo=$(cd "$(dirname "$0")/.." && pwd)
hangbench=${2:-$repo/build/harness/hangbench}
[[ -x $hangbench ]] || { echo "bootstrap_root_over_wheels: $hangbench is not built (cmake --build build)" >&2; exit 2; }
probe=$repo/workloads/nccl_bootstrap_silent/root_probe.py
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
probe_pid=
cleanup() { [[ -n $probe_pid ]] && kill -KILL -- "-$probe_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
{
  echo "hangbench $("$hangbench" --version)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(uname -m), $(nproc) cores, no GPU (the bootstrap root needs none), $(python3 --version)"
  echo "pip: $(pip --version | cut -d' ' -f1-2)"
} > "$out/machine.txt"

# probe_once LIB MODE: runs the probe, diagnoses it, writes $work/MODE.json (diagnose's JSON)
# and $work/MODE.ready (the probe's line).
probe_once() {
  local lib=$1 mode=$2
  setsid python3 "$probe" --nccl-lib "$lib" --intruder "$mode" > "$work/$mode.ready" 2> "$work/$mode.err" &
  probe_pid=$!
  for _ in $(seq 200); do [[ -s $work/$mode.ready ]] && break; kill -0 "$probe_pid" 2>/dev/null || break; sleep 0.1; done
  if [[ ! -s $work/$mode.ready ]]; then
    wait "$probe_pid"; local rc=$?; probe_pid=
    # 3: the library makes no id whose root the probe can read (NCCL before 2.16's handle): not judged.
    [[ $rc -eq 3 ]] && { tail -1 "$work/$mode.err" > "$work/not-judged"; return 0; }
    echo "bootstrap_root_over_wheels: the probe ($mode) of $lib did not start: $(tail -1 "$work/$mode.err")" >&2
    return 3
  fi
  # Its second line comes 1.5 s after the rank's connection: the bytes the root left unread.
  for _ in $(seq 50); do [[ $(wc -l < "$work/$mode.ready") -ge 2 ]] && break; sleep 0.1; done
  local pid; pid=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["pid"])' "$work/$mode.ready")
  timeout 60 "$hangbench" diagnose --tree "$pid" --stacks --json > "$work/$mode.json" 2> "$work/$mode.diag.err" || true
  kill -KILL -- "-$probe_pid" 2>/dev/null || true
  wait "$probe_pid" 2>/dev/null || true
  probe_pid=
  [[ -s $work/$mode.json ]] || { echo "bootstrap_root_over_wheels: diagnose of $lib ($mode) wrote nothing" >&2; return 3; }
}

. "$repo/ci/lib/each_nvidia_wheel.sh"

# probe_wheel PACKAGE VERSION WHEEL LIB: one line of probes.jsonl.
probe_wheel() {
  local package=$1 version=$2 wheel=$3 lib=$4
  local mode
  for mode in ${MODES:-silent closed wrong-magic none}; do
    [[ -f $work/not-judged ]] || probe_once "$lib" "$mode" || return 3
  done
  python3 - "$package" "$version" "$wheel" "$work" "$lib" ${MODES:-silent closed wrong-magic none} >> "$out/probes.jsonl" <<'PY' || return 3
import hashlib, json, os, sys
package, version, wheel, work, lib = sys.argv[1:6]
modes = sys.argv[6:]

def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()

if os.path.exists(f"{work}/not-judged"):
    print(json.dumps({"package": package, "release": version, "wheel": wheel, "wheel_sha256": sha(f"{work}/{wheel}"),
                      "library_sha256": sha(lib), "not_judged": open(f"{work}/not-judged").read().strip()}))
    sys.exit(0)

def run(mode):
    lines = open(f"{work}/{mode}.ready").read().splitlines()
    ready = json.loads(lines[0])
    later = json.loads(lines[1]) if len(lines) > 1 else {}
    d = json.load(open(f"{work}/{mode}.json"))
    found = [f for f in d.get("findings", []) if f.get("rule") == "nccl-bootstrap-silent-peer"]
    root, root_alive = [], False
    for p in d.get("processes", []):
        for t in (p.get("stacks") or {}).get("threads", []):
            names = [f if isinstance(f, str) else f.get("function", "") for f in t.get("functions", t.get("frames", []))]
            if any("bootstrapRoot" in n for n in names):
                root_alive = True
                inner = [n for n in names if "socket" in n.lower() or "bootstrap" in n]
                root = inner[:4]
    return {"rules": sorted({f.get("rule") for f in d.get("findings", [])}),
            "silent_peer_found": bool(found),
            "names_the_intruder": bool(found) and ready["intruder_pid"] in found[0].get("pids", []),
            "root_frames": root, "root_alive": root_alive, "rank_connect": ready.get("rank_connect"),
            "rank_bytes_unread": later.get("rank_bytes_unread")}

record = {"package": package, "release": version, "wheel": wheel, "wheel_sha256": sha(f"{work}/{wheel}"),
          "library_sha256": sha(lib)}
record.update({mode: run(mode) for mode in modes})
print(json.dumps(record))
PY
  echo "$package $version: $(tail -1 "$out/probes.jsonl" | cut -c1-40000 | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["not_judged"] if "not_judged" in j else " ".join("%s: root %s, rank %s" % (m, "there" if j[m]["root_alive"] else "gone", j[m]["rank_connect"]) for m in ("silent", "closed", "wrong-magic", "none") if m in j))')" >&2
}
each_nvidia_wheel bootstrap_root_over_wheels "$out" "$out/probes.jsonl" "$work" probe_wheel || exit 3
python3 "$repo/ci/bootstrap_root_table.py" "$out" > "$out/README.md"
