// Builds the wait-for graph from a snapshot, then marks what is stuck: a node is
// stuck when no path of "waits for" edges from it reaches something that can
// progress by itself (a running or sleeping thread, a wait the snapshot cannot
// name). Every node is an OR: a pipe waits for any of its writers, a process for
// any of its own threads, a poll for any of its descriptors.
#include "hangbench/wait_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "graph/nccl_bootstrap.hpp"
#include "graph/thread_wait.hpp"
#include "hangbench/nccl_library.hpp"

namespace hangbench::diagnose {

std::string to_string(NodeKind k) {
  switch (k) {
    case NodeKind::Thread:
      return "thread";
    case NodeKind::Process:
      return "process";
    case NodeKind::Gil:
      return "gil";
    case NodeKind::Mutex:
      return "mutex";
    case NodeKind::Pipe:
      return "pipe";
    case NodeKind::Socket:
      return "socket";
    case NodeKind::Gpu:
      return "gpu";
    case NodeKind::MpiOperation:
      return "mpi";
    case NodeKind::StoreWait:
      return "store";
    case NodeKind::ExitedRank:
      return "exited-rank";
  }
  return "?";
}

std::string to_string(Standing s) {
  switch (s) {
    case Standing::Runs:
      return "runs";
    case Standing::Sleeps:
      return "sleeps";
    case Standing::Waits:
      return "waits";
    case Standing::Unknown:
      return "unknown";
    case Standing::CannotRun:
      return "cannot-run";
    case Standing::Unreleased:
      return "unreleased";
  }
  return "?";
}

void WaitGraph::index() {
  out_.assign(nodes.size(), {});
  for (std::size_t i = 0; i < edges.size(); ++i) out_[edges[i].from].push_back(static_cast<int>(i));
  by_thread_.clear();
  by_process_.clear();
  for (const auto& n : nodes) {
    if (n.kind == NodeKind::Thread) by_thread_[{n.pid, n.tid}] = n.id;
    if (n.kind == NodeKind::Process) by_process_[n.pid] = n.id;
  }
}

const GraphNode* WaitGraph::thread(int pid, int tid) const {
  if (!by_thread_.empty()) {
    auto it = by_thread_.find({pid, tid});
    return it == by_thread_.end() ? nullptr : &nodes[it->second];
  }
  for (const auto& n : nodes)
    if (n.kind == NodeKind::Thread && n.pid == pid && n.tid == tid) return &n;
  return nullptr;
}

const GraphNode* WaitGraph::process(int pid) const {
  if (!by_process_.empty()) {
    auto it = by_process_.find(pid);
    return it == by_process_.end() ? nullptr : &nodes[it->second];
  }
  for (const auto& n : nodes)
    if (n.kind == NodeKind::Process && n.pid == pid) return &n;
  return nullptr;
}

std::vector<const GraphEdge*> WaitGraph::out_edges(int node) const {
  std::vector<const GraphEdge*> out;
  if (out_.size() == nodes.size()) {
    for (int i : out_[node]) out.push_back(&edges[i]);
    return out;
  }
  for (const auto& e : edges)
    if (e.from == node) out.push_back(&e);
  return out;
}

namespace {

std::string rank_prefix(const ProcessSnapshot& p) { return p.rank >= 0 ? fmt::format("rank {} ", p.rank) : ""; }

class Builder {
 public:
  explicit Builder(const Snapshot& s) : s_(s), jobs_(jobs_of(s)) {}

  WaitGraph build() {
    for (const auto& p : s_.processes) add_process(p);
    for (const auto& job : jobs_)
      for (int r : job.absent_ranks)
        exited_[{job.key, r}] = add(NodeKind::ExitedRank, 0, 0, r,
                                    fmt::format("rank {} of {} (no live process)", r, job.world), Standing::CannotRun);
    for (const auto& p : s_.processes) add_thread_waits(p);
    mark_stuck();
    g_.index();
    return std::move(g_);
  }

