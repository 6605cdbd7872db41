// The reduced proxy service loop of NCCL 2.17.1 (proxy.cc, ncclProxyService):
// it accepts peers and counts them in npeers, watches an abort flag, polls with
// a 500 ms timeout, and leaves only by the original condition
//   while (stop == 0 || (stop == 1 && npeers > 0))
// so that an aborting service still waits for every counted peer to retire.
// A peer retires on EOF, POLLHUP/POLLERR, a receive error, or a Stop/Close message.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace socket_teardown {

enum class RetireReason { EndOfFile, HangupOrError, ReceiveError, StopMessage, CloseMessage };
std::string to_string(RetireReason r);  // "eof", "hangup", "recv-error", "stop", "close"

struct ServiceOptions {
  int poll_timeout_ms = 500;  // NCCL's idle poll timeout
  bool cloexec = false;       // accept4(SOCK_CLOEXEC) for accepted peers
  int max_peers = 8;          // NCCL_MAX_LOCAL_RANKS-like table size
};

// Called on the service's own thread; each may be empty.
struct ServiceHooks {
  std::function<void(int npeers)> on_accept;
  std::function<void(RetireReason, int npeers)> on_retire;
  std::function<void()> on_exit;
};

struct ServiceStats {
  int accepted = 0;
  int idle_poll_rounds = 0;               // polls that timed out with no event
  std::vector<RetireReason> retirements;  // in order
};

class ServiceLoop {
 public:
  // Takes over `listen_fd` (closed by run()). `abort_flag` may live in shared
  // memory so that another process can raise it, like NCCL's comm->abortFlag.
  ServiceLoop(int listen_fd, const std::atomic<int>* abort_flag, ServiceOptions options, ServiceHooks hooks = {});

  // Runs until the exit condition holds; returns 0, or -1 if poll/accept failed.
  int run();

  int npeers() const { return npeers_.load(); }
  const ServiceStats& stats() const { return stats_; }  // read after run() returns
  // Idle polls so far, readable while run() runs: each one is a pass of the exit check.
  int idle_rounds() const { return idle_rounds_.load(); }

 private:
  void accept_peer(std::vector<int>& peers);
  // Reads one message or notices the peer's departure; a reason when the peer retires.
  std::optional<RetireReason> service_peer(int fd, short revents, int& stop);
  void retire(std::vector<int>& peers, size_t index, RetireReason reason);

  int listen_fd_;
  const std::atomic<int>* abort_flag_;
  ServiceOptions options_;
  ServiceHooks hooks_;
  std::atomic<int> npeers_{0};
  std::atomic<int> idle_rounds_{0};
  ServiceStats stats_;
};

}  // namespace socket_teardown
