// Two threads deadlocked on two mutexes: t1 holds A and wants B, t2 holds B and
// wants A. The main thread waits in pthread_join for t1 (outside the cycle).
#include <pthread.h>

#include "corpus_roles.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static volatile long tid1, tid2;

static void* first(void* arg) {
  (void)arg;
  tid1 = hb_gettid();
  pthread_mutex_lock(&a);
  pthread_barrier_wait(&both_hold);
  pthread_mutex_lock(&b);
  return NULL;
}

static void* second(void* arg) {
  (void)arg;
  tid2 = hb_gettid();
  pthread_mutex_lock(&b);
  pthread_barrier_wait(&both_hold);
  pthread_mutex_lock(&a);
  return NULL;
}

int main(void) {
  pthread_t t1, t2;
  pthread_barrier_init(&both_hold, NULL, 3);
  pthread_create(&t1, NULL, first, NULL);
  pthread_create(&t2, NULL, second, NULL);
  pthread_barrier_wait(&both_hold);
  // Published once both threads wait past the barrier (under PI, the second one's lock is
  // refused by the kernel as a deadlock, and glibc parks it on a word of its own stack).
  hb_wait_in_futex_outside(tid1, &both_hold, sizeof both_hold);
  hb_wait_in_futex_outside(tid2, &both_hold, sizeof both_hold);
  hb_role("p", getpid());
  hb_role("p.t1", tid1);
  hb_role("p.t2", tid2);
  hb_roles_publish(NULL);
  pthread_join(t1, NULL);
  return 0;
}
