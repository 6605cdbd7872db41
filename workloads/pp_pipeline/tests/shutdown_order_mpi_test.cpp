// Shutdown order with the real progress thread under MPI: on the normal and the
// hang-detected path the thread has stopped (and stopped probing) before the
// MPI teardown step runs. The teardown steps are recorded, not executed, so
// that the test process can go on to MPI_Finalize in main().
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "progress_lifecycle.hpp"
#include "shutdown_sequence.hpp"

namespace pp {
namespace {

using hangbench::mpi_progress::ProgressLifecycle;
using hangbench::mpi_progress::StartConditions;
using hangbench::mpi_progress::StopPath;

StartConditions conditions_for(MPI_Comm comm) {
  StartConditions c;
  MPI_Comm_size(comm, &c.pipeline_stages);
  c.mpi_enabled = true;
  c.interval = hangbench::mpi_progress::parse_progress_interval("1000");
  MPI_Query_thread(&c.provided_thread_level);
  return c;
}

struct TeardownObservation {
  std::vector<std::string> events;
  bool progress_running_at_mpi_teardown = true;
  std::uint64_t probes_at_teardown = 0;
};

ShutdownSteps observed_steps(ProgressLifecycle& lifecycle, TeardownObservation& seen, bool hang_path) {
  ShutdownSteps steps;
  steps.mark_phase = [&seen](const std::string& p) { seen.events.push_back(p); };
  steps.stop_progress = [&lifecycle, &seen, hang_path] {
    seen.events.push_back("stop_progress");
    if (hang_path)
      lifecycle.stop_for_hang();
    else
      lifecycle.stop_for_shutdown();
  };
  auto at_mpi_teardown = [&lifecycle, &seen](const char* name) {
    seen.events.push_back(name);
    seen.progress_running_at_mpi_teardown = lifecycle.is_running();
    seen.probes_at_teardown = lifecycle.probe_count();
  };
  steps.finalize_mpi = [at_mpi_teardown] { at_mpi_teardown("finalize_mpi"); };
  steps.abort_mpi = [at_mpi_teardown] { at_mpi_teardown("abort_mpi"); };
  return steps;
}

// True while a thread of this process is named `name` (/proc/self/task/*/comm).
bool has_thread_named(const std::string& name) {
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) return true;
  }
  return false;
}

// Waits until the progress worker (named "mpi_progress") has left the process:
// from then on nothing can probe. The bound only turns a hang into a failure.
bool progress_thread_gone(std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (has_thread_named("mpi_progress")) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void wait_for_probes(ProgressLifecycle& lifecycle) {
  for (int i = 0; i < 5000 && lifecycle.probe_count() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(ShutdownOrderMpi, NormalPathStopsProgressBeforeFinalize) {
  std::ostringstream log;
  ProgressLifecycle lifecycle(conditions_for(MPI_COMM_WORLD), MPI_COMM_WORLD, log);
  ASSERT_TRUE(lifecycle.started()) << log.str();
  wait_for_probes(lifecycle);
  ASSERT_GE(lifecycle.probe_count(), 3u) << "the thread should probe before stop";
  TeardownObservation seen;
  ShutdownSequence sequence(observed_steps(lifecycle, seen, false));
  ASSERT_TRUE(sequence.run_normal());
  EXPECT_FALSE(seen.progress_running_at_mpi_teardown);
  EXPECT_EQ(lifecycle.stopped_by(), StopPath::Shutdown);
  ASSERT_TRUE(progress_thread_gone()) << "the progress thread outlived its stop";
  EXPECT_EQ(lifecycle.probe_count(), seen.probes_at_teardown) << "probing must cease after stop";
  EXPECT_EQ(seen.events, (std::vector<std::string>{"teardown_begin", "stop_progress", "finalize_mpi", "teardown_end"}));
}

TEST(ShutdownOrderMpi, HangPathStopsProgressBeforeAbort) {
  std::ostringstream log;
  ProgressLifecycle lifecycle(conditions_for(MPI_COMM_WORLD), MPI_COMM_WORLD, log);
  ASSERT_TRUE(lifecycle.started()) << log.str();
  wait_for_probes(lifecycle);
  TeardownObservation seen;
  ShutdownSequence sequence(observed_steps(lifecycle, seen, true));
  ASSERT_TRUE(sequence.run_hang_detected("test"));
  EXPECT_FALSE(seen.progress_running_at_mpi_teardown);
  EXPECT_EQ(lifecycle.stopped_by(), StopPath::HangDetected);
  ASSERT_FALSE(seen.events.empty());
  EXPECT_EQ(seen.events.back(), "abort_mpi");
  // A normal shutdown racing behind the hang path does nothing.
  EXPECT_FALSE(sequence.run_normal());
}

}  // namespace
}  // namespace pp
