// The wait-for graph of a snapshot: every thread, process and rank, and what each
// waits for (a lock, the GIL, a thread it joins, a pipe or socket and every holder
// of its other end, the GPU, an MPI operation, a store key), each edge with the
// evidence it came from. Generic findings (graph_findings.cpp) are patterns over it:
// a cycle, a GIL convoy, a missing rank, a collective mismatch, a wait that ends at
// a process that cannot run. Plain data: tests build snapshots by hand.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

enum class NodeKind { Thread, Process, Gil, Mutex, Pipe, Socket, Gpu, MpiOperation, StoreWait, ExitedRank };
std::string to_string(NodeKind k);

// How a node stands on its own, before its edges are read.
enum class Standing {
  Runs,        // on a CPU, or spinning inside a library's wait loop we cannot see into
  Sleeps,      // a timed sleep: it will wake by itself
  Waits,       // blocked on what its edges name
  Unknown,     // blocked on something the snapshot cannot name: assumed able to progress
  CannotRun,   // stopped by a signal or a tracer, a zombie, or a rank that exited
  Unreleased,  // a resource nobody named can release (a lock whose owner is gone)
};
std::string to_string(Standing s);

struct GraphNode {
  int id = 0;
  NodeKind kind = NodeKind::Thread;
  int pid = 0;        // the process (threads, processes, and the resources of one process)
  int tid = 0;        // threads
  int rank = -1;      // ranks (processes and their threads), -1 when the launcher gave none
  std::string label;  // "pid 880 thread 881 \"worker\"", "the GIL of pid 880", "pipe 4711"
  std::string call;   // threads: the call it waits in, in words ("read", "pthread_mutex_lock", "MPI_Barrier")
  Standing standing = Standing::Unknown;
  bool application = true;  // threads: the program's own (not a runtime's helper: CUDA, NCCL, PyTorch)
  bool stuck = false;       // no path from here reaches a node that can progress (computed)
  // threads in NCCL's connection set-up: what they connect ("collective", "point-to-point", "init")
  std::string nccl_connection;
};

struct GraphEdge {
  int from = 0, to = 0;  // `from` waits for `to`
  std::string evidence;  // where the edge comes from, in words
  // One of several edges of which any one would release the wait: an MPI receive
  // whose source the snapshot could not read waits for one rank, not all.
  bool any_of = false;
};

struct WaitGraph {
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;

  const GraphNode* thread(int pid, int tid) const;
  const GraphNode* process(int pid) const;
  std::vector<const GraphEdge*> out_edges(int node) const;
  // Lookups in constant time; build_wait_graph() makes them, a graph built by hand works without.
  void index();

 private:
  std::vector<std::vector<int>> out_;             // edge indices per node
  std::map<std::pair<int, int>, int> by_thread_;  // (pid, tid) -> node
  std::map<int, int> by_process_;                 // pid -> node
};

WaitGraph build_wait_graph(const Snapshot& s);

// The ranks of one job as the snapshot sees them: the live ones by their launcher's
// variables, and the ranks of [0, world) that no live process holds.
struct Job {
  std::string key;  // world size and what names the job (TORCHELASTIC_RUN_ID, MASTER_PORT, ...)
  int world = 0;
  std::vector<int> pids;          // by rank order
  std::vector<int> ranks;         // of those pids
  std::vector<int> absent_ranks;  // ranks no live process of the snapshot holds
  // Per live rank's pid, its TCP connections whose far end was closed (CLOSE_WAIT) and that
  // no process of the snapshot holds any more: a peer that exited, or closed its end. Without
  // the ranks' launcher in the snapshot, these are what tells absent ranks from ranks elsewhere.
  std::map<int, int> closed_by_peer;
  bool absent_seen_by_closed_connections = false;  // absent_ranks come from closed_by_peer alone
};
std::vector<Job> jobs_of(const Snapshot& s);

nlohmann::json graph_json(const WaitGraph& g);
// Graphviz: the stuck part in red; `only_stuck` leaves out what can progress.
std::string graph_dot(const WaitGraph& g, bool only_stuck);

}  // namespace hangbench::diagnose
