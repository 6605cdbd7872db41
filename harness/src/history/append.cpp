// Appends runs to the history store by copying them through the Store API, so
// the history keeps the schema of every other store.
#include <filesystem>
#include <map>

#include "hangbench/history.hpp"

namespace hangbench::history {

std::vector<std::string> append_runs(Store& history, const std::string& run_store_path) {
  if (!std::filesystem::exists(run_store_path)) throw StoreError("no store at " + run_store_path);
  if (std::filesystem::equivalent(run_store_path, history.path())) {
    throw StoreError("the run store and the history are the same file: " + run_store_path);
  }
  Store source = Store::open(run_store_path);
  std::map<std::string, RunInfo> known;
  for (const RunInfo& info : history.list_runs()) known[info.id] = info;
  std::vector<std::string> appended;
  for (const RunInfo& info : source.list_runs()) {
    auto it = known.find(info.id);
    // Appending the same store twice adds nothing; a run appended while stopped and
    // resumed since (`run --resume` keeps its id) is brought up to date.
    if (it != known.end() && (it->second.status == "complete" || it->second.trials >= info.trials)) continue;
    StoredRun run = source.load_run(info.id);
    // begin_run dates the run by provenance.started_at: keep the night's own date.
    if (run.provenance.started_at.empty()) run.provenance.started_at = info.started_at;
    if (it == known.end()) history.begin_run(info.id, run.matrix, run.provenance);
    for (const TrialResult& trial : run.trials) history.record_trial(info.id, trial);
    history.finish_run(info.id, info.status.empty() ? "complete" : info.status);
    appended.push_back(info.id);
  }
  return appended;
}

}  // namespace hangbench::history
