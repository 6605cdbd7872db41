// Peers of unix sockets through sock_diag netlink (what `ss -xp` uses): /proc/net/unix
// does not say which socket is the other end of a socketpair or connection.
#include "inspect/unix_peers.hpp"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace hangbench::diagnose {

std::map<std::uint64_t, std::uint64_t> read_unix_peers() {
  std::map<std::uint64_t, std::uint64_t> peers;
  int sock = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (sock < 0) return peers;
  struct {
    nlmsghdr header;
    unix_diag_req request;
  } message{};
  message.header.nlmsg_len = sizeof message;
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  message.request.sdiag_family = AF_UNIX;
  message.request.udiag_states = ~0u;
  message.request.udiag_show = UDIAG_SHOW_PEER;
  if (::send(sock, &message, sizeof message, 0) < 0) {
    ::close(sock);
    return peers;
  }
  alignas(nlmsghdr) char buffer[32768];
  for (bool done = false; !done;) {
    ssize_t n = ::recv(sock, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, static_cast<unsigned>(n)); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
        done = true;
        break;
      }
      auto* diag = static_cast<unix_diag_msg*>(NLMSG_DATA(h));
      int attr_len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *diag));
      for (auto* a = reinterpret_cast<rtattr*>(diag + 1); RTA_OK(a, attr_len); a = RTA_NEXT(a, attr_len)) {
        if (a->rta_type == UNIX_DIAG_PEER) {
          std::uint32_t peer = 0;
          std::memcpy(&peer, RTA_DATA(a), sizeof peer);
          if (peer != 0) peers[diag->udiag_ino] = peer;
        }
      }
    }
  }
  ::close(sock);
  return peers;
}

}  // namespace hangbench::diagnose
