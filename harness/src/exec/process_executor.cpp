// The real executor: spawn, wait with a timeout, capture evidence of a hang while
// the processes still live, then end and reap the whole tree and check that
// nothing of the trial survives.
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "exec/cgroup.hpp"
#include "exec/launch_argv.hpp"
#include "exec/phase_reader.hpp"
#include "exec/pid_namespace.hpp"
#include "exec/proc_scan.hpp"
#include "exec/spawn.hpp"
#include "exec/trial_watcher.hpp"
#include "hangbench/clock.hpp"
#include "hangbench/executor.hpp"
#include "hangbench/hang_capture.hpp"
#include "hangbench/matrix.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace hangbench {
namespace {

using exec_detail::TrialCgroup;

double unix_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

std::string make_trial_id() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  char buf[64];
  std::snprintf(buf, sizeof buf, "hb%d-%u-%06x", static_cast<int>(::getpid()), counter++, rd() & 0xffffff);
  return buf;
}

// The pid a process has in its innermost PID namespace (the last NSpid field), or 0.
int innermost_pid(int host_pid) {
  std::ifstream in("/proc/" + std::to_string(host_pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    auto last = line.find_last_of(" \t");
    return last == std::string::npos ? 0 : std::atoi(line.c_str() + last + 1);
  }
  return 0;
}

// Everything about one running trial that cleanup needs.
struct RunningTrial {
  int root = -1;
  std::string trial_id_entry;  // "HANGBENCH_TRIAL_ID=..."
  const TrialCgroup* cgroup = nullptr;
  exec_detail::KnownProcesses known;  // every process ever attributed to the trial
  bool root_reaped = false;
  // In a PID namespace: root is its init; the workload's status arrives on status_fd,
  // and ns_to_host maps the pids the workload sees (and writes in its phase lines)
  // to the host pids that evidence names.
  bool pid_namespace = false;
  int workload = -1;  // its host pid
  int status_fd = -1;
  std::map<int, int> ns_to_host;

  RunningTrial() = default;
  RunningTrial(const RunningTrial&) = delete;
  RunningTrial& operator=(const RunningTrial&) = delete;
  ~RunningTrial() {
    if (status_fd >= 0) ::close(status_fd);
  }

  exec_detail::TrialProcesses scan() {
    auto procs = exec_detail::find_trial_processes(root, trial_id_entry, known,
                                                   cgroup ? cgroup->pids() : std::set<int>{}, cgroup == nullptr);
    for (const auto& [pid, start_ticks] : procs.start_ticks) known[pid] = start_ticks;
    if (pid_namespace) {
      for (int pid : procs.live) {
        if (int inner = innermost_pid(pid); inner > 0 && inner != pid) ns_to_host.emplace(inner, pid);
      }
    }
    return procs;
  }

  // The workload's wait status, when it has arrived on the status pipe.
  bool read_workload_status(int& status) {
    if (status_fd < 0) return false;
    int value = 0;
    ssize_t n;
    do {
      n = ::read(status_fd, &value, sizeof value);
    } while (n < 0 && errno == EINTR);
    if (n != sizeof value) return false;
    status = value;
    return true;
  }

  // Reaps the trial's zombies that are our children (orphans reparented to the
  // subreaper). Only pids attributed to this trial: never another trial's child.
  void reap_own_zombies(const std::set<int>& zombies) {
    for (int pid : zombies) {
      if (pid == root && root_reaped) continue;
      if (auto st = exec_detail::read_proc_stat(pid); st && st->ppid == ::getpid()) {
        ::waitpid(pid, nullptr, WNOHANG);
        if (pid == root) root_reaped = true;
      }
    }
  }

  void signal_all(const std::set<int>& pids, int sig) {
    for (int pid : pids) ::kill(pid, sig);
    if (!root_reaped) ::kill(-root, sig);  // the process group, should a member hide from /proc
  }
};

// TERM, grace, KILL, reap; returns the pids still alive afterwards and those it ended.
std::vector<int> end_trial_tree(RunningTrial& trial, double grace_s, std::set<int>& ended, CleanupStep& step) {
  auto procs = trial.scan();
  // A namespace's init that is alone leaves by itself as soon as it has reaped the
  // workload: wait for that (briefly) rather than count it as something to end.
  for (double until = monotonic_seconds() + 2.0; trial.pid_namespace && !trial.root_reaped &&
                                                 procs.live == std::set<int>{trial.root} &&
                                                 monotonic_seconds() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (::waitpid(trial.root, nullptr, WNOHANG) == trial.root) trial.root_reaped = true;
    procs = trial.scan();
  }
  ended = procs.live;
  step = CleanupStep::None;
  if (procs.live.empty()) {  // the common, healthy case: one scan only
    trial.reap_own_zombies(procs.zombies);
    return {};
  }
  step = CleanupStep::Term;
  trial.signal_all(procs.live, SIGTERM);
  trial.signal_all(procs.live, SIGCONT);  // a stopped process acts on TERM only once continued
  auto wait_until_gone = [&](double seconds) {
    double deadline = monotonic_seconds() + seconds;
    for (;;) {
      trial.reap_own_zombies(procs.zombies);
      procs = trial.scan();
      ended.insert(procs.live.begin(), procs.live.end());
      if (procs.live.empty() || monotonic_seconds() >= deadline) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };
  wait_until_gone(grace_s);
  if (!procs.live.empty() && trial.pid_namespace && !trial.root_reaped) {
    // The init ends its namespace and removes its own cgroup: no moment exists
    // when the group stands and only the harness knows to remove it.
    step = CleanupStep::Kill;
    ::kill(trial.root, exec_detail::namespace_end_signal());
    for (int pid : procs.live)
      if (pid != trial.root) ::kill(pid, SIGKILL);
    wait_until_gone(2.0);
  }
  if (!procs.live.empty()) {
    step = CleanupStep::Kill;
    trial.signal_all(procs.live, SIGKILL);
    if (trial.cgroup) trial.cgroup->kill_all();
    wait_until_gone(5.0);
  }
  trial.reap_own_zombies(procs.zombies);
  procs = trial.scan();
  trial.reap_own_zombies(procs.zombies);
  return {procs.live.begin(), procs.live.end()};
}

// Waits for the root to exit (in a namespace: for the workload's status), the
// deadline, or cancellation. Returns true on exit. `tighten` may move the deadline
// earlier (phase-relative timeouts); it runs every pass, at most every 100 ms.
bool wait_for_root(RunningTrial& trial, double& deadline_mono, const std::function<double(double)>& tighten,
                   const std::atomic<bool>* cancel, int& status) {
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, trial.root, 0));
  double next_scan = monotonic_seconds() + 1.0;
  bool exited = false;
  for (;;) {
    int root_status = 0;
    pid_t r = ::waitpid(trial.root, &root_status, WNOHANG);
    if (r == trial.root) {
      trial.root_reaped = true;
      exited = true;
      // The init reports the workload's status before it exits; without it, its own.
      if (!trial.read_workload_status(status)) status = root_status;
      break;
    }
    if (trial.read_workload_status(status)) {
      exited = true;  // the init follows unless the workload left processes behind (end_trial_tree waits)
      if (::waitpid(trial.root, &root_status, WNOHANG) == trial.root) trial.root_reaped = true;
      break;
    }
    double now = monotonic_seconds();
    if (tighten) deadline_mono = tighten(deadline_mono);
    if (now >= deadline_mono || (cancel && cancel->load())) break;
    // Keep the pid list fresh so that a daemon that dies later is still attributed.
    if (now >= next_scan) {
      trial.scan();
      next_scan = now + 1.0;
    }
    int wait_ms = static_cast<int>(std::min({deadline_mono - now, next_scan - now, 0.1}) * 1000) + 1;
    if (pidfd >= 0) {
      pollfd p[2] = {{pidfd, POLLIN, 0}, {trial.status_fd, POLLIN, 0}};
      ::poll(p, trial.status_fd >= 0 ? 2 : 1, wait_ms);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(wait_ms, 10)));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return exited;
}

