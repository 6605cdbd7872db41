// Readers of a live /proc. Every read may fail because the process just exited
// or is not ours: readers return what they got and never throw.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "hangbench/proc.hpp"

namespace hangbench::proc {

std::optional<std::string> read_text(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      ::close(fd);
      return out.empty() ? std::nullopt : std::optional<std::string>(out);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > (16u << 20)) break;  // bounded: maps of huge processes
  }
  ::close(fd);
  return out;
}

namespace {

std::string read_link(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return "";
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<int> numeric_entries(const std::string& dir) {
  std::vector<int> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    const char* n = e->d_name;
    if (*n < '0' || *n > '9') continue;
    out.push_back(std::atoi(n));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

double boot_time(const std::string& proc_root) {
  auto text = read_text(proc_root + "/stat");
  return text ? static_cast<double>(parse_boot_time(*text)) : 0.0;
}

// The kernel stack as function names ("poll_schedule_timeout.constprop.0").
std::vector<std::string> parse_kernel_stack(const std::string& text) {
  std::vector<std::string> frames;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto sp = line.find("] ");
    std::string fn = sp == std::string::npos ? line : line.substr(sp + 2);
    if (auto plus = fn.find('+'); plus != std::string::npos) fn.erase(plus);
    if (!fn.empty()) frames.push_back(fn);
  }
  return frames;
}

// The descriptors a thread blocked in poll/ppoll waits on: its pollfd array,
// read from /proc/PID/mem (read-only; needs the same access as the syscall file).
std::vector<int> read_pollfds(const std::string& proc_root, int pid, std::uint64_t address, std::uint64_t count) {
  std::vector<int> fds;
  if (address == 0 || count == 0) return fds;
  count = std::min<std::uint64_t>(count, 256);
  int mem = ::open((proc_root + "/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (mem < 0) return fds;
  std::vector<pollfd> entries(count);
  ssize_t want = static_cast<ssize_t>(count * sizeof(pollfd));
  ssize_t got = ::pread(mem, entries.data(), static_cast<std::size_t>(want), static_cast<off_t>(address));
  ::close(mem);
  if (got != want) return fds;
  for (const auto& e : entries)
    if (e.fd >= 0) fds.push_back(e.fd);
  return fds;
}

}  // namespace

std::optional<ProcessInfo> read_process(const std::string& proc_root, int pid) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  auto stat_text = read_text(dir + "/stat");
  if (!stat_text) return std::nullopt;
  auto stat = parse_stat(*stat_text);
  if (!stat) return std::nullopt;
  ProcessInfo p;
  p.pid = stat->pid;
  p.ppid = stat->ppid;
  p.pgid = stat->pgid;
  p.sid = stat->sid;
  p.comm = stat->comm;
  p.state = stat->state;
  p.start_ticks = stat->start_ticks;
  static const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  double btime = boot_time(proc_root);
  if (btime > 0 && ticks_per_second > 0)
    p.start_unix = btime + static_cast<double>(p.start_ticks) / static_cast<double>(ticks_per_second);
  if (auto cmd = read_text(dir + "/cmdline")) {
    std::string arg;
    for (char c : *cmd) {
      if (c == '\0') {
        p.cmdline.push_back(arg);
        arg.clear();
      } else {
        arg += c;
      }
    }
    if (!arg.empty()) p.cmdline.push_back(arg);
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) p.uid = static_cast<int>(st.st_uid);
  p.net_namespace = read_link(dir + "/ns/net");
  return p;
}

std::int64_t read_context_switches(const std::string& proc_root, int pid, int tid) {
  auto status = read_text(proc_root + "/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  return status ? parse_context_switches(*status) : -1;
}

std::vector<ThreadInfo> read_threads(const std::string& proc_root, int pid) {
  std::vector<ThreadInfo> threads;
  const std::string task_dir = proc_root + "/" + std::to_string(pid) + "/task";
  for (int tid : numeric_entries(task_dir)) {
    const std::string dir = task_dir + "/" + std::to_string(tid);
    ThreadInfo t;
    t.tid = tid;
    if (auto comm = read_text(dir + "/comm")) t.name = trim(*comm);
    if (auto stat_text = read_text(dir + "/stat")) {
      if (auto stat = parse_stat(*stat_text)) t.state = stat->state;
    } else {
      continue;  // the thread exited between listing and reading
    }
    if (auto wchan = read_text(dir + "/wchan")) {
      t.wchan = trim(*wchan);
      if (t.wchan == "0") t.wchan.clear();
    }
    if (auto sc = read_text(dir + "/syscall")) {
      t.syscall = parse_syscall(*sc);
      if (t.syscall.kind == SyscallLine::Kind::InSyscall) {
        t.syscall_name = syscall_name(t.syscall.number);
        if ((t.syscall_name == "poll" || t.syscall_name == "ppoll") && t.syscall.args.size() >= 2)
          t.polled_fds = read_pollfds(proc_root, pid, t.syscall.args[0], t.syscall.args[1]);
      }
    }
    if (auto ks = read_text(dir + "/stack")) t.kernel_stack = parse_kernel_stack(*ks);
    if (auto status = read_text(dir + "/status")) t.switches = parse_context_switches(*status);
    threads.push_back(std::move(t));
  }
  return threads;
}

std::vector<Descriptor> read_descriptors(const std::string& proc_root, int pid) {
  std::vector<Descriptor> out;
  const std::string dir = proc_root + "/" + std::to_string(pid);
  for (int fd : numeric_entries(dir + "/fd")) {
    Descriptor d;
    d.fd = fd;
    d.link = read_link(dir + "/fd/" + std::to_string(fd));
    if (d.link.empty()) continue;  // closed meanwhile
    d.target = parse_fd_link(d.link);
    if (d.target.kind == DescriptorKind::Pipe) {
      if (auto info = read_text(dir + "/fdinfo/" + std::to_string(fd))) d.flags = parse_fdinfo_flags(*info);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> read_libraries(const std::string& proc_root, int pid) {
  auto maps = read_text(proc_root + "/" + std::to_string(pid) + "/maps");
  return maps ? parse_interesting_libraries(*maps) : std::vector<std::string>{};
}

std::vector<int> list_pids(const std::string& proc_root) { return numeric_entries(proc_root); }

std::vector<int> process_tree(const std::string& proc_root, int root) { return process_trees(proc_root, {root}); }

std::vector<int> process_trees(const std::string& proc_root, const std::vector<int>& roots) {
  std::multimap<int, int> children;  // ppid -> pid
  for (int pid : list_pids(proc_root)) {
    auto text = read_text(proc_root + "/" + std::to_string(pid) + "/stat");
    if (!text) continue;
    if (auto s = parse_stat(*text)) children.emplace(s->ppid, pid);
  }
  std::vector<int> tree;
  std::set<int> seen;
  for (int root : roots)
    if (seen.insert(root).second) tree.push_back(root);
  for (std::size_t i = 0; i < tree.size(); ++i) {
    auto [lo, hi] = children.equal_range(tree[i]);
    for (auto it = lo; it != hi; ++it)
      if (seen.insert(it->second).second) tree.push_back(it->second);
  }
  return tree;
}

}  // namespace hangbench::proc
