#include "options.hpp"

#include <functional>
#include <map>
#include <optional>

#include "cli.hpp"

namespace socket_teardown {
namespace {

namespace workload = hangbench::workload;

const std::map<std::string, CloseVariant> kCloseVariants = {{"close-only", CloseVariant::CloseOnly},
                                                            {"shutdown", CloseVariant::ShutdownThenClose}};
const std::map<std::string, Gate> kGates = {{"after", Gate::After},
                                            {"before", Gate::Before},
                                            {"none", Gate::None},
                                            {"close-range", Gate::CloseRange},
                                            {"exec-cloexec", Gate::ExecCloexec},
                                            {"graceful", Gate::Graceful}};
const std::map<std::string, Topology> kTopologies = {{"thread", Topology::Thread}, {"process", Topology::Process}};

template <typename T>
std::optional<T> lookup(const std::map<std::string, T>& table, const std::string& key) {
  auto it = table.find(key);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

template <typename T>
std::string choices(const std::map<std::string, T>& table) {
  std::string out;
  for (const auto& [name, value] : table) out += (out.empty() ? "" : "|") + name;
  return out;
}

std::optional<double> to_number(const std::string& text) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int> to_int(const std::string& text) {
  auto v = to_number(text);
  if (!v || *v != static_cast<double>(static_cast<long long>(*v))) return std::nullopt;
  if (*v < -2147483648.0 || *v > 2147483647.0) return std::nullopt;
  return static_cast<int>(*v);
}

// "--name=value" whose value `convert` reads into the target, or throws UsageError.
void add_value(CLI::App& app, const std::string& flag, const std::string& help,
               std::function<void(const std::string&)> convert) {
  app.add_option_function<std::string>(flag, std::move(convert), help);
}

template <typename T>
std::function<void(const std::string&)> choice_into(T& target, const std::map<std::string, T>& table,
                                                    const std::string& flag) {
  return [&target, &table, flag](const std::string& value) {
    auto v = lookup(table, value);
    if (!v) throw workload::UsageError(flag + " must be " + choices(table) + ", got '" + value + "'");
    target = *v;
  };
}

std::function<void(const std::string&)> seconds_into(double& target, const std::string& flag) {
  return [&target, flag](const std::string& value) {
    auto v = to_number(value);
    if (!v || *v < 0) throw workload::UsageError(flag + " must be seconds >= 0, got '" + value + "'");
    target = *v;
  };
}

std::function<void(const std::string&)> integer_into(int& target, const std::string& flag, bool zero_ok) {
  return [&target, flag, zero_ok](const std::string& value) {
    auto v = to_int(value);
    if (!v || *v < 0 || (*v == 0 && !zero_ok)) {
      throw workload::UsageError(flag + " must be a " + (zero_ok ? "non-negative" : "positive") + " integer, got '" +
                                 value + "'");
    }
    target = *v;
  };
}

std::string description() {
  return "socket_teardown: NCCL 2.17.1's teardown hang at the socket level, no GPU, no NCCL.\n"
         "Every option is --name=value, e.g. --gate=after. A hang is a teardown that never completes.";
}

// The exec'd helper's arguments: --run-helper --parent-pid=P --helper-lifetime=S --ready-fd=F.
ParsedArgs parse_helper_mode(const std::vector<std::string>& args) {
  HelperModeOptions h;
  workload::Cli cli("socket_teardown", "socket_teardown helper mode (exec'd by the rank itself)");
  CLI::App& app = cli.app();
  app.add_flag(kRunHelperFlag)->description("run as the exec'd helper");
  add_value(app, "--parent-pid", "pid of the rank", [&](const std::string& value) {
    auto v = to_int(value);
    if (!v || *v <= 0) throw workload::UsageError("helper mode: bad option --parent-pid=" + value);
    h.parent_pid = *v;
  });
  add_value(app, "--helper-lifetime", "seconds (0: until the rank dies)",
            seconds_into(h.lifetime_s, "--helper-lifetime"));
  add_value(app, "--ready-fd", "pipe to signal readiness on", [&](const std::string& value) {
    auto v = to_int(value);
    if (!v || *v < 0) throw workload::UsageError("helper mode: bad option --ready-fd=" + value);
    h.ready_fd = *v;
  });
  const workload::CliResult parsed = cli.parse(args, [&] {
    if (h.parent_pid == 0 || h.ready_fd < 0)
      throw workload::UsageError("helper mode needs --parent-pid and --ready-fd");
  });
  if (parsed.run) return h;
  if (parsed.exit_code == 0) return HelpRequested{};
  return UsageError{parsed.message};
}

// The rank's options, declared on `app`, written into `o`.
void declare_rank_options(CLI::App& app, RankOptions& o) {
  add_value(app, "--close", "close-only|shutdown: how the rank closes its sockets",
            choice_into(o.close, kCloseVariants, "--close"));
  add_value(app, "--gate", choices(kGates) + ": when and how the helper holding the sockets starts",
            choice_into(o.gate, kGates, "--gate"));
  add_value(app, "--topology", choices(kTopologies) + ": the service in a thread or a process",
            choice_into(o.topology, kTopologies, "--topology"));
  add_value(app, "--helper-lifetime", "seconds the helper lives (0: until the rank dies)",
            seconds_into(o.helper_lifetime_s, "--helper-lifetime"));
  add_value(app, "--poll-timeout-ms", "service loop poll timeout (500)",
            integer_into(o.poll_timeout_ms, "--poll-timeout-ms", false));
  add_value(app, "--sample-interval-ms", "TCP state sampling interval (250)",
            integer_into(o.sample_interval_ms, "--sample-interval-ms", false));
  add_value(app, "--hold-ms", "\"training\" between init and the teardown (100)",
            integer_into(o.hold_ms, "--hold-ms", true));
}

}  // namespace

GatePlan plan_for(Gate gate) {
  switch (gate) {
    case Gate::After:
      return {HelperTiming::AfterConnect, HelperStart::Fork, false, TeardownPath::Abort};
    case Gate::Before:
      return {HelperTiming::BeforeConnect, HelperStart::Fork, false, TeardownPath::Abort};
    case Gate::None:
      return {HelperTiming::None, HelperStart::Fork, false, TeardownPath::Abort};
    case Gate::CloseRange:
      return {HelperTiming::AfterConnect, HelperStart::ForkCloseRange, false, TeardownPath::Abort};
    case Gate::ExecCloexec:
      return {HelperTiming::AfterConnect, HelperStart::ForkExec, true, TeardownPath::Abort};
    case Gate::Graceful:
      return {HelperTiming::AfterConnect, HelperStart::Fork, false, TeardownPath::Graceful};
  }
  return {};
}

std::string usage_text() {
  RankOptions ignored;
  workload::Cli cli("socket_teardown", description());
  declare_rank_options(cli.app(), ignored);
  return cli.app().help();
}

ParsedArgs parse_args(const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (arg == kRunHelperFlag) return parse_helper_mode(args);
  }
  RankOptions o;
  workload::Cli cli("socket_teardown", description());
  declare_rank_options(cli.app(), o);
  const workload::CliResult parsed = cli.parse(args);
  if (parsed.run) return o;
  if (parsed.exit_code == 0) return HelpRequested{};
  return UsageError{parsed.message};
}

}  // namespace socket_teardown
