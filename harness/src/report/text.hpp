// Formatting shared by the exporters: the same numbers read the same everywhere.
#pragma once

#include <string>

#include "hangbench/summary.hpp"

namespace hangbench::report {

std::string format_rate(int hangs, int n);                 // "8/98"
std::string format_ci_percent(const Interval& ci, int n);  // "3.6–15.5 %", "n/a" when n = 0
std::string format_seconds(double seconds);                // "2.81", "0.004"
// "p50 / p90" of a quantile summary, "–" when it has no values.
std::string format_p50_p90(const Quantiles& q);
std::string expectation_label(Expectation e);  // "hang", "no-hang", "–"
std::string verdict_label(Verdict v);          // "CONFIRMED", ..., "–"
// The verdict as every table shows it: a cell with crashed or failed trials never
// reads plain CONFIRMED ("CONFIRMED, 2 crashed"; "2 crashed" without an expectation).
std::string cell_verdict_label(const CellSummary& c);
std::string verdict_with_crashes(Verdict v, int crashed, int failed);
// "2 crashed, 1 failed" of a cell, "" when none.
std::string crash_note(int crashed, int failed);
// How comparisons and intervals count such trials, in one sentence for every report.
std::string counting_note();
// The run in one line: "4 cells: 1 confirmed, 1 contradicted, 1 inconclusive, 1 without
// expectation; 1 crashed and 1 failed trial in 1 cell; 1 INFRA".
std::string run_summary_line(const RunSummary& run);
// Mixed outcomes of a cell in words: "3 HANG, 17 PASSED" (counts > 0 only).
std::string outcome_mix(const CellSummary& c);
// One line for the provenance: "host (kernel), GPU driver, started ..., hangbench v (commit)".
std::string provenance_line(const Provenance& p);
// The comparison's label: its name, else "a-filter vs b-filter".
std::string comparison_label(const ComparisonResult& r);
std::string filter_label(const std::map<std::string, std::string>& filter);  // "build=2.17.1,fork=after"

std::string escape_xml(const std::string& text);            // & < > " ' and no control bytes
std::string escape_markdown_cell(const std::string& text);  // | and newlines
std::string one_line(const std::string& text);              // newlines and tabs become spaces

}  // namespace hangbench::report
