// The rank's side of the proxy connection: connect (with the init round trip
// NCCL's init makes), then teardown the way ncclProxyDestroy does it.
#pragma once

#include <string>

#include "tcp_socket.hpp"

namespace socket_teardown {

// How ncclSocketClose releases the socket.
enum class CloseVariant {
  CloseOnly,          // NCCL 2.17.1: close(fd) drops one descriptor alias
  ShutdownThenClose,  // NCCL 2.18.1: shutdown(fd, SHUT_RDWR); close(fd)
};

// Which destroy path runs: abort sends no messages, graceful sends Stop and Close.
enum class TeardownPath { Abort, Graceful };

struct Connection {
  int fd = -1;
  Endpoint local;   // the client end
  Endpoint remote;  // the service's accepted end
};

// Connects to the service and makes one Init round trip, so that on return the
// service has accepted and counted the connection (npeers includes it).
// Throws std::system_error on failure.
Connection connect_to_service(const Endpoint& service, bool cloexec);

// ncclSocketClose, in the chosen version. Safe on fd < 0.
void close_socket(int fd, CloseVariant variant);

// ncclProxyDestroy for one cached connection: on the graceful path, a Stop over a
// fresh connection to the service and a Close on the cached one; on the abort
// path, nothing but the close. The connection's fd is -1 afterwards.
void destroy_connection(Connection& connection, const Endpoint& service, TeardownPath path, CloseVariant variant,
                        bool cloexec);

}  // namespace socket_teardown
