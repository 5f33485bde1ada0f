# cpack -G DEB (run in the build tree): a Debian package of exactly what `cmake
# --install` puts in a prefix (libraries, tools, headers, the CMake package and
# taihu.pc), under /usr. The libraries and tools find each other through their $ORIGIN
# runpaths (taihu_set_install_rpath), and dpkg-shlibdeps derives Depends: from what they
# link (hwloc, protobuf, libpng, ...), so the package installs on a fresh Debian 12.
set(CPACK_PACKAGE_NAME taihu)
set(CPACK_PACKAGE_VENDOR taihu)
set(CPACK_PACKAGE_CONTACT "taihu maintainers <taihu@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The package also carries the headers and the CMake package, whose
# find_dependency(MPI) and find_dependency(Protobuf) need the development files:
# without them a consumer on a fresh system fails at configure (install.fresh_debian).
# CPack appends the shlibdeps-derived runtime libraries to this list.
set(_taihu_dev_depends "")
if(TAIHU_HAVE_MPI AND TAIHU_BUILD_COMM)
  list(APPEND _taihu_dev_depends libopenmpi-dev)
endif()
if(TAIHU_BUILD_CAFFE)
  list(APPEND _taihu_dev_depends libprotobuf-dev)
endif()
# libcudart comes from NVIDIA's toolkit, which dpkg-shlibdeps cannot map to a Debian
# package (it drops it silently): name NVIDIA's runtime package, so that apt refuses the
# .deb where it is missing instead of installing libraries that cannot load. Debian 12
# has no CUDA 13 runtime: configure with -DTAIHU_WITH_CUDA=OFF for a plain-Debian package.
if(TAIHU_HAVE_CUDA)
  list(APPEND _taihu_dev_depends "cuda-cudart-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
endif()
string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_DEPENDS "${_taihu_dev_depends}")
include(CPack)
