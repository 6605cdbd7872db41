// A program waits in pthread_join for a worker that computes: the join returns when the
// work is done. Healthy, though the joined thread never blocks while diagnose looks.
#include <pthread.h>

#include "corpus_roles.h"

static volatile long worker_tid;
static volatile double sink;

static void* worker(void* arg) {
  (void)arg;
  worker_tid = hb_gettid();
  for (long i = 0; i < 4000000000L; ++i) sink += (double)i * 1e-9;  // minutes of work
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  while (!worker_tid) usleep(1000);
  hb_role("p", getpid());
  hb_role("p.main", hb_gettid());
  hb_role("p.worker", worker_tid);
  hb_roles_publish(NULL);
  pthread_join(t, NULL);
  return 0;
}
