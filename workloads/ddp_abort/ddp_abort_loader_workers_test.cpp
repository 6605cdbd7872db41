// workloads/common/loader_workers: DataLoader-like workers (fork and spawn),
// the pipe protocol, descriptor inheritance and the daemonic lifetime.
// Defines its own main: the spawn tests exec this binary in worker mode.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "loader_workers.hpp"

using namespace hangbench::loader;

namespace {

PoolOptions small_pool(StartMethod method, int workers = 2) {
  PoolOptions o;
  o.workers = workers;
  o.method = method;
  o.shape = BatchShape{4, 8, 2, 99};
  return o;
}

// Alive = exists and is not a zombie.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() && line[close_paren + 2] != 'Z';
}

// Waits (bounded, generously) for a process to be gone; this is no timing assertion.
bool gone_within(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !alive(pid);
}

// How many times `pid` has blocked (its voluntary context switches); -1 when gone.
long times_blocked(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  }
  return -1;
}

// The state letter of /proc/PID/stat ('S' while it sleeps); '?' when gone.
char state_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() ? line[close_paren + 2] : '?';
}

// Waits until every idle worker has run its getppid() watch at least once. An
// idle worker only blocks in poll() with the watch's 1 s timeout, so once it is
// seen asleep, two more blocks mean it woke from a poll() that timed out, ran the
// watch and waited again. False at once when one dies; the bound (generous) only
// turns a hang into a failure.
bool watched_their_parent(const std::vector<pid_t>& pids, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::map<pid_t, long> asleep_at;
  for (;;) {
    size_t done = 0;
    for (pid_t pid : pids) {
      if (!alive(pid)) return false;
      if (!asleep_at.count(pid)) {
        if (state_of(pid) == 'S') asleep_at[pid] = times_blocked(pid);
      } else if (times_blocked(pid) >= asleep_at[pid] + 2) {
        ++done;
      }
    }
    if (done == pids.size()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The inode behind a descriptor, as /proc shows it ("socket:[123]").
std::string fd_target(pid_t pid, int fd) {
  std::error_code ec;
  auto target = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd), ec);
  return ec ? "" : target.string();
}

bool process_holds(pid_t pid, const std::string& target) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    if (std::filesystem::read_symlink(entry.path(), link_ec).string() == target) return true;
  }
  return false;
}

}  // namespace

TEST(SyntheticBatch, IsDeterministicPerIndexAndShaped) {
  BatchShape shape{4, 8, 2, 7};
  Batch a = make_synthetic_batch(shape, 3), b = make_synthetic_batch(shape, 3), c = make_synthetic_batch(shape, 4);
  EXPECT_EQ(a.inputs.size(), 32u);
  EXPECT_EQ(a.targets.size(), 8u);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_NE(a.inputs, c.inputs);
  for (float t : a.targets) EXPECT_LE(std::abs(t), 1.0f);  // tanh teacher
}

TEST(ForkedWorkers, ServeTheSameBatchesAsMadeInProcess) {
  PoolOptions options = small_pool(StartMethod::Fork, 3);
  WorkerPool pool = WorkerPool::start(options);
  ASSERT_EQ(pool.size(), 3);
  for (uint32_t i = 0; i < 7; ++i) {
    Batch served = pool.fetch(i);
    Batch local = make_synthetic_batch(options.shape, i);
    EXPECT_EQ(served.index, i);
    EXPECT_EQ(served.inputs, local.inputs);
    EXPECT_EQ(served.targets, local.targets);
  }
}

TEST(ForkedWorkers, StopReapsEveryWorker) {
  WorkerPool pool = WorkerPool::start(small_pool(StartMethod::Fork));
  std::vector<pid_t> pids = pool.pids();
  ASSERT_EQ(pids.size(), 2u);
  for (pid_t p : pids) EXPECT_TRUE(alive(p));
  pool.stop();
  for (pid_t p : pids) {
    EXPECT_FALSE(alive(p));
    EXPECT_EQ(waitpid(p, nullptr, WNOHANG), -1) << "already reaped by stop()";
  }
  EXPECT_EQ(pool.size(), 0);
}

