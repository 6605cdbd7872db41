#include "hangbench/paths.hpp"

#include <cstdlib>
#include <filesystem>

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

std::string path_escape_problem(const std::string& relative) {
  if (relative.empty()) return "is empty";
  std::filesystem::path p(relative);
  if (p.is_absolute()) return "is absolute";
  for (const auto& part : p) {
    if (part == "..") return "goes up with '..'";
  }
  return "";
}

}  // namespace hangbench
