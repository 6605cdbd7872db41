#include "exec/cgroup.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

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

}  // namespace

std::string find_writable_cgroup_root() {
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

TrialCgroup::TrialCgroup(const std::string& root, const std::string& trial_id) {
  if (root.empty()) return;
  std::string dir = root + "/hangbench-" + trial_id;
  if (::mkdir(dir.c_str(), 0755) == 0) dir_ = dir;
}

TrialCgroup::~TrialCgroup() {
  if (!dir_.empty()) ::rmdir(dir_.c_str());   // fails harmlessly if a survivor is still inside
}

bool TrialCgroup::add(int pid) const { return ok() && write_text(dir_ + "/cgroup.procs", std::to_string(pid)); }

std::set<int> TrialCgroup::pids() const {
  std::set<int> out;
  if (!ok()) return out;
  std::ifstream in(dir_ + "/cgroup.procs");
  for (int pid; in >> pid;) out.insert(pid);
  return out;
}

void TrialCgroup::kill_all() const {
  if (!ok()) return;
  if (write_text(dir_ + "/cgroup.kill", "1")) return;
  for (int pid : pids()) ::kill(pid, SIGKILL);
}

}  // namespace hangbench::exec_detail
