// NVIDIA's own NCCL binaries (the nvidia-nccl-cu11/cu12/cu13 wheels) as
// entries of the NCCL cache beside the pinned builds (`hangbench nccl fetch`),
// and the cache entry any library file belongs to. Owned by harness/src/nccl.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hangbench/nccl_build.hpp"
#include "hangbench/nccl_fatbin.hpp"

namespace hangbench::nccl {

struct VendorRequest {
  std::vector<std::string> versions;  // package versions to download from PyPI ("2.17.1", "2.25.1.post1")
  std::vector<std::string> wheels;    // local wheel files, taken offline
  int cuda = 12;                      // 11, 12 or 13: nvidia-nccl-cu<cuda>
  std::string cache_dir;              // "" = default_cache_dir()
  std::string python = "python3";     // whose pip downloads
};

struct VendorEntry {
  std::string package, package_version;  // "nvidia-nccl-cu12", "2.17.1"
  std::string output_dir, library;       // <cache>/vendor/<package>-<version>-<key12>, .../lib/libnccl.so.2
  std::string how;                       // "downloaded", "from wheel", "cached"
  nlohmann::json manifest;               // schema hangbench.nccl-vendor/1
};

// Package name for a CUDA major version; throws UsageError unless 11, 12 or 13.
std::string vendor_package(int cuda);

// Fetches (or finds in the cache) each requested version and wheel. Throws
// UsageError (exit 2) for an unknown version (the message lists the versions
// PyPI has), a wheel without libnccl.so.2 or that is not a wheel, and
// std::runtime_error (exit 3) when pip cannot reach the index.
std::vector<VendorEntry> fetch_vendor(const VendorRequest& request, const Progress& progress);

// Manifests of every vendor entry in the cache, each with "output_dir" added,
// sorted by NCCL version.
std::vector<nlohmann::json> list_vendor(const std::string& cache_dir);

// The manifest of the cache entry (vendor or pinned) that `library` lies in
// (<entry>/lib/libnccl.so.2 or <entry>/lib/stripped/libnccl.so.2, wherever
// <entry> is), with "kind" ("vendor" or "pinned") and "output_dir" added;
// nullopt when no such manifest is there. Release, CUDA build, wheel and whether it was
// slimmed for transport are all in it.
std::optional<nlohmann::json> find_cache_entry_for_library(const std::string& library);

// A slimmed copy of a cache entry: <entry_out>/lib/libnccl.so.2 and
// <entry_out>/manifest.json, the entry's manifest with "slimmed_for_transport"
// (the original's SHA-256 kept). Throws UsageError when `library` is not in a
// cache entry.
SlimResult slim_cache_entry(const std::string& library, const std::string& entry_out, uint32_t keep_sm);

// "NCCL version 2.17.1+cuda12.1" -> "12.1"; "" when the string has no +cuda part.
std::string cuda_build_from_string(const std::string& rodata);

}  // namespace hangbench::nccl
