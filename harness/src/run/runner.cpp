// A run end to end: options -> store -> schedule -> reports -> exit code.
// Every trial is in the store before the next report is written, so killing the
// harness at any moment loses at most the trials in flight.
#include "hangbench/runner.hpp"

#include <errno.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <random>
#include <set>

#include "exec/cgroup.hpp"
#include "exec/folder_lock.hpp"
#include "exec/leftovers.hpp"
#include "exec/pid_namespace.hpp"
#include "hangbench/atomic_write.hpp"
#include "hangbench/clock.hpp"
#include "hangbench/evidence.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/scheduler.hpp"
#include "hangbench/store.hpp"
#include "run/progress.hpp"
#include "run/stop_deadline.hpp"

namespace fs = std::filesystem;

namespace hangbench {
namespace {

// What the parser cannot see; `run` and `--resume` alike.
// The same bounds as the matrix file's (matrix.hpp), so a flag cannot do what a file may not.
void check_options(const RunOptions& o) {
  if (o.trials && *o.trials <= 0) throw UsageError("--trials must be > 0, got " + std::to_string(*o.trials));
  if (o.trials && *o.trials > kMaxTrials) {
    throw UsageError("--trials must be at most " + std::to_string(kMaxTrials) + ", got " + std::to_string(*o.trials));
  }
  if (o.timeout_s) {
    if (auto problem = timeout_problem(*o.timeout_s); !problem.empty()) throw UsageError("--timeout " + problem);
  }
  for (const auto& [phase, seconds] : o.phase_timeouts_s) {
    if (auto problem = timeout_problem(seconds); !problem.empty()) {
      throw UsageError("--phase-timeout " + phase + " " + problem);
    }
  }
  if (o.concurrency && (*o.concurrency < 0 || *o.concurrency > kMaxConcurrency)) {
    throw UsageError("--concurrency must be between 0 and " + std::to_string(kMaxConcurrency) +
                     " (0 = one per core), got " + std::to_string(*o.concurrency));
  }
  normalize_formats(o.formats);
}

// Applies --trials/--timeout/--filter.
void apply_overrides(Matrix& m, const RunOptions& o) {
  check_options(o);
  filter_cells(m, o.filters);
  long long total_trials = 0;
  for (auto& c : m.cells) {
    if (o.trials) c.trials = *o.trials;
    if (o.timeout_s) c.timeout_s = *o.timeout_s;
    for (const auto& [phase, seconds] : o.phase_timeouts_s) c.phase_timeouts_s[phase] = seconds;
    total_trials += c.trials;
  }
  if (o.trials && total_trials > kMaxTotalTrials) {  // the file's own plan was bounded as it was read
    throw UsageError("--trials " + std::to_string(*o.trials) + " over the " + std::to_string(m.cells.size()) +
                     " cell(s) of " + m.path + " plans " + std::to_string(total_trials) +
                     " trials; a run has at most " + std::to_string(kMaxTotalTrials) + " (docs/matrix.md)");
  }
  if (o.concurrency) m.concurrency = *o.concurrency;
}

void log_line(const RunOptions& o, const std::string& line) {
  if (o.log) *o.log << "hangbench: " << line << "\n";
}

// A folder that already holds runs: the new run's reports replace theirs in it, so
// the line says which runs are there and how to reach their reports again.
void tell_earlier_runs(const Store& store, const std::string& out_dir, const RunOptions& o) {
  for (const RunInfo& r : store.list_runs()) {
    log_line(o, "note: " + out_dir + " already holds run " + r.id + " (" + (r.matrix.empty() ? "?" : r.matrix) + ", " +
                    r.status + ", " + std::to_string(r.trials) + " trials, started " + r.started_at +
                    "); this run's reports replace its report files here, its trials stay in the store: " +
                    "hangbench report --out " + out_dir + " --run " + r.id + " --dest DIR renders them again");
  }
}

// The folder's lock.
std::unique_ptr<exec_detail::FolderLock> take_folder(const std::string& out_dir, const RunOptions& o) {
  return std::make_unique<exec_detail::FolderLock>(out_dir,
                                                   [&](const std::string& m) { log_line(o, "warning: " + m); });
}

// With the lock held: what a dead run of this folder left behind (stale cgroups,
// survivors of the trials of the runs its store records, and of no other run).
void end_folder_leftovers(const Store& store, const std::string& out_dir, const RunOptions& o) {
  if (o.executor) return;  // a fake executor starts no process
  std::vector<std::string> run_ids;
  for (const RunInfo& r : store.list_runs()) run_ids.push_back(r.id);
  for (const auto& line : exec_detail::end_leftovers(exec_detail::find_writable_cgroup_root(), out_dir, run_ids)) {
    log_line(o, "cleanup: " + line);
  }
}

class RunSession {
 public:
  RunSession(const RunOptions& opts, std::unique_ptr<exec_detail::FolderLock> lock, Store store, std::string run_id,
             std::string out_dir, Matrix matrix, Provenance provenance, std::vector<TrialResult> recorded,
             std::optional<Shard> shard)
      : lock_(std::move(lock)),
        opts_(opts),
        shard_(shard),
        store_(std::move(store)),
        run_id_(std::move(run_id)),
        out_dir_(std::move(out_dir)),
        matrix_(std::move(matrix)),
        provenance_(std::move(provenance)),
        trials_(std::move(recorded)),
        formats_(normalize_formats(opts.formats)),
        progress_(opts.log, opts.progress, opts.progress_interval_s, &in_flight_) {}

