#!/usr/bin/env bash
# Submits a sharded hangbench run to Slurm: a job array of N shards
# (ci/slurm/shards.sbatch) and a merge job that waits for all of them
# (--dependency=afterok). Prints the two job ids. docs/slurm.md.
#
#   ci/slurm/submit.sh --out DIR [--shards N] [--matrix FILE] [--gpus-per-task G]
#                      [--time HH:MM:SS] [--hangbench BIN] [-- RUN OPTIONS...]
#
# DIR must be on a file system every node sees. Extra sbatch options go in
# SBATCH_EXTRA (e.g. "--partition=gpu --account=x"), for both jobs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shards=4 out="" matrix="" gpus=0 time_limit="" hb="${HANGBENCH:-$here/../../build/harness/hangbench}"
# The header comment above, without its '#' marks and without the script under it.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards=$2; shift ;;
    --out) out=$2; shift ;;
    --matrix) matrix=$2; shift ;;
    --gpus-per-task) gpus=$2; shift ;;
    --time) time_limit=$2; shift ;;
    --hangbench) hb=$2; shift ;;
    --) shift; break ;;
    *) echo "submit.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
[ -n "$out" ] || usage
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --shards wants a positive number, got '$shards'" >&2; exit 2; }
[ -x "$hb" ] || { echo "submit.sh: no hangbench binary at $hb (--hangbench BIN)" >&2; exit 2; }
hb=$(cd "$(dirname "$hb")" && pwd)/$(basename "$hb")
[ -z "$matrix" ] || matrix=$(cd "$(dirname "$matrix")" && pwd)/$(basename "$matrix")
mkdir -p "$out/slurm"
out=$(cd "$out" && pwd)
read -r -a extra <<< "${SBATCH_EXTRA:-}"
export HANGBENCH="$hb" HANGBENCH_OUT="$out" HANGBENCH_MATRIX="$matrix" HANGBENCH_RUN_ARGS="$*"
array_opts=(--array="0-$((shards - 1))" --output="$out/slurm/shard-%a.out")
[ "$gpus" != 0 ] && array_opts+=(--gpus-per-task="$gpus")
[ -n "$time_limit" ] && array_opts+=(--time="$time_limit")
array=$(sbatch --parsable --export=ALL "${array_opts[@]}" "${extra[@]}" "$here/shards.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --export=ALL --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --output="$out/slurm/merge.out" "${extra[@]}" "$here/merge.sbatch")
merge=${merge%%;*}
echo "shards: job $array (array 0-$((shards - 1))), merge: job $merge; output in $out"
echo "$array $merge" > "$out/slurm/jobs"
