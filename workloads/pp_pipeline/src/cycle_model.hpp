// A step-by-step model of all stages' plans that predicts whether a run of the
// workload completes or deadlocks. It encodes the four facts of the PP hang:
//   1. a rendezvous MPI send completes only while its sender is inside MPI
//      (blocked in a receive or a wait) or a progress thread probes for it;
//   2. the pump probes only when it can take the GIL, which the executor holds
//      from posting the messages until its cold call returned;
//   3. a cold module call (first launch under LAZY; any module load) blocks
//      while this stage's activation send is still in flight;
//   4. an activation send is in flight until the next stage posts its receive,
//      which it does only after the schedule message arrived.
// The matrix expectations follow from it; tests check it for many shapes.
#pragma once

#include <string>
#include <vector>

#include "run_config.hpp"
#include "stage_plan.hpp"

namespace pp {

struct ModelResult {
  bool completed = false;
  // When deadlocked: what each stage is stuck on ("stage 0: first_cold_module_call step 0").
  std::vector<std::string> stuck;
};

// True when the cold call waits for kernels already running on the GPU.
bool cold_call_blocks(ModuleLoading loading, ColdCall call);

ModelResult simulate_pipeline(const PipelineShape& shape, ProgressSource progress, ModuleLoading loading,
                              ColdCall call);

// The same over given plans (plans[s] for stage s), e.g. a variant order.
ModelResult simulate_plans(const std::vector<std::vector<Action>>& plans, ProgressSource progress,
                           ModuleLoading loading, ColdCall call);

}  // namespace pp
