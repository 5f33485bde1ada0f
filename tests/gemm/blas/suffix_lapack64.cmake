# Makes Reference-LAPACK's ILP64 "64_" libraries from Debian's unsuffixed ILP64 ones:
# copies LAPACK (liblapack64 .a) and BLAS (libblas64.a) archives to OUT_DIR with every
# Fortran symbol renamed name_ -> name_64_ (definitions and references alike; CBLAS
# and gfortran's own symbols keep their names), which is what Reference-LAPACK's
# BUILD_INDEX64_EXT_API build exports. Debian 12 builds its ILP64 LAPACK with 64-bit
# integers but the plain names. Run with -DNM= -DOBJCOPY= -DLAPACK= -DBLAS= -DOUT_DIR= -P.
foreach(var NM OBJCOPY LAPACK BLAS OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "suffix_lapack64.cmake: -D${var}= is required")
  endif()
endforeach()

set(names "")
foreach(archive ${LAPACK} ${BLAS})
  execute_process(COMMAND ${NM} -g --defined-only ${archive}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -g --defined-only ${archive} failed")
  endif()
  # "<address> <type> <name>" lines; Fortran names are lower case ending in one '_'.
  string(REGEX MATCHALL "[0-9a-fA-F]+ [A-Z] [a-z][a-z0-9_]*_\n" lines "${out}")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[0-9a-fA-F]+ [A-Z] ([a-z0-9_]+)\n$" "\\1" name "${line}")
    if(NOT name MATCHES "^cblas_")
      list(APPEND names ${name})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES names)
list(LENGTH names count)
if(count LESS 100)
  message(FATAL_ERROR "found only ${count} Fortran symbols in ${LAPACK} and ${BLAS}")
endif()

set(map "")
foreach(name IN LISTS names)
  string(APPEND map "${name} ${name}64_\n")
endforeach()
file(MAKE_DIRECTORY ${OUT_DIR})
file(WRITE ${OUT_DIR}/lapack64_suffix.map "${map}")
foreach(pair "${LAPACK}|liblapack64_64_.a" "${BLAS}|libblas64_64_.a")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 input)
  list(GET pair 1 output)
  # Written under a temporary name and renamed, so a failed run leaves no archive.
  execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT_DIR}/lapack64_suffix.map
                          ${input} ${OUT_DIR}/${output}.tmp
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    file(REMOVE ${OUT_DIR}/${output}.tmp)
    message(FATAL_ERROR "${OBJCOPY} --redefine-syms ${input} failed: ${err}")
  endif()
  file(RENAME ${OUT_DIR}/${output}.tmp ${OUT_DIR}/${output})
endforeach()
message(STATUS "suffix_lapack64: ${count} symbols renamed name_ -> name_64_")
