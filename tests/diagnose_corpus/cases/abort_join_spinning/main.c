// NCCL's abort joining a progress thread that never stops, played without NCCL: the
// process maps a file named libnccl.so.2 (as a process with NCCL loaded maps it), a
// "progress" thread spins on sched_yield for ever, and the main thread, inside a
// function named like NCCL's abort, waits in pthread_join for it. The join can never
// return although the joined thread runs: a hang no lock or descriptor shows.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "corpus_roles.h"

static volatile long spinner_tid;

static void* progress(void* arg) {
  (void)arg;
  spinner_tid = hb_gettid();
  for (;;) sched_yield();  // an operation that can never finish, retried at full speed
  return NULL;
}

// A stand-in library file, mapped read-only so that /proc/PID/maps names it.
static void map_standin_nccl(void) {
  char dir[] = "/tmp/hb-corpus-nccl-XXXXXX";
  if (!mkdtemp(dir)) exit(3);
  char path[128];
  snprintf(path, sizeof path, "%s/libnccl.so.2", dir);
  int fd = open(path, O_CREAT | O_RDWR, 0600);
  if (fd < 0 || write(fd, "not a real NCCL\n", 16) != 16) exit(3);
  if (mmap(NULL, 16, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) exit(3);
  close(fd);
  unlink(path);  // maps still names it (" (deleted)"), nothing is left behind
  rmdir(dir);
}

__attribute__((noinline)) static void standin_ncclProxyDestroy(pthread_t t) { pthread_join(t, NULL); }

__attribute__((noinline)) static void standin_ncclCommAbort(pthread_t t) {
  standin_ncclProxyDestroy(t);
  __asm__ volatile("" ::: "memory");  // keeps this frame out of a tail call
}

int main(void) {
  map_standin_nccl();
  pthread_t t;
  pthread_create(&t, NULL, progress, NULL);
  while (!spinner_tid) usleep(1000);
  hb_role("p", getpid());
  hb_role("p.main", hb_gettid());
  hb_role("p.spinner", spinner_tid);
  hb_roles_publish(NULL);
  standin_ncclCommAbort(t);
  return 0;
}
