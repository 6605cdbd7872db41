// The history as one self-contained HTML page, read at a glance: a headline that
// says whether anything regressed on the latest night, the cells that need
// attention (regressed, verdict changed) listed first, then a heat map of cells ×
// nights (hang rate as colour, the verdict as a mark, each square linking to its
// night's report), with each cell's teardown p50 drawn on its own seconds axis.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "history/render.hpp"
#include "report/text.hpp"

namespace hangbench::history {
namespace {

using report::escape_xml;

std::string verdict_mark(Verdict v) {
  switch (v) {
    case Verdict::Confirmed:
      return "&#10003;";  // ✓
    case Verdict::Contradicted:
      return "&#10007;";  // ✗
    case Verdict::Inconclusive:
      return "?";
    case Verdict::None:
      break;
  }
  return "";
}

std::string verdict_word(Verdict v) {
  std::string word = to_string(v);
  return word.empty() ? "no expectation" : word;
}

// White at 0 % to the report's red at 100 %.
std::string rate_colour(int hangs, int n) {
  if (n == 0) return "#ddd";
  const double r = static_cast<double>(hangs) / n;
  auto mix = [r](int from, int to) { return static_cast<int>(from + (to - from) * r + 0.5); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(255, 192), mix(255, 57), mix(255, 43));
}

std::string link_of(const HistoryTable& table, const CellHistory& cell, const CellNight& night) {
  std::string link = table.report_link;
  for (auto [key, value] : {std::pair{"{run}", night.run_id}, {"{matrix}", cell.matrix}}) {
    for (size_t at = link.find(key); at != std::string::npos; at = link.find(key, at + value.size()))
      link.replace(at, std::string(key).size(), value);
  }
  return link;
}

std::string headline(const std::vector<CellGlance>& glances, const HistoryTable& table) {
  int regressed = 0, changed = 0;
  std::string latest;
  std::set<std::string> matrices;
  for (const CellGlance& g : glances) {
    regressed += g.regressed;
    changed += g.verdict_changed;
    matrices.insert(g.cell->matrix);
    if (g.latest) latest = std::max(latest, night_date(g.latest->started_at));
  }
  const std::string scope =
      fmt::format("{} cell{} in {} matri{}, latest night {}", glances.size(), glances.size() == 1 ? "" : "s",
                  matrices.size(), matrices.size() == 1 ? "x" : "ces", latest);
  if (regressed == 0 && changed == 0) {
    return fmt::format("<p id=\"headline\" class=\"good\">Nothing regressed and no verdict changed ({}).</p>\n",
                       escape_xml(scope));
  }
  std::vector<std::string> parts;
  if (regressed > 0) parts.push_back(fmt::format("{} cell{} regressed", regressed, regressed == 1 ? "" : "s"));
  if (changed > 0) parts.push_back(fmt::format("{} verdict{} changed", changed, changed == 1 ? "" : "s"));
  std::string what = parts[0] + (parts.size() > 1 ? " and " + parts[1] : "");
  return fmt::format(
      "<p id=\"headline\" class=\"bad\">{} ({}; one-sided Fisher against the earlier nights here, "
      "alpha {}).</p>\n",
      what, escape_xml(scope), table.alpha);
}

// The cells that need a look, one line each, regressions first.
std::string attention(const std::vector<const CellGlance*>& ordered, const HistoryTable& table) {
  std::string rows;
  for (const CellGlance* g : ordered) {
    if (!g->regressed && !g->verdict_changed) break;  // `ordered` has them first
    std::vector<std::string> what;
    if (g->regressed) {
      // "over 5 nights", or "over 3 runs on 1 night" when a date ran more than once.
      const std::string over = g->baseline_dates == g->baseline_nights
                                   ? fmt::format("{} night{}", g->baseline_nights, g->baseline_nights == 1 ? "" : "s")
                                   : fmt::format("{} runs on {} night{}", g->baseline_nights, g->baseline_dates,
                                                 g->baseline_dates == 1 ? "" : "s");
      what.push_back(
          fmt::format("regressed: {} against {} over {} (p = {})", report::format_rate(g->latest->hangs, g->latest->n),
                      report::format_rate(g->baseline_hangs, g->baseline_n), over, fmt::format("{:.2g}", g->p_worse)));
    }
    if (g->verdict_changed) {
      what.push_back(fmt::format("verdict {} &#8594; {}", escape_xml(verdict_word(g->previous->verdict)),
                                 escape_xml(verdict_word(g->latest->verdict))));
    }
    // "2026-12-04 #3": the latest run, where its matrix ran more than once that date.
    const std::string date = night_date(g->latest->started_at);
    const auto runs_that_date = std::count_if(g->cell->nights.begin(), g->cell->nights.end(),
                                              [&](const CellNight& n) { return night_date(n.started_at) == date; });
    std::string night = escape_xml(date + (runs_that_date > 1 ? " #" + std::to_string(runs_that_date) : ""));
    if (!table.report_link.empty())
      night = fmt::format("<a href=\"{}\">{}</a>", escape_xml(link_of(table, *g->cell, *g->latest)), night);
    rows += fmt::format("<tr class=\"{}\"><td>{}</td><td class=\"cell\">{}</td><td>{}</td><td>{}</td></tr>\n",
                        g->regressed ? "regressed" : "changed", escape_xml(g->cell->matrix),
                        escape_xml(g->cell->cell_id), what.size() > 1 ? what[0] + "; " + what[1] : what[0], night);
  }
  if (rows.empty()) return "";
  return "<h2>Needs a look</h2>\n<table id=\"attention\"><tr><th>matrix</th><th>cell</th><th>what</th>"
         "<th>night</th></tr>\n" +
         rows + "</table>\n";
}

// One column of the heat map per run: the runs of a matrix on one date side by side
// ("12-04 #1", "12-04 #2"), the runs of different matrices on that date sharing them.
struct Column {
  std::string date;               // "2026-12-04"
  int slot = 0;                   // 0-based: the matrix's first, second ... run that date
  int slots_that_date = 1;        // how many columns the date has
  std::vector<std::string> runs;  // the runs in this column (one per matrix)
  std::string matrix;             // of the first run
  std::string time;               // "02:00" of the first run
};

struct Columns {
  std::vector<Column> list;          // date order, then slot
  std::map<std::string, size_t> of;  // run id -> its column
};

Columns columns_of(const HistoryTable& table) {
  // Each matrix's runs per date, in start order: a run's slot is its place there.
  std::map<std::pair<std::string, std::string>, std::set<std::pair<std::string, std::string>>> runs;
  for (const CellHistory& cell : table.cells)
    for (const CellNight& n : cell.nights)
      runs[{cell.matrix, night_date(n.started_at)}].insert({n.started_at, n.run_id});
  std::map<std::pair<std::string, int>, Column> keyed;
  std::map<std::string, std::pair<std::string, int>> key_of;
  for (const auto& [matrix_date, started] : runs) {
    int slot = 0;
    for (const auto& [started_at, run] : started) {
      Column& c = keyed[{matrix_date.second, slot}];
      if (c.runs.empty()) {
        c.date = matrix_date.second;
        c.slot = slot;
        c.matrix = matrix_date.first;
        c.time = started_at.size() >= 16 ? started_at.substr(11, 5) : "";
      }
      if (std::find(c.runs.begin(), c.runs.end(), run) == c.runs.end()) c.runs.push_back(run);
      key_of[run] = {matrix_date.second, slot++};
    }
  }
  Columns out;
  std::map<std::pair<std::string, int>, size_t> index;
  for (auto& [key, column] : keyed) {
    index[key] = out.list.size();
    out.list.push_back(column);
  }
  for (Column& c : out.list) {
    for (const Column& other : out.list)
      c.slots_that_date = std::max(c.slots_that_date, other.date == c.date ? other.slot + 1 : 1);
  }
  for (const auto& [run, key] : key_of) out.of[run] = index[key];
  return out;
}

// "12-04", or "12-04 #2" where a date has several runs.
std::string column_label(const Column& c) {
  const std::string day = c.date.size() >= 10 ? c.date.substr(5) : c.date;
  return c.slots_that_date > 1 ? day + " #" + std::to_string(c.slot + 1) : day;
}

// A cell's teardown p50 run by run, on its own axis from 0 to its largest.
std::string teardown_plot(const CellHistory& cell, const Columns& columns) {
  constexpr double kW = 150, kH = 34, kPad = 3;
  double top = 0;
  for (const CellNight& n : cell.nights) top = std::max(top, n.teardown_s.n > 0 ? n.teardown_s.p50 : 0.0);
  if (top <= 0) return "";
  std::string points, dots;
  for (const CellNight& n : cell.nights) {
    if (n.teardown_s.n == 0) continue;
    const size_t count = columns.list.size();
    const auto at = static_cast<double>(columns.of.at(n.run_id));
    double x = count <= 1 ? kW / 2 : kPad + (kW - 2 * kPad) * at / static_cast<double>(count - 1);
    double y = kH - kPad - (kH - 2 * kPad) * n.teardown_s.p50 / top;
    points += fmt::format("{:.1f},{:.1f} ", x, y);
    dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\" fill=\"#1f5fbf\"><title>{}: {} s</title></circle>",
                        x, y, escape_xml(night_date(n.started_at)), report::format_seconds(n.teardown_s.p50));
  }
  return fmt::format(
      "<svg class=\"teardown\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"teardown p50 of {2}, 0 to {3} s\">"
      "<line x1=\"0\" x2=\"{0}\" y1=\"{4}\" y2=\"{4}\" stroke=\"#bbb\"/>"
      "<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.5\" points=\"{5}\"/>{6}</svg>"
      "<span class=\"axis\">0–{3} s</span>",
      kW, kH, escape_xml(cell.cell_id), report::format_seconds(top), kH - kPad, points, dots);
}

std::string square(const HistoryTable& table, const CellGlance& g, const CellNight& n) {
  std::vector<std::string> classes{"night"};
  const std::string crashes = report::crash_note(n.crashed, n.failed);
  std::string title =
      fmt::format("{} {}: {} hung{}, {}", night_date(n.started_at), n.run_id, report::format_rate(n.hangs, n.n),
                  crashes.empty() ? "" : " (" + crashes + ")", verdict_word(n.verdict));
  if (!n.changes.empty()) {
    classes.push_back("stack-changed");
    title += "; " + changes_label(n.changes) + " changed";
  }
  if (&n == g.latest && g.regressed) classes.push_back("regressed");
  std::string text = report::format_rate(n.hangs, n.n);
  std::string mark = verdict_mark(n.verdict);
  std::string body = escape_xml(text) + (mark.empty() ? "" : " " + mark);
  if (!table.report_link.empty())
    body = fmt::format("<a href=\"{}\">{}</a>", escape_xml(link_of(table, *g.cell, n)), body);
  const bool dark = n.n > 0 && n.hangs * 2 > n.n;
  std::string cls;
  for (const auto& c : classes) cls += (cls.empty() ? "" : " ") + c;
  return fmt::format("<td class=\"{}\" style=\"background:{}{}\" title=\"{}\">{}</td>", cls, rate_colour(n.hangs, n.n),
                     dark ? ";color:#fff" : "", escape_xml(title), body);
}

std::string heat_map(const std::vector<const CellGlance*>& ordered, const HistoryTable& table) {
  const Columns columns = columns_of(table);
  std::string head = "<tr><th>cell</th>";
  for (const Column& c : columns.list) {
    // Labelled by date (and place that date), titled by its runs; linked when it is one run.
    std::string title = c.date + (c.time.empty() ? "" : " " + c.time) + ": run";
    title += c.runs.size() == 1 ? " " + c.runs[0] : "s";
    for (size_t i = 0; c.runs.size() > 1 && i < c.runs.size(); ++i) title += (i ? ", " : " ") + c.runs[i];
    std::string label = escape_xml(column_label(c));
    if (!table.report_link.empty() && c.runs.size() == 1) {
      const CellHistory named{c.matrix, "", {}};
      CellNight run;
      run.run_id = c.runs[0];
      label = fmt::format("<a href=\"{}\">{}</a>", escape_xml(link_of(table, named, run)), label);
    }
    head += fmt::format("<th class=\"date\" title=\"{}\">{}</th>", escape_xml(title), label);
  }
  head += "<th>teardown p50</th></tr>\n";
  std::string rows;
  for (const CellGlance* g : ordered) {
    std::string row = fmt::format("<tr class=\"{}\"><td class=\"cell\"><span class=\"matrix\">{}</span> {}</td>",
                                  g->regressed         ? "regressed"
                                  : g->verdict_changed ? "changed"
                                                       : "steady",
                                  escape_xml(g->cell->matrix), escape_xml(g->cell->cell_id));
    std::vector<const CellNight*> in_column(columns.list.size(), nullptr);
    for (const CellNight& n : g->cell->nights) in_column[columns.of.at(n.run_id)] = &n;
    for (const CellNight* night : in_column) row += night ? square(table, *g, *night) : "<td class=\"none\"></td>";
    rows += row + "<td class=\"teardown\">" + teardown_plot(*g->cell, columns) + "</td></tr>\n";
  }
  return "<h2>Hang rate, cell × run</h2>\n<table id=\"heatmap\">" + head + rows + "</table>\n";
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:2px 6px}th.date{font-weight:normal;font-size:90%}"
    "#headline{font-size:130%;font-weight:bold;padding:.4em .6em;border-radius:4px}"
    "#headline.good{background:#e3f4e1}#headline.bad{background:#fbe3e0}"
    "td.cell{max-width:30em;overflow-wrap:anywhere;font-family:monospace;font-size:85%}"
    ".matrix{color:#777;font-family:sans-serif}"
    "td.night{text-align:center;white-space:nowrap;font-size:80%;padding:2px 3px}td.night "
    "a{color:inherit;text-decoration:none}"
    "td.night.stack-changed{border-left:3px dashed #555}td.night.regressed{outline:3px solid #000;outline-offset:-3px}"
    "tr.regressed td.cell,tr.changed td.cell{font-weight:bold}"
    "td.teardown{white-space:nowrap}td.teardown svg{vertical-align:middle}"
    ".axis{font-size:80%;color:#1f5fbf;margin-left:4px}";

}  // namespace

