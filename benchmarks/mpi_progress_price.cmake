# mpi_progress_price: the native progress thread's CPU cost and latency (run under mpirun -np 2).
if(TARGET hangbench_mpi_progress)
  add_executable(mpi_progress_price ${CMAKE_CURRENT_LIST_DIR}/mpi_progress_price.cpp)
  target_link_libraries(mpi_progress_price PRIVATE hangbench_mpi_progress)
  target_compile_options(mpi_progress_price PRIVATE -Wall -Wextra)
endif()
