// The nccl_teardown workload on the CPU, with the stand-in NCCL and no device
// memory: its phases in order, its workers gone after it, and its exit codes
// (0 healthy, 2 usage, 3 infrastructure with the reason as a metric).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <sstream>

#include "workload_run.hpp"

namespace {

using namespace hangbench::testing;

WorkloadRun run(const std::string& args) { return run_workload("nccl_teardown", args); }

}  // namespace

TEST(NcclTeardownWorkload, ReportsEveryPhaseInOrderAndLeavesNoWorker) {
  const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --no-device-memory --workers 2");
  ASSERT_EQ(ran.exit_code, 0);
  EXPECT_EQ(phase_names(ran), (std::vector<std::string>{"start", "nccl_loaded", "init_done", "work_done",
                                                        "workers_forked", "teardown_begin", "teardown_end"}));
  EXPECT_EQ(metric(ran, "nccl_version"), "2.17.1");
  ASSERT_FALSE(metric(ran, "worker_pids").empty());
  std::stringstream pids(metric(ran, "worker_pids"));
  int count = 0;
  for (std::string pid; std::getline(pids, pid, ',');) {
    ++count;
    EXPECT_NE(kill(std::stoi(pid), 0), 0) << "worker " << pid << " outlived the workload";
  }
  EXPECT_EQ(count, 2);
}

TEST(NcclTeardownWorkload, WorkersForkedBeforeInitComeBeforeIt) {
  const WorkloadRun ran =
      run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --no-device-memory --workers-forked before");
  ASSERT_EQ(ran.exit_code, 0);
  const auto names = phase_names(ran);
  EXPECT_LT(std::find(names.begin(), names.end(), "workers_forked"),
            std::find(names.begin(), names.end(), "init_done"));
}

TEST(NcclTeardownWorkload, ALibraryThatCannotLoadIsInfraWithItsReason) {
  const WorkloadRun ran = run("--nccl-lib=/nonexistent/libnccl.so.2 --no-device-memory");
  EXPECT_EQ(ran.exit_code, 3);
  EXPECT_EQ(phase_names(ran), std::vector<std::string>{"start"});
  EXPECT_NE(metric(ran, "infra_error").find("/nonexistent/libnccl.so.2"), std::string::npos);
}

TEST(NcclTeardownWorkload, BadOptionsExit2) {
  EXPECT_EQ(run("--no-device-memory").exit_code, 2);  // no --nccl-lib
  EXPECT_EQ(run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --teardown sideways").exit_code, 2);
  EXPECT_EQ(run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --sync sometimes").exit_code, 2);
}

TEST(NcclTeardownWorkload, EverySyncModeIsAccepted) {
  for (const char* mode : {"auto", "spin", "yield", "blocking"}) {
    const WorkloadRun ran = run(std::string("--nccl-lib=") + FAKE_NCCL_PATH + " --no-device-memory --sync " + mode);
    EXPECT_EQ(ran.exit_code, 0) << mode;
  }
}
