// One read of the processes of a hang, of their sockets and pipes, and of every
// process on the machine that holds a descriptor for them. Built by
// take_snapshot() from a live /proc; the rules (diagnose.hpp) and the renderers
// read it. Plain data, so tests can also build one by hand.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hangbench/flight_recorder.hpp"
#include "hangbench/proc.hpp"

namespace hangbench::diagnose {

struct Holder {
  int pid = 0;
  int fd = 0;
  int flags = -1;  // fdinfo flags when read (pipes); -1 otherwise
};

// One native frame (libdw), or one Python frame merged in where the interpreter ran it.
struct StackFrame {
  std::uint64_t pc = 0;  // 0 for inlined and Python frames
  std::string function;  // demangled; "??" when unnamed
  std::string module;    // shared object (file name only; the whole path for libnccl*); "python" for Python frames
  std::string file;      // source file when debug info or the interpreter says so
  int line = 0;
  bool inlined = false;
  bool python = false;
};

struct StackThread {
  int tid = 0;  // LWP
  std::string name;
  std::vector<std::string> functions;  // innermost first; "??" when unnamed
  std::vector<StackFrame> frames;      // the same frames with modules and lines (libdw only)
};

struct DebuggerStacks {
  bool attempted = false;
  std::string debugger;        // "libdw", or the path of gdb / cuda-gdb used
  std::string skipped_reason;  // why none were captured, in words ("" when captured)
  bool timed_out = false;
  std::string raw;  // the debugger's whole output (libdw: the same, printed like gdb)
  std::vector<StackThread> threads;
  double seconds = 0;  // how long this process's stacks took
  // Where that time went (libdw: "report" the memory map, "attach" ptrace, "unwind"
  // the frames, "symbols" naming them, "detach"), for benchmarks of the capture.
  std::map<std::string, double> phase_seconds;
};

// The interpreter's own view of a CPython process, read from its memory.
struct PythonFrame {
  std::string function;  // co_qualname
  std::string file;      // co_filename
  int line = 0;
  bool entry = false;  // the oldest frame of one _PyEval_EvalFrameDefault call
};

struct PythonThread {
  int tid = 0;  // native thread id (LWP)
  bool holds_gil = false;
  std::vector<PythonFrame> frames;  // newest first
  std::string name;                 // threading.Thread's name (threading.Thread(name=...)); "" when not read
};

struct PythonStacks {
  bool attempted = false;
  std::string version;         // "3.11.7"; "" when not a CPython process
  std::string skipped_reason;  // why no frames were read, in words
  int gil_holder_tid = 0;      // 0: nobody holds the GIL (or unknown)
  std::vector<PythonThread> threads;
};

struct ProcessSnapshot {
  proc::ProcessInfo info;
  bool target = false;  // asked for (or in --tree), as opposed to a holder found elsewhere
  int rank = -1;        // RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK / PMI_RANK of a target; -1 when unset
  // The few variables of a target's starting environment that rules read
  // (CUDA_LAUNCH_BLOCKING, CUDA_MODULE_LOADING); a setenv() after exec is not seen.
  std::map<std::string, std::string> environment;
  std::vector<proc::ThreadInfo> threads;
  std::vector<proc::Descriptor> descriptors;
  std::vector<std::string> libraries;
  DebuggerStacks stacks;
  PythonStacks python;
  FlightRecorderDump flight_recorder;  // PyTorch ranks with the Flight Recorder on (--stacks)
};

// A socket and, for TCP, the other end found by swapping local and remote.
struct Connection {
  proc::SocketEntry end_a;  // the end a target holds
  std::optional<proc::SocketEntry> end_b;
  std::vector<Holder> holders_a, holders_b;
};

struct PipeUse {
  std::uint64_t inode = 0;
  std::vector<Holder> readers, writers;  // by O_ACCMODE of each descriptor
};

struct Snapshot {
  double captured_at = 0;  // unix seconds
  std::string host;
  std::vector<int> target_pids;
  std::vector<ProcessSnapshot> processes;  // targets first, then holders found elsewhere
  std::vector<Connection> connections;
  std::vector<PipeUse> pipes;
  std::vector<std::string> notes;  // what could not be read, and why
  double read_seconds = 0;         // how long the read took
  // The parent of each ancestor of a read process that is not itself read (a launcher, its
  // shell, up to pid 1), read once at capture: "a descendant of" is told from these, never
  // from /proc afterwards (a stored snapshot's pids are another moment's, or another machine's).
  std::map<int, int> ancestor_parents;

