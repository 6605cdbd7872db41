// What ran, on what, when: collected once per run and stored with it.
#pragma once

#include <string>
#include <string_view>

#include "hangbench/model.hpp"

namespace hangbench {

Provenance collect_provenance(const Matrix& matrix);

// The commit this binary was built from ("<sha>-dirty" when tracked files differed,
// "unknown" outside a git checkout); generated at build time.
const char* git_commit();

std::string sha256_hex(std::string_view bytes);
// "" when the file cannot be read.
std::string sha256_file(const std::string& path);
std::string utc_now_iso8601();
// Variables that matter: NCCL_*, CUDA_*, UCX_*, OMPI_*, TORCH_*, HANGBENCH_*, LD_PRELOAD, LD_LIBRARY_PATH.
bool is_relevant_env_var(std::string_view name);

}  // namespace hangbench
