// The nccl_launch_blocking workload on the CPU, with the stand-in NCCL: what it can
// show without a GPU (NCCL loaded, rank 1 started, then the CUDA step refused as
// infrastructure with its reason and rank 1 ended with it) and its usage errors. Its hang needs the H200
// (ci/h200_evidence.sh BUNDLE catalog).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "workload_run.hpp"

namespace fs = std::filesystem;

namespace {

using namespace hangbench::testing;

WorkloadRun run(const std::string& args) { return run_workload("nccl_launch_blocking", args); }

}  // namespace

TEST(NcclLaunchBlockingWorkload, WithoutAGpuItStopsAtTheDeviceAsInfrastructure) {
  const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH);
  EXPECT_EQ(ran.exit_code, 3);
  ASSERT_FALSE(ran.lines.empty());
  const long long rank0 = ran.lines.front().value("pid", 0LL);
  EXPECT_EQ(phases_of_pid(ran, rank0), (std::vector<std::string>{"start", "nccl_loaded"}));
  EXPECT_FALSE(metric(ran, "nccl_version").empty());
  EXPECT_FALSE(metric(ran, "infra_error").empty());
  // Rank 1 starts before the device (the two CUDA contexts are made at once) and is
  // killed and reaped when rank 0 gives up: it is gone by the time rank 0 has exited.
  const std::string rank1 = metric(ran, "rank1_pid");
  ASSERT_FALSE(rank1.empty());
  EXPECT_FALSE(fs::exists("/proc/" + rank1)) << "rank 1 outlived rank 0";
}

TEST(NcclLaunchBlockingWorkload, AMissingLibraryIsInfrastructureNamingIt) {
  const WorkloadRun ran = run("--nccl-lib=/nonexistent/libnccl.so.2");
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(metric(ran, "infra_error").find("/nonexistent/libnccl.so.2"), std::string::npos);
}

TEST(NcclLaunchBlockingWorkload, UsageErrorsExitTwo) {
  EXPECT_EQ(run("").exit_code, 2);  // --nccl-lib is required
  EXPECT_EQ(run("--nccl-lib=x --ranks=3").exit_code, 2);
  EXPECT_EQ(run("--nccl-lib=x --rank=1").exit_code, 2);  // without the unique id
  EXPECT_EQ(run("--help").exit_code, 0);
}
