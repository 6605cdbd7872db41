#include "rendezvous_check.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

namespace hangbench::rendezvous {

std::size_t ThresholdReading::threshold_bytes() const {
  std::size_t largest = 0;
  for (const EagerLimit& l : limits) largest = std::max(largest, l.bytes);
  return largest;
}

std::string ThresholdReading::describe() const {
  std::string out;
  for (const EagerLimit& l : limits) {
    if (!out.empty()) out += ",";
    out += l.name + "=" + std::to_string(l.bytes);
  }
  return out.empty() ? "none found" : out;
}

bool is_eager_limit_variable(const std::string& name) {
  // Open MPI: btl_<transport>_eager_limit (ob1), pml_<x>_eager_limit; not the
  // loopback-only "self" transport, which never carries traffic between ranks.
  auto ends_with = [&](const char* suffix) {
    const std::size_t n = std::strlen(suffix);
    return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
  };
  if (!ends_with("_eager_limit")) return false;
  if (name.rfind("btl_self_", 0) == 0) return false;
  if (name.find("rndv") != std::string::npos) return false;
  return name.rfind("btl_", 0) == 0 || name.rfind("pml_", 0) == 0;
}

std::optional<std::size_t> parse_ucx_threshold(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  // UCX accepts "inter:N,intra:M"-style lists too; take every number and keep the largest.
  std::string s(text);
  std::size_t largest = 0;
  bool any = false;
  for (std::size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    std::size_t value = 0;
    auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), value);
    if (ec != std::errc()) return std::nullopt;
    i = static_cast<std::size_t>(end - s.data());
    std::size_t scale = 1;
    if (i < s.size()) {
      const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
      if (unit == 'K') scale = 1024;
      if (unit == 'M') scale = 1024 * 1024;
      if (unit == 'G') scale = 1024ull * 1024 * 1024;
    }
    largest = std::max(largest, value * scale);
    any = true;
  }
  if (!any) return std::nullopt;
  return largest;
}

std::optional<std::string> rendezvous_problem(std::size_t message_bytes, const ThresholdReading& reading) {
  if (reading.limits.empty()) {
    return "no eager limit could be read from MPI (MPI_T) or the environment; pass "
           "--rendezvous-threshold=BYTES to state it";
  }
  if (message_bytes <= reading.threshold_bytes()) {
    return "message size " + std::to_string(message_bytes) + " B is not above the eager limit " +
           std::to_string(reading.threshold_bytes()) + " B (" + reading.describe() +
           "): MPI would send it eagerly, without rendezvous";
  }
  return std::nullopt;
}

}  // namespace hangbench::rendezvous
