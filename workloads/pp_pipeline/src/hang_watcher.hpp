// The workload's own "hang detected" trigger: a thread that waits for SIGTERM,
// SIGINT or SIGUSR1 (the harness or mpirun ending a hung trial) or for a
// watchdog deadline, and then runs one callback (the hang-detected shutdown).
// Signals are taken synchronously with sigtimedwait, so the callback may do
// anything a thread may (stop threads, call MPI_Abort), unlike a signal handler.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace pp {

class HangWatcher {
 public:
  using OnHang = std::function<void(const std::string& reason)>;

  // Blocks the watched signals in the calling thread; call it on the main
  // thread before any other thread exists (MPI, CUDA and Python start some),
  // so that every thread inherits the mask and only the watcher takes them.
  static void block_watched_signals();
  // Undoes it for the calling thread (after stop(): a late signal then acts as usual).
  static void unblock_watched_signals();

  // `watchdog` <= 0 disables the deadline.
  HangWatcher(OnHang on_hang, std::chrono::duration<double> watchdog);
  ~HangWatcher();  // stop()
  HangWatcher(const HangWatcher&) = delete;
  HangWatcher& operator=(const HangWatcher&) = delete;

  // Ends the watch and joins the thread (waiting for a callback in progress).
  // Returns false when the callback ran (the caller lost the race to the hang path).
  bool stop();
  bool fired() const { return fired_.load(); }

 private:
  void run(std::chrono::steady_clock::time_point deadline, bool has_deadline);

  OnHang on_hang_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace pp