 private:
  const Snapshot& s_;
  std::vector<Job> jobs_;
  WaitGraph g_;
  std::map<std::pair<int, int>, int> threads_;            // (pid, tid) -> node
  std::map<int, int> processes_;                          // pid -> node
  std::map<std::pair<std::string, int>, int> resources_;  // (kind:key, pid) -> node
  std::map<std::pair<std::string, int>, int> exited_;     // (job key, rank) -> node
  std::set<std::pair<int, int>> edge_set_;

  int add(NodeKind kind, int pid, int tid, int rank, std::string label, Standing standing, std::string call = "") {
    GraphNode n;
    n.id = static_cast<int>(g_.nodes.size());
    n.kind = kind;
    n.pid = pid;
    n.tid = tid;
    n.rank = rank;
    n.label = std::move(label);
    n.standing = standing;
    n.call = std::move(call);
    g_.nodes.push_back(std::move(n));
    return g_.nodes.back().id;
  }

  void edge(int from, int to, std::string evidence, bool any_of = false) {
    if (!edge_set_.insert({from, to}).second) return;
    g_.edges.push_back({from, to, std::move(evidence), any_of});
  }

  int resource(NodeKind kind, const std::string& key, int pid, const std::string& label) {
    auto k = std::make_pair(to_string(kind) + ":" + key, pid);
    if (auto it = resources_.find(k); it != resources_.end()) return it->second;
    int id = add(kind, pid, 0, -1, label, Standing::Waits);
    resources_[k] = id;
    return id;
  }

  void add_process(const ProcessSnapshot& p) {
    const char state = p.info.state;
    bool cannot_run = state == 'T' || state == 't' || state == 'Z' || state == 'X';
    Standing standing = cannot_run ? Standing::CannotRun : (p.threads.empty() ? Standing::Unknown : Standing::Waits);
    int id = add(NodeKind::Process, p.info.pid, 0, p.rank,
                 fmt::format("{}pid {} ({}){}", rank_prefix(p), p.info.pid, p.info.comm,
                             cannot_run ? ", " + proc::state_name(state) : ""),
                 standing);
    processes_[p.info.pid] = id;
    for (const auto& t : p.threads) {
      auto w = thread_wait(p, t);
      int tid_node =
          add(NodeKind::Thread, p.info.pid, t.tid, p.rank,
              fmt::format("{}pid {} thread {} {}", rank_prefix(p), p.info.pid, t.tid, thread_title(p, t.tid, t.name)),
              Standing::Unknown, w.call);
      g_.nodes[tid_node].application = !is_runtime_thread(p, t);
      if (w.kind == ThreadWait::Kind::NcclConnect) g_.nodes[tid_node].nccl_connection = nccl_connection_of(p, t.tid);
      threads_[{p.info.pid, t.tid}] = tid_node;
      if (!cannot_run && g_.nodes[tid_node].application)
        edge(id, tid_node, fmt::format("pid {} can act only through its own threads: thread {}", p.info.pid, t.tid));
    }
  }

  std::map<int, std::string> collectives_;  // pid -> the MPI collective it is in, read once

  const std::string& collective_of(const ProcessSnapshot& p) {
    auto it = collectives_.find(p.info.pid);
    if (it == collectives_.end()) it = collectives_.emplace(p.info.pid, mpi_collective_of(p)).first;
    return it->second;
  }

  const Job* job_of(const ProcessSnapshot& p) const {
    for (const auto& j : jobs_)
      if (std::find(j.pids.begin(), j.pids.end(), p.info.pid) != j.pids.end()) return &j;
    return nullptr;
  }

  // Which node of rank `other` a wait on that rank waits for. A store key may come
  // from any of its threads (the process). An MPI message or an NCCL kernel's peer
  // comes from the thread that talks to the job: when some application thread of it
  // is inside MPI, NCCL or a GPU wait, those threads, not a watchdog asleep beside them.
  enum class Through { Process, Communicating };

  std::vector<int> rank_nodes(const ProcessSnapshot& other, Through through) {
    std::vector<int> nodes;
    if (through == Through::Communicating)
      for (const auto& t : other.threads)
        if (!is_runtime_thread(other, t) && thread_communicates(other, t))
          nodes.push_back(threads_.at({other.info.pid, t.tid}));
    if (nodes.empty()) nodes.push_back(processes_.at(other.info.pid));
    return nodes;
  }

