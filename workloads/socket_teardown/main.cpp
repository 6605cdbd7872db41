// socket_teardown: NCCL 2.17.1's teardown hang at the socket level, no GPU, no
// NCCL. See README.md; exit codes (workload_exit_codes.hpp): 0 teardown completed, 2 bad
// arguments, 4 runtime error. A hang is a run that never finishes.
#include <signal.h>

#include <iostream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "helper.hpp"
#include "log_line.hpp"
#include "options.hpp"
#include "rank.hpp"
#include "workload_exit_codes.hpp"

int main(int argc, char** argv) {
  using namespace socket_teardown;
  ::signal(SIGPIPE, SIG_IGN);
  hangbench::workload::set_log_name("socket_teardown");
  std::vector<std::string> args(argv + 1, argv + argc);
  ParsedArgs parsed = parse_args(args);
  return std::visit(
      [](auto&& value) -> int {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, HelpRequested>) {
          std::cout << usage_text();
          return 0;
        } else if constexpr (std::is_same_v<T, UsageError>) {
          std::cerr << value.message << "\n";  // "socket_teardown: reason (see --help)"
          return hangbench::workload_exit::kUsage;
        } else if constexpr (std::is_same_v<T, HelperModeOptions>) {
          run_helper(value.parent_pid, value.lifetime_s, value.ready_fd);
        } else {
          return run_rank(value);
        }
      },
      parsed);
}
