// The progress interval from the environment, in microseconds.
//
// HANGBENCH_MPI_PROGRESS_INTERVAL_US, or its alias TLLM_PP_MPI_PROGRESS_INTERVAL_US
// (TensorRT-LLM's name; the hangbench name wins when both are set):
//   unset or empty          -> default 5000 us
//   integer in 1..1000000   -> that interval
//   integer <= 0            -> progress thread disabled
//   malformed, fractional, above 1000000, beyond int64 -> default, with a reason
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace hangbench::mpi_progress {

inline constexpr long long kDefaultIntervalUs = 5000;
inline constexpr long long kMaxIntervalUs = 1000000;
inline constexpr const char* kIntervalEnvVar = "HANGBENCH_MPI_PROGRESS_INTERVAL_US";
inline constexpr const char* kIntervalEnvAlias = "TLLM_PP_MPI_PROGRESS_INTERVAL_US";

enum class IntervalSource {
  Unset,         // no variable: default
  Parsed,        // a valid positive interval
  Disabled,      // zero or negative: no thread
  Malformed,     // not an integer (includes "2.5", "abc", "10us"): default
  AboveMaximum,  // > kMaxIntervalUs: default
  OutOfRange,    // does not fit in int64: default
};

struct IntervalSetting {
  IntervalSource source = IntervalSource::Unset;
  std::chrono::microseconds interval{kDefaultIntervalUs};  // 0 when Disabled
  std::string variable;                                    // which variable was read ("" when unset)
  std::string raw;                                         // its text
  std::string reason;                                      // one line for the log

  bool enabled() const { return interval.count() > 0; }
};

// Parses one value (nullptr = unset). Pure; used by the tests directly.
IntervalSetting parse_progress_interval(const char* text, const std::string& variable = kIntervalEnvVar);

// Reads the environment (the hangbench variable first, then the alias).
IntervalSetting progress_interval_from_env();

std::string to_string(IntervalSource source);

}  // namespace hangbench::mpi_progress
