// The data that flows left to right: matrix -> cells -> trials -> store -> reports.
// Plain structs only; behaviour lives in the folders under harness/src.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hangbench/exit_codes.hpp"

namespace hangbench {

// How a trial ended. Order matters only for display.
enum class Outcome { Passed, Hang, Crashed, Failed, Infra };
std::string to_string(Outcome o);  // "PASSED", "HANG", ...
std::optional<Outcome> outcome_from_string(const std::string& s);

enum class Expectation { None, Hang, NoHang };
std::string to_string(Expectation e);  // "", "hang", "no-hang"

// Verdict of one cell against its expectation.
enum class Verdict { None, Confirmed, Contradicted, Inconclusive };
std::string to_string(Verdict v);  // "", "CONFIRMED", ...

enum class LauncherKind { Process, Mpirun, Srun, Torchrun };

struct Launcher {
  LauncherKind kind = LauncherKind::Process;
  int ranks = 1;                        // -np / -n / --nproc-per-node
  std::vector<std::string> extra_args;  // passed to mpirun/srun before the command
};

// One combination of axis values, fully resolved.
struct Cell {
  std::string id;                             // stable: "build=2.17.1,fork=after"
  std::map<std::string, std::string> params;  // axis -> value
  std::vector<std::string> argv;              // workload command after templating
  std::map<std::string, std::string> env;     // extra environment for the cell
  Launcher launcher;
  int trials = 20;
  double timeout_s = 10;  // hang timeout, from the trial's start
  // Tighter deadlines that start at a phase: once the workload reports phase P,
  // the trial hangs if it has not exited within phase_timeouts_s[P] seconds of it.
  // A slow start-up (libtorch, CUDA context) then never passes for a hang, and a
  // hung teardown is caught as soon as it outlasts a healthy one by a margin.
  std::map<std::string, double> phase_timeouts_s;
  Expectation expect = Expectation::None;
  std::vector<std::string> hash_files;  // libraries whose SHA-256 goes into provenance
};

// "compare cells matching A against cells matching B" (pooled per side).
struct Comparison {
  std::string name;
  std::map<std::string, std::string> a;  // axis=value filters
  std::map<std::string, std::string> b;
};

struct Matrix {
  std::string path;    // as given on the command line
  std::string sha256;  // of the file's bytes
  std::string name;
  std::vector<Cell> cells;
  std::vector<Comparison> comparisons;
  int concurrency = 0;  // 0 = number of cores
  double alpha = 0.01;
  double grace_s = 2.0;        // TERM -> KILL grace at cleanup
  bool capture_stacks = true;  // debugger stacks on hang when a debugger exists
  // stacks = "first-hang": only the first hung trial of each cell takes stacks (every
  // rank's); the others keep the rest of the evidence and are called sooner.
  bool stacks_first_hang_only = false;
};

// A phase line the workload reported.
struct PhaseEvent {
  std::string name;
  double t = 0;  // unix seconds
  int pid = 0;
  int rank = -1;
  std::string host;  // the writer's host, when it said (srun, torchrun ranks)
};

// How the harness's cleanup ended what was left of a trial: nothing was left, a
// SIGTERM sufficed, or it took SIGKILL.
enum class CleanupStep { None, Term, Kill };
std::string to_string(CleanupStep s);  // "none", "SIGTERM", "SIGKILL"
std::optional<CleanupStep> cleanup_step_from_string(const std::string& s);

// The phase deadline that called a hang: the cell's timeout for that phase, or a
// lower one the harness learned while the run went on.
struct HangDeadline {
  std::string phase;  // the phase whose timeout it was
  double seconds = 0;
  std::string learned;  // why it was lowered below the cell's; "" when it was not
};

// What the harness itself saw of a trial, beside the workload's own metrics. In the
// trial's JSON (store, reports) they are metrics named "harness.*"; a fact unset
// here is absent there.
struct HarnessFacts {
  std::optional<CleanupStep> cleanup;         // harness.cleanup: "none", "SIGTERM", "SIGKILL"
  std::vector<int> leftover_pids;             // harness.leftover_pids: what cleanup ended besides the workload
  bool pid_namespace = false;                 // harness.pid_namespace: the trial ran in its own PID namespace
  std::vector<int> unmapped_namespace_pids;   // harness.unmapped_namespace_pids: pids of phase lines with no host pid
  std::optional<HangDeadline> hang_deadline;  // harness.hang_deadline: "PHASE + S s", then " (WHY)" when learned
  bool cgroup = false;                        // harness.cgroup: the trial ran in a cgroup of its own
};

struct TrialResult {
  std::string cell_id;
  int index = 0;  // 0..trials-1 within the cell
  Outcome outcome = Outcome::Infra;
  int exit_code = -1;     // when exited
  int signal = 0;         // when killed by a signal
  double started_at = 0;  // unix seconds
  double wall_s = 0;
  std::vector<PhaseEvent> phases;
  nlohmann::json metrics = nlohmann::json::object();  // the workload's own (its phase lines' metrics)
  HarnessFacts harness;
  std::string hung_phase;        // last phase seen before the timeout
  std::string evidence_dir;      // per-trial folder, relative to the run folder
  std::string evidence_summary;  // one paragraph in words
  std::vector<int> survivors;    // pids still alive after cleanup (should be empty)
  std::string infra_error;
  std::string host;  // where the harness ran it (kept per trial by merge)
};

// Who ran, on what, when: the header of every report.
struct Provenance {
  std::string hangbench_version;
  std::string hangbench_commit;   // "<sha>-dirty+diff.<sha12>" when the tree differed from it
  std::vector<std::string> argv;  // the hangbench command line that made the report
  std::string host;
  std::string kernel;
  std::string gpu;  // "" when none
  std::string driver;
  std::string cuda;        // the driver's CUDA version ("13.0"); "" without a GPU
  std::string started_at;  // ISO 8601 UTC
  std::string matrix_path;
  std::string matrix_sha256;
  std::map<std::string, std::string> library_hashes;  // path -> sha256
  std::map<std::string, std::string> environment;     // variables that matter
  // How trials were kept from outliving the harness: "pid-namespace" (the kernel
  // ends a trial when the harness dies) or "watcher" (hangbench-watch does); "" in
  // stores made before this was recorded.
  std::string trial_isolation;
  // A merged run (`hangbench merge`): each shard's command line, shard 0 first;
  // argv is then the merge's own. Empty for any other run.
  std::vector<std::string> shard_commands;
};

}  // namespace hangbench

