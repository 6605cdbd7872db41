// The job's signals read from /proc and the phase file: cheap reads only (one stat
// file per rank per poll; the process tree listed again every few seconds).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "exec/phase_reader.hpp"
#include "hangbench/clock.hpp"
#include "hangbench/flight_recorder.hpp"
#include "hangbench/proc.hpp"
#include "hangbench/slurm_diagnose.hpp"
#include "hangbench/watch.hpp"

namespace hangbench::watch {

std::optional<double> parse_cpu_seconds(const std::string& stat_line, long ticks_per_second) {
  const auto close = stat_line.rfind(')');
  if (close == std::string::npos || ticks_per_second <= 0) return std::nullopt;
  std::istringstream in(stat_line.substr(close + 1));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // Fields after the comm: state (3) ... utime (14), stime (15).
  for (int n = 3; n <= 15 && (in >> field); ++n) {
    if (n == 14) utime = std::stoull(field);
    if (n == 15) stime = std::stoull(field);
  }
  if (!in) return std::nullopt;
  return static_cast<double>(utime + stime) / static_cast<double>(ticks_per_second);
}

namespace {

// The rank a launcher gave a process (as diagnose reads it), -1 when none.
int rank_of(const std::string& proc_root, int pid) {
  auto text = proc::read_text(proc_root + "/" + std::to_string(pid) + "/environ");
  if (!text) return -1;
  std::map<std::string, std::string> env;
  std::size_t start = 0;
  while (start < text->size()) {
    std::size_t end = text->find('\0', start);
    if (end == std::string::npos) end = text->size();
    std::string entry = text->substr(start, end - start);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
    start = end + 1;
  }
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}) {
    auto it = env.find(name);
    if (it != env.end() && !it->second.empty()) {
      try {
        return std::stoi(it->second);
      } catch (const std::exception&) {
      }
    }
  }
  return -1;
}

// Each rank's Flight Recorder, asked for a dump every `every_s` in a thread of its
// own (a dump takes the rank's watchdog thread a moment; the poll must not wait for
// it): the last completed collective of each fresh dump.
class FlightRecorderPoller {
 public:
  FlightRecorderPoller(std::string proc_root, double every_s)
      : proc_root_(std::move(proc_root)), every_s_(every_s), thread_([this] { loop(); }) {}
  ~FlightRecorderPoller() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void set_ranks(const std::map<int, int>& ranks) {
    std::lock_guard<std::mutex> lock(mutex_);
    ranks_ = ranks;
  }
  std::map<int, long long> latest() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<int, long long> out;
    for (const auto& [pid, seq] : latest_)
      if (ranks_.count(pid)) out[pid] = seq;
    return out;
  }
  // How many of the ranks have the Flight Recorder on, answered or not.
  int configured() {
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (int pid : configured_)
      if (ranks_.count(pid)) ++n;
    return n;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      const auto ranks = ranks_;
      lock.unlock();
      for (const auto& [pid, rank] : ranks) ask(pid, rank);
      lock.lock();
      wake_.wait_for(lock, std::chrono::duration<double>(every_s_), [this] { return stop_; });
    }
  }
  void ask(int pid, int rank) {
    auto settings = diagnose::flight_recorder_settings(diagnose::read_environment(proc_root_, pid));
    if (!settings.askable() || settings.pipe_prefix.empty()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      configured_.insert(pid);
    }
    if (rank >= 0) settings.rank = rank;  // the rank watch found (RANK, SLURM_PROCID, ...): its own pipe and dump
    const auto dump = diagnose::collect_flight_recorder(settings, 3.0);
    if (!dump.fresh) return;
    const auto& last = dump.summary["last_completed"];
    if (!last.is_object() || !last["collective_seq_id"].is_number_integer()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    latest_[pid] = last["collective_seq_id"].get<long long>();
  }

  std::string proc_root_;
  double every_s_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::map<int, int> ranks_;
  std::map<int, long long> latest_;
  std::set<int> configured_;
  std::thread thread_;  // last: started once everything it reads exists
};

class ProcReader : public JobReader {
 public:
  explicit ProcReader(const JobScope& scope)
      : scope_(scope), ticks_(::sysconf(_SC_CLK_TCK)), follower_(scope.phase_file, 0) {
    phase_file_known_ = !scope.phase_file.empty();
    if (scope.gpu) nvml_ = std::make_unique<Nvml>();
    if (scope.fr_every_s > 0) fr_ = std::make_unique<FlightRecorderPoller>(scope.proc_root, scope.fr_every_s);
  }

  Sample read(double now) override {
    if (now - listed_at_ >= scope_.rescan_s || members_.empty()) list_processes(now);
    Sample s;
    s.t = now;
    s.alive = job_alive();
    if (!s.alive) return s;
    read_cpu(s);
    read_phases(s);
    read_output(s);
    if (nvml_) s.gpu_busy = nvml_->any_busy(members_);
    if (fr_) {
      s.fr_completed = fr_->latest();
      s.fr_configured = fr_->configured();
    }
    return s;
  }

  std::vector<int> pids() override {
    list_processes(monotonic_seconds());
    return members_;
  }
  int root_pid() override { return scope_.root_pid; }

