// Which NCCL library a process runs, of those it has mapped: what the headline,
// the rules and the renderings name.
#pragma once

#include <string>
#include <vector>

#include "hangbench/nccl_library.hpp"
#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// The NCCL libraries of a process, sorted: the one in use (its frames are on one of
// `waiting_tids`' stacks, or the only one loaded), the others merely loaded, and
// shims (a library named *shim*, or one the inspector says is not NCCL). Only the
// one in use is inspected when it is known (a vendor build takes a second to read).
struct NcclLibraries {
  std::string in_use;      // "" when unknown
  std::string how;         // "its frames are on thread 880's stack", "the only one loaded", ...
  NcclLibraryFacts facts;  // of in_use
  std::vector<std::string> loaded_only, shims;
  std::vector<std::string> sentences;  // one per library, in words
};
NcclLibraries nccl_libraries_of(const ProcessSnapshot& p, const std::vector<int>& waiting_tids);

}  // namespace hangbench::diagnose
