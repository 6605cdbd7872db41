// Generic findings: patterns over the wait-for graph, not over a stack's words.
//  - wait-cycle: threads, processes and ranks that wait for each other in a ring (nccl-connect-cycle
//    when the ring passes through NCCL's connection set-up);
//  - gil-convoy: a thread holds the GIL inside a blocking native call while others want it;
//  - missing-rank: ranks wait in a collective or a store for a rank that exited or is elsewhere;
//  - collective-mismatch: ranks of one job in different collectives;
//  - p2p-unmatched: a send or receive whose peer is not making the match (graph_findings_p2p.cpp);
//  - blocked-by-stopped: a wait that ends at a process that cannot run.
#include "explain/graph_findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <set>

#include "explain/rule_helpers.hpp"
#include "graph/thread_wait.hpp"

namespace hangbench::diagnose {

namespace {

using rules::join;

void add_unique(std::vector<int>& v, int x) {
  if (x && std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// Strongly connected components of the stuck part (Tarjan, iterative enough for
// the few hundred nodes of a job).
std::vector<std::vector<int>> stuck_components(const WaitGraph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<std::vector<int>> out_of(n);
  for (const auto& e : g.edges)
    if (g.nodes[e.from].stuck && g.nodes[e.to].stuck) out_of[e.from].push_back(e.to);
  std::vector<int> index(n, -1), low(n, 0), stack;
  std::vector<bool> on_stack(n, false);
  std::vector<std::vector<int>> components;
  int counter = 0;
  std::function<void(int)> visit = [&](int v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack[v] = true;
    for (int w : out_of[v]) {
      if (index[w] < 0) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on_stack[w]) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] == index[v]) {
      std::vector<int> component;
      int w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = false;
        component.push_back(w);
      } while (w != v);
      bool self_loop = std::find(out_of[v].begin(), out_of[v].end(), v) != out_of[v].end();
      if (component.size() > 1 || self_loop) components.push_back(std::move(component));
    }
  };
  for (int v = 0; v < n; ++v)
    if (g.nodes[v].stuck && index[v] < 0) visit(v);
  return components;
}

// Where a component holds guessed edges (any_of: a receive of unread source may
// wait for another rank than the edge names), the cycle to tell is the one with the
// fewest guesses, then the shortest, through an application thread. The nodes in
// order (the first is not repeated at the end); empty when none is on a cycle.
std::vector<int> least_guessed_cycle(const WaitGraph& g, const std::vector<int>& component) {
  constexpr int kGuessCost = 1000;
  constexpr int kSelfCost = 100;
  std::set<int> inside(component.begin(), component.end());
  std::vector<int> best;
  long best_cost = -1;
  for (int start : component) {
    if (g.nodes[start].kind != NodeKind::Thread || !g.nodes[start].application) continue;
    // Dijkstra from start back to itself over the component.
    std::map<int, long> cost;
    std::map<int, int> parent;
    std::set<std::pair<long, int>> todo;
    for (const auto* e : g.out_edges(start)) {
      if (!inside.count(e->to)) continue;
      long c = 1 + (e->any_of ? kGuessCost : 0);
      if (!cost.count(e->to) || c < cost[e->to]) {
        todo.erase({cost.count(e->to) ? cost[e->to] : 0, e->to});
        cost[e->to] = c;
        parent[e->to] = start;
        todo.insert({c, e->to});
      }
    }
    while (!todo.empty()) {
      auto [c, v] = *todo.begin();
      todo.erase(todo.begin());
      if (v == start) break;
      for (const auto* e : g.out_edges(v)) {
        if (!inside.count(e->to)) continue;
        // Back to the start through its own process ("pid P acts through this thread")
        // says least: a thread that waits for its own process. Taken only when no
        // other thread of it closes the ring.
        const bool through_itself = e->to == start && g.nodes[v].kind == NodeKind::Process;
        long next = c + 1 + (e->any_of ? kGuessCost : 0) + (through_itself ? kSelfCost : 0);
        if (cost.count(e->to) && cost[e->to] <= next) continue;
        if (cost.count(e->to)) todo.erase({cost[e->to], e->to});
        cost[e->to] = next;
        parent[e->to] = v;
        todo.insert({next, e->to});
      }
    }
    if (!cost.count(start) || (best_cost >= 0 && cost[start] >= best_cost)) continue;
    best_cost = cost[start];
    std::vector<int> path;
    for (int v = parent[start]; v != start; v = parent[v]) path.push_back(v);
    path.push_back(start);
    std::reverse(path.begin(), path.end());
    best = std::move(path);
  }
  return best;
}

// One simple cycle inside a component, starting at its first application thread:
// the nodes in order (the first is not repeated at the end).
std::vector<int> first_cycle(const WaitGraph& g, const std::vector<int>& component) {
  std::set<int> inside(component.begin(), component.end());
  int start = component.front();
  for (int v : component)
    if (g.nodes[v].kind == NodeKind::Thread && g.nodes[v].application) {
      start = v;
      break;
    }
  std::vector<int> path;
  std::set<int> seen;
  std::function<bool(int)> dfs = [&](int v) -> bool {
    path.push_back(v);
    seen.insert(v);
    for (const auto* e : g.out_edges(v)) {
      if (!inside.count(e->to)) continue;
      if (e->to == start) return true;
      if (!seen.count(e->to) && dfs(e->to)) return true;
    }
    path.pop_back();
    return false;
  };
  dfs(start);
  return path;
}

std::vector<int> one_cycle(const WaitGraph& g, const std::vector<int>& component) {
  std::set<int> inside(component.begin(), component.end());
  for (const auto& e : g.edges)
    if (e.any_of && inside.count(e.from) && inside.count(e.to)) return least_guessed_cycle(g, component);
  return first_cycle(g, component);
}

const GraphEdge* edge_between(const WaitGraph& g, int from, int to) {
  for (const auto* e : g.out_edges(from))
    if (e->to == to) return e;
  return nullptr;
}

// "pid 880 thread 881 \"python3\" waits in read on pipe 4711, whose write end pid 882 holds"
// for each thread of a path, up to the next thread.
std::vector<std::string> path_clauses(const WaitGraph& g, const std::vector<int>& path, bool ring) {
  std::vector<std::string> clauses;
  const std::size_t n = path.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& node = g.nodes[path[i]];
    if (node.kind != NodeKind::Thread) continue;
    std::vector<std::string> via;
    for (std::size_t j = i + 1; j < n + (ring ? n : 0); ++j) {
      const auto& next = g.nodes[path[j % n]];
      const auto* e = edge_between(g, path[(j - 1) % n], path[j % n]);
      if (next.kind == NodeKind::Thread) {
        if (e && next.pid == node.pid && g.nodes[path[(j - 1) % n]].kind == NodeKind::Thread) {
          // "thread 700 waits in pthread_join for thread 701 to exit": what follows its "for".
          const auto waits = e->evidence.find("waits");
          const auto for_at = e->evidence.find(" for ", waits == std::string::npos ? 0 : waits);
          via.push_back(for_at == std::string::npos ? e->evidence : e->evidence.substr(for_at + 5));
        }
        via.push_back("thread " + std::to_string(next.tid) +
                      (next.pid != node.pid ? " of pid " + std::to_string(next.pid) : "") +
                      (e && e->any_of ? " (or another rank: the receive's source was not read)" : ""));
        break;
      }
      if (next.kind == NodeKind::Process) {
        via.push_back(next.label);
        continue;
      }
      via.push_back(next.label);
    }
    clauses.push_back(fmt::format("{} waits in {} for {}", node.label, node.call, join(via, ", held by ")));
  }
  return clauses;
}

