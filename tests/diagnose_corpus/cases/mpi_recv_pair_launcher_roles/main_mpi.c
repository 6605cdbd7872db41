// Two ranks each blocked in MPI_Recv from the other, as mpi_recv_cycle, but the
// program publishes no roles: the driver names each rank's process and main thread
// from the launcher's rank in its environment ("roles": "ranks"), as it does for
// workloads that know nothing of the corpus (gpu_cases/pp4_mpi_progress_cycle).
#include <mpi.h>

int main(int argc, char** argv) {
  int rank, value = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Recv(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
