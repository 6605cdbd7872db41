// Two ranks of one job in different collectives: rank 0 in MPI_Allreduce, rank 1
// in MPI_Barrier. Neither can complete.
#include <mpi.h>

#include "corpus_roles.h"

int main(int argc, char** argv) {
  int rank, in = 1, out = 0;
  char name[32], part[32];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  snprintf(name, sizeof name, "r%d", rank);
  snprintf(part, sizeof part, "rank%d", rank);
  hb_role(name, getpid());
  snprintf(name, sizeof name, "r%d.main", rank);
  hb_role(name, hb_gettid());
  hb_roles_publish(part);
  if (rank == 0)
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  else
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
