#include "tcp_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace socket_teardown {
namespace {

constexpr uint32_t kLoopback = 0x7F000001;

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

sockaddr_in to_sockaddr(const Endpoint& e) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(e.ipv4_host_order);
  sa.sin_port = htons(e.port);
  return sa;
}

Endpoint from_sockaddr(const sockaddr_in& sa) { return Endpoint{ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port)}; }

int socket_type(bool cloexec) { return SOCK_STREAM | (cloexec ? SOCK_CLOEXEC : 0); }

}  // namespace

std::string to_string(const Endpoint& e) {
  const uint32_t a = e.ipv4_host_order;
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xFF) + "." + std::to_string((a >> 8) & 0xFF) +
         "." + std::to_string(a & 0xFF) + ":" + std::to_string(e.port);
}

Listener open_listener(bool cloexec) {
  int fd = ::socket(AF_INET, socket_type(cloexec), 0);
  if (fd < 0) throw_errno("socket");
  sockaddr_in sa = to_sockaddr(Endpoint{kLoopback, 0});
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 16) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    throw_errno("bind/listen on 127.0.0.1");
  }
  return Listener{fd, local_endpoint(fd)};
}

int connect_to(const Endpoint& to, bool cloexec) {
  int fd = ::socket(AF_INET, socket_type(cloexec), 0);
  if (fd < 0) throw_errno("socket");
  sockaddr_in sa = to_sockaddr(to);
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    throw_errno("connect");
  }
  return fd;
}

Endpoint local_endpoint(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) throw_errno("getsockname");
  return from_sockaddr(sa);
}

Endpoint peer_endpoint(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) throw_errno("getpeername");
  return from_sockaddr(sa);
}

void send_int(int fd, int value) {
  const char* p = reinterpret_cast<const char*>(&value);
  size_t left = sizeof value;
  while (left > 0) {
    ssize_t n = ::send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno("send");
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void send_message(int fd, Message m) { send_int(fd, static_cast<int>(m)); }

int recv_int(int fd, int& value) {
  char* p = reinterpret_cast<char*>(&value);
  size_t got = 0;
  while (got < sizeof value) {
    ssize_t n = ::recv(fd, p + got, sizeof value - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return 0;
    got += static_cast<size_t>(n);
  }
  return 1;
}

}  // namespace socket_teardown
