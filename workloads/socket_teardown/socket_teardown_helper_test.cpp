// The forked helper: what it holds, how long it lives.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.hpp"
#include "helper.hpp"
#include "tcp_socket.hpp"
#include "tcp_state.hpp"

namespace socket_teardown {
namespace {

struct Pair {
  int client = -1, server = -1;
};

Pair connected_pair() {
  Listener listener = open_listener(false);
  Pair p;
  p.client = connect_to(listener.address, false);
  p.server = ::accept(listener.fd, nullptr, nullptr);
  ::close(listener.fd);
  return p;
}

bool sees_eof_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, ms) <= 0) return false;
  char byte;
  return ::recv(fd, &byte, 1, 0) == 0;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(SocketTeardownHelper, ForkedHelperHoldsTheClientEndUntilItDies) {
  Pair p = connected_pair();
  const Endpoint client_end = local_endpoint(p.client), server_end = peer_endpoint(p.client);
  pid_t helper = spawn_helper(HelperOptions{HelperStart::Fork, 0});
  close_socket(p.client, CloseVariant::CloseOnly);
  // The helper's duplicate kept close() from sending a FIN (that would have left
  // ESTABLISHED within close() itself), so the server has nothing to read.
  EXPECT_EQ(sample_tcp_state(client_end, server_end), "ESTABLISHED");
  EXPECT_FALSE(sees_eof_within(p.server, 0));
  ASSERT_EQ(::kill(helper, SIGTERM), 0);
  EXPECT_EQ(wait_exit_code(helper), 128 + SIGTERM);
  EXPECT_TRUE(sees_eof_within(p.server, 5000));
  ::close(p.server);
}

TEST(SocketTeardownHelper, CloseRangeHelperHoldsNothing) {
  Pair p = connected_pair();
  pid_t helper = spawn_helper(HelperOptions{HelperStart::ForkCloseRange, 0});
  close_socket(p.client, CloseVariant::CloseOnly);
  EXPECT_TRUE(sees_eof_within(p.server, 5000));
  EXPECT_EQ(::kill(helper, 0), 0) << "the helper is alive but released its aliases";
  ::kill(helper, SIGTERM);
  wait_exit_code(helper);
  ::close(p.server);
}

TEST(SocketTeardownHelper, HelperWithALifetimeExitsOnItsOwn) {
  pid_t helper = spawn_helper(HelperOptions{HelperStart::Fork, 0.2});
  EXPECT_EQ(wait_exit_code(helper), 0);
}

TEST(SocketTeardownHelper, HelperForkedBeforeTheConnectionCannotHoldIt) {
  pid_t helper = spawn_helper(HelperOptions{HelperStart::Fork, 0});
  Pair p = connected_pair();
  close_socket(p.client, CloseVariant::CloseOnly);
  EXPECT_TRUE(sees_eof_within(p.server, 5000));
  ::kill(helper, SIGTERM);
  wait_exit_code(helper);
  ::close(p.server);
}

}  // namespace
}  // namespace socket_teardown
