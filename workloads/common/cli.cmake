# Target hangbench_workload_cli: every workload's command line (cli.hpp) and
# log lines (log_line.hpp). include() it from any workload CMakeLists that needs it.
include_guard(GLOBAL)

if(NOT TARGET CLI11::CLI11)
  find_package(CLI11 REQUIRED)
endif()
add_library(hangbench_workload_cli STATIC ${CMAKE_CURRENT_LIST_DIR}/cli.cpp)
target_include_directories(hangbench_workload_cli PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(hangbench_workload_cli PUBLIC CLI11::CLI11)
target_compile_options(hangbench_workload_cli PRIVATE -Wall -Wextra)
