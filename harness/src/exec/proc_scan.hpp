// Finds the processes of one trial by reading /proc: same session or process
// group as the root, descendants of the root, and any process whose environment
// carries the trial's HANGBENCH_TRIAL_ID (double-forked daemons that left both).
#pragma once

#include <cstdint>
#include <map>
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
// The value of NAME in the process's environment (the first entry "NAME=..."), if any.
std::optional<std::string> environ_value(int pid, const std::string& name);

// Processes seen earlier, by pid and start time (field 22 of stat): a pid is a
// process only together with when it started, because the kernel hands a freed
// pid to the next process, on a busy machine within seconds.
using KnownProcesses = std::map<int, std::uint64_t>;
void remember(KnownProcesses& known, int pid);  // no-op when pid is gone

struct TrialProcesses {
  std::set<int> live;     // not zombies
  std::set<int> zombies;  // exited, waiting for a parent to reap them
  // Each of them (live and zombies) with its start time, as this scan read it:
  // what a caller remembers of them, without reading their stat again.
  KnownProcesses start_ticks;
};

// `root_sid` is the root's pid (it called setsid). `known` are processes seen
// earlier; a known pid now held by another process is not the trial's, and
// neither is the session of a root pid that another process now holds.
// `cgroup_pids` come from cgroup.procs when the trial has a cgroup; with one, the
// (slower) environment scan can be skipped.
TrialProcesses find_trial_processes(int root_sid, const std::string& trial_id_entry, const KnownProcesses& known,
                                    const std::set<int>& cgroup_pids, bool scan_environ = true);

}  // namespace hangbench::exec_detail
