// What ran, on what, when: collected once per command and written into every JSON
// that hangbench makes (run, report, diagnose, history, evidence, validate, sweep).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "hangbench/model.hpp"

namespace hangbench {

// The command line of this process, read from /proc/self/cmdline (so that no
// caller has to carry argv down); empty when it cannot be read.
std::vector<std::string> command_line();

// This command on this machine: hangbench's argv, version and commit, host,
// kernel, GPU, driver and CUDA (from nvidia-smi, "" without one), the start
// time, the environment variables that matter, and the SHA-256 of each library
// in `libraries` ("unreadable" when it cannot be read).
Provenance collect_host_provenance(const std::vector<std::string>& libraries = {});
// Starts the slow part of collect_host_provenance (the GPU queries) in the
// background; a command that knows it will need provenance calls it first.
void prefetch_host_provenance();

// What the NVIDIA driver's files under `proc_root` (/proc/driver/nvidia) say: the
// first GPU's model and the kernel module's version; empty fields where absent.
struct NvidiaDriverFacts {
  std::string gpu, driver;
};
NvidiaDriverFacts read_nvidia_driver_facts(const std::string& proc_root);

// The above for a run of `matrix`: its path and hash, and the hash of every file
// its cells name in hash_files.
Provenance collect_provenance(const Matrix& matrix);

// The one JSON form of a provenance, keys in a stable order (docs/json-schema.md).
nlohmann::ordered_json provenance_json(const Provenance& p);

// The commit this binary was built from ("<sha>-dirty+diff.<sha12 of the diff>" when
// tracked files differed, cmake/git_commit.cmake;
// "unknown" outside a git checkout); generated at build time.
const char* git_commit();

std::string sha256_hex(std::string_view bytes);
// "" when the file cannot be read.
std::string sha256_file(const std::string& path);
std::string utc_now_iso8601();
// Variables that matter: NCCL_*, CUDA_*, UCX_*, OMPI_*, TORCH_*, HANGBENCH_*, LD_PRELOAD, LD_LIBRARY_PATH.
bool is_relevant_env_var(std::string_view name);

}  // namespace hangbench
