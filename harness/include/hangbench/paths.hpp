// Where hangbench finds its own files (matrices, NCCL pins and patches) and the
// NCCL build cache. A binary copied to another machine (the GPU runner) is told
// where the checkout is through HANGBENCH_SOURCE_DIR.
#pragma once

#include <string>

#include "hangbench/find_executable.hpp"

namespace hangbench {

// $HANGBENCH_SOURCE_DIR when set, else the source folder this binary was configured in.
std::string source_root();

// $HANGBENCH_NCCL_CACHE when set, else <source_root>/.cache/nccl.
std::string default_nccl_cache();

// "" when `relative` stays inside whatever root it is read against (not absolute,
// no ".." component, not empty); else why not. Every path read from a store, a
// manifest or a matrix that names a place under its root is checked with this.
std::string path_escape_problem(const std::string& relative);

}  // namespace hangbench
