// The DataLoader-worker-like child: forked by the rank, idle, living until its
// parent dies (PR_SET_PDEATHSIG plus a getppid() watch) or for a set time. While
// it lives it holds whatever descriptors it inherited, which is the whole point.
#pragma once

#include <sys/types.h>

#include <string>

namespace socket_teardown {

enum class HelperStart {
  Fork,            // fork only: inherits every descriptor (a DataLoader worker)
  ForkCloseRange,  // fork, then close_range(3, ~0U) of everything it does not need
  ForkExec,        // fork + exec of this program in helper mode (drops SOCK_CLOEXEC descriptors)
};

struct HelperOptions {
  HelperStart start = HelperStart::Fork;
  double lifetime_s = 0;  // 0: until the parent dies
};

// Starts the helper and returns its pid once it has acknowledged over a pipe that
// it runs (after its close_range, for that variant). Throws std::system_error.
pid_t spawn_helper(const HelperOptions& options);

// The helper's life, also the entry point of the exec'd helper (--run-helper).
// Reports `helper_exit` as a phase when its lifetime ends. Never returns.
[[noreturn]] void run_helper(pid_t parent, double lifetime_s, int ready_fd);

// Arguments that make main() call run_helper in an exec'd helper.
inline constexpr const char* kRunHelperFlag = "--run-helper";

}  // namespace socket_teardown
