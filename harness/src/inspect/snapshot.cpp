// take_snapshot(): targets, then the sockets and pipes they hold, then every
// process on the machine that holds a descriptor for one of them.
#include "hangbench/snapshot.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "hangbench/clock.hpp"
#include "hangbench/native_stacks.hpp"
#include "hangbench/nccl_library.hpp"
#include "hangbench/python_stacks.hpp"
#include "inspect/remote_memory.hpp"
#include "inspect/unix_peers.hpp"

namespace hangbench::diagnose {

using proc::DescriptorKind;
using proc::SocketEntry;

const ProcessSnapshot* Snapshot::find(int pid) const {
  for (const auto& p : processes)
    if (p.info.pid == pid) return &p;
  return nullptr;
}

int Snapshot::parent_of(int pid) const {
  if (const auto* p = find(pid)) return p->info.ppid;
  auto it = ancestor_parents.find(pid);
  return it == ancestor_parents.end() ? 0 : it->second;
}

std::vector<Holder> Snapshot::holders_of(std::uint64_t inode, DescriptorKind kind) const {
  std::vector<Holder> out;
  for (const auto& p : processes)
    for (const auto& d : p.descriptors)
      if (d.target.inode == inode && d.target.kind == kind) out.push_back({p.info.pid, d.fd, d.flags});
  return out;
}

namespace {

double now_unix() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

struct SocketTables {
  std::map<std::uint64_t, SocketEntry> by_inode;
  std::vector<SocketEntry> tcp;  // tcp + tcp6, for pairing
};

// One read per network namespace: /proc/PID/net/* shows the namespace of PID.
void read_socket_tables(const std::string& root, int pid, SocketTables& tables) {
  const std::string net = root + "/" + std::to_string(pid) + "/net/";
  for (auto [file, v6] : {std::pair{"tcp", false}, std::pair{"tcp6", true}}) {
    if (auto text = proc::read_text(net + file)) {
      for (auto& e : proc::parse_tcp_table(*text, v6)) {
        tables.tcp.push_back(e);
        tables.by_inode.emplace(e.inode, e);
      }
    }
  }
  if (auto text = proc::read_text(net + "unix"))
    for (auto& e : proc::parse_unix_table(*text)) tables.by_inode.emplace(e.inode, e);
}

// A pipe a target reads from (beyond stdin) can hang it; its stdout and stderr
// pipes are a shell's plumbing, and naming the pipeline's other commands fills the report.
bool reads_pipe(const proc::Descriptor& d) {
  if (d.target.kind != DescriptorKind::Pipe || d.fd <= 2) return false;
  int mode = d.flags < 0 ? O_RDWR : (d.flags & O_ACCMODE);
  return mode == O_RDONLY || mode == O_RDWR;
}

std::optional<SocketEntry> tcp_peer(const SocketTables& tables, const SocketEntry& end) {
  if (end.state == "LISTEN" || end.remote.empty()) return std::nullopt;
  for (const auto& e : tables.tcp)
    if (e.local == end.remote && e.remote == end.local && e.inode != end.inode && e.inode != 0) return e;
  return std::nullopt;
}

// The rank a launcher gave the process (torchrun, srun, mpirun, PMI); -1 when none did.
int rank_from_environment(const std::map<std::string, std::string>& env) {
  for (const char* name : {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (auto it = env.find(name); it != env.end() && !it->second.empty()) return std::atoi(it->second.c_str());
  return -1;
}

// What the rules and the wait-for graph read of a target's starting environment:
// how CUDA launches and loads, and which job and world the rank belongs to.
constexpr const char* kEnvironmentRead[] = {"CUDA_LAUNCH_BLOCKING",
                                            "CUDA_MODULE_LOADING",
                                            "WORLD_SIZE",
                                            "OMPI_COMM_WORLD_SIZE",
                                            "SLURM_NTASKS",
                                            "PMI_SIZE",
                                            "TORCHELASTIC_RUN_ID",
                                            "MASTER_PORT",
                                            "SLURM_JOB_ID",
                                            "SLURM_STEP_ID",
                                            "OMPI_MCA_ess_base_jobid"};

// What is left of a nanosleep or clock_nanosleep: a rank that pauses a few
// milliseconds between steps is not a rank that sleeps for good.
double sleep_left(const RemoteMemory& memory, const proc::ThreadInfo& t) {
  const auto& a = t.syscall.args;
  std::uint64_t request = 0;
  clockid_t clock = CLOCK_MONOTONIC;
  bool absolute = false;
  if (t.syscall_name == "nanosleep" && !a.empty()) {
    request = a[0];
  } else if (t.syscall_name == "clock_nanosleep" && a.size() > 2) {
    clock = static_cast<clockid_t>(a[0]);
    absolute = (a[1] & TIMER_ABSTIME) != 0;
    request = a[2];
  }
  if (!request) return -1;
  auto ts = memory.value<struct timespec>(request);
  if (!ts) return -1;
  double seconds = static_cast<double>(ts->tv_sec) + static_cast<double>(ts->tv_nsec) / 1e9;
  if (!absolute) return seconds;  // the whole request: an upper bound of what is left
  struct timespec now {};
  if (clock_gettime(clock, &now) != 0) return -1;
  return std::max(0.0, seconds - (static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9));
}

// A thread in futex waits on a word: reading it (and the mutex owner field beside
// it) lets the graph tell a join or a mutex from any other futex wait.
void read_futex_words(ProcessSnapshot& p) {
  RemoteMemory memory(p.info.pid);
  for (auto& t : p.threads) {
    if (t.syscall_name != "futex" || t.syscall.args.empty() || t.syscall.args[0] == 0) continue;
    if (auto word = memory.value<std::uint32_t>(t.syscall.args[0])) t.futex_word = *word;
    if (auto owner = memory.value<std::int32_t>(t.syscall.args[0] + 8); owner && *owner > 0) t.futex_owner = *owner;
  }
  for (auto& t : p.threads) t.sleep_left_s = sleep_left(memory, t);
}

// A hang is a lack of progress, which one instant cannot show: two threads caught in
// recv by a ping-pong look like a ring, and a training step's GPU wait like a hang.
// While the stacks are read, a sampler looks at every target thread's syscall every
// 10 ms and notes a thread seen asleep in a timed sleep (a step's pause, never inside
// a wait); at the end, at least kProgressWindow after the first read, the context
// switches are read again. The graph counts a thread that did either as moving.
constexpr std::chrono::milliseconds kProgressWindow{100};
constexpr std::chrono::milliseconds kSampleEvery{10};

class ProgressSampler {
 public:
  ProgressSampler(const Snapshot& s, std::string root) : root_(std::move(root)) {
    for (const auto& p : s.processes)
      if (p.target)
        for (const auto& t : p.threads)
          if (t.syscall_name != "nanosleep" && t.syscall_name != "clock_nanosleep")
            watched_.push_back({p.info.pid, t.tid});
    worker_ = std::thread([this] { run(); });
  }

  // Stops sampling (no sooner than the window), then records what was seen.
  void finish(Snapshot& s, std::chrono::steady_clock::time_point first_read) {
    std::this_thread::sleep_until(first_read + kProgressWindow);
    stop_ = true;
    worker_.join();
    for (auto& p : s.processes) {
      if (!p.target) continue;
      for (auto& t : p.threads) {
        if (t.switches >= 0) t.switches_later = proc::read_context_switches(root_, p.info.pid, t.tid);
        if (slept_.count({p.info.pid, t.tid})) t.seen_asleep = true;
      }
    }
  }

 private:
  void run() {
    while (!stop_) {
      for (const auto& [pid, tid] : watched_) {
        if (slept_.count({pid, tid})) continue;
        auto text = proc::read_text(root_ + "/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
        if (!text) continue;
        auto line = proc::parse_syscall(*text);
        if (line.kind != proc::SyscallLine::Kind::InSyscall) continue;
        const auto name = proc::syscall_name(line.number);
        if (name == "nanosleep" || name == "clock_nanosleep") slept_.insert({pid, tid});
      }
      std::this_thread::sleep_for(kSampleEvery);
    }
  }

  std::string root_;
  std::vector<std::pair<int, int>> watched_;
  std::set<std::pair<int, int>> slept_;  // written by the sampler only, read after its join
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

ProcessSnapshot read_one(const std::string& root, int pid, bool target) {
  ProcessSnapshot p;
  p.target = target;
  if (auto info = proc::read_process(root, pid)) p.info = *info;
  p.descriptors = proc::read_descriptors(root, pid);
  p.threads = proc::read_threads(root, pid);
  if (target) {
    p.libraries = proc::read_libraries(root, pid);
    const auto environment = read_environment(root, pid);
    p.rank = rank_from_environment(environment);
    for (const char* name : kEnvironmentRead)
      if (auto it = environment.find(name); it != environment.end()) p.environment[name] = it->second;
    if (root == "/proc") read_futex_words(p);  // a fixture's proc root has no memory to read
  }
  return p;
}

// Python frames first (the process keeps running), then native stacks from libdw
// or, where asked, a debugger; then the Python frames merged into the native ones.
// `opts.debugger.timeout_s` is what is left of the whole capture's bound.
void read_stacks(ProcessSnapshot& p, const SnapshotOptions& opts) {
  p.python = read_python_stacks(p.info.pid);
  bool cuda_only = opts.debugger.program.find("cuda-gdb") != std::string::npos && !opts.debugger.everywhere;
  bool use_debugger = !opts.debugger.program.empty() && (!cuda_only || has_cuda_context(p));
  if (use_debugger) {
    auto started = std::chrono::steady_clock::now();
    p.stacks = capture_stacks(p.info.pid, opts, p.info.state);
    p.stacks.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  } else {
    p.stacks = libdw_stacks(p.info.pid, opts.debugger.timeout_s);
  }
  for (auto& t : p.stacks.threads) {
    if (t.frames.empty()) continue;  // a debugger's stacks: function names only
    for (const auto& py : p.python.threads)
      if (py.tid == t.tid && !py.frames.empty()) t.frames = merge_python_frames(t.frames, py);
  }
}

// The ranks whose Flight Recorder to ask for: each rank's dump is its prefix and its
// rank, so every rank is asked (at once, beside its stacks). A forked worker inherits
// its rank's environment but not its rank (read_targets clears it), and the launcher
// (torchrun's agent) has none: a process without a rank is asked only in a job of one
// process, and of those sharing one prefix only the earliest started, the job itself.
std::set<const ProcessSnapshot*> flight_recorder_owners(const Snapshot& s, const std::string& root) {
  std::map<std::string, const ProcessSnapshot*> by_prefix;
  const bool any_rank = std::any_of(s.processes.begin(), s.processes.end(),
                                    [](const ProcessSnapshot& p) { return p.target && p.rank >= 0; });
  for (const auto& p : s.processes) {
    if (!p.target || (any_rank && p.rank < 0)) continue;
    auto settings = flight_recorder_settings(read_environment(root, p.info.pid));
    if (!settings.askable()) continue;
    auto& owner = by_prefix[settings.pipe_prefix + "\n" + settings.dump_places() + "\n" + std::to_string(p.rank)];
    if (!owner || p.info.start_unix < owner->info.start_unix) owner = &p;
  }
  std::set<const ProcessSnapshot*> out;
  for (const auto& [prefix, p] : by_prefix) out.insert(p);
  return out;
}

}  // namespace

namespace {

// The targets: each process, its descriptors, the socket tables of each network
// namespace they are in; returns the socket and pipe inodes whose holders matter.
std::set<std::uint64_t> read_targets(Snapshot& s, const std::vector<int>& pids, const std::string& root,
                                     SocketTables& tables) {
  std::set<std::string> namespaces_read;
  std::set<std::uint64_t> wanted;
  for (int pid : pids) {
    if (!proc::read_process(root, pid)) {
      s.notes.push_back("pid " + std::to_string(pid) + " could not be read (it exited, or is not visible)");
      continue;
    }
    s.processes.push_back(read_one(root, pid, true));
    const auto& p = s.processes.back();
    if (p.descriptors.empty() && ::access((root + "/" + std::to_string(pid) + "/fd").c_str(), R_OK) != 0)
      s.notes.push_back("the descriptors of pid " + std::to_string(pid) + " are not readable (not ours?)");
    if (namespaces_read.insert(p.info.net_namespace).second) read_socket_tables(root, pid, tables);
    for (const auto& d : p.descriptors)
      if (d.target.kind == DescriptorKind::Socket || reads_pipe(d)) wanted.insert(d.target.inode);
  }
  // A forked worker inherits its rank's environment: the rank is its parent's, not its own.
  // (Parents found through one index, not a search of all processes per process.)
  std::map<int, size_t> index_of;
  for (size_t i = 0; i < s.processes.size(); ++i) index_of.emplace(s.processes[i].info.pid, i);
  for (auto& p : s.processes) {
    auto it = index_of.find(p.info.ppid);
    if (it != index_of.end() && p.rank >= 0 && s.processes[it->second].rank == p.rank) p.rank = -1;
  }
  return wanted;
}

// Each wanted socket with its other end (a unix peer, or the TCP connection's
// reverse); the other ends become wanted too: their holders are the point.
std::vector<Connection> pair_connections(const SocketTables& tables, std::set<std::uint64_t>& wanted) {
  std::vector<Connection> connections;
  std::set<std::uint64_t> paired;
  auto unix_peers = read_unix_peers();
  for (std::uint64_t inode : std::vector<std::uint64_t>(wanted.begin(), wanted.end())) {
    auto it = tables.by_inode.find(inode);
    if (it == tables.by_inode.end() || paired.count(inode)) continue;
    Connection c;
    c.end_a = it->second;
    if (c.end_a.protocol == "unix") {
      if (auto peer = unix_peers.find(inode); peer != unix_peers.end()) {
        if (auto pe = tables.by_inode.find(peer->second); pe != tables.by_inode.end())
          c.end_b = pe->second;
        else
          c.end_b = SocketEntry{"unix", "", "", "CONNECTED", peer->second, c.end_a.unix_type};
      }
    } else {
      c.end_b = tcp_peer(tables, c.end_a);
    }
    paired.insert(inode);
    if (c.end_b) {
      paired.insert(c.end_b->inode);
      wanted.insert(c.end_b->inode);
    }
    connections.push_back(std::move(c));
  }
  return connections;
}

// Every other process that holds a wanted inode, wherever it sits in the process tree.
void add_holders(Snapshot& s, const std::vector<int>& pids, const std::string& root,
                 const std::set<std::uint64_t>& wanted) {
  std::set<int> target_set(pids.begin(), pids.end());
  int unreadable = 0;
  const int self = static_cast<int>(::getpid());
  for (int pid : proc::list_pids(root)) {
    if (target_set.count(pid) || pid == self) continue;  // we hold nothing of theirs worth naming
    const std::string fd_dir = root + "/" + std::to_string(pid) + "/fd";
    auto descriptors = proc::read_descriptors(root, pid);
    if (descriptors.empty() && ::access(fd_dir.c_str(), R_OK) != 0) {
      ++unreadable;
      continue;
    }
    bool holds = std::any_of(descriptors.begin(), descriptors.end(), [&](const proc::Descriptor& d) {
      return d.target.inode != 0 && d.target.kind != DescriptorKind::File && wanted.count(d.target.inode);
    });
    if (!holds) continue;
    ProcessSnapshot p;
    if (auto info = proc::read_process(root, pid))
      p.info = *info;
    else
      continue;
    p.descriptors = std::move(descriptors);
    p.threads = proc::read_threads(root, pid);  // whether it can still write or close its end is the point
    s.processes.push_back(std::move(p));
  }
  if (unreadable > 0)
    s.notes.push_back(std::to_string(unreadable) + " processes' descriptors were not readable; holders among them " +
                      (::geteuid() == 0 ? "cannot be named (even as root: they exited, or another namespace hides them)"
                                        : "cannot be named (run as root)"));
}

// Each read process's ancestors up to pid 1 that were not read themselves: one /proc read
// per ancestor, however many processes share it.
void record_ancestry(Snapshot& s, const std::string& root) {
  for (const auto& p : s.processes) {
    int pid = p.info.ppid;
    for (int hop = 0; hop < 64 && pid > 1 && !s.find(pid) && !s.ancestor_parents.count(pid); ++hop) {
      auto info = proc::read_process(root, pid);
      if (!info) break;
      s.ancestor_parents[pid] = info->ppid;
      pid = info->ppid;
    }
  }
}

// Who holds each end of each connection, and who reads and writes each pipe: every
// descriptor indexed by its inode once, not every process searched per inode.
void name_holders(Snapshot& s, std::vector<Connection> connections, const std::set<std::uint64_t>& wanted) {
  std::map<std::pair<int, std::uint64_t>, std::vector<Holder>> by_inode;
  for (const auto& p : s.processes)
    for (const auto& d : p.descriptors)
      if (d.target.inode != 0 && (d.target.kind == DescriptorKind::Socket || d.target.kind == DescriptorKind::Pipe))
        by_inode[{static_cast<int>(d.target.kind), d.target.inode}].push_back({p.info.pid, d.fd, d.flags});
  auto holders_of = [&](std::uint64_t inode, DescriptorKind kind) {
    auto it = by_inode.find({static_cast<int>(kind), inode});
    return it == by_inode.end() ? std::vector<Holder>{} : it->second;
  };
  for (auto& c : connections) {
    c.holders_a = holders_of(c.end_a.inode, DescriptorKind::Socket);
    if (c.end_b) c.holders_b = holders_of(c.end_b->inode, DescriptorKind::Socket);
  }
  s.connections = std::move(connections);
  for (std::uint64_t inode : wanted) {
    auto holders = holders_of(inode, DescriptorKind::Pipe);
    if (holders.empty()) continue;  // a socket inode
    PipeUse use;
    use.inode = inode;
    for (const auto& h : holders) {
      int mode = h.flags < 0 ? O_RDWR : (h.flags & O_ACCMODE);
      if (mode == O_RDONLY || mode == O_RDWR) use.readers.push_back(h);
      if (mode == O_WRONLY || mode == O_RDWR) use.writers.push_back(h);
    }
    s.pipes.push_back(std::move(use));
  }
}

// Every target's stacks, several at once: the wait is about the slowest process,
// not their sum. A rank's Flight Recorder dump is asked for beside its stacks, not
// before them, and not waited for once its stacks show the thread that would
// write it blocked. At most kStackWorkers processes are read at a time (2,000 at
// once took 4.3 GB), and opts.debugger.timeout_s bounds them all together: a
// process whose turn comes after `deadline` is not read, and says so.
constexpr unsigned kStackWorkers = 16;

void read_all_stacks(Snapshot& s, const SnapshotOptions& opts, std::chrono::steady_clock::time_point deadline) {
  const std::string& root = opts.proc_root;
  std::vector<std::future<void>> recorder_reads;
  std::set<const ProcessSnapshot*> recorders = flight_recorder_owners(s, root);
  std::vector<ProcessSnapshot*> targets;
  for (auto& p : s.processes)
    if (p.target) targets.push_back(&p);
  std::vector<std::unique_ptr<std::atomic<bool>>> stacks_read;
  for (size_t i = 0; i < targets.size(); ++i) stacks_read.push_back(std::make_unique<std::atomic<bool>>(false));
  for (size_t i = 0; i < targets.size(); ++i) {
    ProcessSnapshot& p = *targets[i];
    if (!recorders.count(&p)) continue;
    std::atomic<bool>* ready = stacks_read[i].get();
    recorder_reads.push_back(std::async(std::launch::async, [&p, &opts, &root, ready] {
      auto settings = flight_recorder_settings(read_environment(root, p.info.pid));
      const double bound =
          flight_recorder_wait_bound(settings, opts.debugger.timeout_s, opts.debugger.flight_recorder_wait_s);
      // The stacks do not change once read: what they say of the dump is worked out once.
      std::optional<std::pair<std::string, std::string>> read;  // (cannot dump, writer)
      auto from_stacks = [&p, ready, &read]() -> const std::pair<std::string, std::string>* {
        if (!read && ready->load(std::memory_order_acquire))
          read.emplace(flight_recorder_cannot_dump(p), flight_recorder_writer(p));
        return read ? &*read : nullptr;
      };
      p.flight_recorder = collect_flight_recorder(
          settings, bound,
          [&from_stacks]() -> std::string {
            const auto* r = from_stacks();
            return r ? r->first : "";
          },
          [&from_stacks]() -> std::string {
            const auto* r = from_stacks();
            return r ? r->second : "";
          },
          flight_recorder_writing_bound(bound, opts.debugger.timeout_s, opts.debugger.flight_recorder_wait_s));
    }));
  }
  std::atomic<size_t> next{0};
  std::atomic<int> not_read{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < targets.size();) {
      ProcessSnapshot& p = *targets[i];
      const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0.05) {
        p.stacks.attempted = false;
        p.stacks.skipped_reason =
            fmt::format("not read: the capture's bound of {} s was spent before its turn", opts.debugger.timeout_s);
        ++not_read;
      } else {
        SnapshotOptions bounded = opts;
        bounded.debugger.timeout_s = std::min(opts.debugger.timeout_s, left);
        read_stacks(p, bounded);
      }
      stacks_read[i]->store(true, std::memory_order_release);
    }
  };
  const size_t workers = std::min<size_t>(kStackWorkers, targets.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < workers; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (auto& done : recorder_reads) done.get();
  if (not_read > 0) {
    s.notes.push_back(
        fmt::format("the stacks of {} of {} processes were not read: --timeout {} s bounds the whole "
                    "capture, and was spent",
                    not_read.load(), targets.size(), opts.debugger.timeout_s));
  }
}

// The NCCL libraries the targets map, read (version, hash, shutdown() call) while the
// holders and stacks are: the rules ask for them later, and a vendor library of a few
// hundred megabytes takes longer to hash than the rest of the snapshot. The results
// wait in describe_nccl_library's per-file memo.
std::vector<std::future<void>> start_reading_nccl_libraries(const Snapshot& s) {
  std::vector<std::future<void>> reads;
  for (const auto& path : nccl_libraries_mapped(s))
    reads.push_back(std::async(std::launch::async, [path] { (void)describe_nccl_library(path); }));
  return reads;
}

}  // namespace

Snapshot take_snapshot(const std::vector<int>& pids, const SnapshotOptions& opts) {
  auto started = std::chrono::steady_clock::now();
  Snapshot s;
  s.captured_at = now_unix();
  s.host = host_name();
  s.target_pids = pids;
  SocketTables tables;
  std::set<std::uint64_t> wanted = read_targets(s, pids, opts.proc_root, tables);
  const auto threads_read = std::chrono::steady_clock::now();
  ProgressSampler sampler(s, opts.proc_root);
  auto nccl_reads = start_reading_nccl_libraries(s);
  std::vector<Connection> connections = pair_connections(tables, wanted);
  add_holders(s, pids, opts.proc_root, wanted);
  name_holders(s, std::move(connections), wanted);
  if (opts.stacks)
    read_all_stacks(s, opts,
                    started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(opts.debugger.timeout_s)));
  record_ancestry(s, opts.proc_root);
  for (auto& read : nccl_reads) read.get();
  sampler.finish(s, threads_read);
  s.read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return s;
}

bool has_cuda_context(const ProcessSnapshot& p) {
  return std::any_of(p.threads.begin(), p.threads.end(),
                     [](const proc::ThreadInfo& t) { return t.name.rfind("cuda-EvtHandlr", 0) == 0; });
}

std::vector<proc::FdTarget> shared_inodes(const ProcessSnapshot& a, const ProcessSnapshot& b) {
  auto key = [](const proc::FdTarget& t) { return std::pair{static_cast<int>(t.kind), t.inode}; };
  std::set<std::pair<int, std::uint64_t>> mine, seen;
  for (const auto& d : a.descriptors)
    if (d.target.inode && (d.target.kind == DescriptorKind::Socket || d.target.kind == DescriptorKind::Pipe))
      mine.insert(key(d.target));
  std::vector<proc::FdTarget> both;
  for (const auto& d : b.descriptors)
    if (mine.count(key(d.target)) && seen.insert(key(d.target)).second) both.push_back(d.target);
  return both;
}

}  // namespace hangbench::diagnose
