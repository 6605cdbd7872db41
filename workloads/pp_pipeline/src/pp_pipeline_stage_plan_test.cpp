// Schedule logic of the PP workload: which messages, in which order, and the
// rule that a stage posts its activation receive only after the schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "stage_plan.hpp"

namespace pp {
namespace {

std::vector<ActionKind> kinds_of_step(const std::vector<Action>& plan, int step) {
  std::vector<ActionKind> kinds;
  for (const Action& a : plan) {
    if (a.step == step) kinds.push_back(a.kind);
  }
  return kinds;
}

TEST(PpStagePlan, FirstStageSendsScheduleThenSampleStateThenActivation) {
  const auto plan = plan_stage(0, {4, 2});
  EXPECT_EQ(kinds_of_step(plan, 0),
            (std::vector<ActionKind>{ActionKind::ComputeStage, ActionKind::TakeExecutorGil, ActionKind::SendSchedule,
                                     ActionKind::SendSampleState, ActionKind::PostActivationSend,
                                     ActionKind::FirstColdModuleCall, ActionKind::ReleaseExecutorGil,
                                     ActionKind::WaitMessageSends, ActionKind::WaitActivationSend}));
  // Later steps do not touch a cold module again.
  const auto later = kinds_of_step(plan, 1);
  EXPECT_EQ(std::count(later.begin(), later.end(), ActionKind::FirstColdModuleCall), 0);
  EXPECT_EQ(std::count(later.begin(), later.end(), ActionKind::TakeExecutorGil), 0);
  for (const Action& a : plan) {
    if (a.peer != -1) {
      EXPECT_EQ(a.peer, 1);
    }
  }
}

TEST(PpStagePlan, LastStageOnlyReceivesAndPostsItsReceiveAfterTheSchedule) {
  const auto plan = plan_stage(3, {4, 1});
  EXPECT_EQ(plan, (std::vector<Action>{{ActionKind::ReceiveSchedule, 0, 2},
                                       {ActionKind::ReceiveSampleState, 0, 2},
                                       {ActionKind::PostActivationReceive, 0, 2},
                                       {ActionKind::WaitActivationReceive, 0, 2},
                                       {ActionKind::ComputeStage, 0, -1}}));
}

TEST(PpStagePlan, MiddleStageReceivesBeforeItSends) {
  const auto plan = plan_stage(1, {3, 1});
  auto position = [&](ActionKind k) {
    return std::find_if(plan.begin(), plan.end(), [&](const Action& a) { return a.kind == k; }) - plan.begin();
  };
  EXPECT_LT(position(ActionKind::WaitActivationReceive), position(ActionKind::SendSchedule));
  EXPECT_EQ(plan[position(ActionKind::SendSchedule)].peer, 2);
  EXPECT_EQ(plan[position(ActionKind::ReceiveSchedule)].peer, 0);
}

TEST(PpStagePlan, EveryShapeSatisfiesTheInvariantsAndLinksMatch) {
  for (int stages = 2; stages <= 8; ++stages) {
    for (int steps = 1; steps <= 4; ++steps) {
      const PipelineShape shape{stages, steps};
      for (int s = 0; s < stages; ++s) {
        const auto plan = plan_stage(s, shape);
        EXPECT_TRUE(check_stage_plan(plan, s, shape).empty()) << "N=" << stages << " steps=" << steps << " stage=" << s
                                                              << ": " << check_stage_plan(plan, s, shape).front();
        if (s + 1 < stages) {
          EXPECT_TRUE(check_link(plan, plan_stage(s + 1, shape), s).empty());
        }
      }
    }
  }
}

TEST(PpStagePlan, CheckerCatchesAReceivePostedBeforeTheSchedule) {
  const PipelineShape shape{2, 1};
  auto plan = plan_stage(1, shape);
  auto receive = std::find_if(plan.begin(), plan.end(),
                              [](const Action& a) { return a.kind == ActionKind::PostActivationReceive; });
  std::rotate(plan.begin(), receive, receive + 1);  // move it to the front
  const auto problems = check_stage_plan(plan, 1, shape);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("after the schedule"), std::string::npos) << problems.front();
}

TEST(PpStagePlan, CheckerCatchesMessagesInTheWrongOrder) {
  const PipelineShape shape{2, 1};
  auto sender = plan_stage(0, shape);
  auto schedule =
      std::find_if(sender.begin(), sender.end(), [](const Action& a) { return a.kind == ActionKind::SendSchedule; });
  ASSERT_EQ((schedule + 1)->kind, ActionKind::SendSampleState);
  std::iter_swap(schedule, schedule + 1);  // sample state before schedule
  EXPECT_FALSE(check_link(sender, plan_stage(1, shape), 0).empty());
}

TEST(PpStagePlan, CheckerCatchesAGilReleasedBeforeTheColdCall) {
  const PipelineShape shape{2, 1};
  auto plan = plan_stage(0, shape);
  auto cold =
      std::find_if(plan.begin(), plan.end(), [](const Action& a) { return a.kind == ActionKind::FirstColdModuleCall; });
  std::iter_swap(cold, cold + 1);  // release the GIL first, then the cold call
  EXPECT_FALSE(check_stage_plan(plan, 0, shape).empty());
}

TEST(PpStagePlan, RejectsBadShapes) {
  EXPECT_THROW(plan_stage(0, {1, 1}), std::invalid_argument);
  EXPECT_THROW(plan_stage(0, {2, 0}), std::invalid_argument);
  EXPECT_THROW(plan_stage(2, {2, 1}), std::invalid_argument);
  EXPECT_THROW(plan_stage(-1, {2, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace pp