std::vector<int> sorted(const std::set<int>& s) { return {s.begin(), s.end()}; }

// A fresh evidence folder in the trial's folder, where the run put it: whatever the
// workload left at its name (a link to a folder elsewhere, a folder of links) is
// removed, never written through, and a trial folder that now resolves elsewhere
// (replaced by a link) gets no evidence. Throws what capture_evidence records.
void evidence_folder(const fs::path& run_dir, const fs::path& rel) {
  const fs::path dir = run_dir / rel;
  const fs::path evidence = dir / "evidence";
  std::error_code ec;
  fs::remove_all(evidence, ec);  // a link is removed itself, not what it names
  if (ec) throw std::runtime_error("cannot clear " + evidence.string() + ": " + ec.message());
  if (!fs::create_directory(evidence, ec) || ec) {
    throw std::runtime_error("cannot create " + evidence.string() + (ec ? ": " + ec.message() : ""));
  }
  const fs::path real = fs::canonical(evidence, ec);
  const fs::path expected = fs::canonical(run_dir, ec) / rel / "evidence";
  if (ec || real != expected) {
    throw std::runtime_error("the trial folder " + dir.string() + " resolves to " + real.string() +
                             " (a link the workload planted?); no evidence written outside the run folder");
  }
}

// The hung trial's evidence of `procs` (a scan made once its deadline passed),
// through the capture the executor was given; a failed capture is recorded and
// warned about, never the end of the trial.
void capture_evidence(const HangCapture& capture, const RunningTrial& trial, exec_detail::TrialProcesses procs,
                      const std::string& phase_file, const fs::path& dir, const fs::path& rel, const Cell& cell,
                      int index, const TrialContext& ctx, const std::function<void(const std::string&)>& warn,
                      TrialResult& result) {
  if (trial.pid_namespace) procs.live.erase(trial.root);  // the init is ours, not the workload's
  result.evidence_dir = (rel / "evidence").string();
  try {
    evidence_folder(ctx.run_dir, rel);
    HangCaptureRequest request;
    request.pids = sorted(procs.live);
    request.dir = (dir / "evidence").string();
    request.stacks = ctx.capture_stacks && (!ctx.stack_budget || ctx.stack_budget->take(cell.id));
    if (ctx.provenance) request.provenance = *ctx.provenance;
    request.trial_env_entry = trial.trial_id_entry;
    for (const auto& p : exec_detail::read_phase_file(phase_file, [](const std::string&) {}).phases)
      request.phase_writers.push_back({p.pid, p.rank, p.host});
    result.evidence_summary = capture.capture(request);
  } catch (const std::exception& e) {
    result.evidence_summary = std::string("evidence capture failed: ") + e.what();
    warn(cell.id + " #" + std::to_string(index) + ": " + result.evidence_summary);
  }
}

