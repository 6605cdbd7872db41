// NCCL's abort that joins a thread which never stops (PyTorch issue 149153): a
// thread in pthread_join, inside an NCCL process, whose joined thread is on a CPU or
// keeps waking. 2.23.4 to 2.25.1 dropped the abort-flag check from the proxy
// progress thread's loop; after a peer dies its failed operation stays active, so
// the thread retries it for ever and ncclCommAbort's join never returns.
#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"
#include "graph/thread_wait.hpp"

namespace hangbench::diagnose::rules {
namespace {

// ncclProxyProgressDestroy: on the H100 with 2.25.1 the join of the spinning progress
// thread was the proxy service thread's, under it (ncclCommAbort's own thread polls in
// asyncJobLaunch, and its async job joins the service thread).
const std::vector<std::string> kNcclTeardownCalls = {
    "ncclCommAbort", "ncclCommDestroy",         "commReclaim", "commFree", "ncclProxyDestroy",
    "ncclProxyStop", "ncclProxyProgressDestroy"};

// The outermost NCCL teardown call on the stack, "" when none (or no stack).
std::string nccl_teardown_call(const StackThread* s) {
  if (!s) return "";
  for (auto it = s->frames.rbegin(); it != s->frames.rend(); ++it)
    for (const auto& call : kNcclTeardownCalls)
      if (it->function.find(call) != std::string::npos) return short_function_name(it->function);
  return "";
}

bool process_maps_nccl(const ProcessSnapshot& p) {
  return std::any_of(p.libraries.begin(), p.libraries.end(),
                     [](const std::string& l) { return l.find("libnccl") != std::string::npos; });
}

const StackThread* native_stack_of(const ProcessSnapshot& p, int tid) {
  for (const auto& t : p.stacks.threads)
    if (t.tid == tid) return &t;
  return nullptr;
}

const proc::ThreadInfo* thread_info_of(const ProcessSnapshot& p, int tid) {
  for (const auto& t : p.threads)
    if (t.tid == tid) return &t;
  return nullptr;
}

std::string spinning_thread_fact(const proc::ThreadInfo& joined) {
  if (joined.switches >= 0 && joined.switches_later >= joined.switches)
    return fmt::format("thread {} \"{}\" is {} and woke {} times while it was read: it runs, it does not end",
                       joined.tid, joined.name, joined.state == 'R' ? "on a CPU" : "between two yields",
                       joined.switches_later - joined.switches);
  return fmt::format("thread {} \"{}\" is on a CPU: it runs, it does not end", joined.tid, joined.name);
}

// The free calls that wait for the whole device (cudaFree, cudaFreeHost and the driver's
// calls under them); the cuMem* unmaps NCCL uses from 2.19 on do not.
const std::vector<std::string> kDeviceSynchronisingFrees = {"cudaFreeHost", "cudaFree", "cuMemFreeHost", "cuMemFree_v2",
                                                            "cuMemFree"};

// The outermost device-synchronising free on the joined thread's stack (the runtime's
// call NCCL made, not the driver's under it), "" when none.
std::string device_free_call(const StackThread* s) {
  if (!s) return "";
  for (auto fr = s->frames.rbegin(); fr != s->frames.rend(); ++fr)
    for (const auto& call : kDeviceSynchronisingFrees)
      if (short_function_name(fr->function) == call) return call;
  return "";
}

}  // namespace

// The typed fact by which the catalog tells the multi-communicator abort from the
// progress thread's spin (catalog/nccl-multi-comm-abort.toml).
const char* const kJoinedThreadInDeviceFree = "joined thread: a device-synchronising free";

std::vector<Finding> nccl_abort_joins_spinning_thread(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target || !process_maps_nccl(p)) continue;
    for (const auto& t : p.threads) {
      const ThreadWait w = thread_wait(p, t);
      if (w.kind != ThreadWait::Kind::Join) continue;
      const proc::ThreadInfo* joined = thread_info_of(p, w.other_tid);
      if (!joined || !(joined->state == 'R' || thread_moved(*joined))) continue;
      const StackThread* joiner_stack = native_stack_of(p, t.tid);
      const std::string call = nccl_teardown_call(joiner_stack);
      // With stacks, only a join inside NCCL's teardown; without, any join in an NCCL process.
      if (joiner_stack && call.empty()) continue;
      Finding f;
      f.rule = "nccl-abort-joins-spinning-thread";
      f.title = "NCCL's teardown waits for a thread that never stops";
      f.severity = Severity::Hang;
      f.pids = {p.info.pid};
      f.tids = {t.tid, joined->tid};
      const StackThread* joined_stack = native_stack_of(p, joined->tid);
      const std::string free_call = device_free_call(joined_stack);
      if (free_call.empty()) {
        f.summary = fmt::format(
            "Thread {} \"{}\" of pid {} ({}) waits in pthread_join{} for thread {}, which keeps running: NCCL's "
            "progress thread retries an operation that can never finish (a dead peer) and its loop does not "
            "look at the abort flag, so the join never returns (the catalog's entry names the releases).",
            t.tid, t.name, p.info.pid, p.info.comm, call.empty() ? "" : " under " + call, joined->tid);
      } else {
        f.summary = fmt::format(
            "Thread {} \"{}\" of pid {} ({}) waits in pthread_join{} for thread {}, which frees memory with {}: "
            "that call waits until nothing runs on the GPU, and a kernel still runs there (another "
            "communicator's, waiting for a rank that is gone), so the free and the join never return.",
            t.tid, t.name, p.info.pid, p.info.comm, call.empty() ? "" : " under " + call, joined->tid, free_call);
        f.facts.push_back(kJoinedThreadInDeviceFree);
      }
      f.facts.push_back(spinning_thread_fact(*joined));
      if (const StackThread* js = joined_stack) {
        std::vector<std::string> frames;
        for (const auto& fr : js->frames)
          if (fr.function != "??" && frames.size() < 6) frames.push_back(short_function_name(fr.function));
        if (!frames.empty()) f.facts.push_back(fmt::format("thread {}: {}", joined->tid, join(frames, " <- ")));
      }
      for (const auto& sentence : nccl_libraries_of(p, {t.tid}).sentences) f.facts.push_back(sentence);
      findings.push_back(std::move(f));
    }
  }
  return findings;
}

}  // namespace hangbench::diagnose::rules
