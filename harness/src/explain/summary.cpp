// The one-paragraph summary of a diagnosis: the first finding's, or what the
// wait-for graph says when no known shape matched.
#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"
#include "hangbench/headline.hpp"
#include "hangbench/wait_graph.hpp"

namespace hangbench::diagnose {

using rules::join;

namespace {

// A target with NCCL or CUDA loaded whose stacks were not read: the hangs inside
// their calls (a kernel launch, a stream synchronisation) show only in its frames.
bool stacks_would_help(const Snapshot& s) {
  return std::any_of(s.processes.begin(), s.processes.end(), [](const ProcessSnapshot& p) {
    return p.target && !p.stacks.attempted &&
           std::any_of(p.libraries.begin(), p.libraries.end(), [](const std::string& lib) {
             return is_nccl_library(lib) || lib.find("libcuda.so") != std::string::npos;
           });
  });
}

}  // namespace

std::string summary_paragraph(const Snapshot& s, const std::vector<Finding>& findings) {
  for (const auto& f : findings)
    if (f.severity == Severity::Hang) return f.summary;
  for (const auto& f : findings)
    if (f.severity != Severity::Plumbing) return f.summary;
  int plumbing = static_cast<int>(findings.size());
  std::string apart = plumbing ? fmt::format(" ({} wait(s) of launcher plumbing listed apart)", plumbing) : "";
  const bool stacks_hint = stacks_would_help(s);
  if (stacks_hint)
    apart +=
        " without stacks (`hangbench diagnose --stacks` reads every thread's frames, which a hang inside "
        "NCCL's or CUDA's calls needs)";
  // What the wait-for graph says, never the healthy connections (HOLDERS lists those).
  const auto graph = build_wait_graph(s);
  int threads = 0, stuck = 0, running = 0, unnamed = 0;
  std::vector<std::string> stuck_names, unnamed_names;
  for (const auto& n : graph.nodes) {
    if (n.kind != NodeKind::Thread || !n.application) continue;
    const auto* p = s.find(n.pid);
    if (!p || !p->target) continue;
    ++threads;
    if (n.standing == Standing::Runs) ++running;
    if (n.stuck && stuck_names.size() < 3) stuck_names.push_back(n.label + " in " + n.call);
    if (n.stuck) ++stuck;
    // Only where no frames were read: with them, a thread the graph cannot name is
    // one whose wait no pattern knows (an idle service loop), not one left unread.
    if (n.standing == Standing::Unknown && !p->stacks.attempted) {
      ++unnamed;
      if (unnamed_names.size() < 3) unnamed_names.push_back(n.label + " in " + n.call);
    }
  }
  // A wait that was not read (a futex without frames: which mutex, whose) is assumed
  // able to move; "no hang" would claim more than was read.
  if (stuck == 0 && unnamed > 0)
    return fmt::format(
        "No hang found{} among the waits that could be named: {} of {} program thread(s) wait on something that "
        "cannot be named without their frames, assumed able to move: {}{}{}.",
        apart, unnamed, threads, join(unnamed_names, "; "), unnamed > 3 ? "; ..." : "",
        stacks_hint ? "" : " (`hangbench diagnose --stacks` reads them: a mutex and its owner, a GPU wait)");
  if (stuck == 0)
    return fmt::format(
        "No hang found{}: every wait of the {} program thread(s) read leads to something that can still move "
        "({} running).",
        apart, threads, running);
  return fmt::format("No known pattern matched{}; {} of {} program thread(s) cannot move: {}{}.", apart, stuck, threads,
                     join(stuck_names, "; "), stuck > 3 ? "; ..." : "");
}

}  // namespace hangbench::diagnose
