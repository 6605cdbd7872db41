// The nccl_first_collective workload on the CPU, with the stand-in NCCL: what it can
// show without a GPU (NCCL loaded, rank 1 started with the signal pipe, then the CUDA
// step refused as infrastructure with its reason and rank 1 ended with it) and its usage
// errors. Its hang needs a GPU (ci/h200_catalog.sh, STEPS with first-collective).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

struct Ran {
  int exit_code = -1;
  std::vector<nlohmann::json> lines;  // the phase channel
};

Ran run_workload(const std::string& args) {
  const fs::path phases = fs::temp_directory_path() / ("hb_nccl_fc_" + std::to_string(getpid()) + ".jsonl");
  fs::remove(phases);
  const std::string command = "HANGBENCH_PHASE_FILE=" + phases.string() + " " + HB_BINARY_DIR +
                              "/workloads/nccl_first_collective/nccl_first_collective " + args + " 2>/dev/null";
  const int status = std::system(command.c_str());
  Ran ran;
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(phases);
  for (std::string line; std::getline(in, line);) ran.lines.push_back(nlohmann::json::parse(line));
  fs::remove(phases);
  return ran;
}

// The phases one process wrote (rank 1 writes to the same channel).
std::vector<std::string> phase_names(const Ran& ran, long long pid) {
  std::vector<std::string> names;
  for (const auto& j : ran.lines)
    if (j.contains("phase") && j.value("pid", 0LL) == pid) names.push_back(j["phase"]);
  return names;
}

std::string metric(const Ran& ran, const std::string& name) {
  for (const auto& j : ran.lines)
    if (j.value("metric", "") == name)
      return j["value"].is_string() ? j["value"].get<std::string>() : j["value"].dump();
  return "";
}

}  // namespace

TEST(NcclFirstCollectiveWorkload, WithoutAGpuItStopsAtTheDeviceAsInfrastructure) {
  const Ran ran = run_workload(std::string("--nccl-lib=") + FAKE_NCCL_PATH);
  EXPECT_EQ(ran.exit_code, 3);
  ASSERT_FALSE(ran.lines.empty());
  const long long rank0 = ran.lines.front().value("pid", 0LL);
  EXPECT_EQ(phase_names(ran, rank0), (std::vector<std::string>{"start", "nccl_loaded"}));
  EXPECT_FALSE(metric(ran, "nccl_version").empty());
  EXPECT_FALSE(metric(ran, "infra_error").empty());
  // Rank 1 is killed and reaped when rank 0 gives up: gone by the time rank 0 has exited.
  const std::string rank1 = metric(ran, "rank1_pid");
  ASSERT_FALSE(rank1.empty());
  EXPECT_FALSE(fs::exists("/proc/" + rank1)) << "rank 1 outlived rank 0";
}

TEST(NcclFirstCollectiveWorkload, AMissingLibraryIsInfrastructureNamingIt) {
  const Ran ran = run_workload("--nccl-lib=/nonexistent/libnccl.so.2");
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(metric(ran, "infra_error").find("/nonexistent/libnccl.so.2"), std::string::npos);
}

TEST(NcclFirstCollectiveWorkload, UsageErrorsExitTwo) {
  EXPECT_EQ(run_workload("").exit_code, 2);  // --nccl-lib is required
  EXPECT_EQ(run_workload("--nccl-lib=x --order=sideways").exit_code, 2);
  EXPECT_EQ(run_workload("--nccl-lib=x --rank=1").exit_code, 2);  // without the unique id
  EXPECT_EQ(run_workload("--nccl-lib=x --rank=1 --unique-id=" + std::string(256, '0')).exit_code, 2);  // no pipe
  EXPECT_EQ(run_workload("--help").exit_code, 0);
  EXPECT_EQ(run_workload("--nccl-lib=x --order=WARMUP-FIRST --help").exit_code, 0);
}
