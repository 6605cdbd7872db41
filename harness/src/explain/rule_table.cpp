// The rule table: one function per known hang shape, in the order findings are listed.
#include <algorithm>
#include <set>

#include "explain/graph_findings.hpp"
#include "explain/rule_helpers.hpp"
#include "graph/thread_wait.hpp"
#include "hangbench/catalog.hpp"
#include "hangbench/nccl_library.hpp"
#include "hangbench/plumbing.hpp"

namespace hangbench::diagnose {

namespace {

// A rule that recognises a known hang is described by its catalog entry's title
// (catalog/*.toml); the others by the shape they match.
std::string described(const std::string& rule, const std::string& shape) {
  for (const auto& e : catalog::entries())
    for (const auto& r : e.rules)
      if (r == rule) return e.title + " (catalog: " + e.id + ")";
  return shape;
}

// The version of the NCCL the finding's first process maps, read only for a rule whose
// catalog entry depends on it ("" when none or unreadable).
std::string nccl_version_of(const Snapshot& s, const Finding& f) {
  if (!catalog::rule_needs_nccl_version(f.rule)) return "";
  for (int pid : f.pids)
    if (const auto* p = s.find(pid))
      for (const auto& library : p->libraries)
        if (is_nccl_library(library)) return describe_nccl_library(library).version;
  return "";
}

bool is_graph_rule(const std::string& rule) {
  for (const char* id :
       {"wait-cycle", "gil-convoy", "missing-rank", "collective-mismatch", "p2p-unmatched", "blocked-by-stopped"})
    if (rule == id) return true;
  return false;
}

}  // namespace

const std::vector<Rule>& rule_table() {
  static const std::vector<Rule> table = {
      {"nccl-descriptor-alias",
       described("nccl-descriptor-alias",
                 "poller on a TCP connection whose other end only another (forked) process holds"),
       rules::nccl_descriptor_alias},
      {"self-connection-aliased",
       described("self-connection-aliased", "a self-connection with one end duplicated into another process"),
       rules::nccl_alias_risk},
      {"mpi-gil", described("mpi-gil", "Python + MPI: a GIL waiter while another thread blocks in native code"),
       rules::mpi_gil},
      {"nccl-waits-for-gpu",
       described("nccl-waits-for-gpu", "a thread in a CUDA stream/event/device synchronisation called from libnccl"),
       rules::nccl_waits_for_gpu},
      {"nccl-launch-blocking",
       described("nccl-launch-blocking", "a thread inside a kernel launch called from ncclLaunchKernel"),
       rules::nccl_launch_blocks},
      {"nccl-bootstrap-silent-peer",
       described("nccl-bootstrap-silent-peer",
                 "NCCL's bootstrap root waiting for the magic of a connection no rank holds"),
       rules::nccl_bootstrap_silent_peer},
      {"nccl-abort-joins-spinning-thread",
       described("nccl-abort-joins-spinning-thread",
                 "a thread joining, inside NCCL's teardown, a thread of its process that keeps running"),
       rules::nccl_abort_joins_spinning_thread},
      {"wait-for", "who waits for whom across ranks, one sentence per cycle (teardown; pipeline MPI/GIL/CUDA)",
       rules::wait_for_cycles},
      {"pipe-writer-held", "a reader blocked on a pipe whose write end is still held", rules::pipe_reader_blocked},
      {"stopped", "a process stopped by a signal or a tracer", rules::stopped_process},
      {"zombie", "an exited process its parent has not reaped", rules::unreaped_zombie},
  };
  return table;
}

std::vector<Finding> find_hang_shapes(const Snapshot& s) {
  std::vector<Finding> all;
  std::set<int> told;  // processes whose Python threads a finding already placed
  const auto graph = build_wait_graph(s);
  std::vector<Rule> rules = rule_table();
  // The generic patterns of the wait-for graph come after the known shapes: a known
  // shape names more (its catalog entry, its remedy).
  rules.push_back({"wait-graph", "", [&graph](const Snapshot& snap) { return graph_findings(snap, graph); }});
  for (const auto& rule : rules) {
    auto found = rule.match(s);
    // A blocked pipe reader is a hang only when its writers cannot progress either
    // (an idle worker waiting for its next task from a working parent is not).
    if (rule.id == "pipe-writer-held")
      found.erase(std::remove_if(found.begin(), found.end(),
                                 [&](const Finding& f) {
                                   const auto* reader = f.tids.empty() ? nullptr : graph.thread(f.pids[0], f.tids[0]);
                                   return reader && !reader->stuck;
                                 }),
                  found.end());
    // The alias shape's poller that kept waking was caught between two messages of a
    // conversation (a ping-pong over a socket pair), not waiting for an EOF.
    if (rule.id == "nccl-descriptor-alias" || rule.id == "self-connection-aliased")
      found.erase(std::remove_if(found.begin(), found.end(),
                                 [&](const Finding& f) {
                                   const auto* p = f.pids.empty() ? nullptr : s.find(f.pids[0]);
                                   if (!p || f.tids.empty()) return false;
                                   for (const auto& t : p->threads)
                                     if (t.tid == f.tids.back()) return thread_moved(t);
                                   return false;
                                 }),
                  found.end());
    for (auto& f : found) {
      // A launcher's own wait (srun reading its ranks' pipes, hangbench polling its
      // watcher) is how it works: listed apart, never the job's hang.
      if (const auto* subject = f.pids.empty() ? nullptr : s.find(f.pids.front()); subject && is_plumbing(*subject)) {
        f.severity = Severity::Plumbing;
        f.title = plumbing_role(*subject) + ": " + f.title;
      }
      std::vector<int> untold;
      for (int pid : f.pids)
        if (told.insert(pid).second) untold.push_back(pid);
      if (auto words = rules::python_terms(s, untold); !words.empty()) f.facts.push_back(words);
      if (const auto* entry = catalog::entry_for(f.rule, f.title, f.summary, nccl_version_of(s, f), f.facts))
        f.catalog = entry->id;
    }
    all.insert(all.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  }
  // The alias rule's shape outside NCCL (no catalog entry) says less than a pattern of the
  // graph that already names the same waiting process: one hang, one finding.
  auto generic_hang_about = [&](int pid) {
    return std::any_of(all.begin(), all.end(), [&](const Finding& g) {
      return g.severity == Severity::Hang && is_graph_rule(g.rule) &&
             std::find(g.pids.begin(), g.pids.end(), pid) != g.pids.end();
    });
  };
  all.erase(std::remove_if(all.begin(), all.end(),
                           [&](const Finding& f) {
                             return f.rule == "nccl-descriptor-alias" && f.catalog.empty() && !f.pids.empty() &&
                                    generic_hang_about(f.pids.front());
                           }),
            all.end());
  // A blocked pipe reader that is one step of a ring of waits between threads is told by
  // that ring, which names the pipe and who holds its write end: one hang, one finding. A
  // thread that waits for itself (it holds the write end it reads) is told by the pipe rule.
  auto a_ring_holds = [&](const Finding& reader) {
    return std::any_of(all.begin(), all.end(), [&](const Finding& ring) {
      return (ring.rule == "wait-cycle" || ring.rule == "nccl-connect-cycle") && ring.severity == Severity::Hang &&
             ring.tids.size() > 1 &&
             std::find(ring.pids.begin(), ring.pids.end(), reader.pids.front()) != ring.pids.end() &&
             std::find(ring.tids.begin(), ring.tids.end(), reader.tids.front()) != ring.tids.end();
    });
  };
  all.erase(std::remove_if(all.begin(), all.end(),
                           [&](const Finding& f) {
                             return f.rule == "pipe-writer-held" && !f.pids.empty() && !f.tids.empty() &&
                                    a_ring_holds(f);
                           }),
            all.end());
  // Plumbing last: the job's own findings come first wherever they are listed.
  std::stable_partition(all.begin(), all.end(), [](const Finding& f) { return f.severity != Severity::Plumbing; });
  return all;
}

}  // namespace hangbench::diagnose
