// From a run's trials to what every report shows: per-cell counts, intervals,
// quantiles and verdicts; per-comparison Fisher tests with Holm's correction.
#include <algorithm>
#include <cmath>
#include <map>

#include "hangbench/stats.hpp"
#include "hangbench/summary.hpp"
#include "report/trial_metrics.hpp"

namespace hangbench {
namespace {

CellSummary summarize_cell(const Cell& cell, const std::vector<const TrialResult*>& trials, double alpha) {
  CellSummary s;
  s.cell = &cell;
  std::vector<double> walls, teardowns;
  const TrialResult* example = nullptr;
  for (const TrialResult* t : trials) {
    switch (t->outcome) {
      case Outcome::Passed:
        ++s.passed;
        break;
      case Outcome::Hang:
        ++s.hangs;
        break;
      case Outcome::Crashed:
        ++s.crashed;
        break;
      case Outcome::Failed:
        ++s.failed;
        break;
      case Outcome::Infra:
        ++s.infra;
        break;
    }
    if (t->outcome == Outcome::Infra && s.infra_reason.empty()) s.infra_reason = t->infra_error;
    if (!report::counted(*t)) continue;
    walls.push_back(t->wall_s);
    if (auto td = report::teardown_seconds(*t)) teardowns.push_back(*td);
    // The first hung trial that has an evidence summary, else the first hung one.
    if (t->outcome == Outcome::Hang &&
        (example == nullptr || (example->evidence_summary.empty() && !t->evidence_summary.empty())))
      example = t;
  }
  s.n = s.passed + s.hangs + s.crashed + s.failed;
  s.hang_ci95 = stats::clopper_pearson(s.hangs, s.n, 0.95);
  s.wall_s = stats::summarize_quantiles(walls);
  s.teardown_s = stats::summarize_quantiles(teardowns);
  stats::VerdictResult v = stats::verdict_for(cell.expect, s.hangs, s.n, alpha);
  s.verdict = v.verdict;
  s.verdict_reason = v.reason;
  if (example) {
    s.evidence_example = example->evidence_summary;
    s.evidence_dir = example->evidence_dir;
  }
  return s;
}

ComparisonResult compare(const Comparison& comparison, const std::vector<CellSummary>& cells) {
  ComparisonResult r;
  r.comparison = &comparison;
  for (const CellSummary& c : cells) {
    // A cell matching both filters would be counted twice; it goes to side a only.
    if (report::cell_matches(*c.cell, comparison.a)) {
      r.a_hangs += c.hangs;
      r.a_n += c.n;
      r.a_crashed += c.crashed;
      r.a_failed += c.failed;
    } else if (report::cell_matches(*c.cell, comparison.b)) {
      r.b_hangs += c.hangs;
      r.b_n += c.n;
      r.b_crashed += c.crashed;
      r.b_failed += c.failed;
    }
  }
  stats::FisherResult f = stats::fisher_exact({r.a_hangs, r.a_n}, {r.b_hangs, r.b_n});
  r.p_two_sided = f.p_two_sided;
  r.p_a_greater = f.p_a_greater;
  r.p_a_less = f.p_a_less;
  r.log10_p_two_sided = f.log10_p_two_sided;
  r.log10_p_a_greater = f.log10_p_a_greater;
  r.log10_p_a_less = f.log10_p_a_less;
  r.odds_ratio = f.odds_ratio;
  r.conditional_mle_odds_ratio = f.conditional_mle_odds_ratio;
  return r;
}

}  // namespace

RunSummary summarize(Matrix matrix, Provenance provenance, std::vector<TrialResult> trials, bool complete) {
  RunSummary run;
  run.matrix = std::move(matrix);
  run.provenance = std::move(provenance);
  run.trials = std::move(trials);
  run.complete = complete;
  // Trials in matrix cell order, then by index, so "the first hung trial" and
  // every per-trial export are stable whatever order the trials finished in.
  std::map<std::string, size_t> cell_position;
  for (size_t i = 0; i < run.matrix.cells.size(); ++i) cell_position[run.matrix.cells[i].id] = i;
  auto position = [&](const TrialResult& t) {
    auto found = cell_position.find(t.cell_id);
    return found == cell_position.end() ? cell_position.size() : found->second;
  };
  std::stable_sort(run.trials.begin(), run.trials.end(), [&](const TrialResult& x, const TrialResult& y) {
    size_t px = position(x), py = position(y);
    return px != py ? px < py : x.index < y.index;
  });
  for (const Cell& cell : run.matrix.cells) {
    std::vector<const TrialResult*> mine;
    for (const TrialResult& t : run.trials)
      if (t.cell_id == cell.id) mine.push_back(&t);
    run.cells.push_back(summarize_cell(cell, mine, run.matrix.alpha));
  }
  std::vector<double> log10_ps;
  std::vector<size_t> tested;  // Holm's family: the comparisons with trials on both sides
  for (const Comparison& c : run.matrix.comparisons) {
    run.comparisons.push_back(compare(c, run.cells));
    if (!run.comparisons.back().tested()) continue;
    tested.push_back(run.comparisons.size() - 1);
    log10_ps.push_back(run.comparisons.back().log10_p_two_sided);
  }
  std::vector<double> holm = stats::holm_adjust_log10(log10_ps);
  for (size_t i = 0; i < holm.size(); ++i) {
    run.comparisons[tested[i]].log10_p_holm = holm[i];
    run.comparisons[tested[i]].p_holm = std::pow(10.0, holm[i]);
  }
  return run;
}

int tested_comparisons(const RunSummary& run) {
  return static_cast<int>(std::count_if(run.comparisons.begin(), run.comparisons.end(),
                                        [](const ComparisonResult& r) { return r.tested(); }));
}

int exit_code_for(const RunSummary& run, bool strict) {
  bool contradicted = false, infra_only = false, inconclusive = false;
  for (const CellSummary& c : run.cells) {
    contradicted |= c.verdict == Verdict::Contradicted;
    inconclusive |= c.verdict == Verdict::Inconclusive;
    infra_only |= c.n == 0 && c.infra > 0;
  }
  // A contradiction is a finding about the workload and wins over a broken machine.
  if (contradicted) return exit_code::kContradicted;
  if (infra_only) return exit_code::kInfra;
  if (strict && inconclusive) return exit_code::kContradicted;
  return exit_code::kOk;
}

}  // namespace hangbench
