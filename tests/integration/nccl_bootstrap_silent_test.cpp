// The nccl_bootstrap_silent workload on the CPU. With the stand-in NCCL: the intruder
// refused as infrastructure (its id has no address), the healthy path stopped at the
// device, usage errors. With the toolkit's real NCCL (REAL_NCCL_PATH, when configured
// with CUDA): the intruder connected to the bootstrap root that ncclGetUniqueId started,
// then the device refused, and the intruder gone with rank 0. The hang needs a GPU
// (ci/h200_catalog.sh, workloads/nccl_bootstrap_silent/matrix.toml).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "workload_run.hpp"

namespace fs = std::filesystem;

namespace {

using namespace hangbench::testing;

WorkloadRun run(const std::string& args) { return run_workload("nccl_bootstrap_silent", args); }

TEST(NcclBootstrapSilentWorkload, AnIdWithoutARootAddressIsInfrastructureSayingSo) {
  const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --intruder=silent");
  EXPECT_EQ(ran.exit_code, 3) << ran.stderr_text;
  EXPECT_EQ(phases_of_rank(ran, 0), (std::vector<std::string>{"start", "nccl_loaded"}));
  EXPECT_NE(metric(ran, "infra_error").find("no IPv4 or IPv6 address"), std::string::npos) << ran.stderr_text;
  EXPECT_TRUE(metric(ran, "rank1_pid").empty()) << "rank 1 must not start without its intruder";
}

TEST(NcclBootstrapSilentWorkload, WithoutAnIntruderItStopsAtTheDeviceAndRankOneIsGone) {
  const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --intruder=none");
  EXPECT_EQ(ran.exit_code, 3) << ran.stderr_text;
  EXPECT_EQ(phases_of_rank(ran, 0), (std::vector<std::string>{"start", "nccl_loaded"}));
  const std::string rank1 = metric(ran, "rank1_pid");
  ASSERT_FALSE(rank1.empty());
  EXPECT_FALSE(fs::exists("/proc/" + rank1)) << "rank 1 outlived rank 0";
}

TEST(NcclBootstrapSilentWorkload, UsageErrorsExitTwoAndSayWhy) {
  const WorkloadRun loud = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --intruder=loud");
  EXPECT_EQ(loud.exit_code, 2);
  EXPECT_NE(loud.stderr_text.find("--intruder"), std::string::npos) << loud.stderr_text;
  const WorkloadRun deadline = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --init-deadline=-1");
  EXPECT_EQ(deadline.exit_code, 2);
  EXPECT_NE(deadline.stderr_text.find("--init-deadline"), std::string::npos) << deadline.stderr_text;
  EXPECT_EQ(run("--rank=1 --nccl-lib=x").exit_code, 2);  // rank 1 needs the id
}

#ifdef REAL_NCCL_PATH
TEST(NcclBootstrapSilentWorkload, TheIntruderConnectsToTheRootOfARealNcclAndLeavesWithRankZero) {
  const WorkloadRun ran = run(std::string("--nccl-lib=") + REAL_NCCL_PATH + " --intruder=silent");
  EXPECT_EQ(ran.exit_code, 3) << ran.stderr_text;  // no GPU here: the device refuses
  EXPECT_EQ(phases_of_rank(ran, 0), (std::vector<std::string>{"start", "nccl_loaded", "intruder_connected"}));
  EXPECT_FALSE(metric(ran, "root_address").empty());
  const std::string intruder = metric(ran, "intruder_pid");
  ASSERT_FALSE(intruder.empty());
  // It dies with rank 0 (PR_SET_PDEATHSIG); give the kernel a moment to deliver it.
  for (int i = 0; i < 100 && fs::exists("/proc/" + intruder); ++i) ::usleep(20000);
  EXPECT_FALSE(fs::exists("/proc/" + intruder)) << "the intruder outlived rank 0";
}
#endif

}  // namespace
