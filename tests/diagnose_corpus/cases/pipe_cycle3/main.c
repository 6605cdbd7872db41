// Three processes in a pipe cycle: a reads the pipe that b would write, b the one
// that c would write, c the one that a would write. Each closes every other end,
// so each write end has exactly one holder, itself blocked in read.
#include <sys/wait.h>

#include "corpus_roles.h"

static int ab[2], bc[2], ca[2];  // [0] read end, [1] write end; ab: b writes, a reads

static void keep_only(int read_fd, int write_fd) {
  int all[] = {ab[0], ab[1], bc[0], bc[1], ca[0], ca[1]};
  for (int i = 0; i < 6; ++i)
    if (all[i] != read_fd && all[i] != write_fd) close(all[i]);
}

static void play(const char* name, int read_fd, int write_fd) {
  char key[32], byte;
  keep_only(read_fd, write_fd);
  hb_role(name, getpid());
  snprintf(key, sizeof key, "%s.main", name);
  hb_role(key, hb_gettid());
  hb_roles_publish(name);
  if (read(read_fd, &byte, 1) == 1) (void)!write(write_fd, &byte, 1);
}

int main(void) {
  if (pipe(ab) || pipe(bc) || pipe(ca)) return 1;
  if (fork() == 0) {
    play("b", bc[0], ab[1]);
    return 0;
  }
  if (fork() == 0) {
    play("c", ca[0], bc[1]);
    return 0;
  }
  play("a", ab[0], ca[1]);
  while (wait(NULL) > 0) {
  }
  return 0;
}
