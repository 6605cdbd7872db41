// `hangbench validate --nccl LIB`: is the NCCL teardown fix (shutdown() before
// close() in ncclSocketClose, NCCL 2.18.1) present in LIB, a vendor backport
// included? Inspects LIB, then runs one fixed design: the ddp_abort workload's
// abort-at-exit cell with loader workers forked after init, N trials each of LIB,
// of a vulnerable reference build and of a fixed reference build, all at once.
// Fisher's exact test of LIB against each reference decides:
//   exit 0 "fix present"  LIB differs from the vulnerable reference, not from the fixed one
//   exit 1 "vulnerable"   LIB differs from the fixed reference, not from the vulnerable one
//   exit 3 "inconclusive" anything else (references that do not separate included)
// Reference results already in the store (same library SHA-256, same command and
// trial count) are reused, so a second library costs one wave of trials; the hang
// deadlines are then learned from the fixed reference's healthy trials.
// A trial hangs when it outlives the teardown deadline, counted from the
// workload's teardown_begin phase (a healthy abort ends in half a second), or
// the whole-trial timeout, which only has to cover a crowded start-up.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hangbench/paths.hpp"
#include "cli/commands.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/model.hpp"
#include "hangbench/nccl_inspect.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/runner.hpp"
#include "hangbench/stats.hpp"
#include "hangbench/store.hpp"

