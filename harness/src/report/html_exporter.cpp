// A self-contained HTML report: inline CSS and inline SVG, no scripts, no
// external assets, so that it opens from a CI artifact store or an e-mail.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "hangbench/stats.hpp"
#include "report/exporters.hpp"
#include "report/text.hpp"
#include "report/trial_metrics.hpp"

namespace hangbench::report {
namespace {

constexpr double kPlotWidth = 420, kPlotHeight = 34, kMargin = 6;

const char* kStyle = R"(body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:middle}
th{background:#f3f3f3}td.num{text-align:right}.CONFIRMED{color:#176f2c;font-weight:bold}
.CONTRADICTED{color:#b00020;font-weight:bold}.INCONCLUSIVE{color:#8a6d00}
pre{background:#f7f7f7;padding:8px;white-space:pre-wrap}.legend span{margin-right:1em}
svg text{font-size:10px;fill:#555}
)";

const char* outcome_colour(Outcome o) {
  switch (o) {
    case Outcome::Passed: return "#2e7d32";
    case Outcome::Hang: return "#c62828";
    case Outcome::Crashed: return "#6a1b9a";
    case Outcome::Failed: return "#ef6c00";
    case Outcome::Infra: return "#757575";
  }
  return "#757575";
}

struct Point {
  double value;
  Outcome outcome;
  int index;
};

// Upper end of the shared time axis: the largest value, rounded up to a tidy step.
double axis_max(double largest) {
  if (largest <= 0) return 1;
  double step = std::pow(10.0, std::floor(std::log10(largest)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * step >= largest) return m * step;
  return 10 * step;
}

// Strip plot (one dot per trial, coloured by outcome, jittered by index) over a
// box from the 25th to the 75th percentile with whiskers to min and max.
std::string strip_plot(const std::vector<Point>& points, double max_value) {
  if (points.empty()) return "–";
  auto x = [&](double v) { return kMargin + (kPlotWidth - 2 * kMargin) * v / max_value; };
  std::vector<double> values;
  for (const Point& p : points) values.push_back(p.value);
  const double q1 = stats::quantile_type7(values, 0.25), median = stats::quantile_type7(values, 0.5),
               q3 = stats::quantile_type7(values, 0.75);
  const double lo = *std::min_element(values.begin(), values.end()),
               hi = *std::max_element(values.begin(), values.end());
  const double mid = kPlotHeight / 2;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\">",
      kPlotWidth, kPlotHeight);
  svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\"/>", x(lo), mid,
                     x(hi), mid);
  svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#e3ecf7\" stroke=\"#5b7fa6\"/>",
                     x(q1), mid - 9, std::max(1.0, x(q3) - x(q1)), 18.0);
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#1f3b5a\" stroke-width=\"2\"/>",
                     x(median), mid - 9, mid + 9);
  for (const Point& p : points) {
    double jitter = static_cast<double>((p.index * 7919) % 13) - 6;   // deterministic spread
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\" fill-opacity=\"0.8\"><title>#{} {} {:.3f} s</title></circle>",
                       x(p.value), mid + jitter, outcome_colour(p.outcome), p.index, to_string(p.outcome), p.value);
  }
  return svg + "</svg>";
}

std::string axis_note(double max_value) { return fmt::format("axis 0–{} s", format_seconds(max_value)); }

class HtmlExporter : public Exporter {
 public:
  std::string format() const override { return "html"; }
  std::string extension() const override { return ".html"; }

