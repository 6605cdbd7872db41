// Two processes deadlocked on two process-shared mutexes in shared memory: a
// holds A and wants B, b holds B and wants A.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "corpus_roles.h"

struct shared {
  pthread_mutex_t a, b;
  pthread_barrier_t both_hold;
};

static void play(const char* name, pthread_mutex_t* mine, pthread_mutex_t* theirs, pthread_barrier_t* both_hold) {
  char key[32];
  pthread_mutex_lock(mine);
  pthread_barrier_wait(both_hold);
  hb_role(name, getpid());
  snprintf(key, sizeof key, "%s.main", name);
  hb_role(key, hb_gettid());
  hb_roles_publish(name);
  pthread_mutex_lock(theirs);
}

int main(void) {
  struct shared* s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) return 1;
  pthread_mutexattr_t shared_mutex;
  pthread_mutexattr_init(&shared_mutex);
  pthread_mutexattr_setpshared(&shared_mutex, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(&s->a, &shared_mutex);
  pthread_mutex_init(&s->b, &shared_mutex);
  pthread_barrierattr_t shared_barrier;
  pthread_barrierattr_init(&shared_barrier);
  pthread_barrierattr_setpshared(&shared_barrier, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(&s->both_hold, &shared_barrier, 2);
  if (fork() == 0) {
    play("b", &s->b, &s->a, &s->both_hold);
    return 0;
  }
  play("a", &s->a, &s->b, &s->both_hold);
  wait(NULL);
  return 0;
}
