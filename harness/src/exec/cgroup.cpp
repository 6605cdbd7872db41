#include "exec/cgroup.hpp"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "hangbench/clock.hpp"
#include "hangbench/proc.hpp"

namespace hangbench::exec_detail {
namespace {

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return false;
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// Mount point of the cgroup2 hierarchy from /proc/self/mountinfo.
std::string cgroup2_mount() {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string fstype;
    after >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream before(line.substr(0, dash));
    std::string id, parent, devno, root, mount;
    before >> id >> parent >> devno >> root >> mount;
    return mount;
  }
  return "";
}

// Our own cgroup v2 path ("0::/path" in /proc/self/cgroup).
std::string own_cgroup_path() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
std::string start_ticks(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const auto stat = proc::parse_stat(std::string((std::istreambuf_iterator<char>(in)), {}));
  return stat ? std::to_string(stat->start_ticks) : "";
}

// The owner of a group name: "hangbench-<pid>.<ticks>-...", or the older
// "hangbench-hb<pid>-..." and "hangbench-probe-<pid>" (pid only).
bool parse_owner(const std::string& name, int& pid, std::string& ticks) {
  const std::string prefix = "hangbench-";
  if (name.rfind(prefix, 0) != 0) return false;
  std::string rest = name.substr(prefix.size());
  if (rest.rfind("hb", 0) == 0)
    rest = rest.substr(2);
  else if (rest.rfind("probe-", 0) == 0)
    rest = rest.substr(6);
  char* end = nullptr;
  long value = std::strtol(rest.c_str(), &end, 10);
  if (end == rest.c_str() || value <= 0) return false;
  pid = static_cast<int>(value);
  ticks.clear();
  if (*end == '.') {
    const char* digits = end + 1;
    while (*digits >= '0' && *digits <= '9') ticks += *digits++;
  }
  return true;
}

bool owner_alive(int pid, const std::string& ticks) {
  std::string now = start_ticks(pid);
  if (now.empty()) return false;         // no such process
  return ticks.empty() || now == ticks;  // same pid, same start: the same process
}

}  // namespace

std::string find_writable_cgroup_root() {
  // HANGBENCH_NO_CGROUPS=1: run as on a machine without writable cgroups (the tests
  // check that the watcher ends every trial without them too).
  if (const char* off = std::getenv("HANGBENCH_NO_CGROUPS"); off && *off && std::string(off) != "0") return "";
  std::string mount = cgroup2_mount();
  if (mount.empty()) return "";
  std::string own = own_cgroup_path();
  std::string root = mount + (own == "/" ? "" : own);
  // Probe: a group we can create and remove is a group we can use.
  std::string probe = root + "/hangbench-probe-" + std::to_string(::getpid());
  if (::mkdir(probe.c_str(), 0755) != 0) return "";
  ::rmdir(probe.c_str());
  return root;
}

std::string cgroup_owner_tag() {
  static const std::string tag = std::to_string(::getpid()) + "." + start_ticks(::getpid());
  return tag;
}

TrialCgroup::TrialCgroup(const std::string& root, const std::string& trial_id, bool create) {
  if (root.empty()) return;
  root_ = root;
  planned_ = root + "/hangbench-" + cgroup_owner_tag() + "-" + trial_id;
  if (create && ::mkdir(planned_.c_str(), 0755) == 0) dir_ = planned_;
}

TrialCgroup::~TrialCgroup() {
  // A process killed at cleanup leaves the group as it exits, not at once: retry
  // briefly (an empty group left here would outlive the watcher's knowledge of it).
  if (!dir_.empty()) remove_cgroup(dir_, 2.0);
}

bool TrialCgroup::add(int pid) const { return ok() && write_text(dir_ + "/cgroup.procs", std::to_string(pid)); }

std::set<int> TrialCgroup::pids() const { return ok() ? cgroup_pids(dir_) : std::set<int>{}; }

void TrialCgroup::kill_all() const {
  if (ok()) kill_cgroup(dir_);
}

std::set<int> cgroup_pids(const std::string& dir) {
  std::set<int> out;
  std::ifstream in(dir + "/cgroup.procs");
  for (int pid; in >> pid;) out.insert(pid);
  return out;
}

void kill_cgroup(const std::string& dir) {
  if (write_text(dir + "/cgroup.kill", "1")) return;
  for (int pid : cgroup_pids(dir)) ::kill(pid, SIGKILL);
}

bool remove_cgroup(const std::string& dir, double bound_s) {
  double deadline = monotonic_seconds() + bound_s;
  for (;;) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY || monotonic_seconds() >= deadline) return false;
    kill_cgroup(dir);  // a process that raced into the group meanwhile
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<StaleCgroup> remove_stale_cgroups(const std::string& root) {
  std::vector<StaleCgroup> out;
  if (root.empty()) return out;
  DIR* dir = ::opendir(root.c_str());
  if (!dir) return out;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_type == DT_DIR) names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  for (const auto& name : names) {
    StaleCgroup stale;
    std::string ticks;
    if (!parse_owner(name, stale.owner_pid, ticks) || owner_alive(stale.owner_pid, ticks)) continue;
    std::string path = root + "/" + name;
    stale.name = name;
    stale.ended = cgroup_pids(path);
    if (!stale.ended.empty()) kill_cgroup(path);
    stale.removed = remove_cgroup(path, 5.0);
    out.push_back(std::move(stale));
  }
  return out;
}

}  // namespace hangbench::exec_detail
