// workloads/mpi_progress/matrix-ci.toml through the real `hangbench run`:
// mpirun, two ranks, the embedded GIL. No progress and the GIL-bound Python
// pump must hang in executor_blocked; the native progress thread must never
// hang; no verdict may be contradicted and no process may survive cleanup.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

extern char** environ;

namespace fs = std::filesystem;

namespace {

const std::string kHangbench = std::string(HB_BINARY_DIR) + "/harness/hangbench";
const std::string kWorkload = std::string(HB_BINARY_DIR) + "/workloads/mpi_progress/mpi_progress";
const std::string kMatrix = std::string(HB_SOURCE_DIR) + "/workloads/mpi_progress/matrix-ci.toml";

int run_hangbench(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv{const_cast<char*>(kHangbench.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, kHangbench.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(MpiProgressMatrix, NoneAndPumpHangWhileNativeCompletes) {
  ASSERT_TRUE(fs::exists(kHangbench)) << "build the hangbench target";
  ASSERT_TRUE(fs::exists(kWorkload)) << "build the mpi_progress target";
  const fs::path dir = fs::temp_directory_path() / ("hb_mpi_progress_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "out";
  // The workload of this build tree, whichever tree the hangbench binary came from.
  ::setenv("HANGBENCH_WORKLOADS_DIR", (std::string(HB_BINARY_DIR) + "/workloads").c_str(), 1);

  const int rc =
      run_hangbench({"run", "--matrix", kMatrix, "--out", out.string(), "--format", "json,md"}, dir / "run.log");
  const std::string log = slurp(dir / "run.log");
  EXPECT_EQ(rc, 0) << "an expectation was contradicted or the run failed:\n" << log;
  ASSERT_TRUE(fs::exists(out / "report.json")) << log;
  const auto report = nlohmann::json::parse(slurp(out / "report.json"));

  std::map<std::string, nlohmann::json> cells;
  for (const auto& cell : report.at("cells")) cells[cell.at("params").at("progress")] = cell;
  ASSERT_EQ(cells.size(), 3u) << report.at("cells").dump(2);
  for (const char* hanging : {"none", "pump"}) {
    const auto& c = cells[hanging];
    EXPECT_GT(c.at("n").get<int>(), 0) << hanging;
    EXPECT_EQ(c.at("hangs"), c.at("n")) << hanging << ": " << c.dump(2);
    EXPECT_NE(c.at("verdict"), "CONTRADICTED") << hanging;
  }
  const auto& native = cells["native"];
  EXPECT_GT(native.at("n").get<int>(), 0);
  EXPECT_EQ(native.at("hangs"), 0) << native.dump(2);
  EXPECT_EQ(native.at("passed"), native.at("n")) << native.dump(2);
  EXPECT_NE(native.at("verdict"), "CONTRADICTED");

  for (const auto& trial : report.at("trials")) {
    const std::string cell = trial.at("cell_id");
    EXPECT_TRUE(trial.at("survivors").empty()) << cell << " left processes behind";
    if (trial.at("outcome") == "HANG") {
      // The hang is where the design puts it: the executor blocked, GIL held.
      EXPECT_EQ(trial.at("hung_phase"), "executor_blocked") << cell;
    }
    const auto& metrics = trial.at("metrics");
    if (metrics.contains("rendezvous_threshold_bytes") && metrics.contains("message_bytes")) {
      EXPECT_GT(metrics.at("message_bytes").get<double>(), metrics.at("rendezvous_threshold_bytes").get<double>());
    }
  }
  fs::remove_all(dir);
}

}  // namespace
