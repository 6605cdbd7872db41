// Shutdown order of the PP workload with recording fakes: the progress source
// stops before MPI is finalised or aborted, on both exit paths, exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "shutdown_sequence.hpp"

namespace pp {
namespace {

struct Recorder {
  std::mutex mutex;
  std::vector<std::string> events;
  void add(const std::string& e) {
    std::lock_guard<std::mutex> lock(mutex);
    events.push_back(e);
  }
};

ShutdownSteps recording_steps(Recorder& r) {
  ShutdownSteps s;
  s.mark_phase = [&r](const std::string& p) { r.add("phase:" + p); };
  s.record_hang_reason = [&r](const std::string& why) { r.add("reason:" + why); };
  s.stop_progress = [&r] { r.add("stop_progress"); };
  s.release_gpu_waits = [&r] { r.add("release_gpu_waits"); };
  s.free_gpu_resources = [&r] { r.add("free_gpu_resources"); };
  s.finalize_mpi = [&r] { r.add("finalize_mpi"); };
  s.abort_mpi = [&r] { r.add("abort_mpi"); };
  return s;
}

TEST(PpShutdown, NormalPathOrder) {
  Recorder r;
  ShutdownSequence seq(recording_steps(r));
  ASSERT_TRUE(seq.run_normal());
  EXPECT_EQ(r.events, (std::vector<std::string>{"phase:teardown_begin", "stop_progress", "free_gpu_resources",
                                                "finalize_mpi", "phase:teardown_end"}));
}

TEST(PpShutdown, HangPathOrderReleasesSpinWaitsAndAbortsLast) {
  Recorder r;
  ShutdownSequence seq(recording_steps(r));
  ASSERT_TRUE(seq.run_hang_detected("signal SIGTERM"));
  EXPECT_EQ(r.events,
            (std::vector<std::string>{"phase:hang_detected", "reason:signal SIGTERM", "stop_progress",
                                      "release_gpu_waits", "phase:teardown_begin", "phase:teardown_end", "abort_mpi"}));
}

TEST(PpShutdown, SecondPathDoesNothing) {
  Recorder r;
  ShutdownSequence seq(recording_steps(r));
  ASSERT_TRUE(seq.run_normal());
  const auto after_first = r.events;
  EXPECT_FALSE(seq.run_hang_detected("watchdog"));
  EXPECT_FALSE(seq.run_normal());
  EXPECT_EQ(r.events, after_first);
  EXPECT_TRUE(seq.started());
}

TEST(PpShutdown, RacingPathsRunExactlyOneTeardown) {
  for (int repetition = 0; repetition < 20; ++repetition) {
    Recorder r;
    ShutdownSequence seq(recording_steps(r));
    std::atomic<int> winners{0};
    std::vector<std::thread> callers;
    for (int i = 0; i < 4; ++i) {
      callers.emplace_back([&, i] {
        const bool won = i % 2 == 0 ? seq.run_normal() : seq.run_hang_detected("race");
        if (won) ++winners;
      });
    }
    for (auto& t : callers) t.join();
    EXPECT_EQ(winners.load(), 1);
    const auto stops = std::count(r.events.begin(), r.events.end(), "stop_progress");
    EXPECT_EQ(stops, 1);
    const auto mpi_end = std::find_if(r.events.begin(), r.events.end(),
                                      [](const std::string& e) { return e == "finalize_mpi" || e == "abort_mpi"; });
    ASSERT_NE(mpi_end, r.events.end());
    EXPECT_LT(std::find(r.events.begin(), r.events.end(), "stop_progress"), mpi_end);
  }
}

TEST(PpShutdown, MissingStepsAreSkipped) {
  ShutdownSequence seq(ShutdownSteps{});
  EXPECT_TRUE(seq.run_hang_detected("nothing wired"));
}

}  // namespace
}  // namespace pp
