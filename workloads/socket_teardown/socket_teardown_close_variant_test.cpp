// The mechanism itself: with a forked holder of the client's descriptor, close()
// alone is not peer-visible until the holder lets go; shutdown() is at once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "client.hpp"
#include "tcp_socket.hpp"
#include "tcp_state.hpp"

namespace socket_teardown {
namespace {

// A connected loopback pair plus a forked child that holds every descriptor
// (the client end among them) until released.
class HeldConnection : public ::testing::Test {
 protected:
  void SetUp() override {
    Listener listener = open_listener(false);
    client_ = connect_to(listener.address, false);
    server_ = ::accept(listener.fd, nullptr, nullptr);
    ASSERT_GE(server_, 0);
    ::close(listener.fd);
    client_end_ = local_endpoint(client_);
    service_end_ = peer_endpoint(client_);
    int release[2];
    ASSERT_EQ(::pipe(release), 0);
    holder_ = ::fork();
    ASSERT_GE(holder_, 0);
    if (holder_ == 0) {
      ::close(release[1]);
      char byte;
      while (::read(release[0], &byte, 1) < 0) {
      }
      _exit(0);
    }
    ::close(release[0]);
    release_fd_ = release[1];
  }
  void TearDown() override {
    release_holder();
    if (server_ >= 0) ::close(server_);
  }
  void release_holder() {
    if (holder_ <= 0) return;
    ::close(release_fd_);
    ::waitpid(holder_, nullptr, 0);
    holder_ = -1;
  }
  bool holder_alive() const { return holder_ > 0 && ::kill(holder_, 0) == 0; }
  // True when the server end becomes readable within `ms` and reads EOF.
  bool server_sees_eof_within(int ms) {
    pollfd p{server_, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return false;
    char byte;
    return ::recv(server_, &byte, 1, 0) == 0;
  }

  int client_ = -1, server_ = -1, release_fd_ = -1;
  pid_t holder_ = -1;
  Endpoint client_end_, service_end_;
};

TEST_F(HeldConnection, CloseOnlyIsInvisibleWhileTheHolderLives) {
  close_socket(client_, CloseVariant::CloseOnly);
  EXPECT_TRUE(holder_alive());
  // A FIN would have left ESTABLISHED within close() itself: none was sent, and
  // none can be while the holder keeps its duplicate.
  EXPECT_EQ(sample_tcp_state(client_end_, service_end_), "ESTABLISHED") << "the kernel still sees the connection open";
  EXPECT_FALSE(server_sees_eof_within(0)) << "nothing for the peer to read";

  release_holder();
  EXPECT_TRUE(server_sees_eof_within(5000)) << "the holder's exit is the final close";
}

TEST_F(HeldConnection, ShutdownIsVisibleAtOnceDespiteTheHolder) {
  close_socket(client_, CloseVariant::ShutdownThenClose);
  EXPECT_TRUE(server_sees_eof_within(5000));
  EXPECT_TRUE(holder_alive()) << "the holder still owns its duplicate, which decides nothing now";
  EXPECT_EQ(sample_tcp_state(service_end_, client_end_), "CLOSE_WAIT");
}

TEST(SocketTeardownCloseVariant, CloseOnlyWithoutAHolderIsVisible) {
  Listener listener = open_listener(false);
  int client = connect_to(listener.address, false);
  int server = ::accept(listener.fd, nullptr, nullptr);
  ASSERT_GE(server, 0);
  close_socket(client, CloseVariant::CloseOnly);
  pollfd p{server, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  char byte;
  EXPECT_EQ(::recv(server, &byte, 1, 0), 0);
  ::close(server);
  ::close(listener.fd);
}

// No descriptor: no system call at all (errno untouched), and no other descriptor closed.
TEST(SocketTeardownCloseVariant, ClosingNothingIsHarmless) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  for (CloseVariant variant : {CloseVariant::CloseOnly, CloseVariant::ShutdownThenClose}) {
    errno = 0;
    close_socket(-1, variant);
    EXPECT_EQ(errno, 0);
  }
  EXPECT_NE(::fcntl(pipe_fds[0], F_GETFD), -1);
  EXPECT_NE(::fcntl(pipe_fds[1], F_GETFD), -1);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

}  // namespace
}  // namespace socket_teardown
