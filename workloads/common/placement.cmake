# Target hangbench_workload_placement: where multi-rank workloads put their ranks
# (placement.hpp) and which transport NCCL chose between them (nccl_debug_log.hpp).
include_guard(GLOBAL)

add_library(hangbench_workload_placement STATIC ${CMAKE_CURRENT_LIST_DIR}/placement.cpp
                                                ${CMAKE_CURRENT_LIST_DIR}/nccl_debug_log.cpp)
target_include_directories(hangbench_workload_placement PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(hangbench_workload_placement PRIVATE -Wall -Wextra)
