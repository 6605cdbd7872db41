// run --shard K/N: the shares of the plan are disjoint, cover it, and are balanced.
#include "hangbench/shard.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "hangbench/matrix.hpp"
#include "hangbench/scheduler.hpp"

namespace hangbench {
namespace {

Matrix three_cells(int trials_a, int trials_b, int trials_c) {
  Matrix m;
  for (auto [id, n] : {std::pair{"a", trials_a}, {"b", trials_b}, {"c", trials_c}}) {
    Cell c;
    c.id = id;
    c.trials = n;
    m.cells.push_back(c);
  }
  return m;
}

TEST(Shard, ParsesKOverN) {
  EXPECT_EQ(parse_shard("0/4"), (Shard{0, 4}));
  EXPECT_EQ(parse_shard("3/4"), (Shard{3, 4}));
  EXPECT_EQ(to_string(Shard{2, 8}), "2/8");
}

TEST(Shard, RefusesWhatIsNotKOverN) {
  for (const char* bad : {"", "4/4", "-1/4", "1/0", "1", "a/4", "1/4x", "1//4", "/4"}) {
    EXPECT_THROW(parse_shard(bad), UsageError) << bad;
  }
  try {
    parse_shard("5/4");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'5/4'"), std::string::npos) << e.what();
  }
}

TEST(Shard, SharesAreDisjointCoverThePlanAndDifferByAtMostOne) {
  Matrix m = three_cells(20, 7, 1);
  auto plan = plan_trials(m);  // what an unsharded run would run
  for (int n : {1, 2, 3, 4, 8, 29, 40}) {
    std::set<TrialKey> all;
    size_t smallest = plan.size(), largest = 0;
    for (int k = 0; k < n; ++k) {
      auto share = trials_of_shard(m, {k, n});
      smallest = std::min(smallest, share.size());
      largest = std::max(largest, share.size());
      for (const auto& key : share) EXPECT_TRUE(all.insert(key).second) << key.first << " #" << key.second;
      auto outside = trials_outside_shard(m, {k, n});
      EXPECT_EQ(share.size() + outside.size(), plan.size());
    }
    EXPECT_EQ(all.size(), plan.size()) << n << " shards";
    EXPECT_LE(largest - smallest, 1u) << n << " shards";
  }
}

// The cursor a run walks (no trial listed up front) yields exactly the shard's
// share, in plan order, minus what was recorded; its counts agree with what it yields.
TEST(Shard, ThePlanCursorYieldsTheShareTrialByTrial) {
  Matrix m = three_cells(20, 7, 1);
  for (int n : {1, 3, 4, 29}) {
    for (int k = 0; k < n; ++k) {
      const TrialSkip recorded = {{m.cells[0].id, 0}, {m.cells[1].id, 5}, {"gone", 3}};
      PlanCursor cursor(m, recorded, Shard{k, n});
      std::set<TrialKey> seen;
      std::map<std::string, long> per_cell;
      int last_index = 0;
      while (auto t = cursor.next()) {
        EXPECT_GE(t->index, last_index);  // index 0 of every cell, then index 1, ...
        last_index = t->index;
        EXPECT_TRUE(seen.insert({t->cell->id, t->index}).second);
        ++per_cell[t->cell->id];
      }
      std::set<TrialKey> expected = trials_of_shard(m, {k, n});
      for (const auto& key : recorded) expected.erase(key);
      EXPECT_EQ(seen, expected) << k << "/" << n;
      EXPECT_EQ(cursor.total(), static_cast<long>(expected.size())) << k << "/" << n;
      for (size_t i = 0; i < m.cells.size(); ++i) EXPECT_EQ(cursor.per_cell()[i], per_cell[m.cells[i].id]);
    }
  }
}

// A plan of ten million trials is counted and started without listing it: the
// cursor's first trial and its totals come from arithmetic, not from a list.
TEST(Shard, AHugePlanIsCountedWithoutBeingListed) {
  Matrix m = three_cells(1, 10000000, 2);
  PlanCursor cursor(m, {}, Shard{1, 3});
  EXPECT_EQ(cursor.total(), 10000003 / 3);  // positions 1, 4, 7, ... of 10,000,003
  auto first = cursor.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->cell->id, m.cells[1].id);
  EXPECT_EQ(first->index, 0);
  ShardOwnership owner(m, Shard{1, 3});
  EXPECT_EQ(owner.owned(0), 0);
  EXPECT_EQ(owner.owned(1), 3333334);  // indices 0, 3, ..., 9999999
  EXPECT_EQ(owner.owned(2), 0);        // positions 10000001 and 10000002
  EXPECT_EQ(owner.first_owned(1), 0);
}

TEST(Shard, EveryShardGetsEveryCellWhenTrialsAllowIt) {
  // Three cells and three shards too: no shard gets a whole cell (one host per cell
  // would confound the cells' comparison with the hosts).
  Matrix same = three_cells(9, 9, 9);
  for (int k = 0; k < 3; ++k) {
    std::map<std::string, int> per_cell;
    for (const auto& [cell, index] : trials_of_shard(same, {k, 3})) per_cell[cell]++;
    EXPECT_EQ(per_cell, (std::map<std::string, int>{{"a", 3}, {"b", 3}, {"c", 3}})) << "shard " << k << " of 3";
  }
  Matrix m = three_cells(20, 20, 20);
  for (int k = 0; k < 4; ++k) {
    std::map<std::string, int> per_cell;
    for (const auto& [cell, index] : trials_of_shard(m, {k, 4})) per_cell[cell]++;
    EXPECT_EQ(per_cell, (std::map<std::string, int>{{"a", 5}, {"b", 5}, {"c", 5}})) << "shard " << k;
  }
}

TEST(Shard, OwnersAgreeWithTheShares) {
  Matrix m = three_cells(5, 3, 4);
  auto owners = shard_owners(m, 3);
  EXPECT_EQ(owners.size(), 12u);
  for (int k = 0; k < 3; ++k) {
    for (const auto& key : trials_of_shard(m, {k, 3})) EXPECT_EQ(owners.at(key), k);
  }
}

}  // namespace
}  // namespace hangbench
