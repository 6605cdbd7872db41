// Reads the history store into a per-cell, night-by-night table.
#include <algorithm>
#include <map>

#include "hangbench/history.hpp"

namespace hangbench::history {
namespace {

bool wanted(const std::string& cell_id, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  return std::any_of(filters.begin(), filters.end(),
                     [&](const std::string& f) { return cell_id.find(f) != std::string::npos; });
}

}  // namespace

HistoryTable load_history(const Store& history, int nights, const std::vector<std::string>& cell_filters) {
  HistoryTable table;
  table.store_path = history.path();
  std::vector<RunInfo> runs = history.list_runs();  // oldest first
  if (nights > 0 && runs.size() > static_cast<size_t>(nights)) runs.erase(runs.begin(), runs.end() - nights);
  std::map<std::pair<std::string, std::string>, size_t> position;  // (matrix, cell) -> index
  for (const RunInfo& info : runs) {
    StoredRun run = history.load_run(info.id);
    RunSummary summary = summarize(run.matrix, run.provenance, run.trials, info.status == "complete");
    for (const CellSummary& c : summary.cells) {
      if (!wanted(c.cell->id, cell_filters)) continue;
      auto [it, inserted] = position.try_emplace({run.matrix.name, c.cell->id}, table.cells.size());
      if (inserted) table.cells.push_back({run.matrix.name, c.cell->id, {}});
      CellHistory& cell = table.cells[it->second];
      CellNight night;
      night.run_id = info.id;
      night.started_at = info.started_at;
      night.hangs = c.hangs;
      night.n = c.n;
      night.crashed = c.crashed;
      night.failed = c.failed;
      night.wall_s = c.wall_s;
      night.teardown_s = c.teardown_s;
      night.verdict = c.verdict;
      night.stack = stack_of(*c.cell, summary.provenance);
      if (!cell.nights.empty()) night.changes = stack_changes(cell.nights.back().stack, night.stack);
      cell.nights.push_back(std::move(night));
    }
  }
  return table;
}

}  // namespace hangbench::history
