# install(): headers, libraries, the CMake package (find_package(taihu)) and taihu.pc.
include(CMakePackageConfigHelpers)
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT taihuTargets NAMESPACE taihu:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/taihu)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/taihuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/taihuConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/taihu)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/taihuConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/taihuConfig.cmake ${PROJECT_BINARY_DIR}/taihuConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/taihu)

get_property(_modules GLOBAL PROPERTY TAIHU_MODULES)
set(TAIHU_PC_LIBS "")
foreach(m IN LISTS _modules)
  string(PREPEND TAIHU_PC_LIBS "-ltaihu_${m} ")
endforeach()
# taihu.pc finds its prefix from where it lies (${pcfiledir}), so an install made with
# `cmake --install build --prefix <dir>` (or moved later) points at itself.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TAIHU_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _pc_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" _pc_up "${_pc_up}")
  set(TAIHU_PC_PREFIX "\${pcfiledir}/${_pc_up}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/taihu.pc.in ${PROJECT_BINARY_DIR}/taihu.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/taihu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
include(TaihuPackage)  # cpack -G DEB
