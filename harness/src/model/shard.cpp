// Shards are positions modulo N: they depend only on the matrix (after
// --trials/--filter), which every shard stores and merge compares.
#include "hangbench/shard.hpp"

#include <charconv>

#include "hangbench/errors.hpp"

namespace hangbench {
namespace {

bool parse_int(std::string_view text, int& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Every pair with its shard: the pairs counted cell by cell (cell order of the
// matrix, then index), the pair at count p going to shard p mod N. A cell's
// trials go round the shards, so every shard gets every cell (when it has N
// trials or more), each cell's share differs by at most one trial between
// shards, and so do the shards' totals. Whole cells never land on one host.
template <typename Visit>
void for_each_owned(const Matrix& matrix, int count, Visit visit) {
  long position = 0;
  for (const auto& cell : matrix.cells) {
    for (int index = 0; index < cell.trials; ++index) visit(cell.id, index, static_cast<int>(position++ % count));
  }
}

}  // namespace

Shard parse_shard(const std::string& text) {
  auto slash = text.find('/');
  Shard s;
  if (slash == std::string::npos || !parse_int(std::string_view(text).substr(0, slash), s.index) ||
      !parse_int(std::string_view(text).substr(slash + 1), s.count) || s.count < 1 || s.index < 0 ||
      s.index >= s.count) {
    throw UsageError("--shard wants K/N with 0 <= K < N (K as SLURM_ARRAY_TASK_ID counts), got '" + text + "'");
  }
  return s;
}

std::string to_string(const Shard& shard) { return std::to_string(shard.index) + "/" + std::to_string(shard.count); }

std::map<TrialKey, int> shard_owners(const Matrix& matrix, int count) {
  std::map<TrialKey, int> out;
  for_each_owned(matrix, count, [&](const std::string& cell, int index, int owner) { out[{cell, index}] = owner; });
  return out;
}

ShardOwnership::ShardOwnership(const Matrix& matrix, const Shard& shard) : shard_(shard) {
  long long position = 0;
  for (const auto& cell : matrix.cells) {
    offsets_.push_back(position);
    trials_.push_back(cell.trials);
    position += cell.trials;
  }
}

int ShardOwnership::first_owned(size_t cell) const {
  const long long r = offsets_[cell] % shard_.count;
  return static_cast<int>((shard_.index - r + shard_.count) % shard_.count);
}

long ShardOwnership::owned(size_t cell) const {
  const int first = first_owned(cell);
  if (first >= trials_[cell]) return 0;
  return (trials_[cell] - 1 - first) / shard_.count + 1;
}

std::set<TrialKey> trials_of_shard(const Matrix& matrix, const Shard& shard) {
  std::set<TrialKey> out;
  for_each_owned(matrix, shard.count, [&](const std::string& cell, int index, int owner) {
    if (owner == shard.index) out.emplace(cell, index);
  });
  return out;
}

std::set<TrialKey> trials_outside_shard(const Matrix& matrix, const Shard& shard) {
  std::set<TrialKey> out;
  for_each_owned(matrix, shard.count, [&](const std::string& cell, int index, int owner) {
    if (owner != shard.index) out.emplace(cell, index);
  });
  return out;
}

}  // namespace hangbench
