// The release table as one self-contained HTML page: the computed sentence, then
// one row per release with a forest plot of its teardown hang rate and 95 %
// interval (the references' rates drawn across every row), its SHA-256 as
// shipped, and a link to the run that holds its trials.
#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "hangbench/sweep.hpp"
#include "report/text.hpp"
#include "sweep/row_text.hpp"

namespace hangbench::sweep {
namespace {

using report::escape_xml;

constexpr double kPlotWidth = 180, kPlotHeight = 18, kPad = 6;

double x_of(double rate) { return kPad + (kPlotWidth - 2 * kPad) * rate; }

std::string verdict_colour(const Row& row) {
  if (!row.judged()) return "#999";
  switch (row.decision.verdict) {
    case validate::Verdict::Vulnerable:
      return "#c0392b";
    case validate::Verdict::Inconclusive:
      return "#b7950b";
    default:
      return "#1e8449";
  }
}

// One row of the forest plot: the interval as a bar, the rate as a dot, on 0–100 %,
// with the vulnerable (red) and fixed (green) references' rates as dashed lines.
std::string forest_row(const Row& row, const Result& r) {
  const int n = row.arm.counted();
  std::string refs;
  for (const auto& [arm, colour] : {std::pair{&r.vulnerable, "#c0392b"}, {&r.fixed, "#1e8449"}}) {
    if (arm->counted() == 0) continue;
    const double x = x_of(static_cast<double>(arm->teardown_hangs) / arm->counted());
    refs += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"1\" y2=\"{1}\" stroke=\"{2}\" stroke-dasharray=\"2 2\" "
        "opacity=\"0.6\"/>",
        x, kPlotHeight - 1, colour);
  }
  std::string mark;
  if (n > 0) {
    const Interval ci = stats::clopper_pearson(row.arm.teardown_hangs, n);
    const double rate = static_cast<double>(row.arm.teardown_hangs) / n;
    mark = fmt::format(
        "<line class=\"interval\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" "
        "stroke-width=\"3\"/><circle cx=\"{4:.1f}\" cy=\"{2}\" r=\"4\" fill=\"{3}\"/>",
        x_of(ci.lo), x_of(ci.hi), kPlotHeight / 2, verdict_colour(row), x_of(rate));
  }
  return fmt::format(
      "<svg class=\"forest\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"hang rate {2} of {3}, 95 % interval {4}\">"
      "<line x1=\"{5}\" x2=\"{6}\" y1=\"{7}\" y2=\"{7}\" stroke=\"#ccc\"/>{8}{9}</svg>",
      kPlotWidth, kPlotHeight, row.arm.teardown_hangs, n, interval_text(row.arm), kPad, kPlotWidth - kPad,
      kPlotHeight / 2, refs, mark);
}

// The axis under the forest column: 0, 50 and 100 %.
std::string forest_axis() {
  std::string ticks;
  for (int pct : {0, 50, 100}) {
    ticks +=
        fmt::format("<text x=\"{:.1f}\" y=\"11\" font-size=\"10\" text-anchor=\"{}\">{} %</text>", x_of(pct / 100.0),
                    pct == 0     ? "start"
                    : pct == 100 ? "end"
                                 : "middle",
                    pct);
  }
  return fmt::format(
      "<svg class=\"forest-axis\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"14\" "
      "viewBox=\"0 0 {0} 14\" aria-hidden=\"true\">{1}</svg>",
      kPlotWidth, ticks);
}

// The report of the run that holds a row's trials: the sweep's own run, or the earlier
// run a resumed sweep reused the row from.
std::string run_link(const std::string& run_dir, const std::string& html_dir) {
  if (run_dir.empty()) return "";
  std::filesystem::path dir(run_dir);
  if (!html_dir.empty() && dir.is_absolute()) {
    auto relative = dir.lexically_relative(std::filesystem::absolute(html_dir).lexically_normal());
    if (!relative.empty()) dir = relative;
  }
  return (dir / "report.md").string();  // the design runs write Markdown and JSON, no HTML
}

// The release x known-hang table first, with its computed lines, footnotes and legend.
void hang_table_html(std::ostream& h, const Result& r) {
  h << "<h1>Release &#215; known hang: " << escape_xml(hang_ids(r)) << "</h1>\n<ul class=\"summary\">";
  for (const auto& line : hang_summary(r)) h << "<li>" << escape_xml(line) << "</li>";
  h << "</ul>\n<table id=\"hangs\"><thead><tr><th>release</th><th>build</th>";
  for (const auto& c : r.hangs) h << "<th>" << escape_xml(c.id) << "</th>";
  h << "</tr></thead><tbody>\n";
  const FoldedTable t = fold_hang_table(r);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    h << "<tr><td>" << escape_xml(r.rows[i].facts.release.empty() ? r.rows[i].facts.path : r.rows[i].facts.release)
      << "</td><td>" << escape_xml(build_of(r.rows[i])) << "</td>";
    for (const auto& cell : t.cells[i]) {
      std::string css = verdict_word(cell.substr(0, cell.find_first_of("[(")));
      while (!css.empty() && css.back() == ' ') css.pop_back();
      for (char& ch : css) ch = ch == ' ' ? '-' : ch;
      h << "<td class=\"" << css << "\">" << escape_xml(cell) << "</td>";
    }
    h << "</tr>\n";
  }
  h << "</tbody></table>\n";
  for (const auto& f : t.footnotes) h << "<p class=\"footnote\"><small>" << escape_xml(f) << "</small></p>\n";
  h << "<p>Legend:</p><ul class=\"legend\">";
  for (const auto& line : hang_legend()) h << "<li>" << escape_xml(line) << "</li>";
  h << "</ul>\n";
}

}  // namespace

