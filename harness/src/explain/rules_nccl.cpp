// The NCCL descriptor-alias teardown hang (NCCL 2.16.2 to 2.17.1, fixed in 2.18.1
// by shutdown() before close()): a thread polls the accepted end of a TCP
// connection whose other end is now held only by another process, typically a
// child forked after the connection existed. The poller never sees EOF.
#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"
#include "hangbench/plumbing.hpp"

namespace hangbench::diagnose::rules {

namespace {

const std::vector<std::string> kTeardownFrames = {"commFree", "commReclaim", "commCleanup", "ncclCommAbort",
                                                  "ncclCommDestroy"};

bool looks_like_proxy_thread(const proc::ThreadInfo& t) {
  return t.name.find("NCCL Serv") != std::string::npos || t.name.find("NCCL Prox") != std::string::npos ||
         t.name.find("proxy") != std::string::npos || t.name.find("Proxy") != std::string::npos;
}

// The parent of `pid` when the snapshot read it (0 otherwise): the process whose
// descriptors a forked child started with.
int known_parent(const Snapshot& s, int pid) {
  const auto* p = s.find(pid);
  return p && p->info.ppid > 1 && s.find(p->info.ppid) ? p->info.ppid : 0;
}

// Why the holder looks like an alias rather than an ordinary peer: it descends
// from the poller `owner`; or it descends from another process that no longer
// holds this end (that process made or received the connection and closed its
// copy; the fork kept one alive: a rank's connection to another rank, pinned by
// its DataLoader worker); or it shares other descriptors with the poller.
std::string alias_reason(const Snapshot& s, const ProcessSnapshot& owner, const ProcessSnapshot& holder,
                         std::uint64_t connection_inode) {
  auto shared = shared_inodes(owner, holder);
  shared.erase(std::remove_if(shared.begin(), shared.end(),
                              [&](const proc::FdTarget& t) {
                                return t.kind == proc::DescriptorKind::Socket && t.inode == connection_inode;
                              }),
               shared.end());
  std::string why;
  if (holder.info.ppid == owner.info.pid || is_descendant_of(s, holder.info.pid, owner.info.pid)) {
    why = fmt::format("it descends from pid {}", owner.info.pid);
  } else if (int ancestor = known_parent(s, holder.info.pid); ancestor != 0) {
    // Forked without exec (the same program: a rank's loader worker), by a process
    // that is no launcher and no longer holds the end: the copy outlived its original.
    const auto* a = s.find(ancestor);
    if (a && a->info.comm == holder.info.comm && !is_plumbing(*a) && !descriptor_for_inode(*a, connection_inode))
      why = fmt::format("it is a child that pid {} ({}) forked, and pid {} no longer holds this end itself", ancestor,
                        a->info.comm, ancestor);
  }
  if (!shared.empty()) {
    std::vector<std::string> fds;
    for (const auto& shared_target : shared) {
      const auto* mine = descriptor_for_inode(owner, shared_target.inode, shared_target.kind);
      const auto* theirs = descriptor_for_inode(holder, shared_target.inode, shared_target.kind);
      if (mine && theirs && fds.size() < 4)
        fds.push_back(fmt::format("its fd {} = pid {}'s fd {} ({})", theirs->fd, owner.info.pid, mine->fd, mine->link));
    }
    why += fmt::format("{}it holds duplicates of {} other descriptors of pid {} ({})", why.empty() ? "" : ", and ",
                       shared.size(), owner.info.pid, join(fds, ", "));
  }
  return why;
}

// A holder that itself waits on its end is in a conversation (a prefork server's
// worker, hangbench's watcher reading its socket pair), not pinning a copy it forgot.
bool waits_on_fd(const ProcessSnapshot& p, int fd) {
  static const std::vector<std::string> reads = {"read", "readv", "recvfrom", "recvmsg", "recvmmsg"};
  for (const auto& t : p.threads) {
    if (std::find(t.polled_fds.begin(), t.polled_fds.end(), fd) != t.polled_fds.end()) return true;
    if (std::find(reads.begin(), reads.end(), t.syscall_name) != reads.end() && !t.syscall.args.empty() &&
        t.syscall.args[0] == static_cast<std::uint64_t>(fd))
      return true;
  }
  return false;
}

// MPI and Slurm launchers keep a control connection to each rank they start; the
// rank (an exec'd program, not a copy of the launcher) made its end itself after
// the fork, so neither side's end is a duplicate, whichever side polls.
bool is_launcher(const ProcessSnapshot& p) { return is_plumbing(p); }

bool is_launcher_control_connection(const Snapshot& s, const ProcessSnapshot& poller,
                                    const std::vector<Holder>& other_holders) {
  return std::all_of(other_holders.begin(), other_holders.end(), [&](const Holder& h) {
    const auto* hp = s.find(h.pid);
    if (!hp || hp->info.comm == poller.info.comm) return false;
    if (is_launcher(poller)) return is_descendant_of(s, h.pid, poller.info.pid);  // launcher polls its rank
    return is_launcher(*hp) && is_descendant_of(s, poller.info.pid, h.pid);       // rank polls its launcher
  });
}

// A peer that still holds its own end, with its children's inherited copies: one
// holder is the ancestor of all the others and is itself no forked copy (not p's
// descendant, nor the child of a same-program parent that closed the end). Nothing
// was closed there, whatever descriptors the processes share through a launcher.
bool held_by_a_living_peer(const Snapshot& s, const ProcessSnapshot& p, const std::vector<Holder>& holders,
                           std::uint64_t inode) {
  auto original_owner = [&](const Holder& root) {
    if (is_descendant_of(s, root.pid, p.info.pid)) return false;
    const auto* holder = s.find(root.pid);
    if (int parent = known_parent(s, root.pid); holder && parent != 0) {
      const auto* a = s.find(parent);
      if (a && a->info.comm == holder->info.comm && !is_plumbing(*a) && !descriptor_for_inode(*a, inode)) return false;
    }
    return true;
  };
  return std::any_of(holders.begin(), holders.end(), [&](const Holder& root) {
    return original_owner(root) && std::all_of(holders.begin(), holders.end(), [&](const Holder& h) {
             return h.pid == root.pid || is_descendant_of(s, h.pid, root.pid);
           });
  });
}

// The CUDA driver's own threads ("cuda-EvtHandlr", "cuda00001400006"): the process
// made a CUDA context itself.
bool is_cuda_driver_thread(const proc::ThreadInfo& t) {
  if (t.name.rfind("cuda-", 0) == 0) return true;
  return t.name.size() > 4 && t.name.rfind("cuda", 0) == 0 &&
         std::all_of(t.name.begin() + 4, t.name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A holder that runs NCCL's or the CUDA driver's own threads is a rank, whose end of
// the connection is its own (rank 1 of a trial that rank 0 spawned connects to rank
// 0's proxy): a copy forked from a rank (a loader worker) runs only the thread that
// forked it and cannot make a CUDA context of its own.
bool runs_its_own_gpu_threads(const ProcessSnapshot& p) {
  for (const auto& t : p.threads)
    if (looks_like_proxy_thread(t) || is_cuda_driver_thread(t)) return true;
  return std::any_of(p.stacks.threads.begin(), p.stacks.threads.end(), [](const StackThread& t) {
    return stack_has(t.functions, {"ncclProxyService", "ncclProxyProgress"});
  });
}

struct PollingThread {
  const proc::ThreadInfo* thread = nullptr;
  bool polls_this_fd = false;
};

// The thread that waits on `fd`: one whose poll set or read names it; else NCCL's
// proxy service thread by its name or stack, whatever call it is in at this instant
// (restart_syscall between two polls); else a poller whose poll set is unknown. Never
// a thread whose known poll set lacks the fd, nor one of the CUDA driver's threads.
PollingThread find_poller(const ProcessSnapshot& p, int fd) {
  static const std::vector<std::string> reads = {"read", "readv", "recvfrom", "recvmsg", "recvmmsg"};
  const proc::ThreadInfo* proxy = nullptr;
  const proc::ThreadInfo* unknown_set = nullptr;
  for (const auto& t : p.threads) {
    bool reads_fd = std::find(reads.begin(), reads.end(), t.syscall_name) != reads.end() && !t.syscall.args.empty() &&
                    t.syscall.args[0] == static_cast<std::uint64_t>(fd);
    bool polls_fd = std::find(t.polled_fds.begin(), t.polled_fds.end(), fd) != t.polled_fds.end();
    if (reads_fd || (waits_in_poll(t) && polls_fd)) return {&t, true};
    if (is_cuda_driver_thread(t)) continue;
    if (!proxy && (looks_like_proxy_thread(t) || stack_has(stack_of(p, t.tid), {"ncclProxyService"}))) proxy = &t;
    if (!unknown_set && waits_in_poll(t) && t.polled_fds.empty()) unknown_set = &t;
  }
  if (proxy) return {proxy, false};
  return {unknown_set, false};
}

}  // namespace

namespace {

// One end of a connection that p holds and polls while its other end is held
// only by other processes, at least one of them an alias of p.
struct AliasCandidate {
  const proc::SocketEntry* mine = nullptr;
  const proc::SocketEntry* other = nullptr;
  const Holder* my_holder = nullptr;
  const std::vector<Holder>* other_holders = nullptr;
  PollingThread poller;
  std::vector<std::string> reasons;  // why each holder is an alias of p
};

std::optional<AliasCandidate> alias_candidate(const Snapshot& s, const ProcessSnapshot& p, const Connection& c,
                                              int side) {
  AliasCandidate a;
  a.mine = side == 0 ? &c.end_a : &*c.end_b;
  a.other = side == 0 ? &*c.end_b : &c.end_a;
  const auto& mine_holders = side == 0 ? c.holders_a : c.holders_b;
  const auto& other_holders = side == 0 ? c.holders_b : c.holders_a;
  a.other_holders = &other_holders;
  auto held_by_p = [&](const Holder& h) { return h.pid == p.info.pid; };
  auto my_holder = std::find_if(mine_holders.begin(), mine_holders.end(), held_by_p);
  if (my_holder == mine_holders.end() || other_holders.empty()) return std::nullopt;
  a.my_holder = &*my_holder;
  if (std::any_of(other_holders.begin(), other_holders.end(), held_by_p)) return std::nullopt;
  if (is_launcher_control_connection(s, p, other_holders)) return std::nullopt;
  if (std::all_of(other_holders.begin(), other_holders.end(), [&](const Holder& h) {
        const auto* hp = s.find(h.pid);
        return hp && runs_its_own_gpu_threads(*hp);
      }))
    return std::nullopt;  // every holder is a live rank: ordinary peers
  if (std::any_of(other_holders.begin(), other_holders.end(), [&](const Holder& h) {
        const auto* hp = s.find(h.pid);
        return hp && waits_on_fd(*hp, h.fd);
      }))
    return std::nullopt;
  // The other end is held only by other processes: is any of them an alias of p?
  for (const auto& h : other_holders)
    if (const auto* hp = s.find(h.pid))
      if (auto why = alias_reason(s, p, *hp, a.other->inode); !why.empty())
        a.reasons.push_back(fmt::format("pid {}: {}", h.pid, why));
  if (a.reasons.empty() && other_holders.size() < 2) return std::nullopt;  // an ordinary peer process
  if (held_by_a_living_peer(s, p, other_holders, a.other->inode)) return std::nullopt;
  a.poller = find_poller(p, my_holder->fd);
  if (!a.poller.thread) return std::nullopt;
  return a;
}

// The thread that waits for the poller: one joining under NCCL's teardown
// frames, else one asleep in a futex beside a proxy-like poller.
struct Joiner {
  const proc::ThreadInfo* thread = nullptr;
  bool in_nccl_teardown = false;
};

Joiner find_joiner(const ProcessSnapshot& p, const proc::ThreadInfo& poller) {
  Joiner j;
  for (const auto& t : p.threads) {
    const auto& frames = stack_of(p, t.tid);
    // Without libc's debug symbols the join itself prints as "??" (cuda-gdb on the
    // H200): a thread asleep in a futex under commFree is the same wait.
    bool joins = stack_has(frames, {"pthread_join", "pthread_clockjoin"}) || waits_in_futex(t);
    if (joins && stack_has(frames, kTeardownFrames)) {
      j.thread = &t;
      j.in_nccl_teardown = true;
    } else if (!j.thread && &t != &poller && waits_in_futex(t) && looks_like_proxy_thread(poller)) {
      j.thread = &t;
    }
  }
  return j;
}

// The finding in words: the facts, and NCCL's hang or only its shape.
Finding describe_alias(const Snapshot& s, const ProcessSnapshot& p, const AliasCandidate& a) {
  const proc::SocketEntry& mine = *a.mine;
  const proc::SocketEntry& other = *a.other;
  const auto& other_holders = *a.other_holders;
  const proc::ThreadInfo& poller = *a.poller.thread;
  Finding f;
  f.rule = "nccl-descriptor-alias";
  f.pids = {p.info.pid};
  for (const auto& h : other_holders) f.pids.push_back(h.pid);
  const Joiner joiner = find_joiner(p, poller);
  // NCCL's proxy connections are TCP: a unix pair is only ever "the shape".
  bool proxy_stack = stack_has(stack_of(p, poller.tid), {"ncclProxyService"});
  bool nccl_named = joiner.thread && (looks_like_proxy_thread(poller) || proxy_stack) && mine.protocol != "unix";
  bool nccl_stack = joiner.in_nccl_teardown && mine.protocol != "unix";
  std::string holders = holders_in_words(s, other_holders, p.info.pid);
  std::string connection =
      mine.protocol == "unix"
          ? fmt::format("the connected unix socket pair socket:[{}] <-> socket:[{}]", mine.inode, other.inode)
          : fmt::format("the ESTABLISHED connection {} <-> {}", mine.local, mine.remote);

  f.facts.push_back(fmt::format("pid {} ({}) thread {} \"{}\" waits in {}{}", p.info.pid, p.info.comm, poller.tid,
                                poller.name, what_it_waits_in(poller),
                                a.poller.polls_this_fd ? fmt::format(" on fd {} among others", a.my_holder->fd) : ""));
  f.facts.push_back(fmt::format("pid {} holds the {} end {} as fd {} ({})", p.info.pid, mine.protocol, mine.local,
                                a.my_holder->fd, "socket:[" + std::to_string(mine.inode) + "]"));
  f.facts.push_back(fmt::format("the other end {} (socket:[{}]) is held by {} and no longer by pid {}", other.local,
                                other.inode, holders, p.info.pid));
  for (const auto& r : a.reasons) f.facts.push_back(r);
  if (joiner.thread) {
    const auto& frames = stack_of(p, joiner.thread->tid);
    f.facts.push_back(fmt::format(
        "thread {} \"{}\" waits in {}{}", joiner.thread->tid, joiner.thread->name, what_it_waits_in(*joiner.thread),
        frames.empty() ? ""
                       : " with stack " +
                             join({frames.begin(), frames.begin() + std::min<std::size_t>(frames.size(), 8)}, " <- ")));
  }
  // The library whose frames are on the waiting threads; the others are only loaded.
  if (joiner.thread) f.tids.push_back(joiner.thread->tid);
  f.tids.push_back(poller.tid);
  auto libraries = nccl_libraries_of(p, {poller.tid, joiner.thread ? joiner.thread->tid : 0});
  for (const auto& sentence : libraries.sentences) f.facts.push_back(sentence);
  // Whose copy the holder pinned: the poller's own (the seed), or another process's.
  int closer = p.info.pid;
  for (const auto& h : other_holders)
    if (!is_descendant_of(s, h.pid, p.info.pid))
      if (int parent = known_parent(s, h.pid); parent != 0) closer = parent;
  std::string holders_text = closer == p.info.pid ? holders : holders_in_words(s, other_holders, closer);

  f.severity = Severity::Hang;
  if (nccl_stack || nccl_named) {
    f.title = "NCCL descriptor-alias teardown hang";
    f.summary = fmt::format(
        "{} in pid {} ({}) while its proxy service thread {} waits in {} on {}, whose other end is held "
        "open by {}: the descriptor-alias teardown hang, fixed in NCCL 2.18.1 (shutdown() before close()).",
        nccl_stack ? "A thread waits in pthread_join under commFree/ncclCommAbort"
                   : fmt::format("Thread {} waits in {}", joiner.thread->tid, what_it_waits_in(*joiner.thread)),
        p.info.pid, p.info.comm, poller.tid, what_it_waits_in(poller), connection, holders_text);
  } else {
    f.title = "descriptor-alias teardown shape";
    f.summary = fmt::format(
        "The descriptor-alias teardown shape: pid {} ({}) thread {} waits in {} on {}, whose other end is "
        "held only by {}. pid {} closed (or never had) its own copy, so close() there was not the last "
        "reference and the poller sees no EOF until that duplicate is closed (NCCL before 2.18.1 hangs in "
        "ncclCommAbort this way; shutdown() before close() avoids it).",
        p.info.pid, p.info.comm, poller.tid, what_it_waits_in(poller), connection, holders_text, closer);
  }
  return f;
}

}  // namespace

std::vector<Finding> nccl_descriptor_alias(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target) continue;
    for (const auto& c : s.connections) {
      // TCP connections, and connected unix stream pairs (same descriptor semantics).
      bool connected = c.end_a.state == "ESTABLISHED" || (c.end_a.protocol == "unix" && c.end_a.state == "CONNECTED");
      if (!c.end_b || !connected) continue;
      for (int side = 0; side < 2; ++side)
        if (auto candidate = alias_candidate(s, p, c, side)) findings.push_back(describe_alias(s, p, *candidate));
    }
  }
  return findings;
}

std::vector<Finding> nccl_alias_risk(const Snapshot& s) {
  // Before the close: a process holds both ends of a self-connection and another
  // process holds a duplicate of one end. A close() without shutdown() will hang.
  std::vector<Finding> findings;
  for (const auto& c : s.connections) {
    if (c.end_a.protocol == "unix" || !c.end_b || c.end_a.state != "ESTABLISHED") continue;
    for (const auto& p : s.processes) {
      if (!p.target) continue;
      auto held = [&](const std::vector<Holder>& hs) {
        return std::any_of(hs.begin(), hs.end(), [&](const Holder& h) { return h.pid == p.info.pid; });
      };
      if (!held(c.holders_a) || !held(c.holders_b)) continue;
      std::vector<Holder> others;
      for (const auto* hs : {&c.holders_a, &c.holders_b})
        for (const auto& h : *hs)
          if (h.pid != p.info.pid) others.push_back(h);
      // Only duplicates made by forking p count: a child of p holding p's connection.
      bool all_descendants = std::all_of(others.begin(), others.end(),
                                         [&](const Holder& h) { return is_descendant_of(s, h.pid, p.info.pid); });
      if (others.empty() || !all_descendants) continue;
      Finding f;
      f.rule = "self-connection-aliased";
      f.title = "self-connection with a duplicated end";
      f.severity = Severity::Risk;
      f.pids = {p.info.pid};
      for (const auto& h : others) f.pids.push_back(h.pid);
      f.summary = fmt::format(
          "pid {} ({}) holds both ends of the ESTABLISHED connection {} <-> {}, and {} also holds a descriptor for it. "
          "If pid {} closes its end with close() alone, the other end sees no EOF while that duplicate lives "
          "(the NCCL 2.17.1 teardown hang); shutdown() before close() is immune.",
          p.info.pid, p.info.comm, c.end_a.local, c.end_a.remote, holders_in_words(s, others, p.info.pid), p.info.pid);
      f.facts.push_back(fmt::format("socket:[{}] and socket:[{}] are both held by pid {}", c.end_a.inode,
                                    c.end_b->inode, p.info.pid));
      findings.push_back(std::move(f));
    }
  }
  return findings;
}

}  // namespace hangbench::diagnose::rules
