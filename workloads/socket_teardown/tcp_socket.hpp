// Loopback TCP plumbing shared by the service and the client: a listener, a
// connection, the 4-tuple of a connection, and the int-sized control messages
// NCCL's proxy protocol exchanges (ncclProxyMsgInit/Stop/Close).
#pragma once

#include <cstdint>
#include <string>

namespace socket_teardown {

// The message types a client sends to the service, one int each.
enum class Message : int { Init = 0, Stop = 1, Close = 2 };

struct Endpoint {
  uint32_t ipv4_host_order = 0;  // 127.0.0.1 = 0x7F000001
  uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
};

std::string to_string(const Endpoint& e);  // "127.0.0.1:40123"

struct Listener {
  int fd = -1;
  Endpoint address;
};

// A listening socket on 127.0.0.1 with a kernel-chosen port. `cloexec` opens it
// SOCK_CLOEXEC (NCCL 2.17.1 never does). Throws std::system_error on failure.
Listener open_listener(bool cloexec);

// A connected socket to `to`. Throws std::system_error on failure.
int connect_to(const Endpoint& to, bool cloexec);

Endpoint local_endpoint(int fd);
Endpoint peer_endpoint(int fd);

// Sends one message; throws on failure.
void send_message(int fd, Message m);
void send_int(int fd, int value);

// Reads exactly one int. Returns 1 on success, 0 on EOF, -1 on error (errno kept).
int recv_int(int fd, int& value);

}  // namespace socket_teardown
