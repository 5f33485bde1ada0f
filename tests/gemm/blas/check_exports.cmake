# Checks that LIBRARY (libtaihu_blas.so) exports exactly the four standard GEMM
# symbols, so LD_PRELOAD interposes nothing else. Run with -DLIBRARY=... -DNM=... -P.
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIBRARY} failed: ${err}")
endif()
set(exported "")
string(REPLACE "\n" ";" lines "${out}")
foreach(line IN LISTS lines)
  # "<address> <type> <name>": global symbols have upper-case types; skip the
  # version-definition entries (type A) the linker adds.
  if(line MATCHES "^[0-9a-fA-F]+ ([A-Z]) ([^ ]+)$" AND NOT CMAKE_MATCH_1 STREQUAL "A")
    list(APPEND exported ${CMAKE_MATCH_2})
  endif()
endforeach()
list(SORT exported)
set(expected cblas_dgemm cblas_sgemm dgemm_ sgemm_)
if(NOT exported STREQUAL expected)
  message(FATAL_ERROR "${LIBRARY} exports [${exported}], expected exactly [${expected}]")
endif()
message(STATUS "exports: ${exported}")
