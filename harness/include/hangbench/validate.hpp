// `hangbench validate`: does an NCCL library carry the teardown hang of 2.16.2-2.17.1?
// One fixed design: the library beside a vulnerable and a fixed reference build
// (pinned 2.17.1 and 2.17.1+backport), N trials each of a teardown workload with
// DataLoader-like workers forked after init, all at once; Fisher's exact test
// against each reference, reconciled with the static reading of the library.
//
// Only what was measured counts: a trial is a teardown hang only if it hung after
// the workload reported its teardown phase; trials that stop before it make the
// verdict inconclusive, with the phase and the reason in words.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hangbench/executor.hpp"
#include "hangbench/model.hpp"
#include "hangbench/nccl_build.hpp"
#include "hangbench/nccl_inspect.hpp"
#include "hangbench/stats.hpp"

namespace hangbench::validate {

inline constexpr const char* kSchema = "hangbench.validate/1";

enum class Role { Candidate, Vulnerable, Fixed };
std::string to_string(Role role);  // "candidate", "vulnerable", "fixed"

// What the library's bytes say, before any trial.
enum class StaticFix { Present, Absent, Unknown };  // ncclSocketClose calls shutdown()?
std::string to_string(StaticFix fix);               // "present", "absent", "unknown"

struct StaticReading {
  std::string version;  // "2.17.1", "" unknown
  StaticFix fix = StaticFix::Unknown;
  bool imports_shutdown = false;
  std::string gpu_code_problem;    // "" = fine or unknown; else e.g. "no code for sm_90 in .nv_fatbin"
  std::vector<std::string> notes;  // why, in words (from nccl inspect)
  // false when the hang under test is not the socket teardown (sweep --hang of a catalog
  // entry without this static check): the trials alone decide, fixed or vulnerable.
  bool applies = true;
};
StaticReading static_reading_of(const nccl::InspectResult& inspected);

// One library's trials, classified by what they measured.
struct ArmTally {
  Role role = Role::Candidate;
  std::string library;
  std::string sha256;
  int teardown_hangs = 0;                 // hung after the teardown phase: the event counted
  int passed = 0;                         // reached the teardown and exited cleanly
  int teardown_failures = 0;              // reached the teardown, then crashed or failed
  int before_teardown = 0;                // ended (hung, crashed, failed) without reaching the teardown
  int infra = 0;                          // the harness could not run it
  std::map<std::string, int> stopped;     // "hung in phase 'nccl_loaded'" -> count (before the teardown)
  std::vector<std::string> stop_reasons;  // distinct reasons the workload gave (its infra_error metric)
  std::string first_infra_error;
  std::vector<double> healthy_wall_s;      // passed trials
  std::vector<double> healthy_teardown_s;  // passed trials: exit - teardown phase
  bool reused = false;
  // A reference whose bytes are those of a candidate (a sweep over the wheels that include
  // the references' own): that candidate's trials serve both, instead of running twice.
  int shared_candidate = -1;
  std::string source;                    // "run <id>" or "store <path> run <id>"
  std::string run_id;                    // the run that holds its trials
  std::string run_dir;                   // that run's folder (its report is there)
  std::optional<Provenance> provenance;  // that run's, when reused from an earlier one

