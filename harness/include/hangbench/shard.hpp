// `hangbench run --shard K/N`: a deterministic share of a matrix's (cell, trial)
// pairs, so that N jobs (a Slurm job array) run one matrix between them and
// `hangbench merge` makes one run of their stores again.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hangbench/model.hpp"

namespace hangbench {

struct Shard {
  int index = 0;  // K, 0-based like SLURM_ARRAY_TASK_ID
  int count = 1;  // N
  bool operator==(const Shard&) const = default;
};

// "K/N" with 0 <= K < N; throws ConfigError naming the text otherwise.
Shard parse_shard(const std::string& text);
std::string to_string(const Shard& shard);  // "K/N"

// The pairs counted cell by cell (matrix order, then index): the pair at count p
// belongs to shard p mod N. Every shard gets every cell that has N trials or
// more, and shards (and each cell's share) differ by at most one trial.
using TrialKey = std::pair<std::string, int>;  // (cell id, trial index)
// The owning shard of every planned pair of `matrix` split into `count` shards.
std::map<TrialKey, int> shard_owners(const Matrix& matrix, int count);
std::set<TrialKey> trials_of_shard(const Matrix& matrix, const Shard& shard);
std::set<TrialKey> trials_outside_shard(const Matrix& matrix, const Shard& shard);

// The same ownership, trial by trial, with nothing per trial held: what a run and
// a dry run use (a run may plan millions of trials).
class ShardOwnership {
 public:
  ShardOwnership(const Matrix& matrix, const Shard& shard);
  // Whether the shard owns trial `index` of the cell at `cell` (its position in matrix.cells).
  bool owns(size_t cell, int index) const {
    return static_cast<int>((offsets_[cell] + index) % shard_.count) == shard_.index;
  }
  long owned(size_t cell) const;             // how many of the cell's trials the shard owns
  int first_owned(size_t cell) const;        // the cell's first owned index (>= its trials: none)
  int step() const { return shard_.count; }  // owned indices of a cell are first, first + step, ...

 private:
  Shard shard_;
  std::vector<long long> offsets_;  // trials of the cells before each
  std::vector<int> trials_;
};

}  // namespace hangbench
