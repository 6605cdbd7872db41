# FindTorchWheel: libtorch's C++ part as unpacked from a PyPI torch wheel
# (ci/setup-torch.sh), without torch's own TorchConfig.cmake, which insists on a
# full CUDA toolkit with cuDNN, cuSPARSELt, NVSHMEM... at configure time.
#
# Input:  Torch_DIR (…/torch/share/cmake/Torch, as for find_package(Torch)) or
#         TORCH_WHEEL_ROOT (the unpacked …/torch folder).
# Output: TorchWheel_FOUND, TorchWheel_ROOT, TorchWheel_VERSION and the imported target
#         TorchWheel::torch: headers, USE_C10D_NCCL/USE_DISTRIBUTED, the CUDA
#         toolkit's headers, and libtorch{,_cpu,_cuda}/libc10{,_cuda} linked
#         --no-as-needed (the CUDA backend registers itself from a static
#         initialiser). The CUDA libraries libtorch_cuda.so needs (cudart, cuDNN,
#         NCCL, ...) need not exist at link time: undefined symbols inside shared
#         libraries are allowed, and they are found at run time through torch's
#         own RPATH or LD_LIBRARY_PATH. No RPATH is added to the executable.
include(FindPackageHandleStandardArgs)

if(NOT TORCH_WHEEL_ROOT AND Torch_DIR)
  get_filename_component(TORCH_WHEEL_ROOT "${Torch_DIR}/../../.." ABSOLUTE)
endif()
if(NOT TORCH_WHEEL_ROOT)
  set(TORCH_WHEEL_ROOT "${PROJECT_SOURCE_DIR}/.cache/torch/site/torch")
endif()
set(TorchWheel_ROOT "${TORCH_WHEEL_ROOT}")

set(_tw_libs torch torch_cpu torch_cuda c10 c10_cuda)
set(_tw_missing "")
foreach(_lib IN LISTS _tw_libs)
  if(NOT EXISTS "${TorchWheel_ROOT}/lib/lib${_lib}.so")
    list(APPEND _tw_missing "lib${_lib}.so")
  endif()
endforeach()
if(EXISTS "${TorchWheel_ROOT}/version.py")
  file(STRINGS "${TorchWheel_ROOT}/version.py" _tw_version_line REGEX "^__version__")
  string(REGEX REPLACE "^__version__[^']*'([^']+)'.*" "\\1" TorchWheel_VERSION "${_tw_version_line}")
endif()

# libtorch's CUDA headers include cuda_runtime_api.h, cublas_v2.h, ...; c10d's NCCLUtils.hpp includes nccl.h.
find_package(CUDAToolkit QUIET)
find_path(TorchWheel_NCCL_INCLUDE_DIR nccl.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} "${TorchWheel_ROOT}/../nvidia/nccl/include")

find_package_handle_standard_args(TorchWheel
  REQUIRED_VARS TorchWheel_ROOT CUDAToolkit_INCLUDE_DIRS TorchWheel_NCCL_INCLUDE_DIR
  VERSION_VAR TorchWheel_VERSION
  FAIL_MESSAGE "libtorch not found under '${TorchWheel_ROOT}' (missing: ${_tw_missing}) or no CUDA \
toolkit headers/nccl.h: run ci/setup-torch.sh and pass -DTorch_DIR=<...>/torch/share/cmake/Torch")
if(_tw_missing)
  set(TorchWheel_FOUND FALSE)
  if(TorchWheel_FIND_REQUIRED)
    message(FATAL_ERROR "TorchWheel: ${TorchWheel_ROOT}/lib lacks ${_tw_missing}")
  endif()
endif()

if(TorchWheel_FOUND AND NOT TARGET TorchWheel::torch)
  add_library(TorchWheel::torch INTERFACE IMPORTED)
  set_target_properties(TorchWheel::torch PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES
      "${TorchWheel_ROOT}/include;${TorchWheel_ROOT}/include/torch/csrc/api/include;${CUDAToolkit_INCLUDE_DIRS};${TorchWheel_NCCL_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS "USE_C10D_NCCL;USE_DISTRIBUTED;_GLIBCXX_USE_CXX11_ABI=1")
  set(_tw_link "-Wl,--no-as-needed")
  foreach(_lib IN LISTS _tw_libs)
    list(APPEND _tw_link "${TorchWheel_ROOT}/lib/lib${_lib}.so")
  endforeach()
  list(APPEND _tw_link "-Wl,--as-needed" "-Wl,--allow-shlib-undefined"
       "-Wl,-rpath-link,${TorchWheel_ROOT}/lib")
  set_property(TARGET TorchWheel::torch PROPERTY INTERFACE_LINK_LIBRARIES "${_tw_link}")
endif()
