// A process that computes in a busy loop on the CPU.
#include "corpus_roles.h"

int main(void) {
  hb_role("p", getpid());
  hb_role("p.main", hb_gettid());
  hb_roles_publish(NULL);
  volatile unsigned long x = 1;
  for (;;) x = x * 6364136223846793005UL + 1442695040888963407UL;
}
