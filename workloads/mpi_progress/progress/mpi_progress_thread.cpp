#include "mpi_progress_thread.hpp"

#include <pthread.h>

#include <ostream>
#include <stdexcept>
#include <string>

namespace hangbench::mpi_progress {

MpiProgressThread::MpiProgressThread(MPI_Comm comm, std::chrono::microseconds interval, int reserved_tag)
    : comm_(comm), interval_(interval), reserved_tag_(reserved_tag) {
  if (interval_.count() <= 0) {
    throw std::invalid_argument("MpiProgressThread: interval must be positive, got " +
                                std::to_string(interval_.count()) + " us");
  }
  running_.store(true);  // before the worker exists, so is_running() is true on return
  worker_ = std::thread([this] { run(); });
}

MpiProgressThread::~MpiProgressThread() { stop(); }

std::unique_ptr<MpiProgressThread> MpiProgressThread::start_if_supported(MPI_Comm comm,
                                                                         std::chrono::microseconds interval,
                                                                         std::ostream& log, int reserved_tag) {
  if (interval.count() <= 0) {
    throw std::invalid_argument("MpiProgressThread: interval must be positive");
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    // Probing from a second thread below THREAD_MULTIPLE is undefined behaviour:
    // stay off and say so, rather than pretend.
    log << "error: MPI progress thread disabled: MPI provides thread level " << provided
        << ", it needs MPI_THREAD_MULTIPLE (" << MPI_THREAD_MULTIPLE << ")\n";
    return nullptr;
  }
  return std::make_unique<MpiProgressThread>(comm, interval, reserved_tag);
}

void MpiProgressThread::run() {
  pthread_setname_np(pthread_self(), "mpi_progress");
  std::unique_lock<std::mutex> lock(flag_mutex_);
  while (!stop_requested_) {
    if (wake_.wait_for(lock, interval_, [this] { return stop_requested_; })) break;
    // Never hold our mutex inside MPI: stop() must not wait on an MPI call.
    lock.unlock();
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, reserved_tag_, comm_, &flag, MPI_STATUS_IGNORE);
    probe_count_.fetch_add(1, std::memory_order_relaxed);
    lock.lock();
  }
  running_.store(false);
}

void MpiProgressThread::stop() {
  {
    std::lock_guard<std::mutex> lock(flag_mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  // One joiner at a time; later callers find the thread already joined.
  std::lock_guard<std::mutex> join_lock(join_mutex_);
  if (worker_.joinable()) worker_.join();
}

bool MpiProgressThread::is_running() const { return running_.load(); }

std::uint64_t MpiProgressThread::probe_count() const { return probe_count_.load(std::memory_order_relaxed); }

std::thread::native_handle_type MpiProgressThread::native_handle() {
  std::lock_guard<std::mutex> join_lock(join_mutex_);
  return worker_.native_handle();
}

}  // namespace hangbench::mpi_progress
