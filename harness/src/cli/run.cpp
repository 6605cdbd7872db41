// PLACEHOLDER until its owner writes it: registers the 'run' subcommand.
#include <iostream>
#include "cli/commands.hpp"
#include "hangbench/model.hpp"
namespace hangbench::cli {
void add_run_command(CLI::App& app, int& rc) {
  auto* sub = app.add_subcommand("run", "(not built yet)");
  sub->allow_extras();
  sub->callback([&rc] { std::cerr << "hangbench run: not built yet\n"; rc = exit_code::kInfra; });
}
}  // namespace hangbench::cli
