# The GoogleTest binaries. Every NAME_test.cpp is one binary NAME_test, beside the
# code it tests (harness/src/<part>/, workloads/<name>/), or in tests/integration/
# when it runs built programs end to end. Each folder's CMakeLists.txt declares its
# own tests with the two functions below, which do nothing unless
# HANGBENCH_BUILD_TESTS is on. The MPI tests under workloads/*/tests/ run under
# mpirun and have their own main; they are declared there with add_test.
#
#   hangbench_add_test(NAME [SOURCES file...] [LIBRARIES lib...] [DEPENDS target...]
#                      [DEFINITIONS def...])
#     The binary NAME from SOURCES (default: NAME.cpp in the calling folder), linked
#     to hangbench_core, GoogleTest and GoogleMock (gtest_main, unless the test
#     defines main itself) and LIBRARIES; compiled with harness/src on its include
#     path and HB_FIXTURES_DIR, HB_GOLDEN_DIR (tests/fixtures, tests/golden),
#     HB_BINARY_DIR, HB_SOURCE_DIR (the build and source roots) and DEFINITIONS.
#     DEPENDS: the targets it runs or loads, built before it. Each GoogleTest case
#     is one ctest test, with a 300 s bound that turns a hang into a failure.
#
#   hangbench_add_tests([IN folder] [LIBRARIES ...] [DEPENDS ...] [DEFINITIONS ...])
#     hangbench_add_test for every *_test.cpp in the calling folder (or in its
#     subfolder IN) that is not a target yet: declare the tests that need more
#     first, then call this for the rest, so that no test file is left out.
if(HANGBENCH_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  if(HANGBENCH_PCH)
    # GoogleTest, GoogleMock and nlohmann/json, precompiled once for every test
    # binary (REUSE_FROM below) instead of parsed again in each of ~80 of them.
    set(hb_pch_source ${PROJECT_BINARY_DIR}/hangbench_test_pch.cpp)
    file(WRITE ${hb_pch_source} "// precompiled headers of the tests (cmake/HangbenchTest.cmake)\n")
    add_library(hangbench_test_pch OBJECT ${hb_pch_source})
    target_link_libraries(hangbench_test_pch PRIVATE hangbench_core GTest::gtest GTest::gmock Threads::Threads)
    target_include_directories(hangbench_test_pch PRIVATE ${PROJECT_SOURCE_DIR}/harness/src)
    target_compile_definitions(hangbench_test_pch PRIVATE  # as every test has them (hangbench_add_test)
      HB_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures" HB_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden"
      HB_BINARY_DIR="${PROJECT_BINARY_DIR}" HB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    target_precompile_headers(hangbench_test_pch PRIVATE
      <gtest/gtest.h> <gmock/gmock.h> <nlohmann/json.hpp> <fmt/format.h> <filesystem> <map> <string> <vector>)
  endif()
endif()

function(hangbench_add_test name)
  if(NOT HANGBENCH_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LIBRARIES;DEPENDS;DEFINITIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hangbench_add_test(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    set(arg_SOURCES ${name}.cpp)
  endif()
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE hangbench_core GTest::gtest_main GTest::gmock Threads::Threads
    ${arg_LIBRARIES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/harness/src)
  target_compile_definitions(${name} PRIVATE
    HB_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures"
    HB_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden"
    HB_BINARY_DIR="${PROJECT_BINARY_DIR}"
    HB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    ${arg_DEFINITIONS})
  if(arg_DEPENDS)
    add_dependencies(${name} ${arg_DEPENDS})
  endif()
  if(HANGBENCH_PCH)
    # Same flags as hangbench_test_pch; GCC ignores the precompiled form (and
    # parses the headers) for a test whose libraries change them.
    target_precompile_headers(${name} REUSE_FROM hangbench_test_pch)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endfunction()

function(hangbench_add_tests)
  if(NOT HANGBENCH_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "IN" "LIBRARIES;DEPENDS;DEFINITIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hangbench_add_tests: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(folder ${CMAKE_CURRENT_SOURCE_DIR})
  if(arg_IN)
    set(folder ${folder}/${arg_IN})
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${folder}/*_test.cpp)
  foreach(source IN LISTS sources)
    get_filename_component(name ${source} NAME_WE)
    if(NOT TARGET ${name})
      hangbench_add_test(${name} SOURCES ${source} LIBRARIES ${arg_LIBRARIES} DEPENDS ${arg_DEPENDS}
        DEFINITIONS ${arg_DEFINITIONS})
    endif()
  endforeach()
endfunction()
