// Cross-rank wait-for, one sentence per cycle: who waits for whom, from what the
// host can read (threads, stacks, sockets). Two cycles are known:
//  - the DDP teardown: ranks wait on a rank in ncclCommAbort, which waits for its
//    proxy thread, whose peer socket a forked child (a DataLoader worker) holds;
//  - the pipeline (PP) cycle: a rank blocked in an MPI receive, a rank whose thread
//    holds the GIL inside a CUDA driver call, and the NCCL kernel in flight that
//    call waits behind (a kernel is not visible from the host: inferred).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "explain/rule_helpers.hpp"

namespace hangbench::diagnose::rules {

namespace {

std::string rank_name(const Snapshot& s, int pid) {
  const auto* p = s.find(pid);
  if (p && p->rank >= 0) return fmt::format("rank {}", p->rank);
  return fmt::format("pid {}", pid) + (p ? " (" + p->info.comm + ")" : "");
}

bool in_python_function(const ProcessSnapshot& p, const std::string& function) {
  for (const auto& t : p.python.threads)
    for (const auto& f : t.frames)
      if (f.function == function || f.function.find("." + function) != std::string::npos) return true;
  return false;
}

// "pid 894, rank 0's DataLoader worker" or "pid 894 (python3), a child of rank 0".
std::string holder_words(const Snapshot& s, int holder, int owner) {
  const auto* h = s.find(holder);
  std::string whose = rank_name(s, owner) + "'s";
  if (h && in_python_function(*h, "_worker_loop")) return fmt::format("pid {}, {} DataLoader worker", holder, whose);
  if (h && h->info.ppid == owner)
    return fmt::format("pid {} ({}), a child of {}", holder, h->info.comm, rank_name(s, owner));
  return describe_process(s, holder, owner);
}

// The innermost teardown call the joiner waits in ("ncclCommAbort"), else its wait.
std::string teardown_call(const ProcessSnapshot& p, int tid) {
  const auto& frames = stack_of(p, tid);
  for (const char* call : {"ncclCommAbort", "ncclCommDestroy", "commFree", "pthread_join"})
    if (stack_has(frames, {call})) return call;
  for (const auto& t : p.threads)
    if (t.tid == tid) return what_it_waits_in(t);
  return "a wait";
}

// Ranks with a thread in a receive or poll on a TCP connection whose other end the
// subject (or a process it forked) holds: they wait for it.
std::vector<std::string> ranks_waiting_on(const Snapshot& s, int subject, const std::vector<int>& subject_side) {
  std::vector<std::string> out;
  std::set<int> named;
  for (const auto& c : s.connections) {
    if (!c.end_b || c.end_a.protocol == "unix") continue;
    for (int side = 0; side < 2; ++side) {
      const auto& mine = side == 0 ? c.holders_a : c.holders_b;
      const auto& theirs = side == 0 ? c.holders_b : c.holders_a;
      bool theirs_subject = std::any_of(theirs.begin(), theirs.end(), [&](const Holder& h) {
        return std::find(subject_side.begin(), subject_side.end(), h.pid) != subject_side.end();
      });
      if (!theirs_subject) continue;
      for (const auto& h : mine) {
        const auto* p = s.find(h.pid);
        if (!p || !p->target || p->rank < 0 || h.pid == subject || named.count(h.pid)) continue;
        for (const auto& t : p->threads) {
          bool on_fd = std::find(t.polled_fds.begin(), t.polled_fds.end(), h.fd) != t.polled_fds.end() ||
                       (!t.syscall.args.empty() && t.syscall.args[0] == static_cast<std::uint64_t>(h.fd) &&
                        (t.syscall_name.rfind("recv", 0) == 0 || t.syscall_name == "read"));
          if (!on_fd) continue;
          named.insert(h.pid);
          out.push_back(fmt::format("{} waits in {} for {}", rank_name(s, h.pid),
                                    t.syscall_name.empty() ? "poll" : t.syscall_name, rank_name(s, subject)));
          break;
        }
      }
    }
  }
  return out;
}

std::vector<Finding> teardown_cycles(const Snapshot& s, const std::vector<Finding>& alias) {
  std::vector<Finding> out;
  for (const auto& f : alias) {
    if (f.pids.size() < 2 || f.tids.empty()) continue;
    const auto* p = s.find(f.pids.front());
    if (!p) continue;
    int poller = f.tids.back();
    int joiner = f.tids.size() > 1 ? f.tids.front() : 0;
    std::vector<std::string> parts = ranks_waiting_on(s, p->info.pid, f.pids);
    std::string poller_name;
    for (const auto& t : p->threads)
      if (t.tid == poller) poller_name = t.name;
    bool proxy = stack_has(stack_of(*p, poller), {"ncclProxyService"}) || poller_name.find("NCCL") != std::string::npos;
    std::string thread_words = proxy ? "its proxy thread" : fmt::format("its thread {} \"{}\"", poller, poller_name);
    if (joiner)
      parts.push_back(
          fmt::format("{} waits in {} for {}", rank_name(s, p->info.pid), teardown_call(*p, joiner), thread_words));
    else  // no teardown call seen waiting on it: the poller itself is where the wait starts
      parts.push_back(fmt::format("{}'s thread {} \"{}\" waits in poll for an EOF that does not come",
                                  rank_name(s, p->info.pid), poller, poller_name));
    std::vector<std::string> holders;
    for (std::size_t i = 1; i < f.pids.size() && holders.size() < 2; ++i)
      holders.push_back(holder_words(s, f.pids[i], s.find(f.pids[i]) ? s.find(f.pids[i])->info.ppid : p->info.pid));
    parts.push_back(
        fmt::format("{}'s peer socket is held by {}", proxy ? "the proxy" : "that thread", join(holders, " and ")));
    Finding w;
    w.rule = "wait-for";
    w.title = "who waits for whom";
    w.severity = Severity::Note;
    w.pids = f.pids;
    w.tids = f.tids;
    w.summary = join(parts, "; ") + ".";
    out.push_back(std::move(w));
  }
  return out;
}

bool in_cuda_driver(const StackThread& t, std::string& call) {
  for (const auto& f : t.frames)
    if (f.module.find("libcuda.so") != std::string::npos) {
      if (call.empty() || call == "??") call = f.function;
      if (f.function.rfind("cu", 0) == 0) {
        call = f.function;
        return true;
      }
    }
  return !call.empty();
}

// A thread blocked in an MPI receive or wait: named by the MPI call the program
// made (PMPI_Recv is MPI_Recv), else by Open MPI's internal wait.
bool in_mpi_wait(const StackThread& t, std::string& call) {
  for (const char* name : {"MPI_Recv", "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Probe", "MPI_Sendrecv"})
    for (const auto& f : t.functions)
      if (f == name || f == std::string("P") + name) {
        call = name;
        return true;
      }
  for (const auto& f : t.functions)
    if (f == "ompi_request_default_wait" || f == "ompi_sync_wait" || f == "ompi_request_default_wait_all") {
      call = f;
      return true;
    }
  return false;
}

std::vector<Finding> pipeline_cycle(const Snapshot& s) {
  std::vector<std::string> mpi, gil;
  std::vector<int> pids;
  for (const auto& p : s.processes) {
    if (!p.target) continue;
    for (const auto& t : p.stacks.threads) {
      std::string call;
      if (in_mpi_wait(t, call)) {
        mpi.push_back(fmt::format("{} waits in {} (thread {}) for a message that is not delivered",
                                  rank_name(s, p.info.pid), call, t.tid));
        pids.push_back(p.info.pid);
        break;
      }
    }
    for (const auto& t : p.stacks.threads) {
      std::string call;
      if (t.tid == p.python.gil_holder_tid && p.python.gil_holder_tid != 0 && in_cuda_driver(t, call)) {
        gil.push_back(
            fmt::format("{}'s thread {} holds the GIL inside the CUDA driver ({}), which waits behind the "
                        "NCCL operation in flight on the GPU (inferred: a kernel is not visible from the host)",
                        rank_name(s, p.info.pid), t.tid, call));
        pids.push_back(p.info.pid);
      }
    }
  }
  if (mpi.empty() || gil.empty()) return {};
  Finding w;
  w.rule = "wait-for";
  w.title = "who waits for whom (pipeline cycle)";
  w.severity = Severity::Hang;
  w.pids = pids;
  w.summary = join(mpi, "; ") + "; " + join(gil, "; ") +
              "; that operation needs the rank blocked in MPI to make progress, so none does.";
  return {w};
}

}  // namespace

std::vector<Finding> wait_for_cycles(const Snapshot& s) {
  auto found = pipeline_cycle(s);
  auto teardown = teardown_cycles(s, nccl_descriptor_alias(s));
  found.insert(found.end(), teardown.begin(), teardown.end());
  return found;
}

}  // namespace hangbench::diagnose::rules
