// NCCL waiting for the GPU: a thread in a CUDA stream, event or device
// synchronisation called from libnccl. An abort or destroy that drains a stream
// whose work never ends waits here for ever: NCCL's abort flag stops its own
// kernels, but not work queued behind something else on the stream, nor a host
// function that never returns (the watchdog abort at world size 2 and 4 on the
// H200, every build: results/h200-2026-12-03-ddp-ranks-builds/).
#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"

namespace hangbench::diagnose::rules {
namespace {

const std::vector<std::string> kSynchronisations = {"cuStreamSynchronize", "cudaStreamSynchronize",
                                                    "cuEventSynchronize",  "cudaEventSynchronize",
                                                    "cuCtxSynchronize",    "cudaDeviceSynchronize"};

bool is_synchronisation(const StackFrame& f) {
  return std::find(kSynchronisations.begin(), kSynchronisations.end(), f.function) != kSynchronisations.end();
}

bool in_nccl(const StackFrame& f) { return is_nccl_library(f.module); }

std::string frame_text(const StackFrame& f) {
  std::string module = f.module.substr(f.module.find_last_of('/') + 1);
  return module.empty() ? f.function : fmt::format("{} ({})", f.function, module);
}

}  // namespace

std::vector<Finding> nccl_waits_for_gpu(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target) continue;
    const auto [t, sync] = first_call_under(p, is_synchronisation, in_nccl);
    if (!t) continue;  // one finding a process: its first such thread
    Finding f;
    f.rule = "nccl-waits-for-gpu";
    f.title = "NCCL waits for the GPU";
    f.severity = Severity::Hang;
    f.pids = {p.info.pid};
    f.tids = {t->tid};
    f.summary = fmt::format(
        "Thread {} \"{}\" of pid {} ({}) waits in {} called from libnccl: NCCL waits for a CUDA stream whose work "
        "has not finished. An abort or destroy drains its streams; its abort flag stops NCCL's own kernels, but "
        "not work queued behind something else on the stream (a host function, another kernel) nor a kernel "
        "that has not started.",
        t->tid, t->name, p.info.pid, p.info.comm, sync->function);
    std::vector<std::string> frames;
    for (auto it = t->frames.begin(); it != t->frames.end() && frames.size() < 10; ++it)
      frames.push_back(frame_text(*it));
    f.facts.push_back(fmt::format("thread {} \"{}\": {}", t->tid, t->name, join(frames, " <- ")));
    for (const auto& sentence : nccl_libraries_of(p, {t->tid}).sentences) f.facts.push_back(sentence);
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace hangbench::diagnose::rules
