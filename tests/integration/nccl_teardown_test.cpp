// The nccl_teardown workload on the CPU, with the stand-in NCCL and no device
// memory: its phases in order, its workers gone after it, and its exit codes
// (0 healthy, 2 usage, 3 infrastructure with the reason as a metric).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fs = std::filesystem;

namespace {

struct Ran {
  int exit_code = -1;
  std::vector<nlohmann::json> lines;  // the phase channel
};

Ran run_workload(const std::string& args) {
  const fs::path phases = fs::temp_directory_path() / ("hb_nccl_teardown_" + std::to_string(getpid()) + ".jsonl");
  fs::remove(phases);
  const std::string command = "HANGBENCH_PHASE_FILE=" + phases.string() + " " + HB_BINARY_DIR +
                              "/workloads/nccl_teardown/nccl_teardown " + args + " 2>/dev/null";
  const int status = std::system(command.c_str());
  Ran ran;
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(phases);
  for (std::string line; std::getline(in, line);) ran.lines.push_back(nlohmann::json::parse(line));
  fs::remove(phases);
  return ran;
}

std::vector<std::string> phase_names(const Ran& ran) {
  std::vector<std::string> names;
  for (const auto& j : ran.lines) {
    if (j.contains("phase")) names.push_back(j["phase"]);
  }
  return names;
}

const nlohmann::json* metric(const Ran& ran, const std::string& name) {
  for (const auto& j : ran.lines) {
    if (j.value("metric", "") == name) return &j;
  }
  return nullptr;
}

}  // namespace

TEST(NcclTeardownWorkload, ReportsEveryPhaseInOrderAndLeavesNoWorker) {
  const Ran ran = run_workload(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --no-device-memory --workers 2");
  ASSERT_EQ(ran.exit_code, 0);
  EXPECT_EQ(phase_names(ran), (std::vector<std::string>{"start", "nccl_loaded", "init_done", "work_done",
                                                        "workers_forked", "teardown_begin", "teardown_end"}));
  ASSERT_NE(metric(ran, "nccl_version"), nullptr);
  EXPECT_EQ((*metric(ran, "nccl_version"))["value"], "2.17.1");
  ASSERT_NE(metric(ran, "worker_pids"), nullptr);
  std::stringstream pids((*metric(ran, "worker_pids"))["value"].get<std::string>());
  int count = 0;
  for (std::string pid; std::getline(pids, pid, ',');) {
    ++count;
    EXPECT_NE(kill(std::stoi(pid), 0), 0) << "worker " << pid << " outlived the workload";
  }
  EXPECT_EQ(count, 2);
}

TEST(NcclTeardownWorkload, WorkersForkedBeforeInitComeBeforeIt) {
  const Ran ran =
      run_workload(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --no-device-memory --workers-forked before");
  ASSERT_EQ(ran.exit_code, 0);
  const auto names = phase_names(ran);
  EXPECT_LT(std::find(names.begin(), names.end(), "workers_forked"),
            std::find(names.begin(), names.end(), "init_done"));
}

TEST(NcclTeardownWorkload, ALibraryThatCannotLoadIsInfraWithItsReason) {
  const Ran ran = run_workload("--nccl-lib=/nonexistent/libnccl.so.2 --no-device-memory");
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_EQ(phase_names(ran), std::vector<std::string>{"start"});
  ASSERT_NE(metric(ran, "infra_error"), nullptr);
  EXPECT_NE((*metric(ran, "infra_error"))["value"].get<std::string>().find("/nonexistent/libnccl.so.2"),
            std::string::npos);
}

TEST(NcclTeardownWorkload, BadOptionsExit2) {
  EXPECT_EQ(run_workload("--no-device-memory").exit_code, 2);  // no --nccl-lib
  EXPECT_EQ(run_workload(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --teardown sideways").exit_code, 2);
  EXPECT_EQ(run_workload(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --sync sometimes").exit_code, 2);
}

TEST(NcclTeardownWorkload, EverySyncModeIsAccepted) {
  for (const char* mode : {"auto", "spin", "yield", "blocking"}) {
    const Ran ran = run_workload(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --no-device-memory --sync " + mode);
    EXPECT_EQ(ran.exit_code, 0) << mode;
  }
}
