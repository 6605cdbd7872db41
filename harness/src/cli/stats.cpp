// PLACEHOLDER until its owner writes it: registers the 'stats' subcommand.
#include <iostream>
#include "cli/commands.hpp"
#include "hangbench/model.hpp"
namespace hangbench::cli {
void add_stats_command(CLI::App& app, int& rc) {
  auto* sub = app.add_subcommand("stats", "(not built yet)");
  sub->allow_extras();
  sub->callback([&rc] { std::cerr << "hangbench stats: not built yet\n"; rc = exit_code::kInfra; });
}
}  // namespace hangbench::cli
