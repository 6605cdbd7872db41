// What the statistics make of a run's trials, and what every exporter reads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hangbench/model.hpp"
#include "hangbench/stats.hpp"

namespace hangbench {

struct CellSummary {
  const Cell* cell = nullptr;  // points into RunSummary::matrix.cells
  int n = 0;                   // trials counted (INFRA excluded)
  int hangs = 0;
  int passed = 0, crashed = 0, failed = 0, infra = 0;
  Interval hang_ci95;    // Clopper-Pearson, exact
  Quantiles wall_s;      // all counted trials
  Quantiles teardown_s;  // teardown_begin -> teardown_end, when reported
  Verdict verdict = Verdict::None;
  std::string verdict_reason;
  std::string evidence_example;  // evidence summary of one hung trial, if any
  std::string evidence_dir;      // and its folder
  std::string infra_reason;      // why the first INFRA trial could not run, if any did not
};

struct ComparisonResult {
  const Comparison* comparison = nullptr;
  int a_hangs = 0, a_n = 0, b_hangs = 0, b_n = 0;
  // Crashed and failed trials pooled per side: they are in a_n/b_n as trials without a hang.
  int a_crashed = 0, a_failed = 0, b_crashed = 0, b_failed = 0;
  double p_two_sided = 1, p_a_greater = 1, p_a_less = 1;  // Fisher exact
  double log10_p_two_sided = 0;                           // exact even when p underflows
  double odds_ratio = 0;                                  // may be +inf; conditional MLE not required
  double p_holm = 1;                                      // Holm-adjusted two-sided p within the run
  double log10_p_a_greater = 0, log10_p_a_less = 0;       // exact even when p underflows
  double log10_p_holm = 0;                                // Holm on log10 p: exact even when p underflows
  double conditional_mle_odds_ratio = 0;                  // as R's fisher.test prints it
  // Both sides have trials. A comparison with an empty side (its cells filtered out
  // or not run yet) tests nothing: it is left out of Holm's family and reported as not run.
  bool tested() const { return a_n > 0 && b_n > 0; }
};

struct RunSummary {
  Matrix matrix;
  Provenance provenance;
  std::vector<TrialResult> trials;
  std::vector<CellSummary> cells;
  std::vector<ComparisonResult> comparisons;
  bool complete = true;  // false while the run is in progress, or when it was stopped
};

// How many of the run's comparisons were tested (both sides have trials).
int tested_comparisons(const RunSummary& run);

// Computes cells and comparisons from matrix + trials.
RunSummary summarize(Matrix matrix, Provenance provenance, std::vector<TrialResult> trials, bool complete = true);

// Each trial's evidence folder (relative to `run_dir`) made relative to
// `dest_dir`, where reports of the run are written instead (`report --dest`).
void rebase_evidence_dirs(std::vector<TrialResult>& trials, const std::string& run_dir, const std::string& dest_dir);

// 0, 1 (contradicted) per the README's exit codes; INFRA-only cells give 3.
int exit_code_for(const RunSummary& run, bool strict);

// One interface for every output format.
class Exporter {
 public:
  virtual ~Exporter() = default;
  virtual std::string format() const = 0;     // "markdown", "json", "csv", "junit", "html", "terminal"
  virtual std::string extension() const = 0;  // ".md", ...
  virtual std::string render(const RunSummary& run) const = 0;
};

// nullptr for an unknown format.
std::unique_ptr<Exporter> make_exporter(const std::string& format);
std::vector<std::string> exporter_formats();

}  // namespace hangbench