  int counted() const { return teardown_hangs + passed + teardown_failures; }  // reached the teardown
  int ended() const { return counted() + before_teardown; }
  stats::Tally tally() const { return {teardown_hangs, counted()}; }
};

// Adds the trials of `cell_id` among `trials` to `arm`.
void tally_trials(ArmTally& arm, const std::vector<TrialResult>& trials, const std::string& cell_id,
                  const std::string& teardown_phase);

enum class Verdict { Vulnerable, Fixed, NotAffected, NotVulnerable, Inconclusive };
// "vulnerable", "fixed", "not affected", "not vulnerable", "inconclusive"
std::string to_string(Verdict verdict);
// 0 fixed / not affected / not vulnerable, 1 vulnerable, 3 inconclusive.
int exit_code_of(Verdict verdict);

// Where a check's trials hang, in the words of its verdicts: the teardown (a phase
// named teardown*), or after the phase a catalog entry's reproducer hangs after
// (nccl-launch-blocking-proxy: "after `collective_begin`").
struct PhaseWords {
  std::string in = "in the teardown";               // "hangs in the teardown 7/7"
  std::string before = "before the teardown";       // "stopped before the teardown"
  std::string began = "before the teardown began";  // "7 of 7 trials stopped before the teardown began"
  std::string during = "during the teardown";       // "crashed or failed during the teardown"
};
bool is_teardown_phase(const std::string& phase);  // "" counts as the teardown
PhaseWords phase_words(const std::string& phase);

struct Decision {
  Verdict verdict = Verdict::Inconclusive;
  PhaseWords words;          // where its trials hang, for every text made from it
  std::string reason;        // one sentence: what the trials showed
  std::string disagreement;  // "" when the static reading and the trials agree; else in words
  stats::FisherResult vs_vulnerable, vs_fixed, references;
  bool references_separate = false;
  bool references_reached_phase = true;  // false: a reference had no trial that got far enough to hang
};

// The rule (docs/validate.md). Pure: no process, no file.
Decision decide(const ArmTally& candidate, const ArmTally& vulnerable, const ArmTally& fixed,
                const StaticReading& reading, double alpha, const PhaseWords& words = {});

// Why the references cannot be compared at all: "" when both had trials that reached
// the phase; else which of them had none and what stopped them (the workload's words).
// "Did not separate" would claim this machine does not reproduce the hang.
std::string references_not_run(const ArmTally& vulnerable, const ArmTally& fixed, const PhaseWords& words = {});

// Which teardown workload the trials run.
enum class Check { Teardown, Ddp };  // nccl_teardown (no libtorch) or ddp_abort (PyTorch DDP job)

struct Request {
  std::string library;  // the libnccl.so to judge
  // validate --patch FILE [--base V]: when build.patched.requested(), `library` is empty and
  // the library judged is built first: build.patched on its base, beside the two reference
  // variants, in the NCCL cache of reference_dir (nccl build's sources and cache options).
  nccl::BuildOptions build;
  std::string recipe_dir;     // "" = the repository's third_party/nccl
  std::string reference_dir;  // "" = the NCCL cache; <dir>/<variant>/lib/libnccl.so.2
  std::string vulnerable_variant = "2.17.1";
  std::string fixed_variant = "2.17.1+backport";
  Check check = Check::Teardown;
  int trials = 7;  // per library: 7/7 against 0/7 gives p = 5.8e-4
  // Per reference arm; 0 = `trials`. A sweep's two references serve every candidate,
  // so trials there buy separation for all of them: 4 per library against 16 per
  // reference also gives p = 2.1e-4, in far fewer trials over many libraries.
  int reference_trials = 0;
  int trials_per_reference() const { return reference_trials > 0 ? reference_trials : trials; }
  double timeout_s = 0;           // whole trial; 0 = learned from the fixed reference, else 20
  double teardown_timeout_s = 0;  // after teardown_phase; 0 = learned, else the check's default
  std::string teardown_phase = "teardown_begin";
  double alpha = 0.001;
  std::string workload;                          // "" = the built program of `check`
  std::vector<std::string> workload_args;        // empty = the check's default arguments
  std::vector<std::string> extra_workload_args;  // appended to those (--workload-arg), e.g. "--sync=blocking"
  // Ranks per trial (--check ddp only): > 1 starts the workload under mpirun, each
  // rank placed by `placement` ("shared-gpu": all on GPU 0, each its own NCCL host).
  int ranks = 1;
  std::string placement = "shared-gpu";
  std::string out_dir = "hangbench-out/validate";
  bool no_reuse = false;
  // Also reuse the libraries' own cells from earlier runs in out_dir (`sweep --resume`);
  // otherwise each library is measured again and only the references are reused.
  bool reuse_candidates = false;
  std::vector<std::string> argv;  // hangbench's own command line, for provenance
};

// The program and arguments a check runs by default.
std::string default_workload(Check check);
std::vector<std::string> default_workload_args(Check check);
double default_teardown_timeout_s(Check check);

struct Result {
  std::vector<nccl::BuiltVariant> built;  // --patch: what was built (or found cached), the judged one last
  nccl::InspectResult inspected;
  StaticReading reading;
  ArmTally candidate, vulnerable, fixed;
  Decision decision;
  int trials = 0;
  int reference_trials = 0;  // per reference arm run here
  double alpha = 0;
  double timeout_s = 0;
  std::string teardown_phase;
  double teardown_timeout_s = 0;
  // When the fixed reference ran in this run: the deadline learned from its healthy
  // teardowns once they had all ended, applied from then on (0 = not lowered).
  double teardown_timeout_learned_s = 0;
  std::string workload_command;  // program and arguments, before --nccl-lib
  double seconds_to_verdict = 0;
  std::string run_id;
  std::string run_dir;
  std::vector<std::string> argv;
  Provenance provenance;
};

// Runs the design. Throws ConfigError for bad requests (missing library or
// reference, no workload) and std::runtime_error when the run itself fails.
// `executor` nullptr = real processes; `log` gets progress lines (may be nullptr).
Result run(const Request& request, TrialExecutor* executor = nullptr, std::ostream* log = nullptr);

nlohmann::json to_json(const Result& result);  // schema hangbench.validate/1
// {"p_two_sided", "log10_p_two_sided", "p"} of a test, as validate and sweep write it.
nlohmann::json p_json(const stats::FisherResult& f);
std::string to_markdown(const Result& result);
std::string verdict_line(const Result& result);  // "verdict: vulnerable (...)"

}  // namespace hangbench::validate
