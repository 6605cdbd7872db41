#!/usr/bin/env bash
# Acceptance of issue 17: the nightly's GPU-free part (ci/nightly.sh with its
# standard GPU-free matrices) runs as a Slurm batch job (ci/slurm/nightly.sbatch)
# end to end: the job completes, and its JUnit, summary and history are written.
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/hb-slurm-nightly.XXXXXX)
trap 'rm -rf "$work"' EXIT
job=$(HANGBENCH="$HB" NIGHTLY_OUT="$work/out" NIGHTLY_HISTORY="$work/history.sqlite" \
  sbatch --parsable --cpus-per-task=2 --output="$work/job.out" --export=ALL \
  "$HB_SOURCE_DIR/ci/slurm/nightly.sbatch") || fail "sbatch failed"
job=${job%%;*}
states=$(wait_for_job "$job" 900)
cat "$work/job.out"
[ "$states" = "COMPLETED " ] || fail "the nightly job ended $states"
grep -q "ci/nightly.sh on .* exited 0" "$work/job.out" || fail "ci/nightly.sh did not exit 0"
for name in socket_teardown-matrix mpi_progress-matrix-ci; do
  [ -s "$work/out/junit/$name.xml" ] || fail "no JUnit for $name"
  grep -q "$name" "$work/out/nightly.md" || fail "nightly.md does not list $name"
done
[ -s "$work/history.sqlite" ] || fail "no history store"
echo "PASS: the GPU-free nightly ran as sbatch job $job"
