// The progress of a run: tty redraws one line, plain prints whole lines from a
// heartbeat (CI logs show life while every trial waits out its timeout), none
// prints nothing; the cell counter counts cells whose trials have all ended.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <streambuf>

#include "hangbench/executor.hpp"
#include "hangbench/runner.hpp"
#include "run/progress.hpp"

namespace hangbench::exec_detail {
namespace {

// A stream buffer that lets the test wait for the n-th complete line.
class LineWaiter : public std::streambuf {
 public:
  bool wait_for_lines(size_t n) {
    std::unique_lock lock(mutex_);
    // The bound only turns a broken heartbeat into a failure instead of a hang.
    return seen_.wait_for(lock, std::chrono::seconds(30), [&] { return lines_ >= n; });
  }
  std::string text() {
    std::lock_guard lock(mutex_);
    return text_;
  }

 protected:
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return c;
    {
      std::lock_guard lock(mutex_);
      text_ += static_cast<char>(c);
      if (c == '\n') ++lines_;
    }
    seen_.notify_all();
    return c;
  }

 private:
  std::mutex mutex_;
  std::condition_variable seen_;
  std::string text_;
  size_t lines_ = 0;
};

TEST(ExecProgress, PlainModePrintsAWholeLineOnEveryHeartbeat) {
  LineWaiter buffer;
  std::ostream out(&buffer);
  ProgressLine progress(&out, ProgressMode::Plain, 0.01);
  progress.update({1, 3, 5, 12, 2, 1});
  ASSERT_TRUE(buffer.wait_for_lines(2)) << buffer.text();
  progress.finish();
  const std::string text = buffer.text();
  EXPECT_EQ(text.rfind("hangbench: progress: cells 1/3  trials 5/12  hangs 2  crashed 1  elapsed ", 0), 0u) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);  // no redraw codes in a log
  EXPECT_EQ(text.back(), '\n');
}

TEST(ExecProgress, PlainModePrintsTheLastCountsAtTheEnd) {
  std::ostringstream out;
  {
    ProgressLine progress(&out, ProgressMode::Plain, 3600);
    progress.update({3, 3, 12, 12, 4, 0});
    progress.finish();
  }
  EXPECT_NE(out.str().find("cells 3/3  trials 12/12  hangs 4"), std::string::npos) << out.str();
}

TEST(ExecProgress, TtyModeRedrawsOneLineAndEndsIt) {
  std::ostringstream out;
  ProgressLine progress(&out, ProgressMode::Tty);
  progress.update({0, 2, 1, 4, 0, 0});
  progress.update({1, 2, 2, 4, 1, 0});
  progress.finish();
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("\r\033[Kcells 0/2", 0), 0u) << text;
  EXPECT_NE(text.find("\r\033[Kcells 1/2  trials 2/4  hangs 1"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(ExecProgress, NoneModePrintsNothing) {
  std::ostringstream out;
  ProgressLine progress(&out, ProgressMode::None, 0.001);
  progress.update({1, 1, 1, 1, 1, 1});
  progress.finish();
  EXPECT_EQ(out.str(), "");
}

TEST(ExecProgress, TheRunCountsCellsWhoseTrialsHaveAllEnded) {
  Matrix m;
  m.name = "progress";
  for (const char* id : {"a", "b", "c"}) {
    Cell c;
    c.id = id;
    c.params = {{"x", id}};
    c.trials = 4;
    m.cells.push_back(c);
  }
  m.concurrency = 1;
  FakeExecutor fake;
  for (int i = 0; i < 4; ++i) fake.set("b", i, Outcome::Hang);
  fake.set("c", 0, Outcome::Crashed);
  std::ostringstream log;
  RunOptions opts;
  opts.out_dir = std::string(HB_BINARY_DIR) + "/exec_progress_test";
  opts.executor = &fake;
  opts.formats = {};
  opts.log = &log;
  opts.progress = ProgressMode::Tty;
  run_matrix(m, opts);
  const std::string text = log.str();
  // Trials interleave across cells (a0 b0 c0 a1 ...): no cell is done before its last trial.
  EXPECT_NE(text.find("cells 0/3  trials 9/12"), std::string::npos) << text;
  EXPECT_NE(text.find("cells 1/3  trials 10/12"), std::string::npos) << text;
  EXPECT_NE(text.find("cells 3/3  trials 12/12  hangs 4  crashed 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace hangbench::exec_detail
