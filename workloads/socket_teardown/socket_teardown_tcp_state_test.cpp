// Reading /proc/net/tcp: parsing rows, naming states, finding a 4-tuple.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_socket.hpp"
#include "tcp_state.hpp"

namespace socket_teardown {
namespace {

// Two rows of the seed's experiment 1 and a listener, as the kernel prints them.
const char* kProcNetTcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 0100007F:98A7 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 "
    "0000000000000000 100 0 0 10 0\n"
    "   1: 0100007F:98A7 0100007F:BB4E 01 00000000:00000000 00:00000000 00000000     0        0 1002 1 "
    "0000000000000000 20 4 30 10 -1\n"
    "   2: 0100007F:BB4E 0100007F:98A7 01 00000000:00000000 00:00000000 00000000  1000        0 1003 1 "
    "0000000000000000 20 4 30 10 -1\n"
    "   3: garbage line\n";

constexpr uint32_t kLoopback = 0x7F000001;

TEST(SocketTeardownTcpState, ParsesRowsAndSkipsTheHeaderAndGarbage) {
  auto rows = parse_proc_net_tcp(kProcNetTcp);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].local, (Endpoint{kLoopback, 0x98A7}));
  EXPECT_EQ(rows[0].remote, (Endpoint{0, 0}));
  EXPECT_EQ(rows[0].state, 0x0A);
  EXPECT_EQ(rows[2].local, (Endpoint{kLoopback, 0xBB4E}));
  EXPECT_EQ(rows[2].state, 1);
  EXPECT_EQ(rows[2].inode, 1003);
}

TEST(SocketTeardownTcpState, NamesTheKernelStates) {
  EXPECT_EQ(tcp_state_name(1), "ESTABLISHED");
  EXPECT_EQ(tcp_state_name(5), "FIN_WAIT2");
  EXPECT_EQ(tcp_state_name(8), "CLOSE_WAIT");
  EXPECT_EQ(tcp_state_name(10), "LISTEN");
  EXPECT_EQ(tcp_state_name(0x42), "UNKNOWN(66)");
}

TEST(SocketTeardownTcpState, FindsTheExactPairOnly) {
  auto rows = parse_proc_net_tcp(kProcNetTcp);
  Endpoint a{kLoopback, 0xBB4E}, b{kLoopback, 0x98A7};
  EXPECT_EQ(find_tcp_state(rows, a, b), "ESTABLISHED");
  EXPECT_EQ(find_tcp_state(rows, b, Endpoint{0, 0}), "LISTEN");
  EXPECT_FALSE(find_tcp_state(rows, a, Endpoint{kLoopback, 1}).has_value());
}

TEST(SocketTeardownTcpState, EmptyTextHasNoRows) { EXPECT_TRUE(parse_proc_net_tcp("").empty()); }

TEST(SocketTeardownTcpState, SamplesALiveLoopbackConnection) {
  Listener listener = open_listener(false);
  int client = connect_to(listener.address, false);
  int server = ::accept(listener.fd, nullptr, nullptr);
  ASSERT_GE(server, 0);
  Endpoint client_end = local_endpoint(client), service_end = peer_endpoint(client);
  EXPECT_EQ(to_string(service_end), "127.0.0.1:" + std::to_string(listener.address.port));
  EXPECT_EQ(sample_tcp_state(client_end, service_end), "ESTABLISHED");
  EXPECT_EQ(sample_tcp_state(service_end, client_end), "ESTABLISHED");
  EXPECT_EQ(sample_tcp_state(listener.address, Endpoint{0, 0}), "LISTEN");

  ::shutdown(client, SHUT_WR);
  pollfd p{server, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);  // the FIN has arrived
  EXPECT_EQ(sample_tcp_state(service_end, client_end), "CLOSE_WAIT");
  ::close(client);
  ::close(server);
  ::close(listener.fd);
  EXPECT_EQ(sample_tcp_state(Endpoint{kLoopback, 1}, Endpoint{kLoopback, 2}), "ABSENT");
}

}  // namespace
}  // namespace socket_teardown
