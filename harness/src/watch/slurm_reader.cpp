// `watch --slurm-job`: every node of the job read at once. One step beside the
// job (`srun --overlap`, one task a node) runs the hidden `watch --slurm-node`,
// which prints one sample line a poll from its node's /proc; the job side reads
// the lines as they come and merges the newest of each node into one sample.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "hangbench/clock.hpp"
#include "hangbench/errors.hpp"
#include "hangbench/slurm_diagnose.hpp"
#include "hangbench/watch.hpp"
#include "nccl/process.hpp"

namespace hangbench::watch {

namespace {
constexpr const char* kSampleTag = "hangbench-watch-node ";
}  // namespace

std::string encode_sample(const std::string& host, const Sample& s) {
  nlohmann::json cpu = nlohmann::json::object(), ranks = nlohmann::json::object();
  for (const auto& [pid, seconds] : s.cpu_s) cpu[std::to_string(pid)] = seconds;
  for (const auto& [pid, rank] : s.ranks) ranks[std::to_string(pid)] = rank;
  nlohmann::json fr = nlohmann::json::object();
  for (const auto& [pid, seq] : s.fr_completed) fr[std::to_string(pid)] = seq;
  nlohmann::json j = {
      {"host", host}, {"alive", s.alive}, {"phase_lines", s.phase_lines}, {"output_bytes", s.output_bytes},
      {"cpu", cpu},   {"ranks", ranks},   {"last_phase", s.last_phase}};
  if (s.gpu_busy) j["gpu"] = *s.gpu_busy;
  if (!s.fr_completed.empty()) j["fr"] = fr;
  if (s.fr_configured > 0) j["fr_configured"] = s.fr_configured;
  return kSampleTag + j.dump() + "\n";
}

bool decode_sample(const std::string& line, std::string& host, Sample& s) {
  const auto at = line.find(kSampleTag);
  if (at == std::string::npos) return false;
  auto j = nlohmann::json::parse(line.substr(at + std::strlen(kSampleTag)), nullptr, false);
  if (!j.is_object() || !j.contains("host")) return false;
  try {
    host = j["host"].get<std::string>();
    s = Sample{};
    s.alive = j.value("alive", true);
    s.phase_lines = j.value("phase_lines", -1LL);
    s.output_bytes = j.value("output_bytes", -1LL);
    s.last_phase = j.value("last_phase", "");
    for (const auto& [pid, seconds] : j["cpu"].items()) s.cpu_s[std::stoi(pid)] = seconds.get<double>();
    for (const auto& [pid, rank] : j["ranks"].items()) s.ranks[std::stoi(pid)] = rank.get<int>();
    if (j.contains("gpu")) s.gpu_busy = j["gpu"].get<bool>();
    if (j.contains("fr"))
      for (const auto& [pid, seq] : j["fr"].items()) s.fr_completed[std::stoi(pid)] = seq.get<long long>();
    s.fr_configured = j.value("fr_configured", 0);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

Sample merge_node_samples(const std::map<std::string, Sample>& nodes, double now) {
  Sample m;
  m.t = now;
  int index = 0;
  for (const auto& [host, s] : nodes) {
    // Counters of every node added: the sum grows when any node's does.
    if (s.phase_lines >= 0) m.phase_lines = std::max(m.phase_lines, 0LL) + s.phase_lines;
    if (s.output_bytes >= 0) m.output_bytes = std::max(m.output_bytes, 0LL) + s.output_bytes;
    // Pids of different nodes may be equal: each node's get its own range.
    const int base = index++ << 22;
    for (const auto& [pid, seconds] : s.cpu_s) m.cpu_s[base + pid] = seconds;
    for (const auto& [pid, rank] : s.ranks) m.ranks[base + pid] = rank;
    for (const auto& [pid, seq] : s.fr_completed) m.fr_completed[base + pid] = seq;
    m.fr_configured += s.fr_configured;
    if (s.gpu_busy) m.gpu_busy = m.gpu_busy.value_or(false) || *s.gpu_busy;
    if (!s.last_phase.empty()) m.last_phase = s.last_phase;
  }
  return m;
}

namespace {

class SlurmReader : public JobReader {
 public:
  SlurmReader(const std::string& job, const std::string& step, double poll_s, double idle_s,
              const std::string& self_exe) {
    auto nodes = nccl::run_process({"squeue", "-h", "-j", job, "-t", "RUNNING", "-o", "%N"});
    std::string list = nodes.output.substr(0, nodes.output.find('\n'));
    if (nodes.exit_status != 0 || list.empty())
      throw UsageError("--slurm-job " + job + ": not a running job (squeue: " + list + ")");
    auto names = nccl::run_process({"scontrol", "show", "hostnames", list});
    int count = 0;
    for (char c : names.output) count += c == '\n';
    if (names.exit_status != 0 || count == 0) throw InfraError("scontrol show hostnames " + list + " failed");
    std::vector<std::string> argv = {"srun", "--overlap", "--jobid=" + job, "--nodes=" + std::to_string(count),
                                     // Given, not left to the job's SLURM_NTASKS: one task a node.
                                     "--ntasks=" + std::to_string(count), "--ntasks-per-node=1", "--nodelist=" + list,
                                     "--quiet", self_exe, "watch", "--slurm-node", job, "--poll",
                                     std::to_string(poll_s), "--idle", std::to_string(idle_s)};
    if (!step.empty()) argv.insert(argv.end(), {"--step", step});
    start(argv);
  }
  ~SlurmReader() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }

  Sample read(double now) override {
    drain();
    Sample m = merge_node_samples(nodes_, now);
    m.alive = srun_running() || !partial_.empty();
    if (!m.alive && nodes_.empty()) std::cerr << "hangbench watch: the node step ended without a report\n";
    return m;
  }
  std::vector<int> pids() override { return {}; }  // the evidence is diagnose --slurm-job's
  int root_pid() override { return 0; }

 private:
  void start(const std::vector<std::string>& argv) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw InfraError(std::string("pipe: ") + std::strerror(errno));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(p[1], STDOUT_FILENO);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::close(p[1]);
    fd_ = p[0];
    ::fcntl(fd_, F_SETFL, O_NONBLOCK);
  }

  // Every complete line that arrived: the newest sample of each node.
  void drain() {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      partial_.append(buf, static_cast<size_t>(n));
    }
    std::size_t start = 0;
    for (std::size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string host;
      Sample s;
      if (decode_sample(partial_.substr(start, nl - start), host, s)) nodes_[host] = s;
    }
    partial_.erase(0, start);
  }

  bool srun_running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      drain();
      return false;
    }
    return true;
  }

  int pid_ = -1;
  int fd_ = -1;
  std::string partial_;
  std::map<std::string, Sample> nodes_;
};

}  // namespace

std::unique_ptr<JobReader> make_slurm_reader(const std::string& job, const std::string& step, double poll_s,
                                             double idle_s, const std::string& self_exe) {
  return std::make_unique<SlurmReader>(job, step, poll_s, idle_s, self_exe);
}

double flight_recorder_period(double idle_s, double poll_s) { return std::clamp(idle_s / 10, poll_s, 30.0); }

int run_slurm_node(const std::string& job, const std::string& step, double poll_s, double idle_s) {
  JobScope scope;
  scope.slurm_job = job;
  scope.slurm_step = step;
  scope.fr_every_s = flight_recorder_period(idle_s, poll_s);
  auto reader = make_proc_reader(scope);
  SystemClock clock;
  const std::string host = host_name();
  for (;;) {
    const double t = clock.now();
    Sample s = reader->read(t);
    const std::string line = encode_sample(host, s);
    if (::write(STDOUT_FILENO, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return 3;
    if (!s.alive) return 0;
    clock.sleep_until(t + poll_s);
  }
}

}  // namespace hangbench::watch
