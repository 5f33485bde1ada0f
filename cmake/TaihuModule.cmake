# taihu_set_install_rpath(<target> LIBRARY|TOOL): the one place installed runpaths are
# set. Installed files find each other relative to where they lie ($ORIGIN), so any
# prefix works (cmake --install --prefix DIR, a .deb) without LD_LIBRARY_PATH: a
# library looks beside itself (an executable's runpath does not cover its libraries'
# own dependencies), a tool in bindir looks in libdir.
function(taihu_set_install_rpath target kind)
  if(kind STREQUAL "LIBRARY")
    set(rpath "\$ORIGIN")
  elseif(kind STREQUAL "TOOL")
    set(bindir "${CMAKE_INSTALL_BINDIR}")
    set(libdir "${CMAKE_INSTALL_LIBDIR}")
    if(NOT IS_ABSOLUTE "${bindir}")
      set(bindir "${CMAKE_INSTALL_PREFIX}/${bindir}")
    endif()
    if(NOT IS_ABSOLUTE "${libdir}")
      set(libdir "${CMAKE_INSTALL_PREFIX}/${libdir}")
    endif()
    file(RELATIVE_PATH rel "${bindir}" "${libdir}")
    set(rpath "\$ORIGIN/${rel}")
  else()
    message(FATAL_ERROR "taihu_set_install_rpath(${target} ${kind}): kind is LIBRARY or TOOL")
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${rpath}")
endfunction()

# taihu_add_module(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# One library per module folder: target taihu_<name>, alias taihu::<name>, public
# headers in <name>/include/taihu/<name>/, installed and exported as taihu::<name>.
function(taihu_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target taihu_${name})
  add_library(${target} ${ARG_SOURCES})
  add_library(taihu::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME taihu_${name}
    EXPORT_NAME ${name}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  taihu_set_warnings(${target})
  taihu_set_install_rpath(${target} LIBRARY)
  install(TARGETS ${target} EXPORT taihuTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set_property(GLOBAL APPEND PROPERTY TAIHU_MODULES ${name})
endfunction()

# taihu_add_tool(<exe-name> SOURCES ... DEPS ...): a command-line program in build/bin.
function(taihu_add_tool name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  taihu_set_warnings(${name})
  taihu_set_install_rpath(${name} TOOL)
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

# Sources compiled for one ISA: taihu_isa_sources(<isa> file...) sets the flags the
# kernels need; dispatch guarantees they only run on CPUs that support them.
set(TAIHU_FLAGS_avx2 -mavx2 -mfma -mf16c)
set(TAIHU_FLAGS_avx512 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -mf16c)
function(taihu_isa_sources isa)
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${TAIHU_FLAGS_${isa}}")
endfunction()