std::string render_history_html(const HistoryTable& table_data) {
  std::string body;
  if (table_data.cells.empty()) {
    body = "<p>No nights in the history yet.</p>\n";
  } else {
    const std::vector<CellGlance> glances = glance(table_data);
    std::vector<const CellGlance*> ordered;
    for (const CellGlance& g : glances) ordered.push_back(&g);
    std::stable_sort(ordered.begin(), ordered.end(), [](const CellGlance* a, const CellGlance* b) {
      return std::pair{!a->regressed, !a->verdict_changed} < std::pair{!b->regressed, !b->verdict_changed};
    });
    body = headline(glances, table_data) + attention(ordered, table_data) +
           "<p class=\"legend\">One column per run, labelled by its date (#1, #2 where a matrix ran more than "
           "once that date). Each square: hangs/trials of that run, white 0 % to red 100 %; "
           "&#10003; expectation confirmed, &#10007; contradicted, ? inconclusive; a dashed left edge: NCCL, "
           "the driver, libtorch, the matrix, its options (trials, timeout, command) or its phase timeouts "
           "changed since the run before (the square's title says which); a black frame: the latest run "
           "regressed." +
           std::string(table_data.report_link.empty() ? ""
                                                      : " A square links to its run's report, as does a column's "
                                                        "date when the column is one run.") +
           " Teardown p50: each cell on its own axis, from 0 to its largest run.</p>\n" + heat_map(ordered, table_data);
  }
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>hangbench nightly history</title>\n<style>" +
         std::string(kStyle) + "</style></head><body>\n<h1>hangbench nightly history</h1>\n" + body +
         "</body></html>\n";
}

}  // namespace hangbench::history
