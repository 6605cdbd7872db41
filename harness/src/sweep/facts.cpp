// What a library's cache entry says about it (vendor wheels: package, wheel,
// release, CUDA build, slimming), beside what its bytes say.
#include <filesystem>
#include <fstream>

#include "hangbench/nccl_vendor.hpp"
#include "hangbench/sweep.hpp"

namespace hangbench::sweep {
namespace {

namespace fs = std::filesystem;

std::string text_of(const nlohmann::json& m, const char* key) {
  return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : "";
}

// "NCCL version 2.17.1+cuda12.1" in the library's bytes -> "12.1". A plain
// substring search: the libraries are a few hundred MB.
std::string cuda_build_from_bytes(const std::string& path) {
  static const std::string marker = "NCCL version ";
  std::ifstream in(path, std::ios::binary);
  std::string chunk(4 << 20, '\0');
  std::string window;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    window.append(chunk, 0, static_cast<size_t>(in.gcount()));
    for (size_t at = window.find(marker); at != std::string::npos; at = window.find(marker, at + 1)) {
      const size_t end = window.find_first_of(std::string("\0 \n", 3), at + marker.size());
      if (end == std::string::npos) break;  // cut by the chunk: read on
      const std::string version = window.substr(at + marker.size(), end - at - marker.size());
      const size_t cuda = version.find("+cuda");
      if (cuda != std::string::npos) return version.substr(cuda + 5);
    }
    window = window.size() > 128 ? window.substr(window.size() - 128) : window;
  }
  return "";
}

}  // namespace

LibraryFacts library_facts(const std::string& path, const nccl::InspectResult* inspected) {
  LibraryFacts f;
  f.path = path;
  // The cache entry's manifest (nccl fetch / nccl build / nccl slim) knows the wheel.
  if (const auto m = nccl::find_cache_entry_for_library(path)) {
    f.package = text_of(*m, "package");
    f.wheel = text_of(*m, "wheel");
    f.release = text_of(*m, "package_version");
    if (f.release.empty()) f.release = text_of(*m, "variant");  // a pinned build: its variant name
    f.cuda_build = text_of(*m, "cuda_build");
    f.slimmed = m->contains("slimmed_for_transport") && (*m)["slimmed_for_transport"].is_object();
    f.original_sha256 = text_of(*m, "original_library_sha256");
  }
  if (f.release.empty() && inspected != nullptr) f.release = inspected->version;
  if (f.cuda_build.empty()) f.cuda_build = cuda_build_from_bytes(path);
  return f;
}

}  // namespace hangbench::sweep
