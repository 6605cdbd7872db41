// `hangbench run --dry-run`: the cells, their commands as launched and their trial
// counts, with the command-line overrides applied, and nothing run.
#include <gtest/gtest.h>

#include "hangbench/matrix.hpp"
#include "hangbench/runner.hpp"

namespace hangbench {
namespace {

Matrix two_cells() {
  Matrix m;
  m.name = "demo";
  m.path = "demo.toml";
  m.concurrency = 4;
  Cell plain;
  plain.id = "build=2.17.1";
  plain.params = {{"build", "2.17.1"}};
  plain.argv = {"socket_teardown", "--close=only", "it's quoted"};
  plain.env = {{"NCCL_DEBUG", "WARN"}};
  plain.trials = 20;
  plain.timeout_s = 10;
  plain.expect = Expectation::Hang;
  Cell mpi = plain;
  mpi.id = "build=2.18.1";
  mpi.params = {{"build", "2.18.1"}};
  mpi.argv = {"mpi_progress"};
  mpi.env.clear();
  mpi.launcher = {LauncherKind::Mpirun, 2, {"--oversubscribe"}};
  mpi.expect = Expectation::NoHang;
  mpi.phase_timeouts_s = {{"teardown_begin", 5}};
  m.cells = {plain, mpi};
  return m;
}

TEST(RunDryRun, ListsEveryCellWithItsCommandAndTrials) {
  const std::string text = render_dry_run(two_cells());
  EXPECT_NE(text.find("dry run of demo (demo.toml): 2 cells, 40 trials, 4 at once; nothing was run or written"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("build=2.17.1\n  trials 20, timeout 10 s, expect hang\n"
                      "  command: socket_teardown --close=only 'it'\\''s quoted'\n  env: NCCL_DEBUG=WARN\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("trials 20, timeout 10 s, 5 s after teardown_begin, expect no-hang\n"
                      "  command: mpirun -np 2 --oversubscribe -x HANGBENCH_PHASE_FILE -x HANGBENCH_TRIAL_DIR -x "
                      "HANGBENCH_TRIAL_ID mpi_progress\n"),
            std::string::npos)
      << text;
}

// The launcher's whole command line, as the trial starts it (torchrun's own flags too).
TEST(RunDryRun, ShowsTheLaunchersFullCommandLine) {
  Matrix m = two_cells();
  m.cells[1].launcher = {LauncherKind::Torchrun, 4, {}};
  m.cells[1].argv = {"python3", "train.py"};
  const std::string text = render_dry_run(m);
  EXPECT_NE(text.find("  command: torchrun --standalone --nproc-per-node 4 --no-python python3 train.py\n"),
            std::string::npos)
      << text;
}

// A workload program that does not exist is named before anything runs, cell by cell.
TEST(RunDryRun, FlagsAProgramThatDoesNotExist) {
  Matrix m = two_cells();
  m.cells[0].argv = {"/bin/sh", "-c", "true"};
  m.cells[1].argv = {"/no/such/dir/mpi_progress"};
  const std::string text = render_dry_run(m);
  EXPECT_NE(text.find("warning: 1 of the 2 cells name a program that does not exist here"), std::string::npos) << text;
  EXPECT_NE(text.find("  missing: /no/such/dir/mpi_progress does not exist here"), std::string::npos) << text;
  EXPECT_EQ(text.find("  missing: /bin/sh"), std::string::npos) << text;
}

// A cell whose trials cannot reach its verdict at the matrix's alpha says so, with the count that can.
TEST(RunDryRun, NamesACellThatCanNeverBeConfirmed) {
  Matrix m = two_cells();
  m.alpha = 0.001;
  m.cells[0].trials = 7;
  const std::string text = render_dry_run(m);
  EXPECT_NE(text.find("  note: 7 trials can never CONFIRM `hang` at alpha 0.001: even all of them alike gives "
                      "p = 0.0078; 10 trials can"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("  note: 20 trials"), std::string::npos) << text;  // the other cell's 20 can
}

TEST(RunDryRun, ShowsTheOverridesTheRunWouldApply) {
  RunOptions opts;
  opts.trials = 3;
  opts.filters = {{"build", "2.18.1"}};
  const std::string text = render_dry_run(apply_run_options(two_cells(), opts));
  EXPECT_NE(text.find("1 cell, 3 trials"), std::string::npos) << text;
  EXPECT_EQ(text.find("build=2.17.1"), std::string::npos) << text;
  opts.trials = 0;
  EXPECT_THROW(apply_run_options(two_cells(), opts), UsageError);
}

TEST(RunDryRun, AShardListsOnlyTheTrialsItWouldRun) {
  Matrix m = two_cells();
  m.cells[0].trials = 3;
  m.cells[1].trials = 2;
  // Positions 0..4 modulo 4: shard 1 owns build=2.17.1 #1 only, shard 0 owns #0 of the first and #1 of the second.
  const std::string one = render_dry_run(m, Shard{1, 4});
  EXPECT_NE(one.find("dry run of demo (demo.toml), shard 1/4 of 5 trials: 1 cell, 1 trial,"), std::string::npos) << one;
  EXPECT_NE(one.find("1 of the 2 cells have no trial in this shard"), std::string::npos) << one;
  EXPECT_NE(one.find("build=2.17.1\n  trials 1 of 3 (indices 1), timeout 10 s"), std::string::npos) << one;
  EXPECT_EQ(one.find("build=2.18.1"), std::string::npos) << one;
  const std::string zero = render_dry_run(m, Shard{0, 4});
  EXPECT_NE(zero.find("2 cells, 2 trials"), std::string::npos) << zero;
  EXPECT_NE(zero.find("build=2.18.1\n  trials 1 of 2 (indices 1)"), std::string::npos) << zero;
}

TEST(RunDryRun, ALongShareIsShortenedToItsFirstAndLastIndices) {
  Matrix m = two_cells();
  m.cells.resize(1);
  m.cells[0].trials = 100;
  const std::string text = render_dry_run(m, Shard{2, 4});
  EXPECT_NE(text.find("trials 25 of 100 (indices 2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, … 98)"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace hangbench
