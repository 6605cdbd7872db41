// Appends runs to the history store by copying them through the Store API, so
// the history keeps the schema of every other store.
#include <filesystem>
#include <set>

#include "hangbench/history.hpp"

namespace hangbench::history {

std::vector<std::string> append_runs(Store& history, const std::string& run_store_path) {
  if (!std::filesystem::exists(run_store_path)) throw StoreError("no store at " + run_store_path);
  if (std::filesystem::equivalent(run_store_path, history.path())) {
    throw StoreError("the run store and the history are the same file: " + run_store_path);
  }
  Store source = Store::open(run_store_path);
  std::set<std::string> known;
  for (const RunInfo& info : history.list_runs()) known.insert(info.id);
  std::vector<std::string> appended;
  for (const RunInfo& info : source.list_runs()) {
    if (known.count(info.id)) continue;   // appending the same store twice adds nothing
    StoredRun run = source.load_run(info.id);
    // begin_run dates the run by provenance.started_at: keep the night's own date.
    if (run.provenance.started_at.empty()) run.provenance.started_at = info.started_at;
    history.begin_run(info.id, run.matrix, run.provenance);
    for (const TrialResult& trial : run.trials) history.record_trial(info.id, trial);
    history.finish_run(info.id, info.status.empty() ? "complete" : info.status);
    appended.push_back(info.id);
  }
  return appended;
}

}  // namespace hangbench::history
