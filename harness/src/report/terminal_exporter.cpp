// The summary table printed at the end of a run: plain aligned text, no colour,
// so that it reads the same in a terminal, a CI log and a golden file.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "hangbench/stats.hpp"
#include "report/exporters.hpp"
#include "report/text.hpp"

namespace hangbench::report {
namespace {

// Columns are aligned by characters, not bytes ("–" is three bytes of UTF-8).
size_t display_width(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], display_width(row[i]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - display_width(row[i]) + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

class TerminalExporter : public Exporter {
 public:
  std::string format() const override { return "terminal"; }
  std::string extension() const override { return ".txt"; }

  std::string render(const RunSummary& run) const override {
    std::string out =
        fmt::format("hangbench: {} ({}){}\n", run.matrix.name, run.matrix.path, run.complete ? "" : " [incomplete]");
    std::vector<std::vector<std::string>> rows{{"cell", "n", "hangs", "crashed", "failed", "95% CI", "wall p50/p90 s",
                                                "teardown p50/p90 s", "expect", "verdict"}};
    for (const CellSummary& c : run.cells)
      rows.push_back({c.cell->id, std::to_string(c.n), format_rate(c.hangs, c.n), std::to_string(c.crashed),
                      std::to_string(c.failed), format_ci_percent(c.hang_ci95, c.n), format_p50_p90(c.wall_s),
                      format_p50_p90(c.teardown_s), expectation_label(c.cell->expect), cell_verdict_label(c)});
    out += run_summary_line(run) + "\n" + render_table(rows);
    if (!run.comparisons.empty()) {
      out += "\n";
      std::vector<std::vector<std::string>> comparisons{
          {"comparison", "a", "b", "p two-sided", "p a>b", "p a<b", "odds ratio", "Holm p"}};
      for (const ComparisonResult& r : run.comparisons) {
        if (!r.tested()) {
          comparisons.push_back({comparison_label(r), format_rate(r.a_hangs, r.a_n), format_rate(r.b_hangs, r.b_n),
                                 "not run", "", "", "", ""});
          continue;
        }
        comparisons.push_back({comparison_label(r), format_rate(r.a_hangs, r.a_n), format_rate(r.b_hangs, r.b_n),
                               stats::format_p(r.p_two_sided, r.log10_p_two_sided),
                               stats::format_p(r.p_a_greater, r.log10_p_a_greater),
                               stats::format_p(r.p_a_less, r.log10_p_a_less), stats::format_odds_ratio(r.odds_ratio),
                               stats::format_p(r.p_holm, r.log10_p_holm)});
      }
      out += render_table(comparisons);
      out += counting_note() + "\n";
    }
    for (const CellSummary& c : run.cells)
      if (c.verdict == Verdict::Contradicted)
        out += fmt::format("\nCONTRADICTED {}: {}\n", c.cell->id, c.verdict_reason);
    for (const CellSummary& c : run.cells)
      if (c.infra > 0)
        out += fmt::format("\nINFRA {}: {} trial(s) could not run: {}\n", c.cell->id, c.infra, c.infra_reason);
    return out;
  }
};

}  // namespace

std::unique_ptr<Exporter> make_terminal_exporter() { return std::make_unique<TerminalExporter>(); }

}  // namespace hangbench::report