// The trial's folder: unique per run and per cell by construction, so that two
// runs on one folder, or two cells whose names sanitize alike, never share (or
// rewrite) one.
struct TrialFolder {
  fs::path rel;  // under the run folder, as the store records it
  fs::path dir;
  std::string phase_file;
};

bool make_trial_folder(const Cell& cell, int index, const TrialContext& ctx, TrialFolder& folder, TrialResult& result) {
  folder.rel = fs::path("trials") / (ctx.run_id.empty() ? "norun" : sanitize_cell_id(ctx.run_id)) /
               cell_folder_name(cell.id) / std::to_string(index);
  folder.dir = fs::path(ctx.run_dir) / folder.rel;
  folder.phase_file = (folder.dir / "phases.jsonl").string();
  std::error_code ec;
  fs::remove_all(folder.dir, ec);  // a trial cut short by a killed harness left files here
  fs::create_directories(folder.dir, ec);
  if (!ec) return true;
  result.infra_error = "cannot create the trial folder " + folder.dir.string() + ": " + ec.message();
  return false;
}

// The workload's command (through its launcher) and environment: the harness's
// own, the cell's, and the trial's phase file, folder and tag.
exec_detail::SpawnRequest spawn_request(const Cell& cell, int index, const TrialFolder& folder,
                                        const std::string& trial_id) {
  const std::string dir = folder.dir.string();
  std::map<std::string, std::string> extra_env;
  for (const auto& [k, v] : cell.env) extra_env[k] = expand_trial_placeholders(v, dir, index);
  extra_env["HANGBENCH_PHASE_FILE"] = folder.phase_file;
  extra_env["HANGBENCH_TRIAL_DIR"] = dir;
  extra_env["HANGBENCH_TRIAL_ID"] = trial_id;

  exec_detail::SpawnRequest request;
  std::vector<std::string> workload_argv;
  for (const auto& a : cell.argv) workload_argv.push_back(expand_trial_placeholders(a, dir, index));
  std::vector<std::string> forwarded;
  for (const auto& [k, v] : extra_env) forwarded.push_back(k);
  request.argv = exec_detail::launch_argv(cell, workload_argv, forwarded);
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    if (!extra_env.count(entry.substr(0, entry.find('=')))) request.env.push_back(entry);
  }
  for (const auto& [k, v] : extra_env) request.env.push_back(k + "=" + v);
  request.stdout_path = (folder.dir / "stdout.log").string();
  request.stderr_path = (folder.dir / "stderr.log").string();
  return request;
}

