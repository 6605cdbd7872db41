// The reduced NCCL 2.17.1 service loop: npeers accounting and its exit condition
// while (stop == 0 || (stop == 1 && npeers > 0)).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "client.hpp"
#include "service_loop.hpp"
#include "tcp_socket.hpp"

namespace socket_teardown {
namespace {

using namespace std::chrono_literals;

// A service loop on its own thread, with a short poll timeout so tests are quick.
class RunningService {
 public:
  RunningService() : listener_(open_listener(false)) {
    ServiceOptions options;
    options.poll_timeout_ms = 20;
    loop_ = std::make_unique<ServiceLoop>(listener_.fd, &abort_flag_, options);
    result_ = std::async(std::launch::async, [this] { return loop_->run(); });
  }
  ~RunningService() {
    abort_flag_ = 1;
    if (result_.valid()) result_.wait();
  }
  const Endpoint& address() const { return listener_.address; }
  void abort() { abort_flag_ = 1; }
  // "Still running after going around its loop `rounds` more times": waits for that
  // many idle polls (each a pass of the exit check), bounded only to fail, not to pass.
  bool still_running_after_rounds(int rounds) {
    const int target = loop_->idle_rounds() + rounds;
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (loop_->idle_rounds() < target) {
      if (result_.wait_for(1ms) == std::future_status::ready) return false;  // it exited
      if (std::chrono::steady_clock::now() > give_up) return false;          // it stopped polling
    }
    return result_.wait_for(0ms) == std::future_status::timeout;
  }
  // Bounded wait: "finished within d".
  bool finished_within(std::chrono::milliseconds d) { return result_.wait_for(d) == std::future_status::ready; }
  int npeers() const { return loop_->npeers(); }
  const ServiceStats& stats() const { return loop_->stats(); }

 private:
  Listener listener_;
  std::atomic<int> abort_flag_{0};
  std::unique_ptr<ServiceLoop> loop_;
  std::future<int> result_;
};

TEST(SocketTeardownServiceLoop, ExitsWhenAbortedWithNoPeers) {
  RunningService service;
  service.abort();
  ASSERT_TRUE(service.finished_within(5000ms));
  EXPECT_EQ(service.npeers(), 0);
  EXPECT_EQ(service.stats().accepted, 0);
}

TEST(SocketTeardownServiceLoop, NeverExitsWithoutAbortOrStop) {
  RunningService service;
  EXPECT_TRUE(service.still_running_after_rounds(3));
}

TEST(SocketTeardownServiceLoop, ConnectCountsThePeer) {
  RunningService service;
  Connection c = connect_to_service(service.address(), false);
  EXPECT_EQ(service.npeers(), 1);
  Connection d = connect_to_service(service.address(), false);
  EXPECT_EQ(service.npeers(), 2);
  close_socket(c.fd, CloseVariant::CloseOnly);
  close_socket(d.fd, CloseVariant::CloseOnly);
}

TEST(SocketTeardownServiceLoop, AbortedServiceWaitsForEveryCountedPeer) {
  RunningService service;
  Connection first = connect_to_service(service.address(), false);
  Connection second = connect_to_service(service.address(), false);
  service.abort();
  EXPECT_TRUE(service.still_running_after_rounds(3));
  EXPECT_EQ(service.npeers(), 2);

  close_socket(first.fd, CloseVariant::CloseOnly);
  EXPECT_TRUE(service.still_running_after_rounds(3)) << "one peer is still counted";

  close_socket(second.fd, CloseVariant::CloseOnly);
  ASSERT_TRUE(service.finished_within(5000ms));
  EXPECT_EQ(service.npeers(), 0);
  EXPECT_EQ(service.stats().retirements, (std::vector<RetireReason>{RetireReason::EndOfFile, RetireReason::EndOfFile}));
}

TEST(SocketTeardownServiceLoop, CloseMessageRetiresThePeerWhileItsSocketStaysOpen) {
  RunningService service;
  Connection c = connect_to_service(service.address(), false);
  service.abort();
  send_message(c.fd, Message::Close);
  ASSERT_TRUE(service.finished_within(5000ms));
  EXPECT_EQ(service.stats().retirements, std::vector<RetireReason>{RetireReason::CloseMessage});
  close_socket(c.fd, CloseVariant::CloseOnly);
}

TEST(SocketTeardownServiceLoop, GracefulDestroyStopsTheLoopWithoutTheAbortFlag) {
  RunningService service;
  Connection c = connect_to_service(service.address(), false);
  destroy_connection(c, service.address(), TeardownPath::Graceful, CloseVariant::CloseOnly, false);
  ASSERT_TRUE(service.finished_within(5000ms));
  auto reasons = service.stats().retirements;
  std::sort(reasons.begin(), reasons.end());
  EXPECT_EQ(reasons, (std::vector<RetireReason>{RetireReason::StopMessage, RetireReason::CloseMessage}));
  EXPECT_EQ(c.fd, -1);
}

TEST(SocketTeardownServiceLoop, ResetConnectionRetiresThePeerAsAnError) {
  RunningService service;
  Connection c = connect_to_service(service.address(), false);
  service.abort();
  linger abortive{1, 0};  // close() now sends RST: POLLERR|POLLHUP on the service side
  ASSERT_EQ(setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive), 0);
  ::close(c.fd);
  ASSERT_TRUE(service.finished_within(5000ms));
  ASSERT_EQ(service.stats().retirements.size(), 1u);
  RetireReason r = service.stats().retirements[0];
  EXPECT_TRUE(r == RetireReason::HangupOrError || r == RetireReason::ReceiveError) << to_string(r);
}

TEST(SocketTeardownServiceLoop, RetireReasonsHaveNames) {
  EXPECT_EQ(to_string(RetireReason::EndOfFile), "eof");
  EXPECT_EQ(to_string(RetireReason::HangupOrError), "hangup");
  EXPECT_EQ(to_string(RetireReason::CloseMessage), "close");
  EXPECT_EQ(to_string(RetireReason::StopMessage), "stop");
}

}  // namespace
}  // namespace socket_teardown
