// `hangbench run --dry-run`: what a run would do, cell by cell, before it does it.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <optional>
#include <thread>
#include <vector>

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

std::string launched_command(const Cell& cell) {
  std::vector<std::string> argv;
  if (cell.launcher.kind == LauncherKind::Mpirun) argv = {"mpirun", "-np", std::to_string(cell.launcher.ranks)};
  if (cell.launcher.kind == LauncherKind::Srun) argv = {"srun", "-n", std::to_string(cell.launcher.ranks)};
  if (cell.launcher.kind != LauncherKind::Process)
    argv.insert(argv.end(), cell.launcher.extra_args.begin(), cell.launcher.extra_args.end());
  argv.insert(argv.end(), cell.argv.begin(), cell.argv.end());
  std::string out;
  for (const auto& word : argv) out += (out.empty() ? "" : " ") + shell_word(word);
  return out;
}

// "1, 5, 9" or, past a dozen, "1, 5, 9, … 77": which indices a shard runs.
std::string index_list(const std::vector<int>& indices) {
  std::string out;
  const size_t shown = indices.size() > 12 ? 11 : indices.size();
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + std::to_string(indices[i]);
  if (shown < indices.size()) out += ", … " + std::to_string(indices.back());
  return out;
}

}  // namespace

std::string render_dry_run(const Matrix& planned, const std::optional<Shard>& shard) {
  // The trial indices this invocation runs, cell by cell: all of them, or the shard's share.
  std::map<std::string, std::vector<int>> runs;
  long planned_trials = 0;
  for (const Cell& c : planned.cells) {
    planned_trials += c.trials;
    if (!shard) {
      for (int i = 0; i < c.trials; ++i) runs[c.id].push_back(i);
    }
  }
  if (shard) {
    for (const auto& [cell, index] : trials_of_shard(planned, *shard)) runs[cell].push_back(index);
  }
  long trials = 0;
  size_t cells = 0;
  for (const auto& [cell, indices] : runs) {
    trials += static_cast<long>(indices.size());
    cells += indices.empty() ? 0 : 1;
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
  for (const Cell& c : planned.cells) {
    const auto& indices = runs[c.id];
    if (indices.empty()) continue;
    std::string deadlines;
    for (const auto& [phase, seconds] : c.phase_timeouts_s) deadlines += fmt::format(", {} s after {}", seconds, phase);
    std::string expect = to_string(c.expect);
    std::string count = shard ? fmt::format("{} of {} (indices {})", indices.size(), c.trials, index_list(indices))
                              : std::to_string(c.trials);
    out += fmt::format("\n{}\n  trials {}, timeout {} s{}, expect {}\n  command: {}\n", c.id, count, c.timeout_s,
                       deadlines, expect.empty() ? "nothing" : expect, launched_command(c));
    for (const auto& [name, value] : c.env) out += fmt::format("  env: {}={}\n", name, shell_word(value));
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
