// Two ranks each blocked in MPI_Recv from the other: neither sends first.
#include <mpi.h>

#include "corpus_roles.h"

int main(int argc, char** argv) {
  int rank, value = 0;
  char name[32], part[32];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  snprintf(name, sizeof name, "r%d", rank);
  snprintf(part, sizeof part, "rank%d", rank);
  hb_role(name, getpid());
  snprintf(name, sizeof name, "r%d.main", rank);
  hb_role(name, hb_gettid());
  hb_roles_publish(part);
  MPI_Recv(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
