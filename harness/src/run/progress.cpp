#include "run/progress.hpp"

#include <cstdio>

namespace hangbench::exec_detail {
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

}  // namespace

std::string format_progress(const ProgressCounts& c, double elapsed_s) {
  std::string eta = "?";
  if (c.trials_done > 0) eta = duration(elapsed_s / c.trials_done * (c.trials_total - c.trials_done));
  char buf[200];
  std::snprintf(buf, sizeof buf, "cells %d/%d  trials %d/%d  hangs %d  crashed %d  elapsed %s  ETA %s", c.cells_done,
                c.cells_total, c.trials_done, c.trials_total, c.hangs, c.crashed, duration(elapsed_s).c_str(),
                eta.c_str());
  return buf;
}

ProgressLine::ProgressLine(std::ostream* out, ProgressMode mode, double plain_interval_s)
    : out_(out), mode_(out ? mode : ProgressMode::None), interval_(plain_interval_s) {
  if (mode_ == ProgressMode::Plain) thread_ = std::thread([this] { heartbeat(); });
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
  if (mode_ == ProgressMode::Tty) {
    *out_ << "\r\033[K" << format_progress(counts_, elapsed) << std::flush;
    drawn_ = true;
  } else if (mode_ == ProgressMode::Plain) {
    *out_ << prefix << format_progress(counts_, elapsed) << "\n" << std::flush;
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

}  // namespace hangbench::exec_detail
