// `hangbench watch [options] -- COMMAND... | --pid PID | --slurm-job JOBID`
// A long job watched for lack of progress; on a hang, its evidence while alive.
#include "hangbench/watch.hpp"

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/guarded.hpp"
#include "cli/help.hpp"
#include "hangbench/errors.hpp"
#include "hangbench/exit_codes.hpp"

namespace hangbench::cli {

namespace {

struct WatchArgs {
  std::vector<std::string> command;
  int pid = 0;
  std::string slurm_job, step;
  std::string slurm_node;  // hidden: this node's samples for --slurm-job
  double idle_s = 300;
  double poll_s = 1;
  std::string signals = "auto";
  std::string evidence = "hangbench-watch-evidence";
  std::string events, prometheus, job;
  double kill_after = -1;
  std::string signal;
  bool no_stacks = false;
  double timeout_s = 20;
};

// "TERM", "SIGTERM", "15" -> 15.
int signal_number(const std::string& text) {
  std::string name = text;
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) {
    const int n = std::stoi(name);
    if (n > 0 && n < NSIG) return n;
  }
  for (int n = 1; n < NSIG; ++n) {
    const char* abbrev = sigabbrev_np(n);
    if (abbrev && name == abbrev) return n;
  }
  throw UsageError("--signal: not a signal: '" + text + "' (e.g. TERM, USR1, 10)");
}

// A launched job that died of a signal: the watcher dies of the same one (no core of its own).
[[noreturn]] void die_of(int sig) {
  rlimit none{0, 0};
  ::setrlimit(RLIMIT_CORE, &none);
  ::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
  std::_Exit(128 + sig);
}

int run_watch_command(const WatchArgs& args) {
  watch::WatchRequest r;
  r.command = args.command;
  r.pid = args.pid;
  r.slurm_job = args.slurm_node.empty() ? args.slurm_job : args.slurm_node;
  r.slurm_node = !args.slurm_node.empty();
  r.slurm_step = args.step;
  r.stacks = !args.no_stacks;
  r.stack_timeout_s = args.timeout_s;
  std::error_code ec;
  r.self_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  auto& o = r.options;
  o.idle_s = args.idle_s;
  o.poll_s = args.poll_s;
  o.signals = watch::parse_signals(args.signals);  // std::invalid_argument: exit 2
  o.job = args.job;
  o.evidence_dir = args.evidence;
  o.events_path = args.events;
  o.prometheus_path = args.prometheus;
  if (args.kill_after >= 0 && !args.signal.empty()) throw UsageError("--kill-after and --signal: choose one");
  if (args.kill_after >= 0) {
    o.on_hang = watch::OnHang::Kill;
    o.kill_after_s = args.kill_after;
  } else if (!args.signal.empty()) {
    o.on_hang = watch::OnHang::Signal;
    o.signal = signal_number(args.signal);
  }
  const watch::WatchResult result = watch::run_watch(r);
  if (result.reraise_signal > 0) die_of(result.reraise_signal);
  return result.exit_code;
}

}  // namespace

void add_watch_command(CLI::App& app, int& rc) {
  auto args = std::make_shared<WatchArgs>();
  auto* sub =
      app.add_subcommand("watch", "Watch a long job for lack of progress; on a hang, its evidence while it is alive");
  sub->add_option("command", args->command, "the job to start and watch (after --), its exit code passed through");
  sub->add_option("--pid", args->pid, "attach to this running job (it and its descendants)");
  sub->add_option("--slurm-job", args->slurm_job,
                  "every node of this running Slurm job (srun --overlap), evidence from every node");
  sub->add_option("--step", args->step, "with --slurm-job: only this job step's processes");
  sub->add_option("--slurm-node", args->slurm_node, "(internal) this node's samples for --slurm-job")->group("");
  sub->add_option("--idle", args->idle_s, "seconds without progress that make a hang (default 300)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--signals", args->signals,
                  "what counts as progress: auto, or a list of phase,fr,output,cpu,gpu (docs/watch.md)");
  sub->add_option("--poll", args->poll_s, "seconds between two reads of the signals (default 1)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--evidence", args->evidence, "folder for the evidence of a hang (default hangbench-watch-evidence)");
  sub->add_option("--events", args->events, "append the event lines to this file instead of stdout");
  sub->add_option("--prometheus", args->prometheus, "a textfile-collector file: hangbench_hang{job,shape,catalog_id}");
  sub->add_option("--job", args->job, "the job's name in events and metrics (default: the command, pid or Slurm id)");
  sub->add_option("--kill-after", args->kill_after,
                  "after the evidence, end the job's whole tree once it has made no progress for S more seconds")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--signal", args->signal, "after the evidence, send this signal to the launcher (TERM, USR1, ...)");
  sub->add_flag("--no-stacks", args->no_stacks, "evidence without native stacks and Python frames (no ptrace)");
  sub->add_option("--timeout", args->timeout_s, "bound on the stacks of all processes together, seconds")
      ->check(CLI::PositiveNumber);
  set_help(
      sub,
      {{{"hangbench watch -- torchrun --nproc-per-node 8 train.py", "start the job and watch it"},
        {"hangbench watch --idle 120 --kill-after 30 -- srun python train.py",
         "on a hang: evidence, then the whole job ended 30 s later"},
        {"hangbench watch --pid 4242 --events hangs.jsonl --prometheus /var/lib/node_exporter/hb.prom",
         "attach to a running job; events to a file, metrics for Prometheus"},
        {"hangbench watch --slurm-job 4711", "every node of a running Slurm job, evidence from every node"}},
       {
           {0,
            "--pid, --slurm-job: the job ended without a hang (a launched job: its own code or signal, passed "
            "through)"},
           {2, "usage error (no such pid, bad --signals)"},
           {3, "the command could not be started"},
           {124, "hung, evidence captured (--pid and --slurm-job once captured; a launched job ended by --kill-after)"},
       },
       "docs/watch.md"});
  sub->callback([args, &rc] { rc = guarded("watch", [&] { return run_watch_command(*args); }); });
}

}  // namespace hangbench::cli