TEST(ForkedWorkers, StayAliveWhileTheParentLivesEvenWhenIdle) {
  WorkerPool pool = WorkerPool::start(small_pool(StartMethod::Fork));
  // Each worker idles through its getppid() watch at least once: that must not end it.
  EXPECT_TRUE(watched_their_parent(pool.pids(), std::chrono::seconds(30)));
  for (pid_t p : pool.pids()) EXPECT_TRUE(alive(p)) << "worker " << p;
}

TEST(ForkedWorkers, InheritADescriptorOpenedBeforeTheFork) {
  // Like NCCL's proxy socket: no CLOEXEC, open when the workers are forked.
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  const std::string socket_inode = fd_target(getpid(), pair[0]);
  WorkerPool pool = WorkerPool::start(small_pool(StartMethod::Fork));
  for (pid_t p : pool.pids()) EXPECT_TRUE(process_holds(p, socket_inode)) << "worker " << p;
  pool.stop();
  close(pair[0]);
  close(pair[1]);
}

TEST(SpawnedWorkers, ServeBatchesButInheritNoOtherDescriptor) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);  // no CLOEXEC on purpose
  const std::string socket_inode = fd_target(getpid(), pair[0]);
  PoolOptions options = small_pool(StartMethod::Spawn);
  WorkerPool pool = WorkerPool::start(options);
  Batch served = pool.fetch(5);
  EXPECT_EQ(served.inputs, make_synthetic_batch(options.shape, 5).inputs);
  for (pid_t p : pool.pids()) {
    EXPECT_FALSE(process_holds(p, socket_inode)) << "spawned worker " << p << " inherited the socket";
    EXPECT_EQ(fd_target(p, 5), "") << "only stdio and fds 3, 4 are expected";
  }
  pool.stop();
  close(pair[0]);
  close(pair[1]);
}

TEST(ForkedWorkers, ExitWhenTheirParentIsKilled) {
  // A "rank" process starts the pool, reports the worker pids, then is SIGKILLed.
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t rank = fork();
  ASSERT_GE(rank, 0);
  if (rank == 0) {
    close(report[0]);
    WorkerPool pool = WorkerPool::start(small_pool(StartMethod::Fork));
    std::vector<pid_t> pids = pool.pids();
    (void)!write(report[1], pids.data(), pids.size() * sizeof(pid_t));
    pause();
    _exit(0);
  }
  close(report[1]);
  pid_t workers[2] = {0, 0};
  ASSERT_EQ(read(report[0], workers, sizeof workers), static_cast<ssize_t>(sizeof workers));
  close(report[0]);
  EXPECT_TRUE(alive(workers[0]));
  EXPECT_TRUE(alive(workers[1]));
  kill(rank, SIGKILL);
  waitpid(rank, nullptr, 0);
  EXPECT_TRUE(gone_within(workers[0], std::chrono::seconds(20)));
  EXPECT_TRUE(gone_within(workers[1], std::chrono::seconds(20)));
}

TEST(ForkedWorkers, FetchFromADeadWorkerThrowsWithItsFate) {
  WorkerPool pool = WorkerPool::start(small_pool(StartMethod::Fork, 1));
  pid_t worker = pool.pids().at(0);
  kill(worker, SIGKILL);
  // Wait until it is a zombie so the error can name the signal.
  ASSERT_TRUE(gone_within(worker, std::chrono::seconds(20)));
  try {
    pool.fetch(0);
    FAIL() << "fetch from a dead worker returned";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("signal 9"), std::string::npos) << e.what();
  }
}

TEST(SpawnedWorkerMain, RejectsMissingOrUnknownFlags) {
  EXPECT_EQ(spawned_worker_main({"--loader-worker"}), 2);
  EXPECT_EQ(spawned_worker_main({"--loader-worker", "--loader-request-fd=3", "--bogus"}), 2);
}

TEST(WorkerPoolStart, NeedsAtLeastOneWorker) {
  EXPECT_THROW(WorkerPool::start(small_pool(StartMethod::Fork, 0)), std::invalid_argument);
}

int main(int argc, char** argv) {
  if (is_worker_invocation(argc, argv)) return spawned_worker_main(std::vector<std::string>(argv + 1, argv + argc));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
