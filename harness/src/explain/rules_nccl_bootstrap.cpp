// NCCL's bootstrap root held up by a connection that no rank holds and that never sends what
// the root reads: its magic, or from NVIDIA's 2.32 wheels the rest of a hello
// (catalog/nccl-bootstrap-silent-connection.toml). The root, a thread of the process that
// made the unique id (bootstrapRoot), accepts one connection at a time and waits in
// socketFinalizeAccept for its 8-byte magic before it accepts the next, with no timeout:
// in a blocking recv, or spinning on one that returns nothing (2.22 to 2.28). Every
// connection it has accepted and not yet closed is that one, so the process's established
// sockets on the root's listening address name the peer it waits for.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "explain/rule_helpers.hpp"
#include "graph/nccl_bootstrap.hpp"

namespace hangbench::diagnose::rules {
namespace {

// What a process that holds the other end is doing, in words.
std::string holder_in_words(const Snapshot& s, int pid) {
  const ProcessSnapshot* h = s.find(pid);
  if (!h) return fmt::format("pid {}", pid);
  std::string who = fmt::format("pid {} ({})", pid, h->info.comm);
  who += h->rank >= 0 ? fmt::format(", rank {} of the job", h->rank) : ", no rank of the job";
  if (!h->threads.empty()) {
    const auto& t = h->threads.front();
    if (!t.syscall_name.empty()) who += fmt::format(", its main thread in {}", t.syscall_name);
  }
  return who;
}

// The ranks whose init waits on the bootstrap: a thread under ncclCommInitRank* or bootstrapInit.
std::vector<const ProcessSnapshot*> ranks_in_bootstrap(const Snapshot& s) {
  std::vector<const ProcessSnapshot*> out;
  for (const auto& p : s.processes) {
    if (!p.target) continue;
    const bool waits = std::any_of(p.stacks.threads.begin(), p.stacks.threads.end(), [](const StackThread& t) {
      return stack_has_function(t, "bootstrapInit") || stack_has_function(t, "ncclCommInitRank");
    });
    if (waits) out.push_back(&p);
  }
  return out;
}

}  // namespace

std::vector<Finding> nccl_bootstrap_silent_peer(const Snapshot& s) {
  std::vector<Finding> findings;
  for (const auto& p : s.processes) {
    if (!p.target) continue;
    const StackThread* root = bootstrap_root_waiting_for_magic(p);
    if (!root) continue;
    const auto accepted = accepted_connections(s, p);
    if (accepted.empty()) continue;  // nothing accepted is held: the root is between connections
    Finding f;
    f.rule = "nccl-bootstrap-silent-peer";
    f.title = "NCCL's bootstrap root waits on a connection that no rank holds";
    f.severity = Severity::Hang;
    f.pids = {p.info.pid};
    f.tids = {root->tid};
    std::vector<std::string> peers;
    bool peer_is_a_rank = false;
    for (const auto& c : accepted) {
      for (const auto& h : c.peer_holders()) {
        if (std::find(f.pids.begin(), f.pids.end(), h.pid) == f.pids.end()) f.pids.push_back(h.pid);
        const ProcessSnapshot* holder = s.find(h.pid);
        if (holder && holder->rank >= 0) peer_is_a_rank = true;
        peers.push_back(holder_in_words(s, h.pid));
      }
      f.facts.push_back(fmt::format("accepted connection {} <- {}, not yet closed: the one the root reads",
                                    c.accepted_end().local, c.peer_end().local));
    }
    if (peer_is_a_rank) continue;  // a rank that has not yet sent its 8 bytes: the handshake in progress
    const std::string peer_words = peers.empty() ? "a process outside what was read" : join(peers, "; ");
    std::vector<std::string> waiting;
    for (const ProcessSnapshot* r : ranks_in_bootstrap(s)) {
      // The ranks wait too: named in ranks and in words, not in pids, whose entries after
      // the first are the holders (the headline's HELD BY, the JSON's holders).
      if (r->rank >= 0) f.ranks.push_back(r->rank);
      waiting.push_back(r->rank >= 0 ? fmt::format("rank {} (pid {})", r->rank, r->info.pid)
                                     : fmt::format("pid {}", r->info.pid));
    }
    std::sort(f.ranks.begin(), f.ranks.end());
    // NVIDIA's 2.32 wheels read a hello there (ncclCryptAcceptHello), also after 8 bytes that
    // are not the job's magic (results/cpu-2026-12-07-bootstrap-root-intruders).
    const bool reads_hello = stack_has_function(*root, "ncclCryptAcceptHello");
    f.summary = fmt::format(
        "Thread {} of pid {} is NCCL's bootstrap root: it accepted a connection held by {}, and {} with no "
        "timeout before it accepts any other. {} The connection must close or the process holding it must go; a "
        "job bounds its init itself (a non-blocking init aborted past a deadline).",
        root->tid, p.info.pid, peer_words,
        reads_hello ? "reads a hello from it (ncclCryptAcceptHello)" : "waits for its 8-byte magic",
        waiting.empty() ? std::string("Every rank's connection waits behind it, so no ncclCommInitRank can return.")
                        : fmt::format("{} wait{} in ncclCommInitRank behind it.", join(waiting, ", "),
                                      waiting.size() == 1 ? "s" : ""));
    f.facts.push_back(fmt::format("thread {} \"{}\": {}socketFinalizeAccept <- ncclSocketAccept <- bootstrapRoot",
                                  root->tid, root->name, reads_hello ? "ncclCryptAcceptHello <- " : ""));
    for (const auto& sentence : nccl_libraries_of(p, {root->tid}).sentences) f.facts.push_back(sentence);
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace hangbench::diagnose::rules
