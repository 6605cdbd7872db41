// The main thread holds a mutex and waits in pthread_join for a thread that is
// blocked on that mutex: main waits for t (join), t waits for main (mutex owner).
#include <pthread.h>

#include "corpus_roles.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile long worker_tid;

static void* worker(void* arg) {
  (void)arg;
  worker_tid = hb_gettid();
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_mutex_lock(&m);
  pthread_create(&t, NULL, worker, NULL);
  while (!worker_tid) usleep(1000);
  usleep(100 * 1000);  // the worker reaches pthread_mutex_lock
  hb_role("p", getpid());
  hb_role("p.main", hb_gettid());
  hb_role("p.worker", worker_tid);
  hb_roles_publish(NULL);
  pthread_join(t, NULL);
  return 0;
}
