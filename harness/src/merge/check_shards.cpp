// Everything that would make the merged statistics differ from an unsharded
// run's is refused here, before anything is written.
#include <fmt/format.h>

#include <map>
#include <set>

#include "hangbench/matrix.hpp"
#include "hangbench/merge.hpp"

namespace hangbench {
namespace {

std::string trial_name(const TrialKey& key) { return key.first + " #" + std::to_string(key.second); }

std::string shard_name(const ShardRun& s) { return "shard " + to_string(s.shard) + " (" + s.store_path + ")"; }

// The matrix as run: the path it was given by may differ between jobs, the content may not.
nlohmann::json comparable_matrix(const Matrix& m) {
  nlohmann::json j = m;
  j.erase("path");
  return j;
}

void check_same_run(const ShardRun& first, const ShardRun& other) {
  auto differ = [&](const std::string& what, const std::string& a, const std::string& b) {
    throw ConfigError(
        "", 0, fmt::format("{} and {} differ in {}: '{}' vs '{}'", shard_name(first), shard_name(other), what, a, b));
  };
  if (first.shard.count != other.shard.count) {
    differ("shard count", std::to_string(first.shard.count), std::to_string(other.shard.count));
  }
  const Provenance& a = first.provenance;
  const Provenance& b = other.provenance;
  if (a.matrix_sha256 != b.matrix_sha256) differ("matrix SHA-256", a.matrix_sha256, b.matrix_sha256);
  if (comparable_matrix(first.matrix) != comparable_matrix(other.matrix)) {
    differ("matrix (cells, trials, timeouts after --trials/--filter/--timeout)", first.matrix.name, other.matrix.name);
  }
  if (a.hangbench_version != b.hangbench_version) differ("hangbench version", a.hangbench_version, b.hangbench_version);
  if (a.hangbench_commit != b.hangbench_commit) differ("hangbench commit", a.hangbench_commit, b.hangbench_commit);
  if (a.gpu != b.gpu) differ("GPU", a.gpu, b.gpu);
  if (a.driver != b.driver) differ("GPU driver", a.driver, b.driver);
  if (a.library_hashes != b.library_hashes) {
    for (const auto& [file, digest] : a.library_hashes) {
      auto it = b.library_hashes.find(file);
      differ("the SHA-256 of " + file, digest, it == b.library_hashes.end() ? "(not hashed)" : it->second);
    }
    differ("hashed libraries", std::to_string(a.library_hashes.size()), std::to_string(b.library_hashes.size()));
  }
}

// "a #1, b #2 and 3 more"
std::string list_some(const std::vector<TrialKey>& keys) {
  std::string out;
  size_t shown = std::min<size_t>(keys.size(), 5);
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + trial_name(keys[i]);
  if (keys.size() > shown) out += fmt::format(" and {} more", keys.size() - shown);
  return out;
}

}  // namespace

void check_shards(const std::vector<ShardRun>& shards) {
  if (shards.empty()) throw UsageError("no shard stores given");
  std::map<int, const ShardRun*> by_index;
  for (const auto& s : shards) {
    check_same_run(shards.front(), s);
    auto [it, fresh] = by_index.emplace(s.shard.index, &s);
    if (!fresh) {
      std::string example =
          s.trials.empty() ? "" : ", each with trial " + trial_name({s.trials[0].cell_id, s.trials[0].index});
      throw UsageError(fmt::format("shard {} given twice: {} and {}{} (a duplicate trial)", to_string(s.shard),
                                   it->second->store_path, s.store_path, example));
    }
  }
  int count = shards.front().shard.count;
  std::vector<std::string> missing_shards;
  for (int k = 0; k < count; ++k) {
    if (!by_index.count(k)) missing_shards.push_back(to_string(Shard{k, count}));
  }

  auto owners = shard_owners(shards.front().matrix, count);
  std::map<TrialKey, const ShardRun*> seen;
  for (const auto& s : shards) {
    for (const auto& t : s.trials) {
      TrialKey key{t.cell_id, t.index};
      auto owner = owners.find(key);
      if (owner == owners.end()) {
        throw UsageError(fmt::format("trial {} of {} is not in the matrix", trial_name(key), shard_name(s)));
      }
      if (owner->second != s.shard.index) {
        throw UsageError(fmt::format("trial {} of {} belongs to shard {}", trial_name(key), shard_name(s),
                                     to_string(Shard{owner->second, count})));
      }
      auto [it, fresh] = seen.emplace(key, &s);
      if (!fresh) {
        throw UsageError(fmt::format("trial {} is recorded twice, in {} and {}", trial_name(key),
                                     shard_name(*it->second), shard_name(s)));
      }
    }
  }
  std::vector<TrialKey> missing;
  for (const auto& [key, owner] : owners) {
    if (!seen.count(key)) missing.push_back(key);
  }
  if (!missing_shards.empty()) {
    std::string list;
    for (const auto& m : missing_shards) list += (list.empty() ? "" : ", ") + m;
    throw UsageError(fmt::format("shard(s) {} missing ({} trials: {})", list, missing.size(), list_some(missing)));
  }
  if (!missing.empty()) {
    throw UsageError(fmt::format("{} trial(s) missing (an interrupted shard? `run --resume` it): {}", missing.size(),
                                 list_some(missing)));
  }
}

}  // namespace hangbench
