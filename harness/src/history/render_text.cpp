// The history as a terminal table, Markdown and JSON; the HTML form is in
// render_html.cpp.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "hangbench/provenance.hpp"
#include "history/render.hpp"
#include "report/text.hpp"

namespace hangbench::history {
namespace {

nlohmann::json quantiles_json(const Quantiles& q) {
  if (q.n == 0) return nullptr;
  return {{"n", q.n}, {"p50", q.p50}, {"p90", q.p90}};
}

std::string render_json(const HistoryTable& table) {
  nlohmann::json cells = nlohmann::json::array();
  for (const CellHistory& cell : table.cells) {
    nlohmann::json nights = nlohmann::json::array();
    for (const CellNight& n : cell.nights) {
      nights.push_back({{"run_id", n.run_id},
                        {"started_at", n.started_at},
                        {"hangs", n.hangs},
                        {"n", n.n},
                        {"crashed", n.crashed},
                        {"failed", n.failed},
                        {"wall_s", quantiles_json(n.wall_s)},
                        {"teardown_s", quantiles_json(n.teardown_s)},
                        {"verdict", to_string(n.verdict)},
                        {"nccl", n.stack.nccl},
                        {"driver", n.stack.driver},
                        {"libtorch", n.stack.torch},
                        {"changes", n.changes}});
    }
    cells.push_back({{"matrix", cell.matrix}, {"cell", cell.cell_id}, {"nights", nights}});
  }
  // This command's provenance; each night's own is in the history store.
  nlohmann::ordered_json doc{{"schema", "hangbench.history/1"},
                             {"provenance", provenance_json(collect_host_provenance())},
                             {"store", table.store_path}};
  doc["cells"] = nlohmann::ordered_json::parse(cells.dump());
  return doc.dump(2) + "\n";
}

std::string render_markdown(const HistoryTable& table) {
  std::string out = "# hangbench history\n";
  if (table.cells.empty()) out += "\nNo nights in the history yet.\n";
  for (const CellHistory& cell : table.cells) {
    out += fmt::format("\n## {}: `{}`\n\n", cell.matrix, cell.cell_id);
    out +=
        "| night | run | hangs | crashed | failed | wall p50 / p90 (s) | teardown p50 / p90 (s) | verdict | changed "
        "|\n";
    out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const CellNight& n : cell.nights) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", night_date(n.started_at),
                         report::escape_markdown_cell(n.run_id), report::format_rate(n.hangs, n.n), n.crashed, n.failed,
                         report::format_p50_p90(n.wall_s), report::format_p50_p90(n.teardown_s),
                         report::verdict_with_crashes(n.verdict, n.crashed, n.failed),
                         n.changes.empty() ? "" : "**" + changes_label(n.changes) + "**");
    }
  }
  return out;
}

std::string render_table(const HistoryTable& table) {
  std::string out;
  if (table.cells.empty()) return "no nights in the history " + table.store_path + "\n";
  for (const CellHistory& cell : table.cells) {
    out += cell.matrix + ": " + cell.cell_id + "\n";
    out += fmt::format("  {:<10} {:<24} {:>7} {:>7} {:>6} {:>15} {:>15}  {}\n", "night", "run", "hangs", "crashed",
                       "failed", "wall p50/p90", "teardown p50/p90", "changed");
    for (const CellNight& n : cell.nights) {
      out += fmt::format("  {:<10} {:<24} {:>7} {:>7} {:>6} {:>15} {:>15}  {}\n", night_date(n.started_at), n.run_id,
                         report::format_rate(n.hangs, n.n), n.crashed, n.failed, report::format_p50_p90(n.wall_s),
                         report::format_p50_p90(n.teardown_s), changes_label(n.changes));
    }
  }
  return out;
}

}  // namespace

std::string night_date(const std::string& started_at) { return started_at.substr(0, 10); }

std::string changes_label(const std::vector<std::string>& changes) {
  std::string out;
  for (const auto& c : changes) out += (out.empty() ? "" : ", ") + c;
  return out;
}

std::string render_history(const HistoryTable& table, const std::string& format) {
  if (format == "table") return render_table(table);
  if (format == "markdown" || format == "md") return render_markdown(table);
  if (format == "json") return render_json(table);
  if (format == "html") return render_history_html(table);
  throw std::invalid_argument("unknown history format '" + format + "' (table, markdown, json, html)");
}

}  // namespace hangbench::history
