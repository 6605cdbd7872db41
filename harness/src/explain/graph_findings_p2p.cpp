// p2p-unmatched: a point-to-point operation whose peer is not making the matching one.
//  - From the Flight Recorder, where the ranks dumped: rank A's pending "nccl:send A->B"
//    (or "nccl:recv A<-B") and rank B pending in anything but the matching receive
//    (send), or in nothing at all.
//  - From stacks otherwise: NCCL blocks the host thread of a send or receive only while
//    it connects the pair (ncclP2PPreconnectFunc, ncclTransportP2pSetup under
//    ncclSend/ncclRecv); a rank stuck there while another rank of the job is not
//    connecting waits for an operation its peer never posts.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <regex>

#include "explain/graph_findings.hpp"
#include "explain/rule_helpers.hpp"
#include "graph/thread_wait.hpp"

namespace hangbench::diagnose {

namespace {

using rules::join;

struct PointToPoint {
  bool send = false;
  int self = -1, peer = -1;
};

// "nccl:send 0->1", "nccl:recv 1<-0" (ProcessGroupNCCL's profiling names).
std::optional<PointToPoint> parse_p2p(const std::string& op) {
  static const std::regex pattern(R"((send|recv)\s+(\d+)\s*(->|<-)\s*(\d+))");
  std::smatch m;
  if (!std::regex_search(op, m, pattern)) return std::nullopt;
  PointToPoint p;
  p.send = m[1] == "send";
  p.self = std::stoi(m[2]);
  p.peer = std::stoi(m[4]);
  return p;
}

// The rank's pending Flight Recorder operation ("" when it has none pending), or
// nullopt when the rank has no readable dump.
std::optional<std::string> pending_op(const ProcessSnapshot& p) {
  const auto& summary = p.flight_recorder.summary;
  if (!summary.is_object() || !summary.contains("last_enqueued")) return std::nullopt;
  const auto& last = summary["last_enqueued"];
  if (!last.is_object()) return std::string();
  if (last.value("state", "") == "completed") return std::string();
  return last.contains("op") && last["op"].is_string() ? last["op"].get<std::string>() : std::string("?");
}

bool has_any(const std::vector<std::string>& functions, std::initializer_list<const char*> names) {
  return std::any_of(functions.begin(), functions.end(), [&](const std::string& f) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return f.find(n) != std::string::npos; });
  });
}

// The thread of p that connects a point-to-point pair, 0 when none.
int connecting_thread(const ProcessSnapshot& p) {
  for (const auto& t : p.stacks.threads) {
    if (has_any(t.functions, {"ncclP2PPreconnectFunc"}) ||
        (has_any(t.functions, {"ncclTransportP2pSetup"}) && has_any(t.functions, {"ncclSend", "ncclRecv"})))
      return t.tid;
  }
  return 0;
}

// What p's application threads wait in, in a few words ("cudaDeviceSynchronize").
std::string waits_in(const ProcessSnapshot& p) {
  std::vector<std::string> calls;
  for (const auto& t : p.threads) {
    if (is_runtime_thread(p, t)) continue;
    const auto w = thread_wait(p, t);
    if (w.call.empty() || std::find(calls.begin(), calls.end(), w.call) != calls.end()) continue;
    calls.push_back(w.call);
  }
  return calls.empty() ? "nothing the snapshot can name" : join(calls, ", ");
}

