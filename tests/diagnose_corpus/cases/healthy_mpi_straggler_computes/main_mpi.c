// A load-imbalanced but healthy job: rank 1 computes 20 ms per step on the CPU,
// rank 0 only 1 ms, so rank 0 spends most of each step waiting in MPI_Allreduce
// for rank 1, which is alive, running and outside MPI, yet not missing.
#include <mpi.h>
#include <time.h>

#include "corpus_roles.h"

static void compute(double ms) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  volatile unsigned long x = 1;
  do {
    for (int i = 0; i < 1000; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1e3 + (now.tv_nsec - start.tv_nsec) / 1e6 < ms);
}

int main(int argc, char** argv) {
  int rank;
  char name[32], part[32];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (long step = 0;; ++step) {
    double in = (double)step, out = 0;
    compute(rank == 1 ? 20 : 1);
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (step == 10) {
      snprintf(name, sizeof name, "r%d", rank);
      snprintf(part, sizeof part, "rank%d", rank);
      hb_role(name, getpid());
      snprintf(name, sizeof name, "r%d.main", rank);
      hb_role(name, hb_gettid());
      hb_roles_publish(part);
    }
  }
}
