#!/usr/bin/env bash
# Acceptance of issue 17: a two-rank socket cell launched through `srun` (the
# srun launcher, inside an sbatch allocation) hangs; `hangbench diagnose
# --slurm-job` names, for each rank, the holder of its connection with rank and
# host. The healthy cell before it leaves phases attributed to rank and host.
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/hb-slurm-diagnose.XXXXXX)
job=""
trap '[ -n "$job" ] && scancel "$job" 2>/dev/null; rm -rf "$work"' EXIT
host=$(hostname)
matrix="$HB_SOURCE_DIR/workloads/socket_teardown/matrix-srun.toml"

job=$(sbatch --parsable -n2 --output="$work/job.out" --export=ALL \
  --wrap "'$HB' run --matrix '$matrix' --out '$work/run' --format json") || fail "sbatch failed"
job=${job%%;*}

# Wait until both ranks of the hanging cell reported teardown_begin (bounded).
phases=""
deadline=$((SECONDS + 180))
while [ $SECONDS -lt $deadline ]; do
  phases=$(find "$work/run/trials" -path '*close-only*' -name phases.jsonl 2>/dev/null | head -n 1 || true)
  if [ -n "$phases" ] && [ "$(grep -c '"phase":"teardown_begin"' "$phases")" -ge 2 ]; then break; fi
  phases=""
  sleep 0.2
done
[ -n "$phases" ] || fail "the close-only trial's two ranks never reached teardown_begin; job: $(cat "$work/job.out")"

"$HB" diagnose --slurm-job "$job" --json > "$work/diagnose.json" 2> "$work/diagnose.err" ||
  fail "diagnose --slurm-job exited $?: $(cat "$work/diagnose.err")"
"$HB" diagnose --slurm-job "$job" > "$work/diagnose.txt" 2>&1 || fail "diagnose --slurm-job (text) failed"
cat "$work/diagnose.txt"

python3 - "$work/diagnose.json" "$host" <<'PY' || fail "the job's diagnosis does not name the holders by rank and host"
import json, sys
d = json.load(open(sys.argv[1]))
host = sys.argv[2]
ranks = {(r["rank"], r["host"]) for r in d["ranks"] if r["comm"] == "socket_teardown" and r["rank"] >= 0}
assert (0, host) in ranks and (1, host) in ranks, f"ranks 0 and 1 on {host} expected, got {sorted(ranks)}"
hung = [f for f in d["cross_rank"] if f["rule"] == "slurm-cross-rank"]
assert len(hung) == 2, f"two hung ranks expected, got {[f['summary'] for f in hung]}"
for rank in (0, 1):
    s = next((f["summary"] for f in hung if f"rank {rank} on {host}" in f["summary"].split(" is in")[0]), None)
    assert s, f"no finding for rank {rank}: {[f['summary'] for f in hung]}"
    assert f"a child of rank {rank}'s process on {host}" in s, f"rank {rank}'s holder not named: {s}"
print("diagnosis names both ranks' holders:", *[f["summary"] for f in hung], sep="\n  ")
PY

# The healthy cell's trial, already in the store: phases of ranks 0 and 1, with the host.
scancel "$job"
wait_for_job "$job" 120 > /dev/null
sqlite3 "$work/run/hangbench.sqlite" "SELECT phases_json FROM trials WHERE cell_id LIKE '%shutdown%'" > "$work/phases.json" ||
  fail "cannot read the store"
python3 - "$work/phases.json" "$host" <<'PY' || fail "the srun ranks' phases are not attributed to rank and host"
import json, sys
phases = json.loads(open(sys.argv[1]).read())
seen = {(p["rank"], p.get("host")) for p in phases if p["name"] == "teardown_end"}
assert seen == {(0, sys.argv[2]), (1, sys.argv[2])}, f"teardown_end of ranks 0 and 1 on {sys.argv[2]} expected, got {seen}"
print("phases attributed:", sorted(seen))
PY
echo "PASS: srun-launched ranks attributed; diagnose --slurm-job names each holder by rank and host"