Finding cycle_finding(const WaitGraph& g, const std::vector<int>& cycle) {
  Finding f;
  f.rule = "wait-cycle";
  f.title = "threads that wait for each other in a ring";
  f.severity = Severity::Hang;
  for (int v : cycle) {
    const auto& n = g.nodes[v];
    if (n.kind == NodeKind::Thread) f.tids.push_back(n.tid);
    if (n.kind == NodeKind::Thread || n.kind == NodeKind::Process) add_unique(f.pids, n.pid);
    if (n.rank >= 0 && std::find(f.ranks.begin(), f.ranks.end(), n.rank) == f.ranks.end()) f.ranks.push_back(n.rank);
  }
  auto clauses = path_clauses(g, cycle, true);
  f.summary = "None of these can move until another of them does: " + join(clauses, "; ") + ".";
  for (int i = 0; i < static_cast<int>(cycle.size()); ++i)
    if (const auto* e = edge_between(g, cycle[i], cycle[(i + 1) % cycle.size()])) f.facts.push_back(e->evidence);
  // A ring through NCCL's connection set-up: its own shape (a catalog entry per kind of connection).
  for (int v : cycle) {
    const std::string& what = g.nodes[v].nccl_connection;
    if (what.empty()) continue;
    f.rule = "nccl-connect-cycle";
    f.title = "a rank waits in NCCL's connection set-up for a peer that waits for it";
    f.summary = fmt::format(
        "NCCL connects these links ({}) only while every rank of the pair is inside NCCL at once; {} is in that "
        "set-up, and its peer waits for something only this rank would do after it. {}",
        what, g.nodes[v].label, f.summary);
    f.facts.insert(f.facts.begin(), "nccl connection: " + what);
    break;
  }
  return f;
}

