// validate::run: inspect the library, run the design, decide.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <future>

#include "hangbench/matrix.hpp"
#include "hangbench/provenance.hpp"
#include "validate/design.hpp"

namespace hangbench::validate {

namespace {

// --patch: the patched variant and the two references, built (or found) in one NCCL cache.
std::vector<nccl::BuiltVariant> build_patched(Request& request, std::ostream* log) {
  if (!request.library.empty()) throw UsageError("give --nccl LIB or --patch FILE, not both");
  nccl::BuildOptions options = request.build;
  if (options.cache_dir.empty()) options.cache_dir = request.reference_dir;  // "" = the default cache for both
  if (options.variants.empty()) options.variants = {request.vulnerable_variant, request.fixed_variant};
  auto built = nccl::build_with_patched(request.recipe_dir, options, [&](const std::string& line) {
    if (log) *log << "[nccl build] " << line << "\n" << std::flush;
  });
  request.library = built.back().library;
  if (request.reference_dir.empty()) request.reference_dir = options.cache_dir;
  if (log) *log << fmt::format("built {} ({}): {}\n", built.back().name, built.back().how, request.library);
  return built;
}

}  // namespace

Result run(const Request& original, TrialExecutor* executor, std::ostream* log) {
  const auto started = std::chrono::steady_clock::now();
  Result result;
  Request request = original;
  if (request.build.patched.requested()) result.built = build_patched(request, log);
  if (request.library.empty()) throw UsageError("no library to judge: pass --nccl LIB or --patch FILE");
  if (!std::filesystem::is_regular_file(request.library)) {
    throw UsageError(fmt::format("{} is not a file: pass the path of a libnccl.so", request.library));
  }
  // The static reading (a dlopen in a child, a hash of up to 276 MB) and the GPU's
  // provenance take a second between them: they run while the trials do.
  prefetch_host_provenance();
  try {
    nccl::require_nccl_library(request.library);  // a wrong file fails before any trial
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  auto inspected = std::async(std::launch::async, [&] { return nccl::inspect(request.library, /*try_dlopen=*/true); });
  DesignRun design = run_design(request, {request.library}, /*concurrency=*/0, executor, log);
  try {
    result.inspected = inspected.get();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  result.reading = static_reading_of(result.inspected);
  if (log && design.teardown_timeout_learned_s > 0) {
    *log << fmt::format(
        "teardown deadline lowered to {:.1f} s once the fixed reference's trials had all ended "
        "(2 x q99 + 1 s of its healthy teardowns, at least 2 s)\n",
        design.teardown_timeout_learned_s);
  }
  if (log) {
    *log << fmt::format("inspect: {} is NCCL {}; imports shutdown: {}; ncclSocketClose calls shutdown(): {}\n",
                        result.inspected.path, result.reading.version.empty() ? "unknown" : result.reading.version,
                        result.reading.imports_shutdown ? "yes" : "no", to_string(result.reading.fix));
  }
  result.candidate = design.candidates.at(0);
  result.vulnerable = design.vulnerable;
  result.fixed = design.fixed;
  result.decision = decide(result.candidate, result.vulnerable, result.fixed, result.reading, request.alpha,
                           phase_words(request.teardown_phase));
  result.trials = request.trials;
  result.reference_trials = request.trials_per_reference();
  result.alpha = request.alpha;
  result.timeout_s = design.timeout_s;
  result.teardown_phase = request.teardown_phase;
  result.teardown_timeout_s = design.teardown_timeout_s;
  result.teardown_timeout_learned_s = design.teardown_timeout_learned_s;
  result.workload_command = design.workload_command;
  result.run_id = design.run_id;
  result.run_dir = design.run_dir;
  result.argv = request.argv;
  result.provenance = design.provenance;
  result.seconds_to_verdict = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace hangbench::validate
