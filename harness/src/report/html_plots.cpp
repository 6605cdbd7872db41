#include "report/html_plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "hangbench/stats.hpp"
#include "report/text.hpp"

namespace hangbench::report {
namespace {

constexpr double kStripWidth = 200, kStripHeight = 30, kAxisHeight = 14, kStripMargin = 8;

// Forest plot geometry: labels right-aligned before the plot, numbers after it.
constexpr double kForestLabel = 480, kForestPlot = 440, kForestText = 230, kRow = 16, kForestTop = 22;
constexpr size_t kMaxLabelChars = 80;  // about kForestLabel at 10 px monospace-ish text

// A comparison's two sides: not the verdicts' red and green, which would read as bad and good.
constexpr const char* kSideA = "#6a3d9a";
constexpr const char* kSideB = "#e08214";

const char* verdict_colour(Verdict v) {
  switch (v) {
    case Verdict::Confirmed:
      return "#176f2c";
    case Verdict::Contradicted:
      return "#b00020";
    case Verdict::Inconclusive:
      return "#8a6d00";
    case Verdict::None:
      break;
  }
  return "#1f3b5a";
}

std::string shortened(const std::string& label) {
  if (label.size() <= kMaxLabelChars) return label;
  return "…" + label.substr(label.size() - (kMaxLabelChars - 1));
}

// One interval row of the forest plot; `title` is the hover text.
std::string forest_row(double y, const std::string& label, int k, int n, const char* colour,
                       const std::string& right_text) {
  auto x = [](double rate) { return kForestLabel + kForestPlot * rate; };
  std::string svg = fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kForestLabel - 8,
                                y + 4, escape_xml(shortened(label)));
  if (n > 0) {
    Interval ci = stats::clopper_pearson(k, n, 0.95);
    svg +=
        fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"/>",
                    x(ci.lo), y, x(ci.hi), y, colour);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: {} ({})</title></circle>",
                       x(static_cast<double>(k) / n), y, colour, escape_xml(label), format_rate(k, n),
                       format_ci_percent(ci, n));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", kForestLabel + kForestPlot + 10, y + 4,
                     escape_xml(right_text));
  return svg;
}

}  // namespace

const char* outcome_colour(Outcome o) {
  switch (o) {
    case Outcome::Passed:
      return "#2e7d32";
    case Outcome::Hang:
      return "#c62828";
    case Outcome::Crashed:
      return "#6a1b9a";
    case Outcome::Failed:
      return "#ef6c00";
    case Outcome::Infra:
      return "#757575";
  }
  return "#757575";
}

double tidy_axis_max(double largest) {
  if (largest <= 0) return 1;
  double step = std::pow(10.0, std::floor(std::log10(largest)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * step >= largest) return m * step;
  return 10 * step;
}

std::string strip_plot_svg(const std::vector<PlotPoint>& points, double axis_max) {
  if (points.empty()) return "–";
  auto x = [&](double v) { return kStripMargin + (kStripWidth - 2 * kStripMargin) * v / axis_max; };
  std::vector<double> values;
  for (const PlotPoint& p : points) values.push_back(p.value);
  const double q1 = stats::quantile_type7(values, 0.25), median = stats::quantile_type7(values, 0.5),
               q3 = stats::quantile_type7(values, 0.75);
  const double lo = *std::min_element(values.begin(), values.end()),
               hi = *std::max_element(values.begin(), values.end());
  const double mid = kStripHeight / 2, height = kStripHeight + kAxisHeight;
  std::string svg = fmt::format(
      "<svg class=\"strip\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\">",
      kStripWidth, height);
  svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\"/>", x(lo), mid,
                     x(hi), mid);
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#e3ecf7\" stroke=\"#5b7fa6\"/>", x(q1),
      mid - 8, std::max(1.0, x(q3) - x(q1)), 16.0);
  svg += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#1f3b5a\" stroke-width=\"2\"/>",
      x(median), mid - 8, mid + 8);
  for (const PlotPoint& p : points) {
    double jitter = static_cast<double>((p.index * 7919) % 11) - 5;  // deterministic spread
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\" fill-opacity=\"0.8\"><title>#{} {} {:.3f} "
        "s</title></circle>",
        x(p.value), mid + jitter, outcome_colour(p.outcome), p.index, to_string(p.outcome), p.value);
  }
  // The axis: 0, the middle and the end, in seconds.
  const double axis_y = kStripHeight + 1;
  svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#777\"/>", x(0), axis_y,
                     x(axis_max), axis_y);
  for (double tick : {0.0, axis_max / 2, axis_max}) {
    const char* anchor = tick == 0 ? "start" : (tick == axis_max ? "end" : "middle");
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#777\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"{4}\">{5}</text>",
        x(tick), axis_y, axis_y + 3, axis_y + 12, anchor, tick == 0 ? "0" : format_seconds(tick));
  }
  return svg + "</svg>";
}

