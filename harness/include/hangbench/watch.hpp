// `hangbench watch`: a long training job watched for lack of progress, not for a
// deadline. The job is started (`-- COMMAND`), attached to (`--pid`) or found by
// its Slurm job id; every poll reads a few cheap counters (phase lines, output
// bytes, each rank's CPU time, GPU activity through NVML, and less often each
// rank's Flight Recorder's last completed collective); when none of the
// signals the rule reads has advanced for `idle_s`, the hang's evidence is taken
// while it is alive (the diagnose library), announced (an event line, a
// Prometheus textfile) and, by option, the job is ended. docs/watch.md.
//
// The clock, the job's readers, the capture and the job's control are interfaces,
// so that the detection rule and the loop run in tests with a fake clock.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hangbench::watch {

// ---- The signals and the rule ----------------------------------------------------
// Which counters count as progress (--signals). `automatic`: once the job has
// written a phase line or its Flight Recorder has answered, those and its output;
// before, its output, CPU time and GPU activity (a job that speaks the phase
// protocol or records its collectives says itself when it progresses; a
// busy-polling NCCL proxy would otherwise look busy forever).
struct SignalSet {
  bool automatic = true;
  bool phase = false, output = false, cpu = false, gpu = false, fr = false;
};
// "auto" or a comma-separated list of phase, fr, output, cpu, gpu. Throws
// std::invalid_argument naming the word it does not know.
SignalSet parse_signals(const std::string& text);
std::string to_string(const SignalSet& s);

// One cheap reading of the job at one instant.
struct Sample {
  double t = 0;                  // the watch clock (monotonic seconds)
  bool alive = true;             // some process of the job is still there
  long long phase_lines = -1;    // phase lines completed so far; -1: no phase file to read
  long long output_bytes = -1;   // bytes the job wrote to its stdout and stderr; -1: unknown
  std::map<int, double> cpu_s;   // each rank's CPU time (user + system), by pid
  std::map<int, int> ranks;      // pid -> rank (-1 when the launcher named none)
  std::optional<bool> gpu_busy;  // a process of the job used the GPU since the last sample; nullopt: no NVML
  // Each Flight Recorder rank's last completed collective (collective_seq_id), by
  // pid, as its newest dump says; only ranks that answered.
  std::map<int, long long> fr_completed;
  // Ranks whose environment turns the Flight Recorder on (a buffer and a dump pipe),
  // whether or not they answered: a rank that holds the GIL in a native call never
  // dumps (PyTorch takes its Python frames under the GIL), so an answer may never come.
  int fr_configured = 0;
  std::string last_phase;  // the newest phase line's name, "" when none
};

// The job's output as progress: every complete line but PyTorch's log of a Flight
// Recorder dump, which watch's own `fr` requests provoke (output_progress.cpp).
bool is_flight_recorder_dump_log(std::string_view line);
class OutputProgress {
 public:
  // The bytes of the lines this chunk completes that count as progress.
  unsigned long long add(std::string_view chunk);

 private:
  static constexpr std::size_t kLongestLine = 4096;
  std::string line_;
};

// A rank counts as busy when its CPU time grew by at least this share of the wall
// time between two samples (a rank asleep in a join accrues almost none).
inline constexpr double kCpuBusyShare = 0.05;

// The detection rule, fed samples in time order: when each signal last advanced,
// and whether the signals the rule reads have all been still for idle_s.
class ProgressTracker {
 public:
  ProgressTracker(SignalSet signals, double idle_s);
  void observe(const Sample& s);
  // The signals the rule reads now ("phase", "output", ...).
  std::vector<std::string> rule_signals() const;
  // The newest advance of a signal the rule reads (the first sample's time before any).
  double last_progress() const;
  double seconds_since_progress(double now) const { return now - last_progress(); }
  bool hung(double now) const { return started_ && seconds_since_progress(now) >= idle_s_; }
  // When each signal last advanced (watch clock), for the event and the evidence.
  std::map<std::string, double> last_advance() const { return last_; }
  double idle_s() const { return idle_s_; }

 private:
  bool advanced(const std::string& signal, double t);
  SignalSet signals_;
  double idle_s_;
  bool started_ = false;
  bool phase_seen_ = false;
  bool fr_seen_ = false;
  bool fr_expected_ = false;  // some rank has the Flight Recorder on, answered or not
  double first_t_ = 0;
  std::optional<Sample> previous_;
  std::map<std::string, double> last_;
};

// ---- What the loop is given (real ones below, fakes in tests) --------------------
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now() = 0;                // monotonic seconds
  virtual void sleep_until(double t) = 0;  // returns early when the job ends (a launched job's child)
  virtual double unix_now() = 0;           // for the event's time
};

