# How other builds find an installed h5sparse: a CMake package (find_package(h5sparse CONFIG):
# imported targets h5sparse::h5sparse, the client library, and h5sparse::headers, its headers
# alone) and a pkg-config module (h5sparse.pc). Both are relocatable: they locate the install
# from their own path, as the programs' RPATHs do. HDF5 comes into a consumer's build the way it
# came into ours (the same pkg-config module, else CMake's FindHDF5), since h5sparse.h includes
# hdf5.h. The targets are written in h5sparseConfig.cmake rather than exported: an export would
# drag along our build's HDF5 target (with its 1.14 API choice) and the private runtime libraries.
include(CMakePackageConfigHelpers)

set(H5SPARSE_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/h5sparse")
set(H5SPARSE_PKGCONFIG_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(H5SPARSE_LIBRARY_FILE "${CMAKE_SHARED_LIBRARY_PREFIX}h5sparse${CMAKE_SHARED_LIBRARY_SUFFIX}")

# The same names in this build tree, for a project that adds it with add_subdirectory.
add_library(h5sparse_headers INTERFACE)
target_include_directories(h5sparse_headers INTERFACE client/include connector/include)
target_link_libraries(h5sparse_headers INTERFACE h5sparse_hdf5)
add_library(h5sparse::headers ALIAS h5sparse_headers)
add_library(h5sparse::h5sparse ALIAS h5sparse)

configure_package_config_file(cmake/h5sparseConfig.cmake.in "${CMAKE_BINARY_DIR}/cmake/h5sparseConfig.cmake"
  INSTALL_DESTINATION ${H5SPARSE_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR H5SPARSE_INSTALL_PLUGIN_DIR)
# The HDF5 series is part of the ABI (docs/DESIGN.md): another minor version of h5sparse is no match.
write_basic_package_version_file("${CMAKE_BINARY_DIR}/cmake/h5sparseConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_BINARY_DIR}/cmake/h5sparseConfig.cmake" "${CMAKE_BINARY_DIR}/cmake/h5sparseConfigVersion.cmake"
        DESTINATION ${H5SPARSE_CMAKE_INSTALL_DIR})

# How h5sparse.pc brings HDF5: its pkg-config module, else the paths FindHDF5 gave our build.
set(H5SPARSE_HDF5_PC_REQUIRES "${H5SPARSE_HDF5_PC_MODULE_NAME}")
set(H5SPARSE_HDF5_PC_CFLAGS "")
set(H5SPARSE_HDF5_PC_LIBS "")
if(NOT H5SPARSE_HDF5_PC_MODULE_NAME)
  list(TRANSFORM H5SPARSE_HDF5_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE h5sparse_hdf5_cflags)
  list(JOIN h5sparse_hdf5_cflags " " H5SPARSE_HDF5_PC_CFLAGS)
  list(JOIN HDF5_C_LIBRARIES " " H5SPARSE_HDF5_PC_LIBS)
  string(PREPEND H5SPARSE_HDF5_PC_CFLAGS " ")
  string(PREPEND H5SPARSE_HDF5_PC_LIBS " ")
endif()
# The prefix relative to the .pc file (${pcfiledir}), so that the install can move.
file(RELATIVE_PATH h5sparse_pc_to_prefix "/${H5SPARSE_PKGCONFIG_INSTALL_DIR}" "/")
string(REGEX REPLACE "/$" "" h5sparse_pc_to_prefix "${h5sparse_pc_to_prefix}")
configure_file(cmake/h5sparse.pc.in "${CMAKE_BINARY_DIR}/pkgconfig/h5sparse.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/pkgconfig/h5sparse.pc" DESTINATION ${H5SPARSE_PKGCONFIG_INSTALL_DIR})
