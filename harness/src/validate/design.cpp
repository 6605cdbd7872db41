#include "validate/design.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "hangbench/atomic_write.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/nccl_build.hpp"
#include "hangbench/paths.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/runner.hpp"
#include "hangbench/store.hpp"
#include "validate/arm_index.hpp"

namespace hangbench::validate {
namespace {

namespace fs = std::filesystem;

constexpr double kDefaultTimeoutS = 20;
// Several libtorch ranks per trial start slowly on a shared GPU: a trial that has not
// reached its teardown after 20 s is start-up, not a hang (H200, 2026-12-04: every
// trial of a 21-at-once 2-rank design stopped there).
constexpr double kDefaultTimeoutRanksS = 60;
constexpr double kMinLearnedTimeoutS = 2;

// <dir>/<variant>/lib/libnccl.so.2 (a bundle's layout), else the newest build of
// the variant in the NCCL cache (<dir>/variants/<variant>-<key>/, from `nccl build`).
std::string reference_library(const std::string& dir, const std::string& variant) {
  const fs::path plain = fs::path(dir) / variant / "lib" / "libnccl.so.2";
  if (fs::exists(plain)) return plain.string();
  std::string newest;
  for (const nlohmann::json& m : nccl::list_built(dir)) {  // sorted by variant, then build time
    if (m.value("variant", "") == variant && m.contains("output_dir")) {
      newest = (fs::path(m["output_dir"].get<std::string>()) / m.value("library", "lib/libnccl.so.2")).string();
    }
  }
  return newest.empty() ? plain.string() : newest;
}

std::string command_text(const Request& r) {
  std::string command = r.workload;
  for (const auto& w : r.workload_args) command += " " + w;
  return command;
}

// The identity of an arm's result: the library's bytes, what was run on it, how often.
// A deadline after the phase that was asked for is part of it: a cell judged at 8 s is not
// one judged at 12 s (an index written before this was so lacks it: its entry is reused
// only where the stored run's cell had the deadline asked for).
std::string arm_key(const Request& r, const ArmTally& arm, int trials, bool with_deadline = true) {
  const std::string world = r.ranks > 1 ? fmt::format("|ranks={}", r.ranks) : "";
  const std::string after =
      with_deadline && r.teardown_timeout_s > 0 ? fmt::format("|after={}", r.teardown_timeout_s) : "";
  return fmt::format("{}|{}|trials={}{}{}", arm.sha256, command_text(r), trials, world, after);
}
std::string reference_key(const Request& r, const ArmTally& arm) { return arm_key(r, arm, r.reference_trials); }
std::string candidate_key(const Request& r, const ArmTally& arm) { return arm_key(r, arm, r.trials); }

// Several ranks per trial: the design's workload under mpirun (never a launcher of
// our own), each rank placed as asked.
void check_world(Request& r) {
  if (r.ranks < 1 || r.ranks > 4096) throw UsageError(fmt::format("--ranks must be in 1..4096, got {}", r.ranks));
  if (r.placement != "shared-gpu" && r.placement != "gpu-per-rank") {
    throw UsageError("--placement must be shared-gpu or gpu-per-rank, got '" + r.placement + "'");
  }
  if (r.ranks == 1) return;
  if (r.check != Check::Ddp) {
    throw UsageError("--ranks > 1 needs --check ddp: the teardown check's workload (nccl_teardown) is one rank");
  }
  r.workload_args.push_back("--placement=" + r.placement);
}

Launcher world_launcher(const Request& r) {
  Launcher l;
  if (r.ranks <= 1) return l;
  l.kind = LauncherKind::Mpirun;
  l.ranks = r.ranks;
  l.extra_args = {"--oversubscribe"};
  if (geteuid() == 0) l.extra_args.push_back("--allow-run-as-root");  // mpirun refuses root without it
  return l;
}

ArmTally fresh_arm(Role role, std::string path, std::string sha256) {
  ArmTally arm;
  arm.role = role;
  arm.library = std::move(path);
  arm.sha256 = std::move(sha256);
  return arm;
}

// A hang must outlast the fixed reference's healthy times by a safe margin.
double learned_timeout(const std::vector<double>& healthy_s) {
  if (healthy_s.size() < 3) return 0;
  return std::max(kMinLearnedTimeoutS, 2.0 * stats::quantile_type7(healthy_s, 0.99) + 1.0);
}

Cell make_cell(const std::string& id, const std::string& role, const Request& r, const std::string& library, int trials,
               double timeout_s, double teardown_timeout_s, Expectation expect) {
  Cell cell;
  cell.id = id;
  cell.params = {{"lib", id.substr(id.find('=') + 1)}, {"role", role}};
  cell.argv = {r.workload};
  cell.argv.insert(cell.argv.end(), r.workload_args.begin(), r.workload_args.end());
  cell.argv.push_back("--nccl-lib=" + library);
  cell.trials = trials;
  cell.timeout_s = timeout_s;
  if (teardown_timeout_s > 0) cell.phase_timeouts_s = {{r.teardown_phase, teardown_timeout_s}};
  cell.expect = expect;
  cell.hash_files = {library};
  cell.launcher = world_launcher(r);
  return cell;
}

}  // namespace

std::string candidate_cell(size_t index, size_t count) {
  return count == 1 ? "lib=candidate" : fmt::format("lib=candidate-{:02}", index + 1);
}

std::string default_workload(Check check) {
  const fs::path dir = default_workloads_dir();
  return check == Check::Ddp ? (dir / "ddp_abort" / "ddp_abort").string()
                             : (dir / "nccl_teardown" / "nccl_teardown").string();
}

std::vector<std::string> default_workload_args(Check check) {
  if (check == Check::Ddp) {
    return {"--backend=direct", "--teardown=exit", "--workers=after", "--epochs=1", "--steps=2"};
  }
  // One hardware queue per CUDA context: 21 trials' contexts on one H200 took 3.0 s
  // to create with CUDA's default 8 and 1.05 s with 1 (results/h200-2026-12-03-fresh-verdict);
  // the teardown under test is host code, untouched by it.
  return {"--teardown=abort", "--workers-forked=after", "--cuda-connections=1"};
}

// A healthy abort takes 0.5 s on the H200 (0.8 s from 2.28 on); the DDP job's
// start-up under load made its teardowns slower.
double default_teardown_timeout_s(Check check) { return check == Check::Ddp ? 5.0 : 3.0; }

namespace {

// The cell of a reference arm: "lib=vulnerable" or "lib=fixed".
std::string reference_cell(Role role) { return "lib=" + to_string(role); }

// A design whose cleanest outcome (a library hanging every trial against a reference
// that never does) cannot reach alpha would run every trial for no verdict.
void check_design_can_decide(const Request& r) {
  const int n = r.trials, m = r.reference_trials;
  const double best = stats::fisher_exact({n, n}, {0, m}).p_two_sided;
  const double references = stats::fisher_exact({m, m}, {0, m}).p_two_sided;
  if (best < r.alpha && references < r.alpha) return;
  throw UsageError(fmt::format(
      "{} trials per library and {} per reference cannot separate at alpha {}: even every trial hanging against "
      "none gives p = {:.2g} (library against reference) and {:.2g} (reference against reference); raise --trials "
      "or --reference-trials (7 and 7, or 4 and 16, reach alpha 0.001)",
      n, m, r.alpha, best, references));
}

// The request with its defaults filled in, or a UsageError naming what is wrong.
Request prepared(const Request& request) {
  Request r = request;
  if (r.trials < 1) throw UsageError("--trials must be at least 1");
  if (r.reference_trials < 0) throw UsageError("--reference-trials must be at least 1 (0: as --trials)");
  r.reference_trials = r.trials_per_reference();
  if (r.alpha <= 0 || r.alpha >= 1) throw UsageError("--alpha must be between 0 and 1");
  check_design_can_decide(r);
  if (r.workload.empty()) r.workload = default_workload(r.check);
  if (r.workload_args.empty()) r.workload_args = default_workload_args(r.check);
  check_world(r);
  r.workload_args.insert(r.workload_args.end(), r.extra_workload_args.begin(), r.extra_workload_args.end());
  if (r.reference_dir.empty()) r.reference_dir = default_nccl_cache();
  if (!fs::exists(r.workload)) {
    throw UsageError(
        fmt::format("workload {} not found (build it: cmake --build --preset default; ddp_abort needs "
                    "the full preset), or pass --workload",
                    r.workload));
  }
  return r;
}

// The three kinds of arm, each library hashed before the first trial (its arm,
// the provenance and the reference index name it by hash): all at once, each once.
void hash_arms(const Request& r, const std::vector<std::string>& candidates, DesignRun& out) {
  out.vulnerable = fresh_arm(Role::Vulnerable, reference_library(r.reference_dir, r.vulnerable_variant), "");
  out.fixed = fresh_arm(Role::Fixed, reference_library(r.reference_dir, r.fixed_variant), "");
  for (ArmTally* ref : {&out.vulnerable, &out.fixed}) {
    if (!fs::is_regular_file(ref->library)) {
      throw UsageError(
          fmt::format("the {} reference {} does not exist; build the pinned variants (hangbench nccl "
                      "build) and lay them out as <dir>/<variant>/lib/libnccl.so.2, or pass "
                      "--reference-dir",
                      to_string(ref->role), ref->library));
    }
  }
  std::vector<std::future<std::string>> hashing;
  for (ArmTally* ref : {&out.vulnerable, &out.fixed})
    hashing.push_back(std::async(std::launch::async, sha256_file, ref->library));
  for (const std::string& lib : candidates) hashing.push_back(std::async(std::launch::async, sha256_file, lib));
  out.vulnerable.sha256 = hashing[0].get();
  out.fixed.sha256 = hashing[1].get();
  for (size_t i = 0; i < candidates.size(); ++i) {
    out.candidates.push_back(fresh_arm(Role::Candidate, fs::absolute(candidates[i]).string(), hashing[2 + i].get()));
  }
}

// Arms an earlier run in this folder on the same bytes, command and trials already
// judged: the references, and the candidates of a sweep that was cut off or extended.
void reuse_arms(const Request& r, const ArmIndex& index, DesignRun& out, std::ostream* log) {
  if (r.no_reuse) return;
  auto reuse = [&](ArmTally& arm, int trials) {
    return index.reuse({arm_key(r, arm, trials), arm_key(r, arm, trials, false), r.teardown_timeout_s}, trials,
                       r.teardown_phase, arm, log);
  };
  for (ArmTally* ref : {&out.vulnerable, &out.fixed}) {
    if (reuse(*ref, r.reference_trials) && log) {
      *log << fmt::format("reference {} ({}): {} teardown hangs of {} trials, reused from {}\n", to_string(ref->role),
                          ref->library, ref->teardown_hangs, ref->ended(), ref->source);
    }
  }
  if (!r.reuse_candidates) return;
  int reused = 0;
  for (ArmTally& candidate : out.candidates) reused += reuse(candidate, r.trials) ? 1 : 0;
  if (reused > 0 && log)
    *log << fmt::format("{} of {} libraries reused from earlier runs in {} (--no-reuse runs them again)\n", reused,
                        out.candidates.size(), r.out_dir);
}

// A reference not reused whose SHA-256 is a candidate's runs as that candidate's cell
// (unless that candidate's trials were reused: too few for a reference).
void share_references_with_candidates(DesignRun& out, std::ostream* log) {
  for (ArmTally* ref : {&out.vulnerable, &out.fixed}) {
    if (ref->reused || ref->sha256.empty()) continue;
    for (size_t i = 0; i < out.candidates.size(); ++i) {
      if (out.candidates[i].sha256 != ref->sha256 || out.candidates[i].reused) continue;
      ref->shared_candidate = static_cast<int>(i);
      if (log)
        *log << fmt::format("reference {} ({}): the same bytes as candidate {} ({}); its trials serve both\n",
                            to_string(ref->role), ref->library, i + 1, out.candidates[i].library);
      break;
    }
  }
}

// The cell whose trials are this reference's: its own, or the candidate's it shares.
std::string arm_cell(const ArmTally& ref, size_t candidate_count) {
  return ref.shared_candidate >= 0 ? candidate_cell(static_cast<size_t>(ref.shared_candidate), candidate_count)
                                   : reference_cell(ref.role);
}

// The comparison side of a reference: its role's cell, or the candidate cell it shares.
std::map<std::string, std::string> arm_selector(const ArmTally& ref, size_t candidate_count) {
  if (ref.shared_candidate < 0) return {{"role", to_string(ref.role)}};
  const std::string cell = arm_cell(ref, candidate_count);
  return {{"lib", cell.substr(cell.find('=') + 1)}};
}

// The hang deadlines: as asked, else learned from a reused fixed reference's
// healthy times, else the defaults.
void choose_deadlines(const Request& r, DesignRun& out) {
  out.timeout_s = r.timeout_s > 0 ? r.timeout_s : out.fixed.reused ? learned_timeout(out.fixed.healthy_wall_s) : 0;
  if (out.timeout_s <= 0) out.timeout_s = r.ranks > 1 ? kDefaultTimeoutRanksS : kDefaultTimeoutS;
  if (r.teardown_phase.empty()) return;
  out.teardown_timeout_s = r.teardown_timeout_s > 0 ? r.teardown_timeout_s
                           : out.fixed.reused       ? learned_timeout(out.fixed.healthy_teardown_s)
                                                    : 0;
  if (out.teardown_timeout_s <= 0) out.teardown_timeout_s = default_teardown_timeout_s(r.check);
}

}  // namespace

int trials_at_once(int all, int requested, int ranks, unsigned cores) {
  if (requested > 0) return std::min(requested, all);
  if (ranks <= 1) return all;
  const int per_core = std::max(1, static_cast<int>(cores) / ranks);
  return std::min(all, per_core);
}

namespace {

int trials_of(const Matrix& matrix) {
  int all = 0;
  for (const Cell& cell : matrix.cells) all += cell.trials;
  return all;
}

// One cell per candidate and per reference not reused; the comparisons a verdict reads.
Matrix design_matrix(const Request& r, const std::vector<std::string>& candidates, int concurrency,
                     const DesignRun& out) {
  Matrix matrix;
  matrix.name = candidates.size() == 1 ? "validate" : "sweep";
  matrix.path = fmt::format("(hangbench {} of {} libraries)", matrix.name, candidates.size());
  matrix.alpha = r.alpha;
  matrix.capture_stacks = false;  // the verdict needs outcomes; stacks would delay it
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (out.candidates[i].reused) continue;
    // A candidate that is also a reference carries the reference's expectation.
    Expectation expect = Expectation::None;
    if (out.vulnerable.shared_candidate == static_cast<int>(i)) expect = Expectation::Hang;
    if (out.fixed.shared_candidate == static_cast<int>(i)) expect = Expectation::NoHang;
    // A candidate whose trials are also a reference's runs the reference's count.
    const int trials = expect == Expectation::None ? r.trials : r.reference_trials;
    matrix.cells.push_back(make_cell(candidate_cell(i, candidates.size()), "candidate", r, out.candidates[i].library,
                                     trials, out.timeout_s, out.teardown_timeout_s, expect));
  }
  if (!out.vulnerable.reused && out.vulnerable.shared_candidate < 0) {
    matrix.cells.push_back(make_cell(reference_cell(Role::Vulnerable), "vulnerable", r, out.vulnerable.library,
                                     r.reference_trials, out.timeout_s, out.teardown_timeout_s, Expectation::Hang));
  }
  if (!out.fixed.reused && out.fixed.shared_candidate < 0) {
    matrix.cells.push_back(make_cell(reference_cell(Role::Fixed), "fixed", r, out.fixed.library, r.reference_trials,
                                     out.timeout_s, out.teardown_timeout_s, Expectation::NoHang));
  }
  matrix.concurrency = trials_at_once(trials_of(matrix), concurrency, r.ranks, std::thread::hardware_concurrency());
  if (candidates.size() == 1) {
    matrix.comparisons = {{"candidate vs vulnerable", {{"role", "candidate"}}, {{"role", "vulnerable"}}},
                          {"candidate vs fixed", {{"role", "candidate"}}, {{"role", "fixed"}}}};
  }
  if (!out.vulnerable.reused && !out.fixed.reused) {
    matrix.comparisons.push_back({"vulnerable vs fixed", arm_selector(out.vulnerable, candidates.size()),
                                  arm_selector(out.fixed, candidates.size())});
  }
  return matrix;
}

// A fixed reference that runs in this run teaches the teardown deadline here as
// it would when reused: once all its trials have ended, the learned rule applies
// to every trial still waiting (a hang is declared sooner, never later).
void learn_teardown_deadline(const Request& r, size_t candidate_count, DesignRun& out, RunOptions& options) {
  if (out.fixed.reused || r.teardown_timeout_s > 0 || r.teardown_phase.empty()) return;
  auto live = std::make_shared<LivePhaseTimeouts>();
  auto fixed_trials = std::make_shared<std::vector<TrialResult>>();
  options.live_timeouts = live;
  const std::string cell = arm_cell(out.fixed, candidate_count);
  options.on_trial = [&r, &out, live, fixed_trials, cell](const TrialResult& t) {
    if (t.cell_id != cell) return;
    fixed_trials->push_back(t);
    if (static_cast<int>(fixed_trials->size()) != r.reference_trials) return;
    ArmTally fixed = fresh_arm(Role::Fixed, "", "");
    tally_trials(fixed, *fixed_trials, cell, r.teardown_phase);
    const double learned = learned_timeout(fixed.healthy_teardown_s);
    if (learned <= 0 || learned >= out.teardown_timeout_s) return;
    live->lower(r.teardown_phase, learned,
                fmt::format("learned from the fixed reference's {} healthy teardowns in this run",
                            fixed.healthy_teardown_s.size()));
    out.teardown_timeout_learned_s = learned;
  };
}

// Each cell of this run as the index knows it: the keys its trials answer, and how many.
struct WatchedCell {
  std::vector<std::string> keys;
  int trials = 0;
  std::string library;
};

std::map<std::string, WatchedCell> watched_cells(const Request& r, const DesignRun& out) {
  std::map<std::string, WatchedCell> cells;
  const size_t n = out.candidates.size();
  for (size_t i = 0; i < n; ++i) {
    if (out.candidates[i].reused) continue;
    cells[candidate_cell(i, n)] = {{candidate_key(r, out.candidates[i])}, r.trials, out.candidates[i].library};
  }
  for (const ArmTally* ref : {&out.vulnerable, &out.fixed}) {
    if (ref->reused) continue;
    WatchedCell& cell = cells[arm_cell(*ref, n)];
    cell.keys.push_back(reference_key(r, *ref));
    cell.trials = r.reference_trials;  // a shared candidate runs the reference's count
    cell.library = ref->library;
  }
  return cells;
}

// Enters each cell in the index as soon as its last trial is recorded, so that a sweep
// killed later (a time limit) resumes from the cells already finished.
void enter_cells_as_they_end(const Request& r, const DesignRun& out, ArmIndex& index, RunOptions& options) {
  struct Progress {
    std::mutex mutex;
    std::map<std::string, WatchedCell> cells;
    std::map<std::string, int> ended;
  };
  auto progress = std::make_shared<Progress>();
  progress->cells = watched_cells(r, out);
  const std::string store = (fs::path(options.out_dir) / kRunStoreFile).string();
  options.on_trial = [progress, store, &index, earlier = options.on_trial](const TrialResult& t) {
    if (earlier) earlier(t);
    std::lock_guard<std::mutex> lock(progress->mutex);
    auto cell = progress->cells.find(t.cell_id);
    if (cell == progress->cells.end() || ++progress->ended[t.cell_id] != cell->second.trials) return;
    try {
      std::vector<ArmIndex::Record> records;
      for (const std::string& key : cell->second.keys)
        records.push_back({key, store, "", t.cell_id, cell->second.library});
      index.enter(records);
    } catch (const std::exception&) {
      // The index is written again, whole, when the run ends; a cut-off run then runs this cell again.
    }
  };
}

// Every arm that ran is tallied from the run's trials and entered into the index
// for the next validate or sweep in this folder to reuse.
void tally_run(const Request& r, const RunResult& result, DesignRun& out, ArmIndex& index, std::ostream* log) {
  const size_t n = out.candidates.size();
  out.run_dir = result.out_dir;
  out.run_id = result.run_id;  // the store's id of the run (its folder's name is made before it)
  out.provenance = result.summary.provenance;
  for (size_t i = 0; i < n; ++i) {
    ArmTally& candidate = out.candidates[i];
    if (candidate.reused) continue;
    tally_trials(candidate, result.summary.trials, candidate_cell(i, n), r.teardown_phase);
    candidate.source = "run " + result.run_id;
    candidate.run_id = result.run_id;
    candidate.run_dir = result.out_dir;
  }
  for (ArmTally* ref : {&out.vulnerable, &out.fixed}) {
    if (ref->reused) continue;
    tally_trials(*ref, result.summary.trials, arm_cell(*ref, n), r.teardown_phase);
    ref->source = "run " + result.run_id;
    ref->run_id = result.run_id;
    ref->run_dir = result.out_dir;
  }
  try {
    std::vector<ArmIndex::Record> records;  // every cell again, now with the run's id: one write
    for (const auto& [cell, watched] : watched_cells(r, out)) {
      for (const std::string& key : watched.keys)
        records.push_back({key, result.store_path, result.run_id, cell, watched.library});
    }
    index.enter(records);
  } catch (const std::exception& e) {
    if (log) *log << "validate: cannot record the arms for reuse: " << e.what() << "\n";
  }
}

// Nothing left to run: every arm came from earlier runs; the table names the newest.
void take_reused_provenance(DesignRun& out) {
  std::vector<const ArmTally*> arms = {&out.vulnerable, &out.fixed};
  for (const ArmTally& c : out.candidates) arms.push_back(&c);
  for (const ArmTally* arm : arms) {
    if (!arm->provenance || arm->provenance->started_at < out.provenance.started_at) continue;
    out.provenance = *arm->provenance;
    out.run_dir = arm->run_dir;
    out.run_id = arm->run_id;
  }
}

}  // namespace

