#include "loader_workers.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace hangbench::loader {

namespace {

// Descriptors a spawned worker finds its pipe ends on.
constexpr int kSpawnRequestFd = 3;
constexpr int kSpawnReplyFd = 4;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float uniform_pm1(uint64_t& state) {  // in [-1, 1)
  return static_cast<float>(static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53 * 2.0 - 1.0);
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Full write with SIGPIPE blocked for this thread, so a dead worker gives EPIPE
// instead of killing the trainer; a SIGPIPE left pending is consumed.
bool write_all(int fd, const void* data, size_t size) {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  const char* p = static_cast<const char*>(data);
  bool ok = true;
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  if (!ok && errno == EPIPE) {
    timespec zero{};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return ok;
}

// Returns bytes read: size, or less on EOF; -1 on error.
ssize_t read_all(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

// Daemonic: die with the parent. The getppid() check closes the race where the
// parent died before prctl ran.
bool tie_lifetime_to(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  return getppid() == parent;
}

std::string describe_exit(pid_t pid) {
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG);
  if (r != pid) return "pid " + std::to_string(pid) + " still running";
  if (WIFEXITED(status)) return "pid " + std::to_string(pid) + " exited with " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "pid " + std::to_string(pid) + " killed by signal " + std::to_string(WTERMSIG(status));
  return "pid " + std::to_string(pid) + " ended";
}

#if !(defined(__GLIBC__) && __GLIBC_PREREQ(2, 34))
// Every descriptor >= first that is open now (fallback when closefrom is missing).
std::vector<int> open_descriptors_from(int first) {
  std::vector<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  int dir_fd = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    int fd = std::atoi(entry->d_name);
    if (fd >= first && fd != dir_fd) fds.push_back(fd);
  }
  closedir(dir);
  return fds;
}
#endif

bool parse_int_flag(const std::string& arg, const std::string& name, long long& out) {
  const std::string prefix = "--" + name + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  out = std::stoll(arg.substr(prefix.size()));
  return true;
}

}  // namespace

Batch make_synthetic_batch(const BatchShape& shape, uint32_t index) {
  Batch batch;
  batch.index = index;
  batch.inputs.resize(static_cast<size_t>(shape.batch_size) * shape.in_features);
  batch.targets.resize(static_cast<size_t>(shape.batch_size) * shape.out_features);
  uint64_t data_state = shape.seed ^ (0xD1B54A32D192ED03ull * (static_cast<uint64_t>(index) + 1));
  for (float& x : batch.inputs) x = uniform_pm1(data_state);
  // A fixed nonlinear teacher, y = tanh(W x / sqrt(in)), that a small MLP can learn.
  const float scale = 1.0f / std::sqrt(static_cast<float>(shape.in_features));
  for (int row = 0; row < shape.batch_size; ++row) {
    for (int k = 0; k < shape.out_features; ++k) {
      uint64_t teacher_state = shape.seed * 31 + static_cast<uint64_t>(k);
      float sum = 0;
      for (int j = 0; j < shape.in_features; ++j) {
        sum += uniform_pm1(teacher_state) * batch.inputs[static_cast<size_t>(row) * shape.in_features + j];
      }
      batch.targets[static_cast<size_t>(row) * shape.out_features + k] = std::tanh(sum * scale);
    }
  }
  return batch;
}

int serve_batches(int request_fd, int reply_fd, pid_t parent, const BatchShape& shape) {
  signal(SIGPIPE, SIG_IGN);  // this is the worker's own process
  for (;;) {
    pollfd pfd{request_fd, POLLIN, 0};
    int ready = poll(&pfd, 1, 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (getppid() != parent) return 0;  // orphaned: like DataLoader's ManagerWatchdog
      continue;
    }
    uint32_t request[2];
    ssize_t got = read_all(request_fd, request, sizeof request);
    if (got == 0) return 0;  // parent closed: done
    if (got != static_cast<ssize_t>(sizeof request)) return 3;
    if (request[0] != kRequestMagic) return 3;
    if (request[1] == kStopIndex) return 0;
    Batch batch = make_synthetic_batch(shape, request[1]);
    uint32_t header[4] = {kReplyMagic, batch.index, static_cast<uint32_t>(batch.inputs.size()),
                          static_cast<uint32_t>(batch.targets.size())};
    if (!write_all(reply_fd, header, sizeof header) ||
        !write_all(reply_fd, batch.inputs.data(), batch.inputs.size() * sizeof(float)) ||
        !write_all(reply_fd, batch.targets.data(), batch.targets.size() * sizeof(float))) {
      return 0;  // parent gone
    }
  }
}

bool is_worker_invocation(int argc, char** argv) { return argc > 1 && std::strcmp(argv[1], "--loader-worker") == 0; }

int spawned_worker_main(const std::vector<std::string>& args) {
  long long request_fd = -1, reply_fd = -1, parent = -1;
  BatchShape shape;
  bool have_shape = false;
  try {
    for (const auto& arg : args) {
      if (arg == "--loader-worker") continue;
      if (parse_int_flag(arg, "loader-request-fd", request_fd)) continue;
      if (parse_int_flag(arg, "loader-reply-fd", reply_fd)) continue;
      if (parse_int_flag(arg, "loader-parent", parent)) continue;
      if (arg.rfind("--loader-shape=", 0) == 0) {
        unsigned long long seed = 0;
        if (std::sscanf(arg.c_str() + 15, "%d,%d,%d,%llu", &shape.batch_size, &shape.in_features, &shape.out_features,
                        &seed) != 4) {
          throw std::invalid_argument(arg);
        }
        shape.seed = seed;
        have_shape = true;
        continue;
      }
      throw std::invalid_argument(arg);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loader worker: bad argument '%s'\n", e.what());
    return 2;
  }
  if (request_fd < 0 || reply_fd < 0 || parent <= 0 || !have_shape) {
    std::fprintf(stderr,
                 "loader worker: needs --loader-request-fd, --loader-reply-fd, "
                 "--loader-parent and --loader-shape\n");
    return 2;
  }
  if (!tie_lifetime_to(static_cast<pid_t>(parent))) return 0;
  return serve_batches(static_cast<int>(request_fd), static_cast<int>(reply_fd), static_cast<pid_t>(parent), shape);
}

WorkerPool WorkerPool::start(const PoolOptions& options) {
  if (options.workers < 1) throw std::invalid_argument("a worker pool needs at least one worker");
  WorkerPool pool;
  pool.shape_ = options.shape;
  const pid_t parent = getpid();
  for (int w = 0; w < options.workers; ++w) {
    int request_pipe[2], reply_pipe[2];
    if (pipe2(request_pipe, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe2"));
    if (pipe2(reply_pipe, O_CLOEXEC) != 0) {
      close(request_pipe[0]);
      close(request_pipe[1]);
      throw std::runtime_error(errno_text("pipe2"));
    }
    Worker worker;
    if (options.method == StartMethod::Fork) {
      pid_t pid = fork();
      if (pid < 0) throw std::runtime_error(errno_text("fork"));
      if (pid == 0) {
        // Child: keeps everything the parent had (that is the point), except the
        // parent's ends of this and earlier workers' pipes.
        close(request_pipe[1]);
        close(reply_pipe[0]);
        for (const Worker& earlier : pool.workers_) {
          close(earlier.request_fd);
          close(earlier.reply_fd);
        }
        if (!tie_lifetime_to(parent)) _exit(0);
        _exit(serve_batches(request_pipe[0], reply_pipe[1], parent, options.shape));
      }
      worker.pid = pid;
    } else {
      // Spawn: the child gets stdio plus its two pipe ends on fds 3 and 4, and
      // nothing else (NCCL's sockets carry no CLOEXEC, so they are closed explicitly).
      int high_request = fcntl(request_pipe[0], F_DUPFD_CLOEXEC, 64);
      int high_reply = fcntl(reply_pipe[1], F_DUPFD_CLOEXEC, 64);
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_adddup2(&actions, high_request, kSpawnRequestFd);
      posix_spawn_file_actions_adddup2(&actions, high_reply, kSpawnReplyFd);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
      posix_spawn_file_actions_addclosefrom_np(&actions, kSpawnReplyFd + 1);
#else
      for (int fd : open_descriptors_from(kSpawnReplyFd + 1)) posix_spawn_file_actions_addclose(&actions, fd);
#endif
      const std::string exe = options.spawn_executable.empty() ? "/proc/self/exe" : options.spawn_executable;
      const BatchShape& s = options.shape;
      std::vector<std::string> args = {exe};
      args.insert(args.end(), options.spawn_args.begin(), options.spawn_args.end());
      args.push_back("--loader-request-fd=" + std::to_string(kSpawnRequestFd));
      args.push_back("--loader-reply-fd=" + std::to_string(kSpawnReplyFd));
      args.push_back("--loader-parent=" + std::to_string(parent));
      args.push_back("--loader-shape=" + std::to_string(s.batch_size) + "," + std::to_string(s.in_features) + "," +
                     std::to_string(s.out_features) + "," + std::to_string(s.seed));
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      pid_t pid = -1;
      int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
      posix_spawn_file_actions_destroy(&actions);
      close(high_request);
      close(high_reply);
      if (rc != 0) {
        errno = rc;
        throw std::runtime_error(errno_text(("posix_spawn " + exe).c_str()));
      }
      worker.pid = pid;
    }
    close(request_pipe[0]);
    close(reply_pipe[1]);
    worker.request_fd = request_pipe[1];
    worker.reply_fd = reply_pipe[0];
    pool.workers_.push_back(worker);
  }
  return pool;
}

WorkerPool::WorkerPool(WorkerPool&& other) noexcept : workers_(std::move(other.workers_)), shape_(other.shape_) {
  other.workers_.clear();
}

WorkerPool& WorkerPool::operator=(WorkerPool&& other) noexcept {
  if (this != &other) {
    stop();
    workers_ = std::move(other.workers_);
    shape_ = other.shape_;
    other.workers_.clear();
  }
  return *this;
}

WorkerPool::~WorkerPool() { stop(); }

Batch WorkerPool::fetch(uint32_t index) {
  if (workers_.empty()) throw std::runtime_error("fetch from a stopped worker pool");
  Worker& worker = workers_[index % workers_.size()];
  const uint32_t request[2] = {kRequestMagic, index};
  if (!write_all(worker.request_fd, request, sizeof request)) {
    throw std::runtime_error("loader worker " + describe_exit(worker.pid) + ": cannot send request");
  }
  uint32_t header[4];
  if (read_all(worker.reply_fd, header, sizeof header) != static_cast<ssize_t>(sizeof header)) {
    throw std::runtime_error("loader worker " + describe_exit(worker.pid) + " before replying");
  }
  const size_t want_inputs = static_cast<size_t>(shape_.batch_size) * shape_.in_features;
  const size_t want_targets = static_cast<size_t>(shape_.batch_size) * shape_.out_features;
  if (header[0] != kReplyMagic || header[1] != index || header[2] != want_inputs || header[3] != want_targets) {
    throw std::runtime_error("loader worker pid " + std::to_string(worker.pid) + " broke the pipe protocol");
  }
  Batch batch;
  batch.index = index;
  batch.inputs.resize(want_inputs);
  batch.targets.resize(want_targets);
  const ssize_t input_bytes = static_cast<ssize_t>(want_inputs * sizeof(float));
  const ssize_t target_bytes = static_cast<ssize_t>(want_targets * sizeof(float));
  if (read_all(worker.reply_fd, batch.inputs.data(), input_bytes) != input_bytes ||
      read_all(worker.reply_fd, batch.targets.data(), target_bytes) != target_bytes) {
    throw std::runtime_error("loader worker " + describe_exit(worker.pid) + " in the middle of a batch");
  }
  return batch;
}

std::vector<pid_t> WorkerPool::pids() const {
  std::vector<pid_t> out;
  for (const Worker& w : workers_) out.push_back(w.pid);
  return out;
}

void WorkerPool::stop() {
  const uint32_t stop_request[2] = {kRequestMagic, kStopIndex};
  for (Worker& w : workers_) {
    write_all(w.request_fd, stop_request, sizeof stop_request);
    close(w.request_fd);
    close(w.reply_fd);
  }
  // Reap; a worker that ignores stop for 2 s is killed (it would otherwise outlive us).
  for (Worker& w : workers_) {
    bool reaped = false;
    for (int attempt = 0; attempt < 200 && !reaped; ++attempt) {
      pid_t r = waitpid(w.pid, nullptr, WNOHANG);
      reaped = (r == w.pid) || (r < 0 && errno == ECHILD);
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!reaped) {
      kill(w.pid, SIGKILL);
      waitpid(w.pid, nullptr, 0);
    }
  }
  workers_.clear();
}

}  // namespace hangbench::loader
