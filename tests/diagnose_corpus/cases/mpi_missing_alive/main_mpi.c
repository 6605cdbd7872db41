// Three ranks: 0 and 1 wait in MPI_Barrier, rank 2 is alive but never joins it
// (it sleeps outside MPI).
#include <mpi.h>
#include <time.h>

#include "corpus_roles.h"

int main(int argc, char** argv) {
  int rank;
  char name[32], part[32];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  snprintf(name, sizeof name, "r%d", rank);
  snprintf(part, sizeof part, "rank%d", rank);
  hb_role(name, getpid());
  snprintf(name, sizeof name, "r%d.main", rank);
  hb_role(name, hb_gettid());
  hb_roles_publish(part);
  if (rank == 2) {
    struct timespec hour = {3600, 0};
    for (;;) nanosleep(&hour, NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