  // Edges to every other rank of p's job, live or exited, for which `include` holds.
  // With `one_of`, the wait needs one of those ranks, not all (a receive of unread source).
  template <typename Include>
  void to_other_ranks(int from, const ProcessSnapshot& p, Include include, const std::string& why,
                      Through through = Through::Process, bool one_of = false) {
    const Job* job = job_of(p);
    if (!job) return;
    std::vector<std::pair<int, std::string>> targets;
    for (std::size_t i = 0; i < job->pids.size(); ++i) {
      if (job->pids[i] == p.info.pid) continue;
      const auto* other = s_.find(job->pids[i]);
      if (!other || !include(*other)) continue;
      for (int node : rank_nodes(*other, through))
        targets.emplace_back(node, fmt::format(fmt::runtime(why), job->ranks[i]));
    }
    for (int r : job->absent_ranks)
      targets.emplace_back(exited_.at({job->key, r}), fmt::format("rank {} of the job has no live process", r));
    const bool any_of = one_of && targets.size() > 1;
    for (auto& [node, evidence] : targets) edge(from, node, std::move(evidence), any_of);
  }

  void add_thread_waits(const ProcessSnapshot& p) {
    // NCCL's bootstrap root spins on a recv that returns nothing (2.22 to 2.28) or blocks in
    // one: either way it waits on the connection it accepted, whoever holds its other end.
    const StackThread* root = bootstrap_root_waiting_for_magic(p);
    const std::vector<int> root_fds = root ? accepted_connection_fds(s_, p) : std::vector<int>{};
    for (const auto& t : p.threads) {
      int me = threads_.at({p.info.pid, t.tid});
      auto w = thread_wait(p, t);
      if (root && root->tid == t.tid && !root_fds.empty()) {
        w.kind = ThreadWait::Kind::Descriptors;
        w.fds = root_fds;
        w.call = "socketFinalizeAccept (NCCL's bootstrap root, waiting for a magic)";
      }
      auto& node = g_.nodes[me];
      node.standing = Standing::Waits;
      switch (w.kind) {
        case ThreadWait::Kind::Running:
          node.standing = Standing::Runs;
          break;
        case ThreadWait::Kind::Sleep:
          node.standing = Standing::Sleeps;
          break;
        case ThreadWait::Kind::Stopped:
          node.standing = Standing::CannotRun;
          break;
        case ThreadWait::Kind::Unknown:
          node.standing = Standing::Unknown;
          break;
        case ThreadWait::Kind::Signal:
          node.standing = Standing::Unreleased;
          break;
        case ThreadWait::Kind::Gil:
          gil_wait(me, p, t, w);
          break;
        case ThreadWait::Kind::Mutex:
          mutex_wait(me, p, t, w);
          break;
        case ThreadWait::Kind::JoinPython: {
          // Which thread it joins is in a Python local: any other Python thread may be it.
          bool any = false;
          for (const auto& py : p.python.threads)
            if (py.tid != t.tid && threads_.count({p.info.pid, py.tid})) {
              edge(me, threads_.at({p.info.pid, py.tid}),
                   fmt::format("thread {} waits in Thread.join, perhaps for thread {} to end", t.tid, py.tid));
              any = true;
            }
          if (!any) node.standing = Standing::Unknown;
          break;
        }
        case ThreadWait::Kind::MutexDeadlock:
          // The lock it wanted is held, through a chain, by a thread that waits for one of its own locks.
          for (const auto& q : s_.processes)
            for (const auto& other : q.threads) {
              auto ow = thread_wait(q, other);
              if (ow.kind == ThreadWait::Kind::Mutex && ow.other_tid == t.tid &&
                  threads_.count({q.info.pid, other.tid}))
                edge(me, threads_.at({q.info.pid, other.tid}),
                     fmt::format("the kernel refused thread {}'s lock as a deadlock: thread {} waits for a lock "
                                 "thread {} holds",
                                 t.tid, other.tid, t.tid));
            }
          break;
        case ThreadWait::Kind::Join:
          edge(me, threads_.at({p.info.pid, w.other_tid}),
               fmt::format("thread {} waits in pthread_join for thread {} to exit", t.tid, w.other_tid));
          break;
        case ThreadWait::Kind::Descriptors:
          descriptor_waits(me, p, t, w);
          break;
        case ThreadWait::Kind::Children: {
          bool any = false;
          for (const auto& c : s_.processes)
            if (c.info.ppid == p.info.pid) {
              edge(me, processes_.at(c.info.pid), fmt::format("waits in {} for its child pid {}", w.call, c.info.pid));
              any = true;
            }
          if (!any) node.standing = Standing::Unknown;
          break;
        }
        case ThreadWait::Kind::Gpu:
          gpu_wait(me, p, t, w);
          break;
        case ThreadWait::Kind::NcclConnect: {
          const std::string what = nccl_connection_of(p, t.tid);
          // A peer inside NCCL too is making the handshake with it: only the others hold it up.
          to_other_ranks(
              me, p, [](const ProcessSnapshot& other) { return !inside_communication(other); },
              "NCCL's connection set-up (" + w.call + ", " + what + ") needs rank {} inside NCCL at the same time",
              Through::Communicating);
          break;
        }
        case ThreadWait::Kind::NcclGroupJobs: {
          // It waits for the job threads of its own process that are inside NCCL's connection set-up.
          bool any = false;
          for (const auto& other : p.threads) {
            if (other.tid == t.tid) continue;
            const ThreadWait job = thread_wait(p, other);  // read once: it walks the thread's stack
            if (job.kind != ThreadWait::Kind::NcclConnect) continue;
            edge(me, threads_.at({p.info.pid, other.tid}),
                 fmt::format("thread {} waits in ncclGroupEnd for NCCL's job thread {} ({}) to finish", t.tid,
                             other.tid, job.call));
            any = true;
          }
          if (!any) node.standing = Standing::Unknown;
          break;
        }
        case ThreadWait::Kind::MpiCollective:
        case ThreadWait::Kind::MpiPointToPoint:
          mpi_wait(me, p, t, w);
          break;
        case ThreadWait::Kind::Store: {
          int k = resource(NodeKind::StoreWait, std::to_string(t.tid), p.info.pid,
                           fmt::format("the store key {}pid {} waits for", rank_prefix(p), p.info.pid));
          edge(me, k, fmt::format("thread {} waits in {}", t.tid, w.call));
          to_other_ranks(
              k, p, [](const ProcessSnapshot&) { return true; }, "rank {} could write the key");
          break;
        }
      }
    }
  }

