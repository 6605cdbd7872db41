// DataLoader-like worker processes: a pool of children that produce batches
// on request, as PyTorch's DataLoader does with num_workers > 0.
//
// Workers are started with fork() (they inherit every descriptor of the parent,
// NCCL's sockets included, exactly like DataLoader's fork start method) or with
// posix_spawn + exec of a worker program (only stdio and the two pipe ends are
// inherited). They are daemonic: each exits when its parent dies
// (PR_SET_PDEATHSIG plus a getppid() watch), and not before, so a rank that
// hangs keeps its workers alive.
//
// Pipe protocol, per worker, native endianness (parent and worker are the same
// binary on the same machine):
//   request  parent -> worker: uint32 magic 'HBRQ', uint32 batch index (kStopIndex = stop)
//   reply    worker -> parent: uint32 magic 'HBBT', uint32 index, uint32 n_inputs,
//                              uint32 n_targets, then n_inputs + n_targets floats
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hangbench::loader {

inline constexpr uint32_t kRequestMagic = 0x51524248;  // "HBRQ"
inline constexpr uint32_t kReplyMagic = 0x54424248;    // "HBBT"
inline constexpr uint32_t kStopIndex = 0xFFFFFFFFu;

enum class StartMethod { Fork, Spawn };

// What a batch looks like; shared by workers and trainer.
struct BatchShape {
  int batch_size = 32;
  int in_features = 64;
  int out_features = 8;
  uint64_t seed = 1234;
};

struct Batch {
  uint32_t index = 0;
  std::vector<float> inputs;   // batch_size x in_features, row-major
  std::vector<float> targets;  // batch_size x out_features
};

// Deterministic synthetic data: the same (shape, index) always gives the same batch,
// so a run is reproducible whichever worker made it.
Batch make_synthetic_batch(const BatchShape& shape, uint32_t index);

struct PoolOptions {
  int workers = 2;
  StartMethod method = StartMethod::Fork;
  BatchShape shape;
  // Spawn only: the program to exec and the arguments that put it in worker
  // mode; the pool appends --loader-request-fd/--loader-reply-fd/--loader-parent
  // and the shape. Empty executable = /proc/self/exe.
  std::string spawn_executable;
  std::vector<std::string> spawn_args = {"--loader-worker"};
};

// A running pool. Move-only; stop() (or the destructor) asks every worker to
// exit and reaps it.
class WorkerPool {
 public:
  static WorkerPool start(const PoolOptions& options);

  WorkerPool(WorkerPool&& other) noexcept;
  WorkerPool& operator=(WorkerPool&& other) noexcept;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool();

  // Asks worker (index % workers) for batch `index` and waits for it.
  // Throws std::runtime_error when the worker died or broke the protocol.
  Batch fetch(uint32_t index);
  std::vector<pid_t> pids() const;
  int size() const { return static_cast<int>(workers_.size()); }
  // Sends stop to every worker, closes the pipes and reaps them. Idempotent.
  void stop();

 private:
  struct Worker {
    pid_t pid = -1;
    int request_fd = -1;  // parent writes
    int reply_fd = -1;    // parent reads
  };
  WorkerPool() = default;
  std::vector<Worker> workers_;
  BatchShape shape_;
};

// The worker side: serves requests on the two descriptors until stop, EOF or
// the death of `parent` (checked once a second, besides PR_SET_PDEATHSIG).
// Returns the process exit status to use.
int serve_batches(int request_fd, int reply_fd, pid_t parent, const BatchShape& shape);

// Entry point for a spawned worker: parses the flags the pool passes
// (--loader-request-fd=N --loader-reply-fd=N --loader-parent=PID
// --loader-shape=B,I,O,SEED) and serves. Returns the exit status (2 on bad flags).
int spawned_worker_main(const std::vector<std::string>& args);

// True when argv asks for worker mode (first argument is --loader-worker).
bool is_worker_invocation(int argc, char** argv);

}  // namespace hangbench::loader
