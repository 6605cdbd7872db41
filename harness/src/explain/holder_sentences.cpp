// Who holds each connection, in words: the holder sentences of a diagnosis
// (the job's connections, and apart those among launcher processes only).
#include <fmt/format.h>

#include <algorithm>

#include "explain/rule_helpers.hpp"
#include "hangbench/headline.hpp"
#include "hangbench/plumbing.hpp"

namespace hangbench::diagnose {

using rules::join;

namespace {

// A connection between launcher processes only (hangbench and its watcher, srun's
// pipes and sockets): how the launcher works, listed apart from the job's.
bool plumbing_only(const Snapshot& s, const Connection& c) {
  bool any = false;
  for (const auto* hs : {&c.holders_a, &c.holders_b})
    for (const auto& h : *hs) {
      const auto* p = s.find(h.pid);
      if (!p || !is_plumbing(*p)) return false;
      any = true;
    }
  return any;
}

std::vector<std::string> connection_sentences(const Snapshot& s, bool plumbing) {
  std::vector<std::string> out;
  for (const auto& c : s.connections) {
    if (!c.end_b || plumbing_only(s, c) != plumbing) continue;
    // The anchor is the earliest-started target holding an end: usually the process
    // that made the connection; everyone else holding it is named relative to it.
    int anchor = 0;
    double anchor_start = 0;
    for (const auto* hs : {&c.holders_a, &c.holders_b})
      for (const auto& h : *hs)
        // An ancestor beats its descendants even when both started in the same clock tick.
        if (const auto* p = s.find(h.pid);
            p && p->target &&
            (anchor == 0 || rules::is_descendant_of(s, anchor, h.pid) ||
             (!rules::is_descendant_of(s, h.pid, anchor) && p->info.start_unix < anchor_start))) {
          anchor = h.pid;
          anchor_start = p->info.start_unix;
        }
    std::vector<int> others;
    for (const auto* hs : {&c.holders_a, &c.holders_b})
      for (const auto& h : *hs)
        if (h.pid != anchor && std::find(others.begin(), others.end(), h.pid) == others.end()) others.push_back(h.pid);
    if (others.empty()) continue;  // an ordinary connection inside one process
    const ProcessSnapshot* anchor_process = s.find(anchor);
    std::vector<std::string> parts;
    for (int pid : others) {
      std::vector<std::string> fds;
      for (const auto& [hs, end] : {std::pair{&c.holders_a, &c.end_a}, std::pair{&c.holders_b, &*c.end_b}})
        for (const auto& h : *hs) {
          if (h.pid != pid) continue;
          std::string dup;
          if (anchor_process)
            if (const auto* d = rules::descriptor_for_inode(*anchor_process, end->inode))
              dup = fmt::format(", a duplicate of pid {}'s fd {}", anchor, d->fd);
          std::string where = end->local.empty() ? "socket:[" + std::to_string(end->inode) + "]" : end->local;
          fds.push_back(fmt::format("fd {} for the end {}{}", h.fd, where, dup));
        }
      // A holder that does not descend from the anchor is told by its own parent when
      // that was read (the rank whose helper pins the service's connection).
      int relative = anchor;
      if (const auto* h = s.find(pid); h && !rules::is_descendant_of(s, pid, anchor) && s.find(h->info.ppid))
        relative = h->info.ppid;
      parts.push_back(describe_process(s, pid, relative) + ", through its " + join(fds, " and its "));
    }
    std::string proto = c.end_a.protocol == "unix" ? "unix socket pair" : "connection";
    std::string a = c.end_a.local.empty() ? "socket:[" + std::to_string(c.end_a.inode) + "]" : c.end_a.local;
    std::string b = c.end_b->local.empty() ? "socket:[" + std::to_string(c.end_b->inode) + "]" : c.end_b->local;
    std::string anchor_text;
    if (anchor_process) {
      std::vector<std::string> own;
      for (const auto* hs : {&c.holders_a, &c.holders_b})
        for (const auto& h : *hs)
          if (h.pid == anchor) own.push_back("fd " + std::to_string(h.fd));
      anchor_text = own.empty() ? fmt::format("; pid {} itself holds neither end", anchor)
                                : fmt::format("; pid {} ({}) itself holds {}", anchor, anchor_process->info.comm,
                                              join(own, " and "));
    }
    out.push_back(fmt::format("the {} {} {} <-> {} is held open by {}{}", c.end_a.state, proto, a, b,
                              join(parts, "; and by "), anchor_text));
  }
  return out;
}

}  // namespace

std::vector<std::string> holder_sentences(const Snapshot& s) { return connection_sentences(s, false); }
std::vector<std::string> launcher_holder_sentences(const Snapshot& s) { return connection_sentences(s, true); }

}  // namespace hangbench::diagnose
