#include "client.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace socket_teardown {

Connection connect_to_service(const Endpoint& service, bool cloexec) {
  Connection c;
  c.fd = connect_to(service, cloexec);
  c.local = local_endpoint(c.fd);
  c.remote = peer_endpoint(c.fd);
  send_message(c.fd, Message::Init);
  int reply = 0;
  if (recv_int(c.fd, reply) != 1) {
    int saved = errno;
    ::close(c.fd);
    throw std::system_error(saved, std::generic_category(), "no reply to the init message");
  }
  return c;
}

void close_socket(int fd, CloseVariant variant) {
  if (fd < 0) return;
  // 2.18.1's comment: shutdown() is not affected by the refcount of fd, close() is.
  if (variant == CloseVariant::ShutdownThenClose) ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

void destroy_connection(Connection& connection, const Endpoint& service, TeardownPath path, CloseVariant variant,
                        bool cloexec) {
  if (path == TeardownPath::Graceful) {
    int stop_fd = connect_to(service, cloexec);
    send_message(stop_fd, Message::Stop);
    close_socket(stop_fd, variant);
    send_message(connection.fd, Message::Close);
  }
  close_socket(connection.fd, variant);
  connection.fd = -1;
}

}  // namespace socket_teardown