std::vector<Finding> cycles(const WaitGraph& g) {
  std::vector<Finding> out;
  for (const auto& component : stuck_components(g)) {
    auto cycle = one_cycle(g, component);
    bool has_thread =
        std::any_of(cycle.begin(), cycle.end(), [&](int v) { return g.nodes[v].kind == NodeKind::Thread; });
    if (cycle.empty() || !has_thread) continue;
    out.push_back(cycle_finding(g, cycle));
  }
  return out;
}

// What a node's first edges name, in a few words: "read on pipe 4711, held by pid 882".
std::string what_it_waits_for(const WaitGraph& g, int node) {
  std::vector<std::string> parts;
  int at = node;
  for (int hops = 0; hops < 3; ++hops) {
    auto out = g.out_edges(at);
    if (out.empty()) break;
    at = out.front()->to;
    parts.push_back(g.nodes[at].label);
    if (g.nodes[at].kind == NodeKind::Thread || g.nodes[at].kind == NodeKind::ExitedRank) break;
  }
  return parts.empty() ? "" : join(parts, ", held by ");
}

std::vector<Finding> gil_convoys(const Snapshot& s, const WaitGraph& g) {
  std::vector<Finding> out;
  for (const auto& p : s.processes) {
    int holder = p.python.gil_holder_tid;
    if (!p.target || !holder) continue;
    const auto* h = g.thread(p.info.pid, holder);
    if (!h || h->standing == Standing::Runs || h->standing == Standing::Sleeps) continue;
    std::vector<int> waiters;
    for (const auto& t : p.threads)
      if (const auto* w = t.tid == holder ? nullptr : g.thread(p.info.pid, t.tid))
        for (const auto* e : g.out_edges(w->id))
          if (g.nodes[e->to].kind == NodeKind::Gil) waiters.push_back(t.tid);
    if (waiters.empty()) continue;
    Finding f;
    f.rule = "gil-convoy";
    f.title = "a thread holds Python's GIL inside a blocking call while others wait for it";
    f.severity = h->stuck ? Severity::Hang : Severity::Risk;
    f.pids = {p.info.pid};
    f.tids = {holder};
    f.tids.insert(f.tids.end(), waiters.begin(), waiters.end());
    if (p.rank >= 0) f.ranks = {p.rank};
    std::vector<std::string> waiter_words;
    for (int w : waiters) waiter_words.push_back(std::to_string(w));
    std::string what = what_it_waits_for(g, h->id);
    f.summary =
        fmt::format("{} holds the GIL while it waits in {}{}; {} {} cannot run Python until it lets go{}.", h->label,
                    h->call, what.empty() ? "" : " for " + what, waiters.size() == 1 ? "thread" : "threads",
                    join(waiter_words, ", "), h->stuck ? ", and what it waits for never comes" : "");
    out.push_back(std::move(f));
  }
  return out;
}

// A rank that waits for the group: in MPI, a store, an NCCL GPU wait, or a socket to
// a process that is not a rank (a store server, a launcher's rendezvous).
bool waits_for_group(const Snapshot& s, const WaitGraph& g, const ProcessSnapshot& p) {
  for (const auto& t : p.threads) {
    if (is_runtime_thread(p, t)) continue;
    auto kind = thread_wait(p, t).kind;
    if (kind == ThreadWait::Kind::MpiCollective || kind == ThreadWait::Kind::MpiPointToPoint ||
        kind == ThreadWait::Kind::Store)
      return true;
    if (kind == ThreadWait::Kind::Gpu && std::any_of(p.libraries.begin(), p.libraries.end(), is_nccl_library))
      return true;
    if (kind != ThreadWait::Kind::Descriptors) continue;
    const auto* node = g.thread(p.info.pid, t.tid);
    for (const auto* e : node ? g.out_edges(node->id) : std::vector<const GraphEdge*>{}) {
      if (g.nodes[e->to].kind != NodeKind::Socket) continue;
      auto holders = g.out_edges(e->to);
      bool to_server = !holders.empty() && std::all_of(holders.begin(), holders.end(), [&](const GraphEdge* h) {
        const auto* q = s.find(g.nodes[h->to].pid);
        return q && q->rank < 0;
      });
      if (to_server) return true;
    }
  }
  return false;
}

