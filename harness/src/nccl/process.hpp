// Runs an external tool (make, patch, git, tar, nm, cc) and hands its output
// back line by line: the NCCL build driver is mostly orchestration.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace hangbench::nccl {

struct ProcessResult {
  int exit_status = -1;  // exit code, or 128+signal
  std::string output;    // stdout and stderr merged (only when captured)
};

// Runs argv[0] (searched in PATH) in `cwd` ("" = current directory). Each
// output line goes to `on_line` when given; otherwise output is captured.
// Throws std::runtime_error when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd = "",
                          const std::function<void(const std::string&)>& on_line = nullptr);

// `argv` joined with spaces, for messages and logs.
std::string describe_command(const std::vector<std::string>& argv);

}  // namespace hangbench::nccl
