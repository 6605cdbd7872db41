// diagnose(): checks the pids, reads the snapshot, matches the rules.
#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "hangbench/diagnose.hpp"
#include "hangbench/model.hpp"

namespace hangbench::diagnose {

namespace {

// "" when pid can be inspected, else the reason in words.
std::string inspectable(const std::string& root, int pid) {
  if (pid <= 0) return fmt::format("{} is not a process id", pid);
  const std::string dir = root + "/" + std::to_string(pid);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return fmt::format("pid {} does not exist", pid);
  DIR* fds = ::opendir((dir + "/fd").c_str());
  if (!fds) {
    int err = errno;
    if (err == ENOENT) return fmt::format("pid {} exited while being read", pid);
    return fmt::format("cannot inspect pid {}: {} reading {}/fd (run as its owner or as root)", pid, std::strerror(err),
                       dir);
  }
  ::closedir(fds);
  return "";
}

}  // namespace

ResolvedTargets resolve_targets(const DiagnoseRequest& request) {
  ResolvedTargets out;
  if (request.pids.empty() && request.tree_root == 0) {
    out.error = "no process given: name one or more PIDs, or --tree PID";
    return out;
  }
  for (int pid : request.pids) {
    if (auto why = inspectable(request.proc_root, pid); !why.empty()) {
      out.error = why;
      return out;
    }
    out.pids.push_back(pid);
  }
  if (request.tree_root != 0) {
    if (auto why = inspectable(request.proc_root, request.tree_root); !why.empty()) {
      out.error = why;
      return out;
    }
    std::set<int> listed(out.pids.begin(), out.pids.end());
    for (int pid : proc::process_tree(request.proc_root, request.tree_root))
      if (listed.insert(pid).second) out.pids.push_back(pid);
  }
  return out;
}

Diagnosis diagnose(const DiagnoseRequest& request) {
  Diagnosis d;
  auto targets = resolve_targets(request);
  if (!targets.error.empty()) {
    d.exit_code = exit_code::kUsage;
    d.error = targets.error;
    return d;
  }
  SnapshotOptions opts;
  opts.proc_root = request.proc_root;
  opts.stacks = request.stacks;
  opts.debugger = request.debugger;
  d.snapshot = take_snapshot(targets.pids, opts);
  d.findings = find_hang_shapes(d.snapshot);
  d.exit_code = exit_code::kOk;
  return d;
}

}  // namespace hangbench::diagnose
