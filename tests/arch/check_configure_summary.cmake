# Runs taihu's configure in scratch directories and checks the summary it prints:
# OFF parts say "off", a found part says "yes", a bad option value is an error.
function(configure_into dir result_var output_var)
  file(REMOVE_RECURSE ${dir})
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${dir} -DTAIHU_BUILD_TESTS=OFF
            -DTAIHU_BUILD_BENCH=OFF ${ARGN}
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${result_var} ${result} PARENT_SCOPE)
  set(${output_var} "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "configure summary: expected ${what} (/${pattern}/) in:\n${text}")
  endif()
endfunction()

# 1. Everything optional switched off.
configure_into(${WORK_DIR}/off rc out
  -DTAIHU_WITH_CUDA=OFF -DTAIHU_WITH_MPI=OFF -DTAIHU_WITH_HALIDE=OFF)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure with every optional part OFF failed:\n${out}")
endif()
expect("${out}" "CUDA +: off \\(TAIHU_WITH_CUDA=OFF\\)" "CUDA off")
expect("${out}" "MPI +: off \\(TAIHU_WITH_MPI=OFF\\)" "MPI off")
expect("${out}" "Halide +: off \\(TAIHU_WITH_HALIDE=OFF\\)" "Halide off")
file(READ ${WORK_DIR}/off/taihu-configure-summary.txt written)
expect("${written}" "MPI +: off" "the summary file")
file(READ ${WORK_DIR}/off/include/taihu/arch/build_config.hpp config)
expect("${config}" "#define TAIHU_HAVE_MPI 0" "TAIHU_HAVE_MPI 0 in build_config.hpp")

# 2. MPI on AUTO: reported as found exactly when the main build found it.
if(MPI_EXPECTED)
  configure_into(${WORK_DIR}/mpi rc out -DTAIHU_WITH_CUDA=OFF -DTAIHU_WITH_HALIDE=OFF -DTAIHU_WITH_MPI=ON)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure with TAIHU_WITH_MPI=ON failed although MPI was found:\n${out}")
  endif()
  expect("${out}" "MPI +: yes \\(MPI [0-9]" "MPI yes")
endif()

# 3. A bad option value is rejected with a message naming it.
configure_into(${WORK_DIR}/bad rc out -DTAIHU_WITH_CUDA=maybe)
if(rc EQUAL 0)
  message(FATAL_ERROR "configure accepted TAIHU_WITH_CUDA=maybe")
endif()
expect("${out}" "TAIHU_WITH_CUDA='maybe': use AUTO, ON or OFF" "the bad-value error")
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "configure summary checks passed")
