// `hangbench run --dry-run`: what a run would do, cell by cell, before it does it.
#include <fmt/format.h>

#include <thread>

#include "hangbench/runner.hpp"

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

}  // namespace

std::string render_dry_run(const Matrix& planned) {
  long trials = 0;
  for (const Cell& c : planned.cells) trials += c.trials;
  int concurrency =
      planned.concurrency > 0 ? planned.concurrency : static_cast<int>(std::thread::hardware_concurrency());
  std::string out =
      fmt::format("dry run of {} ({}): {} cell{}, {} trials, {} at once; nothing was run or written\n", planned.name,
                  planned.path, planned.cells.size(), planned.cells.size() == 1 ? "" : "s", trials, concurrency);
  for (const Cell& c : planned.cells) {
    std::string deadlines;
    for (const auto& [phase, seconds] : c.phase_timeouts_s) deadlines += fmt::format(", {} s after {}", seconds, phase);
    std::string expect = to_string(c.expect);
    out += fmt::format("\n{}\n  trials {}, timeout {} s{}, expect {}\n  command: {}\n", c.id, c.trials, c.timeout_s,
                       deadlines, expect.empty() ? "nothing" : expect, launched_command(c));
    for (const auto& [name, value] : c.env) out += fmt::format("  env: {}={}\n", name, shell_word(value));
  }
  return out;
}

}  // namespace hangbench
