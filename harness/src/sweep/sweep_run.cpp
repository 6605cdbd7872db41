// sweep::run: read every library, run the good ones beside the references in one
// wave, decide each with validate's rule, order the rows by release.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <thread>

#include "hangbench/catalog.hpp"
#include "hangbench/matrix.hpp"
#include "hangbench/provenance.hpp"
#include "hangbench/static_check.hpp"
#include "hangbench/sweep.hpp"
#include "sweep/release_order.hpp"
#include "sweep/row_text.hpp"
#include "validate/design.hpp"

namespace hangbench::sweep {

namespace {

// Every library read once (its bytes, version and GPU code), whichever entries follow:
// one row each, with the problem that keeps it out of the design, if any.
std::vector<Row> read_libraries(const std::vector<std::string>& libraries, std::ostream* log) {
  if (libraries.empty()) throw UsageError("no library to sweep: pass LIB... or --list FILE");
  prefetch_host_provenance();  // nvidia-smi runs while the libraries are read
  std::vector<Row> rows;
  for (const std::string& path : libraries) {
    Row row;
    row.facts.path = path;
    if (!std::filesystem::exists(path)) {
      row.problem = "no such file";
    } else if (!std::filesystem::is_regular_file(path)) {
      row.problem = "not a regular file";
    } else {
      try {
        row.inspected = nccl::inspect(path, /*try_dlopen=*/true);
        row.reading = validate::static_reading_of(row.inspected);
        row.facts = library_facts(path, &row.inspected);
      } catch (const std::exception& e) {
        row.problem = std::string("not NCCL: ") + e.what();
      }
    }
    if (log && !row.problem.empty()) *log << fmt::format("sweep: {}: {}; its row says so\n", path, row.problem);
    rows.push_back(std::move(row));
  }
  return rows;
}

Result run_one(const Request& request, const std::vector<Row>& read, TrialExecutor* executor, std::ostream* log) {
  const auto started = std::chrono::steady_clock::now();
  // The library's static reading (shutdown() in ncclSocketClose) speaks of the teardown
  // hang only: a catalog entry without that check is judged by its trials alone.
  const catalog::Entry* entry = request.hang.empty() ? nullptr : catalog::find(request.hang);
  const bool socket_check = !entry || validate::has_socket_check(*entry);
  Result result;
  result.rows = read;
  std::vector<size_t> runnable;  // rows that go into the design, in the design's order
  for (size_t i = 0; i < result.rows.size(); ++i)
    if (result.rows[i].problem.empty()) runnable.push_back(i);

  // A table of rows that all say "no such file" would read like a sweep that ran:
  // with nothing to judge, the command line was wrong.
  if (runnable.empty()) {
    std::string problems;
    for (const Row& row : result.rows) problems += fmt::format("\n  {}: {}", row.facts.path, row.problem);
    throw UsageError("no library to sweep could be read; pass libnccl.so files:" + problems);
  }
  std::vector<std::string> candidates;
  for (size_t i : runnable) candidates.push_back(result.rows[i].facts.path);
  // One trial per core, and a teardown deadline that a healthy abort of any
  // release meets under that load: on the H200, twice the cores and 3 s made
  // the slower aborts of 2.19 and later look like hangs (results/h200-2026-12-03-sweep).
  // Several ranks per trial: 0 leaves it to the design (at most one rank per core).
  int concurrency = request.concurrency;
  if (concurrency <= 0 && request.design.ranks <= 1)
    concurrency = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  validate::Request design_request = request.design;
  if (design_request.teardown_timeout_s <= 0) design_request.teardown_timeout_s = kDefaultTeardownTimeoutS;
  validate::DesignRun design = validate::run_design(design_request, candidates, concurrency, executor, log);
  for (size_t k = 0; k < runnable.size(); ++k) {
    Row& row = result.rows[runnable[k]];
    row.arm = design.candidates[k];
    validate::StaticReading reading = row.reading;
    reading.applies = socket_check;
    row.decision = validate::decide(row.arm, design.vulnerable, design.fixed, reading, request.design.alpha,
                                    validate::phase_words(request.design.teardown_phase));
  }
  result.vulnerable = design.vulnerable;
  result.fixed = design.fixed;
  result.references = stats::fisher_exact(design.vulnerable.tally(), design.fixed.tally());
  result.references_separate = result.rows[runnable[0]].decision.references_separate;
  result.timeout_s = design.timeout_s;
  result.teardown_timeout_s = design.teardown_timeout_s;
  result.workload_command = design.workload_command;
  result.run_id = design.run_id;
  result.run_dir = design.run_dir;
  result.provenance = design.provenance;
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](const Row& a, const Row& b) { return release_less(a.facts.release, b.facts.release); });
  result.trials = request.design.trials;
  result.reference_trials = request.design.trials_per_reference();
  result.alpha = request.design.alpha;
  result.teardown_phase = request.design.teardown_phase;
  result.hang = request.hang;
  result.argv = request.argv;
  result.sentence =
      socket_check ? summary_sentence(result.rows) : summary_sentence(result.rows, "(known hang " + request.hang + ")");
  if (!request.history.empty()) result.changes = record_in_history(request.history, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

HangColumn column_of(const Result& run, const std::vector<Row>& rows) {
  HangColumn c;
  c.id = run.hang;
  c.references_separate = run.references_separate;
  if (!c.references_separate) {
    c.not_judged_why =
        validate::references_not_run(run.vulnerable, run.fixed, validate::phase_words(run.teardown_phase));
    c.references_reached_phase = c.not_judged_why.empty();
    if (c.references_reached_phase)
      c.not_judged_why = "the references did not separate: this machine did not reproduce " + c.id;
  }
  const catalog::Entry* entry = catalog::find(run.hang);
  for (const Row& row : rows) {
    HangCell cell;
    cell.verdict = "not run: not in this entry's sweep";
    for (const Row& r : run.rows) {
      if (r.facts.path != row.facts.path) continue;
      cell.verdict = verdict_text(r);
      cell.hangs = r.arm.teardown_hangs;
      cell.counted = r.arm.counted();
      cell.source = r.arm.source;
      if (r.judged()) {
        cell.p_vs_fixed = stats::format_p(r.decision.vs_fixed);
        cell.p_vs_vulnerable = stats::format_p(r.decision.vs_vulnerable);
      }
      // A reference's own row: its trials are the reference's, and a library judged against
      // itself says nothing. The row names its role and its count, and reads as the column's
      // verdict for that role only where the references separate.
      for (const validate::ArmTally* ref : {&run.vulnerable, &run.fixed}) {
        if (ref->sha256.empty() || ref->sha256 != r.arm.sha256) continue;
        const bool fixed = ref == &run.fixed;
        cell.verdict = c.references_separate
                           ? fmt::format("{} reference ({}/{} hung)", fixed ? "fixed" : "vulnerable",
                                         ref->teardown_hangs, ref->counted())
                           : fmt::format("inconclusive: the {} reference, {}/{} hung", fixed ? "fixed" : "vulnerable",
                                         ref->teardown_hangs, ref->counted());
        cell.p_vs_fixed.clear();
        cell.p_vs_vulnerable.clear();
      }
    }
    // The entry's own static check, beside its verdict: the column the check belongs to.
    if (entry && row.judged()) {
      const auto check = validate::check_entry(*entry, row.facts.path, row.inspected);
      if (check.verdict != validate::StaticVerdict::NoCheck) cell.bytes = validate::to_string(check.verdict);
    }
    c.cells.push_back(cell);
  }
  return c;
}

}  // namespace

Result run(const Request& request, TrialExecutor* executor, std::ostream* log) {
  if (request.hangs.empty()) return run_one(request, read_libraries(request.libraries, log), executor, log);
  // Each entry in turn: its own references and deadlines, the same libraries.
  const std::vector<std::string> ids = expand_hang_ids(request.hangs);
  // Every entry's references are found before any trial runs: a reference wheel missing
  // for the fourth entry must not cost the first three entries' trials.
  std::vector<Request> plan;
  std::vector<std::exception_ptr> problems;
  std::string missing;
  for (size_t k = 0; k < ids.size(); ++k) {
    Request one = request;
    try {
      apply_hang(one, ids[k]);
    } catch (const ConfigError& e) {
      problems.push_back(std::current_exception());
      missing += fmt::format("\n  {}", e.what());
      continue;
    }
    if (k > 0) one.history.clear();  // the history follows the first entry's verdicts
    plan.push_back(std::move(one));
  }
  if (problems.size() == 1) std::rethrow_exception(problems.front());  // its file and line, as it was
  if (!problems.empty()) throw UsageError("nothing was run; what the entries need first:" + missing);
  Result result;
  std::vector<Result> runs;
  const std::vector<Row> read = read_libraries(request.libraries, log);  // once for every entry
  for (const Request& one : plan) {
    if (log) *log << "sweep: hang " << one.hang << "\n";
    runs.push_back(run_one(one, read, executor, log));
  }
  result = runs.front();
  for (const Result& r : runs) {
    result.hangs.push_back(column_of(r, result.rows));
    result.references_separate = result.references_separate && r.references_separate;
    if (&r != &runs.front()) result.seconds += r.seconds;
  }
  return result;
}

int exit_code_of(const Result& result) {
  const bool any_judged = std::any_of(result.rows.begin(), result.rows.end(), [](const Row& r) { return r.judged(); });
  if (any_judged && !result.references_separate) return exit_code::kInfra;
  return result.changes.empty() ? exit_code::kOk : exit_code::kContradicted;
}

}  // namespace hangbench::sweep