  const ProcessSnapshot* find(int pid) const;
  // The parent of `pid`, from the processes read or ancestor_parents; 0 when unknown.
  int parent_of(int pid) const;
  // Socket and pipe inodes come from different file systems and may collide: the kind is part of the key.
  std::vector<Holder> holders_of(std::uint64_t inode, proc::DescriptorKind kind) const;
};

// How stacks are read: the one set of options that diagnose, a hung trial's
// capture and each node of a Slurm job pass down unchanged.
struct DebuggerOptions {
  double timeout_s = 20;  // bound on the stacks of all processes together (take_snapshot), and so on each
  // "" = libdw only. "cuda-gdb": cuda-gdb for the processes with a CUDA context
  // (device state), libdw for the others (a forked worker makes cuda-gdb wait out
  // its timeout). "gdb" or a path: that debugger for every target.
  std::string program;
  bool everywhere = false;  // hand every target to the debugger (the pre-libdw path, for comparison)
  // Shared libraries whose symbols the debugger reads (substrings or gdb regexes,
  // one `sharedlibrary` command each); empty = all. Reading libtorch_cuda's symbols
  // alone takes cuda-gdb over a minute; the NCCL stack needs only libnccl and libc.
  std::vector<std::string> symbols;
  // Seconds to wait for each rank's Flight Recorder dump once asked through its pipe (at
  // most timeout_s); below 0: flight_recorder_wait_bound's default from the rank's poll interval.
  double flight_recorder_wait_s = -1;
};

struct SnapshotOptions {
  std::string proc_root = "/proc";
  bool stacks = false;  // native stacks (libdw) and Python frames of every target
  DebuggerOptions debugger;
};

// Never throws for processes that vanish meanwhile; a target that cannot be read
// at all becomes a note.
Snapshot take_snapshot(const std::vector<int>& pids, const SnapshotOptions& opts);

// Why a rank's Flight Recorder cannot dump now, from its stacks ("" when it may); also
// when the thread writing the dump waits for the GIL that a thread asleep in native code holds.
// PyTorch's watchdog thread (pt_nccl_watchdg), which serves the dump, blocked on a
// mutex (in the abort hang, under NCCLComm::isAborted(), the mutex the abort holds).
std::string flight_recorder_cannot_dump(const ProcessSnapshot& p);

// Which thread of a rank is writing its Flight Recorder dump now ("" when none is seen):
// PyTorch writes it from threads its monitor starts (they keep the name "pt_nccl_heartbt"
// but are not in HeartbeatMonitor::runLoop), or in dumpDebuggingInfo, importing and running
// Python and symbolising tracebacks first. On an H100 that took seconds (ci/h200_fr_probe.sh,
// results/h100-2026-12-06-catalog-sweep-diagnose): a dump on its way is worth a longer wait.
std::string flight_recorder_writer(const ProcessSnapshot& p);

// Whether a process has a CUDA context: the driver starts its "cuda-EvtHandlr" thread then.
bool has_cuda_context(const ProcessSnapshot& p);

// Debugger stacks of one process, bounded by opts.debugger.timeout_s.
DebuggerStacks capture_stacks(int pid, const SnapshotOptions& opts, char state_before);
// The batch command line: attach, read the chosen libraries' symbols, print every thread's stack.
std::vector<std::string> debugger_command(const std::string& debugger, int pid,
                                          const std::vector<std::string>& symbols);
// Parses `thread apply all bt` output into threads and function names.
std::vector<StackThread> parse_gdb_backtraces(const std::string& text);

// Sockets and pipes that both processes hold a descriptor for.
std::vector<proc::FdTarget> shared_inodes(const ProcessSnapshot& a, const ProcessSnapshot& b);
// "pid 894 (sleep), a child that pid 880 forked at 10:02:11 (2.1 s after pid 880 started)"
std::string describe_process(const Snapshot& s, int pid, int relative_to = 0);
std::string clock_time(double unix_seconds);  // "10:02:11" local time
// The name threading gave thread `tid` (threading.Thread(name=...)), "" when not read.
std::string python_thread_name(const ProcessSnapshot& p, int tid);
// How a thread is named in text: "\"python3\"", or "\"python3\" (Python \"loader-7\")" when
// threading's name is known and is not the OS name (3.14 gives the OS the same name, cut to 15 bytes).
std::string thread_title(const ProcessSnapshot& p, int tid, const std::string& os_name);

nlohmann::json to_json(const Snapshot& s);
// The inverse, for evidence stored earlier (evidence.json, `diagnose --json`): the
// rules can judge it again. Throws std::invalid_argument saying what is wrong.
Snapshot snapshot_from_json(const nlohmann::json& j);
// The same from a file; the message of the std::invalid_argument it throws names
// the file (and, for JSON that does not parse, the line).
Snapshot read_snapshot_file(const std::string& path);

}  // namespace hangbench::diagnose