  // The owner field names a thread of this process or, for a process-shared mutex,
  // of another; an owner no process holds any more exited holding the lock.
  void mutex_wait(int me, const ProcessSnapshot& p, const proc::ThreadInfo& t, const ThreadWait& w) {
    int m = resource(NodeKind::Mutex, fmt::format("{:x}", w.address), p.info.pid,
                     fmt::format("the mutex at 0x{:x} in pid {}", w.address, p.info.pid));
    edge(me, m, fmt::format("thread {} waits in pthread_mutex_lock", t.tid));
    for (const auto& [key, node] : threads_)
      if (key.second == w.other_tid) {
        edge(m, node, fmt::format("thread {} of pid {} owns it (the mutex's owner field)", w.other_tid, key.first));
        return;
      }
    if (auto owner = processes_.find(w.other_tid); owner != processes_.end()) {
      edge(m, owner->second, fmt::format("pid {} owns it (the mutex's owner field)", w.other_tid));
      return;
    }
    g_.nodes[m].standing = Standing::Unreleased;
    g_.nodes[m].label += fmt::format(", owned by thread {}, which no longer exists", w.other_tid);
  }

  void gil_wait(int me, const ProcessSnapshot& p, const proc::ThreadInfo& t, const ThreadWait& w) {
    int holder = p.python.gil_holder_tid;
    if (holder == t.tid) {  // read between taking the GIL and leaving the wait: it holds it
      g_.nodes[me].standing = Standing::Runs;
      return;
    }
    int gil = resource(NodeKind::Gil, "", p.info.pid, fmt::format("the GIL of pid {}", p.info.pid));
    edge(me, gil, fmt::format("thread {} waits for the GIL ({})", t.tid, w.call));
    if (holder && holder != t.tid && threads_.count({p.info.pid, holder}))
      edge(gil, threads_.at({p.info.pid, holder}), fmt::format("thread {} holds it", holder));
  }

