#include "hang_watcher.hpp"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstring>

namespace pp {
namespace {

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);
  return set;
}

}  // namespace

void HangWatcher::block_watched_signals() {
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void HangWatcher::unblock_watched_signals() {
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

HangWatcher::HangWatcher(OnHang on_hang, std::chrono::duration<double> watchdog) : on_hang_(std::move(on_hang)) {
  const bool has_deadline = watchdog.count() > 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                             has_deadline ? watchdog : std::chrono::duration<double>(0));
  block_watched_signals();  // the watcher must not die of the signals it waits for
  thread_ = std::thread([this, deadline, has_deadline] { run(deadline, has_deadline); });
}

HangWatcher::~HangWatcher() { stop(); }

bool HangWatcher::stop() {
  stop_requested_.store(true);
  // Joining waits for a running hang callback too; in the workload that one
  // ends the process (MPI_Abort), so the caller never returns, as intended.
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  return !fired_.load();
}

void HangWatcher::run(std::chrono::steady_clock::time_point deadline, bool has_deadline) {
  pthread_setname_np(pthread_self(), "pp_hang_watch");
  const sigset_t set = watched_signals();
  while (!stop_requested_.load()) {
    timespec tick{0, 50 * 1000 * 1000};  // how soon a stop() is noticed
    const int signal_number = sigtimedwait(&set, nullptr, &tick);
    std::string reason;
    if (signal_number > 0) {
      reason = std::string("signal ") + sigabbrev_np(signal_number);
    } else if (has_deadline && std::chrono::steady_clock::now() >= deadline) {
      reason = "watchdog deadline";
    } else {
      continue;  // EAGAIN (tick) or EINTR
    }
    if (stop_requested_.load()) return;
    fired_.store(true);
    on_hang_(reason);
    return;
  }
}

}  // namespace pp
