#include "rank.hpp"

#include <unistd.h>

#include <chrono>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "log_line.hpp"
#include "phase.hpp"
#include "tcp_state.hpp"
#include "workload_exit_codes.hpp"

namespace socket_teardown {
namespace {

namespace phase = hangbench::phase;

// Phases reported by the service, whichever thread or process it runs in.
ServiceHooks phase_reporting_hooks() {
  ServiceHooks hooks;
  hooks.on_accept = [](int npeers) { phase::metric("npeers_after_accept", npeers); };
  hooks.on_retire = [](RetireReason reason, int npeers) {
    if (reason == RetireReason::EndOfFile) phase::mark("eof_seen");
    phase::metric("retire_reason", to_string(reason));
    phase::metric("npeers_after_retire", npeers);
  };
  hooks.on_exit = [] { phase::mark("service_exit"); };
  return hooks;
}

pid_t start_helper(const GatePlan& plan, const RankOptions& options) {
  pid_t pid = spawn_helper(HelperOptions{plan.start, options.helper_lifetime_s});
  phase::mark("fork");
  phase::metric("helper_pid", static_cast<double>(pid));
  return pid;
}

// Appends `state` unless it repeats the last one: "ESTABLISHED>ABSENT".
void note_state_change(std::vector<std::string>& seen, const std::string& state) {
  if (seen.empty() || seen.back() != state) seen.push_back(state);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

int run_rank(const RankOptions& options) {
  const GatePlan plan = plan_for(options.gate);
  try {
    SharedAbortFlag abort_flag;
    if (plan.timing == HelperTiming::BeforeConnect) start_helper(plan, options);

    Listener listener = open_listener(plan.cloexec);
    const Endpoint service = listener.address;
    ServiceOptions service_options;
    service_options.poll_timeout_ms = options.poll_timeout_ms;
    service_options.cloexec = plan.cloexec;
    auto host = start_service(options.topology, listener, abort_flag, service_options, phase_reporting_hooks());

    Connection connection = connect_to_service(service, plan.cloexec);
    phase::mark("connect");
    phase::metric("client_end", to_string(connection.local));
    phase::metric("service_end", to_string(connection.remote));
    phase::metric("service_pid", static_cast<double>(host->pid()));
    phase::mark("init_done");

    if (plan.timing == HelperTiming::AfterConnect) start_helper(plan, options);
    if (options.hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options.hold_ms));

    phase::mark("teardown_begin");
    if (plan.path == TeardownPath::Abort) abort_flag.raise();  // ncclCommAbort sets comm->abortFlag
    const Endpoint client_end = connection.local, service_end = connection.remote;
    destroy_connection(connection, service, plan.path, options.close, plan.cloexec);

    std::vector<std::string> states_seen;
    int samples = 0;
    while (!host->wait_for_exit(options.sample_interval_ms)) {
      std::string state = sample_tcp_state(client_end, service_end);
      phase::metric("tcp_state", state);
      note_state_change(states_seen, state);
      ++samples;
    }
    int service_rc = host->join();
    phase::metric("tcp_state_samples", samples);
    phase::metric("tcp_states_seen", join(states_seen, ">"));
    phase::mark("teardown_end");
    if (service_rc != 0) {
      hangbench::workload::log_line("the service loop failed");
      return hangbench::workload_exit::kRunError;
    }
    return 0;
  } catch (const std::system_error& e) {
    hangbench::workload::log_line(e.what());
    return hangbench::workload_exit::kRunError;
  }
}

}  // namespace socket_teardown
