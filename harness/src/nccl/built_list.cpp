// `hangbench nccl list`: what the cache holds, read from the manifests.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "hangbench/nccl_build.hpp"

namespace fs = std::filesystem;

namespace hangbench::nccl {

std::vector<nlohmann::json> list_built(const std::string& cache_dir) {
  std::vector<nlohmann::json> manifests;
  const fs::path variants = fs::path(cache_dir) / "variants";
  if (!fs::is_directory(variants)) return manifests;
  for (const auto& entry : fs::directory_iterator(variants)) {
    const fs::path file = entry.path() / "manifest.json";
    if (!entry.is_directory() || !fs::exists(file)) continue;
    std::ifstream in(file);
    nlohmann::json m = nlohmann::json::parse(in, nullptr, false);
    if (m.is_discarded()) continue;
    m["output_dir"] = entry.path().string();
    manifests.push_back(std::move(m));
  }
  std::sort(manifests.begin(), manifests.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.value("variant", ""), a.value("built_at", "")) <
           std::make_pair(b.value("variant", ""), b.value("built_at", ""));
  });
  return manifests;
}

std::string format_built_table(const std::vector<nlohmann::json>& manifests) {
  if (manifests.empty()) return "no NCCL variants built yet (run `hangbench nccl build`)\n";
  std::string table = fmt::format("{:<20} {:<8} {:<14} {:<8} {:<14} {:<22} {:<20} {}\n", "VARIANT", "VERSION", "KEY",
                                  "PATCHES", "LIB SHA-256", "BUILT FROM", "BUILT AT", "LIBRARY");
  for (const auto& m : manifests) {
    const std::string gencode = m.value("gencode", "");
    table += fmt::format("{:<20} {:<8} {:<14} {:<8} {:<14} {:<22} {:<20} {}/{}\n", m.value("variant", "?"),
                         m.value("version", "?"), m.value("cache_key", "").substr(0, 12),
                         m.contains("patches") ? m["patches"].size() : 0, m.value("library_sha256", "").substr(0, 12),
                         m.value("built_from", "?").substr(0, 22), m.value("built_at", "?"), m.value("output_dir", "?"),
                         m.value("library", "?"));
  }
  return table;
}

}  // namespace hangbench::nccl
