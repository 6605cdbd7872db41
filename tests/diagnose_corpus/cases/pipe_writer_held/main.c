// A reader blocked on a pipe whose only write end is held by a forked child that
// sits idle and never writes (nor exits, which would give the reader EOF).
#include <sys/wait.h>

#include "corpus_roles.h"

int main(void) {
  int fds[2];
  if (pipe(fds)) return 1;
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    for (;;) pause();
  }
  close(fds[1]);
  hb_role("reader", getpid());
  hb_role("reader.main", hb_gettid());
  hb_role("holder", child);
  hb_role("holder.main", child);
  hb_roles_publish(NULL);
  char byte;
  (void)!read(fds[0], &byte, 1);
  return 0;
}
