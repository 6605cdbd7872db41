// One provenance and one trial list out of the shards' (already checked) runs.
#include <algorithm>
#include <map>
#include <set>

#include "hangbench/merge.hpp"
#include "hangbench/provenance.hpp"

namespace hangbench {
namespace {

std::string join(const std::set<std::string>& values, const std::string& separator) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : separator) + v;
  return out;
}

}  // namespace

Provenance merge_provenance(const std::vector<ShardRun>& shards) {
  Provenance merged = shards.front().provenance;
  std::set<std::string> hosts, kernels, started;
  std::map<std::string, std::set<std::string>> environment;
  for (const auto& s : shards) {
    hosts.insert(s.provenance.host);
    kernels.insert(s.provenance.kernel);
    if (!s.provenance.started_at.empty()) started.insert(s.provenance.started_at);
    for (const auto& [name, value] : s.provenance.environment) environment[name].insert(value);
  }
  merged.host = join(hosts, ", ");
  merged.kernel = join(kernels, ", ");
  if (!started.empty()) merged.started_at = *started.begin();  // ISO 8601 sorts as time
  merged.environment.clear();
  // The merge's own command, and every shard's, so that the report says what made it.
  merged.argv = command_line();
  std::vector<const ShardRun*> ordered;
  for (const auto& s : shards) ordered.push_back(&s);
  std::sort(ordered.begin(), ordered.end(),
            [](const ShardRun* a, const ShardRun* b) { return a->shard.index < b->shard.index; });
  merged.shard_commands.clear();
  for (const ShardRun* s : ordered) {
    std::string command;
    for (const auto& word : s->provenance.argv) command += (command.empty() ? "" : " ") + word;
    merged.shard_commands.push_back(command.empty() ? "shard " + to_string(s->shard) + ": not recorded" : command);
  }
  // CUDA_VISIBLE_DEVICES, say, differs per Slurm task: shown, not refused.
  for (const auto& [name, values] : environment) merged.environment[name] = join(values, " | ");
  return merged;
}

std::vector<TrialResult> merge_trials(const std::vector<ShardRun>& shards) {
  const Matrix& matrix = shards.front().matrix;
  std::map<std::string, size_t> cell_order;
  for (size_t i = 0; i < matrix.cells.size(); ++i) cell_order[matrix.cells[i].id] = i;
  std::vector<TrialResult> trials;
  for (const auto& s : shards) {
    for (const auto& t : s.trials) {
      trials.push_back(t);
      if (trials.back().host.empty()) trials.back().host = s.provenance.host;  // stores made before per-trial hosts
    }
  }
  std::sort(trials.begin(), trials.end(), [&](const TrialResult& a, const TrialResult& b) {
    size_t oa = cell_order.at(a.cell_id), ob = cell_order.at(b.cell_id);
    return oa != ob ? oa < ob : a.index < b.index;
  });
  return trials;
}

}  // namespace hangbench
