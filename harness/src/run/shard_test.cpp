// run --shard K/N: the shares of the plan are disjoint, cover it, and are balanced.
#include "hangbench/shard.hpp"

#include <gtest/gtest.h>

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
