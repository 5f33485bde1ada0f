# Checks that LIBRARY (libtaihu_blas.so) exports exactly the level-3 entry points, the
# error handlers, their ILP64 twins and the thread-control functions
# (gemm/blas/exports.map), so
# LD_PRELOAD interposes nothing else. Run with -DLIBRARY=... -DNM=... -P.
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
set(expected cblas_dgemm cblas_sgemm dgemm_ sgemm_ xerbla_ cblas_xerbla
  cblas_sbgemm cblas_gemm_bf16bf16f32 sbgemm_
  cblas_sgemm_batch_strided cblas_dgemm_batch_strided cblas_sgemm_batch cblas_dgemm_batch
  cblas_sgemmt sgemmt_ cblas_ssyrk ssyrk_ cblas_ssyr2k ssyr2k_ cblas_ssymm ssymm_ cblas_strmm strmm_ cblas_strsm strsm_
  cblas_dgemmt dgemmt_ cblas_dsyrk dsyrk_ cblas_dsyr2k dsyr2k_ cblas_dsymm dsymm_ cblas_dtrmm dtrmm_ cblas_dtrsm dtrsm_
  taihu_set_num_threads taihu_get_num_threads openblas_set_num_threads
  openblas_get_num_threads goto_set_num_threads mkl_set_num_threads MKL_Set_Num_Threads
  mkl_set_num_threads_local mkl_get_max_threads bli_thread_set_num_threads)
# The ILP64 twins: every BLAS routine and error handler above (not the thread control)
# with "64_" appended, OpenBLAS's INTERFACE64 + SYMBOLSUFFIX=64_ names.
foreach(name IN LISTS expected)
  if(NOT name MATCHES "thread|Thread")
    list(APPEND expected "${name}64_")
  endif()
endforeach()
list(SORT expected)
if(NOT exported STREQUAL expected)
  message(FATAL_ERROR "${LIBRARY} exports [${exported}], expected exactly [${expected}]")
endif()
message(STATUS "exports: ${exported}")
