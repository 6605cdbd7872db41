// What one pipeline stage does, in order, for each step: the schedule logic of
// the PP workload, kept free of MPI, CUDA and Python so that CI can check it.
//
// Per step, stage s (of N) does:
//   s > 0    : receive schedule, receive sample state   (MPI, from s-1)
//              post activation receive, wait for it      (NCCL / spin release)
//   all      : compute its part of the step
//   s < N-1  : [step 0: the executor takes the GIL, as Python executor code holds it]
//              send schedule, send sample state           (nonblocking MPI, to s+1)
//              post activation send                       (NCCL / spin kernel)
//              [step 0: first call into a cold CUDA module, then release the GIL]
//              wait for the message sends, wait for the activation send
// The rule that makes the PP deadlock possible: a stage posts its activation
// receive only after it holds the schedule for that step.
#pragma once

#include <string>
#include <vector>

namespace pp {

enum class ActionKind {
  ReceiveSchedule,
  ReceiveSampleState,
  PostActivationReceive,
  WaitActivationReceive,
  ComputeStage,
  TakeExecutorGil,
  SendSchedule,
  SendSampleState,
  PostActivationSend,
  FirstColdModuleCall,
  ReleaseExecutorGil,
  WaitMessageSends,
  WaitActivationSend,
};

std::string to_string(ActionKind kind);

struct Action {
  ActionKind kind;
  int step = 0;
  int peer = -1;  // the other stage, or -1 when the action is local
  bool operator==(const Action&) const = default;
};

struct PipelineShape {
  int num_stages = 2;  // >= 2
  int num_steps = 1;   // >= 1
};

// The ordered actions of `stage`. Throws std::invalid_argument on a bad shape or stage.
std::vector<Action> plan_stage(int stage, const PipelineShape& shape);

// Invariants of one stage's plan; each violation is one readable sentence.
std::vector<std::string> check_stage_plan(const std::vector<Action>& plan, int stage, const PipelineShape& shape);

// The messages `sender` sends to `sender + 1` must be exactly the ones the
// receiver expects, in the same order (MPI matches by order within a tag).
std::vector<std::string> check_link(const std::vector<Action>& sender_plan, const std::vector<Action>& receiver_plan,
                                    int sender);

}  // namespace pp