 private:
  // The job's processes: the tree under the root, or the Slurm job's on this node;
  // which of them are ranks (a forked worker inherits its rank's environment: a
  // process whose parent has the same rank is not one).
  void list_processes(double now) {
    listed_at_ = now;
    std::map<int, int> rank_by_pid;
    std::map<int, int> parent;
    if (!scope_.slurm_job.empty()) {
      for (const auto& p : diagnose::slurm::find_job_processes(scope_.proc_root, scope_.slurm_job, scope_.slurm_step))
        if (p.comm != "hangbench") rank_by_pid[p.pid] = p.rank;  // not watch's nor diagnose's own steps
    } else {
      for (int pid : proc::process_tree(scope_.proc_root, scope_.root_pid)) {
        auto it = rank_cache_.find(pid);
        rank_by_pid[pid] = it != rank_cache_.end() ? it->second : (rank_cache_[pid] = rank_of(scope_.proc_root, pid));
      }
    }
    members_.clear();
    ranks_.clear();
    for (const auto& [pid, rank] : rank_by_pid) {
      auto text = proc::read_text(scope_.proc_root + "/" + std::to_string(pid) + "/stat");
      if (!text) continue;
      auto st = proc::parse_stat(*text);
      if (!st) continue;
      members_.push_back(pid);
      auto p = rank_by_pid.find(st->ppid);
      if (rank >= 0 && !(p != rank_by_pid.end() && p->second == rank)) ranks_[pid] = rank;
    }
    // The root first (the launcher), then the others in pid order.
    auto root = std::find(members_.begin(), members_.end(), scope_.root_pid);
    if (root != members_.end()) std::rotate(members_.begin(), root, root + 1);
    if (ranks_.empty()) {
      for (int pid : members_) ranks_[pid] = -1;  // no launcher named ranks: every process counts
    }
    if (fr_) fr_->set_ranks(ranks_);
    if (!phase_file_known_) find_phase_file();
  }

  bool job_alive() {
    if (scope_.root_pid > 0 && scope_.slurm_job.empty()) {
      auto text = proc::read_text(scope_.proc_root + "/" + std::to_string(scope_.root_pid) + "/stat");
      if (!text) return false;
      auto st = proc::parse_stat(*text);
      return st && st->state != 'Z' && st->state != 'X';
    }
    return !members_.empty();
  }

  void read_cpu(Sample& s) {
    for (const auto& [pid, rank] : ranks_) {
      auto text = proc::read_text(scope_.proc_root + "/" + std::to_string(pid) + "/stat");
      if (!text) continue;
      if (auto cpu = parse_cpu_seconds(*text, ticks_)) {
        s.cpu_s[pid] = *cpu;
        s.ranks[pid] = rank;
      }
    }
  }

  // A job watch did not start: its phase file is the one its own environment names.
  void find_phase_file() {
    for (int pid : members_) {
      auto env = diagnose::read_environment(scope_.proc_root, pid);
      auto it = env.find("HANGBENCH_PHASE_FILE");
      if (it == env.end() || it->second.empty()) continue;
      scope_.phase_file = it->second;
      follower_ = exec_detail::PhaseFollower(scope_.phase_file, 0);
      phase_file_known_ = true;
      return;
    }
  }

  void read_phases(Sample& s) {
    if (scope_.phase_file.empty()) return;
    struct stat st {};
    if (::stat(scope_.phase_file.c_str(), &st) != 0) {
      s.phase_lines = phase_lines_ > 0 ? phase_lines_ : -1;
      s.last_phase = last_phase_;
      return;
    }
    if (st.st_size != phase_size_) {  // the follower reads only when the file grew
      phase_size_ = st.st_size;
      for (const auto& p : follower_.poll(0)) {
        ++phase_lines_;
        last_phase_ = p.name;
      }
    }
    s.phase_lines = phase_lines_;
    s.last_phase = last_phase_;
  }

  // A launched job's relayed bytes; an attached one's stdout and stderr when they are files.
  void read_output(Sample& s) {
    if (scope_.output_counter) {
      s.output_bytes = static_cast<long long>(__atomic_load_n(scope_.output_counter, __ATOMIC_RELAXED));
      return;
    }
    const int pid = scope_.root_pid > 0 ? scope_.root_pid : (members_.empty() ? 0 : members_.front());
    if (pid <= 0) return;
    std::set<std::pair<dev_t, ino_t>> seen;
    long long total = -1;
    for (int fd : {1, 2}) {
      struct stat st {};
      const std::string link = scope_.proc_root + "/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
      if (::stat(link.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (!seen.insert({st.st_dev, st.st_ino}).second) continue;
      total = std::max(total, 0LL) + static_cast<long long>(st.st_size);
    }
    s.output_bytes = total;
  }

  JobScope scope_;
  long ticks_;
  exec_detail::PhaseFollower follower_;
  bool phase_file_known_ = false;
  long long phase_lines_ = 0;
  off_t phase_size_ = 0;
  std::string last_phase_;
  std::unique_ptr<Nvml> nvml_;
  std::unique_ptr<FlightRecorderPoller> fr_;
  double listed_at_ = -1e18;
  std::vector<int> members_;
  std::map<int, int> ranks_;
  std::map<int, int> rank_cache_;
};

}  // namespace

std::unique_ptr<JobReader> make_proc_reader(const JobScope& scope) { return std::make_unique<ProcReader>(scope); }

}  // namespace hangbench::watch
