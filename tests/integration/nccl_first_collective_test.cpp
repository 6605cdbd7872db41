// The nccl_first_collective workload on the CPU, with the stand-in NCCL: what it can
// show without a GPU (NCCL loaded, rank 1 started with the signal pipe, then the CUDA
// step refused as infrastructure with its reason and rank 1 ended with it) and its usage
// errors. Its hang needs a GPU (ci/h200_catalog.sh, STEPS with first-collective).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "workload_run.hpp"

namespace fs = std::filesystem;

namespace {

using namespace hangbench::testing;

WorkloadRun run(const std::string& args) { return run_workload("nccl_first_collective", args); }

}  // namespace

TEST(NcclFirstCollectiveWorkload, WithoutAGpuItStopsAtTheDeviceAsInfrastructure) {
  const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH);
  EXPECT_EQ(ran.exit_code, 3);
  ASSERT_FALSE(ran.lines.empty());
  const long long rank0 = ran.lines.front().value("pid", 0LL);
  EXPECT_EQ(phases_of_pid(ran, rank0), (std::vector<std::string>{"start", "nccl_loaded"}));
  EXPECT_FALSE(metric(ran, "nccl_version").empty());
  EXPECT_FALSE(metric(ran, "infra_error").empty());
  // Rank 1 is killed and reaped when rank 0 gives up: gone by the time rank 0 has exited.
  const std::string rank1 = metric(ran, "rank1_pid");
  ASSERT_FALSE(rank1.empty());
  EXPECT_FALSE(fs::exists("/proc/" + rank1)) << "rank 1 outlived rank 0";
}

TEST(NcclFirstCollectiveWorkload, AMissingLibraryIsInfrastructureNamingIt) {
  const WorkloadRun ran = run("--nccl-lib=/nonexistent/libnccl.so.2");
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(metric(ran, "infra_error").find("/nonexistent/libnccl.so.2"), std::string::npos);
}

TEST(NcclFirstCollectiveWorkload, UsageErrorsExitTwo) {
  EXPECT_EQ(run("").exit_code, 2);  // --nccl-lib is required
  EXPECT_EQ(run("--nccl-lib=x --order=sideways").exit_code, 2);
  EXPECT_EQ(run("--nccl-lib=x --rank=1").exit_code, 2);                                       // without the unique id
  EXPECT_EQ(run("--nccl-lib=x --rank=1 --unique-id=" + std::string(256, '0')).exit_code, 2);  // no pipe
  EXPECT_EQ(run("--help").exit_code, 0);
  EXPECT_EQ(run("--nccl-lib=x --order=WARMUP-FIRST --help").exit_code, 0);
}
