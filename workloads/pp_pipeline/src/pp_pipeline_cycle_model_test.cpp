// The cycle model predicts each matrix cell's outcome from the stage plans; the
// matrix expectations (none and pump hang under LAZY, native and EAGER do not)
// must follow from it for every pipeline depth.
#include <gtest/gtest.h>

#include <algorithm>

#include "cycle_model.hpp"

namespace pp {
namespace {

struct Case {
  ProgressSource progress;
  ModuleLoading loading;
  ColdCall call;
  bool completes;
};

TEST(PpCycleModel, ProgressSourceDecidesTheOutcomeAtEveryDepth) {
  const std::vector<Case> cases = {
      {ProgressSource::None, ModuleLoading::Lazy, ColdCall::Launch, false},
      {ProgressSource::Pump, ModuleLoading::Lazy, ColdCall::Launch, false},
      {ProgressSource::Native, ModuleLoading::Lazy, ColdCall::Launch, true},
      {ProgressSource::None, ModuleLoading::Eager, ColdCall::Launch, true},
      {ProgressSource::Pump, ModuleLoading::Eager, ColdCall::Launch, true},
      {ProgressSource::Native, ModuleLoading::Eager, ColdCall::Launch, true},
      // A runtime module load blocks under EAGER too (facts.md).
      {ProgressSource::None, ModuleLoading::Eager, ColdCall::ModuleLoad, false},
      {ProgressSource::Pump, ModuleLoading::Eager, ColdCall::ModuleLoad, false},
      {ProgressSource::Native, ModuleLoading::Eager, ColdCall::ModuleLoad, true},
  };
  for (int stages = 2; stages <= 6; ++stages) {
    for (const Case& c : cases) {
      const ModelResult r = simulate_pipeline({stages, 3}, c.progress, c.loading, c.call);
      EXPECT_EQ(r.completed, c.completes)
          << "N=" << stages << " " << to_string(c.progress) << " " << to_string(c.loading) << " " << to_string(c.call);
    }
  }
}

TEST(PpCycleModel, DeadlockShowsTheSilhouetteOfTheSeed) {
  const ModelResult r = simulate_pipeline({2, 1}, ProgressSource::Pump, ModuleLoading::Lazy, ColdCall::Launch);
  ASSERT_FALSE(r.completed);
  EXPECT_EQ(r.stuck,
            (std::vector<std::string>{"stage 0: first_cold_module_call step 0", "stage 1: receive_schedule step 0"}));
}

TEST(PpCycleModel, Pp4DeadlockStallsEveryStageBehindStageZero) {
  const ModelResult r = simulate_pipeline({4, 2}, ProgressSource::None, ModuleLoading::Lazy, ColdCall::Launch);
  ASSERT_FALSE(r.completed);
  ASSERT_EQ(r.stuck.size(), 4u);
  EXPECT_EQ(r.stuck[2], "stage 2: receive_schedule step 0");
}

// Why the executor holds the GIL from before the schedule send: a pump that
// could probe between the send and the cold call would deliver the schedule.
TEST(PpCycleModel, PumpBreaksTheCycleIfTheGilIsTakenOnlyAroundTheColdCall) {
  // The stage-0 plan with the GIL taken just before the cold call.
  const PipelineShape shape{2, 1};
  auto plan = plan_stage(0, shape);
  auto take =
      std::find_if(plan.begin(), plan.end(), [](const Action& a) { return a.kind == ActionKind::TakeExecutorGil; });
  auto cold =
      std::find_if(plan.begin(), plan.end(), [](const Action& a) { return a.kind == ActionKind::FirstColdModuleCall; });
  std::rotate(take, take + 1, cold);
  EXPECT_FALSE(check_stage_plan(plan, 0, shape).empty()) << "the checker rejects that order";
  const std::vector<std::vector<Action>> plans = {plan, plan_stage(1, shape)};
  EXPECT_TRUE(simulate_plans(plans, ProgressSource::Pump, ModuleLoading::Lazy, ColdCall::Launch).completed);
  EXPECT_FALSE(simulate_plans(plans, ProgressSource::None, ModuleLoading::Lazy, ColdCall::Launch).completed);
}

TEST(PpCycleModel, ColdCallBlocksOnlyWhereFactsSayItDoes) {
  EXPECT_TRUE(cold_call_blocks(ModuleLoading::Lazy, ColdCall::Launch));
  EXPECT_FALSE(cold_call_blocks(ModuleLoading::Eager, ColdCall::Launch));
  EXPECT_TRUE(cold_call_blocks(ModuleLoading::Lazy, ColdCall::ModuleLoad));
  EXPECT_TRUE(cold_call_blocks(ModuleLoading::Eager, ColdCall::ModuleLoad));
}

}  // namespace
}  // namespace pp
