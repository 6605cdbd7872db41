#include "stage_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pp {

std::string to_string(ActionKind kind) {
  switch (kind) {
    case ActionKind::ReceiveSchedule:
      return "receive_schedule";
    case ActionKind::ReceiveSampleState:
      return "receive_sample_state";
    case ActionKind::PostActivationReceive:
      return "post_activation_receive";
    case ActionKind::WaitActivationReceive:
      return "wait_activation_receive";
    case ActionKind::ComputeStage:
      return "compute_stage";
    case ActionKind::TakeExecutorGil:
      return "take_executor_gil";
    case ActionKind::ReleaseExecutorGil:
      return "release_executor_gil";
    case ActionKind::SendSchedule:
      return "send_schedule";
    case ActionKind::SendSampleState:
      return "send_sample_state";
    case ActionKind::PostActivationSend:
      return "post_activation_send";
    case ActionKind::FirstColdModuleCall:
      return "first_cold_module_call";
    case ActionKind::WaitMessageSends:
      return "wait_message_sends";
    case ActionKind::WaitActivationSend:
      return "wait_activation_send";
  }
  return "unknown";
}

std::vector<Action> plan_stage(int stage, const PipelineShape& shape) {
  if (shape.num_stages < 2) throw std::invalid_argument("a pipeline needs at least 2 stages");
  if (shape.num_steps < 1) throw std::invalid_argument("a pipeline needs at least 1 step");
  if (stage < 0 || stage >= shape.num_stages) {
    throw std::invalid_argument("stage " + std::to_string(stage) + " outside 0.." +
                                std::to_string(shape.num_stages - 1));
  }
  const bool has_previous = stage > 0;
  const bool has_next = stage + 1 < shape.num_stages;
  const int previous = stage - 1;
  const int next = stage + 1;
  std::vector<Action> plan;
  for (int step = 0; step < shape.num_steps; ++step) {
    if (has_previous) {
      plan.push_back({ActionKind::ReceiveSchedule, step, previous});
      plan.push_back({ActionKind::ReceiveSampleState, step, previous});
      // Only now does the stage know what to receive: the rule of the workload.
      plan.push_back({ActionKind::PostActivationReceive, step, previous});
      plan.push_back({ActionKind::WaitActivationReceive, step, previous});
    }
    plan.push_back({ActionKind::ComputeStage, step, -1});
    if (has_next) {
      // The executor is Python code: it holds the GIL from posting the messages
      // to the cold call, so a pump gets no chance to probe in between.
      if (step == 0) plan.push_back({ActionKind::TakeExecutorGil, step, -1});
      plan.push_back({ActionKind::SendSchedule, step, next});
      plan.push_back({ActionKind::SendSampleState, step, next});
      plan.push_back({ActionKind::PostActivationSend, step, next});
      // The executor's first touch of a not-yet-loaded module happens while the
      // activation send is in flight and before the message sends are waited on.
      if (step == 0) {
        plan.push_back({ActionKind::FirstColdModuleCall, step, -1});
        plan.push_back({ActionKind::ReleaseExecutorGil, step, -1});
      }
      plan.push_back({ActionKind::WaitMessageSends, step, next});
      plan.push_back({ActionKind::WaitActivationSend, step, next});
    }
  }
  return plan;
}

namespace {

// Index of the first action of `kind` in `step`, or -1.
long index_of(const std::vector<Action>& plan, ActionKind kind, int step) {
  auto it = std::find_if(plan.begin(), plan.end(), [&](const Action& a) { return a.kind == kind && a.step == step; });
  return it == plan.end() ? -1 : static_cast<long>(it - plan.begin());
}

bool is_send(ActionKind k) { return k == ActionKind::SendSchedule || k == ActionKind::SendSampleState; }
bool is_receive(ActionKind k) { return k == ActionKind::ReceiveSchedule || k == ActionKind::ReceiveSampleState; }
ActionKind matching_receive(ActionKind send) {
  return send == ActionKind::SendSchedule ? ActionKind::ReceiveSchedule : ActionKind::ReceiveSampleState;
}

}  // namespace

std::vector<std::string> check_stage_plan(const std::vector<Action>& plan, int stage, const PipelineShape& shape) {
  std::vector<std::string> problems;
  auto complain = [&](int step, const std::string& what) {
    problems.push_back("stage " + std::to_string(stage) + " step " + std::to_string(step) + ": " + what);
  };
  const bool has_previous = stage > 0;
  const bool has_next = stage + 1 < shape.num_stages;
  for (int step = 0; step < shape.num_steps; ++step) {
    const long schedule = index_of(plan, ActionKind::ReceiveSchedule, step);
    const long post_receive = index_of(plan, ActionKind::PostActivationReceive, step);
    const long post_send = index_of(plan, ActionKind::PostActivationSend, step);
    const long cold = index_of(plan, ActionKind::FirstColdModuleCall, step);
    const long wait_messages = index_of(plan, ActionKind::WaitMessageSends, step);
    const long send_schedule = index_of(plan, ActionKind::SendSchedule, step);
    if (has_previous != (schedule >= 0)) complain(step, "schedule receive present iff stage > 0");
    if (has_previous && (post_receive < 0 || post_receive < schedule)) {
      complain(step, "activation receive must be posted after the schedule arrived");
    }
    if (has_next != (send_schedule >= 0)) complain(step, "schedule send present iff not last stage");
    if (has_next && !(send_schedule < post_send && post_send < wait_messages)) {
      complain(step, "schedule send, activation send, then wait for the message sends");
    }
    if (cold >= 0 && !(post_send < cold && cold < wait_messages)) {
      complain(step, "the cold module call must fall between activation send and message wait");
    }
    if (cold >= 0 && step != 0) complain(step, "only the first step touches a cold module");
    const long take_gil = index_of(plan, ActionKind::TakeExecutorGil, step);
    const long release_gil = index_of(plan, ActionKind::ReleaseExecutorGil, step);
    if (cold >= 0 &&
        !(take_gil >= 0 && take_gil < send_schedule && cold < release_gil && release_gil < wait_messages)) {
      complain(step, "the GIL is held from before the schedule send until after the cold call");
    }
    if (step == 0 && has_next && cold < 0) complain(step, "a sending stage makes the cold call");
  }
  return problems;
}

std::vector<std::string> check_link(const std::vector<Action>& sender_plan, const std::vector<Action>& receiver_plan,
                                    int sender) {
  std::vector<std::pair<ActionKind, int>> sent;
  std::vector<std::pair<ActionKind, int>> expected;
  for (const Action& a : sender_plan) {
    if (is_send(a.kind) && a.peer == sender + 1) sent.emplace_back(matching_receive(a.kind), a.step);
  }
  for (const Action& a : receiver_plan) {
    if (is_receive(a.kind) && a.peer == sender) expected.emplace_back(a.kind, a.step);
  }
  std::vector<std::string> problems;
  if (sent != expected) {
    problems.push_back("messages from stage " + std::to_string(sender) + " (" + std::to_string(sent.size()) +
                       ") do not match what stage " + std::to_string(sender + 1) + " receives (" +
                       std::to_string(expected.size()) + ") in kind and order");
  }
  return problems;
}

}  // namespace pp
