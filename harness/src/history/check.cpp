// The nightly regression check: per cell, tonight's hang rate against the pooled
// previous nights of the same cell (one-sided Fisher), plus tonight's verdicts.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "hangbench/history.hpp"
#include "hangbench/stats.hpp"
#include "report/text.hpp"

namespace hangbench::history {
namespace {

struct Pool {
  int hangs = 0, n = 0, nights = 0;
  std::set<std::string> dates;  // several runs on one date are one night
};

// Pooled tallies of each cell over the `nights` runs of the same matrix before
// `run_id` (0 = all).
std::map<std::string, Pool> pool_previous_nights(const Store& history, const std::string& run_id,
                                                 const std::string& matrix_name, int nights) {
  std::vector<RunInfo> runs = history.list_runs();
  auto tonight = std::find_if(runs.begin(), runs.end(), [&](const RunInfo& r) { return r.id == run_id; });
  std::map<std::string, Pool> pools;
  int nights_used = 0;
  for (auto it = std::make_reverse_iterator(tonight); it != runs.rend(); ++it) {  // newest first
    if (nights > 0 && nights_used == nights) break;
    StoredRun run = history.load_run(it->id);
    if (run.matrix.name != matrix_name) continue;
    ++nights_used;
    RunSummary summary = summarize(run.matrix, run.provenance, run.trials);
    for (const CellSummary& c : summary.cells) {
      if (c.n == 0) continue;  // an all-INFRA night says nothing about the rate
      Pool& pool = pools[c.cell->id];
      pool.hangs += c.hangs;
      pool.n += c.n;
      pool.nights += 1;
      pool.dates.insert(it->started_at.substr(0, 10));
    }
  }
  return pools;
}

}  // namespace

CheckResult check_run(const Store& history, const std::string& run_id, int nights, double alpha) {
  StoredRun run = history.load_run(run_id);
  RunSummary summary = summarize(run.matrix, run.provenance, run.trials, run.info.status == "complete");
  std::map<std::string, Pool> pools = pool_previous_nights(history, run_id, run.matrix.name, nights);
  CheckResult result;
  result.run_id = run_id;
  result.suite = run.matrix.name;
  result.alpha = alpha;
  bool regression = false;
  for (const CellSummary& c : summary.cells) {
    CellCheck check;
    check.cell_id = c.cell->id;
    check.hangs = c.hangs;
    check.n = c.n;
    check.verdict = c.verdict;
    check.verdict_reason = c.verdict_reason;
    if (auto pool = pools.find(c.cell->id); pool != pools.end() && c.n > 0) {
      check.baseline_hangs = pool->second.hangs;
      check.baseline_n = pool->second.n;
      check.baseline_nights = pool->second.nights;
      check.baseline_dates = static_cast<int>(pool->second.dates.size());
      auto fisher = stats::fisher_exact({c.hangs, c.n}, {check.baseline_hangs, check.baseline_n});
      check.p_worse = fisher.p_a_greater;
      check.log10_p_worse = fisher.log10_p_a_greater;
      check.regression = fisher.p_a_greater < alpha;
      regression = regression || check.regression;
    }
    result.cells.push_back(std::move(check));
  }
  int verdicts = exit_code_for(summary, false);
  result.exit_code = regression ? exit_code::kContradicted : verdicts;
  return result;
}

namespace {

// "3 night(s)", or "3 runs on 1 night(s)" when a date ran more than once.
std::string previous_runs(const CellCheck& c) {
  if (c.baseline_dates == c.baseline_nights) return fmt::format("{} night(s)", c.baseline_nights);
  return fmt::format("{} runs on {} night(s)", c.baseline_nights, c.baseline_dates);
}

std::string regression_message(const CellCheck& c, double alpha) {
  return fmt::format(
      "regression in {}: {} hung tonight against {} over the previous {}, "
      "one-sided Fisher p = {} < alpha {}",
      c.cell_id, report::format_rate(c.hangs, c.n), report::format_rate(c.baseline_hangs, c.baseline_n),
      previous_runs(c), stats::format_p(c.p_worse, c.log10_p_worse), alpha);
}

std::string baseline_words(const CellCheck& c) {
  if (c.baseline_nights == 0) return "no previous night";
  return fmt::format("{} over {} previous {}, p(worse) = {}", report::format_rate(c.baseline_hangs, c.baseline_n),
                     c.baseline_nights, previous_runs(c).substr(previous_runs(c).find(' ') + 1),
                     stats::format_p(c.p_worse, c.log10_p_worse));
}

}  // namespace

std::string render_check_junit(const CheckResult& result) {
  using report::escape_xml;
  const std::string suite = "hangbench.history." + result.suite;
  int failures = 0;
  std::string cases;
  for (const CellCheck& c : result.cells) {
    cases += fmt::format("    <testcase name=\"{}\" classname=\"{}\" status=\"run\">\n", escape_xml(c.cell_id),
                         escape_xml(suite));
    if (c.regression) {
      cases += fmt::format("      <failure message=\"{}\" type=\"REGRESSION\"/>\n",
                           escape_xml(regression_message(c, result.alpha)));
    } else if (c.verdict == Verdict::Contradicted) {
      cases += fmt::format("      <failure message=\"{}\" type=\"CONTRADICTED\"/>\n",
                           escape_xml("expectation contradicted in " + c.cell_id + ": " + c.verdict_reason));
    }
    failures += c.regression || c.verdict == Verdict::Contradicted;
    cases +=
        fmt::format("      <system-out>{}</system-out>\n    </testcase>\n",
                    escape_xml(fmt::format("tonight {}; {}", report::format_rate(c.hangs, c.n), baseline_words(c))));
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n{}  </testsuite>\n"
      "</testsuites>\n",
      escape_xml(suite), result.cells.size(), failures, cases);
}

std::string render_check_text(const CheckResult& result) {
  std::string out = fmt::format("history check of run {} ({}), alpha {}\n", result.run_id, result.suite, result.alpha);
  for (const CellCheck& c : result.cells) {
    std::string mark = c.regression ? "REGRESSION" : c.verdict == Verdict::Contradicted ? "CONTRADICTED" : "ok";
    out += fmt::format("  {:<12} {}  tonight {}; {}\n", mark, c.cell_id, report::format_rate(c.hangs, c.n),
                       baseline_words(c));
  }
  return out;
}

}  // namespace hangbench::history