namespace hangbench::cli {
namespace {

namespace fs = std::filesystem;

struct ValidateArgs {
  std::string nccl_lib;
  std::string reference_dir;                 // "" = $HANGBENCH_NCCL_CACHE, else <source>/.cache/nccl
  std::string vulnerable_variant = "2.17.1";
  std::string fixed_variant = "2.17.1+backport";
  int trials = 7;                            // per library: 7/7 vs 0/7 gives p = 2.9e-4
  double timeout_s = 0;                      // 0 = learned from the fixed reference, else 20 s
  double teardown_timeout_s = 0;             // from teardown_phase; 0 = learned, else 5 s
  std::string teardown_phase = "teardown_begin";   // "" = whole-trial timeout only
  double alpha = 0.001;
  std::string workload;                      // "" = <workloads>/ddp_abort/ddp_abort
  std::vector<std::string> workload_args = {"--backend=direct", "--teardown=exit", "--workers=after",
                                            "--epochs=1", "--steps=2"};
  std::string out_dir = "hangbench-out/validate";
  bool no_reuse = false;
  std::string markdown, json;
};

// The three libraries of the design.
enum class Role { Candidate, Vulnerable, Fixed };
const char* role_name(Role r) {
  switch (r) {
    case Role::Candidate: return "candidate";
    case Role::Vulnerable: return "vulnerable";
    case Role::Fixed: return "fixed";
  }
  return "?";
}

struct Arm {
  Role role = Role::Candidate;
  std::string path;
  std::string sha256;
  int hangs = 0, n = 0, passed = 0, other = 0;   // other = crashed + failed
  std::vector<double> healthy_wall_s;            // passed trials
  std::vector<double> healthy_teardown_s;        // passed trials: exit - teardown phase
  bool reused = false;
  std::string source;                            // "run <id>" / "store <path> run <id>"
};

Arm fresh_arm(Role role, std::string path, std::string sha256) {
  Arm arm;
  arm.role = role;
  arm.path = std::move(path);
  arm.sha256 = std::move(sha256);
  return arm;
}

constexpr double kDefaultTimeoutS = 20;
constexpr double kMinLearnedTimeoutS = 2;
// Ten healthy aborts at exit on the H200 (0.51 s), until the fixed reference's own are known.
constexpr double kDefaultTeardownTimeoutS = 5;
constexpr const char* kIndexFile = "references.json";

std::string reference_library(const std::string& dir, const std::string& variant) {
  return (fs::path(dir) / variant / "lib" / "libnccl.so.2").string();
}

// The identity of a reference result: the library's bytes and what was run on it.
std::string reference_key(const ValidateArgs& a, const Arm& arm) {
  std::string command = a.workload;
  for (const auto& w : a.workload_args) command += " " + w;
  return fmt::format("{}|{}|trials={}", arm.sha256, command, a.trials);
}

std::vector<std::string> workload_argv(const ValidateArgs& a, const std::string& lib) {
  std::vector<std::string> argv = {a.workload};
  argv.insert(argv.end(), a.workload_args.begin(), a.workload_args.end());
  argv.push_back("--nccl-lib=" + lib);
  return argv;
}

// Seconds from the last report of `phase` to the trial's end, if it reported it.
std::optional<double> seconds_after_phase(const TrialResult& t, const std::string& phase) {
  std::optional<double> at;
  for (const PhaseEvent& e : t.phases) {
    if (e.name == phase) at = e.t;
  }
  if (!at) return std::nullopt;
  return std::max(0.0, t.started_at + t.wall_s - *at);
}

void tally_trials(Arm& arm, const std::vector<TrialResult>& trials, const std::string& cell_id,
                  const std::string& teardown_phase) {
  for (const TrialResult& t : trials) {
    if (t.cell_id != cell_id || t.outcome == Outcome::Infra) continue;
    ++arm.n;
    if (t.outcome == Outcome::Hang) ++arm.hangs;
    else if (t.outcome == Outcome::Passed) {
      ++arm.passed;
      arm.healthy_wall_s.push_back(t.wall_s);
      if (auto teardown = seconds_after_phase(t, teardown_phase)) arm.healthy_teardown_s.push_back(*teardown);
    } else {
      ++arm.other;
    }
  }
}

nlohmann::json read_index(const std::string& out_dir) {
  std::ifstream in(fs::path(out_dir) / kIndexFile);
  if (!in) return nlohmann::json::object();
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

void write_index(const std::string& out_dir, const nlohmann::json& index) {
  fs::create_directories(out_dir);
  const fs::path path = fs::path(out_dir) / kIndexFile;
  std::ofstream(path.string() + ".tmp") << index.dump(2) << "\n";
  fs::rename(path.string() + ".tmp", path);
}

// Fills `arm` from an earlier run recorded in the index; false when there is none usable.
bool reuse_reference(const ValidateArgs& a, const nlohmann::json& index, Arm& arm, std::ostream& log) {
  const std::string key = reference_key(a, arm);
  if (!index.contains(key)) return false;
  const auto& entry = index[key];
  try {
    Store store = Store::open(entry.at("store").get<std::string>());
    StoredRun run = store.load_run(entry.at("run").get<std::string>());
    tally_trials(arm, run.trials, entry.at("cell").get<std::string>(), a.teardown_phase);
    if (arm.n < a.trials) {
      arm = fresh_arm(arm.role, arm.path, arm.sha256);
      return false;
    }
    arm.reused = true;
    arm.source = fmt::format("store {} run {}", entry.at("store").get<std::string>(), run.info.id);
    return true;
  } catch (const std::exception& e) {
    log << fmt::format("validate: cannot reuse the {} reference ({}); running it again\n", role_name(arm.role), e.what());
    arm = fresh_arm(arm.role, arm.path, arm.sha256);
    return false;
  }
}

// Healthy teardown time of the fixed reference, times a margin: a hang must
// outlast it safely, and nothing more is needed to tell hung from healthy.
// Applied to whole trials and to teardowns alike.
double learned_timeout(const std::vector<double>& healthy_s) {
  if (healthy_s.size() < 3) return 0;
  const double p99 = stats::quantile_type7(healthy_s, 0.99);
  return std::max(kMinLearnedTimeoutS, 2.0 * p99 + 1.0);
}

struct Decision {
  int exit_code = exit_code::kInfra;
  std::string verdict;                 // "fix present", "vulnerable", "inconclusive"
  std::string reason;
  stats::FisherResult vs_vulnerable, vs_fixed, references;
};

std::string rate(const Arm& a) { return fmt::format("{}/{}", a.hangs, a.n); }

Decision decide(const Arm& cand, const Arm& vuln, const Arm& fixed, double alpha) {
  Decision d;
  d.vs_vulnerable = stats::fisher_exact({cand.hangs, cand.n}, {vuln.hangs, vuln.n});
  d.vs_fixed = stats::fisher_exact({cand.hangs, cand.n}, {fixed.hangs, fixed.n});
  d.references = stats::fisher_exact({vuln.hangs, vuln.n}, {fixed.hangs, fixed.n});
  const bool references_separate = d.references.p_two_sided < alpha && vuln.hangs * fixed.n > fixed.hangs * vuln.n;
  const bool differs_from_vulnerable = d.vs_vulnerable.p_two_sided < alpha;
  const bool differs_from_fixed = d.vs_fixed.p_two_sided < alpha;
  d.verdict = "inconclusive";
  d.exit_code = 3;
  if (cand.n == 0) {
    d.reason = "no counted trial of the candidate (all infrastructure errors)";
  } else if (cand.other > 0) {
    d.reason = fmt::format("{} candidate trial(s) crashed or failed instead of passing or hanging: the "
                           "workload does not run over this library as it should; see the run's report",
                           cand.other);
  } else if (!references_separate) {
    d.reason = fmt::format("the references do not separate (vulnerable {} vs fixed {}, p = {}): this "
                           "machine does not reproduce the hang, so nothing can be concluded",
                           rate(vuln), rate(fixed), stats::format_p(d.references.p_two_sided, d.references.log10_p_two_sided));
  } else if (differs_from_vulnerable && !differs_from_fixed) {
    d.verdict = "fix present";
    d.exit_code = 0;
    d.reason = fmt::format("hangs {} like the fixed reference ({}), unlike the vulnerable one ({})", rate(cand),
                           rate(fixed), rate(vuln));
  } else if (differs_from_fixed && !differs_from_vulnerable) {
    d.verdict = "vulnerable";
    d.exit_code = 1;
    d.reason = fmt::format("hangs {} like the vulnerable reference ({}), unlike the fixed one ({})", rate(cand),
                           rate(vuln), rate(fixed));
  } else {
    d.reason = fmt::format("hangs {}: not separated from {} at alpha {} (vulnerable {}, fixed {}); more trials "
                           "(--trials) may decide",
                           rate(cand), differs_from_fixed ? "either reference" : "both references", alpha,
                           rate(vuln), rate(fixed));
  }
  return d;
}

nlohmann::json arm_json(const Arm& a) {
  return {{"role", role_name(a.role)}, {"library", a.path},    {"sha256", a.sha256},
          {"hangs", a.hangs},          {"trials", a.n},        {"passed", a.passed},
          {"crashed_or_failed", a.other}, {"reused", a.reused}, {"source", a.source}};
}

nlohmann::json fisher_json(const stats::FisherResult& f) {
  return {{"p_two_sided", f.p_two_sided}, {"log10_p_two_sided", f.log10_p_two_sided},
          {"p", stats::format_p(f.p_two_sided, f.log10_p_two_sided)}};
}

std::string markdown_report(const nccl::InspectResult& inspected, const std::vector<Arm>& arms, const Decision& d,
                            double timeout_s, const std::string& teardown_deadline, double alpha, double seconds,
                            const std::string& run_dir) {
  std::ostringstream md;
  md << "# hangbench validate: " << inspected.path << "\n\n";
  md << "**Verdict: " << d.verdict << "** (exit " << d.exit_code << "): " << d.reason << ".\n\n";
  md << "| library | role | SHA-256 | hangs | trials | crashed/failed | from |\n|---|---|---|---|---|---|---|\n";
  for (const Arm& a : arms) {
    md << fmt::format("| `{}` | {} | `{}` | {} | {} | {} | {} |\n", a.path, role_name(a.role), a.sha256.substr(0, 16),
                      a.hangs, a.n, a.other, a.reused ? a.source : "this run");
  }
  md << fmt::format("\nFisher's exact test (two-sided), alpha {}: candidate vs vulnerable p = {}; candidate vs "
                    "fixed p = {}; vulnerable vs fixed p = {}.\n",
                    alpha, stats::format_p(d.vs_vulnerable.p_two_sided, d.vs_vulnerable.log10_p_two_sided),
                    stats::format_p(d.vs_fixed.p_two_sided, d.vs_fixed.log10_p_two_sided),
                    stats::format_p(d.references.p_two_sided, d.references.log10_p_two_sided));
  md << fmt::format("\nStatic inspection: NCCL {}, imports shutdown: {}, teardown fix present: {}.\n",
                    inspected.version.empty() ? "unknown" : inspected.version, inspected.imports_shutdown ? "yes" : "no",
                    nccl::to_string(inspected.fix));
  for (const auto& r : inspected.reasons) md << "- " << r << "\n";
  md << fmt::format("\nHang timeout {:.1f} s{}; verdict after {:.1f} s; run folder `{}`.\n", timeout_s,
                    teardown_deadline, seconds, run_dir);
  return md.str();
}

// ", or 2.0 s after teardown_begin" (what the deadline is, in the reports' words).
std::string teardown_deadline_text(const ValidateArgs& a, double teardown_timeout_s) {
  if (teardown_timeout_s <= 0) return "";
  return fmt::format(", or {:.1f} s after {}", teardown_timeout_s, a.teardown_phase);
}

int validate(const ValidateArgs& args_in) {
  const auto started = std::chrono::steady_clock::now();
  ValidateArgs a = args_in;
  if (a.trials < 1) {
    std::cerr << "hangbench validate: --trials must be at least 1\n";
    return exit_code::kUsage;
  }
  if (a.workload.empty()) a.workload = (fs::path(default_workloads_dir()) / "ddp_abort" / "ddp_abort").string();
  if (a.reference_dir.empty()) a.reference_dir = default_nccl_cache();

  nccl::InspectResult inspected;
  try {
    inspected = nccl::inspect(a.nccl_lib, /*try_dlopen=*/true);
  } catch (const std::invalid_argument& e) {
    std::cerr << "hangbench validate: " << e.what() << "\n";
    return exit_code::kUsage;
  }
  std::cout << fmt::format("inspect: {} is NCCL {}; imports shutdown: {}; static verdict \"teardown fix present\": {}\n",
                           inspected.path, inspected.version.empty() ? "unknown" : inspected.version,
                           inspected.imports_shutdown ? "yes" : "no", nccl::to_string(inspected.fix));

  std::vector<Arm> arms = {fresh_arm(Role::Candidate, fs::absolute(a.nccl_lib).string(), inspected.sha256),
                           fresh_arm(Role::Vulnerable, reference_library(a.reference_dir, a.vulnerable_variant), ""),
                           fresh_arm(Role::Fixed, reference_library(a.reference_dir, a.fixed_variant), "")};
  for (Arm& arm : arms) {
    if (arm.role == Role::Candidate) continue;
    if (!fs::is_regular_file(arm.path)) {
      std::cerr << fmt::format("hangbench validate: the {} reference {} does not exist; build the pinned variants "
                               "(hangbench nccl build) and lay them out as <dir>/<variant>/lib/libnccl.so.2, "
                               "or pass --reference-dir\n",
                               role_name(arm.role), arm.path);
      return exit_code::kUsage;
    }
    arm.sha256 = sha256_file(arm.path);
  }
  if (!fs::exists(a.workload)) {
    std::cerr << "hangbench validate: workload " << a.workload
              << " not found (build ddp_abort with -DHANGBENCH_WITH_TORCH=ON, or pass --workload)\n";
    return exit_code::kUsage;
  }

  nlohmann::json index = !a.no_reuse ? read_index(a.out_dir) : nlohmann::json::object();
  for (Arm& arm : arms) {
    if (arm.role != Role::Candidate && !a.no_reuse && reuse_reference(a, index, arm, std::cerr)) {
      std::cout << fmt::format("reference {} ({}): {} hangs of {} trials, reused from {}\n", role_name(arm.role),
                               arm.path, arm.hangs, arm.n, arm.source);
    }
  }
  double timeout_s = a.timeout_s;
  if (timeout_s <= 0) timeout_s = arms[2].reused ? learned_timeout(arms[2].healthy_wall_s) : 0;
  if (timeout_s <= 0) timeout_s = kDefaultTimeoutS;
  double teardown_timeout_s = 0;
  if (!a.teardown_phase.empty()) {
    teardown_timeout_s = a.teardown_timeout_s;
    if (teardown_timeout_s <= 0) teardown_timeout_s = arms[2].reused ? learned_timeout(arms[2].healthy_teardown_s) : 0;
    if (teardown_timeout_s <= 0) teardown_timeout_s = kDefaultTeardownTimeoutS;
  }

  // One wave: every trial that is not reused, all at once.
  Matrix matrix;
  matrix.name = "validate";
  matrix.path = "(hangbench validate " + a.nccl_lib + ")";
  matrix.alpha = a.alpha;
  matrix.capture_stacks = false;   // the verdict needs outcomes; stacks would delay it
  for (const Arm& arm : arms) {
    if (arm.reused) continue;
    Cell cell;
    cell.id = std::string("lib=") + role_name(arm.role);
    cell.params = {{"lib", role_name(arm.role)}};
    cell.argv = workload_argv(a, arm.path);
    cell.trials = a.trials;
    cell.timeout_s = timeout_s;
    if (teardown_timeout_s > 0) cell.phase_timeouts_s = {{a.teardown_phase, teardown_timeout_s}};
    cell.expect = arm.role == Role::Vulnerable ? Expectation::Hang
                  : arm.role == Role::Fixed    ? Expectation::NoHang
                                               : Expectation::None;
    cell.hash_files = {arm.path};
    matrix.cells.push_back(cell);
  }
  matrix.concurrency = static_cast<int>(matrix.cells.size()) * a.trials;
  matrix.comparisons = {{"candidate vs vulnerable", {{"lib", "candidate"}}, {{"lib", "vulnerable"}}},
                        {"candidate vs fixed", {{"lib", "candidate"}}, {{"lib", "fixed"}}}};
  if (!arms[1].reused && !arms[2].reused) {
    matrix.comparisons.push_back({"vulnerable vs fixed", {{"lib", "vulnerable"}}, {{"lib", "fixed"}}});
  }
  std::cout << fmt::format("running {} trials at once ({} per library), hang timeout {:.1f} s{}\n",
                           matrix.concurrency, a.trials, timeout_s, teardown_deadline_text(a, teardown_timeout_s));

  RunOptions options;
  const std::string run_id = new_run_id();
  options.out_dir = (fs::path(a.out_dir) / run_id).string();
  options.formats = {"markdown", "json"};
  options.log = &std::cerr;
  RunResult result;
  try {
    result = run_matrix(matrix, options);
  } catch (const ConfigError& e) {
    std::cerr << "hangbench validate: " << e.what() << "\n";
    return exit_code::kUsage;
  } catch (const std::exception& e) {
    std::cerr << "hangbench validate: the run failed: " << e.what() << "\n";
    return exit_code::kInfra;
  }
  if (result.interrupted) {
    std::cerr << "hangbench validate: interrupted\n";
    return exit_code::kInfra;
  }
  for (Arm& arm : arms) {
    if (arm.reused) continue;
    tally_trials(arm, result.summary.trials, std::string("lib=") + role_name(arm.role), a.teardown_phase);
    arm.source = "run " + result.run_id;
    if (arm.role != Role::Candidate) {
      index[reference_key(a, arm)] = {{"store", fs::absolute(result.store_path).string()},
                                      {"run", result.run_id},
                                      {"cell", std::string("lib=") + role_name(arm.role)},
                                      {"library", arm.path}};
    }
  }
  try {
    write_index(a.out_dir, index);
  } catch (const std::exception& e) {
    std::cerr << "hangbench validate: cannot record the references for reuse: " << e.what() << "\n";
  }

  const Decision d = decide(arms[0], arms[1], arms[2], a.alpha);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  for (const Arm& arm : arms) {
    std::cout << fmt::format("  {:<10} {:>3}/{:<3} hung  ({} crashed/failed)  {}\n", role_name(arm.role), arm.hangs,
                             arm.n, arm.other, arm.path);
  }
  std::cout << fmt::format("candidate vs vulnerable: p = {}; candidate vs fixed: p = {}; references: p = {}\n",
                           stats::format_p(d.vs_vulnerable.p_two_sided, d.vs_vulnerable.log10_p_two_sided),
                           stats::format_p(d.vs_fixed.p_two_sided, d.vs_fixed.log10_p_two_sided),
                           stats::format_p(d.references.p_two_sided, d.references.log10_p_two_sided));
  std::cout << fmt::format("verdict: {} ({}) [{:.1f} s]\n", d.verdict, d.reason, seconds);

  if (!a.markdown.empty()) {
    std::ofstream(a.markdown) << markdown_report(inspected, arms, d, timeout_s,
                                                 teardown_deadline_text(a, teardown_timeout_s), a.alpha, seconds,
                                                 result.out_dir);
  }
  if (!a.json.empty()) {
    nlohmann::json j = {{"library", inspected.path},
                        {"verdict", d.verdict},
                        {"exit_code", d.exit_code},
                        {"reason", d.reason},
                        {"alpha", a.alpha},
                        {"trials_per_library", a.trials},
                        {"hang_timeout_s", timeout_s},
                        {"teardown_phase", a.teardown_phase},
                        {"teardown_timeout_s", teardown_timeout_s},
                        {"seconds_to_verdict", seconds},
                        {"run_id", result.run_id},
                        {"run_dir", result.out_dir},
                        {"inspect", nccl::to_json(inspected)},
                        {"arms", nlohmann::json::array()},
                        {"candidate_vs_vulnerable", fisher_json(d.vs_vulnerable)},
                        {"candidate_vs_fixed", fisher_json(d.vs_fixed)},
                        {"vulnerable_vs_fixed", fisher_json(d.references)},
                        {"provenance", result.summary.provenance}};
    for (const Arm& arm : arms) j["arms"].push_back(arm_json(arm));
    std::ofstream(a.json) << j.dump(2) << "\n";
  }
  return d.exit_code;
}

}  // namespace

void add_validate_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<ValidateArgs>();
  auto* sub = app.add_subcommand(
      "validate",
      "Is NCCL's teardown fix in LIB? Runs LIB beside the pinned vulnerable and fixed builds; exit 0 fix present, "
      "1 vulnerable, 3 inconclusive");
  sub->add_option("--nccl", args->nccl_lib, "the libnccl.so to judge")->required();
  sub->add_option("--reference-dir", args->reference_dir,
                  "folder with <variant>/lib/libnccl.so.2 of the reference builds (default $HANGBENCH_NCCL_CACHE)");
  sub->add_option("--vulnerable", args->vulnerable_variant, "vulnerable reference variant")->capture_default_str();
  sub->add_option("--fixed", args->fixed_variant, "fixed reference variant")->capture_default_str();
  sub->add_option("--trials", args->trials, "trials per library (a fixed design)")->capture_default_str();
  sub->add_option("--timeout", args->timeout_s,
                  "hang timeout in seconds (default: learned from the fixed reference's healthy runs, else 20)");
  sub->add_option("--teardown-timeout", args->teardown_timeout_s,
                  "seconds a trial may live after --teardown-phase (default: learned from the fixed reference's "
                  "healthy teardowns, else 5)");
  sub->add_option("--teardown-phase", args->teardown_phase,
                  "the workload's phase that starts the teardown deadline (\"\" = whole-trial timeout only)")
      ->capture_default_str();
  sub->add_option("--alpha", args->alpha, "significance level of each Fisher test")->capture_default_str();
  sub->add_option("--workload", args->workload, "workload program (default: the built ddp_abort)");
  sub->add_option("--out", args->out_dir, "folder of validate runs and of the reference index")->capture_default_str();
  sub->add_flag("--no-reuse", args->no_reuse, "run the references again even when the store has them");
  sub->add_option("--markdown", args->markdown, "write the evidence as Markdown to this file");
  sub->add_option("--json", args->json, "write the evidence as JSON to this file");
  sub->callback([args, &rc] { rc = validate(*args); });
}

}  // namespace hangbench::cli