// A sleep shorter than this is a pause between steps, not a rank gone elsewhere.
constexpr double kShortSleepSeconds = 30;

// Running now, woke many times while the snapshot read it, or in a short sleep.
bool any_application_thread_moves(const ProcessSnapshot& p) {
  for (const auto& t : p.threads) {
    if (is_runtime_thread(p, t)) continue;
    auto kind = thread_wait(p, t).kind;
    if (kind == ThreadWait::Kind::Running || thread_moved(t)) return true;
    if (kind == ThreadWait::Kind::Sleep && t.sleep_left_s >= 0 && t.sleep_left_s < kShortSleepSeconds) return true;
  }
  return false;
}

// Every application thread in a timed sleep: the process polls for something (an error
// its library should report), and is not stuck in a wait of its own (a join, a lock).
bool only_polls(const ProcessSnapshot& p) {
  bool any = false;
  for (const auto& t : p.threads) {
    if (is_runtime_thread(p, t)) continue;
    if (thread_wait(p, t).kind != ThreadWait::Kind::Sleep) return false;
    any = true;
  }
  return any;
}

std::vector<Finding> missing_ranks(const Snapshot& s, const WaitGraph& g) {
  std::vector<Finding> out;
  for (const auto& job : jobs_of(s)) {
    std::vector<int> waiting_pids, waiting_ranks, missing = job.absent_ranks, missing_pids;
    std::set<int> polling;  // waiters told by their closed connections, not by a wait for the group
    for (std::size_t i = 0; i < job.pids.size(); ++i) {
      const auto& p = *s.find(job.pids[i]);
      // A rank whose peer hung up and that only polls waits for it: for an error its library
      // never reports (nccl-net-error-swallowed). One stuck in a wait of its own (joining its
      // progress thread in an abort) waits for that, not for the peer.
      const bool hung_up_on = job.closed_by_peer.count(p.info.pid) && only_polls(p);
      const bool in_group_wait = waits_for_group(s, g, p);
      if (in_group_wait || (hung_up_on && !job.absent_ranks.empty())) {
        waiting_pids.push_back(p.info.pid);
        waiting_ranks.push_back(job.ranks[i]);
        if (!in_group_wait) polling.insert(p.info.pid);
      } else if (!inside_communication(p) && !any_application_thread_moves(p) && p.stacks.attempted) {
        missing.push_back(job.ranks[i]);
        missing_pids.push_back(p.info.pid);
      }
    }
    if (waiting_pids.empty() || missing.empty()) continue;
    std::sort(missing.begin(), missing.end());
    Finding f;
    f.rule = "missing-rank";
    f.title = "ranks wait for a rank that is not there";
    f.severity = Severity::Hang;
    f.pids = waiting_pids;
    f.pids.insert(f.pids.end(), missing_pids.begin(), missing_pids.end());
    f.ranks = missing;
    std::vector<std::string> gone, elsewhere, waiters;
    for (int r : missing) {
      auto it = std::find(job.ranks.begin(), job.ranks.end(), r);
      if (it == job.ranks.end()) {
        gone.push_back(std::to_string(r));
      } else {
        const auto& p = *s.find(job.pids[it - job.ranks.begin()]);
        std::string where;
        for (const auto& t : p.threads)
          if (t.tid == p.info.pid) where = thread_wait(p, t).call;
        elsewhere.push_back(fmt::format("rank {} (pid {}) is alive but outside MPI and NCCL, in {}", r, p.info.pid,
                                        where.empty() ? "an unknown wait" : where));
      }
    }
    for (std::size_t i = 0; i < waiting_ranks.size(); ++i)
      waiters.push_back(fmt::format("{} (pid {}{})", waiting_ranks[i], waiting_pids[i],
                                    polling.count(waiting_pids[i]) ? ", polling" : ""));
    std::vector<std::string> why;
    if (!gone.empty())
      why.push_back(fmt::format("rank{} {} of {} {} no live process", gone.size() > 1 ? "s" : "", join(gone, ", "),
                                job.world, gone.size() > 1 ? "have" : "has"));
    if (!gone.empty() && job.absent_seen_by_closed_connections) {
      int closed = 0;
      for (const auto& [pid, n] : job.closed_by_peer) closed += n;
      why.back() += fmt::format(" (the far end of {} TCP connection{} of rank {} was closed and nobody holds it)",
                                closed, closed > 1 ? "s" : "", job.ranks.front());
    }
    why.insert(why.end(), elsewhere.begin(), elsewhere.end());
    f.summary = fmt::format("Rank{} {} wait{} for the whole group, but {}.", waiters.size() > 1 ? "s" : "",
                            join(waiters, ", "), waiters.size() > 1 ? "" : "s", join(why, "; "));
    out.push_back(std::move(f));
  }
  return out;
}

