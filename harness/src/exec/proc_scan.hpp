// Finds the processes of one trial by reading /proc: same session or process
// group as the root, descendants of the root, and any process whose environment
// carries the trial's HANGBENCH_TRIAL_ID (double-forked daemons that left both).
#pragma once

#include <optional>
#include <set>
#include <string>

#include "hangbench/proc.hpp"

namespace hangbench::exec_detail {

// /proc/PID/stat of a live process, through the one stat parser (hangbench/proc.hpp).
using ProcStat = proc::StatFields;
std::optional<ProcStat> read_proc_stat(int pid);
bool environ_contains(int pid, const std::string& entry);     // entry = "NAME=value"
bool environ_has_prefix(int pid, const std::string& prefix);  // an entry starting with prefix

struct TrialProcesses {
  std::set<int> live;     // not zombies
  std::set<int> zombies;  // exited, waiting for a parent to reap them
};

// `root_sid` is the root's pid (it called setsid). `known` are pids seen earlier.
// `cgroup_pids` come from cgroup.procs when the trial has a cgroup; with one, the
// (slower) environment scan can be skipped.
TrialProcesses find_trial_processes(int root_sid, const std::string& trial_id_entry, const std::set<int>& known,
                                    const std::set<int>& cgroup_pids, bool scan_environ = true);

}  // namespace hangbench::exec_detail
