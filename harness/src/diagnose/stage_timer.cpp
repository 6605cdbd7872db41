// `diagnose --timings`: each stage's seconds on stderr, then the total.
#include "diagnose/stage_timer.hpp"

#include <fmt/format.h>

#include <iostream>

#include "hangbench/clock.hpp"

namespace hangbench::diagnose {

StageTimer::StageTimer(bool enabled) : enabled_(enabled), last_(monotonic_seconds()), first_(last_) {}

void StageTimer::mark(const std::string& stage) {
  const double now = monotonic_seconds();
  print(stage, now - last_);
  last_ = now;
}

void StageTimer::print(const std::string& stage, double seconds) const {
  if (enabled_) std::cerr << fmt::format("timings: {:<10} {:.3f} s\n", stage, seconds);
}

void StageTimer::total() { print("total", monotonic_seconds() - first_); }

}  // namespace hangbench::diagnose