class JobReader {
 public:
  virtual ~JobReader() = default;
  virtual Sample read(double now) = 0;
  virtual std::vector<int> pids() = 0;  // the job's processes now, launcher first
  virtual int root_pid() = 0;           // the launcher (or the attached pid); 0 for a Slurm job
};

// The evidence of a hang: the diagnosis of every rank, written where asked.
struct HangEvidence {
  std::string shape = "no-progress";  // the first hang finding's rule, or "no-progress"
  std::string catalog_id;             // its catalog entry, "" when none
  std::string headline;               // the diagnosis's headline, one line
  std::vector<int> ranks;             // the ranks involved (their launcher's numbers), sorted
  std::vector<int> pids;
  std::vector<std::string> files;  // what was written under the evidence folder
  std::string error;               // the diagnosis could not be made, in words
  double seconds = 0;              // how long the capture took
};

class Capture {
 public:
  virtual ~Capture() = default;
  virtual HangEvidence capture(const std::vector<int>& pids, const nlohmann::json& watch_facts) = 0;
};

class JobControl {
 public:
  virtual ~JobControl() = default;
  virtual void end_tree() = 0;  // --kill-after: every process of the job, nothing survives
  virtual void signal_launcher(int sig) = 0;
  // The job's exit status once a launched job has ended (a wait status), nullopt otherwise.
  virtual std::optional<int> wait_status() = 0;
};

// ---- The loop -----------------------------------------------------------------------
enum class OnHang { Nothing, Kill, Signal };

struct WatchOptions {
  double idle_s = 300;
  double poll_s = 1;  // detection within idle + poll + a capture's start
  SignalSet signals;
  std::string job;  // the job's name in the event and the metrics
  std::string evidence_dir = "hangbench-watch-evidence";
  std::string events_path;  // "" = stdout
  std::string prometheus_path;
  OnHang on_hang = OnHang::Nothing;
  double kill_after_s = 0;    // after the evidence, seconds until the tree is ended
  int signal = 0;             // --signal: sent to the launcher after the evidence
  bool exit_on_hang = false;  // attached: stop watching once the hang is captured and acted on
};

struct WatchOutcome {
  bool hung = false;                   // a hang was flagged and its evidence captured
  bool ended_by_watch = false;         // --kill-after ended the job
  std::optional<int> wait_status;      // a launched job's own end
  std::vector<nlohmann::json> events;  // what was announced, in order
};

// One watch of one job, its steps small and named (docs/watch.md).
class Watcher {
 public:
  Watcher(WatchOptions options, Clock& clock, JobReader& reader, Capture& capture, JobControl& control);
  WatchOutcome run();
  // One poll: read, track, and on a hang capture, announce and act. False once the job has ended.
  bool step();
  const ProgressTracker& tracker() const { return tracker_; }
  const WatchOutcome& outcome() const { return outcome_; }

 private:
  Sample read_signals();
  void note_progress(const Sample& s);
  bool hang_detected(double now);
  void capture_evidence(const Sample& s, double now);
  void announce(const nlohmann::json& event);
  void write_prometheus(const HangEvidence* evidence, double now);
  void act_on_hang();
  void finish_actions(double now);
  void wait_for_next_poll(double from);

  WatchOptions options_;
  Clock& clock_;
  JobReader& reader_;
  Capture& capture_;
  JobControl& control_;
  ProgressTracker tracker_;
  WatchOutcome outcome_;
  bool hang_open_ = false;  // flagged and not progressed since
  double kill_at_ = -1;     // watch clock time of the tree's end, -1 none pending
  bool done_ = false;
};

// The event line of a hang (also used by tests): job, shape, catalog_id, ranks, ...
nlohmann::json hang_event(const WatchOptions& o, const HangEvidence& e, const ProgressTracker& t, double now,
                          double unix_now);
// The Prometheus textfile-collector file's text.
std::string prometheus_text(const std::string& job, const HangEvidence* evidence, double seconds_since_progress);

// ---- The real readers ---------------------------------------------------------------
// `forward_to_group` > 0 (a launched job): SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and
// SIGUSR2 that reach the watcher go on to the job's process group, and a sleep ends
// when a child ends (SIGCHLD).
class SystemClock : public Clock {
 public:
  explicit SystemClock(int forward_to_group = 0);
  double now() override;
  void sleep_until(double t) override;
  double unix_now() override;

 private:
  int group_ = 0;
};

// Each rank's CPU time from /proc/PID/stat, in seconds; nullopt when gone.
std::optional<double> parse_cpu_seconds(const std::string& stat_line, long ticks_per_second);