  RunResult execute() {
    // Told to stop, the harness is gone within the grace and 1.5 s, whatever its trials do.
    run_detail::StopDeadline stop_deadline(opts_.cancel, matrix_.grace_s + 1.5);
    std::unique_ptr<ProcessExecutor> own_executor;
    TrialExecutor* executor = opts_.executor;
    if (!executor) {
      own_executor = std::make_unique<ProcessExecutor>(diagnose::make_hang_capture());
      executor = own_executor.get();
    }
    ScheduleOptions sched;
    sched.concurrency = matrix_.concurrency;
    sched.cancel = opts_.cancel;
    for (const auto& t : trials_) sched.skip.emplace(t.cell_id, t.index);
    sched.shard = shard_;  // another shard's trials are skipped as the plan is walked, none listed
    sched.context.run_dir = out_dir_;
    sched.context.run_id = run_id_;
    sched.context.grace_s = matrix_.grace_s;
    sched.context.capture_stacks = matrix_.capture_stacks;
    if (matrix_.stacks_first_hang_only) sched.context.stack_budget = std::make_shared<StackBudget>();
    sched.context.provenance =
        std::make_shared<const nlohmann::json>(nlohmann::json::parse(provenance_json(provenance_).dump()));
    sched.context.warn = [this](const std::string& m) { warn(m); };
    sched.context.live_timeouts = opts_.live_timeouts;

    counts_.cells_total = static_cast<int>(matrix_.cells.size());
    if (shard_) counts_.shard = to_string(*shard_);  // the line counts the shard's own trials
    counts_.trials_total = static_cast<int>(PlanCursor(matrix_, sched.skip, shard_).total());
    for (const auto& t : trials_) ++ended_[t.cell_id];
    if (shard_) {  // a shard's cells end with the shard's share of their trials
      ShardOwnership owner(matrix_, *shard_);
      for (size_t i = 0; i < matrix_.cells.size(); ++i) {
        ended_[matrix_.cells[i].id] += static_cast<int>(matrix_.cells[i].trials - owner.owned(i));
      }
    }
    for (const auto& c : matrix_.cells) counts_.cells_done += ended_[c.id] >= c.trials;
    progress_.update(counts_);
    run_detail::CountingExecutor counted(*executor, in_flight_);  // trials in flight, for the progress line
    executor = &counted;

    ScheduleCallbacks callbacks;
    callbacks.on_trial = [this](const TrialResult& r) {
      TrialResult stamped = r;
      if (stamped.host.empty()) stamped.host = provenance_.host;  // shards of one run may run on many hosts
      store_.record_trial(run_id_, stamped);                      // committed before anything else happens
      if (r.outcome == Outcome::Infra && infra_warned_.insert({r.cell_id, r.infra_error}).second) {
        warn(r.cell_id + " #" + std::to_string(r.index) + " could not run (INFRA): " + r.infra_error);
      }
      if (opts_.on_trial) opts_.on_trial(stamped);
      trials_.push_back(std::move(stamped));
      ++counts_.trials_done;
      ++ended_[r.cell_id];
      counts_.hangs += r.outcome == Outcome::Hang;
      counts_.crashed += r.outcome == Outcome::Crashed;
      progress_.update(counts_);
      render_when_due();
    };
    callbacks.on_cell_done = [this](const Cell&) {
      ++counts_.cells_done;
      progress_.update(counts_);
    };
    last_render_s_ = now_s();
    run_schedule(matrix_, *executor, sched, callbacks);
    progress_.finish();

    RunResult result;
    result.interrupted = opts_.cancel && opts_.cancel->load();
    store_.finish_run(run_id_, result.interrupted ? "interrupted" : "complete");
    result.written = write_reports_quietly(!result.interrupted);
    result.summary = summarize(matrix_, provenance_, trials_, !result.interrupted);
    result.exit_code = result.interrupted ? exit_code::kInfra : exit_code_for(result.summary, opts_.strict);
    result.run_id = run_id_;
    result.out_dir = out_dir_;
    result.store_path = store_.path();
    return result;
  }

