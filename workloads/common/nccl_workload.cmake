# hangbench_add_nccl_workload(NAME SOURCES ...): a workload that dlopens the NCCL it is
# given (common/nccl_loader) and runs on nccl_teardown's device buffer. With the CUDA
# toolkit it links CUDA's static runtime, so on the GPU machine it needs only the driver;
# without it the buffer's calls throw, and a run stops at the device as infrastructure
# (exit 3), which is what the CPU tests check.
function(hangbench_add_nccl_workload name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  set(teardown ${PROJECT_SOURCE_DIR}/workloads/nccl_teardown)
  set(device_source ${teardown}/device_buffer_none.cpp)
  if(HANGBENCH_WITH_CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(device_source ${teardown}/device_buffer_cuda.cpp)
  endif()
  add_executable(${name} ${arg_SOURCES} ${device_source} ${PROJECT_SOURCE_DIR}/workloads/common/nccl_loader.cpp)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${teardown}
    ${PROJECT_SOURCE_DIR}/workloads/common)
  target_link_libraries(${name} PRIVATE hangbench_workload_cli Threads::Threads ${CMAKE_DL_LIBS})
  if(HANGBENCH_WITH_CUDA)
    target_link_libraries(${name} PRIVATE CUDA::cudart_static)
  endif()
  target_compile_options(${name} PRIVATE -Wall -Wextra)
endfunction()