namespace hangbench {
// True when every axis=value of `filter` is among `params` (an empty filter
// matches all). The one rule for [[exclude]], [[cell]], [[compare]] and reports.
bool params_match(const std::map<std::string, std::string>& params, const std::map<std::string, std::string>& filter);

// The workload's own words for why it could not go on (its metric "infra_error", as
// nccl_teardown writes it: a string, or the first of several), "" when it gave none.
std::string workload_infra_error(const TrialResult& t);
}  // namespace hangbench

// JSON forms of the model (used by the store and the JSON exporter).
namespace hangbench {
// A phase line and a trial: one form for the store (json) and the reports
// (ordered_json, keys in this order; the JSON report adds its derived teardown_s).
template <class Json>
void to_json(Json& j, const PhaseEvent& p) {
  j = Json{{"name", p.name}, {"t", p.t}, {"pid", p.pid}, {"rank", p.rank}};
  if (!p.host.empty()) j["host"] = p.host;  // ranks of srun/torchrun cells
}
void from_json(const nlohmann::json& j, PhaseEvent& p);
// A trial's "metrics": the workload's, with the harness's facts as "harness.*" keys.
nlohmann::json metrics_json(const TrialResult& t);
// metrics_json's inverse: the stored "metrics" into t.metrics and t.harness.
void read_metrics_json(nlohmann::json metrics, TrialResult& t);
template <class Json>
void to_json(Json& j, const TrialResult& t) {
  j = Json{{"cell_id", t.cell_id},
           {"index", t.index},
           {"outcome", to_string(t.outcome)},
           {"exit_code", t.exit_code},
           {"signal", t.signal},
           {"started_at", t.started_at},
           {"wall_s", t.wall_s},
           {"hung_phase", t.hung_phase},
           {"phases", t.phases},
           {"metrics", Json(metrics_json(t))},
           {"evidence_dir", t.evidence_dir},
           {"evidence_summary", t.evidence_summary},
           {"survivors", t.survivors},
           {"infra_error", t.infra_error}};
  if (!t.host.empty()) j["host"] = t.host;  // where the harness ran it; shards may differ
}
void from_json(const nlohmann::json& j, TrialResult& t);
void to_json(nlohmann::json& j, const Cell& c);
void from_json(const nlohmann::json& j, Cell& c);
void to_json(nlohmann::json& j, const Comparison& c);
void from_json(const nlohmann::json& j, Comparison& c);
void to_json(nlohmann::json& j, const Matrix& m);
void from_json(const nlohmann::json& j, Matrix& m);

// The provenance's one JSON form: for the store (json) and for every report
// (ordered_json, whose keys keep this order: provenance_json).
template <class Json>
void to_json(Json& j, const Provenance& p) {
  j = Json{{"hangbench_version", p.hangbench_version},
           {"hangbench_commit", p.hangbench_commit},
           {"argv", p.argv},
           {"host", p.host},
           {"kernel", p.kernel},
           {"gpu", p.gpu},
           {"driver", p.driver},
           {"cuda", p.cuda},
           {"started_at", p.started_at},
           {"matrix_path", p.matrix_path},
           {"matrix_sha256", p.matrix_sha256},
           {"library_hashes", p.library_hashes},
           {"environment", p.environment}};
  if (!p.trial_isolation.empty()) j["trial_isolation"] = p.trial_isolation;
  if (!p.shard_commands.empty()) j["shard_commands"] = p.shard_commands;  // a merged run only
}
void from_json(const nlohmann::json& j, Provenance& p);
}  // namespace hangbench
