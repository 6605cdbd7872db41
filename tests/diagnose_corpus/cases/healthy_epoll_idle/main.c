// An idle event-loop server: epoll_wait on a listening TCP socket and an eventfd,
// with a one-second tick.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "corpus_roles.h"

int main(void) {
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) || listen(listener, 8)) return 1;
  int wake = eventfd(0, 0);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN};
  ev.data.fd = listener;
  epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
  ev.data.fd = wake;
  epoll_ctl(ep, EPOLL_CTL_ADD, wake, &ev);
  hb_role("server", getpid());
  hb_role("server.main", hb_gettid());
  hb_roles_publish(NULL);
  for (;;) {
    struct epoll_event ready[8];
    int n = epoll_wait(ep, ready, 8, 1000);
    for (int i = 0; i < n; ++i) {
      if (ready[i].data.fd == listener) {
        int fd = accept(listener, NULL, NULL);
        if (fd >= 0) close(fd);
      }
    }
  }
}
