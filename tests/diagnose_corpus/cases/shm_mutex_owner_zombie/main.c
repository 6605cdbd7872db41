// A process waits for a process-shared mutex whose owner exited while holding it
// and was never reaped: the owner is a zombie and can never unlock (the mutex is
// not robust, so no EOWNERDEAD comes either).
#include <pthread.h>
#include <sys/mman.h>

#include "corpus_roles.h"

struct shared {
  pthread_mutex_t m;
  volatile int locked;
};

int main(void) {
  struct shared* s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) return 1;
  pthread_mutexattr_t shared_mutex;
  pthread_mutexattr_init(&shared_mutex);
  pthread_mutexattr_setpshared(&shared_mutex, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(&s->m, &shared_mutex);
  pid_t owner = fork();
  if (owner == 0) {
    pthread_mutex_lock(&s->m);
    s->locked = 1;
    _exit(0);  // exits holding the mutex
  }
  while (!s->locked) usleep(1000);
  char path[64], state = 0;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)owner);
  while (state != 'Z') {  // until the owner is a zombie (never reaped: no wait() here)
    FILE* f = fopen(path, "r");
    if (f) {
      if (fscanf(f, "%*d %*s %c", &state) != 1) state = 0;
      fclose(f);
    }
    usleep(1000);
  }
  hb_role("waiter", getpid());
  hb_role("waiter.main", hb_gettid());
  hb_role("owner", owner);
  hb_role("owner.main", owner);
  hb_roles_publish(NULL);
  pthread_mutex_lock(&s->m);
  return 0;
}