  std::string render(const RunSummary& run) const override {
    // Points per cell, and one shared axis per kind so cells compare by eye.
    std::vector<std::vector<Point>> walls(run.cells.size()), teardowns(run.cells.size());
    double wall_max = 0, teardown_max = 0;
    for (size_t i = 0; i < run.cells.size(); ++i)
      for (const TrialResult& t : run.trials) {
        if (t.cell_id != run.cells[i].cell->id || !counted(t)) continue;
        walls[i].push_back({t.wall_s, t.outcome, t.index});
        wall_max = std::max(wall_max, t.wall_s);
        if (auto td = teardown_seconds(t)) {
          teardowns[i].push_back({*td, t.outcome, t.index});
          teardown_max = std::max(teardown_max, *td);
        }
      }
    wall_max = axis_max(wall_max);
    teardown_max = axis_max(teardown_max);

    const Provenance& p = run.provenance;
    std::string out = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hangbench: {0}</title>\n"
        "<style>{1}</style></head>\n<body>\n<h1>hangbench: {0}</h1>\n",
        escape_xml(run.matrix.name), kStyle);
    out += "<table>\n";
    out += fmt::format("<tr><th>What ran</th><td>matrix <code>{}</code> (sha256 <code>{}</code>), {} cells, {} trials{}</td></tr>\n",
                       escape_xml(run.matrix.path), escape_xml(p.matrix_sha256.substr(0, 12)), run.cells.size(),
                       run.trials.size(), run.complete ? "" : " (incomplete)");
    out += fmt::format("<tr><th>On what</th><td>{}</td></tr>\n", escape_xml(provenance_line(p)));
    out += fmt::format("<tr><th>When</th><td>{}</td></tr>\n", escape_xml(p.started_at));
    out += "</table>\n<h2>Cells</h2>\n<p class=\"legend\">";
    for (Outcome o : {Outcome::Passed, Outcome::Hang, Outcome::Crashed, Outcome::Failed})
      out += fmt::format("<span style=\"color:{}\">&#9679; {}</span>", outcome_colour(o), to_string(o));
    out += fmt::format("box: 25th–75th percentile, bar: median, whiskers: min–max; wall {}, teardown {}</p>\n",
                       axis_note(wall_max), axis_note(teardown_max));
    out += "<table>\n<tr><th>cell</th><th>hangs</th><th>95% CI</th><th>outcomes</th><th>wall time</th>"
           "<th>teardown time</th><th>expect</th><th>verdict</th></tr>\n";
    for (size_t i = 0; i < run.cells.size(); ++i) {
      const CellSummary& c = run.cells[i];
      out += fmt::format(
          "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td><td class=\"{}\" title=\"{}\">{}</td></tr>\n",
          escape_xml(c.cell->id), format_rate(c.hangs, c.n), format_ci_percent(c.hang_ci95, c.n),
          escape_xml(outcome_mix(c)), strip_plot(walls[i], wall_max), strip_plot(teardowns[i], teardown_max),
          expectation_label(c.cell->expect), to_string(c.verdict), escape_xml(c.verdict_reason),
          verdict_label(c.verdict));
    }
    out += "</table>\n";
    for (const CellSummary& c : run.cells)
      if (c.infra > 0)
        out += fmt::format("<p><b>INFRA</b> <code>{}</code>: {} trial(s) could not run: {}</p>\n", escape_xml(c.cell->id),
                           c.infra, escape_xml(c.infra_reason));
    if (!run.comparisons.empty()) {
      out += "<h2>Comparisons</h2>\n<p>Fisher's exact test, cells pooled per side; Holm's correction across the run.</p>\n"
             "<table>\n<tr><th>comparison</th><th>a hangs</th><th>b hangs</th><th>p two-sided</th><th>p (a &gt; b)</th>"
             "<th>p (a &lt; b)</th><th>odds ratio</th><th>Holm p</th></tr>\n";
      for (const ComparisonResult& r : run.comparisons)
        out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                           "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
                           escape_xml(comparison_label(r)), format_rate(r.a_hangs, r.a_n), format_rate(r.b_hangs, r.b_n),
                           stats::format_p(r.p_two_sided, r.log10_p_two_sided),
                           stats::format_p(r.p_a_greater, r.log10_p_a_greater),
                           stats::format_p(r.p_a_less, r.log10_p_a_less), stats::format_odds_ratio(r.odds_ratio),
                           stats::format_p(r.p_holm, r.log10_p_holm));
      out += "</table>\n";
    }
    bool any_evidence = false;
    for (const CellSummary& c : run.cells) {
      if (c.hangs == 0) continue;
      if (!any_evidence) out += "<h2>Evidence of hangs</h2>\n";
      any_evidence = true;
      out += fmt::format("<h3><code>{}</code>: {} hung</h3>\n{}<pre>{}</pre>\n", escape_xml(c.cell->id),
                         format_rate(c.hangs, c.n),
                         c.evidence_dir.empty() ? "" : fmt::format("<p>evidence folder <code>{}</code></p>\n", escape_xml(c.evidence_dir)),
                         escape_xml(c.evidence_example.empty() ? "(no evidence summary recorded)" : c.evidence_example));
    }
    return out + "</body></html>\n";
  }
};

}  // namespace

std::unique_ptr<Exporter> make_html_exporter() { return std::make_unique<HtmlExporter>(); }

}  // namespace hangbench::report
