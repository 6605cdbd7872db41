#include "progress_interval.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>

namespace hangbench::mpi_progress {

namespace {

IntervalSetting fallback(IntervalSetting s, IntervalSource why, const std::string& reason) {
  s.source = why;
  s.interval = std::chrono::microseconds(kDefaultIntervalUs);
  s.reason = reason + "; using the default " + std::to_string(kDefaultIntervalUs) + " us";
  return s;
}

}  // namespace

IntervalSetting parse_progress_interval(const char* text, const std::string& variable) {
  IntervalSetting s;
  if (text == nullptr || *text == '\0') {
    s.reason = "unset; using the default " + std::to_string(kDefaultIntervalUs) + " us";
    return s;
  }
  s.variable = variable;
  s.raw = text;
  // Whole-string base-10 integer, optional sign, surrounding blanks allowed.
  const char* begin = text;
  while (*begin == ' ' || *begin == '\t') ++begin;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(begin, &end, 10);
  while (end != nullptr && (*end == ' ' || *end == '\t' || *end == '\n')) ++end;
  if (end == begin || end == nullptr || *end != '\0') {
    return fallback(s, IntervalSource::Malformed, variable + "='" + s.raw + "' is not an integer");
  }
  if (errno == ERANGE) {
    return fallback(s, IntervalSource::OutOfRange, variable + "='" + s.raw + "' does not fit in int64");
  }
  if (value <= 0) {
    s.source = IntervalSource::Disabled;
    s.interval = std::chrono::microseconds(0);
    s.reason = variable + "=" + s.raw + " <= 0: progress thread disabled";
    return s;
  }
  if (value > kMaxIntervalUs) {
    return fallback(s, IntervalSource::AboveMaximum,
                    variable + "=" + s.raw + " is above the maximum " + std::to_string(kMaxIntervalUs) + " us");
  }
  s.source = IntervalSource::Parsed;
  s.interval = std::chrono::microseconds(value);
  s.reason = variable + "=" + s.raw + " us";
  return s;
}

IntervalSetting progress_interval_from_env() {
  for (const char* name : {kIntervalEnvVar, kIntervalEnvAlias}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return parse_progress_interval(value, name);
  }
  return parse_progress_interval(nullptr);
}

std::string to_string(IntervalSource source) {
  switch (source) {
    case IntervalSource::Unset:
      return "unset";
    case IntervalSource::Parsed:
      return "parsed";
    case IntervalSource::Disabled:
      return "disabled";
    case IntervalSource::Malformed:
      return "malformed";
    case IntervalSource::AboveMaximum:
      return "above-maximum";
    case IntervalSource::OutOfRange:
      return "out-of-range";
  }
  return "unknown";
}

}  // namespace hangbench::mpi_progress