 private:
  void warn(const std::string& message) {
    if (opts_.log) progress_.message("hangbench: warning: " + message);
  }

  double now_s() const { return opts_.clock ? opts_.clock() : monotonic_seconds(); }

  // The reports of the trials so far, when report_interval_s has passed since the last.
  void render_when_due() {
    const double now = now_s();
    if (now - last_render_s_ < opts_.report_interval_s) return;
    write_reports_quietly(false);
    last_render_s_ = now;
  }

  // A broken exporter must not stop the run: the store already has the data.
  std::vector<std::string> write_reports_quietly(bool complete) {
    if (opts_.on_reports_written) opts_.on_reports_written();
    try {
      return write_reports(summarize(matrix_, provenance_, trials_, complete), out_dir_, formats_);
    } catch (const std::exception& e) {
      warn(std::string("could not write the reports: ") + e.what());
      return {};
    }
  }

  std::unique_ptr<exec_detail::FolderLock> lock_;  // held until the session ends
  const RunOptions& opts_;
  std::set<std::pair<std::string, std::string>> infra_warned_;  // (cell, reason) told once
  std::optional<Shard> shard_;
  Store store_;
  std::string run_id_;
  std::string out_dir_;
  Matrix matrix_;
  Provenance provenance_;
  std::vector<TrialResult> trials_;
  std::vector<std::string> formats_;
  run_detail::TrialsInFlight in_flight_;  // before progress_, which reads it
  run_detail::ProgressLine progress_;
  run_detail::ProgressCounts counts_;
  std::map<std::string, int> ended_;  // trials ended per cell (recorded, or another shard's)
  double last_render_s_ = 0;          // when the reports were last rendered (now_s())
};

// The output folder, made if needed. A path that cannot be a writable folder (a
// file, under a file, read-only) is a configuration error: nothing is written.
std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw UsageError("--out " + dir + " is a file, not a folder");
  }
  fs::create_directories(dir, ec);
  if (ec) throw InfraError("cannot create the output folder " + dir + ": " + ec.message());
  return fs::absolute(dir).lexically_normal().string();
}

// The run --resume continues: the one named, or the only unfinished one.
std::string run_to_resume(const Store& store, const std::string& named) {
  const auto runs = store.list_runs();
  const std::string where = " in " + store.path();
  if (runs.empty())
    throw UsageError("--resume: the store" + where.substr(3) + " holds no run; start one with hangbench run");
  std::string unfinished, all;
  int n_unfinished = 0;
  for (const auto& r : runs) {
    all += (all.empty() ? "" : ", ") + r.id + " (" + r.status + ")";
    if (r.status != "complete") {
      unfinished += (unfinished.empty() ? "" : ", ") + r.id;
      ++n_unfinished;
    }
  }
  if (!named.empty()) {
    for (const auto& r : runs) {
      if (r.id != named) continue;
      if (r.status == "complete") throw UsageError("--resume --run " + named + ": that run" + where + " is complete");
      return named;
    }
    throw UsageError("--resume --run " + named + ": no such run" + where + " (runs: " + all + ")");
  }
  if (n_unfinished == 0) throw UsageError("--resume: every run" + where + " is complete (" + all + ")");
  if (n_unfinished > 1) {
    throw UsageError("--resume: " + std::to_string(n_unfinished) + " runs" + where + " are unfinished (" + unfinished +
                     "); name the one to continue with --run ID");
  }
  for (const auto& r : runs) {
    if (r.status != "complete") return r.id;
  }
  return "";
}

// --resume continues a run as it was stored: options that would change its cells
// (another --matrix, --trials, --timeout, --phase-timeout, --filter) are refused,
// not silently ignored. Given with the values it already has, they are fine.
void check_resume_agrees(const Matrix& stored, const std::string& run_id, const RunOptions& o) {
  std::string given;
  auto add = [&](bool present, const char* flag) {
    if (present) given += (given.empty() ? "" : ", ") + std::string(flag);
  };
  add(o.resume_matrix.has_value(), "--matrix");
  add(o.trials.has_value(), "--trials");
  add(o.timeout_s.has_value(), "--timeout");
  add(!o.phase_timeouts_s.empty(), "--phase-timeout");
  add(!o.filters.empty(), "--filter");
  if (given.empty()) return;
  RunOptions cell_options;
  cell_options.trials = o.trials;
  cell_options.timeout_s = o.timeout_s;
  cell_options.phase_timeouts_s = o.phase_timeouts_s;
  cell_options.filters = o.filters;
  Matrix asked = o.resume_matrix ? *o.resume_matrix : stored;
  bool same = false;
  try {
    apply_overrides(asked, cell_options);
    same = nlohmann::json(asked.cells) == nlohmann::json(stored.cells);
  } catch (const UsageError&) {
    same = false;  // a filter the stored matrix cannot meet changes it too
  }
  if (!same) {
    throw UsageError("--resume continues run " + run_id + " with the cells it was started with; " + given +
                     " would change them. Leave them out to continue it, or start a new run");
  }
}

}  // namespace

