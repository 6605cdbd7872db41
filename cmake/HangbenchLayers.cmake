# One static library per layer of harness/layers.txt: hangbench_<name>, from the
# sources its folder names, linked (PUBLIC: public headers include those below) to
# the layers it may use. Each folder's CMakeLists.txt calls
#   hangbench_layer(NAME SOURCES file... [LIBRARIES lib...])
# with its sources relative to the folder. hangbench_core links every layer (for
# the tests and benchmarks).
include(${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake)
hangbench_read_layers(${PROJECT_SOURCE_DIR})

if(HANGBENCH_PCH)
  # What nearly every file includes, directly or through model.hpp (ninja's log:
  # these headers are most of each file's compile time): precompiled once, reused
  # by every layer.
  set(hb_layer_pch_source ${PROJECT_BINARY_DIR}/hangbench_layer_pch.cpp)
  file(WRITE ${hb_layer_pch_source} "// precompiled headers of the layers (cmake/HangbenchLayers.cmake)\n")
  add_library(hangbench_layer_pch OBJECT ${hb_layer_pch_source})
  target_compile_definitions(hangbench_layer_pch PRIVATE HANGBENCH_VERSION="${PROJECT_VERSION}")
  target_compile_options(hangbench_layer_pch PRIVATE -Wall -Wextra)
  target_link_libraries(hangbench_layer_pch PRIVATE nlohmann_json::nlohmann_json fmt::fmt)
  target_precompile_headers(hangbench_layer_pch PRIVATE
    <nlohmann/json.hpp> <fmt/format.h> <filesystem> <functional> <map> <memory> <optional> <set> <string>
    <vector>)
endif()

add_library(hangbench_core INTERFACE)

function(hangbench_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LIBRARIES")
  if(arg_UNPARSED_ARGUMENTS OR NOT name IN_LIST hb_layers)
    message(FATAL_ERROR "hangbench_layer(${name}): not a layer of harness/layers.txt, or unknown arguments")
  endif()
  list(TRANSFORM arg_SOURCES PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  set(target hangbench_${name})
  add_library(${target} STATIC ${arg_SOURCES})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/harness/include
                                       PRIVATE ${PROJECT_SOURCE_DIR}/harness/src)
  # A layer with public headers of its own (harness/src/<layer>/include/hangbench/): only
  # the layers that link it see them, so the compiler too holds harness/layers.txt.
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_include_directories(${target} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  endif()
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  foreach(used IN LISTS hb_layer_uses_${name})
    target_link_libraries(${target} PUBLIC hangbench_${used})
  endforeach()
  target_link_libraries(${target} PUBLIC nlohmann_json::nlohmann_json fmt::fmt PRIVATE ${arg_LIBRARIES})
  if(HANGBENCH_PCH)
    target_precompile_headers(${target} REUSE_FROM hangbench_layer_pch)
  endif()
  if(HANGBENCH_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 16)
  endif()
  target_link_libraries(hangbench_core INTERFACE ${target})
endfunction()
