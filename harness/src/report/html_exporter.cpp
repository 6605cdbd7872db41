// A self-contained HTML report: inline CSS and inline SVG, no scripts, no external
// assets, so that it opens from a CI artifact store or an e-mail. Its only links
// are relative ones, to the evidence folders beside it in the run folder. Laid out
// to fit a 1400 px window whole (tests/integration/html_report_layout_test.cpp
// renders it in headless Chromium and measures).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "hangbench/stats.hpp"
#include "report/exporters.hpp"
#include "report/html_plots.hpp"
#include "report/text.hpp"
#include "report/trial_metrics.hpp"

namespace hangbench::report {
namespace {

const char* kStyle = R"(body{font-family:system-ui,sans-serif;font-size:13px;margin:12px;color:#222;max-width:1376px}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:3px 5px;text-align:left;vertical-align:middle}
th{background:#f3f3f3}td.num{text-align:right;white-space:nowrap}td.nowrap{white-space:nowrap}
td.cell{max-width:230px;overflow-wrap:anywhere;font-family:monospace;font-size:12px}
.CONFIRMED{color:#176f2c;font-weight:bold}.CONTRADICTED{color:#b00020;font-weight:bold}.INCONCLUSIVE{color:#8a6d00}
.crashes{color:#6a1b9a;font-weight:bold}.summary{font-size:15px;font-weight:bold;margin:.4em 0 .8em}
.quant{font-size:11px;color:#444;white-space:nowrap}
pre{background:#f7f7f7;padding:8px;white-space:pre-wrap;max-width:1340px}.legend span{margin-right:1em}
.duration{margin:-.4em 0 .8em;color:#444}details{margin:.2em 0 .8em}summary{cursor:pointer}
svg text{font-size:10px;fill:#555}td.prov{max-width:1200px;overflow-wrap:anywhere}
)";

// The cell id with break opportunities after its commas: long ids wrap, not widen.
std::string breakable_id(const std::string& id) {
  std::string out;
  for (char c : escape_xml(id)) {
    out += c;
    if (c == ',' || c == '+') out += "<wbr>";
  }
  return out;
}

// Percent-encodes what a relative URL path cannot carry as is ("=", "," and "+"
// are fine in a path; spaces, '#', '?' and '%' are not).
std::string url_path(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("/-._~=,+:@").find(static_cast<char>(c)) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string provenance_rows(const RunSummary& run) {
  const Provenance& p = run.provenance;
  std::string argv;
  for (const std::string& word : p.argv) argv += (argv.empty() ? "" : " ") + word;
  std::string gpu = p.gpu.empty() ? "no GPU"
                                  : p.gpu + (p.driver.empty() ? "" : ", driver " + p.driver) +
                                        (p.cuda.empty() ? "" : ", CUDA " + p.cuda);
  std::string out = "<table>\n";
  auto row = [&](const char* name, const std::string& html) {
    out += fmt::format("<tr><th>{}</th><td class=\"prov\">{}</td></tr>\n", name, html);
  };
  row("What ran", fmt::format("matrix <code>{}</code> (sha256 <code>{}</code>), {} cells, {} trials{}",
                              escape_xml(run.matrix.path), escape_xml(p.matrix_sha256.substr(0, 12)), run.cells.size(),
                              run.trials.size(), run.complete ? "" : " (incomplete)"));
  std::string command = argv.empty() ? "not recorded" : "<code>" + escape_xml(argv) + "</code>";
  if (!p.shard_commands.empty()) {  // a merged run: say so, and what each shard ran
    command += fmt::format("<br>merges {} shards:<ol start=\"0\">", p.shard_commands.size());
    for (const auto& shard : p.shard_commands) command += "<li><code>" + escape_xml(shard) + "</code></li>";
    command += "</ol>";
  }
  row("Command", command);
  row("On what", escape_xml(fmt::format("{} (kernel {}); {}", p.host.empty() ? "unknown host" : p.host,
                                        p.kernel.empty() ? "unknown" : p.kernel, gpu)));
  row("When", escape_xml(p.started_at));
  row("Commit", escape_xml(fmt::format("hangbench {} ({})", p.hangbench_version, p.hangbench_commit)));
  for (const auto& [path, hash] : p.library_hashes)
    row("Library", fmt::format("<code>{}</code> sha256 <code>{}</code>", escape_xml(path), escape_xml(hash)));
  return out + "</table>\n";
}

// "1m10s": from the first trial's start to the last trial's end (a merged run: over
// every shard's hosts); "" when no trial recorded when it started.
std::string run_duration(const RunSummary& run) {
  double first = 0, last = 0;
  for (const TrialResult& t : run.trials) {
    if (t.started_at <= 0) continue;
    first = first == 0 ? t.started_at : std::min(first, t.started_at);
    last = std::max(last, t.started_at + t.wall_s);
  }
  if (first == 0) return "";
  const long s = std::lround(last - first);
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}h{:02d}m", s / 3600, (s / 60) % 60);
}

// The anchor of a cell's evidence (its place in the matrix: ids may hold any character).
std::string evidence_anchor(const RunSummary& run, const CellSummary& c) {
  return fmt::format("evidence-{}", &c - run.cells.data());
}

bool has_evidence(const RunSummary& run, const CellSummary& c) {
  if (c.hangs > 0) return true;
  return std::any_of(run.trials.begin(), run.trials.end(),
                     [&](const TrialResult& t) { return t.cell_id == c.cell->id && !t.evidence_dir.empty(); });
}

// "verdict CONFIRMED crashes": the verdict's colour, and a mark when trials crashed or failed.
std::string verdict_class(const CellSummary& c) {
  std::string verdict = to_string(c.verdict);
  return "verdict" + (verdict.empty() ? "" : " " + verdict) + (c.crashed + c.failed > 0 ? " crashes" : "");
}

std::string distribution_cell(const std::vector<PlotPoint>& points, const Quantiles& q, double axis_max) {
  if (points.empty()) return "–";
  return strip_plot_svg(points, axis_max) +
         fmt::format("<div class=\"quant\">p50 {} s · p90 {} s</div>", format_seconds(q.p50), format_seconds(q.p90));
}

std::string html_cell_table(const RunSummary& run) {
  // Points per cell, and one shared axis per kind so that cells compare by eye.
  std::vector<std::vector<PlotPoint>> walls(run.cells.size()), teardowns(run.cells.size());
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
  wall_max = tidy_axis_max(wall_max);
  teardown_max = tidy_axis_max(teardown_max);

  std::string out = "<p class=\"legend\">";
  for (Outcome o : {Outcome::Passed, Outcome::Hang, Outcome::Crashed, Outcome::Failed})
    out += fmt::format("<span style=\"color:{}\">&#9679; {}</span>", outcome_colour(o), to_string(o));
  out += "one dot per trial; box: 25th–75th percentile, bar: median, whiskers: min–max; one time axis per column</p>\n";
  out +=
      "<table id=\"cells\">\n<tr><th>cell</th><th>n</th><th>hangs</th><th>crashed</th><th>failed</th><th>95% CI</th>"
      "<th>wall time (s)</th><th>teardown time (s)</th><th>expect</th><th id=\"verdict-column\">verdict</th></tr>\n";
  for (size_t i = 0; i < run.cells.size(); ++i) {
    const CellSummary& c = run.cells[i];
    // A cell with hangs or evidence links to it (the evidence section, below).
    const std::string hangs = has_evidence(run, c) ? fmt::format("<a href=\"#{}\" title=\"its evidence\">{}</a>",
                                                                 evidence_anchor(run, c), format_rate(c.hangs, c.n))
                                                   : format_rate(c.hangs, c.n);
    out += fmt::format(
        "<tr><td class=\"cell\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num{}\">{}</td>"
        "<td class=\"num{}\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"{}\" title=\"{}\">{}</td></tr>\n",
        has_evidence(run, c) ? fmt::format("<a href=\"#{}\">{}</a>", evidence_anchor(run, c), breakable_id(c.cell->id))
                             : breakable_id(c.cell->id),
        c.n, hangs, c.crashed ? " crashes" : "", c.crashed, c.failed ? " crashes" : "", c.failed,
        format_ci_percent(c.hang_ci95, c.n), distribution_cell(walls[i], c.wall_s, wall_max),
        distribution_cell(teardowns[i], c.teardown_s, teardown_max), expectation_label(c.cell->expect),
        verdict_class(c), escape_xml(c.verdict_reason), escape_xml(cell_verdict_label(c)));
  }
  return out + "</table>\n";
}

// The comparison's name, and which cells each side pools.
std::string comparison_cell(const ComparisonResult& r) {
  if (r.comparison == nullptr || r.comparison->name.empty()) return escape_xml(comparison_label(r));
  return fmt::format("{}<br><span class=\"quant\">a = {}; b = {}</span>", escape_xml(r.comparison->name),
                     escape_xml(filter_label(r.comparison->a)), escape_xml(filter_label(r.comparison->b)));
}

std::string html_comparison_table(const RunSummary& run) {
  std::string out =
      "<h2>Comparisons</h2>\n<p>Fisher's exact test, cells pooled per side; Holm's correction across the comparisons "
      "with trials on both sides. " +
      escape_xml(counting_note()) +
      "</p>\n"
      "<table>\n<tr><th>comparison</th><th>a hangs</th><th>a crashed / failed</th><th>b hangs</th>"
      "<th>b crashed / failed</th><th>p two-sided</th><th>p (a &gt; b)</th><th>p (a &lt; b)</th>"
      "<th>odds ratio</th><th>Holm p</th></tr>\n";
  for (const ComparisonResult& r : run.comparisons) {
    if (!r.tested()) {
      out += fmt::format(
          "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{} / {}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{} / {}</td><td colspan=\"5\">not run</td></tr>\n",
          comparison_cell(r), format_rate(r.a_hangs, r.a_n), r.a_crashed, r.a_failed, format_rate(r.b_hangs, r.b_n),
          r.b_crashed, r.b_failed);
      continue;
    }
    out += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{} / {}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{} / {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        comparison_cell(r), format_rate(r.a_hangs, r.a_n), r.a_crashed, r.a_failed, format_rate(r.b_hangs, r.b_n),
        r.b_crashed, r.b_failed, stats::format_p(r.p_two_sided, r.log10_p_two_sided),
        stats::format_p(r.p_a_greater, r.log10_p_a_greater), stats::format_p(r.p_a_less, r.log10_p_a_less),
        stats::format_odds_ratio(r.odds_ratio), stats::format_p(r.p_holm, r.log10_p_holm));
  }
  return out + "</table>\n";
}

// Every hung, crashed or failed trial with an evidence folder, linked (relative to
// the run folder, where report.html is written), and each cell's example summary.
// Each cell's example is shown; its trials' folders, near-identical, are folded.
std::string evidence_section(const RunSummary& run) {
  std::string out;
  for (const CellSummary& c : run.cells) {
    std::string links;
    int folders = 0;
    for (const TrialResult& t : run.trials) {
      if (t.cell_id != c.cell->id || t.evidence_dir.empty()) continue;
      const std::string dir = url_path(t.evidence_dir);
      ++folders;
      links += fmt::format(
          "<li>trial {} ({}): <a href=\"{}/\">{}/</a> — <a href=\"{}/evidence.txt\">evidence.txt</a>, "
          "<a href=\"{}/evidence.json\">evidence.json</a></li>\n",
          t.index, to_string(t.outcome), dir, escape_xml(t.evidence_dir), dir, dir);
    }
    if (links.empty() && c.hangs == 0) continue;
    out += fmt::format("<h3 id=\"{}\"><code>{}</code>: {} hung</h3>\n<pre>{}</pre>\n", evidence_anchor(run, c),
                       escape_xml(c.cell->id), format_rate(c.hangs, c.n),
                       escape_xml(c.evidence_example.empty() ? "(no evidence summary recorded)" : c.evidence_example));
    if (!links.empty()) {
      out +=
          fmt::format("<details><summary>{} evidence folder{} (one per trial)</summary>\n<ul>\n{}</ul>\n</details>\n",
                      folders, folders == 1 ? "" : "s", links);
    }
  }
  return out.empty() ? "" : "<h2>Evidence of hangs</h2>\n" + out;
}

class HtmlExporter : public Exporter {
 public:
  std::string format() const override { return "html"; }
  std::string extension() const override { return ".html"; }

  std::string render(const RunSummary& run) const override {
    std::string out = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hangbench: {0}</title>\n"
        "<style>{1}</style></head>\n<body>\n<h1>hangbench: {0}</h1>\n<p class=\"summary\" id=\"summary\">{2}</p>\n",
        escape_xml(run.matrix.name), kStyle, escape_xml(run_summary_line(run)));
    const std::string took = run_duration(run);
    out +=
        fmt::format("<p class=\"duration\" id=\"duration\">Started {}{}.</p>\n",
                    escape_xml(run.provenance.started_at.empty() ? "at an unrecorded time" : run.provenance.started_at),
                    took.empty() ? "" : "; took " + took + " (first trial's start to last trial's end)");
    out += provenance_rows(run);
    out +=
        "<h2>Hang rates</h2>\n<p>Each cell's hang rate (dot) with its exact 95% interval (Clopper-Pearson), "
        "then each comparison's two sides pooled, with Fisher's two-sided p.</p>\n" +
        forest_legend() + forest_plot_svg(run);
    out += "<h2>Cells</h2>\n" + html_cell_table(run);
    for (const CellSummary& c : run.cells)
      if (c.infra > 0)
        out += fmt::format("<p><b>INFRA</b> <code>{}</code>: {} trial(s) could not run: {}</p>\n",
                           escape_xml(c.cell->id), c.infra, escape_xml(c.infra_reason));
    if (!run.comparisons.empty()) out += html_comparison_table(run);
    out += evidence_section(run);
    return out + "</body></html>\n";
  }
};

}  // namespace

std::unique_ptr<Exporter> make_html_exporter() { return std::make_unique<HtmlExporter>(); }

}  // namespace hangbench::report
