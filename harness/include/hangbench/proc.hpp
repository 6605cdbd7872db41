// Parsers and readers of Linux /proc, one small job each. The parsers take the
// text of one file (so that tests feed them fixture snapshots); the readers take
// a proc root ("/proc" on a live machine) and never throw for a process that
// vanished mid-read: they return what they could read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hangbench::proc {

// ---- /proc/PID/stat --------------------------------------------------------
struct StatFields {
  int pid = 0;
  std::string comm;  // between the first '(' and the LAST ')'
  char state = '?';  // R S D T t Z X I ...
  int ppid = 0, pgid = 0, sid = 0;
  int num_threads = 0;
  std::uint64_t start_ticks = 0;  // field 22: clock ticks since boot
};
std::optional<StatFields> parse_stat(const std::string& line);
std::string state_name(char state);  // 'S' -> "sleeping", 'T' -> "stopped", ...

// btime (unix seconds of boot) from the text of /proc/stat; 0 when absent.
std::int64_t parse_boot_time(const std::string& proc_stat_text);

// ---- /proc/PID/task/TID/syscall ---------------------------------------------
struct SyscallLine {
  enum class Kind { InSyscall, Running, NotInSyscall, Unknown } kind = Kind::Unknown;
  long number = -1;
  std::vector<std::uint64_t> args;  // up to 6
};
SyscallLine parse_syscall(const std::string& line);
std::string syscall_name(long number);  // this architecture's name (libseccomp); "syscall_N" when unknown
std::string syscall_name(long number, const std::string& arch);  // arch as libseccomp names it: "aarch64", "x86_64"

// ---- /proc/PID/fd links and fdinfo ------------------------------------------
enum class DescriptorKind { Socket, Pipe, AnonInode, File, Other };
struct FdTarget {
  DescriptorKind kind = DescriptorKind::Other;
  std::uint64_t inode = 0;  // for socket:[N] and pipe:[N]
};
FdTarget parse_fd_link(const std::string& link);
std::string to_string(DescriptorKind k);
// The "flags:" of /proc/PID/fdinfo/FD (octal), -1 when absent.
int parse_fdinfo_flags(const std::string& fdinfo_text);
// "tfd:" lines of an epoll descriptor's fdinfo: the descriptors it watches.
std::vector<int> parse_epoll_targets(const std::string& fdinfo_text);

// ---- /proc/net/tcp, tcp6, unix -------------------------------------------------
struct SocketEntry {
  std::string protocol;  // "tcp", "tcp6", "unix"
  std::string local;     // "127.0.0.1:45678", "[::1]:80", unix path or ""
  std::string remote;
  std::string state;  // "ESTABLISHED", "LISTEN", ... ; unix: "CONNECTED", "UNCONNECTED", "LISTEN"
  std::uint64_t inode = 0;
  std::string unix_type;  // "STREAM", "DGRAM", "SEQPACKET" for unix sockets
};
std::vector<SocketEntry> parse_tcp_table(const std::string& text, bool ipv6);
std::vector<SocketEntry> parse_unix_table(const std::string& text);
std::string tcp_state_name(int code);

// ---- /proc/PID/maps ----------------------------------------------------------
// Distinct paths of the libraries that matter for hangs (libnccl, libpython,
// libmpi, libcuda, libucp/libucs, libtorch), in map order.
std::vector<std::string> parse_interesting_libraries(const std::string& maps_text);

// ---- Readers (live) ----------------------------------------------------------
struct ThreadInfo {
  int tid = 0;
  std::string name;
  char state = '?';
  std::string wchan;  // "" when 0 or unreadable
  SyscallLine syscall;
  std::string syscall_name;               // "" unless InSyscall
  std::vector<std::string> kernel_stack;  // function names, when readable (root)
  std::vector<int> polled_fds;            // for poll/ppoll/epoll_wait: the descriptors it waits on
  // For a thread in futex (read by diagnose from the process's memory, -1 when not):
  // the 32-bit word it waits on (pthread_join waits on the joined thread's tid), and
  // the int 8 bytes further (a pthread_mutex_t's __owner, when the word is a mutex's lock).
  std::int64_t futex_word = -1;
  std::int64_t futex_owner = -1;
  // Context switches (voluntary + involuntary, /proc/PID/task/TID/status) when the
  // thread was read, and again at the end of the snapshot (-1 when unread): a thread
  // that woke many times in between is making progress, whatever one instant showed.
  std::int64_t switches = -1;
  // For a thread in nanosleep/clock_nanosleep: the seconds left of its sleep (-1 unknown).
  double sleep_left_s = -1;
  std::int64_t switches_later = -1;
  // Seen asleep in nanosleep/clock_nanosleep by a later look within the snapshot's
  // progress window (read by diagnose): a thread between two steps of its work.
  bool seen_asleep = false;
};

struct Descriptor {
  int fd = 0;
  std::string link;  // readlink text
  FdTarget target;
  int flags = -1;  // from fdinfo; only read for pipes and epoll
};

struct ProcessInfo {
  int pid = 0, ppid = 0, pgid = 0, sid = 0;
  std::string comm;
  char state = '?';
  std::vector<std::string> cmdline;
  std::uint64_t start_ticks = 0;
  double start_unix = 0;  // wall-clock start, from btime + ticks / CLK_TCK
  int uid = -1;
  std::string net_namespace;  // readlink of /proc/PID/ns/net
};

std::optional<ProcessInfo> read_process(const std::string& proc_root, int pid);
std::vector<ThreadInfo> read_threads(const std::string& proc_root, int pid);
// voluntary_ctxt_switches + nonvoluntary_ctxt_switches of a status file's text; -1 when absent.
std::int64_t parse_context_switches(const std::string& status_text);
std::int64_t read_context_switches(const std::string& proc_root, int pid, int tid);
std::vector<Descriptor> read_descriptors(const std::string& proc_root, int pid);
std::vector<std::string> read_libraries(const std::string& proc_root, int pid);
std::vector<int> list_pids(const std::string& proc_root);
// pid and every process below it (by ppid), pid first.
std::vector<int> process_tree(const std::string& proc_root, int pid);
// The roots and every process below any of them, each once, from one read of
// /proc (not one per root: a hung tree of thousands is read in linear time).
std::vector<int> process_trees(const std::string& proc_root, const std::vector<int>& roots);
// Reads a whole small file; nullopt when it cannot be opened.
std::optional<std::string> read_text(const std::string& path);

}  // namespace hangbench::proc
