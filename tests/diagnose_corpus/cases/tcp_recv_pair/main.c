// Two processes joined by one TCP connection over loopback, each blocked in recv
// waiting for the other to send first.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "corpus_roles.h"

static void wait_for_peer(const char* name, int fd) {
  char key[32], byte;
  hb_role(name, getpid());
  snprintf(key, sizeof key, "%s.main", name);
  hb_role(key, hb_gettid());
  hb_roles_publish(name);
  (void)!recv(fd, &byte, 1, 0);
}

int main(void) {
  struct sockaddr_in addr = {0};
  socklen_t len = sizeof addr;
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) || listen(listener, 1)) return 1;
  getsockname(listener, (struct sockaddr*)&addr, &len);
  if (fork() == 0) {
    close(listener);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr*)&addr, sizeof addr)) return 1;
    wait_for_peer("b", fd);
    return 0;
  }
  int fd = accept(listener, NULL, NULL);
  close(listener);
  wait_for_peer("a", fd);
  return 0;
}
