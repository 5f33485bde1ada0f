# Installs BUILD_DIR into WORK_DIR/prefix and checks that a user's project can use
# it: the consumer project through find_package(taihu), and consumer.cpp compiled by
# hand with pkg-config's flags. Both programs must run and print "consumer: OK".
# Everything installed runs in a clean environment (env -i, no LD_LIBRARY_PATH): the
# libraries and tools must find each other through their $ORIGIN runpaths (issue 23).
# With -DPACKAGE=DEB the prefix is instead the .deb that `cpack -G DEB` makes, unpacked
# (dpkg-deb -x) into WORK_DIR/root, and its Depends: must be packages this Debian has.
# Run with -DBUILD_DIR -DWORK_DIR -DCONSUMER_DIR -DGENERATOR -DCXX_COMPILER
# -DPKG_CONFIG -DLIBDIR [-DPACKAGE=DEB] -P check_install.cmake.
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}${err}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

# Runs a program as a user's shell would with nothing set: env -i PATH=/usr/bin:/bin.
find_program(ENV_EXE env REQUIRED)
function(run_clean what)
  run("${what}" ${ENV_EXE} -i PATH=/usr/bin:/bin ${ARGN})
  set(last_output "${last_output}" PARENT_SCOPE)
endfunction()

function(expect_ok what)
  if(NOT last_output MATCHES "consumer: OK")
    message(FATAL_ERROR "${what} did not print 'consumer: OK':\n${last_output}")
  endif()
  message(STATUS "${what}: ${last_output}")
endfunction()

# 1. Install into a prefix other than the configured one (or unpack the .deb there).
if(PACKAGE STREQUAL "DEB")
  run("cpack -G DEB" ${CMAKE_CPACK_COMMAND} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/deb)
  file(GLOB debs ${WORK_DIR}/deb/*.deb)
  list(LENGTH debs n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "cpack -G DEB made ${n} packages in ${WORK_DIR}/deb: ${debs}")
  endif()
  run("dpkg-deb -x" dpkg-deb -x ${debs} ${WORK_DIR}/root)
  set(prefix ${WORK_DIR}/root/usr)
  run("dpkg-deb -f Depends" dpkg-deb -f ${debs} Depends)
  string(REGEX REPLACE "\\([^)]*\\)" "" depends "${last_output}")
  string(REGEX REPLACE "[ \n]" "" depends "${depends}")
  string(REPLACE "," ";" depends "${depends}")
  foreach(alternatives IN LISTS depends)
    string(REPLACE "|" ";" alternatives "${alternatives}")
    set(found FALSE)
    foreach(pkg IN LISTS alternatives)
      execute_process(COMMAND dpkg-query -W -f=\${Status} ${pkg} OUTPUT_VARIABLE status ERROR_QUIET)
      if(status MATCHES "install ok installed")
        set(found TRUE)
      endif()
    endforeach()
    # NVIDIA's runtime package (a CUDA build's package names it) is often installed
    # from NVIDIA's runfile rather than apt: the library the loader finds counts.
    if(NOT found AND alternatives MATCHES "^cuda-cudart-")
      execute_process(COMMAND ldconfig -p OUTPUT_VARIABLE ld_cache ERROR_QUIET)
      if(ld_cache MATCHES "libcudart\\.so")
        set(found TRUE)
      endif()
    endif()
    if(NOT found)
      message(FATAL_ERROR "the .deb depends on '${alternatives}', which this system does not have")
    endif()
  endforeach()
  message(STATUS "taihu .deb: ${debs}; Depends: ${depends}")
else()
  run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
endif()

# 1b. Every installed library resolves the other taihu libraries it needs from where it
# lies, and every installed tool starts, in a clean environment. (A program's own
# runpath does not apply to its libraries' dependencies: without $ORIGIN in the
# libraries, taihu-caffe stopped with "libtaihu_dnn.so.0: cannot open shared object".)
file(GLOB installed_libs ${prefix}/${LIBDIR}/libtaihu_*.so)
if(NOT installed_libs)
  message(FATAL_ERROR "no libtaihu_*.so installed under ${prefix}/${LIBDIR}")
endif()
find_program(LDD_EXE ldd)
if(LDD_EXE)
  foreach(lib IN LISTS installed_libs)
    run_clean("ldd ${lib}" ${LDD_EXE} ${lib})
    if(last_output MATCHES "(libtaihu_[^ \t]*) => not found")
      message(FATAL_ERROR "installed ${lib} cannot find ${CMAKE_MATCH_1} without LD_LIBRARY_PATH "
                          "(no $ORIGIN runpath?):\n${last_output}")
    endif()
  endforeach()
endif()
file(GLOB installed_tools ${prefix}/bin/taihu-*)
foreach(tool IN LISTS installed_tools)
  run_clean("running the installed ${tool} --help" ${tool} --help)
endforeach()

# 2. find_package(taihu) from a separate CMake project.
run("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/cmake
    -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix})
run("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake)
run_clean("running the find_package consumer" ${WORK_DIR}/cmake/consumer)
expect_ok("find_package(taihu) consumer")

# 3. pkg-config: the flags alone must compile, link and run consumer.cpp.
file(GLOB_RECURSE pc_files ${prefix}/*/taihu.pc)
if(NOT pc_files)
  message(FATAL_ERROR "no taihu.pc installed under ${prefix}")
endif()
list(GET pc_files 0 pc_file)
get_filename_component(pc_dir ${pc_file} DIRECTORY)
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
run("pkg-config --cflags --libs taihu" ${PKG_CONFIG} --cflags --libs taihu)
string(STRIP "${last_output}" pc_flags)
string(FIND "${pc_flags}" "-I${prefix}/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "taihu.pc does not point into the install prefix ${prefix}: ${pc_flags}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
# A user linking by hand names the library directory once (-rpath), as for any library
# outside the system's; taihu's libraries then find each other.
get_filename_component(lib_dir ${pc_dir} DIRECTORY)
run("compiling consumer.cpp with pkg-config's flags" ${CXX_COMPILER} -std=c++20
    ${CONSUMER_DIR}/consumer.cpp ${pc_flags} -Wl,-rpath,${lib_dir} -o ${WORK_DIR}/consumer-pc)
run_clean("running the pkg-config consumer" ${WORK_DIR}/consumer-pc)
expect_ok("pkg-config consumer")
file(REMOVE_RECURSE ${WORK_DIR})
