// Matrix files (docs/matrix.md): parsing with toml++ and expansion into cells.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hangbench/errors.hpp"
#include "hangbench/model.hpp"

namespace hangbench {

// Bounds every value meets, from a matrix file or the command line alike: a
// deadline or grace that never comes (inf, a year) would let a run hang forever.
inline constexpr int kMaxTrials = 100000000;
// Trials of one run over all its cells (docs/matrix.md): what the harness keeps
// of each finished trial grows with them, and a plan past this is a typo.
inline constexpr long long kMaxTotalTrials = 10000000;
inline constexpr int kMaxConcurrency = 4096;
inline constexpr double kMaxTimeoutS = 7 * 24 * 3600.0;  // timeouts and phase timeouts: a week
inline constexpr double kMaxGraceS = 600.0;              // SIGTERM to SIGKILL at cleanup
inline constexpr size_t kMaxAxisValueBytes = 200;        // a value is part of a folder name

// "" when `seconds` is a usable timeout, else why not ("must be > 0 seconds", ...).
std::string timeout_problem(double seconds);

// Values of the built-in template names that come from the machine.
struct MatrixEnvironment {
  std::string workloads_dir;  // {workloads}; "" = $HANGBENCH_WORKLOADS_DIR, else default_workloads_dir()
  std::string nccl_cache;     // {nccl_cache}; "" = $HANGBENCH_NCCL_CACHE, else <source>/.cache/nccl
  // `run --set KEY=VALUE`: TOML assignments over the file's keys (dotted keys
  // reach into tables: axes.nccl=["2.17.1"]), checked as the file's own.
  std::vector<std::string> overrides;
};

// Reads and expands a matrix file. Throws ConfigError (file:line) on any problem.
Matrix load_matrix(const std::string& path, const MatrixEnvironment& env = {});
// Same from text; `path` is used for messages and {matrix_dir}.
Matrix parse_matrix(std::string_view text, const std::string& path, const MatrixEnvironment& env = {});

// The matrix `hangbench run` uses without --matrix: the socket teardown matrix when it
// exists in the source tree, else the test-workload matrix.
std::string default_matrix_path();
// The build tree's workloads/ folder (where hb_test_* and the workloads are built).
std::string default_workloads_dir();

// Keeps the cells whose params match every axis=value filter. Throws ConfigError
// (line 0) when a filter names an unknown axis or no cell matches.
void filter_cells(Matrix& matrix, const std::vector<std::pair<std::string, std::string>>& filters);

// Per-trial placeholders {trial_dir} and {trial} stay in Cell::argv/env until the
// executor knows them; this fills them in.
std::string expand_trial_placeholders(const std::string& text, const std::string& trial_dir, int index);

// "build=2.17.1,fork=after" -> a folder name made of [A-Za-z0-9._=-] only.
std::string sanitize_cell_id(const std::string& cell_id);

// A cell's trial folder name: its readable name (sanitized, cut to 80 bytes) and
// a short hash of the exact id, so that two cells whose names sanitize alike
// ("a/b" and "a_b") never share a folder: "build=2.17.1+fork=after-3fa9c1d2".
std::string cell_folder_name(const std::string& cell_id);

}  // namespace hangbench
