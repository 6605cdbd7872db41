// A trial in its own PID namespace (docs/lifecycle.md): the harness clones the
// trial's root as pid 1 of a new namespace, a small init that runs the workload as
// its child (pid 2), forwards the harness's signals to every process of the
// namespace, reaps orphans and reports the workload's wait status on a pipe. The
// init has PR_SET_PDEATHSIG: when the harness dies, however it dies and whether or
// not its watcher survives, the init kills the namespace, leaves and removes its
// cgroup, and exits; the kernel kills whatever remains once it is gone. Nothing
// of the trial can outlive the harness, as in Bazel's Linux sandbox.
#pragma once

#include <sched.h>

#include <string>

namespace hangbench::exec_detail {

// A trial's init is cloned into a new PID namespace and a new mount namespace, in
// which it mounts /proc for its PID namespace and changes nothing else.
constexpr unsigned long kNamespaceCloneFlags = CLONE_NEWPID | CLONE_NEWNS;

// True when this process may create PID and mount namespaces and mount /proc in
// them (root, or a user namespace allowing it) and HANGBENCH_NO_PIDNS is unset or
// 0; probed once.
bool pid_namespaces_available();

// "pid-namespace" or "watcher": what the provenance says ended trials ran under.
std::string trial_isolation_mode();

// The init's PR_SET_PDEATHSIG, which the harness also sends it to end a trial: the
// init then kills every process of the namespace, removes the trial's cgroup and exits.
int namespace_end_signal();

// Everything the init needs, prepared before the clone: it allocates nothing.
struct NamespaceInitPlan {
  int go_fd = -1;      // read: the harness has told the watcher; EOF = the harness is gone
  int error_fd = -1;   // write (the workload's): errno when exec failed
  int status_fd = -1;  // write: the workload's wait status (an int) when it ends
  int info_fd = -1;    // write: 1/0 (in the cgroup) before the go; the workload's host and namespace pids after it
  const char* exe = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cgroup_dir = nullptr;    // made and joined by the init; null = none
  const char* cgroup_procs = nullptr;  // <cgroup_dir>/cgroup.procs
  const char* parent_procs = nullptr;  // where the init moves before removing its group
  int harness_gone_signal = 0;         // its PR_SET_PDEATHSIG
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  // The workload's pids in its namespace start after this (ns_last_pid), so that
  // trials running at once never share a pid; 0 = leave them from 1.
  long pid_base = 0;
};

// A pid base for the next trial's namespace: consecutive trials get consecutive
// blocks of the pid range, so trials in flight together never number alike.
long next_namespace_pid_base();

// The init's body, in the cloned child. Async-signal-safe only; never returns.
[[noreturn]] void namespace_init_main(const NamespaceInitPlan& plan);

// fork() without glibc's atfork handlers and locks: safe in a multithreaded
// parent and in a child made by a raw clone. `flags` adds kNamespaceCloneFlags or 0.
long raw_fork(unsigned long flags);

}  // namespace hangbench::exec_detail