// What the harness follows of a started trial: its root, and in a namespace the
// workload's host pid and the start of the pid map.
void follow_spawned(RunningTrial& trial, const exec_detail::SpawnResult& spawned, const std::string& trial_id,
                    const TrialCgroup& cgroup) {
  trial.root = spawned.pid;
  trial.trial_id_entry = "HANGBENCH_TRIAL_ID=" + trial_id;
  trial.cgroup = spawned.in_cgroup ? &cgroup : nullptr;
  exec_detail::remember(trial.known, spawned.pid);
  trial.pid_namespace = spawned.pid_namespace;
  trial.status_fd = spawned.status_fd;
  if (!spawned.pid_namespace) return;
  trial.ns_to_host[1] = spawned.pid;
  if (spawned.workload_pid > 0) {
    exec_detail::remember(trial.known, spawned.workload_pid);
    trial.workload = spawned.workload_pid;
    // The init's first child: its own pid there starts the namespace's pid block.
    trial.ns_to_host[spawned.workload_namespace_pid > 0 ? spawned.workload_namespace_pid : 2] = spawned.workload_pid;
  }
}

struct TrialWait {
  bool exited = false;
  bool cancelled = false;
  int status = 0;
  std::string deadline_phase;  // the phase whose timeout ended the wait, if one did
};

// Waits for the trial's end, its deadline (the cell's timeout from the start, or
// a phase timeout from a phase the workload reported), or cancellation.
TrialWait wait_for_trial(RunningTrial& trial, const Cell& cell, const TrialContext& ctx, const std::string& phase_file,
                         double start_mono, double started_at) {
  TrialWait wait;
  double deadline = start_mono + cell.timeout_s;
  exec_detail::PhaseFollower follower(phase_file, started_at);
  std::vector<PhaseEvent> seen;
  std::function<double(double)> tighten;
  int live_version = -1;  // the version of ctx.live_timeouts last applied
  if (!cell.phase_timeouts_s.empty()) {
    tighten = [&](double current) {
      auto fresh = follower.poll(unix_now());
      const int version = ctx.live_timeouts ? ctx.live_timeouts->version() : 0;
      if (fresh.empty() && version == live_version) return current;
      live_version = version;
      seen.insert(seen.end(), fresh.begin(), fresh.end());
      std::string which;
      const auto timeouts =
          ctx.live_timeouts ? ctx.live_timeouts->applied_to(cell.phase_timeouts_s) : cell.phase_timeouts_s;
      double unix_deadline = exec_detail::phase_deadline(seen, timeouts, &which);
      double mono = start_mono + (unix_deadline - started_at);
      if (mono < current) {
        wait.deadline_phase = which;
        if (ctx.on_deadline_moved) ctx.on_deadline_moved(mono - monotonic_seconds());
        return mono;
      }
      return current;
    };
  }
  wait.exited = wait_for_root(trial, deadline, tighten, ctx.cancel, wait.status);
  wait.cancelled = !wait.exited && ctx.cancel && ctx.cancel->load() && monotonic_seconds() < deadline;
  return wait;
}

