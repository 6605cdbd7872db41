// GoogleTest under mpirun: MPI is initialised once with MPI_THREAD_MULTIPLE,
// every rank runs every test in the same order (tests may talk to each other),
// only rank 0 prints, and all ranks exit with the same status.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int local_failed = RUN_ALL_TESTS() == 0 ? 0 : 1;
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !local_failed) std::fprintf(stderr, "a test failed on another rank\n");
  MPI_Finalize();
  return any_failed;
}
