// ddp_abort's lines: workloads/common/log.hpp, decorated with rank, pid and wall
// time, "[ddp_abort rank R pid P t=T] message", so the logs of a trial run on
// the GPU machine explain themselves.
#pragma once

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <string>

#include "log_line.hpp"
#include "phase.hpp"

namespace hangbench::ddp {

inline int& log_rank() {
  static int rank = 0;  // set once in main, before any thread starts
  return rank;
}

inline std::string log_decoration() {
  char text[96];
  std::snprintf(text, sizeof text, "rank %d pid %d t=%.3f", log_rank(), static_cast<int>(getpid()),
                phase::now_seconds());
  return text;
}

__attribute__((format(printf, 1, 2))) inline void log(const char* format, ...) {
  static const workload::LogSettings settings{"ddp_abort", log_decoration};
  va_list args;
  va_start(args, format);
  workload::vlogf(settings, format, args);
  va_end(args);
}

}  // namespace hangbench::ddp
