// An idle TCP server waiting in accept for a client that has not come yet.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "corpus_roles.h"

int main(void) {
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) || listen(listener, 8)) return 1;
  hb_role("server", getpid());
  hb_role("server.main", hb_gettid());
  hb_roles_publish(NULL);
  for (;;) {
    int fd = accept(listener, NULL, NULL);
    if (fd >= 0) close(fd);
  }
}
