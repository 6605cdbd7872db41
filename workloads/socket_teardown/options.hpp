// The workload's command line (workloads/common/cli.hpp). Every option is
// --name=value; a gate is shorthand for a helper timing, a helper start method,
// SOCK_CLOEXEC and a teardown path.
#pragma once

#include <sys/types.h>

#include <string>
#include <variant>
#include <vector>

#include "client.hpp"
#include "helper.hpp"
#include "service_host.hpp"

namespace socket_teardown {

// The ordering gates of the seed's section 7, one axis value each.
enum class Gate {
  After,        // helper forked after the connection exists, abort path (the hang)
  Before,       // helper forked before the connection exists
  None,         // no helper
  CloseRange,   // helper forked after, but closes every inherited descriptor
  ExecCloexec,  // helper forked after and exec'd; the sockets are SOCK_CLOEXEC
  Graceful,     // helper forked after, but graceful destroy instead of abort
};

enum class HelperTiming { None, BeforeConnect, AfterConnect };

// What a gate means in mechanisms.
struct GatePlan {
  HelperTiming timing = HelperTiming::AfterConnect;
  HelperStart start = HelperStart::Fork;
  bool cloexec = false;
  TeardownPath path = TeardownPath::Abort;
};
GatePlan plan_for(Gate gate);

struct RankOptions {
  CloseVariant close = CloseVariant::CloseOnly;
  Gate gate = Gate::After;
  Topology topology = Topology::Thread;
  double helper_lifetime_s = 0;  // 0: the helper lives until the rank dies
  int poll_timeout_ms = 500;
  int sample_interval_ms = 250;
  int hold_ms = 100;  // "training" between init (and fork) and the teardown
};

// The exec'd helper's own arguments (after --run-helper).
struct HelperModeOptions {
  pid_t parent_pid = 0;
  double lifetime_s = 0;
  int ready_fd = -1;
};

struct HelpRequested {};
struct UsageError {
  std::string message;  // one line, "socket_teardown: reason (see --help)"
};

using ParsedArgs = std::variant<RankOptions, HelperModeOptions, HelpRequested, UsageError>;

// Parses argv without argv[0].
ParsedArgs parse_args(const std::vector<std::string>& args);
std::string usage_text();

}  // namespace socket_teardown
