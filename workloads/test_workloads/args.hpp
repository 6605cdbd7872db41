// Tiny "--name=value" reader shared by the test workloads.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace hb_test {

// Value of --name=value among argv, or `fallback`.
inline long arg_long(int argc, char** argv, const char* name, long fallback) {
  std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return std::atol(argv[i] + prefix.size());
  }
  return fallback;
}

inline std::string arg_string(int argc, char** argv, const char* name, const char* fallback) {
  std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return argv[i] + prefix.size();
  }
  return fallback;
}

inline bool has_flag(int argc, char** argv, const char* name) {
  std::string flag = std::string("--") + name;
  for (int i = 1; i < argc; ++i) {
    if (flag == argv[i]) return true;
  }
  return false;
}

// Sleeps forever without spinning (pause() returns only for handled signals).
[[noreturn]] inline void block_forever() {
  for (;;) pause();
}

}  // namespace hb_test
