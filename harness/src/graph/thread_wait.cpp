#include "graph/thread_wait.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "hangbench/native_stacks.hpp"
#include "hangbench/thread_facts.hpp"

namespace hangbench::diagnose {

namespace {

// The stack's function names, innermost first, without parameter lists.
std::vector<std::string> functions_of(const ProcessSnapshot& p, int tid) {
  std::vector<std::string> out;
  for (const auto& f : stack_of(p, tid)) {
    // glibc's internal aliases and symbol versions: "__GI___lll_lock_wait", "__pthread_mutex_lock@GLIBC_2.2.5".
    std::string name = short_function_name(f);
    if (auto at = name.find('@'); at != std::string::npos) name.resize(at);
    if (name.rfind("__GI_", 0) == 0) name = name.substr(5);
    out.push_back(std::move(name));
  }
  return out;
}

// The innermost frame that is one of `names` (MPI's profiling P-names count), "" when none.
std::string innermost_of(const std::vector<std::string>& functions, const std::vector<std::string>& names) {
  for (const auto& f : functions)
    for (const auto& n : names)
      if (f == n || f == "P" + n) return n;
  return "";
}

std::string innermost_containing(const std::vector<std::string>& functions, const std::vector<std::string>& parts) {
  for (const auto& f : functions)
    for (const auto& part : parts)
      if (f.find(part) != std::string::npos) return f;
  return "";
}

const std::vector<std::string> kMpiCollectives = {"MPI_Barrier",        "MPI_Allreduce",
                                                  "MPI_Bcast",          "MPI_Reduce",
                                                  "MPI_Allgather",      "MPI_Allgatherv",
                                                  "MPI_Gather",         "MPI_Gatherv",
                                                  "MPI_Scatter",        "MPI_Scatterv",
                                                  "MPI_Alltoall",       "MPI_Alltoallv",
                                                  "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
                                                  "MPI_Scan",           "MPI_Exscan",
                                                  "MPI_Finalize"};
const std::vector<std::string> kMpiPointToPoint = {"MPI_Recv",     "MPI_Send",  "MPI_Ssend",   "MPI_Rsend",
                                                   "MPI_Sendrecv", "MPI_Wait",  "MPI_Waitall", "MPI_Waitany",
                                                   "MPI_Waitsome", "MPI_Probe", "MPI_Mprobe"};
const std::vector<std::string> kStoreWaits = {"c10d::TCPStore::wait", "c10d::TCPStore::doWait", "c10d::TCPStore::get",
                                              "c10d::TCPStore::doGet"};
// A CUDA call that waits for GPU work: a synchronisation, or (lazy loading, a blocking
// launch) a module load or launch that the driver serialises behind running kernels.
const std::vector<std::string> kGpuWaits = {"cuStreamSynchronize",
                                            "cuCtxSynchronize",
                                            "cuEventSynchronize",
                                            "cudaStreamSynchronize",
                                            "cudaDeviceSynchronize",
                                            "cudaEventSynchronize",
                                            "cuModuleLoadData",
                                            "cuLibraryLoadData",
                                            "cuKernelGetFunction",
                                            "cuLaunchKernel",
                                            "cudaLaunchKernel",
                                            "cuMemFree",
                                            "cudaFree"};
// NCCL's connection set-up; a thread in it is named by the first of these its stack
// holds (what it connects before how).
const std::vector<std::string> kNcclConnects = {"ncclTransportRingConnect", "ncclTransportTreeConnect",
                                                "ncclCollPreconnectFunc",   "ncclP2PPreconnectFunc",
                                                "ncclPreconnectFunc",       "ncclTransportP2pSetup"};
// ncclGroupEnd's loop over its job threads (group.cc's asyncJobLaunch, 2.19 on).
const std::vector<std::string> kNcclGroupJobWaits = {"asyncJobLaunch"};
const std::vector<std::string> kMutexLocks = {"pthread_mutex_lock", "lll_lock_wait", "lll_mutex_lock"};
const std::vector<std::string> kJoins = {"pthread_join", "pthread_clockjoin", "pthread_timedjoin"};

bool holds_descriptor(const ProcessSnapshot& p, std::uint64_t fd) {
  return std::any_of(p.descriptors.begin(), p.descriptors.end(),
                     [&](const proc::Descriptor& d) { return static_cast<std::uint64_t>(d.fd) == fd; });
}

bool is_thread_of(const ProcessSnapshot& p, std::int64_t tid) {
  return std::any_of(p.threads.begin(), p.threads.end(), [&](const proc::ThreadInfo& t) { return t.tid == tid; });
}

}  // namespace

bool is_runtime_thread(const ProcessSnapshot& p, const proc::ThreadInfo& t) {
  if (t.tid == p.info.pid) return false;
  // A Python process: its own threads are the ones the interpreter knows.
  if (!p.python.threads.empty())
    return std::none_of(p.python.threads.begin(), p.python.threads.end(),
                        [&](const PythonThread& py) { return py.tid == t.tid; });
  for (const char* prefix : {"cuda", "NCCL", "pt_", "ucx", "async"})
    if (t.name.rfind(prefix, 0) == 0) return true;
  // A thread a library started for itself: its start routine, the outermost frame
  // outside the C library (start_thread and clone are libc's, and unnamed where libc
  // is stripped, as on Ubuntu 24.04), is in MPI's, PMIx's, libevent's, UCX's, CUDA's,
  // NCCL's or torch's code.
  for (const auto& st : p.stacks.threads) {
    if (st.tid != t.tid) continue;
    for (std::size_t i = st.frames.size(); i-- > 0;) {
      const std::string& module = st.frames[i].module;
      const std::string base = module.substr(module.find_last_of('/') + 1);
      if (is_c_library(base)) continue;
      for (const char* library : {"libopen-pal", "libopen-rte", "libpmix", "libevent", "libucs", "libucp", "libuct",
                                  "libmpi", "mca_", "libcuda", "libnccl", "libtorch", "libc10"})
        if (base.find(library) != std::string::npos) return true;
      return false;
    }
  }
  return false;
}

namespace {

// Python's Thread.join waits on the joined thread's lock, which its end releases:
// the newest Python frame is threading's join or _wait_for_tstate_lock.
bool joins_python_threads(const ProcessSnapshot& p, int tid) {
  for (const auto& py : p.python.threads) {
    if (py.tid != tid || py.frames.empty()) continue;
    const auto& newest = py.frames.front();
    bool threading = newest.file.size() >= 12 && newest.file.compare(newest.file.size() - 12, 12, "threading.py") == 0;
    return threading &&
           (newest.function == "_wait_for_tstate_lock" || newest.function == "Thread._wait_for_tstate_lock" ||
            newest.function == "Thread.join" || newest.function == "join");
  }
  return false;
}

ThreadWait wait_at_the_instant(const ProcessSnapshot& p, const proc::ThreadInfo& t) {
  ThreadWait w;
  if (p.info.state == 'T' || p.info.state == 't' || p.info.state == 'Z' || t.state == 'T' || t.state == 't') {
    w.kind = ThreadWait::Kind::Stopped;
    w.call = proc::state_name(t.state == 'T' || t.state == 't' ? t.state : p.info.state);
    return w;
  }
  const auto functions = functions_of(p, t.tid);
  if (auto gil = gil_wait_call(functions); !gil.empty()) {
    w.kind = ThreadWait::Kind::Gil;
    w.call = gil;
    return w;
  }
  // MPI and GPU waits spin as often as they sleep: the stack decides, not the state.
  if (auto mpi = innermost_of(functions, kMpiCollectives); !mpi.empty()) {
    w.kind = ThreadWait::Kind::MpiCollective;
    w.call = mpi;
    return w;
  }
  if (auto mpi = innermost_of(functions, kMpiPointToPoint); !mpi.empty()) {
    w.kind = ThreadWait::Kind::MpiPointToPoint;
    w.call = mpi;
    return w;
  }
  if (auto store = innermost_containing(functions, kStoreWaits); !store.empty()) {
    w.kind = ThreadWait::Kind::Store;
    w.call = store;
    return w;
  }
  // Before the GPU's waits: a connection set-up may call into CUDA (a cudaFree to make the
  // context) but waits, as a whole, for its peers.
  if (!innermost_of(functions, kNcclConnects).empty()) {
    w.kind = ThreadWait::Kind::NcclConnect;
    // The connection's own name (a ring, a tree), not the setup step it is in now.
    for (const auto& name : kNcclConnects)
      if (innermost_of(functions, {name}) == name) {
        w.call = name;
        break;
      }
    return w;
  }
  if (auto jobs = innermost_of(functions, kNcclGroupJobWaits); !jobs.empty()) {
    w.kind = ThreadWait::Kind::NcclGroupJobs;
    w.call = "ncclGroupEnd";
    return w;
  }
  if (auto gpu = innermost_of(functions, kGpuWaits); !gpu.empty()) {
    w.kind = ThreadWait::Kind::Gpu;
    w.call = gpu;
    return w;
  }
  if (t.state == 'R') {
    w.kind = ThreadWait::Kind::Running;
    w.call = "running";
    return w;
  }
  const auto& args = t.syscall.args;
  const std::string& call = t.syscall_name;
  if (joins_python_threads(p, t.tid)) {
    w.kind = ThreadWait::Kind::JoinPython;
    w.call = "Thread.join";
    return w;
  }
  if (call == "futex" && args.size() > 2) {
    // glibc's join waits on the joined thread's tid word until the kernel clears it.
    bool join_stack = !innermost_containing(functions, kJoins).empty();
    if (t.futex_word > 0 && t.futex_word != t.tid && is_thread_of(p, t.futex_word) &&
        (join_stack || static_cast<std::int64_t>(args[2]) == t.futex_word)) {
      w.kind = ThreadWait::Kind::Join;
      w.call = "pthread_join";
      w.other_tid = static_cast<int>(t.futex_word);
      return w;
    }
    // A priority-inheritance mutex: the futex word itself is the owner's tid.
    const std::uint64_t op = args[1] & 127;
    constexpr std::uint64_t kLockPi = 6, kLockPi2 = 13;
    if ((op == kLockPi || op == kLockPi2) && t.futex_word > 0) {
      w.kind = ThreadWait::Kind::Mutex;
      w.call = "pthread_mutex_lock";
      w.other_tid = static_cast<int>(t.futex_word & 0x3fffffff);
      w.address = args[0];
      return w;
    }
    // glibc parks a thread for good when the kernel refuses its PI lock as a deadlock.
    if (!innermost_containing(functions, {"pthread_mutex_lock_full"}).empty() && t.futex_word == 0 && args[2] == 0) {
      w.kind = ThreadWait::Kind::MutexDeadlock;
      w.call = "pthread_mutex_lock (the kernel found a deadlock; glibc parked the thread)";
      return w;
    }
    // A process-shared mutex's owner may be another process's thread (tids are system-wide).
    if (auto lock = innermost_containing(functions, kMutexLocks);
        !lock.empty() && t.futex_owner > 0 && t.futex_owner != t.tid) {
      w.kind = ThreadWait::Kind::Mutex;
      w.call = "pthread_mutex_lock";
      w.other_tid = static_cast<int>(t.futex_owner);
      w.address = args[0];
      return w;
    }
  }
  static const std::vector<std::string> reads = {"read", "readv", "recvfrom", "recvmsg", "recvmmsg", "pread64"};
  static const std::vector<std::string> writes = {"write", "writev", "sendto", "sendmsg", "sendmmsg"};
  bool reading = std::find(reads.begin(), reads.end(), call) != reads.end();
  bool writing = std::find(writes.begin(), writes.end(), call) != writes.end();
  if ((reading || writing) && !args.empty() && holds_descriptor(p, args[0])) {
    w.kind = ThreadWait::Kind::Descriptors;
    w.call = call;
    w.fds = {static_cast<int>(args[0])};
    w.writes = writing;
    return w;
  }
  if (waits_in_poll(t) && !t.polled_fds.empty()) {
    w.kind = ThreadWait::Kind::Descriptors;
    w.call = call.empty() ? "poll" : call;
    w.fds = t.polled_fds;
    return w;
  }
  if (call == "wait4" || call == "waitid") {
    w.kind = ThreadWait::Kind::Children;
    w.call = call;
    return w;
  }
  if (call == "nanosleep" || call == "clock_nanosleep") {
    w.kind = ThreadWait::Kind::Sleep;
    w.call = call;
    return w;
  }
  // pause() and sigsuspend wait for a signal: nothing the snapshot reads sends one.
  if (call == "pause" || call == "rt_sigsuspend") {
    w.kind = ThreadWait::Kind::Signal;
    w.call = call;
    return w;
  }
  w.call = call.empty() ? what_it_waits_in(t) : call;
  return w;
}

// Context switches the stack reader itself causes (a ptrace stop and resume) and a
// poll's own timeouts: more than this in the progress window is a thread that works.
constexpr std::int64_t kSwitchesOfAWaitingThread = 4;

}  // namespace

bool thread_moved(const proc::ThreadInfo& t) {
  return t.switches >= 0 && t.switches_later >= 0 && t.switches_later - t.switches > kSwitchesOfAWaitingThread;
}

ThreadWait thread_wait(const ProcessSnapshot& p, const proc::ThreadInfo& t) {
  ThreadWait w = wait_at_the_instant(p, t);
  // Seen in a timed sleep at another look, or at this one while its stack shows a wait:
  // a thread between two steps of its work (a training loop's pause), whatever it waits in now.
  // NCCL's group end sleeps a microsecond between looks at its job threads: its sleeps are its wait.
  bool asleep_now = t.syscall_name == "nanosleep" || t.syscall_name == "clock_nanosleep";
  if ((t.seen_asleep || asleep_now) && w.kind != ThreadWait::Kind::Sleep && w.kind != ThreadWait::Kind::Stopped &&
      w.kind != ThreadWait::Kind::NcclGroupJobs) {
    w.kind = ThreadWait::Kind::Running;
    w.call += " (seen asleep between steps)";
    return w;
  }
  // A wait in a syscall that kept waking up was caught between two steps of its work.
  // The GIL's, MPI's and the GPU's waits spin or time out by design: their wakeups say nothing.
  switch (w.kind) {
    case ThreadWait::Kind::Descriptors:
    case ThreadWait::Kind::Mutex:
    case ThreadWait::Kind::Join:
    case ThreadWait::Kind::JoinPython:
    case ThreadWait::Kind::Children:
    case ThreadWait::Kind::Signal:
    case ThreadWait::Kind::Unknown:
      if (thread_moved(t)) {
        w.kind = ThreadWait::Kind::Running;
        w.call = fmt::format("{} (woke {} times while read)", w.call, t.switches_later - t.switches);
      }
      break;
    default:
      break;
  }
  return w;
}

std::string mpi_collective_of(const ProcessSnapshot& p) {
  for (const auto& t : p.threads) {
    if (is_runtime_thread(p, t)) continue;
    auto w = thread_wait(p, t);
    if (w.kind == ThreadWait::Kind::MpiCollective) return w.call;
  }
  return "";
}

bool thread_communicates(const ProcessSnapshot& p, const proc::ThreadInfo& t) {
  switch (thread_wait(p, t).kind) {
    case ThreadWait::Kind::MpiCollective:
    case ThreadWait::Kind::MpiPointToPoint:
    case ThreadWait::Kind::Store:
    case ThreadWait::Kind::Gpu:
    case ThreadWait::Kind::NcclConnect:
    case ThreadWait::Kind::NcclGroupJobs:
      return true;
    default:
      break;
  }
  for (const auto& f : stack_of(p, t.tid))
    if (f.rfind("nccl", 0) == 0 || f.find("c10d::") != std::string::npos) return true;
  return false;
}

std::string nccl_connection_of(const ProcessSnapshot& p, int tid) {
  const auto functions = functions_of(p, tid);
  if (innermost_of(functions, kNcclConnects).empty()) return "";
  // Init connects rings and trees too (before 2.22.3, or with NCCL_RUNTIME_CONNECT=0).
  if (!innermost_containing(functions, {"ncclCommInitRank", "initTransportsRank", "ncclCommInitAll"}).empty())
    return "init";
  if (!innermost_of(functions, {"ncclCollPreconnectFunc", "ncclTransportRingConnect", "ncclTransportTreeConnect"})
           .empty())
    return "collective";
  return "point-to-point";  // ncclP2PPreconnectFunc, ncclPreconnectFunc, or a send's or receive's own set-up
}

bool inside_communication(const ProcessSnapshot& p) {
  return std::any_of(p.threads.begin(), p.threads.end(),
                     [&](const proc::ThreadInfo& t) { return !is_runtime_thread(p, t) && thread_communicates(p, t); });
}

}  // namespace hangbench::diagnose
