// A process that is not a rank connecting to the bootstrap root: what a port scanner,
// a health check or a stale peer of an earlier job does on a shared cluster.
//   silent:      connects and sends nothing, keeping the connection open. The root
//                accepts it first and waits for its 8-byte magic with no timeout, so
//                the ranks' own connections wait behind it: ncclCommInitRank never returns.
//   closed:      connects and closes before sending anything (NVIDIA/nccl issue 1612:
//                an init error before 2.27.3, ignored from 2.27.3).
//   wrong-magic: sends 8 bytes that are not the job's magic, then stays silent (the root
//                drops it and accepts the next connection: the control).
#pragma once

#include <sys/types.h>

#include "root_address.hpp"

namespace hangbench::nccl_bootstrap_silent {

enum class IntruderMode { None, Silent, Closed, WrongMagic };

// Forks the intruder (named "hb-intruder", every inherited descriptor closed: a foreign
// process holds none of the job's sockets) and returns once it has connected and done
// what its mode says; throws std::runtime_error when it could not connect. The child
// dies with its parent (PR_SET_PDEATHSIG). Returns its pid; a Closed intruder has exited
// and been reaped by then (pid still returned, for the record).
pid_t start_intruder(const RootAddress& root, IntruderMode mode);

}  // namespace hangbench::nccl_bootstrap_silent
