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
                      "  command: mpirun -np 2 --oversubscribe mpi_progress\n"),
            std::string::npos)
      << text;
}

TEST(RunDryRun, ShowsTheOverridesTheRunWouldApply) {
  RunOptions opts;
  opts.trials = 3;
  opts.filters = {{"build", "2.18.1"}};
  const std::string text = render_dry_run(apply_run_options(two_cells(), opts));
  EXPECT_NE(text.find("1 cell, 3 trials"), std::string::npos) << text;
  EXPECT_EQ(text.find("build=2.17.1"), std::string::npos) << text;
  opts.trials = 0;
  EXPECT_THROW(apply_run_options(two_cells(), opts), ConfigError);
}

}  // namespace
}  // namespace hangbench
