// A load-imbalanced but healthy job whose straggler waits rather than computes:
// rank 1 sleeps 50 ms per step (as if waiting for its input from disk), so rank 0
// is nearly always in MPI_Allreduce while rank 1 sits in nanosleep outside MPI.
// One look at /proc cannot tell this from mpi_missing_alive (a rank asleep for
// good): the difference is time (the sleep's length, the rank's progress).
#include <mpi.h>
#include <time.h>

#include "corpus_roles.h"

int main(int argc, char** argv) {
  int rank;
  char name[32], part[32];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (long step = 0;; ++step) {
    double in = (double)step, out = 0;
    if (rank == 1) {
      struct timespec input = {0, 50 * 1000 * 1000};
      nanosleep(&input, NULL);
    }
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (step == 5) {
      snprintf(name, sizeof name, "r%d", rank);
      snprintf(part, sizeof part, "rank%d", rank);
      hb_role(name, getpid());
      snprintf(name, sizeof name, "r%d.main", rank);
      hb_role(name, hb_gettid());
      hb_roles_publish(part);
    }
  }
}
