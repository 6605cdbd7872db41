// Everything one stage holds during a run. The members are declared in the
// order the run sets them up, so that an error thrown half-way takes down what
// exists in reverse: the executor's GIL first, the interpreter last.
#pragma once

#include <atomic>
#include <memory>
#include <optional>

#include "embedded_python.hpp"
#include "pipeline_options.hpp"
#include "pipeline_stage.hpp"
#include "progress_thread.hpp"
#include "stage_channel.hpp"
#include "stage_executor.hpp"
#include "stage_links.hpp"

namespace pp::gpu {

struct PipelineParts {
  PipelineOptions options;
  PipelineStage stage;

  std::optional<hangbench::embedded_python::Interpreter> interpreter;  // the GIL the executor will hold
  ProgressThread progress;
  std::unique_ptr<StageChannel> channel;  // the schedule and sample-state messages
  StageLinks links;                       // the activation
  std::optional<StageExecutor> executor;

  std::atomic<bool> hang_teardown{false};  // set by the hang path: the executor parks
};

}  // namespace pp::gpu
