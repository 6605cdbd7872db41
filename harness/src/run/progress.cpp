#include "run/progress.hpp"

#include <algorithm>
#include <cstdio>

namespace hangbench::run_detail {
namespace {

std::string duration(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) / 60) % 60);
  return buf;
}

// The trials not started yet at the rate so far; the trials in flight end by their
// deadlines at the latest (the whole-trial timeout, or a phase deadline once the
// phase is reported), so a hung one holds the ETA up until it is called. That
// deadline is a bound (a trial usually ends long before it): then the ETA says
// "at most".
std::string eta(const ProgressCounts& c, double elapsed_s) {
  const int queued = std::max(0, c.trials_total - c.trials_done - c.running);
  if (queued > 0 && c.trials_done == 0) return "?";
  const double rest = queued > 0 ? elapsed_s / c.trials_done * queued : 0;
  if (c.running > 0 && c.in_flight_left_s > rest) return "at most " + duration(c.in_flight_left_s);
  return duration(rest);
}

}  // namespace

std::string format_progress(const ProgressCounts& c, double elapsed_s) {
  // Trials interleave across cells, so "cells 0/24" would stand still for most of
  // a run: the share of the trials leads.
  const int percent = c.trials_total > 0 ? static_cast<int>(100LL * c.trials_done / c.trials_total) : 100;
  std::string out = c.shard.empty() ? "" : "shard " + c.shard + ": ";
  out += std::to_string(percent) + "% of " + (c.shard.empty() ? "trials" : "its trials") + " (" +
         std::to_string(c.trials_done) + "/" + std::to_string(c.trials_total) + ")";
  if (c.shard.empty() && c.cells_done > 0) {
    out += "  cells done " + std::to_string(c.cells_done) + "/" + std::to_string(c.cells_total);
  }
  out += "  hangs " + std::to_string(c.hangs);
  if (c.capturing > 0) out += " (+" + std::to_string(c.capturing) + " past deadline, capturing)";
  out += "  crashed " + std::to_string(c.crashed);
  if (c.running > 0) out += "  running " + std::to_string(c.running);
  out += "  elapsed " + duration(elapsed_s) + "  ETA " + eta(c, elapsed_s);
  return out;
}

void TrialsInFlight::begin(const std::string& cell, int index, double timeout_s) {
  std::lock_guard lock(mutex_);
  trials_[{cell, index}] = {std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                   std::chrono::duration<double>(timeout_s)),
                            false};
}

void TrialsInFlight::deadline_moved(const std::string& cell, int index, double seconds_left) {
  std::lock_guard lock(mutex_);
  auto it = trials_.find({cell, index});
  if (it == trials_.end()) return;
  const auto moved = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                            std::chrono::duration<double>(std::max(0.0, seconds_left)));
  it->second.deadline = std::min(it->second.deadline, moved);
}

void TrialsInFlight::deadline_passed(const std::string& cell, int index) {
  std::lock_guard lock(mutex_);
  if (auto it = trials_.find({cell, index}); it != trials_.end()) it->second.capturing = true;
}

void TrialsInFlight::end(const std::string& cell, int index) {
  std::lock_guard lock(mutex_);
  trials_.erase({cell, index});
}

ProgressCounts TrialsInFlight::added_to(ProgressCounts counts) const {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  counts.running = static_cast<int>(trials_.size());
  counts.capturing = 0;
  counts.in_flight_left_s = 0;
  for (const auto& [key, trial] : trials_) {
    counts.capturing += trial.capturing;
    counts.in_flight_left_s =
        std::max(counts.in_flight_left_s, std::chrono::duration<double>(trial.deadline - now).count());
  }
  return counts;
}

TrialResult CountingExecutor::run(const Cell& cell, int index, const TrialContext& ctx) {
  in_flight_.begin(cell.id, index, cell.timeout_s);
  TrialContext counted = ctx;
  counted.on_deadline = [this, &cell, index, outer = ctx.on_deadline] {
    in_flight_.deadline_passed(cell.id, index);
    if (outer) outer();
  };
  // A phase deadline (teardown_begin + 8 s) ends the trial long before its timeout: the ETA follows it.
  counted.on_deadline_moved = [this, &cell, index, outer = ctx.on_deadline_moved](double seconds_left) {
    in_flight_.deadline_moved(cell.id, index, seconds_left);
    if (outer) outer(seconds_left);
  };
  try {
    TrialResult result = inner_.run(cell, index, counted);
    in_flight_.end(cell.id, index);
    return result;
  } catch (...) {
    in_flight_.end(cell.id, index);
    throw;
  }
}

ProgressLine::ProgressLine(std::ostream* out, ProgressMode mode, double plain_interval_s,
                           const TrialsInFlight* in_flight)
    : out_(out),
      mode_(out ? mode : ProgressMode::None),
      interval_(mode == ProgressMode::Tty ? std::min(plain_interval_s, 1.0) : plain_interval_s),
      in_flight_(in_flight) {
  if (mode_ != ProgressMode::None) thread_ = std::thread([this] { heartbeat(); });
}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressLine::print_locked(const char* prefix) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const ProgressCounts counts = in_flight_ ? in_flight_->added_to(counts_) : counts_;
  if (mode_ == ProgressMode::Tty) {
    *out_ << "\r\033[K" << format_progress(counts, elapsed) << std::flush;
    drawn_ = true;
  } else if (mode_ == ProgressMode::Plain) {
    *out_ << prefix << format_progress(counts, elapsed) << "\n" << std::flush;
  }
}

void ProgressLine::heartbeat() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (wake_.wait_for(lock, interval_, [this] { return stopping_; })) break;
    print_locked("hangbench: progress: ");
  }
}

void ProgressLine::update(const ProgressCounts& c) {
  std::lock_guard lock(mutex_);
  counts_ = c;
  if (mode_ == ProgressMode::Tty) print_locked("");
}

void ProgressLine::break_line() {
  std::lock_guard lock(mutex_);
  if (mode_ == ProgressMode::Tty && drawn_) *out_ << "\n" << std::flush;
  drawn_ = false;
}

void ProgressLine::message(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (!out_) return;
  if (mode_ == ProgressMode::Tty && drawn_) *out_ << "\n";
  drawn_ = false;
  *out_ << line << "\n" << std::flush;
}

void ProgressLine::finish() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    if (mode_ == ProgressMode::Plain) print_locked("hangbench: progress: ");
    if (mode_ == ProgressMode::Tty && drawn_) *out_ << "\n" << std::flush;
    drawn_ = false;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace hangbench::run_detail