  void gpu_wait(int me, const ProcessSnapshot& p, const proc::ThreadInfo& t, const ThreadWait& w) {
    int gpu =
        resource(NodeKind::Gpu, "", p.info.pid, fmt::format("the GPU work of {}pid {}", rank_prefix(p), p.info.pid));
    // A synchronisation spins (cudaDeviceScheduleSpin, or the driver's default while it
    // polls) or sleeps in the driver (blocking sync): one burns a core, the other does not.
    const bool spins = t.state == 'R' || thread_moved(t);
    edge(me, gpu,
         fmt::format("thread {} waits in {} for GPU work, {}", t.tid, w.call,
                     spins ? "spinning on a CPU" : "asleep in the driver"));
    bool nccl = std::any_of(p.libraries.begin(), p.libraries.end(), is_nccl_library);
    if (nccl)  // an NCCL kernel in flight completes only when its peers' kernels run
      to_other_ranks(
          gpu, p, [](const ProcessSnapshot&) { return true; },
          "an NCCL kernel in flight needs rank {} (inferred: kernels are not visible from the host)",
          Through::Communicating);
  }

  void mpi_wait(int me, const ProcessSnapshot& p, const proc::ThreadInfo& t, const ThreadWait& w) {
    int op = resource(NodeKind::MpiOperation, std::to_string(t.tid), p.info.pid,
                      fmt::format("{} of {}pid {}", w.call, rank_prefix(p), p.info.pid));
    edge(me, op, fmt::format("thread {} waits in {}", t.tid, w.call));
    if (w.kind == ThreadWait::Kind::MpiCollective) {
      // A collective completes when every rank is in it: it waits for the ranks that are not.
      const std::string mine = w.call;
      to_other_ranks(
          op, p, [&](const ProcessSnapshot& other) { return collective_of(other) != mine; },
          "rank {} is not in " + mine, Through::Communicating);
    } else {
      to_other_ranks(
          op, p, [](const ProcessSnapshot&) { return true; }, "rank {} would post the matching operation",
          Through::Communicating, /*one_of=*/true);
    }
  }

  // Who releases a wait on one descriptor: the holders of a pipe's other ends, of a
  // socket's other end. Nothing when the other end is outside what was read.
  void descriptor_waits(int me, const ProcessSnapshot& p, const proc::ThreadInfo& t, const ThreadWait& w) {
    bool unknown = false;
    for (int fd : w.fds) {
      const proc::Descriptor* d = nullptr;
      for (const auto& x : p.descriptors)
        if (x.fd == fd) d = &x;
      if (!d) {
        unknown = true;
        continue;
      }
      if (d->target.kind == proc::DescriptorKind::Pipe) {
        if (!pipe_wait(me, t, w, *d)) unknown = true;
      } else if (d->target.kind == proc::DescriptorKind::Socket) {
        if (!socket_wait(me, t, w, *d)) unknown = true;
      } else {
        unknown = true;  // eventfd, timerfd, a file, a terminal: released from outside what we read
      }
    }
    if (unknown) g_.nodes[me].standing = Standing::Unknown;
  }

  bool pipe_wait(int me, const proc::ThreadInfo& t, const ThreadWait& w, const proc::Descriptor& d) {
    for (const auto& use : s_.pipes) {
      if (use.inode != d.target.inode) continue;
      const auto& releasers = w.writes ? use.readers : use.writers;
      if (releasers.empty()) return false;
      int r = resource(NodeKind::Pipe, std::to_string(d.target.inode), 0, fmt::format("pipe {}", d.target.inode));
      edge(me, r, fmt::format("thread {} waits in {} on fd {} (pipe {})", t.tid, w.call, d.fd, d.target.inode));
      for (const auto& h : releasers)
        if (processes_.count(h.pid))
          edge(r, processes_.at(h.pid),
               fmt::format("pid {} holds its {} end (fd {})", h.pid, w.writes ? "read" : "write", h.fd));
      return true;
    }
    return false;
  }

