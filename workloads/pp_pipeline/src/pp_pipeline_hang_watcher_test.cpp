// The workload's hang trigger: a watched signal or the watchdog deadline runs
// the hang callback once; stop() before either ends the watch silently.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "hang_watcher.hpp"

namespace pp {
namespace {

// Collects the callback's reason; waits are bounded so a bug fails, not hangs.
struct Fired {
  std::mutex mutex;
  std::condition_variable cv;
  std::string reason;
  int calls = 0;
  HangWatcher::OnHang callback() {
    return [this](const std::string& why) {
      std::lock_guard<std::mutex> lock(mutex);
      reason = why;
      ++calls;
      cv.notify_all();
    };
  }
  bool wait() {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, std::chrono::seconds(30), [this] { return calls > 0; });
  }
};

class PpHangWatcher : public ::testing::Test {
 protected:
  // The signal must be blocked everywhere before it is sent, as in the workload.
  void SetUp() override { HangWatcher::block_watched_signals(); }
};

TEST_F(PpHangWatcher, SignalRunsTheHangPathWithItsName) {
  Fired fired;
  HangWatcher watcher(fired.callback(), std::chrono::duration<double>(0));
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  ASSERT_TRUE(fired.wait());
  EXPECT_EQ(fired.reason, "signal USR1");
  EXPECT_TRUE(watcher.fired());
  EXPECT_FALSE(watcher.stop()) << "stop() after the hang path must report the lost race";
  EXPECT_EQ(fired.calls, 1);
}

TEST_F(PpHangWatcher, WatchdogDeadlineRunsTheHangPath) {
  Fired fired;
  HangWatcher watcher(fired.callback(), std::chrono::duration<double>(0.01));
  ASSERT_TRUE(fired.wait());
  EXPECT_EQ(fired.reason, "watchdog deadline");
}

TEST_F(PpHangWatcher, StopBeforeAnyTriggerNeverFires) {
  Fired fired;
  {
    HangWatcher watcher(fired.callback(), std::chrono::duration<double>(0));
    EXPECT_TRUE(watcher.stop());
    EXPECT_TRUE(watcher.stop()) << "a second stop is harmless";
    EXPECT_FALSE(watcher.fired());
  }
  EXPECT_EQ(fired.calls, 0);
}

}  // namespace
}  // namespace pp
