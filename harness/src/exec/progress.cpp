#include "exec/progress.hpp"

#include <cstdio>

namespace hangbench::exec_detail {
namespace {

std::string duration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, (static_cast<int>(s) / 60) % 60);
  return buf;
}

}  // namespace

std::string format_progress(const ProgressCounts& c, double elapsed_s) {
  std::string eta = "?";
  if (c.trials_done > 0) eta = duration(elapsed_s / c.trials_done * (c.trials_total - c.trials_done));
  char buf[160];
  std::snprintf(buf, sizeof buf, "cells %d/%d  trials %d/%d  hangs %d  elapsed %s  ETA %s", c.cells_done,
                c.cells_total, c.trials_done, c.trials_total, c.hangs, duration(elapsed_s).c_str(), eta.c_str());
  return buf;
}

void ProgressLine::update(const ProgressCounts& c) {
  if (!enabled_) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  *out_ << "\r\033[K" << format_progress(c, elapsed) << std::flush;
  drawn_ = true;
}

void ProgressLine::finish() {
  if (enabled_ && drawn_) *out_ << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace hangbench::exec_detail
