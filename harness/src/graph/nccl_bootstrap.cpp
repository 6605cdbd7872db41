#include "graph/nccl_bootstrap.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace hangbench::diagnose {
bool stack_has_function(const StackThread& t, const char* function) {
  // functions, not frames: every debugger fills them (frames are libdw's only)
  return std::any_of(t.functions.begin(), t.functions.end(),
                     [&](const std::string& f) { return f.find(function) != std::string::npos; });
}

namespace {

const proc::Descriptor* socket_descriptor(const ProcessSnapshot& p, std::uint64_t inode) {
  for (const auto& d : p.descriptors)
    if (d.target.inode == inode && d.target.kind == proc::DescriptorKind::Socket) return &d;
  return nullptr;
}

}  // namespace

// Inside ncclSocketAccept, the root either waits for the next connection (accept, or
// socketTryAccept around it) or reads an accepted one's magic (socketFinalizeAccept, which
// NVIDIA's builds may inline: no debug information names an inlined frame there).
static bool reads_a_magic(const StackThread& t) {
  if (stack_has_function(t, "socketFinalizeAccept")) return true;
  if (!stack_has_function(t, "ncclSocketAccept") || stack_has_function(t, "socketTryAccept")) return false;
  for (const auto& f : t.functions) {
    if (f.find("ncclSocketAccept") != std::string::npos) break;
    if (f.find("accept") != std::string::npos) return false;  // accept, accept4, __libc_accept: no connection yet
  }
  return true;
}

const StackThread* bootstrap_root_waiting_for_magic(const ProcessSnapshot& p) {
  for (const auto& t : p.stacks.threads)
    if (stack_has_function(t, "bootstrapRoot") && reads_a_magic(t)) return &t;
  return nullptr;
}

std::vector<AcceptedConnection> accepted_connections(const Snapshot& s, const ProcessSnapshot& p) {
  std::set<std::string> listening;
  for (const auto& c : s.connections)
    if (c.end_a.state == "LISTEN" && socket_descriptor(p, c.end_a.inode)) listening.insert(c.end_a.local);
  std::vector<AcceptedConnection> out;
  for (const auto& c : s.connections) {
    if (c.end_a.state != "ESTABLISHED" || !c.end_b) continue;
    for (bool a : {true, false}) {
      const proc::SocketEntry& end = a ? c.end_a : *c.end_b;
      if (listening.count(end.local) && socket_descriptor(p, end.inode)) {
        out.push_back({&c, a});
        break;
      }
    }
  }
  return out;
}

std::vector<int> accepted_connection_fds(const Snapshot& s, const ProcessSnapshot& p) {
  std::vector<int> fds;
  for (const auto& c : accepted_connections(s, p))
    if (const auto* d = socket_descriptor(p, c.accepted_end().inode)) fds.push_back(d->fd);
  return fds;
}

}  // namespace hangbench::diagnose
