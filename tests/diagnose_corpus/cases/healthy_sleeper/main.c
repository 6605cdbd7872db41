// A process that sleeps in a nanosleep loop (a cron-like waiter).
#include <time.h>

#include "corpus_roles.h"

int main(void) {
  hb_role("p", getpid());
  hb_role("p.main", hb_gettid());
  hb_roles_publish(NULL);
  struct timespec tick = {0, 200 * 1000 * 1000};
  for (;;) nanosleep(&tick, NULL);
}
