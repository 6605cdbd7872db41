// The progress of a run: tty redraws one line, plain prints whole lines from a
// heartbeat (CI logs show life while every trial waits out its timeout), none
// prints nothing; the line leads with the share of the trials ended (cells end
// late, trials interleaving across them), a shard's its own.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <streambuf>
#include <thread>

#include "hangbench/executor.hpp"
#include "hangbench/runner.hpp"
#include "run/progress.hpp"

namespace hangbench::run_detail {
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
  EXPECT_EQ(text.rfind("hangbench: progress: 41% of trials (5/12)  cells done 1/3  hangs 2  crashed 1  elapsed ", 0),
            0u)
      << text;
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
  EXPECT_NE(out.str().find("100% of trials (12/12)  cells done 3/3  hangs 4"), std::string::npos) << out.str();
}

TEST(ExecProgress, TtyModeRedrawsOneLineAndEndsIt) {
  std::ostringstream out;
  ProgressLine progress(&out, ProgressMode::Tty);
  progress.update({0, 2, 1, 4, 0, 0});
  progress.update({1, 2, 2, 4, 1, 0});
  progress.finish();
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("\r\033[K25% of trials (1/4)  hangs 0", 0), 0u) << text;
  EXPECT_NE(text.find("\r\033[K50% of trials (2/4)  cells done 1/2  hangs 1"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(ExecProgress, NoneModePrintsNothing) {
  std::ostringstream out;
  ProgressLine progress(&out, ProgressMode::None, 0.001);
  progress.update({1, 1, 1, 1, 1, 1});
  progress.finish();
  EXPECT_EQ(out.str(), "");
}

TEST(ExecProgress, TheRunCountsTheShareOfTrialsWhileCellsInterleave) {
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
  // Trials interleave across cells (a0 b0 c0 a1 ...): no cell is done before its
  // last trial, so the line moves with the trials' share, not "cells 0/3".
  EXPECT_NE(text.find("\033[K16% of trials (2/12)  hangs"), std::string::npos) << text;
  EXPECT_NE(text.find("\033[K50% of trials (6/12)  hangs"), std::string::npos) << text;
  EXPECT_NE(text.find("\033[K75% of trials (9/12)  hangs"), std::string::npos) << text;
  EXPECT_NE(text.find("\033[K83% of trials (10/12)  cells done 1/3  hangs"), std::string::npos) << text;
  EXPECT_NE(text.find("100% of trials (12/12)  cells done 3/3  hangs 4  crashed 1"), std::string::npos) << text;
  EXPECT_EQ(text.find("cells 0/3"), std::string::npos) << text;
}

// A run of many quick cells renders its reports on a timer, not after every cell
// (issue 41, item 7: 10,000 cells rewrote every report 10,000 times). The clock is
// a fake and the renders are counted: no timing in the test.
TEST(ExecProgress, ReportsAreRenderedOnATimerAndAtTheEndNotPerCell) {
  Matrix m;
  m.name = "cadence";
  for (int i = 0; i < 50; ++i) {
    Cell c;
    c.id = "x=" + std::to_string(i);
    c.params = {{"x", std::to_string(i)}};
    c.trials = 1;
    m.cells.push_back(c);
  }
  m.concurrency = 1;
  auto run_with = [&](const std::string& folder, double step_s) {
    FakeExecutor fake;
    RunOptions opts;
    opts.out_dir = std::string(HB_BINARY_DIR) + "/" + folder;
    opts.executor = &fake;
    opts.formats = {"json"};
    opts.report_interval_s = 5;
    double now = 0;
    opts.clock = [&] {
      const double t = now;
      now += step_s;
      return t;
    };
    int renders = 0;
    opts.on_reports_written = [&] { ++renders; };
    RunResult r = run_matrix(m, opts);
    EXPECT_FALSE(r.written.empty());  // the end's render wrote the report
    return renders;
  };
  // Time stands still: 50 cells end, and only the end renders.
  EXPECT_EQ(run_with("exec_cadence_still", 0), 1);
  // A second per trial, at most every 5 s: after trials 5, 10, ..., 50, and the end.
  EXPECT_EQ(run_with("exec_cadence_ticking", 1), 11);
}

// A shard counts its own trials, not the matrix's cells (most of which other shards run).
TEST(ExecProgress, AShardCountsItsOwnTrials) {
  Matrix m;
  m.name = "progress-shard";
  for (const char* id : {"a", "b"}) {
    Cell c;
    c.id = id;
    c.params = {{"x", id}};
    c.trials = 4;
    m.cells.push_back(c);
  }
  m.concurrency = 1;
  FakeExecutor fake;
  std::ostringstream log;
  RunOptions opts;
  opts.out_dir = std::string(HB_BINARY_DIR) + "/exec_progress_shard_test";
  opts.executor = &fake;
  opts.formats = {};
  opts.log = &log;
  opts.progress = ProgressMode::Tty;
  opts.shard = Shard{1, 4};
  run_matrix(m, opts);
  const std::string text = log.str();
  EXPECT_NE(text.find("shard 1/4: 0% of its trials (0/2)"), std::string::npos) << text;
  EXPECT_NE(text.find("shard 1/4: 100% of its trials (2/2)  hangs 0"), std::string::npos) << text;
  EXPECT_EQ(text.find("cells"), std::string::npos) << text;
}

TEST(ExecProgress, TrialsInFlightHoldTheEtaUpToTheirDeadlines) {
  ProgressCounts c{0, 1, 9, 10, 0, 0};
  c.running = 1;
  c.in_flight_left_s = 100;
  // Only the hung trial is left: the ETA is its deadline, not the rate so far (9 s),
  // and a bound: the trial may end, or its phase deadline call it, much sooner.
  EXPECT_NE(format_progress(c, 9).find("running 1  elapsed 9s  ETA at most 1m40s"), std::string::npos)
      << format_progress(c, 9);
  c.in_flight_left_s = 0.5;  // the rate's estimate (1 s for the last queued trial) is above every deadline
  c.running = 1;
  c.trials_done = 8;
  EXPECT_NE(format_progress(c, 8).find("ETA 1s"), std::string::npos) << format_progress(c, 8);
  c.trials_done = 9;
  c.capturing = 1;
  c.in_flight_left_s = 0;
  EXPECT_NE(format_progress(c, 200).find("hangs 0 (+1 past deadline, capturing)  crashed 0  running 1"),
            std::string::npos)
      << format_progress(c, 200);
  // Nothing ended yet but trials queued: no rate to go on.
  ProgressCounts start{0, 2, 0, 40, 0, 0};
  start.running = 4;
  EXPECT_NE(format_progress(start, 3).find("ETA ?"), std::string::npos) << format_progress(start, 3);
}

// A phase deadline (teardown_begin + 5 s) that comes before the whole-trial timeout
// (120 s) is what the ETA waits for, once the executor tells it.
class PhaseDeadlineExecutor : public TrialExecutor {
 public:
  explicit PhaseDeadlineExecutor(const TrialsInFlight& in_flight) : in_flight_(in_flight) {}
  TrialResult run(const Cell& cell, int index, const TrialContext& ctx) override {
    before = in_flight_.added_to({}).in_flight_left_s;
    if (ctx.on_deadline_moved) ctx.on_deadline_moved(5);
    after = in_flight_.added_to({}).in_flight_left_s;
    TrialResult r;
    r.cell_id = cell.id;
    r.index = index;
    r.outcome = Outcome::Passed;
    return r;
  }
  double before = 0, after = 0;

 private:
  const TrialsInFlight& in_flight_;
};

TEST(ExecProgress, APhaseDeadlineBringsTheEtaOfATrialInFlightForward) {
  TrialsInFlight in_flight;
  PhaseDeadlineExecutor phased(in_flight);
  CountingExecutor counted(phased, in_flight);
  Cell cell;
  cell.id = "a";
  cell.timeout_s = 120;
  counted.run(cell, 0, {});
  EXPECT_GT(phased.before, 100);  // only the whole-trial timeout is known at the start
  EXPECT_LE(phased.after, 5);
  EXPECT_GT(phased.after, 4);
  // A later deadline never pushes an earlier one back.
  in_flight.begin("b", 0, 10);
  in_flight.deadline_moved("b", 0, 60);
  EXPECT_LE(in_flight.added_to({}).in_flight_left_s, 10);
}

// An executor whose trials hang until the test lets them go: one passes its
// deadline (the real executor tells on_deadline), the other is still running.
class HeldExecutor : public TrialExecutor {
 public:
  TrialResult run(const Cell& cell, int index, const TrialContext& ctx) override {
    if (index == 0 && ctx.on_deadline) ctx.on_deadline();
    {
      std::unique_lock lock(mutex_);
      ++started_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return released_; });
    }
    TrialResult r;
    r.cell_id = cell.id;
    r.index = index;
    r.outcome = index == 0 ? Outcome::Hang : Outcome::Passed;
    return r;
  }
  void wait_started(int n) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(30), [&] { return started_ >= n; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int started_ = 0;
  bool released_ = false;
};

TEST(ExecProgress, TheLineCountsTrialsInFlightAndThosePastTheirDeadline) {
  HeldExecutor held;
  TrialsInFlight in_flight;
  CountingExecutor counted(held, in_flight);
  LineWaiter buffer;
  std::ostream out(&buffer);
  ProgressLine progress(&out, ProgressMode::Plain, 0.01, &in_flight);
  progress.update({0, 1, 0, 2, 0, 0});
  Cell cell;
  cell.id = "a";
  cell.timeout_s = 120;
  std::thread first([&] { counted.run(cell, 0, {}); });
  std::thread second([&] { counted.run(cell, 1, {}); });
  held.wait_started(2);
  ASSERT_TRUE(buffer.wait_for_lines(1));
  // The heartbeat reads the trials in flight: wait for a line drawn after both began.
  std::string text;
  for (size_t lines = 2; lines < 3000; ++lines) {
    ASSERT_TRUE(buffer.wait_for_lines(lines));
    text = buffer.text();
    if (text.find("running 2") != std::string::npos) break;
  }
  held.release();
  first.join();
  second.join();
  progress.finish();
  EXPECT_NE(text.find("hangs 0 (+1 past deadline, capturing)  crashed 0  running 2  elapsed "), std::string::npos)
      << text;
  // Both trials may take up to their 120 s deadline: the ETA says so, as a bound.
  EXPECT_NE(text.find("ETA at most 1m5"), std::string::npos) << text;
  EXPECT_EQ(in_flight.added_to({}).running, 0);
}

}  // namespace
}  // namespace hangbench::run_detail
