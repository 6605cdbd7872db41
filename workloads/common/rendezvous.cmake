# The rendezvous check of mpi_progress and pp_pipeline, once:
#   hangbench_rendezvous_check  plain C++ (rendezvous_check.hpp), unit-tested anywhere
#   hangbench_mpi_eager_limits  reading MPI's eager limits through MPI_T (mpi_eager_limits.hpp)
include_guard(GLOBAL)

add_library(hangbench_rendezvous_check STATIC ${CMAKE_CURRENT_LIST_DIR}/rendezvous_check.cpp)
target_include_directories(hangbench_rendezvous_check PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(hangbench_rendezvous_check PRIVATE -Wall -Wextra)

if(HANGBENCH_WITH_MPI)
  find_package(MPI REQUIRED COMPONENTS C)
  add_library(hangbench_mpi_eager_limits STATIC ${CMAKE_CURRENT_LIST_DIR}/mpi_eager_limits.cpp)
  target_link_libraries(hangbench_mpi_eager_limits PUBLIC hangbench_rendezvous_check MPI::MPI_C)
  target_compile_definitions(hangbench_mpi_eager_limits PUBLIC OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  target_compile_options(hangbench_mpi_eager_limits PRIVATE -Wall -Wextra)
endif()