// NVML, loaded with dlopen (absent on CPU machines: available() is false).
class Nvml {
 public:
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool available() const { return handle_ != nullptr; }
  // Whether any of `pids` ran on a GPU since the previous call; nullopt without NVML.
  std::optional<bool> any_busy(const std::vector<int>& pids);

 private:
  void* handle_ = nullptr;
  struct Api;
  std::unique_ptr<Api> api_;
  unsigned long long last_seen_us_ = 0;
};

// Which processes are the job: a tree under a root (launch, --pid), or the
// processes of a Slurm job on this node.
struct JobScope {
  int root_pid = 0;       // launch and --pid
  std::string slurm_job;  // --slurm-job
  std::string slurm_step;
  std::string proc_root = "/proc";
  std::string phase_file;  // "" = none
  // Where a launched job's output is counted (a relay's shared counter); null:
  // the sizes of the root's stdout and stderr when they are regular files.
  const unsigned long long* output_counter = nullptr;
  double rescan_s = 5;  // how often the process tree is listed again
  // How often each rank's Flight Recorder is asked for a dump (in a thread of its
  // own, never in the poll); 0: never.
  double fr_every_s = 0;
  bool gpu = true;  // load NVML
};
std::unique_ptr<JobReader> make_proc_reader(const JobScope& scope);

// ---- A Slurm job: every node at once ----------------------------------------------
// One line a poll from each node's `watch --slurm-node` (srun interleaves lines, never within one).
std::string encode_sample(const std::string& host, const Sample& s);
bool decode_sample(const std::string& line, std::string& host, Sample& s);
// The newest sample of each node as one: counters added, each node's pids apart.
Sample merge_node_samples(const std::map<std::string, Sample>& nodes, double now);
// The job side: `srun --overlap` of `watch --slurm-node` on every node of the running job.
// Throws UsageError when the job is not running.
std::unique_ptr<JobReader> make_slurm_reader(const std::string& job, const std::string& step, double poll_s,
                                             double idle_s, const std::string& self_exe);
// The node side (hidden `watch --slurm-node JOBID`): a sample line a poll until the
// job has no process left here; returns the exit code.
int run_slurm_node(const std::string& job, const std::string& step, double poll_s, double idle_s);
// How often the Flight Recorder is asked: a tenth of --idle, at least a poll, at most 30 s.
double flight_recorder_period(double idle_s, double poll_s);

// The evidence through the diagnose library: text, JSON, Markdown under `dir`.
// `slurm_job`: every node's, through diagnose --slurm-job.
struct CaptureOptions {
  std::string dir;
  bool stacks = true;
  double stack_timeout_s = 20;
  std::string slurm_job, slurm_step;
  std::string self_exe;  // this hangbench (the Slurm nodes run it)
};
std::unique_ptr<Capture> make_diagnose_capture(const CaptureOptions& options);

// ---- Launching and ending ------------------------------------------------------------
// A launched job: its own process group, its output relayed by a small process of
// its own (so that a killed watcher leaves a job that still has somewhere to write),
// HANGBENCH_PHASE_FILE set when the environment has none.
struct Launch {
  int pid = -1;
  int relay_pid = -1;  // the output relay; it ends by itself when the job's last writer closes
  std::string phase_file;
  const unsigned long long* output_counter = nullptr;  // bytes relayed so far
  std::string error;
};
// `owned`: the job dies with the watcher (PR_SET_PDEATHSIG), for --kill-after.
Launch launch_job(const std::vector<std::string>& argv, bool owned, const std::string& phase_dir);

// SIGTERM and SIGCONT to every process of the tree, a grace, then SIGKILL to
// whatever is left (listed again each round); true when nothing is left.
// `spare`: a process never ended (the output relay, which ends on its own).
bool end_process_tree(const std::string& proc_root, int root_pid, const std::vector<int>& known, double grace_s,
                      int spare = 0);

// The hung, evidence-captured exit code and the rest: docs/watch.md.
struct WatchRequest {
  std::vector<std::string> command;  // after --
  int pid = 0;                       // --pid
  std::string slurm_job, slurm_step;
  bool slurm_node = false;  // the hidden node side of --slurm-job (slurm_job names the job)
  WatchOptions options;
  bool stacks = true;
  double stack_timeout_s = 20;
  std::string self_exe;
};
// Runs the whole command; returns its exit code (a launched job's, passed through:
// a job killed by a signal is re-raised on the watcher by the CLI through `reraise`).
struct WatchResult {
  int exit_code = 0;
  int reraise_signal = 0;  // the launched job died of this signal: the CLI dies of it too
};
WatchResult run_watch(const WatchRequest& request);

}  // namespace hangbench::watch
