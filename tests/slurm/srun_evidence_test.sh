#!/usr/bin/env bash
# Acceptance of issue 27, point 2: a two-rank socket cell launched through `srun`
# hangs, and the evidence the harness captures in the run (not by hand) names both
# ranks (their processes are slurmstepd's children, outside srun's tree and cgroup),
# where each waits and who holds it; srun's own pipes are launcher plumbing, never
# the finding.
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/hb-slurm-evidence.XXXXXX)
job=""
trap '[ -n "$job" ] && scancel "$job" 2>/dev/null; rm -rf "$work"' EXIT
host=$(hostname)
# The srun matrix with a short hang timeout: the run ends by itself after the capture.
sed 's/^timeout = .*/timeout = 8.0/' "$HB_SOURCE_DIR/workloads/socket_teardown/matrix-srun.toml" > "$work/matrix.toml"

job=$(sbatch --parsable -n2 --output="$work/job.out" --export=ALL \
  --wrap "'$HB' run --matrix '$work/matrix.toml' --out '$work/run' --format json") || fail "sbatch failed"
job=${job%%;*}
wait_for_job "$job" 300 > /dev/null

evidence=$(find "$work/run/trials" -path '*close-only*' -name evidence.json | head -n 1 || true)
[ -n "$evidence" ] || fail "the close-only trial left no evidence.json; job: $(cat "$work/job.out")"
cat "$(dirname "$evidence")/evidence.txt" | head -n 40

python3 - "$evidence" "$host" <<'PY' || fail "the in-run evidence does not follow the srun ranks"
import json, sys
d = json.load(open(sys.argv[1]))
by_pid = {p["pid"]: p for p in d["processes"]}
ranks = {p.get("rank") for p in d["processes"] if p["target"] and p["comm"] == "socket_teardown" and "rank" in p}
assert ranks == {0, 1}, f"ranks 0 and 1 expected among the targets, got {ranks}"
hangs = [f for f in d["findings"] if f["severity"] == "hang"]
assert hangs, f"no hang finding: {d['summary']}"
for f in hangs:
    subject = by_pid[f["pids"][0]]
    assert subject["comm"] == "socket_teardown", f"a launcher is the finding: {f['summary']}"
subjects = {by_pid[f["pids"][0]].get("rank", by_pid[by_pid[f["pids"][0]]["ppid"]].get("rank")) for f in hangs if f["rule"] == "nccl-descriptor-alias"}
assert subjects == {0, 1}, f"each rank's teardown hang expected, got ranks {subjects}"
assert not d["summary"].startswith("pid") or "(srun)" not in d["summary"].split(".")[0], d["summary"]
head = d["headline"]
assert 3 <= len(head) <= 5 and head[0].startswith("HANG") and "rank " in head[1], head
assert "HELD BY" in head[2], head
plumbing = [f for f in d["findings"] if f["severity"] == "plumbing"]
print("headline:", *head, sep="\n  ")
print("launcher plumbing findings:", len(plumbing))
PY
grep -q "^RANKS" "$(dirname "$evidence")/evidence.txt" || fail "evidence.txt has no RANKS section"
grep -q "^rank 0 on $host\|  rank 0 on $host" "$(dirname "$evidence")/evidence.txt" || fail "evidence.txt does not name rank 0 on $host"
echo "PASS: the hung srun trial's own evidence names both ranks, where they wait and who holds them"
