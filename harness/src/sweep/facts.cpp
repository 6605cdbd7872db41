// What a library's cache entry says about it (vendor wheels: package, wheel,
// release, CUDA build, slimming), beside what its bytes say.
#include <filesystem>
#include <fstream>

#include "hangbench/sweep.hpp"

namespace hangbench::sweep {
namespace {

namespace fs = std::filesystem;

// <entry>/lib/libnccl.so.2 -> <entry>/manifest.json, as the NCCL cache lays entries out.
nlohmann::json manifest_beside(const std::string& path) {
  const fs::path manifest = fs::path(path).parent_path().parent_path() / "manifest.json";
  std::ifstream in(manifest);
  if (!in) return nlohmann::json::object();
  auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string string_at(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    const nlohmann::json* at = &j;
    std::string k = key;
    size_t dot;
    while ((dot = k.find('.')) != std::string::npos) {
      if (!at->contains(k.substr(0, dot))) break;
      at = &(*at)[k.substr(0, dot)];
      k = k.substr(dot + 1);
    }
    if (at->contains(k) && (*at)[k].is_string()) return (*at)[k].get<std::string>();
  }
  return "";
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
      if (end == std::string::npos) break;   // cut by the chunk: read on
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
  const nlohmann::json m = manifest_beside(path);
  f.package = string_at(m, {"package", "wheel.package"});
  f.wheel = string_at(m, {"wheel_file", "wheel.file", "wheel"});
  f.release = string_at(m, {"wheel_version", "wheel.version", "release"});
  f.cuda_build = string_at(m, {"cuda_build", "cuda"});
  if (m.contains("slimmed") && m["slimmed"].is_object()) {
    f.slimmed = true;
    f.original_sha256 = string_at(m["slimmed"], {"original_sha256"});
  } else if (m.contains("slimmed") && m["slimmed"].is_boolean()) {
    f.slimmed = m["slimmed"].get<bool>();
  }
  if (f.original_sha256.empty()) f.original_sha256 = string_at(m, {"original_sha256", "library_sha256"});
  if (f.release.empty() && inspected != nullptr) f.release = inspected->version;
  if (f.cuda_build.empty()) f.cuda_build = cuda_build_from_bytes(path);
  return f;
}

}  // namespace hangbench::sweep
