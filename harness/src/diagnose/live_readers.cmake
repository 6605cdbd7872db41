# diagnose's readers of a live process: native stacks through libdw, Python
# frames from the interpreter's memory, PyTorch's Flight Recorder dump.
# Included from src/evidence/CMakeLists.txt (the snapshot calls them).
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
pkg_check_modules(LIBSECCOMP REQUIRED IMPORTED_TARGET libseccomp)
set(hb_live_readers native_stacks remote_memory location_table line_number_table pthread_tid python_layout python_stacks pickle_reader
  flight_recorder)
list(TRANSFORM hb_live_readers PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
list(TRANSFORM hb_live_readers APPEND .cpp)
target_sources(hangbench_core PRIVATE ${hb_live_readers})
target_link_libraries(hangbench_core PRIVATE PkgConfig::LIBDW PkgConfig::LIBSECCOMP)
