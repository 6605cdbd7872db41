// NCCL 2.22.3's connection at the first collective, played without NCCL: two ranks (the
// program runs again as RANK=0 and starts RANK=1, each with its rank in its starting
// environment, as a launcher would). Rank 0's main thread, inside functions named like
// NCCL's collective call and its group end, polls a job thread in microsecond sleeps;
// the job thread, inside functions named like NCCL's ring connection, waits in accept()
// for a peer that never connects. Rank 1 reads a pipe that only rank 0 would write,
// after its collective returned. Nothing here knows NCCL: the names are the contract.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "corpus_roles.h"

extern char** environ;

static int listen_fd = -1;
static int signal_write_fd = -1;
static volatile long job_tid;
static volatile int job_done;

#define NCCL_STANDIN __attribute__((noinline, noclone, used))

NCCL_STANDIN int ncclTransportRingConnect(void) {
  int peer = accept(listen_fd, NULL, NULL);  // the peer's side of the handshake never comes
  __asm__ volatile("" ::: "memory");         // keeps this frame out of a tail call
  return peer;
}

NCCL_STANDIN int ncclCollPreconnectFunc(void) {
  int r = ncclTransportRingConnect();
  __asm__ volatile("" ::: "memory");
  return r;
}

NCCL_STANDIN void* ncclAsyncJobMain(void* arg) {
  (void)arg;
  job_tid = hb_gettid();
  ncclCollPreconnectFunc();
  job_done = 1;
  return NULL;
}

NCCL_STANDIN void asyncJobLaunch(void) {
  pthread_t t;
  pthread_create(&t, NULL, ncclAsyncJobMain, NULL);
  while (!job_tid) usleep(100);
  hb_role("r0", getpid());
  hb_role("r0.main", hb_gettid());
  hb_role("r0.job", job_tid);
  hb_roles_publish("rank0");
  while (!job_done) usleep(1);  // NCCL's loop: a microsecond between looks at its job threads
  pthread_join(t, NULL);
}

NCCL_STANDIN void ncclAllReduce(void) {
  asyncJobLaunch();
  __asm__ volatile("" ::: "memory");
}

// This program again, with RANK and WORLD_SIZE set for `rank`.
static void exec_as_rank(const char* self, int rank, char* const argv[]) {
  char* env[512];
  char rank_var[32], world_var[32];
  int n = 0;
  for (char** e = environ; *e && n < 500; ++e)
    if (strncmp(*e, "RANK=", 5) != 0 && strncmp(*e, "WORLD_SIZE=", 11) != 0) env[n++] = *e;
  snprintf(rank_var, sizeof rank_var, "RANK=%d", rank);
  snprintf(world_var, sizeof world_var, "WORLD_SIZE=2");
  env[n++] = rank_var;
  env[n++] = world_var;
  env[n] = NULL;
  execve(self, argv, env);
  exit(3);
}

static int rank1(int read_fd) {
  hb_role("r1", getpid());
  hb_role("r1.main", hb_gettid());
  hb_roles_publish("rank1");
  char byte;
  return read(read_fd, &byte, 1) == 1 ? 0 : 1;  // rank 0 signals only after its collective returned
}

int main(int argc, char** argv) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 3;
  self[len] = '\0';
  if (argc == 3 && strcmp(argv[1], "--rank1") == 0) return rank1(atoi(argv[2]));
  if (!getenv("RANK")) {
    char* again[] = {argv[0], NULL};
    exec_as_rank(self, 0, again);
  }
  int fds[2];
  if (pipe(fds) != 0) return 3;
  signal_write_fd = fds[1];
  pid_t child = fork();
  if (child == 0) {
    close(fds[1]);
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", fds[0]);
    char* args[] = {argv[0], "--rank1", fd_text, NULL};
    exec_as_rank(self, 1, args);
  }
  close(fds[0]);
  // The stand-in of NCCL's bootstrap listener: bound to loopback, never connected to.
  listen_fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (listen_fd < 0 || bind(listen_fd, (struct sockaddr*)&a, sizeof a) != 0 || listen(listen_fd, 4) != 0) return 3;
  ncclAllReduce();
  char byte = 1;
  return write(signal_write_fd, &byte, 1) == 1 ? 0 : 1;
}