std::string forest_legend() {
  std::string out = "<p class=\"legend\" id=\"forest-legend\">Cells, by verdict: ";
  for (Verdict v : {Verdict::Confirmed, Verdict::Contradicted, Verdict::Inconclusive, Verdict::None}) {
    const std::string word = to_string(v);
    out += fmt::format("<span style=\"color:{}\">&#9679;&#8212; {}</span>", verdict_colour(v),
                       word.empty() ? "no expectation" : word);
  }
  out += fmt::format(
      "comparisons: <span style=\"color:{}\">&#9679;&#8212; side a</span><span style=\"color:{}\">&#9679;&#8212; "
      "side b</span>(dot: the hang rate; line: its 95% interval)</p>\n",
      kSideA, kSideB);
  return out;
}

std::string forest_plot_svg(const RunSummary& run) {
  const size_t rows = run.cells.size() + (run.comparisons.empty() ? 0 : 1 + 2 * run.comparisons.size());
  const double width = kForestLabel + kForestPlot + kForestText;
  const double height = kForestTop + kRow * (rows + 0.5) + 16;
  std::string svg = fmt::format(
      "<svg id=\"forest\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\" aria-label=\"hang rate of each cell with its 95% interval\">",
      width, height);
  // Grid and axis labels at 0, 25, 50, 75 and 100 %, at the top and the bottom.
  const double bottom = height - 14;
  for (int percent = 0; percent <= 100; percent += 25) {
    double gx = kForestLabel + kForestPlot * percent / 100.0;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"12\" text-anchor=\"middle\">{3} %</text>"
        "<text x=\"{0:.1f}\" y=\"{4:.1f}\" text-anchor=\"middle\">{3} %</text>",
        gx, kForestTop - 6, bottom - 4, percent, bottom + 10);
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"12\">hangs k/n, 95% CI</text>", kForestLabel + kForestPlot + 36);
  double y = kForestTop + kRow / 2;
  for (const CellSummary& c : run.cells) {
    std::string right = format_rate(c.hangs, c.n) + "  " + format_ci_percent(c.hang_ci95, c.n);
    std::string note = crash_note(c.crashed, c.failed);
    if (!note.empty()) right += "  (" + note + ")";
    svg += forest_row(y, c.cell->id, c.hangs, c.n, verdict_colour(c.verdict), right);
    y += kRow;
  }
  if (!run.comparisons.empty()) {
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-weight=\"bold\">comparisons (pooled)</text>",
        kForestLabel - 8, y + 4);
    y += kRow;
    for (const ComparisonResult& r : run.comparisons) {
      // Each side says which cells it pools: "name: a = behaviour=hang", "b = behaviour=pass".
      const std::string label = comparison_label(r);
      const std::string a = r.comparison ? filter_label(r.comparison->a) : "",
                        b = r.comparison ? filter_label(r.comparison->b) : "";
      const bool named = r.comparison && !r.comparison->name.empty();
      svg += forest_row(y, named ? label + ": a = " + a : "a = " + a, r.a_hangs, r.a_n, kSideA,
                        format_rate(r.a_hangs, r.a_n) + "  p = " + stats::format_p(r.p_two_sided, r.log10_p_two_sided));
      y += kRow;
      svg += forest_row(y, "b = " + b, r.b_hangs, r.b_n, kSideB, format_rate(r.b_hangs, r.b_n));
      y += kRow;
    }
  }
  return svg + "</svg>\n";
}

}  // namespace hangbench::report
