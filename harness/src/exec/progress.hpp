// The live progress line: cells and trials done, hangs, elapsed, ETA. Drawn in
// place with '\r' (only when the caller decided the stream is a terminal).
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace hangbench::exec_detail {

struct ProgressCounts {
  int cells_done = 0, cells_total = 0;
  int trials_done = 0, trials_total = 0;   // this session's trials (resume: the rest)
  int hangs = 0;
};

std::string format_progress(const ProgressCounts& c, double elapsed_s);

class ProgressLine {
 public:
  ProgressLine(std::ostream* out, bool enabled) : out_(out), enabled_(enabled && out) {}
  void update(const ProgressCounts& c);
  void finish();   // ends the line so later output starts clean

 private:
  std::ostream* out_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace hangbench::exec_detail
