// MpiProgressThread under mpirun -np 2 (see mpi_test_main.cpp).
#include "mpi_progress_thread.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace hangbench::mpi_progress {
namespace {

using namespace std::chrono_literals;

// Waits (bounded) until the thread has probed at least `count` times.
bool wait_for_probes(const MpiProgressThread& t, std::uint64_t count, std::chrono::seconds limit = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (t.probe_count() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
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

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

TEST(MpiProgressThread, DebianOpenMpiProvidesThreadMultiple) {
  // Not a skip condition: every other test here needs it, so its absence is a failure.
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  ASSERT_EQ(provided, MPI_THREAD_MULTIPLE);
}

TEST(MpiProgressThread, ProbesBeforeStopAndNotAfter) {
  MpiProgressThread thread(MPI_COMM_WORLD, 500us);
  EXPECT_TRUE(thread.is_running());
  ASSERT_TRUE(wait_for_probes(thread, 5)) << "no probes within the deadline";
  thread.stop();
  EXPECT_FALSE(thread.is_running());
  const auto after_stop = thread.probe_count();
  ASSERT_TRUE(progress_thread_gone()) << "the worker outlived stop()";
  EXPECT_EQ(thread.probe_count(), after_stop);
}

TEST(MpiProgressThread, SecondStopIsHarmless) {
  MpiProgressThread thread(MPI_COMM_WORLD, 1ms);
  thread.stop();
  const auto count = thread.probe_count();
  thread.stop();
  EXPECT_FALSE(thread.is_running());
  EXPECT_EQ(thread.probe_count(), count);
}

TEST(MpiProgressThread, StopWakesTheWorkerWithoutWaitingForTheInterval) {
  // A one-second interval: stop() must not wait for it (the condvar wakes the worker).
  MpiProgressThread thread(MPI_COMM_WORLD, 1000000us);
  auto stopped = std::async(std::launch::async, [&] { thread.stop(); });
  if (stopped.wait_for(30s) != std::future_status::ready) {
    ADD_FAILURE() << "stop() did not return";
    std::fflush(nullptr);
    std::abort();  // a joined-forever worker would hang the suite otherwise
  }
  EXPECT_FALSE(thread.is_running());
  EXPECT_EQ(thread.probe_count(), 0u);
}

TEST(MpiProgressThread, FourConcurrentStopCallersTwentyTimes) {
  for (int repetition = 0; repetition < 20; ++repetition) {
    MpiProgressThread thread(MPI_COMM_WORLD, 200us);
    ASSERT_TRUE(wait_for_probes(thread, 1));
    std::vector<std::future<void>> callers;
    for (int i = 0; i < 4; ++i) {
      callers.push_back(std::async(std::launch::async, [&] { thread.stop(); }));
    }
    for (auto& caller : callers) {
      if (caller.wait_for(10s) != std::future_status::ready) {
        ADD_FAILURE() << "a concurrent stop() caller missed its join deadline (repetition " << repetition << ")";
        std::fflush(nullptr);
        std::abort();  // the future's destructor would block on the stuck caller
      }
      caller.get();
    }
    EXPECT_FALSE(thread.is_running()) << "repetition " << repetition;
  }
}

TEST(MpiProgressThread, RejectsNonPositiveInterval) {
  EXPECT_THROW(MpiProgressThread(MPI_COMM_WORLD, 0us), std::invalid_argument);
  EXPECT_THROW(MpiProgressThread(MPI_COMM_WORLD, -5us), std::invalid_argument);
  std::ostringstream log;
  EXPECT_THROW(MpiProgressThread::start_if_supported(MPI_COMM_WORLD, 0us, log), std::invalid_argument);
}

TEST(MpiProgressThread, StartIfSupportedStartsUnderThreadMultiple) {
  std::ostringstream log;
  auto thread = MpiProgressThread::start_if_supported(MPI_COMM_WORLD, 1ms, log);
  ASSERT_NE(thread, nullptr) << log.str();
  EXPECT_TRUE(thread->is_running());
  EXPECT_EQ(log.str(), "");
}

TEST(MpiProgressThread, MessageOnOrdinaryTagStaysWithItsReceiver) {
  // Rank 0 sends on an ordinary tag while both ranks' threads probe the
  // reserved tag; rank 1 lets many probes pass over the waiting message,
  // then must still find and receive it intact.
  constexpr int kOrdinaryTag = 7;
  const std::array<int, 4> sent{11, 22, 33, 44};
  MpiProgressThread thread(MPI_COMM_WORLD, 100us);
  if (world_rank() == 0) {
    MPI_Send(sent.data(), 4, MPI_INT, 1, kOrdinaryTag, MPI_COMM_WORLD);
    // The eager send returns at once; on a loaded machine the thread may not have
    // run yet (this flaked under CPU load): let it probe while the message waits.
    ASSERT_TRUE(wait_for_probes(thread, 1));
  } else if (world_rank() == 1) {
    ASSERT_TRUE(wait_for_probes(thread, 50));
    MPI_Status status;
    MPI_Probe(0, kOrdinaryTag, MPI_COMM_WORLD, &status);  // still there, unclaimed
    std::array<int, 4> received{};
    MPI_Recv(received.data(), 4, MPI_INT, 0, kOrdinaryTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(received, sent);
  }
  thread.stop();
  EXPECT_GT(thread.probe_count(), 0u);
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace hangbench::mpi_progress
