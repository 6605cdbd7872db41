#include "exec/proc_scan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace hangbench::exec_detail {
namespace {

std::string read_small_file(const std::string& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  while (out.size() < limit) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::vector<int> all_pids() {
  std::vector<int> pids;
  DIR* dir = ::opendir("/proc");
  if (!dir) return pids;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end && *end == '\0' && pid > 0) pids.push_back(static_cast<int>(pid));
  }
  ::closedir(dir);
  return pids;
}

}  // namespace

std::optional<ProcStat> read_proc_stat(int pid) {
  return proc::parse_stat(read_small_file("/proc/" + std::to_string(pid) + "/stat", 4096));
}

bool environ_contains(int pid, const std::string& entry) {
  std::string env = read_small_file("/proc/" + std::to_string(pid) + "/environ", 1 << 20);
  for (size_t pos = 0; pos < env.size();) {
    size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (env.compare(pos, end - pos, entry) == 0) return true;
    pos = end + 1;
  }
  return false;
}

bool environ_has_prefix(int pid, const std::string& prefix) {
  std::string env = read_small_file("/proc/" + std::to_string(pid) + "/environ", 1 << 20);
  for (size_t pos = 0; pos < env.size();) {
    size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (end - pos >= prefix.size() && env.compare(pos, prefix.size(), prefix) == 0) return true;
    pos = end + 1;
  }
  return false;
}

std::optional<std::string> environ_value(int pid, const std::string& name) {
  std::string env = read_small_file("/proc/" + std::to_string(pid) + "/environ", 1 << 20);
  const std::string prefix = name + "=";
  for (size_t pos = 0; pos < env.size();) {
    size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (end - pos >= prefix.size() && env.compare(pos, prefix.size(), prefix) == 0) {
      return env.substr(pos + prefix.size(), end - pos - prefix.size());
    }
    pos = end + 1;
  }
  return std::nullopt;
}

void remember(KnownProcesses& known, int pid) {
  if (auto s = read_proc_stat(pid)) known[pid] = s->start_ticks;
}

TrialProcesses find_trial_processes(int root_sid, const std::string& trial_id_entry, const KnownProcesses& known,
                                    const std::set<int>& cgroup_pids, bool scan_environ) {
  const int self = static_cast<int>(::getpid());
  std::map<int, ProcStat> stats;
  for (int pid : all_pids()) {
    if (pid == self || pid == 1) continue;
    if (auto s = read_proc_stat(pid)) stats[pid] = *s;
  }
  auto is_known = [&](int pid, const ProcStat& s) {
    auto it = known.find(pid);
    return it != known.end() && it->second == s.start_ticks;
  };
  // The root's pid names the trial's session and group only while it is the
  // root's: once another process holds it, the old session had no member left.
  auto root_now = stats.find(root_sid);
  const bool root_pid_reused =
      root_now != stats.end() && known.count(root_sid) && !is_known(root_sid, root_now->second);
  std::set<int> members;
  for (const auto& [pid, s] : stats) {
    const bool by_session = !root_pid_reused && (s.sid == root_sid || s.pgid == root_sid || pid == root_sid);
    if (by_session || is_known(pid, s) || cgroup_pids.count(pid)) members.insert(pid);
  }
  // Environment tags: only live processes have a readable environ.
  for (const auto& [pid, s] : stats) {
    if (!scan_environ) break;
    if (!members.count(pid) && s.state != 'Z' && environ_contains(pid, trial_id_entry)) members.insert(pid);
  }
  // Descendants of any member (children that moved to a new session before forking).
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, s] : stats) {
      if (!members.count(pid) && members.count(s.ppid)) grew = members.insert(pid).second || grew;
    }
  }
  TrialProcesses out;
  for (int pid : members) {
    auto it = stats.find(pid);
    if (it == stats.end()) continue;  // gone
    (it->second.state == 'Z' ? out.zombies : out.live).insert(pid);
    out.start_ticks[pid] = it->second.start_ticks;
  }
  return out;
}

}  // namespace hangbench::exec_detail
