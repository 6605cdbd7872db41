# Target hangbench_embedded_python: embedded CPython with a real GIL
# (embedded_python.hpp). include() it from any workload CMakeLists that needs it.
include_guard(GLOBAL)

# Prefer the distribution's Python for embedding (a pyenv or venv python on
# PATH may lack a shared libpython); override with -DPython3_EXECUTABLE=...
if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 3.8 REQUIRED COMPONENTS Interpreter Development.Embed)

add_library(hangbench_embedded_python STATIC ${CMAKE_CURRENT_LIST_DIR}/embedded_python.cpp)
target_include_directories(hangbench_embedded_python PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(hangbench_embedded_python PUBLIC Python3::Python Threads::Threads)
target_compile_options(hangbench_embedded_python PRIVATE -Wall -Wextra -Wno-missing-field-initializers)
