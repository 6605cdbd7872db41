// The command lines of the launchers: srun inside an allocation, torchrun as
// PyTorch users start jobs, mpirun with the trial's variables forwarded.
#include "exec/launch_argv.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hangbench/matrix.hpp"

namespace hangbench {
namespace {

using ::testing::ElementsAre;

Cell cell(LauncherKind kind, int ranks, std::vector<std::string> args = {}) {
  Cell c;
  c.launcher.kind = kind;
  c.launcher.ranks = ranks;
  c.launcher.extra_args = std::move(args);
  return c;
}

TEST(LaunchArgv, ProcessRunsTheWorkloadItself) {
  EXPECT_THAT(exec_detail::launch_argv(cell(LauncherKind::Process, 1), {"w", "--x"}, {"A"}), ElementsAre("w", "--x"));
}

TEST(LaunchArgv, SrunStartsRanksAsAStepAndExportsTheEnvironment) {
  EXPECT_THAT(exec_detail::launch_argv(cell(LauncherKind::Srun, 2, {"--overlap"}), {"w"}, {"HANGBENCH_PHASE_FILE"}),
              ElementsAre("srun", "-n", "2", "--overlap", "w"));
}

TEST(LaunchArgv, TorchrunIsStandaloneWithoutPrependingPython) {
  EXPECT_THAT(exec_detail::launch_argv(cell(LauncherKind::Torchrun, 4), {"python3", "train.py"}, {"X"}),
              ElementsAre("torchrun", "--standalone", "--nproc-per-node", "4", "--no-python", "python3", "train.py"));
}

TEST(LaunchArgv, MpirunForwardsTheTrialsVariables) {
  EXPECT_THAT(exec_detail::launch_argv(cell(LauncherKind::Mpirun, 2), {"w"}, {"A", "B"}),
              ElementsAre("mpirun", "-np", "2", "-x", "A", "-x", "B", "w"));
}

TEST(LaunchArgv, TheMatrixNamesTorchrun) {
  Matrix m = parse_matrix("name = \"t\"\ncommand = \"w\"\n[launcher]\nkind = \"torchrun\"\nranks = 8\n", "t.toml");
  ASSERT_EQ(m.cells.size(), 1u);
  EXPECT_EQ(m.cells[0].launcher.kind, LauncherKind::Torchrun);
  EXPECT_EQ(m.cells[0].launcher.ranks, 8);
  nlohmann::json j = m.cells[0];
  EXPECT_EQ(j["launcher"]["kind"], "torchrun");
  EXPECT_EQ(j.get<Cell>().launcher.kind, LauncherKind::Torchrun);
  EXPECT_THROW(parse_matrix("name = \"t\"\ncommand = \"w\"\n[launcher]\nkind = \"deepspeed\"\n", "t.toml"),
               ConfigError);
}

}  // namespace
}  // namespace hangbench
