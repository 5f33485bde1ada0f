# The configure summary: what was found and what will be built. Also written to
# build/taihu-configure-summary.txt so scripts and tests can read it.
get_property(_modules GLOBAL PROPERTY TAIHU_MODULES)
string(REPLACE ";" " " _modules "${_modules}")
set(_summary
"taihu ${PROJECT_VERSION} configuration summary
  build type      : ${CMAKE_BUILD_TYPE}
  C++ compiler    : ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}
  warnings errors : ${TAIHU_WERROR}
  OpenMP          : ${OpenMP_CXX_VERSION}
  hwloc           : ${HWLOC_VERSION}
  CUDA            : ${TAIHU_CUDA_STATUS}
  MPI             : ${TAIHU_MPI_STATUS}
  Halide          : ${TAIHU_HALIDE_STATUS}
  modules         : ${_modules}
  tests / bench   : ${TAIHU_BUILD_TESTS} / ${TAIHU_BUILD_BENCH}
  install prefix  : ${CMAKE_INSTALL_PREFIX}
")
message(STATUS "\n${_summary}")
file(WRITE ${PROJECT_BINARY_DIR}/taihu-configure-summary.txt "${_summary}")