// PASSED, FAILED or CRASHED from the wait status; interrupted; or HANG.
void classify_end(const TrialWait& wait, TrialResult& result) {
  if (wait.exited) {
    if (WIFEXITED(wait.status)) {
      result.exit_code = WEXITSTATUS(wait.status);
      result.outcome = result.exit_code == 0 ? Outcome::Passed : Outcome::Failed;
    } else if (WIFSIGNALED(wait.status)) {
      result.signal = WTERMSIG(wait.status);
      result.outcome = Outcome::Crashed;
    }
  } else if (wait.cancelled) {
    result.infra_error = kInterruptedError;
  } else {
    result.outcome = Outcome::Hang;
  }
}

// Ends whatever of the trial still lives and records how (the harness's cleanup
// step), what it ended besides the workload, and what survived.
void end_and_record_cleanup(RunningTrial& trial, const Cell& cell, int index, double grace_s,
                            const std::function<void(const std::string&)>& warn, TrialResult& result) {
  std::set<int> ended;
  CleanupStep step = CleanupStep::None;
  result.survivors = end_trial_tree(trial, grace_s, ended, step);
  result.harness.cleanup = step;
  ended.erase(trial.root);
  ended.erase(trial.workload);  // in a namespace the root is its init; the workload is no leftover either
  result.harness.leftover_pids = sorted(ended);
  if (!result.survivors.empty()) {
    warn(cell.id + " #" + std::to_string(index) + ": " + std::to_string(result.survivors.size()) +
         " process(es) of the trial survived cleanup");
  }
}

// The phase lines and metrics the workload wrote; in a namespace their pids
// (phase lines' "pid", metrics named "pid" or "*_pid") become host pids.
void record_phases(const RunningTrial& trial, const std::string& phase_file, const TrialContext& ctx,
                   TrialResult& result) {
  auto log = exec_detail::read_phase_file(phase_file, ctx.warn, result.started_at, unix_now());
  result.phases = std::move(log.phases);
  if (trial.pid_namespace) {
    std::set<int> unmapped;
    auto to_host = [&](int pid) {
      if (pid <= 0) return pid;
      if (auto it = trial.ns_to_host.find(pid); it != trial.ns_to_host.end()) return it->second;
      unmapped.insert(pid);
      return pid;
    };
    for (auto& p : result.phases) p.pid = to_host(p.pid);
    for (auto& [key, value] : log.metrics.items()) {
      if (key.size() < 3 || key.compare(key.size() - 3, 3, "pid") != 0) continue;
      if (value.is_number_integer() || (value.is_number() && value.get<double>() == std::floor(value.get<double>()))) {
        value = to_host(static_cast<int>(value.get<double>()));
      } else if (value.is_array()) {
        for (auto& v : value)
          if (v.is_number()) v = to_host(static_cast<int>(v.get<double>()));
      }
    }
    result.harness.pid_namespace = true;
    result.harness.unmapped_namespace_pids = sorted(unmapped);
  }
  for (auto& [k, v] : log.metrics.items()) result.metrics[k] = v;
}

// A workload that exits 3 with its infra_error metric says it could not run here
// (workloads/common/README.md): no GPU, a library that does not load. Such a trial is
// no evidence either way, so it is INFRA, left out of n, not a FAILED trial that did
// not hang. Exit 3 without the metric is an ordinary failure of a command.
void mark_workload_infra(TrialResult& result) {
  if (result.outcome != Outcome::Failed || result.exit_code != 3) return;
  const std::string why = workload_infra_error(result);
  if (why.empty()) return;
  result.outcome = Outcome::Infra;
  result.infra_error = "the workload could not run here (exit 3): " + why;
}

// Where a hung trial stopped: its last phase, and the deadline that called it
// (the harness's hang deadline: a phase timeout, lowered by a learned one if so).
void record_hang_point(const Cell& cell, const TrialContext& ctx, const std::string& deadline_phase,
                       TrialResult& result) {
  result.hung_phase = exec_detail::last_phase_before(result.phases, result.started_at + result.wall_s);
  if (deadline_phase.empty()) return;
  HangDeadline deadline{deadline_phase, cell.phase_timeouts_s.at(deadline_phase), ""};
  if (auto lowered = ctx.live_timeouts ? ctx.live_timeouts->get(deadline_phase) : std::nullopt;
      lowered && lowered->seconds < deadline.seconds) {
    deadline.seconds = lowered->seconds;
    deadline.learned = lowered->why;
  }
  result.harness.hang_deadline = deadline;
}

}  // namespace

