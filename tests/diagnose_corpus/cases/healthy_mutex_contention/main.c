// Four threads contending for one mutex with short critical sections: at any
// moment some wait for the mutex, but its owner always makes progress.
#include <pthread.h>

#include "corpus_roles.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile long tids[4];
static volatile unsigned long counter;

static void* work(void* arg) {
  tids[(long)arg] = hb_gettid();
  for (;;) {
    pthread_mutex_lock(&m);
    for (int i = 0; i < 2000; ++i) counter = counter * 3 + 1;
    pthread_mutex_unlock(&m);
  }
  return NULL;
}

int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; ++i) pthread_create(&t[i], NULL, work, (void*)i);
  for (int i = 0; i < 4; ++i)
    while (!tids[i]) usleep(1000);
  hb_role("p", getpid());
  for (int i = 0; i < 4; ++i) {
    char name[16];
    snprintf(name, sizeof name, "p.t%d", i);
    hb_role(name, tids[i]);
  }
  hb_roles_publish(NULL);
  pthread_join(t[0], NULL);
  return 0;
}
