// A process blocked in recv on a TCP connection whose peer process is stopped
// (SIGSTOP): it cannot send until someone sends it SIGCONT.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "corpus_roles.h"

int main(void) {
  struct sockaddr_in addr = {0};
  socklen_t len = sizeof addr;
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) || listen(listener, 1)) return 1;
  getsockname(listener, (struct sockaddr*)&addr, &len);
  pid_t peer = fork();
  if (peer == 0) {
    close(listener);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr*)&addr, sizeof addr)) return 1;
    raise(SIGSTOP);
    (void)!send(fd, "x", 1, 0);
    return 0;
  }
  int fd = accept(listener, NULL, NULL);
  close(listener);
  int status;
  waitpid(peer, &status, WUNTRACED);  // returns once the peer has stopped
  hb_role("waiter", getpid());
  hb_role("waiter.main", hb_gettid());
  hb_role("stopped", peer);
  hb_role("stopped.main", peer);
  hb_roles_publish(NULL);
  char byte;
  (void)!recv(fd, &byte, 1, 0);
  return 0;
}
