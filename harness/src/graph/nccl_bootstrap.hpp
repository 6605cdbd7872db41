// NCCL's bootstrap root as the graph reads it: the thread of the process that made the
// unique id (bootstrapRoot) when it has accepted a connection and waits for that
// connection's 8-byte magic (socketFinalizeAccept), in a blocking recv or spinning on one
// that returns nothing. It waits for whoever holds the connection's other end.
#pragma once

#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

// Whether a frame of t's stack names `function` (a part of the name: C++ names carry arguments).
bool stack_has_function(const StackThread& t, const char* function);

// The stack of p's bootstrap root while it waits for an accepted connection's magic, or null:
// socketFinalizeAccept on its stack, or (where the build inlined it) a call under
// ncclSocketAccept other than accept itself.
const StackThread* bootstrap_root_waiting_for_magic(const ProcessSnapshot& p);

// A connection p accepted on one of its own listening addresses and still holds: the root
// closes each once it has read it, so while it waits these are the ones it reads. Either end
// of a Connection may be p's (end_a is the end the first target read holds).
struct AcceptedConnection {
  const Connection* connection = nullptr;
  bool accepted_end_is_a = true;
  const proc::SocketEntry& accepted_end() const { return accepted_end_is_a ? connection->end_a : *connection->end_b; }
  const proc::SocketEntry& peer_end() const { return accepted_end_is_a ? *connection->end_b : connection->end_a; }
  const std::vector<Holder>& peer_holders() const {
    return accepted_end_is_a ? connection->holders_b : connection->holders_a;
  }
};
std::vector<AcceptedConnection> accepted_connections(const Snapshot& s, const ProcessSnapshot& p);

// p's descriptors of those connections (what the root's thread waits on).
std::vector<int> accepted_connection_fds(const Snapshot& s, const ProcessSnapshot& p);

}  // namespace hangbench::diagnose
