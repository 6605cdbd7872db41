// One line per event on stderr, prefixed with rank, pid and wall time, so the
// logs of a trial run on the GPU machine explain themselves.
#pragma once

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

#include "phase.hpp"

namespace hangbench::ddp {

inline int& log_rank() {
  static int rank = 0;   // set once in main, before any thread starts
  return rank;
}

__attribute__((format(printf, 1, 2))) inline void log(const char* format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::fprintf(stderr, "[ddp_abort rank %d pid %d t=%.3f] %s\n", log_rank(), static_cast<int>(getpid()),
               phase::now_seconds(), message);
  std::fflush(stderr);
}

}  // namespace hangbench::ddp