std::string new_run_id() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%06x", rd() & 0xffffff);
  return std::string(stamp) + "-" + suffix;
}

std::vector<std::string> normalize_formats(const std::vector<std::string>& formats) {
  std::vector<std::string> known = exporter_formats();
  std::vector<std::string> out;
  for (std::string f : formats) {
    if (f == "md") f = "markdown";
    if (f == "xml") f = "junit";
    if (f.empty()) continue;
    if (std::find(known.begin(), known.end(), f) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw UsageError("unknown report format '" + f + "' (known: " + list + ")");
    }
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

std::vector<std::string> write_reports(const RunSummary& summary, const std::string& dir,
                                       const std::vector<std::string>& formats) {
  std::vector<std::string> written;
  for (const auto& f : formats) {
    auto exporter = make_exporter(f);
    if (!exporter) continue;
    fs::path path = fs::path(dir) / ("report" + exporter->extension());
    write_file_atomically(path.string(), exporter->render(summary));
    written.push_back(path.string());
  }
  return written;
}

Matrix apply_run_options(Matrix matrix, const RunOptions& options) {
  apply_overrides(matrix, options);
  return matrix;
}

RunResult run_matrix(Matrix matrix, const RunOptions& options) {
  apply_overrides(matrix, options);
  normalize_formats(options.formats);  // fail before anything is written
  std::string run_id = new_run_id();
  std::string out_dir = absolute_dir(options.out_dir.empty() ? "hangbench-out/" + run_id : options.out_dir);
  auto lock = take_folder(out_dir, options);
  Store store = Store::open((fs::path(out_dir) / kRunStoreFile).string());
  end_folder_leftovers(store, out_dir, options);
  tell_earlier_runs(store, out_dir, options);
  Provenance provenance = collect_provenance(matrix);
  provenance.trial_isolation = options.executor ? "none (a scripted executor)" : exec_detail::trial_isolation_mode();
  for (const auto& [file, digest] : provenance.library_hashes) {
    if (digest == "unreadable") {
      log_line(options, "warning: " + matrix.path + ": hash file " + file +
                            " cannot be read; the provenance records it as unreadable");
    }
  }
  store.begin_run(run_id, matrix, provenance, options.shard);
  return RunSession(options, std::move(lock), std::move(store), run_id, out_dir, std::move(matrix),
                    std::move(provenance), {}, options.shard)
      .execute();
}

RunResult resume_run(const RunOptions& options) {
  check_options(options);
  if (options.out_dir.empty()) throw UsageError("--resume needs --out DIR (the folder of the run to continue)");
  fs::path store_path = fs::path(options.out_dir) / kRunStoreFile;
  if (!fs::exists(store_path)) throw UsageError("--resume: no store at " + store_path.string());
  std::string out_dir = absolute_dir(options.out_dir);
  auto lock = take_folder(out_dir, options);
  Store store = Store::open(store_path.string());
  end_folder_leftovers(store, out_dir, options);
  std::string run_id = run_to_resume(store, options.resume_run_id);
  StoredRun stored = store.load_run(run_id);
  if (options.shard && options.shard != stored.info.shard) {
    throw UsageError("--resume: run " + run_id + " in " + store_path.string() + " is " +
                     (stored.info.shard ? "shard " + to_string(*stored.info.shard) : "not a shard") + ", not shard " +
                     to_string(*options.shard));
  }
  check_resume_agrees(stored.matrix, run_id, options);
  if (options.concurrency) stored.matrix.concurrency = *options.concurrency;
  log_line(options, "resuming run " + run_id + " (started " + stored.info.started_at + ", " +
                        std::to_string(stored.trials.size()) + " trial(s) recorded)");
  store.set_status(run_id, "running");
  return RunSession(options, std::move(lock), std::move(store), run_id, out_dir, std::move(stored.matrix),
                    std::move(stored.provenance), std::move(stored.trials), stored.info.shard)
      .execute();
}

}  // namespace hangbench
