#include "hangbench/evidence_from_stores.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "hangbench/provenance.hpp"
#include "hangbench/store.hpp"
#include "report/trial_metrics.hpp"

namespace hangbench::evidence {
namespace {

// A --reference no cell matches would make a table of dashes: refused, with the
// axes and values the runs have.
void require_reference_cells(const std::vector<std::unique_ptr<RunSummary>>& summaries, const CellFilter& reference) {
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& summary : summaries) {
    for (const Cell& cell : summary->matrix.cells) {
      if (report::cell_matches(cell, reference)) return;
      for (const auto& [axis, value] : cell.params) {
        auto& seen = values[axis];
        if (std::find(seen.begin(), seen.end(), value) == seen.end()) seen.push_back(value);
      }
    }
  }
  std::string axes;
  for (const auto& [axis, seen] : values) {
    axes += (axes.empty() ? "" : "; ") + axis + " =";
    for (size_t i = 0; i < seen.size(); ++i) axes += (i ? ", " : " ") + seen[i];
  }
  std::string given;
  for (const auto& [axis, value] : reference) given += (given.empty() ? "" : ",") + axis + "=" + value;
  throw EvidenceUsageError("--reference " + given +
                           " matches no cell of the runs given; their axes: " + (axes.empty() ? "none" : axes));
}

}  // namespace

std::string evidence_from_stores(const std::vector<std::string>& store_paths, const std::vector<std::string>& run_ids,
                                 const CellFilter& reference) {
  if (store_paths.empty()) throw EvidenceUsageError("give at least one store");
  // Summaries point into their own matrix: keep each one at a fixed address.
  std::vector<std::unique_ptr<RunSummary>> summaries;
  std::vector<EvidenceRun> runs;
  std::set<std::string> found;
  for (const std::string& path : store_paths) {
    if (!std::filesystem::is_regular_file(path)) throw EvidenceUsageError("no store at " + path);
    Store store = Store::open_read_only(path);
    std::vector<std::string> wanted;
    if (run_ids.empty()) {
      auto latest = store.latest_run();
      if (!latest) throw EvidenceUsageError("the store " + path + " holds no run");
      wanted.push_back(*latest);
    } else {
      for (const RunInfo& info : store.list_runs())
        if (std::find(run_ids.begin(), run_ids.end(), info.id) != run_ids.end()) wanted.push_back(info.id);
    }
    for (const std::string& id : wanted) {
      StoredRun stored = store.load_run(id);
      summaries.push_back(
          std::make_unique<RunSummary>(summarize(std::move(stored.matrix), std::move(stored.provenance),
                                                 std::move(stored.trials), stored.info.status == "complete")));
      runs.push_back({id, summaries.back().get()});
      found.insert(id);
    }
  }
  for (const std::string& id : run_ids)
    if (!found.count(id)) throw EvidenceUsageError("no run '" + id + "' in the stores given");
  if (!reference.empty()) require_reference_cells(summaries, reference);
  // The table names the command that made it, with this binary's commit.
  std::string command;
  for (const std::string& word : command_line()) command += (command.empty() ? "" : " ") + word;
  return render_evidence_markdown(runs, reference) + "- this table: `" + command + "`, hangbench " + HANGBENCH_VERSION +
         " (commit " + git_commit() + ")\n";
}

}  // namespace hangbench::evidence
