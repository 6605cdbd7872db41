// One diagnostic line per event on stderr, "name: message", written with one
// call so that the lines of several threads or ranks do not interleave.
// A workload whose lines need more context (rank, pid, time) sets a
// decoration; its lines then read "[name decoration] message".
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>
#include <string_view>

namespace hangbench::workload {

using LogDecoration = std::string (*)();

struct LogSettings {
  std::string name = "workload";
  LogDecoration decoration = nullptr;
};

// Set once in main, before any thread starts.
inline LogSettings& log_settings() {
  static LogSettings settings;
  return settings;
}

inline void set_log_name(std::string name, LogDecoration decoration = nullptr) {
  log_settings() = LogSettings{std::move(name), decoration};
}

inline void log_line(const LogSettings& s, std::string_view message) {
  std::string line = s.decoration ? "[" + s.name + " " + s.decoration() + "] " : s.name + ": ";
  line.append(message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

inline void log_line(std::string_view message) { log_line(log_settings(), message); }

inline void vlogf(const LogSettings& s, const char* format, va_list args) {
  char message[1024];
  std::vsnprintf(message, sizeof message, format, args);
  log_line(s, message);
}

__attribute__((format(printf, 1, 2))) inline void logf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vlogf(log_settings(), format, args);
  va_end(args);
}

}  // namespace hangbench::workload