std::vector<Finding> from_flight_recorder(const Snapshot& s, const Job& job) {
  std::vector<Finding> out;
  std::map<int, const ProcessSnapshot*> by_rank;
  for (std::size_t i = 0; i < job.pids.size(); ++i) by_rank[job.ranks[i]] = s.find(job.pids[i]);
  for (const auto& [rank, p] : by_rank) {
    auto op = pending_op(*p);
    if (!op || op->empty()) continue;
    auto mine = parse_p2p(*op);
    if (!mine) continue;
    auto peer = by_rank.find(mine->peer);
    if (peer == by_rank.end()) continue;  // an exited peer is missing-rank's
    auto theirs_op = pending_op(*peer->second);
    if (!theirs_op) continue;  // the peer's side is unknown
    auto theirs = parse_p2p(*theirs_op);
    const bool matched = theirs && theirs->send != mine->send && theirs->peer == rank;
    if (matched) continue;
    Finding f;
    f.rule = "p2p-unmatched";
    f.title = "a point-to-point operation without its match on the peer";
    f.severity = Severity::Hang;
    f.pids = {p->info.pid, peer->second->info.pid};
    f.ranks = {rank, mine->peer};
    const std::string wanted =
        mine->send ? fmt::format("a receive from rank {}", rank) : fmt::format("a send to rank {}", rank);
    f.summary =
        fmt::format("Rank {} (pid {}) waits in {}, which completes only when rank {} posts {}; rank {} (pid {}) is {}.",
                    rank, p->info.pid, *op, mine->peer, wanted, mine->peer, peer->second->info.pid,
                    theirs_op->empty() ? "pending in no operation (the Flight Recorder shows all of its work completed)"
                                       : "pending in " + *theirs_op + " instead");
    f.facts.push_back(fmt::format("Flight Recorder: rank {} pending {}; rank {} pending {}", rank, *op, mine->peer,
                                  theirs_op->empty() ? "nothing" : *theirs_op));
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> from_stacks(const Snapshot& s, const Job& job) {
  std::vector<int> connecting_ranks, connecting_pids, tids, other_ranks, other_pids;
  std::vector<std::string> others;
  for (std::size_t i = 0; i < job.pids.size(); ++i) {
    const auto* p = s.find(job.pids[i]);
    if (int tid = connecting_thread(*p)) {
      connecting_ranks.push_back(job.ranks[i]);
      connecting_pids.push_back(p->info.pid);
      tids.push_back(tid);
    } else if (p->stacks.attempted && !p->stacks.threads.empty()) {
      other_ranks.push_back(job.ranks[i]);
      other_pids.push_back(p->info.pid);
      others.push_back(fmt::format("rank {} (pid {}) waits in {}", job.ranks[i], p->info.pid, waits_in(*p)));
    }
  }
  if (connecting_ranks.empty() || other_ranks.empty()) return {};
  Finding f;
  f.rule = "p2p-unmatched";
  f.title = "a point-to-point operation without its match on the peer";
  f.severity = Severity::Hang;
  f.pids = connecting_pids;
  f.pids.insert(f.pids.end(), other_pids.begin(), other_pids.end());
  f.tids = {tids.front()};
  f.ranks = connecting_ranks;
  f.ranks.insert(f.ranks.end(), other_ranks.begin(), other_ranks.end());
  std::vector<std::string> who;
  for (std::size_t i = 0; i < connecting_ranks.size(); ++i)
    who.push_back(fmt::format("rank {} (pid {}, thread {})", connecting_ranks[i], connecting_pids[i], tids[i]));
  f.summary = fmt::format(
      "{} wait{} in NCCL's point-to-point connection (a send or receive connects its pair on first use), which "
      "no other rank is making: {}. The send or receive has no matching operation on its peer.",
      join(who, ", "), who.size() > 1 ? "" : "s", join(others, "; "));
  f.facts.push_back("stacks: ncclP2PPreconnectFunc or ncclTransportP2pSetup under ncclSend/ncclRecv");
  return {f};
}

}  // namespace

std::vector<Finding> point_to_point_unmatched(const Snapshot& s) {
  std::vector<Finding> out;
  for (const auto& job : jobs_of(s)) {
    auto fr = from_flight_recorder(s, job);
    if (!fr.empty()) {
      out.insert(out.end(), fr.begin(), fr.end());
      continue;
    }
    auto st = from_stacks(s, job);
    out.insert(out.end(), st.begin(), st.end());
  }
  return out;
}

}  // namespace hangbench::diagnose
