# hangbench_nccl_compat_shim(TARGET <name> TORCH_LIB <libtorch_cuda.so> NCCL_LIB <libnccl.so.2>
#                            [OUTPUT <path>] [ERROR_CODE <ncclResult_t>])
# Builds the compat shim at build time with `hangbench nccl shim`, so its list
# of entry points is derived (nm -D) from the libtorch and NCCL at hand.
function(hangbench_nccl_compat_shim)
  cmake_parse_arguments(SHIM "" "TARGET;TORCH_LIB;NCCL_LIB;OUTPUT;ERROR_CODE" "" ${ARGN})
  if(NOT SHIM_TARGET OR NOT SHIM_TORCH_LIB OR NOT SHIM_NCCL_LIB)
    message(FATAL_ERROR "hangbench_nccl_compat_shim: TARGET, TORCH_LIB and NCCL_LIB are required")
  endif()
  if(NOT SHIM_OUTPUT)
    set(SHIM_OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${SHIM_TARGET}/libnccl_compat_shim.so)
  endif()
  if(NOT SHIM_ERROR_CODE)
    set(SHIM_ERROR_CODE 5)  # ncclInvalidUsage
  endif()
  get_filename_component(shim_dir ${SHIM_OUTPUT} DIRECTORY)
  add_custom_command(OUTPUT ${SHIM_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${shim_dir}
    COMMAND $<TARGET_FILE:hangbench> nccl shim --torch-lib ${SHIM_TORCH_LIB} --nccl ${SHIM_NCCL_LIB}
            -o ${SHIM_OUTPUT} --error-code ${SHIM_ERROR_CODE}
    DEPENDS hangbench ${SHIM_TORCH_LIB} ${SHIM_NCCL_LIB}
    COMMENT "NCCL compat shim for ${SHIM_TORCH_LIB} over ${SHIM_NCCL_LIB}"
    VERBATIM)
  add_custom_target(${SHIM_TARGET} ALL DEPENDS ${SHIM_OUTPUT})
endfunction()
