// Runs one of the repository's workload binaries the way the harness does (its phase
// channel in HANGBENCH_PHASE_FILE) and reads back what it said: the tests of the NCCL
// workloads on the CPU share it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hangbench::testing {

struct WorkloadRun {
  int exit_code = -1;                 // -1 when the workload did not exit (a signal)
  std::vector<nlohmann::json> lines;  // the phase channel, every process of the run
  std::string stderr_text;
};

// `workload` is the folder and binary name under build/workloads; `args` go to a shell.
inline WorkloadRun run_workload(const std::string& workload, const std::string& args) {
  const std::string stem =
      (std::filesystem::temp_directory_path() / ("hb_" + workload + "_" + std::to_string(::getpid()))).string();
  std::filesystem::remove(stem + ".jsonl");
  const std::string command = "HANGBENCH_PHASE_FILE=" + stem + ".jsonl " + HB_BINARY_DIR + "/workloads/" + workload +
                              "/" + workload + " " + args + " 2>" + stem + ".err";
  const int status = std::system(command.c_str());
  WorkloadRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream phases(stem + ".jsonl");
  for (std::string line; std::getline(phases, line);) run.lines.push_back(nlohmann::json::parse(line));
  std::ifstream err(stem + ".err");
  run.stderr_text.assign(std::istreambuf_iterator<char>(err), {});
  std::filesystem::remove(stem + ".jsonl");
  std::filesystem::remove(stem + ".err");
  return run;
}

// Every phase, in the order written (all processes).
inline std::vector<std::string> phase_names(const WorkloadRun& run) {
  std::vector<std::string> names;
  for (const auto& j : run.lines)
    if (j.contains("phase")) names.push_back(j["phase"]);
  return names;
}

// The phases one process wrote (a started rank writes to the same channel).
inline std::vector<std::string> phases_of_pid(const WorkloadRun& run, long long pid) {
  std::vector<std::string> names;
  for (const auto& j : run.lines)
    if (j.contains("phase") && j.value("pid", 0LL) == pid) names.push_back(j["phase"]);
  return names;
}

// The phases of the process whose RANK is `rank`, as a launcher's rank names itself.
inline std::vector<std::string> phases_of_rank(const WorkloadRun& run, int rank) {
  std::vector<std::string> names;
  for (const auto& j : run.lines)
    if (j.contains("phase") && j.value("rank", -1) == rank) names.push_back(j["phase"]);
  return names;
}

// The first value of a metric as text (a number in JSON's spelling); "" when never reported.
inline std::string metric(const WorkloadRun& run, const std::string& name) {
  for (const auto& j : run.lines)
    if (j.value("metric", "") == name)
      return j["value"].is_string() ? j["value"].get<std::string>() : j["value"].dump();
  return "";
}

}  // namespace hangbench::testing
