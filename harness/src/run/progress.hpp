// Progress of a run on the log stream: the share of the trials ended (a shard's
// own trials; cells end late, since trials interleave across them, so cells are
// only counted once one is done), hangs (and trials past their deadline whose
// evidence is being captured), crashed, running, elapsed, ETA ("at most" while it
// is the deadline of a trial in flight). Three modes: `tty` redraws one line in place
// with '\r' (every second, and on every change); `plain` (CI logs) prints a whole
// line every few seconds from a heartbeat thread, so that a log shows life even
// while every trial waits out its hang timeout; `none` prints nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <utility>

#include "hangbench/executor.hpp"
#include "hangbench/runner.hpp"

namespace hangbench::run_detail {

struct ProgressCounts {
  int cells_done = 0, cells_total = 0;    // cells whose trials have all ended
  int trials_done = 0, trials_total = 0;  // this session's trials (resume: the rest)
  int hangs = 0, crashed = 0;
  // In flight (TrialsInFlight): running, past their deadline, and the longest any
  // of them may still take before its deadline.
  int running = 0, capturing = 0;
  double in_flight_left_s = 0;
  std::string shard;  // "1/4" for `run --shard`: the trials counted are this shard's
};

std::string format_progress(const ProgressCounts& c, double elapsed_s);

// The trials under way: when each must end at the latest (its whole-trial timeout)
// and whether its deadline has passed. Thread-safe.
class TrialsInFlight {
 public:
  void begin(const std::string& cell, int index, double timeout_s);
  // A phase deadline that comes before the trial's timeout: `seconds_left` from now.
  void deadline_moved(const std::string& cell, int index, double seconds_left);
  void deadline_passed(const std::string& cell, int index);
  void end(const std::string& cell, int index);
  // `counts` with running, capturing and in_flight_left_s filled in.
  ProgressCounts added_to(ProgressCounts counts) const;

 private:
  struct Trial {
    std::chrono::steady_clock::time_point deadline;
    bool capturing = false;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, Trial> trials_;
};

// The run's executor, each trial entered in `in_flight` while it runs.
class CountingExecutor : public TrialExecutor {
 public:
  CountingExecutor(TrialExecutor& inner, TrialsInFlight& in_flight) : inner_(inner), in_flight_(in_flight) {}
  TrialResult run(const Cell& cell, int index, const TrialContext& ctx) override;

 private:
  TrialExecutor& inner_;
  TrialsInFlight& in_flight_;
};

class ProgressLine {
 public:
  // `in_flight`, when given, is read at every redraw so that the line moves while
  // trials wait out their timeouts.
  ProgressLine(std::ostream* out, ProgressMode mode, double plain_interval_s = 5.0,
               const TrialsInFlight* in_flight = nullptr);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const ProgressCounts& c);
  // Before another message: ends a tty line so that the message starts clean.
  void break_line();
  // A whole line (a warning) between two redraws, never in the middle of one.
  void message(const std::string& line);
  // At the end: stops the heartbeat; plain mode prints the last counts once more.
  void finish();

 private:
  void heartbeat();
  void print_locked(const char* prefix);

  std::ostream* out_;
  ProgressMode mode_;
  std::chrono::duration<double> interval_;
  const TrialsInFlight* in_flight_;
  std::mutex mutex_;
  std::condition_variable wake_;
  ProgressCounts counts_;
  bool drawn_ = false;
  bool stopping_ = false;
  std::thread thread_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace hangbench::run_detail
