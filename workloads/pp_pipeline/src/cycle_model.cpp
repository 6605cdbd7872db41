#include "cycle_model.hpp"

#include <cstddef>

namespace pp {

bool cold_call_blocks(ModuleLoading loading, ColdCall call) {
  // facts.md (H200): a module load blocks under both modes; a first launch only
  // under LAZY, because EAGER loaded every module when the context was created.
  return call == ColdCall::ModuleLoad || loading == ModuleLoading::Lazy;
}

namespace {

struct StageState {
  std::vector<Action> plan;
  std::size_t next = 0;  // index of the action it is executing (or blocked on)
  bool done() const { return next >= plan.size(); }
  const Action& current() const { return plan[next]; }
  // Whether `kind` for `step` has already completed.
  bool finished(ActionKind kind, int step) const {
    for (std::size_t i = 0; i < next; ++i) {
      if (plan[i].kind == kind && plan[i].step == step) return true;
    }
    return false;
  }
};

bool inside_mpi(ActionKind k) {
  return k == ActionKind::ReceiveSchedule || k == ActionKind::ReceiveSampleState || k == ActionKind::WaitMessageSends;
}

}  // namespace

ModelResult simulate_pipeline(const PipelineShape& shape, ProgressSource progress, ModuleLoading loading,
                              ColdCall call) {
  std::vector<std::vector<Action>> plans;
  for (int s = 0; s < shape.num_stages; ++s) plans.push_back(plan_stage(s, shape));
  return simulate_plans(plans, progress, loading, call);
}

ModelResult simulate_plans(const std::vector<std::vector<Action>>& plans, ProgressSource progress,
                           ModuleLoading loading, ColdCall call) {
  const int num_stages = static_cast<int>(plans.size());
  std::vector<StageState> stages(plans.size());
  for (int s = 0; s < num_stages; ++s) stages[s].plan = plans[s];

  auto holds_gil = [&](const StageState& st) {
    int held = 0;
    for (std::size_t i = 0; i < st.next; ++i) {
      if (st.plan[i].kind == ActionKind::TakeExecutorGil) ++held;
      if (st.plan[i].kind == ActionKind::ReleaseExecutorGil) --held;
    }
    return held > 0;
  };
  // Can a rendezvous send posted by stage `s` move data right now?
  auto sender_progresses = [&](int s) {
    const StageState& st = stages[s];
    if (st.done() || inside_mpi(st.current().kind)) return true;
    if (progress == ProgressSource::Native) return true;
    if (progress == ProgressSource::Pump) return !holds_gil(st);
    return false;
  };
  auto activation_in_flight = [&](int s, int step) {
    const StageState& next = stages[s + 1];
    return stages[s].finished(ActionKind::PostActivationSend, step) &&
           !next.finished(ActionKind::PostActivationReceive, step);
  };

  auto can_complete = [&](int s) {
    const Action& a = stages[s].current();
    switch (a.kind) {
      case ActionKind::ReceiveSchedule:
        return stages[a.peer].finished(ActionKind::SendSchedule, a.step) && sender_progresses(a.peer);
      case ActionKind::ReceiveSampleState:
        return stages[a.peer].finished(ActionKind::SendSampleState, a.step) && sender_progresses(a.peer);
      case ActionKind::WaitActivationReceive:
        return stages[a.peer].finished(ActionKind::PostActivationSend, a.step);
      case ActionKind::FirstColdModuleCall:
        return !cold_call_blocks(loading, call) || !activation_in_flight(s, a.step);
      case ActionKind::WaitMessageSends:
        return stages[a.peer].finished(ActionKind::ReceiveSampleState, a.step);
      case ActionKind::WaitActivationSend:
        return stages[a.peer].finished(ActionKind::PostActivationReceive, a.step);
      default:
        return true;  // local work and posting nonblocking operations never wait
    }
  };

  for (bool moved = true; moved;) {
    moved = false;
    for (int s = 0; s < num_stages; ++s) {
      if (!stages[s].done() && can_complete(s)) {
        ++stages[s].next;
        moved = true;
      }
    }
  }

  ModelResult result;
  result.completed = true;
  for (int s = 0; s < num_stages; ++s) {
    if (stages[s].done()) continue;
    result.completed = false;
    const Action& a = stages[s].current();
    result.stuck.push_back("stage " + std::to_string(s) + ": " + to_string(a.kind) + " step " + std::to_string(a.step));
  }
  return result;
}

}  // namespace pp