std::string to_html(const Result& r, const std::string& html_dir) {
  std::ostringstream h;
  h << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hangbench sweep</title>\n"
       "<style>body{font-family:sans-serif;margin:1.5em;max-width:1360px}table{border-collapse:collapse;"
       "font-size:13px;width:100%}th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}"
       "th{background:#f3f3f3}.vulnerable{background:#fbe0e0}.fixed,.not-affected,.not-vulnerable{background:#e3f4e3}"
       ".inconclusive,.not-run{background:#fff4d6}p.sentence{font-size:16px;font-weight:bold}"
       "td.forest{white-space:nowrap;padding:1px 4px}td.forest svg{vertical-align:middle}"
       "td.sha code{font-size:12px}</style></head><body>\n";
  if (r.hangs.empty()) {
    h << "<h1>NCCL teardown hang: release sweep</h1>\n";
  } else {
    hang_table_html(h, r);
    h << "<h2>Details: " << escape_xml(r.hangs.front().id) << "</h2>\n";
  }
  h << "<p class=\"sentence\">" << escape_xml(r.sentence) << "</p>\n";
  h << "<table id=\"releases\"><thead><tr><th>release</th><th>package</th><th>CUDA</th><th>"
    << escape_xml(static_header(r))
    << "</th>"
       "<th>hangs</th><th>hang rate and 95% interval<br>"
    << forest_axis() << "</th><th>stopped before / crashed in teardown</th><th>"
    << (r.hang.empty() ? std::string("verdict") : escape_xml("hang " + r.hang + ": verdict"))
    << "</th><th>p vs vulnerable</th>"
       "<th>p vs fixed</th><th>SHA-256 (as shipped)</th><th>run</th></tr></thead><tbody>\n";
  for (const Row& row : r.rows) {
    std::string css = row.judged() ? validate::to_string(row.decision.verdict) : "not run";
    for (char& c : css) c = c == ' ' ? '-' : c;
    h << "<tr class=\"" << css << "\"><td>"
      << escape_xml(row.facts.release.empty() ? row.facts.path : row.facts.release)
      << (row.facts.slimmed ? " <small>(slimmed)</small>" : "") << "</td><td>" << escape_xml(row.facts.package)
      << "</td><td>" << escape_xml(row.facts.cuda_build) << "</td><td>" << escape_xml(static_text(row)) << "</td>";
    if (row.judged()) {
      h << fmt::format("<td>{}/{}</td><td class=\"forest\">{} <small>{}</small></td><td>{} / {}</td>",
                       row.arm.teardown_hangs, row.arm.counted(), forest_row(row, r), interval_text(row.arm),
                       row.arm.before_teardown, row.arm.teardown_failures);
    } else {
      h << "<td></td><td class=\"forest\"></td><td></td>";
    }
    const std::string sha = row.facts.original_sha256.empty() ? row.inspected.sha256 : row.facts.original_sha256;
    const std::string link = run_link(row.arm.run_dir.empty() ? r.run_dir : row.arm.run_dir, html_dir);
    const std::string run_id = row.arm.run_id.empty() ? r.run_id : row.arm.run_id;
    h << "<td>" << escape_xml(verdict_text(row)) << "</td><td>"
      << (row.judged() ? stats::format_p(row.decision.vs_vulnerable) : "") << "</td><td>"
      << (row.judged() ? stats::format_p(row.decision.vs_fixed) : "") << "</td><td class=\"sha\">"
      << (sha.empty() ? "" : "<code title=\"" + escape_xml(sha) + "\">" + escape_xml(short_sha(row)) + "</code>")
      << "</td><td>"
      << (row.judged() && !link.empty()
              ? "<a href=\"" + escape_xml(link) + "\" title=\"run " + escape_xml(run_id) + "\">report</a>"
              : "")
      << "</td></tr>\n";
  }
  h << "</tbody></table>\n";
  h << "<p>"
    << escape_xml(fmt::format("References: vulnerable {} hung {}/{}, fixed {} hung {}/{} (p = {}); their rates are the "
                              "red and green dashed lines of the plot. {} per library, alpha {}.",
                              r.vulnerable.library, r.vulnerable.teardown_hangs, r.vulnerable.counted(),
                              r.fixed.library, r.fixed.teardown_hangs, r.fixed.counted(), stats::format_p(r.references),
                              trials_text(r), r.alpha))
    << "</p>\n";
  if (const std::string note = slimmed_note(r); !note.empty()) h << "<p>" << escape_xml(note) << "</p>\n";
  h << "<p><small>"
    << escape_xml(fmt::format("{} · hangbench {} ({}) · {} · {} · {} · driver {} · run {}", argv_text(r.argv),
                              r.provenance.hangbench_version, r.provenance.hangbench_commit, r.provenance.host,
                              r.provenance.kernel, r.provenance.gpu.empty() ? "no GPU" : r.provenance.gpu,
                              r.provenance.driver.empty() ? "none" : r.provenance.driver, r.run_id))
    << "</small></p>\n</body></html>\n";
  return h.str();
}

}  // namespace hangbench::sweep
