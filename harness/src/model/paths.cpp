#include "hangbench/paths.hpp"

#include <cstdlib>

namespace hangbench {

namespace {
std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : "";
}
}  // namespace

std::string source_root() {
  if (auto v = env_or_empty("HANGBENCH_SOURCE_DIR"); !v.empty()) return v;
  return HANGBENCH_SOURCE_DIR;
}

std::string default_nccl_cache() {
  if (auto v = env_or_empty("HANGBENCH_NCCL_CACHE"); !v.empty()) return v;
  return source_root() + "/.cache/nccl";
}

}  // namespace hangbench
