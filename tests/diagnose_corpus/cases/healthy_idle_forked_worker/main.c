// An idle worker: a forked child waits in read for its next task on a pipe while
// its parent, which holds the write end, computes (it would send a task later).
#include "corpus_roles.h"

int main(void) {
  int tasks[2];
  if (pipe(tasks)) return 1;
  pid_t worker = fork();
  if (worker == 0) {
    close(tasks[1]);
    char task[64];
    while (read(tasks[0], task, sizeof task) > 0) {
    }
    return 0;
  }
  close(tasks[0]);
  hb_role("parent", getpid());
  hb_role("parent.main", hb_gettid());
  hb_role("worker", worker);
  hb_role("worker.main", worker);
  hb_roles_publish(NULL);
  volatile unsigned long x = 1;
  for (;;) x = x * 6364136223846793005UL + 1442695040888963407UL;
}
