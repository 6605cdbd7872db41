// The finding no single node can make: which rank is in the hung teardown, who
// holds what it waits on (named by rank and host), and which ranks wait on it
// (they hold a TCP connection whose other end is the hung rank's, on any node).
#include <fmt/format.h>

#include <map>
#include <set>

#include "hangbench/slurm_diagnose.hpp"

namespace hangbench::diagnose::slurm {
namespace {

struct Where {
  std::string host;
  int pid = 0;
  int rank = -1;
  std::string comm;
  int ppid = 0;
};

std::string name_of(const Where& w) {
  std::string who = w.rank >= 0 ? fmt::format("rank {}", w.rank) : "a process outside the job's ranks";
  return fmt::format("{} on {} (pid {}{})", who, w.host, w.pid, w.comm.empty() ? "" : " " + w.comm);
}

// A holder forked by the hung rank inherited its SLURM_PROCID: say it is its child.
std::string holder_name(const Where& holder, const Where& subject) {
  if (holder.host == subject.host && holder.ppid == subject.pid) {
    return fmt::format("pid {}{}, a child of rank {}'s process on {}", holder.pid,
                       holder.comm.empty() ? "" : " (" + holder.comm + ")", subject.rank, holder.host);
  }
  return name_of(holder);
}

}  // namespace

std::vector<diagnose::Finding> cross_rank_findings(const std::vector<NodeDiagnosis>& nodes) {
  // Every process the nodes saw, and every TCP end they hold, by address.
  std::map<std::pair<std::string, int>, Where> processes;
  std::map<std::string, std::vector<Where>> tcp_by_local;  // "10.0.0.1:4567" -> its holders
  for (const auto& n : nodes) {
    for (const auto& p : n.snapshot.processes) {
      processes[{n.host, p.info.pid}] = {n.host, p.info.pid, -1, p.info.comm, p.info.ppid};
    }
    for (const auto& p : n.processes) {
      auto& w = processes[{n.host, p.pid}];
      w = {n.host, p.pid, p.rank, w.comm.empty() ? p.comm : w.comm, w.ppid};
    }
  }
  for (const auto& n : nodes) {
    for (const auto& c : n.snapshot.connections) {
      if (c.end_a.protocol.rfind("tcp", 0) != 0) continue;
      for (const auto& h : c.holders_a) tcp_by_local[c.end_a.local].push_back(processes[{n.host, h.pid}]);
      if (c.end_b) {
        for (const auto& h : c.holders_b) tcp_by_local[c.end_b->local].push_back(processes[{n.host, h.pid}]);
      }
    }
  }

  std::vector<diagnose::Finding> out;
  std::set<std::pair<std::string, int>> hung;
  std::vector<std::pair<const NodeDiagnosis*, const diagnose::Finding*>> hangs;
  for (const auto& n : nodes) {
    for (const auto& f : n.findings) {
      if (f.severity != Severity::Hang || f.pids.empty()) continue;
      hung.insert({n.host, f.pids.front()});
      hangs.emplace_back(&n, &f);
    }
  }
  for (const auto& [node, f] : hangs) {
    const Where& subject = processes[{node->host, f->pids.front()}];
    // srun's and the batch script's own waits stay in the node's findings: the
    // cross-rank finding is about ranks.
    if (subject.rank < 0) continue;
    bool teardown = f->rule == "nccl-descriptor-alias" || f->rule == "self-connection-aliased";
    std::string state = teardown ? "is in the hung teardown" : "is hung";
    diagnose::Finding x;
    x.rule = "slurm-cross-rank";
    x.severity = Severity::Hang;
    x.title = fmt::format("rank {} {}", subject.rank, state);
    std::vector<std::string> holders;
    for (size_t i = 1; i < f->pids.size(); ++i) {
      holders.push_back(holder_name(processes[{node->host, f->pids[i]}], subject));
    }
    x.summary = fmt::format("{} {} ({}).", name_of(subject), state, f->title);
    if (!holders.empty()) {
      std::string list;
      for (const auto& h : holders) list += (list.empty() ? "" : ", ") + h;
      x.summary += fmt::format(" What it waits on is held by {}.", list);
    }
    // Ranks elsewhere connected to the hung rank wait on it.
    std::set<std::string> waiters;
    for (const auto& n : nodes) {
      for (const auto& c : n.snapshot.connections) {
        if (c.end_a.protocol.rfind("tcp", 0) != 0 || c.end_a.state != "ESTABLISHED") continue;
        auto peers = tcp_by_local.find(c.end_a.remote);
        if (peers == tcp_by_local.end()) continue;
        bool peer_is_subject = false;
        for (const auto& p : peers->second)
          peer_is_subject = peer_is_subject || (p.host == subject.host && p.pid == subject.pid);
        if (!peer_is_subject) continue;
        for (const auto& h : c.holders_a) {
          const Where& w = processes[{n.host, h.pid}];
          if (w.rank >= 0 && w.rank != subject.rank && !hung.count({w.host, w.pid})) waiters.insert(name_of(w));
        }
      }
    }
    if (!waiters.empty()) {
      std::string list;
      for (const auto& w : waiters) list += (list.empty() ? "" : ", ") + w;
      x.summary += fmt::format(" Waiting on it over TCP: {}.", list);
    }
    x.facts.push_back(fmt::format("node {}: {}", node->host, f->summary));
    x.pids = f->pids;
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace hangbench::diagnose::slurm
