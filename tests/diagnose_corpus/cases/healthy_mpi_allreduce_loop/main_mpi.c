// Two ranks in a loop of MPI_Allreduce that keeps making progress.
#include <mpi.h>

#include "corpus_roles.h"

int main(int argc, char** argv) {
  int rank;
  char name[32], part[32];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (long step = 0;; ++step) {
    double in = (double)step, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (step == 100) {
      snprintf(name, sizeof name, "r%d", rank);
      snprintf(part, sizeof part, "rank%d", rank);
      hb_role(name, getpid());
      snprintf(name, sizeof name, "r%d.main", rank);
      hb_role(name, hb_gettid());
      hb_roles_publish(part);
    }
    usleep(1000);
  }
}
