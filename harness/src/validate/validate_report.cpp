// validate's reports: the verdict line, Markdown and JSON (hangbench.validate/1).
#include <fmt/format.h>

#include <sstream>

#include "hangbench/provenance.hpp"
#include "hangbench/validate.hpp"

namespace hangbench::validate {
namespace {

nlohmann::json arm_json(const ArmTally& a) {
  const Interval ci = stats::clopper_pearson(a.teardown_hangs, a.counted());
  return {{"role", to_string(a.role)},
          {"library", a.library},
          {"sha256", a.sha256},
          {"teardown_hangs", a.teardown_hangs},
          {"counted", a.counted()},
          {"passed", a.passed},
          {"teardown_failures", a.teardown_failures},
          {"before_teardown", a.before_teardown},
          {"stopped_before_teardown", a.stopped},
          {"stop_reasons", a.stop_reasons},
          {"infra", a.infra},
          {"hang_rate_ci95", {ci.lo, ci.hi}},
          {"reused", a.reused},
          {"source", a.source}};
}

}  // namespace

nlohmann::json p_json(const stats::FisherResult& f) {
  return {{"p_two_sided", f.p_two_sided}, {"log10_p_two_sided", f.log10_p_two_sided}, {"p", stats::format_p(f)}};
}

std::string verdict_line(const Result& r) {
  std::string line = fmt::format("verdict: {} ({})", to_string(r.decision.verdict), r.decision.reason);
  if (!r.decision.disagreement.empty()) line += fmt::format("; static reading disagrees: {}", r.decision.disagreement);
  return line;
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json j = {{"schema", kSchema},
                      {"library", r.inspected.path},
                      {"verdict", to_string(r.decision.verdict)},
                      {"exit_code", exit_code_of(r.decision.verdict)},
                      {"reason", r.decision.reason},
                      {"disagreement", r.decision.disagreement},
                      {"static",
                       {{"version", r.reading.version},
                        {"socket_close_calls_shutdown", to_string(r.reading.fix)},
                        {"imports_shutdown", r.reading.imports_shutdown},
                        {"gpu_code_problem", r.reading.gpu_code_problem},
                        {"notes", r.reading.notes}}},
                      {"alpha", r.alpha},
                      {"trials_per_library", r.trials},
                      {"trials_per_reference", r.reference_trials},
                      {"hang_timeout_s", r.timeout_s},
                      {"teardown_phase", r.teardown_phase},
                      {"teardown_timeout_s", r.teardown_timeout_s},
                      {"workload", r.workload_command},
                      {"seconds_to_verdict", r.seconds_to_verdict},
                      {"run_id", r.run_id},
                      {"run_dir", r.run_dir},
                      {"inspect", nccl::to_json(r.inspected)},
                      {"arms", {arm_json(r.candidate), arm_json(r.vulnerable), arm_json(r.fixed)}},
                      {"candidate_vs_vulnerable", p_json(r.decision.vs_vulnerable)},
                      {"candidate_vs_fixed", p_json(r.decision.vs_fixed)},
                      {"vulnerable_vs_fixed", p_json(r.decision.references)},
                      {"references_separate", r.decision.references_separate},
                      {"argv", r.argv},
                      {"provenance", provenance_json(r.provenance)}};
  if (r.teardown_timeout_learned_s > 0) j["teardown_timeout_learned_s"] = r.teardown_timeout_learned_s;
  for (const auto& b : r.built)  // validate --patch: the builds, the judged one last
    j["built"].push_back({{"variant", b.name}, {"how", b.how}, {"library", b.library}, {"cache_key", b.cache_key}});
  return j;
}

std::string to_markdown(const Result& r) {
  std::ostringstream md;
  md << "# hangbench validate: `" << r.inspected.path << "`\n\n";
  md << "**Verdict: " << to_string(r.decision.verdict) << "** (exit " << exit_code_of(r.decision.verdict)
     << "): " << r.decision.reason << ".\n";
  if (!r.decision.disagreement.empty()) md << "\n**Static reading and trials:** " << r.decision.disagreement << ".\n";
  md << "\n| library | role | SHA-256 | teardown hangs | reached teardown | 95% interval | stopped before | "
        "crashed/failed in teardown | from |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const ArmTally* a : {&r.candidate, &r.vulnerable, &r.fixed}) {
    const Interval ci = stats::clopper_pearson(a->teardown_hangs, a->counted());
    md << fmt::format("| `{}` | {} | `{}` | {} | {} | [{:.3f}, {:.3f}] | {} | {} | {} |\n", a->library,
                      to_string(a->role), a->sha256.substr(0, 16), a->teardown_hangs, a->counted(), ci.lo, ci.hi,
                      a->before_teardown, a->teardown_failures, a->reused ? a->source : "this run");
  }
  md << fmt::format(
      "\nFisher's exact test (two-sided), alpha {}: candidate vs vulnerable p = {}; candidate vs fixed "
      "p = {}; vulnerable vs fixed p = {}.\n",
      r.alpha, stats::format_p(r.decision.vs_vulnerable), stats::format_p(r.decision.vs_fixed),
      stats::format_p(r.decision.references));
  md << fmt::format("\nStatic reading: NCCL {}; imports shutdown: {}; ncclSocketClose calls shutdown(): {}.\n",
                    r.reading.version.empty() ? "unknown" : r.reading.version,
                    r.reading.imports_shutdown ? "yes" : "no", to_string(r.reading.fix));
  if (!r.reading.gpu_code_problem.empty()) md << "- GPU code: " << r.reading.gpu_code_problem << "\n";
  for (const auto& note : r.reading.notes) md << "- " << note << "\n";
  const std::string learned =
      r.teardown_timeout_learned_s > 0
          ? fmt::format(" (lowered to {:.1f} s once the fixed reference's teardowns in this run had all ended)",
                        r.teardown_timeout_learned_s)
          : "";
  md << fmt::format(
      "\nWorkload: `{} --nccl-lib=LIB`. Hang timeout {:.1f} s, or {:.1f} s after `{}`{}; verdict after "
      "{:.1f} s; run `{}` in `{}`.\n",
      r.workload_command, r.timeout_s, r.teardown_timeout_s, r.teardown_phase, learned, r.seconds_to_verdict, r.run_id,
      r.run_dir);
  std::string argv;
  for (const auto& a : r.argv) argv += (argv.empty() ? "" : " ") + a;
  md << fmt::format(
      "\nProvenance: `{}`; hangbench {} (commit {}); host {}, kernel {}; GPU {}; driver {}; started {}.\n", argv,
      r.provenance.hangbench_version, r.provenance.hangbench_commit, r.provenance.host, r.provenance.kernel,
      r.provenance.gpu.empty() ? "none" : r.provenance.gpu, r.provenance.driver.empty() ? "none" : r.provenance.driver,
      r.provenance.started_at);
  return md.str();
}

}  // namespace hangbench::validate