// A rank that is not computing towards its next collective: no application thread
// moves, or its main thread is inside NCCL (spinning there is no progress: NCCL's
// connection of a pair polls a non-blocking accept).
bool stuck_elsewhere_than_compute(const ProcessSnapshot& p) {
  if (!any_application_thread_moves(p)) return true;
  for (const auto& t : p.stacks.threads)
    if (t.tid == p.info.pid)
      return std::any_of(t.functions.begin(), t.functions.end(),
                         [](const std::string& f) { return f.rfind("nccl", 0) == 0; });
  return false;
}

// The Flight Recorder's view, where a rank dumped one: the collective each rank
// enqueued last and has not completed. Ranks of one job pending in different
// collectives, or at different sequence numbers, wait for each other forever. A rank
// whose last operation completed at an earlier sequence number than a pending rank's,
// and which does not move, never called that collective (on the H100: rank 0 pending
// in all-reduce #2, rank 1's send #1 completed and rank 1 stuck elsewhere).
Finding flight_recorder_mismatch(const Snapshot& s, const Job& job) {
  struct Last {
    int rank, pid;
    std::string op;
    long long seq;  // -1: not given
    bool pending;
  };
  std::vector<Last> lasts;
  for (std::size_t i = 0; i < job.pids.size(); ++i) {
    const auto& summary = s.find(job.pids[i])->flight_recorder.summary;
    if (!summary.is_object() || !summary.contains("last_enqueued") || !summary["last_enqueued"].is_object()) continue;
    const auto& last = summary["last_enqueued"];
    Last l{job.ranks[i], job.pids[i],
           last.contains("op") && last["op"].is_string() ? last["op"].get<std::string>() : "?",
           last.contains("collective_seq_id") && last["collective_seq_id"].is_number_integer()
               ? last["collective_seq_id"].get<long long>()
               : -1,
           last.value("state", "") != "completed"};
    lasts.push_back(std::move(l));
  }
  long long newest_pending = -1;
  for (const auto& l : lasts)
    if (l.pending) newest_pending = std::max(newest_pending, l.seq);
  std::map<std::string, std::vector<int>> by_op;  // "nccl:all_reduce (collective #5)" -> ranks
  Finding f;
  for (const auto& l : lasts) {
    const std::string seq = l.seq >= 0 ? std::to_string(l.seq) : "?";
    std::string key;
    if (l.pending) {
      key = fmt::format("{} (collective #{})", l.op, seq);
    } else if (newest_pending >= 0 && l.seq >= 0 && l.seq < newest_pending &&
               stuck_elsewhere_than_compute(*s.find(l.pid))) {
      key = fmt::format("no collective: its last operation, {} (collective #{}), completed, and it never called #{}",
                        l.op, seq, newest_pending);
    } else {
      continue;
    }
    by_op[key].push_back(l.rank);
    f.pids.push_back(l.pid);
    f.ranks.push_back(l.rank);
  }
  if (by_op.size() < 2) return {};
  f.rule = "collective-mismatch";
  f.title = "ranks of one job wait in different collectives";
  f.severity = Severity::Hang;
  std::vector<std::string> parts;
  for (const auto& [op, ranks] : by_op) {
    std::vector<std::string> r;
    for (int x : ranks) r.push_back(std::to_string(x));
    parts.push_back(fmt::format("rank{} {} in {}", ranks.size() > 1 ? "s" : "", join(r, ", "), op));
  }
  f.summary = "The Flight Recorder shows the ranks waiting in different collectives, so none can complete: " +
              join(parts, "; ") + ".";
  return f;
}

