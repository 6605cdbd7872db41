// An environment variable as text, with what to say when it is unset: the
// launcher's and MPI's settings go into logs and metrics as they were seen.
#pragma once

#include <cstdlib>
#include <string>

namespace pp::gpu {

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

}  // namespace pp::gpu
