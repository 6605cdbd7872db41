// The NCCL libraries a snapshot's processes map, and what their bytes say.
#pragma once

#include <string>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// What the NCCL rule says about a loaded libnccl.so: version and fix, in words.
// Uses hangbench::nccl::inspect() when it is linked; "inspect unavailable" otherwise.
struct NcclLibraryFacts {
  std::string path;
  bool inspected = false;
  std::string version;
  std::string calls_shutdown;  // "yes", "no", "unknown"
  std::string sha256;          // of the file, as inspected ("" when not)
  std::string sentence;
};
NcclLibraryFacts describe_nccl_library(const std::string& path);
// Facts read where the evidence was taken (its JSON's "nccl_libraries"): what
// describe_nccl_library answers for a path that is no file here, so that stored
// evidence judged again on another machine keeps its library's version.
void remember_nccl_library(const NcclLibraryFacts& facts);
// A mapped library that is NCCL (or stands in for it: the compat shim), by its path.
bool is_nccl_library(const std::string& path);
// Every NCCL library the snapshot's processes map, sorted, each once.
std::vector<std::string> nccl_libraries_mapped(const Snapshot& s);

}  // namespace hangbench::diagnose
