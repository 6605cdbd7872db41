// The history as one self-contained HTML page: per cell an inline SVG plot of
// the hang rate and the teardown p50 over the nights, with a dashed line where
// the NCCL library, the driver or libtorch changed, and the table under it.
#include <fmt/format.h>

#include <algorithm>

#include "history/render.hpp"
#include "report/text.hpp"

namespace hangbench::history {
namespace {

using report::escape_xml;

constexpr double kWidth = 640, kHeight = 220;
constexpr double kLeft = 50, kRight = 60, kTop = 20, kBottom = 40;

// x of night i of `count`, centred when there is only one.
double x_of(size_t i, size_t count) {
  double span = kWidth - kLeft - kRight;
  return count <= 1 ? kLeft + span / 2 : kLeft + span * static_cast<double>(i) / static_cast<double>(count - 1);
}

// y of `value` on an axis from 0 to `top`.
double y_of(double value, double top) {
  double span = kHeight - kTop - kBottom;
  return kTop + span * (1 - (top > 0 ? value / top : 0));
}

std::string points_line(const std::vector<std::pair<double, double>>& points, const std::string& colour,
                        const std::string& css_class) {
  if (points.empty()) return "";
  std::string coords, dots;
  for (const auto& [x, y] : points) {
    coords += fmt::format("{:.1f},{:.1f} ", x, y);
    dots +=
        fmt::format("<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>", css_class, x, y, colour);
  }
  return fmt::format("<polyline class=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>{}",
                     css_class, colour, coords, dots);
}

std::string plot(const CellHistory& cell) {
  const size_t count = cell.nights.size();
  double teardown_top = 0;
  for (const CellNight& n : cell.nights) teardown_top = std::max(teardown_top, n.teardown_s.p50);
  if (teardown_top > 0) teardown_top *= 1.1;
  std::vector<std::pair<double, double>> rate, teardown;
  std::string markers, labels;
  for (size_t i = 0; i < count; ++i) {
    const CellNight& n = cell.nights[i];
    double x = x_of(i, count);
    if (n.n > 0) rate.emplace_back(x, y_of(static_cast<double>(n.hangs) / n.n, 1.0));
    if (n.teardown_s.n > 0) teardown.emplace_back(x, y_of(n.teardown_s.p50, teardown_top));
    labels += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{}</text>", x,
                          kHeight - kBottom + 14, escape_xml(night_date(n.started_at).substr(5)));
    if (!n.changes.empty()) {
      markers += fmt::format(
          "<line class=\"change\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#888\" "
          "stroke-dasharray=\"4 3\"><title>{3} changed</title></line>"
          "<text x=\"{0:.1f}\" y=\"{4:.1f}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">{3}</text>",
          x, kTop, kHeight - kBottom, escape_xml(changes_label(n.changes)), kHeight - kBottom + 28);
    }
  }
  std::string axes = fmt::format(
      "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#000\"/>"
      "<line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#000\"/>"
      "<text x=\"{4}\" y=\"{1}\" font-size=\"10\" text-anchor=\"end\">100 %</text>"
      "<text x=\"{4}\" y=\"{2}\" font-size=\"10\" text-anchor=\"end\">0 %</text>"
      "<text x=\"{5}\" y=\"{1}\" font-size=\"10\" fill=\"#1f5fbf\">{6}</text>",
      kLeft, kTop, kHeight - kBottom, kWidth - kRight, kLeft - 4, kWidth - kRight + 4,
      teardown_top > 0 ? report::format_seconds(teardown_top) + " s" : "");
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"hang rate and teardown p50 of {2}\">{3}{4}{5}{6}{7}</svg>",
      kWidth, kHeight, escape_xml(cell.cell_id), axes, markers, points_line(rate, "#c0392b", "hang-rate"),
      points_line(teardown, "#1f5fbf", "teardown-p50"), labels);
}

std::string table(const CellHistory& cell) {
  std::string rows;
  for (const CellNight& n : cell.nights) {
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></"
        "tr>\n",
        escape_xml(night_date(n.started_at)), escape_xml(n.run_id), report::format_rate(n.hangs, n.n), n.crashed,
        n.failed, escape_xml(report::format_p50_p90(n.wall_s)), escape_xml(report::format_p50_p90(n.teardown_s)),
        escape_xml(report::verdict_with_crashes(n.verdict, n.crashed, n.failed)), escape_xml(changes_label(n.changes)));
  }
  return "<table><tr><th>night</th><th>run</th><th>hangs</th><th>crashed</th><th>failed</th><th>wall p50 / p90 (s)</th>"
         "<th>teardown p50 / p90 (s)</th><th>verdict</th><th>changed</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace

std::string render_history_html(const HistoryTable& table_data) {
  std::string body;
  for (const CellHistory& cell : table_data.cells) {
    body += fmt::format("<section><h2>{}: {}</h2>\n{}\n{}</section>\n", escape_xml(cell.matrix),
                        escape_xml(cell.cell_id), plot(cell), table(cell));
  }
  if (table_data.cells.empty()) body = "<p>No nights in the history yet.</p>\n";
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hangbench history</title>\n"
         "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 8px}</style></head><body>\n"
         "<h1>hangbench history</h1>\n<p><span style=\"color:#c0392b\">&#9632; hang rate</span> "
         "<span style=\"color:#1f5fbf\">&#9632; teardown p50</span> "
         "<span style=\"color:#888\">- - NCCL / driver / libtorch changed</span></p>\n" +
         body + "</body></html>\n";
}

}  // namespace hangbench::history
