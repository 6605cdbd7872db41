// LivePhaseTimeouts (harness/src/exec/live_phase_timeouts.cpp): a run lowers a
// phase's timeout for every trial in flight; it never raises one.
#include <gtest/gtest.h>

#include "hangbench/executor.hpp"

namespace {

using hangbench::LivePhaseTimeouts;

TEST(LivePhaseTimeouts, LowersButNeverRaises) {
  LivePhaseTimeouts live;
  EXPECT_FALSE(live.get("teardown_begin"));
  const int before = live.version();
  live.lower("teardown_begin", 2.5, "learned");
  ASSERT_TRUE(live.get("teardown_begin"));
  EXPECT_DOUBLE_EQ(live.get("teardown_begin")->seconds, 2.5);
  EXPECT_EQ(live.get("teardown_begin")->why, "learned");
  EXPECT_NE(live.version(), before);

  const int lowered = live.version();
  live.lower("teardown_begin", 4.0, "higher");  // ignored
  EXPECT_DOUBLE_EQ(live.get("teardown_begin")->seconds, 2.5);
  EXPECT_EQ(live.version(), lowered);
  live.lower("teardown_begin", 2.0, "lower");
  EXPECT_DOUBLE_EQ(live.get("teardown_begin")->seconds, 2.0);
  EXPECT_EQ(live.get("teardown_begin")->why, "lower");
}

TEST(LivePhaseTimeouts, AppliesOnlyToPhasesTheCellTimesAndOnlyDownwards) {
  LivePhaseTimeouts live;
  live.lower("teardown_begin", 2.0, "learned");
  live.lower("init_done", 1.0, "other");
  const auto applied = live.applied_to({{"teardown_begin", 3.0}, {"work_done", 9.0}});
  EXPECT_EQ(applied.size(), 2u);  // init_done is not added: the cell does not time it
  EXPECT_DOUBLE_EQ(applied.at("teardown_begin"), 2.0);
  EXPECT_DOUBLE_EQ(applied.at("work_done"), 9.0);
  EXPECT_DOUBLE_EQ(live.applied_to({{"teardown_begin", 1.5}}).at("teardown_begin"), 1.5);  // the cell's is lower
}

}  // namespace
