#include "pipeline_options.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "cli.hpp"

namespace pp {
namespace {

namespace workload = hangbench::workload;
using Convert = std::function<void(const std::string&)>;

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

// Rejects "FLAG=VALUE" with the reason after it, the form the run logs show.
[[noreturn]] void reject(const std::string& flag, const std::string& value, const std::string& why) {
  throw workload::UsageError(flag + "=" + value + ": " + why);
}

Convert positive_size_into(std::size_t& target, const std::string& flag) {
  return [&target, flag](const std::string& value) {
    const auto v = parse_integer(value);
    if (!v || *v <= 0) reject(flag, value, "expects a positive integer");
    target = static_cast<std::size_t>(*v);
  };
}

Convert seconds_into(double& target, const std::string& flag, double most, const std::string& expects) {
  return [&target, flag, most, expects](const std::string& value) {
    const auto s = parse_seconds(value);
    if (!s || *s > most) reject(flag, value, expects);
    target = *s;
  };
}

// The options, declared on `app`, written into `o`.
void declare_options(CLI::App& app, PipelineOptions& o) {
  app.add_option_function<std::string>(
      "--progress",
      [&o](const std::string& value) {
        const auto p = progress_source_from_string(value);
        if (!p) reject("--progress", value, "expects none, pump or native");
        o.progress = *p;
      },
      "progress source: none | pump (Python thread, needs the GIL) | native");
  app.add_option_function<std::string>(
      "--placement",
      [&o](const std::string& value) {
        const auto p = hangbench::workload::placement_from_string(value);
        if (!p) reject("--placement", value, "expects gpu-per-rank or shared-gpu");
        o.placement = *p;
      },
      "gpu-per-rank (default) | shared-gpu: every stage on GPU 0, each its own NCCL host (NCCL_HOSTID)");
  app.add_option_function<std::string>(
      "--link",
      [&o](const std::string& value) {
        const auto l = activation_link_from_string(value);
        if (!l) reject("--link", value, "expects nccl or host-page");
        o.link = *l;
      },
      "nccl (default) | host-page: what carries activations (host-page: a spin kernel released over shared memory)");
  app.add_flag_callback(
         "--single-gpu",
         [&o] {
           o.placement = hangbench::workload::Placement::SharedGpu;
           o.link = ActivationLink::HostPage;
         },
         "the older spelling of --placement=shared-gpu --link=host-page")
      ->disable_flag_override();
  app.add_option_function<std::string>(
      "--cold-call",
      [&o](const std::string& value) {
        const auto c = cold_call_from_string(value);
        if (!c) reject("--cold-call", value, "expects launch or module-load");
        o.cold_call = *c;
      },
      "launch | module-load: the executor's first call of a cold module");
  app.add_option_function<std::string>(
      "--steps",
      [&o](const std::string& value) {
        const auto v = parse_integer(value);
        if (!v || *v < 1 || *v > 1000000) reject("--steps", value, "expects an integer in 1..1000000");
        o.steps = static_cast<int>(*v);
      },
      "pipeline steps (3); only the first touches a cold module");
  app.add_option_function<std::string>("--message-bytes", positive_size_into(o.message_bytes, "--message-bytes"),
                                       "bytes of each schedule / sample-state message (1 MiB)");
  app.add_option_function<std::string>("--activation-elements",
                                       positive_size_into(o.activation_elements, "--activation-elements"),
                                       "floats per activation tensor (1 Mi)");
  app.add_option_function<std::string>(
      "--rendezvous-threshold",
      [&o](const std::string& value) {
        std::size_t t = 0;
        positive_size_into(t, "--rendezvous-threshold")(value);
        o.rendezvous_threshold = t;
      },
      "bytes; overrides the eager limits MPI reports");
  app.add_option_function<std::string>("--watchdog-s",
                                       seconds_into(o.watchdog_s, "--watchdog-s", HUGE_VAL, "expects seconds >= 0"),
                                       "> 0: take the hang-detected path after this many seconds");
  app.add_option_function<std::string>(
      "--pre-cold-call-delay-s",
      seconds_into(o.pre_cold_call_delay_s, "--pre-cold-call-delay-s", 60, "expects seconds in 0..60"),
      "lets the spin / NCCL kernel start before the cold call (0.2)");
}

const char* kDescription =
    "pp_pipeline: the pipeline-parallel deadlock of TensorRT-LLM PR #20030 on real GPUs.\n"
    "Run under mpirun, one rank per stage (>= 2). CUDA_MODULE_LOADING=LAZY|EAGER\n"
    "selects module loading. Several stages on one GPU: --placement=shared-gpu\n"
    "(NCCL between them over its network transport). NCCL_DEBUG=INFO: NCCL's log goes\n"
    "to the trial folder and the transport it chose is the metric nccl_transport.\n"
    "selects module loading; HANGBENCH_MPI_PROGRESS_INTERVAL_US the probe interval.\n"
    "2: usage/configuration; 3: MPI, CUDA, NCCL or Python unusable; 5: hang detected\n"
    "(signal or watchdog; via MPI_Abort).";

}  // namespace

std::variant<PipelineOptions, UsageError, HelpRequested> parse_pipeline_options(const std::vector<std::string>& args) {
  PipelineOptions o;
  workload::Cli cli("pp_pipeline", kDescription);
  declare_options(cli.app(), o);
  const workload::CliResult parsed = cli.parse(args);
  if (parsed.run) return o;
  if (parsed.exit_code == 0) return HelpRequested{parsed.message};
  return UsageError{parsed.message};
}

}  // namespace pp
