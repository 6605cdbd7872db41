// The nccl_peer_death workload on the CPU, with the stand-in NCCL: rank 1 started
// before the device, the CUDA step refused as infrastructure and rank 1 gone with
// rank 0, the launcher's RANK/WORLD_SIZE set for diagnose, and its usage errors.
// The peer's death itself needs the GPU machine (ci/h200_catalog.sh).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "workload_run.hpp"

namespace fs = std::filesystem;

namespace {

using namespace hangbench::testing;

WorkloadRun run(const std::string& args) { return run_workload("nccl_peer_death", args); }

}  // namespace

TEST(NcclPeerDeathWorkload, WithoutAGpuBothRanksStopAtTheDeviceAndRankOneIsGone) {
  const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH);
  EXPECT_EQ(ran.exit_code, 3) << ran.stderr_text;
  // Each rank names itself through RANK, as a launcher's rank would.
  EXPECT_EQ(phases_of_rank(ran, 0), (std::vector<std::string>{"start", "nccl_loaded"}));
  EXPECT_FALSE(metric(ran, "infra_error").empty());
  const std::string rank1 = metric(ran, "rank1_pid");
  ASSERT_FALSE(rank1.empty());
  EXPECT_FALSE(fs::exists("/proc/" + rank1)) << "rank 1 outlived rank 0";
}

TEST(NcclPeerDeathWorkload, AMissingLibraryIsInfrastructureNamingIt) {
  const WorkloadRun ran = run("--nccl-lib=/nonexistent/libnccl.so.2");
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_NE(metric(ran, "infra_error").find("/nonexistent/libnccl.so.2"), std::string::npos);
}

TEST(NcclPeerDeathWorkload, UsageErrorsExitTwoAndSayWhy) {
  EXPECT_EQ(run("").exit_code, 2);  // --nccl-lib is required
  const WorkloadRun after = run("--nccl-lib=x --after-error=explode");
  EXPECT_EQ(after.exit_code, 2);
  EXPECT_NE(after.stderr_text.find("after-error"), std::string::npos) << after.stderr_text;
  EXPECT_EQ(run("--nccl-lib=x --error-wait=-1").exit_code, 2);
  EXPECT_EQ(run("--nccl-lib=x --rank=1").exit_code, 2);  // without the unique id
  EXPECT_EQ(run("--help").exit_code, 0);
}

// --comms=2 (the multi-communicator abort): rank 0 makes both unique ids and starts rank 1
// with them before the device step, which refuses here; rank 1 goes with rank 0.
TEST(NcclPeerDeathWorkload, TwoCommunicatorsStartRankOneAndStopAtTheDevice) {
  const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH +
                              " --comms=2 --abort-order=grouped --peer-death=killed-after-post");
  EXPECT_EQ(ran.exit_code, 3) << ran.stderr_text;
  EXPECT_EQ(phases_of_rank(ran, 0), (std::vector<std::string>{"start", "nccl_loaded"}));
  const std::string rank1 = metric(ran, "rank1_pid");
  ASSERT_FALSE(rank1.empty());
  EXPECT_FALSE(fs::exists("/proc/" + rank1)) << "rank 1 outlived rank 0";
  EXPECT_EQ(ran.stderr_text.find("second-unique-id"), std::string::npos) << "rank 1 was started without the second id";
}

TEST(NcclPeerDeathWorkload, MultiCommunicatorUsageErrorsExitTwoAndSayWhy) {
  EXPECT_EQ(run("--nccl-lib=x --comms=3").exit_code, 2);
  const WorkloadRun grouped = run("--nccl-lib=x --abort-order=grouped");
  EXPECT_EQ(grouped.exit_code, 2);
  EXPECT_NE(grouped.stderr_text.find("--comms=2"), std::string::npos) << grouped.stderr_text;
  const WorkloadRun death = run("--nccl-lib=x --peer-death=sometimes");
  EXPECT_EQ(death.exit_code, 2);
  EXPECT_NE(death.stderr_text.find("peer-death"), std::string::npos) << death.stderr_text;
  const WorkloadRun second = run("--nccl-lib=x --rank=1 --comms=2 --unique-id=" + std::string(256, 'a'));
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.stderr_text.find("--second-unique-id"), std::string::npos) << second.stderr_text;
}

TEST(NcclPeerDeathWorkload, AnIdlePeerNeedsAWatchdogWait) {
  // No error ever comes while the peer lives: without a wait rank 0 would never abort.
  const WorkloadRun forever = run("--nccl-lib=x --peer-death=idle");
  EXPECT_EQ(forever.exit_code, 2);
  EXPECT_NE(forever.stderr_text.find("--error-wait"), std::string::npos) << forever.stderr_text;
  EXPECT_EQ(run("--nccl-lib=x --peer-death=idle --error-wait=5 --help").exit_code, 0);
}

TEST(NcclPeerDeathWorkload, AnAbortFromAThreadNeedsTheAbort) {
  // --abort-from=thread is a watchdog thread's abort: leaving the process instead aborts nothing.
  const WorkloadRun exits = run("--nccl-lib=x --abort-from=thread --after-error=exit");
  EXPECT_EQ(exits.exit_code, 2);
  EXPECT_NE(exits.stderr_text.find("--after-error=abort"), std::string::npos) << exits.stderr_text;
  const WorkloadRun which = run("--nccl-lib=x --abort-from=elsewhere");
  EXPECT_EQ(which.exit_code, 2);
  EXPECT_NE(which.stderr_text.find("abort-from"), std::string::npos) << which.stderr_text;
  // Without a GPU the thread is never started: the device step refuses first, as for the main thread.
  const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --abort-from=thread");
  EXPECT_EQ(ran.exit_code, 3) << ran.stderr_text;
  EXPECT_EQ(phases_of_rank(ran, 0), (std::vector<std::string>{"start", "nccl_loaded"}));
}
