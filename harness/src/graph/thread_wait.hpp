// What one thread waits in, read from its syscall, its futex word and its stack:
// the one place the wait-for graph learns a thread's wait.
#pragma once

#include <string>
#include <vector>

#include "hangbench/snapshot.hpp"

namespace hangbench::diagnose {

struct ThreadWait {
  enum class Kind {
    Running,        // on a CPU
    Sleep,          // a timed sleep
    Gil,            // wants the GIL
    Mutex,          // pthread_mutex_lock with a readable owner
    MutexDeadlock,  // parked by glibc after the kernel refused a PI lock as a deadlock
    Join,           // pthread_join of a thread of the same process
    JoinPython,     // Python's Thread.join: waits for one of the process's other Python threads to end
    Descriptors,    // read/recv/write/poll on descriptors (fds)
    Children,       // wait4/waitid
    Gpu,            // a CUDA synchronisation or a launch/load that waits behind GPU work
    MpiCollective,
    MpiPointToPoint,
    Store,  // c10d's store wait
    // NCCL's connection of a communicator's links (at init, or lazily at the first send or
    // collective): its handshake needs the peer ranks inside NCCL at the same time.
    NcclConnect,
    // A thread in ncclGroupEnd that waits for NCCL's own job threads (the connection's, from
    // 2.19 on) to finish: it polls them in a loop of short sleeps, so it never looks blocked.
    NcclGroupJobs,
    Signal,   // pause()/sigsuspend: waits for a signal nobody in the snapshot is known to send
    Stopped,  // its process is stopped or a zombie
    Unknown,  // blocked on something the snapshot cannot name
  } kind = Kind::Unknown;
  std::string call;           // the call in words: "read", "pthread_mutex_lock", "MPI_Barrier", "cudaStreamSynchronize"
  std::vector<int> fds;       // Descriptors
  int other_tid = 0;          // Mutex owner, Join target
  std::uint64_t address = 0;  // Mutex
  bool writes = false;        // Descriptors: it waits to write (the readers release it)
};

ThreadWait thread_wait(const ProcessSnapshot& p, const proc::ThreadInfo& t);

// A thread a runtime starts for itself (the CUDA driver's, NCCL's, PyTorch's):
// it never stands for the program's own progress.
bool is_runtime_thread(const ProcessSnapshot& p, const proc::ThreadInfo& t);

// The NCCL connection a thread's stack is setting up: "init" (under ncclCommInitRank),
// "collective" (rings and trees at the first collective: ncclCollPreconnectFunc,
// ncclTransportRingConnect), "point-to-point" (ncclP2PPreconnectFunc, ncclPreconnectFunc, a
// send's set-up), "" when it sets up none.
std::string nccl_connection_of(const ProcessSnapshot& p, int tid);

// Whether the thread woke many times between the snapshot's two reads of it.
bool thread_moved(const proc::ThreadInfo& t);

// The MPI collective (MPI_Barrier, ...) an application thread of p is in, "" when none.
std::string mpi_collective_of(const ProcessSnapshot& p);
// Whether thread t of p is inside MPI, NCCL, c10d's store or a GPU wait.
bool thread_communicates(const ProcessSnapshot& p, const proc::ThreadInfo& t);
// Whether any application thread of p is.
bool inside_communication(const ProcessSnapshot& p);

}  // namespace hangbench::diagnose
