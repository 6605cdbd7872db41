// Two processes joined by a Unix stream socketpair, each blocked in recv waiting
// for the other to send first.
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
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 1;
  if (fork() == 0) {
    close(sv[0]);
    wait_for_peer("b", sv[1]);
    return 0;
  }
  close(sv[1]);
  wait_for_peer("a", sv[0]);
  return 0;
}
