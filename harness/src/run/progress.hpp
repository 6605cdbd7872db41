// Progress of a run on the log stream: cells whose trials have all ended, trials
// done, hangs, crashed, elapsed, ETA. Three modes: `tty` redraws one line in
// place with '\r'; `plain` (CI logs) prints a whole line every few seconds from a
// heartbeat thread, so that a log shows life even while every trial waits out its
// hang timeout; `none` prints nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "hangbench/runner.hpp"

namespace hangbench::exec_detail {

struct ProgressCounts {
  int cells_done = 0, cells_total = 0;    // cells whose trials have all ended
  int trials_done = 0, trials_total = 0;  // this session's trials (resume: the rest)
  int hangs = 0, crashed = 0;
};

std::string format_progress(const ProgressCounts& c, double elapsed_s);

class ProgressLine {
 public:
  ProgressLine(std::ostream* out, ProgressMode mode, double plain_interval_s = 5.0);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const ProgressCounts& c);
  // Before another message: ends a tty line so that the message starts clean.
  void break_line();
  // At the end: stops the heartbeat; plain mode prints the last counts once more.
  void finish();

 private:
  void heartbeat();
  void print_locked(const char* prefix);

  std::ostream* out_;
  ProgressMode mode_;
  std::chrono::duration<double> interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  ProgressCounts counts_;
  bool drawn_ = false;
  bool stopping_ = false;
  std::thread thread_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace hangbench::exec_detail
