// NCCL's own kernel launch that does not return (NVIDIA/nccl issue 750): a thread
// inside cudaLaunchKernel* / cuLaunchKernel* called from ncclLaunchKernel. A launch
// returns in microseconds unless CUDA_LAUNCH_BLOCKING=1 makes it wait for the
// kernel to finish; NCCL 2.13 to 2.16 launch a collective's kernel before they hand
// its operations to the proxy thread, so a kernel that needs the network proxy
// waits for work the blocked thread never posts (H200: every rank of a two-rank
// NET/Socket all-reduce over 2.16.5, results/h200-2026-12-04-catalog-launch-blocking/).
#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"

namespace hangbench::diagnose::rules {
namespace {

bool is_kernel_launch(const StackFrame& f) {
  return f.function.rfind("cuLaunchKernel", 0) == 0 || f.function.rfind("cudaLaunchKernel", 0) == 0;
}

bool is_nccl_launch(const StackFrame& f) { return f.function.find("ncclLaunchKernel") != std::string::npos; }

// The proxy thread's side of the cycle: waiting for operations to be posted.
const StackThread* proxy_waiting_for_work(const ProcessSnapshot& p) {
  for (const auto& t : p.stacks.threads)
    if (std::any_of(t.frames.begin(), t.frames.end(),
                    [](const StackFrame& f) { return f.function.find("ncclProxyGetPostedOps") != std::string::npos; }))
      return &t;
  return nullptr;
}

std::string launch_blocking_fact(const ProcessSnapshot& p) {
  auto it = p.environment.find("CUDA_LAUNCH_BLOCKING");
  if (it == p.environment.end())
    return "CUDA_LAUNCH_BLOCKING is not in its starting environment (a value set by the program itself, or a "
           "launch queue that is full, can also make a launch wait)";
  return fmt::format("CUDA_LAUNCH_BLOCKING={} is in its environment{}", it->second,
                     it->second == "1" ? ": every kernel launch returns only when the kernel has finished" : "");
}

}  // namespace

std::vector<Finding> nccl_launch_blocks(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target) continue;
    const auto [t, launch] = first_call_under(p, is_kernel_launch, is_nccl_launch);
    if (!t) continue;  // one finding a process: its first such thread
    Finding f;
    f.rule = "nccl-launch-blocking";
    f.title = "NCCL's kernel launch does not return";
    f.severity = Severity::Hang;
    f.pids = {p.info.pid};
    f.tids = {t->tid};
    f.summary = fmt::format(
        "Thread {} \"{}\" of pid {} ({}) is inside {} called from ncclLaunchKernel: the launch waits for NCCL's "
        "kernel to finish, and a kernel that talks to a network peer waits for the proxy thread, which this "
        "NCCL gives the collective's work only after the launch returns (the catalog's entry names the releases).",
        t->tid, t->name, p.info.pid, p.info.comm, launch->function);
    std::vector<std::string> frames;
    for (const StackFrame* it = launch; it != t->frames.data() + t->frames.size() && frames.size() < 8; ++it)
      if (it->function != "??") frames.push_back(short_function_name(it->function));
    f.facts.push_back(fmt::format("thread {} \"{}\": {}", t->tid, t->name, join(frames, " <- ")));
    f.facts.push_back(launch_blocking_fact(p));
    if (const auto* proxy = proxy_waiting_for_work(p)) {
      f.tids.push_back(proxy->tid);
      f.facts.push_back(
          fmt::format("its proxy progress thread {} waits in ncclProxyGetPostedOps: no operation has been posted to it",
                      proxy->tid));
    }
    for (const auto& sentence : nccl_libraries_of(p, {t->tid}).sentences) f.facts.push_back(sentence);
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace hangbench::diagnose::rules