ProcessExecutor::ProcessExecutor(std::shared_ptr<const HangCapture> capture) : capture_(std::move(capture)) {
  // The only process-global state: orphans of trials reparent to us, not to init,
  // so that they stay visible and reapable.
  static std::once_flag subreaper_once;
  std::call_once(subreaper_once, [] { ::prctl(PR_SET_CHILD_SUBREAPER, 1); });
  cgroup_root_ = exec_detail::find_writable_cgroup_root();
  pid_namespace_ = exec_detail::pid_namespaces_available();
  watcher_ = std::make_unique<exec_detail::TrialWatcher>();
}

ProcessExecutor::~ProcessExecutor() = default;

int ProcessExecutor::watcher_pid() const { return watcher_->ok() ? watcher_->pid() : -1; }

TrialResult ProcessExecutor::run(const Cell& cell, int index, const TrialContext& ctx) {
  TrialResult result;
  result.cell_id = cell.id;
  result.index = index;
  result.started_at = unix_now();
  auto warn = [&](const std::string& m) {
    if (ctx.warn) ctx.warn(m);
  };
  TrialFolder folder;
  if (!make_trial_folder(cell, index, ctx, folder, result)) return result;
  const std::string trial_id = ctx.trial_id.empty() ? make_trial_id() : ctx.trial_id;
  exec_detail::SpawnRequest request = spawn_request(cell, index, folder, trial_id);

  // Destroyed after the cgroup below: the watcher forgets the trial only once it is gone.
  struct Untrack {
    exec_detail::TrialWatcher& watcher;
    const std::string& id;
    bool armed = false;
    ~Untrack() {
      if (armed) watcher.untrack(id);
    }
  } untrack{*watcher_, trial_id};
  // In a namespace the init makes and joins the group itself, so that no moment
  // exists when a group stands that nothing alive would remove.
  TrialCgroup cgroup(cgroup_root_, trial_id, !pid_namespace_);
  const std::string& group = pid_namespace_ ? cgroup.planned() : cgroup.dir();
  if (!group.empty()) {  // the watcher removes the group even if we die before the fork
    watcher_->track(0, trial_id, group);
    untrack.armed = true;
  }
  request.cgroup = &cgroup;
  request.pid_namespace = pid_namespace_;
  request.before_start = [&](int pid) {
    watcher_->track(pid, trial_id, group);
    untrack.armed = true;
  };

  const double start_mono = monotonic_seconds();
  auto spawned = exec_detail::spawn_trial_process(request);
  if (spawned.pid_namespace) cgroup.adopt();  // removed at the end (or absent: nothing to remove)
  if (spawned.pid <= 0) {
    result.infra_error = spawned.error;
    result.wall_s = monotonic_seconds() - start_mono;
    return result;
  }
  RunningTrial trial;
  follow_spawned(trial, spawned, trial_id, cgroup);

  const TrialWait wait = wait_for_trial(trial, cell, ctx, folder.phase_file, start_mono, result.started_at);
  classify_end(wait, result);
  // In a namespace, map the pids of what is still alive while it is (before the
  // wall time, as always); a hung trial's evidence is taken of that same scan.
  std::optional<exec_detail::TrialProcesses> alive;
  if (trial.pid_namespace) alive = trial.scan();
  result.wall_s = monotonic_seconds() - start_mono;
  if (result.outcome == Outcome::Hang) {
    if (ctx.on_deadline) ctx.on_deadline();
    // Evidence first, while every process of the trial still exists.
    if (capture_) {
      capture_evidence(*capture_, trial, alive ? std::move(*alive) : trial.scan(), folder.phase_file, folder.dir,
                       folder.rel, cell, index, ctx, warn, result);
    }
  }
  end_and_record_cleanup(trial, cell, index, ctx.grace_s, warn, result);
  record_phases(trial, folder.phase_file, ctx, result);
  mark_workload_infra(result);
  if (result.outcome == Outcome::Hang) record_hang_point(cell, ctx, wait.deadline_phase, result);
  result.harness.cgroup = spawned.in_cgroup;
  return result;
}

}  // namespace hangbench
