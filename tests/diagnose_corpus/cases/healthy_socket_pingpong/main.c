// Two processes playing ping-pong over a Unix socketpair, each pausing 5 ms
// before it answers: at any moment one waits in recv for the other, who is
// about to send.
#include <sys/socket.h>

#include "corpus_roles.h"

static void play(int fd, int serve) {
  char ball = 'x';
  if (serve) (void)!send(fd, &ball, 1, 0);
  while (recv(fd, &ball, 1, 0) == 1) {
    usleep(5000);
    (void)!send(fd, &ball, 1, 0);
  }
}

int main(void) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return 1;
  pid_t b = fork();
  if (b == 0) {
    close(sv[0]);
    play(sv[1], 0);
    return 0;
  }
  close(sv[1]);
  hb_role("a", getpid());
  hb_role("a.main", hb_gettid());
  hb_role("b", b);
  hb_role("b.main", b);
  hb_roles_publish(NULL);
  play(sv[0], 1);
  return 0;
}
