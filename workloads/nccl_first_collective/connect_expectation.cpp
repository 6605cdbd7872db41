#include "connect_expectation.hpp"

#include <cstdlib>

namespace hangbench::nccl_first_collective {
namespace {

// NCCL reads its integer parameters with strtoll; an empty or unreadable one keeps the default.
long long integer_parameter(const char* value, long long fallback) {
  if (value == nullptr || *value == '\0') return fallback;
  char* end = nullptr;
  const long long parsed = std::strtoll(value, &end, 0);
  return end == value ? fallback : parsed;
}

}  // namespace

bool connects_at_first_collective(int version_code, bool cumem_supported, const char* cumem_enable_variable,
                                  const char* runtime_connect_variable) {
  constexpr int kFirstRuntimeConnect = 22203;  // 2.22.3
  if (version_code < kFirstRuntimeConnect) return false;
  const long long cumem_enable = integer_parameter(cumem_enable_variable, -2);
  const bool cumem = cumem_enable >= 0 ? cumem_enable != 0 : (cumem_enable == -2 && cumem_supported);
  return cumem && integer_parameter(runtime_connect_variable, 1) != 0;
}

}  // namespace hangbench::nccl_first_collective
