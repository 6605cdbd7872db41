// ProgressLifecycle under mpirun -np 2 (see mpi_test_main.cpp).
#include "progress_lifecycle.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <sstream>
#include <vector>

namespace hangbench::mpi_progress {
namespace {

using namespace std::chrono_literals;

StartConditions startable() {
  StartConditions c;
  c.pipeline_stages = 2;
  c.mpi_enabled = true;
  c.interval = parse_progress_interval("1000");
  c.provided_thread_level = MPI_THREAD_MULTIPLE;
  return c;
}

TEST(ProgressStartDecision, StartsOnlyWithStagesMpiIntervalAndThreadMultiple) {
  EXPECT_EQ(decide_start(startable()), StartDecision::Start);

  auto single = startable();
  single.pipeline_stages = 1;
  EXPECT_EQ(decide_start(single), StartDecision::SingleStage);

  auto no_mpi = startable();
  no_mpi.mpi_enabled = false;
  EXPECT_EQ(decide_start(no_mpi), StartDecision::MpiDisabled);

  auto disabled = startable();
  disabled.interval = parse_progress_interval("0");
  EXPECT_EQ(decide_start(disabled), StartDecision::IntervalDisabled);

  auto serialized = startable();
  serialized.provided_thread_level = MPI_THREAD_SERIALIZED;
  EXPECT_EQ(decide_start(serialized), StartDecision::ThreadLevelTooLow);
}

TEST(ProgressLifecycle, DoesNotStartWhereItShouldNot) {
  const std::vector<std::function<void(StartConditions&)>> spoilers{
      [](StartConditions& c) { c.pipeline_stages = 1; },
      [](StartConditions& c) { c.mpi_enabled = false; },
      [](StartConditions& c) { c.interval = parse_progress_interval("-1"); },
      [](StartConditions& c) { c.provided_thread_level = MPI_THREAD_FUNNELED; },
  };
  for (const auto& spoil : spoilers) {
    StartConditions conditions = startable();
    spoil(conditions);
    std::ostringstream log;
    const auto before = atexit_fallback::registered_count();
    ProgressLifecycle lifecycle(conditions, MPI_COMM_WORLD, log);
    EXPECT_FALSE(lifecycle.started()) << log.str();
    EXPECT_FALSE(lifecycle.is_running());
    EXPECT_EQ(atexit_fallback::registered_count(), before);
    EXPECT_NE(log.str().find("not started"), std::string::npos) << log.str();
  }
}

TEST(ProgressLifecycle, StopsOnNormalShutdown) {
  std::ostringstream log;
  const auto before = atexit_fallback::registered_count();
  ProgressLifecycle lifecycle(startable(), MPI_COMM_WORLD, log);
  ASSERT_TRUE(lifecycle.started()) << log.str();
  EXPECT_TRUE(lifecycle.is_running());
  EXPECT_EQ(atexit_fallback::registered_count(), before + 1);
  lifecycle.stop_for_shutdown();
  EXPECT_FALSE(lifecycle.is_running());
  EXPECT_EQ(lifecycle.stopped_by(), StopPath::Shutdown);
  EXPECT_EQ(atexit_fallback::registered_count(), before);  // unregistered by identity
}

TEST(ProgressLifecycle, StopsOnTheHangDetectedPath) {
  std::ostringstream log;
  ProgressLifecycle lifecycle(startable(), MPI_COMM_WORLD, log);
  ASSERT_TRUE(lifecycle.started());
  lifecycle.stop_for_hang();
  EXPECT_FALSE(lifecycle.is_running());
  EXPECT_EQ(lifecycle.stopped_by(), StopPath::HangDetected);
  lifecycle.stop_for_shutdown();  // the later normal path is harmless and keeps the first cause
  EXPECT_EQ(lifecycle.stopped_by(), StopPath::HangDetected);
}

TEST(ProgressLifecycle, AtexitFallbackStopsOnlyThreadsStillRegistered) {
  std::ostringstream log;
  ProgressLifecycle stopped_early(startable(), MPI_COMM_WORLD, log);
  ProgressLifecycle left_running(startable(), MPI_COMM_WORLD, log);
  stopped_early.stop_for_shutdown();
  EXPECT_EQ(atexit_fallback::stop_all_registered(), 1u);
  EXPECT_FALSE(left_running.is_running());
  EXPECT_EQ(left_running.stopped_by(), StopPath::AtexitFallback);
  EXPECT_EQ(stopped_early.stopped_by(), StopPath::Shutdown);
  EXPECT_EQ(atexit_fallback::registered_count(), 0u);
  EXPECT_EQ(atexit_fallback::stop_all_registered(), 0u);
}

TEST(ProgressLifecycle, DestructionUnregisters) {
  const auto before = atexit_fallback::registered_count();
  {
    std::ostringstream log;
    ProgressLifecycle lifecycle(startable(), MPI_COMM_WORLD, log);
    EXPECT_EQ(atexit_fallback::registered_count(), before + 1);
  }
  EXPECT_EQ(atexit_fallback::registered_count(), before);
}

}  // namespace
}  // namespace hangbench::mpi_progress
