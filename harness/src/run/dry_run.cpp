// `hangbench run --dry-run`: what a run would do, cell by cell, before it does it.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "exec/launch_argv.hpp"
#include "hangbench/find_executable.hpp"
#include "hangbench/runner.hpp"
#include "hangbench/shard.hpp"
#include "hangbench/stats.hpp"

namespace hangbench {
namespace {

// Single quotes where a shell would need them, so that a line can be pasted.
std::string shell_word(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-./=:,+@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The command line as the trial starts it: the launcher's (mpirun with its -x
// exports, srun, torchrun) around the workload's, as exec/launch_argv.cpp makes it.
std::vector<std::string> launched_argv(const Cell& cell) {
  std::map<std::string, std::string> exported = cell.env;  // what the executor forwards (mpirun -x)
  for (const char* var : {"HANGBENCH_PHASE_FILE", "HANGBENCH_TRIAL_DIR", "HANGBENCH_TRIAL_ID"}) exported[var] = "";
  std::vector<std::string> forwarded;
  for (const auto& [name, value] : exported) forwarded.push_back(name);
  return exec_detail::launch_argv(cell, cell.argv, forwarded);
}

std::string launched_command(const Cell& cell) {
  std::string out;
  for (const auto& word : launched_argv(cell)) out += (out.empty() ? "" : " ") + shell_word(word);
  return out;
}

// The programs of a cell that do not exist here: the launcher and the workload
// (a trial's "{trial_dir}" is only known when it runs, so such a path is not checked).
std::vector<std::string> missing_programs(const Cell& cell) {
  std::vector<std::string> programs;
  const auto launched = launched_argv(cell);
  if (!launched.empty()) programs.push_back(launched.front());
  if (!cell.argv.empty() && (programs.empty() || cell.argv.front() != programs.front()))
    programs.push_back(cell.argv.front());
  std::vector<std::string> missing;
  for (const auto& program : programs) {
    if (program.find('{') == std::string::npos && find_executable(program).empty()) missing.push_back(program);
  }
  return missing;
}

// "1, 5, 9" or, past a dozen, "1, 5, 9, … 77": which indices a shard runs
// (`count` of them: first, first + step, ...).
std::string index_list(long first, long step, long count) {
  std::string out;
  const long shown = count > 12 ? 11 : count;
  for (long i = 0; i < shown; ++i) out += (i ? ", " : "") + std::to_string(first + i * step);
  if (shown < count) out += ", … " + std::to_string(first + (count - 1) * step);
  return out;
}

}  // namespace

std::string render_dry_run(const Matrix& planned, const std::optional<Shard>& shard) {
  // How many trials of each cell this invocation runs: all, or the shard's share,
  // counted without listing them (a plan may hold millions).
  std::optional<ShardOwnership> owner;
  if (shard) owner.emplace(planned, *shard);
  std::vector<long> runs(planned.cells.size(), 0);
  long planned_trials = 0;
  long trials = 0;
  size_t cells = 0;
  for (size_t i = 0; i < planned.cells.size(); ++i) {
    planned_trials += planned.cells[i].trials;
    runs[i] = owner ? owner->owned(i) : planned.cells[i].trials;
    trials += runs[i];
    cells += runs[i] > 0 ? 1 : 0;
  }
  int concurrency =
      planned.concurrency > 0 ? planned.concurrency : static_cast<int>(std::thread::hardware_concurrency());
  std::string scope = shard ? fmt::format(", shard {} of {} trials", to_string(*shard), planned_trials) : "";
  std::string out =
      fmt::format("dry run of {} ({}){}: {} cell{}, {} trial{}, {} at once; nothing was run or written\n", planned.name,
                  planned.path, scope, cells, cells == 1 ? "" : "s", trials, trials == 1 ? "" : "s", concurrency);
  if (shard && cells < planned.cells.size()) {
    out += fmt::format("{} of the {} cells have no trial in this shard and are not listed\n",
                       planned.cells.size() - cells, planned.cells.size());
  }
  std::map<std::string, std::vector<std::string>> missing;
  for (size_t i = 0; i < planned.cells.size(); ++i) {
    const Cell& c = planned.cells[i];
    if (runs[i] > 0 && !missing_programs(c).empty()) missing[c.id] = missing_programs(c);
  }
  if (!missing.empty()) {
    out += fmt::format(
        "warning: {} of the {} cells name a program that does not exist here (not a file, or not on PATH); their "
        "trials would fail to start (INFRA)\n",
        missing.size(), cells);
  }
  for (size_t i = 0; i < planned.cells.size(); ++i) {
    const Cell& c = planned.cells[i];
    if (runs[i] == 0) continue;
    std::string deadlines;
    for (const auto& [phase, seconds] : c.phase_timeouts_s) deadlines += fmt::format(", {} s after {}", seconds, phase);
    std::string expect = to_string(c.expect);
    std::string count = shard ? fmt::format("{} of {} (indices {})", runs[i], c.trials,
                                            index_list(owner->first_owned(i), owner->step(), runs[i]))
                              : std::to_string(c.trials);
    out += fmt::format("\n{}\n  trials {}, timeout {} s{}, expect {}\n  command: {}\n", c.id, count, c.timeout_s,
                       deadlines, expect.empty() ? "nothing" : expect, launched_command(c));
    for (const auto& [name, value] : c.env) out += fmt::format("  env: {}={}\n", name, shell_word(value));
    for (const auto& program : missing[c.id]) {
      out += fmt::format("  missing: {} does not exist here (not a file, or not an executable on PATH)\n", program);
    }
    // A cell that cannot reach its verdict at all is a design to change before the run.
    if (const int needed = stats::trials_to_confirm(planned.alpha);
        c.expect != Expectation::None && c.trials < needed) {
      out += fmt::format(
          "  note: {} trials can never CONFIRM `{}` at alpha {}: even all of them alike gives p = {:.2g}; {} trials "
          "can (--trials, or trials in the matrix)\n",
          c.trials, expect, planned.alpha, std::pow(0.5, c.trials), needed);
    }
  }
  return out;
}

}  // namespace hangbench
