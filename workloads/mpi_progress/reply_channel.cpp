#include "reply_channel.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace hangbench::mpi_progress {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("reply channel: " + what + ": " + std::strerror(errno));
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

}  // namespace

ReplyChannel::ReplyChannel(int listen_fd, int peer_fd, std::uint16_t port)
    : listen_fd_(listen_fd), peer_fd_(peer_fd), port_(port) {}

ReplyChannel::ReplyChannel(ReplyChannel&& other) noexcept
    : listen_fd_(other.listen_fd_), peer_fd_(other.peer_fd_), port_(other.port_) {
  other.listen_fd_ = other.peer_fd_ = -1;
}

ReplyChannel::~ReplyChannel() {
  if (peer_fd_ >= 0) ::close(peer_fd_);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

ReplyChannel ReplyChannel::listen_on_loopback() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  sockaddr_in addr = loopback(0);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind 127.0.0.1");
  if (::listen(fd, 1) != 0) fail("listen");
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) fail("getsockname");
  return ReplyChannel(fd, -1, ntohs(addr.sin_port));
}

ReplyChannel ReplyChannel::connect_to_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  sockaddr_in addr = loopback(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    fail("connect 127.0.0.1:" + std::to_string(port));
  }
  return ReplyChannel(-1, fd, port);
}

void ReplyChannel::accept_peer() {
  int fd;
  do {
    fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail("accept");
  peer_fd_ = fd;
}

void ReplyChannel::write_u64(std::uint64_t value) {
  const char* p = reinterpret_cast<const char*>(&value);
  std::size_t left = sizeof value;
  while (left > 0) {
    const ssize_t n = ::write(peer_fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::uint64_t ReplyChannel::read_u64() {
  std::uint64_t value = 0;
  char* p = reinterpret_cast<char*>(&value);
  std::size_t left = sizeof value;
  while (left > 0) {
    const ssize_t n = ::read(peer_fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      errno = ECONNRESET;
      fail("peer closed before replying");
    }
    if (n < 0) fail("read");
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return value;
}

}  // namespace hangbench::mpi_progress