DesignRun run_design(const Request& request, const std::vector<std::string>& candidates, int concurrency,
                     TrialExecutor* executor, std::ostream* log) {
  const Request r = prepared(request);
  DesignRun out;
  out.workload_command = command_text(r);
  hash_arms(r, candidates, out);
  ArmIndex index(r.out_dir, r.no_reuse);
  reuse_arms(r, index, out, log);
  share_references_with_candidates(out, log);
  choose_deadlines(r, out);
  Matrix matrix = design_matrix(r, candidates, concurrency, out);
  if (matrix.cells.empty()) {
    if (log) *log << "every library and reference was judged by earlier runs in " << r.out_dir << "; nothing to run\n";
    take_reused_provenance(out);
    return out;
  }
  if (log) {
    const std::string per_reference =
        r.reference_trials == r.trials ? "" : fmt::format(", {} per reference", r.reference_trials);
    *log << fmt::format(
        "running {} trials, {} at once ({} per library{}), hang timeout {:.1f} s, or {:.1f} s after {}\n",
        trials_of(matrix), matrix.concurrency, r.trials, per_reference, out.timeout_s, out.teardown_timeout_s,
        r.teardown_phase);
  }
  RunOptions options;
  learn_teardown_deadline(r, candidates.size(), out, options);
  options.out_dir = (fs::path(r.out_dir) / new_run_id()).string();
  options.formats = {"markdown", "json"};
  options.log = log;
  options.executor = executor;
  enter_cells_as_they_end(r, out, index, options);
  RunResult result = run_matrix(matrix, options);
  if (result.interrupted) throw std::runtime_error("interrupted");
  tally_run(r, result, out, index, log);
  return out;
}

}  // namespace hangbench::validate