  bool socket_wait(int me, const proc::ThreadInfo& t, const ThreadWait& w, const proc::Descriptor& d) {
    for (const auto& c : s_.connections) {
      bool a = c.end_a.inode == d.target.inode;
      bool b = c.end_b && c.end_b->inode == d.target.inode;
      if (!a && !b) continue;
      const auto& mine = a ? c.end_a : *c.end_b;
      if (mine.state == "LISTEN" || !c.end_b) return false;  // a new client may come from anywhere
      const auto& theirs = a ? c.holders_b : c.holders_a;
      if (theirs.empty()) return false;
      const auto& other_end = a ? *c.end_b : c.end_a;
      int r = resource(NodeKind::Socket, std::to_string(d.target.inode), 0,
                       fmt::format("{} {} -> {}", mine.protocol, mine.local.empty() ? "(unnamed)" : mine.local,
                                   other_end.local.empty() ? "(unnamed)" : other_end.local));
      edge(me, r, fmt::format("thread {} waits in {} on fd {} (socket {})", t.tid, w.call, d.fd, d.target.inode));
      for (const auto& h : theirs)
        if (processes_.count(h.pid))
          edge(r, processes_.at(h.pid), fmt::format("pid {} holds the other end (fd {})", h.pid, h.fd));
      return true;
    }
    return false;
  }

