// `hangbench watch`: the job started, attached to or found by its Slurm id; the
// watcher's pieces put together; the exit code (a launched job's, passed through).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "hangbench/errors.hpp"
#include "hangbench/exit_codes.hpp"
#include "hangbench/proc.hpp"
#include "hangbench/slurm_diagnose.hpp"
#include "hangbench/watch.hpp"

namespace hangbench::watch {

namespace {

constexpr double kGraceS = 5;  // SIGTERM's grace before SIGKILL, as run's cleanup

class TreeControl : public JobControl {
 public:
  TreeControl(std::string proc_root, JobReader& reader, int root, int relay, bool launched)
      : proc_root_(std::move(proc_root)), reader_(reader), root_(root), relay_(relay), launched_(launched) {}
  void end_tree() override {
    if (!end_process_tree(proc_root_, root_, reader_.pids(), kGraceS, relay_))
      std::cerr << "hangbench watch: processes of the job survived SIGKILL (uninterruptible sleep?)\n";
  }
  void signal_launcher(int sig) override { ::kill(root_, sig); }
  std::optional<int> wait_status() override {
    if (!launched_) return std::nullopt;
    int status = 0;
    pid_t r;
    do r = ::waitpid(root_, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r != root_) return std::nullopt;
    return status;
  }

 private:
  std::string proc_root_;
  JobReader& reader_;
  int root_, relay_;
  bool launched_;
};

// A Slurm job is ended and signalled through Slurm, on every node.
class SlurmControl : public JobControl {
 public:
  explicit SlurmControl(std::string job) : job_(std::move(job)) {}
  void end_tree() override { run("scancel " + job_); }
  void signal_launcher(int sig) override { run("scancel --signal=" + std::to_string(sig) + " " + job_); }
  std::optional<int> wait_status() override { return std::nullopt; }

 private:
  static void run(const std::string& command) {
    if (std::system(command.c_str()) != 0) std::cerr << "hangbench watch: `" << command << "` failed\n";
  }
  std::string job_;
};

void check_request(const WatchRequest& r) {
  const int ways = !r.command.empty() + (r.pid > 0) + !r.slurm_job.empty();
  if (ways != 1) throw UsageError("watch needs exactly one of: -- COMMAND..., --pid PID, --slurm-job JOBID");
  if (!r.slurm_job.empty() && !diagnose::slurm::valid_job_id(r.slurm_job))
    throw UsageError("--slurm-job: not a Slurm job id: '" + r.slurm_job + "'");
  if (!r.slurm_step.empty() && r.slurm_job.empty()) throw UsageError("--step needs --slurm-job");
  if (r.options.idle_s <= 0) throw UsageError("--idle must be positive");
  if (r.pid > 0 && !proc::read_process("/proc", r.pid))
    throw UsageError("--pid " + std::to_string(r.pid) + ": no such process");
}

// The job's own watchdog may end it before watch captures: say so when the
// environment names a shorter PyTorch timeout than --idle (docs/watch.md).
void warn_about_watchdogs(double idle_s) {
  for (const char* name : {"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"}) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    const double seconds = std::atof(v);
    if (seconds > 0 && seconds <= idle_s)
      std::cerr << "hangbench watch: " << name << "=" << v << " is not above --idle " << idle_s
                << ": the job's own watchdog may end it before its evidence is captured (docs/watch.md)\n";
  }
}

std::string job_name(const WatchRequest& r) {
  if (!r.options.job.empty()) return r.options.job;
  if (!r.slurm_job.empty()) return "slurm-" + r.slurm_job;
  if (r.pid > 0) return "pid-" + std::to_string(r.pid);
  return std::filesystem::path(r.command.front()).filename().string();
}

// The wait status of a launched job as this command's result: its exit code, or
// its signal (the CLI dies of the same signal).
WatchResult pass_through(int status) {
  WatchResult res;
  if (WIFEXITED(status)) {
    res.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res.reraise_signal = WTERMSIG(status);
    res.exit_code = 128 + WTERMSIG(status);
  }
  return res;
}

}  // namespace

WatchResult run_watch(const WatchRequest& request) {
  if (request.slurm_node)
    return {run_slurm_node(request.slurm_job, request.slurm_step, request.options.poll_s, request.options.idle_s), 0};
  check_request(request);
  WatchOptions options = request.options;
  options.job = job_name(request);
  if (request.command.empty() && options.on_hang != OnHang::Kill) options.exit_on_hang = true;
  warn_about_watchdogs(options.idle_s);

  JobScope scope;
  Launch launch;
  if (!request.command.empty()) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // orphans of the job stay findable, and endable
    const char* tmp = std::getenv("TMPDIR");
    launch = launch_job(request.command, options.on_hang == OnHang::Kill, tmp && *tmp ? tmp : "/tmp");
    if (!launch.error.empty()) throw InfraError(launch.error);
    scope.root_pid = launch.pid;
    scope.phase_file = launch.phase_file;
    scope.output_counter = launch.output_counter;
  } else if (request.pid > 0) {
    scope.root_pid = request.pid;  // its phase file: the one its environment names
  } else {
    scope.slurm_job = request.slurm_job;
    scope.slurm_step = request.slurm_step;
  }
  if (options.signals.automatic || options.signals.fr)
    scope.fr_every_s = flight_recorder_period(options.idle_s, options.poll_s);
  SystemClock clock(launch.pid > 0 ? launch.pid : 0);
  auto reader = request.slurm_job.empty() ? make_proc_reader(scope)
                                          : make_slurm_reader(request.slurm_job, request.slurm_step, options.poll_s,
                                                              options.idle_s, request.self_exe);
  CaptureOptions co;
  co.dir = options.evidence_dir;
  co.stacks = request.stacks;
  co.stack_timeout_s = request.stack_timeout_s;
  co.slurm_job = request.slurm_job;
  co.slurm_step = request.slurm_step;
  // An srun launched inside an allocation: the evidence of every node, as --slurm-job's.
  if (const char* job = std::getenv("SLURM_JOB_ID");
      job && *job && !request.command.empty() && std::filesystem::path(request.command.front()).filename() == "srun")
    co.slurm_job = job;
  co.self_exe = request.self_exe;
  auto capture = make_diagnose_capture(co);
  std::unique_ptr<JobControl> control;
  if (!request.slurm_job.empty())
    control = std::make_unique<SlurmControl>(request.slurm_job);
  else
    control = std::make_unique<TreeControl>("/proc", *reader, scope.root_pid, launch.relay_pid, launch.pid > 0);

  Watcher watcher(options, clock, *reader, *capture, *control);
  const WatchOutcome outcome = watcher.run();
  const bool made_phase_file = launch.pid > 0 && !std::getenv("HANGBENCH_PHASE_FILE");
  std::error_code ignored;  // a phase file watch made is its own to remove; one already gone is fine
  if (made_phase_file) std::filesystem::remove(launch.phase_file, ignored);

  if (outcome.ended_by_watch) return {exit_code::kHung, 0};
  if (outcome.wait_status) return pass_through(*outcome.wait_status);
  return {outcome.hung ? exit_code::kHung : exit_code::kOk, 0};
}

}  // namespace hangbench::watch
