// One prefix for every line a rank writes, so interleaved mpirun output reads well.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

#include "phase.hpp"

namespace pp::gpu {

inline void log_line(int stage, int stages, const std::string& text) {
  std::fprintf(stderr, "[pp_pipeline stage %d/%d pid %d] %s\n", stage, stages, static_cast<int>(getpid()),
               text.c_str());
  std::fflush(stderr);
}

}  // namespace pp::gpu