std::vector<Finding> collective_mismatches(const Snapshot& s) {
  std::vector<Finding> out;
  for (const auto& job : jobs_of(s)) {
    std::map<std::string, std::vector<int>> by_collective;  // name -> ranks
    Finding f;
    for (std::size_t i = 0; i < job.pids.size(); ++i) {
      auto name = mpi_collective_of(*s.find(job.pids[i]));
      if (name.empty()) continue;
      by_collective[name].push_back(job.ranks[i]);
      f.pids.push_back(job.pids[i]);
      f.ranks.push_back(job.ranks[i]);
    }
    if (by_collective.size() < 2) {
      if (auto fr = flight_recorder_mismatch(s, job); fr.rule.size()) out.push_back(std::move(fr));
      continue;
    }
    f.rule = "collective-mismatch";
    f.title = "ranks of one job wait in different collectives";
    f.severity = Severity::Hang;
    std::vector<std::string> parts;
    for (const auto& [name, ranks] : by_collective) {
      std::vector<std::string> r;
      for (int x : ranks) r.push_back(std::to_string(x));
      parts.push_back(fmt::format("rank{} {} in {}", ranks.size() > 1 ? "s" : "", join(r, ", "), name));
    }
    f.summary = "The ranks called different collectives, so none can complete: " + join(parts, "; ") + ".";
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> blocked_by_stopped(const Snapshot& s, const WaitGraph& g, const std::set<int>& in_cycles) {
  std::vector<Finding> out;
  for (const auto& dead : g.nodes) {
    if (dead.kind != NodeKind::Process || dead.standing != Standing::CannotRun) continue;
    // Threads whose stuck path reaches this process, not through their own child waits.
    Finding f;
    std::vector<std::pair<int, int>> waiters;  // (distance to the dead end, node)
    for (const auto& start : g.nodes) {
      if (start.kind != NodeKind::Thread || !start.stuck || !start.application || in_cycles.count(start.id)) continue;
      const auto* p = s.find(start.pid);
      if (!p || !p->target || start.pid == dead.pid) continue;
      const auto* t = [&]() -> const proc::ThreadInfo* {
        for (const auto& x : p->threads)
          if (x.tid == start.tid) return &x;
        return nullptr;
      }();
      if (!t || thread_wait(*p, *t).kind == ThreadWait::Kind::Children) continue;
      // Breadth first, so that the chain's head (the farthest waiter) is named first.
      std::map<int, int> distance{{start.id, 0}};
      std::deque<int> todo{start.id};
      int reached = -1;
      while (!todo.empty() && reached < 0) {
        int v = todo.front();
        todo.pop_front();
        for (const auto* e : g.out_edges(v)) {
          const auto& to = g.nodes[e->to];
          if (e->to == dead.id || (to.pid == dead.pid && to.standing == Standing::CannotRun)) reached = distance[v] + 1;
          if (to.stuck && !distance.count(e->to)) {
            distance[e->to] = distance[v] + 1;
            todo.push_back(e->to);
          }
        }
      }
      if (reached < 0) continue;
      waiters.push_back({reached, start.id});
    }
    std::stable_sort(waiters.begin(), waiters.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [distance, id] : waiters) {
      const auto& start = g.nodes[id];
      add_unique(f.pids, start.pid);
      f.tids.push_back(start.tid);
      f.facts.push_back(fmt::format("{} waits in {} for {}", start.label, start.call, what_it_waits_for(g, start.id)));
    }
    if (f.tids.empty()) continue;
    f.pids.push_back(dead.pid);
    f.rule = "blocked-by-stopped";
    f.title = "a wait that only a process that cannot run could end";
    f.severity = Severity::Hang;
    f.summary = fmt::format("{}; {} cannot run, so the wait does not end.", join(f.facts, "; "), dead.label);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<Finding> graph_findings(const Snapshot& s, const WaitGraph& g) {
  std::vector<Finding> out = cycles(g);
  std::set<int> in_cycles;
  for (const auto& component : stuck_components(g)) in_cycles.insert(component.begin(), component.end());
  auto convoys = gil_convoys(s, g);
  out.insert(out.end(), convoys.begin(), convoys.end());
  auto missing = missing_ranks(s, g);
  out.insert(out.end(), missing.begin(), missing.end());
  auto mismatch = collective_mismatches(s);
  out.insert(out.end(), mismatch.begin(), mismatch.end());
  auto p2p = point_to_point_unmatched(s);
  out.insert(out.end(), p2p.begin(), p2p.end());
  auto stopped = blocked_by_stopped(s, g, in_cycles);
  out.insert(out.end(), stopped.begin(), stopped.end());
  return out;
}

}  // namespace hangbench::diagnose
