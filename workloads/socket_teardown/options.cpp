#include "options.hpp"

#include <map>
#include <optional>

namespace socket_teardown {
namespace {

const std::map<std::string, CloseVariant> kCloseVariants = {
    {"close-only", CloseVariant::CloseOnly}, {"shutdown", CloseVariant::ShutdownThenClose}};
const std::map<std::string, Gate> kGates = {
    {"after", Gate::After},           {"before", Gate::Before},
    {"none", Gate::None},             {"close-range", Gate::CloseRange},
    {"exec-cloexec", Gate::ExecCloexec}, {"graceful", Gate::Graceful}};
const std::map<std::string, Topology> kTopologies = {{"thread", Topology::Thread},
                                                     {"process", Topology::Process}};

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

ParsedArgs parse_helper_mode(const std::map<std::string, std::string>& values) {
  HelperModeOptions h;
  for (const auto& [name, value] : values) {
    if (name == "parent-pid" && to_int(value) && *to_int(value) > 0) {
      h.parent_pid = *to_int(value);
    } else if (name == "helper-lifetime" && to_number(value) && *to_number(value) >= 0) {
      h.lifetime_s = *to_number(value);
    } else if (name == "ready-fd" && to_int(value) && *to_int(value) >= 0) {
      h.ready_fd = *to_int(value);
    } else {
      return UsageError{"helper mode: bad option --" + name + "=" + value};
    }
  }
  if (h.parent_pid == 0 || h.ready_fd < 0)
    return UsageError{"helper mode needs --parent-pid and --ready-fd"};
  return h;
}

}  // namespace

GatePlan plan_for(Gate gate) {
  switch (gate) {
    case Gate::After: return {HelperTiming::AfterConnect, HelperStart::Fork, false, TeardownPath::Abort};
    case Gate::Before: return {HelperTiming::BeforeConnect, HelperStart::Fork, false, TeardownPath::Abort};
    case Gate::None: return {HelperTiming::None, HelperStart::Fork, false, TeardownPath::Abort};
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
  return "usage: socket_teardown [--close=" + choices(kCloseVariants) + "] [--gate=" +
         choices(kGates) + "] [--topology=" + choices(kTopologies) +
         "]\n"
         "                       [--helper-lifetime=SECONDS (0: until the rank dies)]\n"
         "                       [--poll-timeout-ms=N (500)] [--sample-interval-ms=N (250)]\n"
         "                       [--hold-ms=N (100)]\n"
         "Exit codes: 0 teardown completed, 2 bad arguments, 4 runtime error.\n"
         "A hang is a teardown that never completes.\n";
}

ParsedArgs parse_args(const std::vector<std::string>& args) {
  std::map<std::string, std::string> values;
  bool helper_mode = false;
  for (const auto& arg : args) {
    if (arg == "--help" || arg == "-h") return HelpRequested{};
    if (arg == kRunHelperFlag) {
      helper_mode = true;
      continue;
    }
    auto eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos || eq == 2)
      return UsageError{"expected --name=value, got '" + arg + "'"};
    std::string name = arg.substr(2, eq - 2);
    if (values.count(name)) return UsageError{"--" + name + " given twice"};
    values[name] = arg.substr(eq + 1);
  }
  if (helper_mode) return parse_helper_mode(values);

  RankOptions o;
  for (const auto& [name, value] : values) {
    if (name == "close") {
      auto v = lookup(kCloseVariants, value);
      if (!v) return UsageError{"--close must be " + choices(kCloseVariants) + ", got '" + value + "'"};
      o.close = *v;
    } else if (name == "gate") {
      auto v = lookup(kGates, value);
      if (!v) return UsageError{"--gate must be " + choices(kGates) + ", got '" + value + "'"};
      o.gate = *v;
    } else if (name == "topology") {
      auto v = lookup(kTopologies, value);
      if (!v) return UsageError{"--topology must be " + choices(kTopologies) + ", got '" + value + "'"};
      o.topology = *v;
    } else if (name == "helper-lifetime") {
      auto v = to_number(value);
      if (!v || *v < 0) return UsageError{"--helper-lifetime must be seconds >= 0, got '" + value + "'"};
      o.helper_lifetime_s = *v;
    } else if (name == "poll-timeout-ms" || name == "sample-interval-ms" || name == "hold-ms") {
      auto v = to_int(value);
      bool zero_ok = name == "hold-ms";
      if (!v || *v < 0 || (*v == 0 && !zero_ok))
        return UsageError{"--" + name + " must be a " + (zero_ok ? "non-negative" : "positive") +
                          " integer, got '" + value + "'"};
      (name == "poll-timeout-ms" ? o.poll_timeout_ms
                                 : name == "sample-interval-ms" ? o.sample_interval_ms : o.hold_ms) = *v;
    } else {
      return UsageError{"unknown option --" + name};
    }
  }
  return o;
}

}  // namespace socket_teardown