  // Least fixed point of "can progress", from the nodes that can by themselves.
  void mark_stuck() {
    const std::size_t n = g_.nodes.size();
    std::vector<std::vector<int>> reverse(n);
    std::vector<int> out_degree(n, 0);
    for (const auto& e : g_.edges) {
      reverse[e.to].push_back(e.from);
      ++out_degree[e.from];
    }
    std::vector<bool> progress(n, false);
    std::deque<int> todo;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& node = g_.nodes[i];
      bool seed = node.standing == Standing::Runs || node.standing == Standing::Sleeps ||
                  node.standing == Standing::Unknown ||
                  (node.standing == Standing::Waits && out_degree[i] == 0 && node.kind != NodeKind::Process);
      if (seed) {
        progress[i] = true;
        todo.push_back(static_cast<int>(i));
      }
    }
    while (!todo.empty()) {
      int x = todo.front();
      todo.pop_front();
      for (int from : reverse[x])
        if (!progress[from] && g_.nodes[from].standing != Standing::CannotRun) {
          progress[from] = true;
          todo.push_back(from);
        }
    }
    for (std::size_t i = 0; i < n; ++i) g_.nodes[i].stuck = !progress[i];
  }
};

std::string job_key(const ProcessSnapshot& p, int world) {
  std::string key = std::to_string(world);
  for (const char* name :
       {"TORCHELASTIC_RUN_ID", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID", "SLURM_STEP_ID", "MASTER_PORT"})
    if (auto it = p.environment.find(name); it != p.environment.end()) key += "/" + it->second;
  return key;
}

int world_of(const ProcessSnapshot& p) {
  for (const char* name : {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE"})
    if (auto it = p.environment.find(name); it != p.environment.end()) {
      int v = std::atoi(it->second.c_str());
      if (v > 0) return v;
    }
  return 0;
}

// TCP connections `pid` holds whose far end sent its FIN (CLOSE_WAIT: the peer closed its
// socket or exited) and whose other end no process of the snapshot holds.
int connections_closed_by_peer(const Snapshot& s, int pid) {
  int n = 0;
  for (const auto& c : s.connections) {
    if (c.end_a.protocol.rfind("tcp", 0) != 0 || c.end_a.state != "CLOSE_WAIT" || !c.holders_b.empty()) continue;
    if (std::any_of(c.holders_a.begin(), c.holders_a.end(), [&](const Holder& h) { return h.pid == pid; })) ++n;
  }
  return n;
}

}  // namespace

std::vector<Job> jobs_of(const Snapshot& s) {
  std::map<std::string, Job> by_key;
  for (const auto& p : s.processes) {
    if (!p.target || p.rank < 0) continue;
    int world = world_of(p);
    if (world <= 0 || p.rank >= world) continue;
    auto& job = by_key[job_key(p, world)];
    job.key = job_key(p, world);
    job.world = world;
    job.pids.push_back(p.info.pid);
    job.ranks.push_back(p.rank);
  }
  std::vector<Job> jobs;
  for (auto& [key, job] : by_key) {
    // Ranks no live process holds count as exited only when the snapshot could have
    // seen them: the ranks' launcher (their common parent) was read, or so were others.
    std::set<int> parents;
    for (int pid : job.pids) parents.insert(s.find(pid)->info.ppid);
    bool launcher_read = parents.size() == 1 && s.find(*parents.begin()) && s.find(*parents.begin())->target;
    for (int pid : job.pids)
      if (int n = connections_closed_by_peer(s, pid); n > 0) job.closed_by_peer[pid] = n;
    // A rank whose peer hung up on it (a rank that started its peer itself, as a launcher,
    // and reaped it) sees its job's absent rank as gone, not elsewhere: only where one rank
    // is absent, since a closed connection does not say whose it was.
    job.absent_seen_by_closed_connections = !launcher_read && job.pids.size() < 2 && !job.closed_by_peer.empty() &&
                                            job.world == static_cast<int>(job.pids.size()) + 1;
    if (launcher_read || job.pids.size() >= 2 || job.absent_seen_by_closed_connections)
      for (int r = 0; r < job.world; ++r)
        if (std::find(job.ranks.begin(), job.ranks.end(), r) == job.ranks.end()) job.absent_ranks.push_back(r);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

WaitGraph build_wait_graph(const Snapshot& s) { return Builder(s).build(); }

nlohmann::json graph_json(const WaitGraph& g) {
  nlohmann::json nodes = nlohmann::json::array(), edges = nlohmann::json::array();
  for (const auto& n : g.nodes) {
    nlohmann::json j = {{"id", n.id},
                        {"kind", to_string(n.kind)},
                        {"label", n.label},
                        {"standing", to_string(n.standing)},
                        {"stuck", n.stuck}};
    if (n.pid) j["pid"] = n.pid;
    if (n.tid) j["tid"] = n.tid;
    if (n.rank >= 0) j["rank"] = n.rank;
    if (!n.call.empty()) j["call"] = n.call;
    if (n.kind == NodeKind::Thread) j["application"] = n.application;
    nodes.push_back(std::move(j));
  }
  for (const auto& e : g.edges) {
    nlohmann::json edge = {{"from", e.from}, {"to", e.to}, {"evidence", e.evidence}};
    if (e.any_of) edge["any_of"] = true;
    edges.push_back(std::move(edge));
  }
  return {{"nodes", std::move(nodes)}, {"edges", std::move(edges)}};
}

std::string graph_dot(const WaitGraph& g, bool only_stuck) {
  auto quoted = [](std::string s) {
    std::string out;
    for (char c : s) out += c == '"' ? std::string("\\\"") : std::string(1, c);
    return "\"" + out + "\"";
  };
  std::string out = "digraph waits_for {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (const auto& n : g.nodes) {
    if (only_stuck && !n.stuck) continue;
    std::string label = n.label + (n.call.empty() ? "" : "\\n" + n.call);
    out += fmt::format("  n{} [label={}{}];\n", n.id, quoted(label), n.stuck ? ", color=red" : "");
  }
  for (const auto& e : g.edges) {
    if (only_stuck && !(g.nodes[e.from].stuck && g.nodes[e.to].stuck)) continue;
    out += fmt::format("  n{} -> n{} [tooltip={}];\n", e.from, e.to, quoted(e.evidence));
  }
  return out + "}\n";
}

}  // namespace hangbench::diagnose
