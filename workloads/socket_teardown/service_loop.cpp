#include "service_loop.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "tcp_socket.hpp"

namespace socket_teardown {

std::string to_string(RetireReason r) {
  switch (r) {
    case RetireReason::EndOfFile:
      return "eof";
    case RetireReason::HangupOrError:
      return "hangup";
    case RetireReason::ReceiveError:
      return "recv-error";
    case RetireReason::StopMessage:
      return "stop";
    case RetireReason::CloseMessage:
      return "close";
  }
  return "unknown";
}

ServiceLoop::ServiceLoop(int listen_fd, const std::atomic<int>* abort_flag, ServiceOptions options, ServiceHooks hooks)
    : listen_fd_(listen_fd), abort_flag_(abort_flag), options_(options), hooks_(std::move(hooks)) {}

int ServiceLoop::run() {
  std::vector<int> peers;
  int stop = 0;
  int result = 0;
  // NCCL 2.17.1: "Even if local comm aborts, we cannot let proxy thread exit if
  // we still have peer connections."
  while (stop == 0 || (stop == 1 && npeers_.load() > 0)) {
    if (abort_flag_->load() != 0) stop = 1;

    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    for (int fd : peers) fds.push_back({fd, POLLIN, 0});
    int ready = ::poll(fds.data(), fds.size(), options_.poll_timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      result = -1;
      break;
    }
    if (ready == 0) {
      ++stats_.idle_poll_rounds;
      idle_rounds_.fetch_add(1);
      continue;
    }
    // Peers first, from the back, so that retiring one keeps earlier indices valid.
    for (size_t i = fds.size() - 1; i >= 1; --i) {
      if (fds[i].revents == 0) continue;
      if (auto reason = service_peer(fds[i].fd, fds[i].revents, stop)) retire(peers, i - 1, *reason);
    }
    if (fds[0].revents & POLLIN) accept_peer(peers);
  }
  for (int fd : peers) ::close(fd);
  ::close(listen_fd_);
  if (hooks_.on_exit) hooks_.on_exit();
  return result;
}

void ServiceLoop::accept_peer(std::vector<int>& peers) {
  int fd = ::accept4(listen_fd_, nullptr, nullptr, options_.cloexec ? SOCK_CLOEXEC : 0);
  if (fd < 0) return;  // the connecting peer gave up; nothing was counted
  if (static_cast<int>(peers.size()) >= options_.max_peers) {
    ::close(fd);  // NCCL would WARN and refuse; the table is full
    return;
  }
  peers.push_back(fd);
  ++stats_.accepted;
  int now = ++npeers_;
  if (hooks_.on_accept) hooks_.on_accept(now);
}

std::optional<RetireReason> ServiceLoop::service_peer(int fd, short revents, int& stop) {
  if (revents & POLLIN) {
    int type = 0;
    int got = recv_int(fd, type);
    if (got == 0) return RetireReason::EndOfFile;  // a peer-visible close arrived
    if (got < 0) return RetireReason::ReceiveError;
    switch (static_cast<Message>(type)) {
      case Message::Init:
        // The reply ncclProxyCallBlocking waits for; a failed reply retires the peer.
        try {
          send_int(fd, 0);
        } catch (const std::system_error&) {
          return RetireReason::ReceiveError;
        }
        break;
      case Message::Stop:
        stop = 1;
        return RetireReason::StopMessage;
      case Message::Close:
        return RetireReason::CloseMessage;
    }
  }
  if (revents & (POLLHUP | POLLERR | POLLNVAL)) return RetireReason::HangupOrError;
  return std::nullopt;
}

void ServiceLoop::retire(std::vector<int>& peers, size_t index, RetireReason reason) {
  ::close(peers[index]);
  peers.erase(peers.begin() + static_cast<std::ptrdiff_t>(index));
  stats_.retirements.push_back(reason);
  int now = --npeers_;
  if (hooks_.on_retire) hooks_.on_retire(reason, now);
}

}  // namespace socket_teardown
