#include "pipeline_options.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace pp {
namespace {

std::optional<long long> parse_integer(const std::string& text) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_seconds(const std::string& text) {
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(value) || value < 0) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::string pipeline_usage() {
  return "usage: pp_pipeline [--progress=none|pump|native] [--single-gpu]\n"
         "                   [--cold-call=launch|module-load] [--steps=N]\n"
         "                   [--message-bytes=B] [--activation-elements=E]\n"
         "                   [--rendezvous-threshold=B] [--watchdog-s=S]\n"
         "                   [--pre-cold-call-delay-s=S]\n"
         "Run under mpirun, one rank per stage (>= 2). CUDA_MODULE_LOADING=LAZY|EAGER\n"
         "selects module loading; HANGBENCH_MPI_PROGRESS_INTERVAL_US the probe interval.\n"
         "Exit codes: 0 done, 2 usage/configuration, 3 infrastructure (MPI, CUDA, NCCL,\n"
         "Python), 5 hang detected (signal or watchdog; via MPI_Abort).\n";
}

std::variant<PipelineOptions, UsageError> parse_pipeline_options(const std::vector<std::string>& args) {
  PipelineOptions o;
  for (const std::string& arg : args) {
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    const bool has_value = eq != std::string::npos;
    auto bad = [&](const std::string& why) { return UsageError{arg + ": " + why}; };
    auto positive_size = [&](std::size_t& out) -> std::optional<UsageError> {
      auto v = parse_integer(value);
      if (!has_value || !v || *v <= 0) return bad("expects a positive integer");
      out = static_cast<std::size_t>(*v);
      return std::nullopt;
    };
    if (key == "--single-gpu" && !has_value) {
      o.single_gpu = true;
    } else if (key == "--progress") {
      auto p = progress_source_from_string(value);
      if (!p) return bad("expects none, pump or native");
      o.progress = *p;
    } else if (key == "--cold-call") {
      auto c = cold_call_from_string(value);
      if (!c) return bad("expects launch or module-load");
      o.cold_call = *c;
    } else if (key == "--steps") {
      auto v = parse_integer(value);
      if (!v || *v < 1 || *v > 1000000) return bad("expects an integer in 1..1000000");
      o.steps = static_cast<int>(*v);
    } else if (key == "--message-bytes") {
      if (auto e = positive_size(o.message_bytes)) return *e;
    } else if (key == "--activation-elements") {
      if (auto e = positive_size(o.activation_elements)) return *e;
    } else if (key == "--rendezvous-threshold") {
      std::size_t t = 0;
      if (auto e = positive_size(t)) return *e;
      o.rendezvous_threshold = t;
    } else if (key == "--watchdog-s") {
      auto s = parse_seconds(value);
      if (!s) return bad("expects seconds >= 0");
      o.watchdog_s = *s;
    } else if (key == "--pre-cold-call-delay-s") {
      auto s = parse_seconds(value);
      if (!s || *s > 60) return bad("expects seconds in 0..60");
      o.pre_cold_call_delay_s = *s;
    } else {
      return UsageError{"unknown argument " + arg};
    }
  }
  return o;
}

}  // namespace pp
