# The HDF5 C library of the flavour being built (serial, or parallel with -DH5SPARSE_PARALLEL=ON)
# as two interface targets: h5sparse_hdf5 (the C library) and h5sparse_hdf5_hl (its high-level
# library, for h5sparse-tool); H5SPARSE_HDF5_VERSION says which HDF5 it is.
#
# pkg-config first: Debian names its flavours hdf5-serial and hdf5-openmpi (its plain hdf5.pc
# follows whichever flavour the alternatives system chose); Fedora, conda and Homebrew ship
# hdf5.pc. CMake's FindHDF5 only where pkg-config knows no HDF5: with HDF5 2.x's compiler wrapper
# and Debian's renamed library (libhdf5_serial), CMake 4's FindHDF5 fails ("HDF5 was found, but
# a different variable was set which contains the location of the `hdf5::hdf5` library").
# -DH5SPARSE_HDF5_PKG=<module> names the pkg-config module to use.
include(CheckSymbolExists)

if(H5SPARSE_PARALLEL)
  set(h5sparse_hdf5_modules hdf5-openmpi hdf5-mpich hdf5)
else()
  set(h5sparse_hdf5_modules hdf5-serial hdf5)
endif()
set(H5SPARSE_HDF5_PKG "" CACHE STRING "pkg-config module of the HDF5 to build against (default: by flavour)")
if(H5SPARSE_HDF5_PKG)
  set(h5sparse_hdf5_modules ${H5SPARSE_HDF5_PKG})
endif()
add_library(h5sparse_hdf5 INTERFACE)
add_library(h5sparse_hdf5_hl INTERFACE)
# The 1.14 API names in both series (HDF5 2.x maps them to its versioned functions).
target_compile_definitions(h5sparse_hdf5 INTERFACE H5_USE_114_API_DEFAULT)
if(H5SPARSE_HDF5_AT_RUN_TIME)
  # HDF5's headers only (-DH5SPARSE_HDF5_INCLUDE_DIR=...): no library is linked, the program's
  # HDF5 is bound at run time (hdf5_binding/).
  find_path(H5SPARSE_HDF5_INCLUDE_DIR H5public.h PATH_SUFFIXES hdf5/serial REQUIRED)
  file(STRINGS "${H5SPARSE_HDF5_INCLUDE_DIR}/H5public.h" h5sparse_version_lines
       REGEX "^#define H5_VERS_(MAJOR|MINOR|RELEASE)[ \t]")
  foreach(part MAJOR MINOR RELEASE)
    string(REGEX MATCH "H5_VERS_${part}[ \t]+([0-9]+)" _ "${h5sparse_version_lines}")
    list(APPEND h5sparse_version_parts ${CMAKE_MATCH_1})
  endforeach()
  list(JOIN h5sparse_version_parts "." H5SPARSE_HDF5_VERSION)
  set(H5SPARSE_HDF5_INCLUDE_DIRS "${H5SPARSE_HDF5_INCLUDE_DIR}")
  target_include_directories(h5sparse_hdf5 INTERFACE ${H5SPARSE_HDF5_INCLUDE_DIRS})
  message(STATUS "HDF5 ${H5SPARSE_HDF5_VERSION} headers in ${H5SPARSE_HDF5_INCLUDE_DIR}, bound at run time")
  return()  # no library, no MPI: the flavour checks below are the linked builds'
endif()
pkg_search_module(H5SPARSE_HDF5_PC QUIET IMPORTED_TARGET GLOBAL ${h5sparse_hdf5_modules})
if(H5SPARSE_HDF5_PC_FOUND)
  set(H5SPARSE_HDF5_VERSION ${H5SPARSE_HDF5_PC_VERSION})
  set(H5SPARSE_HDF5_INCLUDE_DIRS ${H5SPARSE_HDF5_PC_INCLUDE_DIRS})
  target_link_libraries(h5sparse_hdf5 INTERFACE PkgConfig::H5SPARSE_HDF5_PC)
  # The high-level library lies beside the C library under the same name plus _hl.
  list(GET H5SPARSE_HDF5_PC_LINK_LIBRARIES 0 h5sparse_hdf5_c_library)
  get_filename_component(h5sparse_hdf5_dir "${h5sparse_hdf5_c_library}" DIRECTORY)
  get_filename_component(h5sparse_hdf5_name "${h5sparse_hdf5_c_library}" NAME_WE)
  string(REGEX REPLACE "^lib" "" h5sparse_hdf5_name "${h5sparse_hdf5_name}")
  find_library(H5SPARSE_HDF5_HL_LIBRARY NAMES ${h5sparse_hdf5_name}_hl HINTS "${h5sparse_hdf5_dir}" NO_DEFAULT_PATH)
  if(NOT H5SPARSE_HDF5_HL_LIBRARY)
    message(FATAL_ERROR "no ${h5sparse_hdf5_name}_hl beside ${h5sparse_hdf5_c_library} (HDF5's high-level library)")
  endif()
  target_link_libraries(h5sparse_hdf5_hl INTERFACE h5sparse_hdf5 ${H5SPARSE_HDF5_HL_LIBRARY})
  message(STATUS "HDF5 ${H5SPARSE_HDF5_VERSION}: ${h5sparse_hdf5_c_library} (pkg-config ${H5SPARSE_HDF5_PC_MODULE_NAME})")
else()
  set(HDF5_PREFER_PARALLEL ${H5SPARSE_PARALLEL})
  find_package(HDF5 REQUIRED COMPONENTS C HL)
  set(H5SPARSE_HDF5_VERSION ${HDF5_VERSION})
  set(H5SPARSE_HDF5_INCLUDE_DIRS ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
  target_include_directories(h5sparse_hdf5 INTERFACE ${H5SPARSE_HDF5_INCLUDE_DIRS})
  target_link_libraries(h5sparse_hdf5 INTERFACE ${HDF5_C_LIBRARIES})
  target_compile_definitions(h5sparse_hdf5 INTERFACE ${HDF5_C_DEFINITIONS})
  target_link_libraries(h5sparse_hdf5_hl INTERFACE h5sparse_hdf5 ${HDF5_HL_LIBRARIES})
endif()

if(H5SPARSE_HDF5_VERSION VERSION_LESS 1.14)
  message(FATAL_ERROR "HDF5 >= 1.14 is required (found ${H5SPARSE_HDF5_VERSION}); run through scripts/dev")
endif()

# The flavour is checked, not assumed: a serial build against parallel HDF5 (or the reverse)
# makes plugins that refuse to load where they are meant to.
set(CMAKE_REQUIRED_INCLUDES ${H5SPARSE_HDF5_INCLUDE_DIRS})
check_symbol_exists(H5_HAVE_PARALLEL "H5pubconf.h" H5SPARSE_HDF5_IS_PARALLEL)
unset(CMAKE_REQUIRED_INCLUDES)
if(H5SPARSE_PARALLEL AND NOT H5SPARSE_HDF5_IS_PARALLEL)
  message(FATAL_ERROR "H5SPARSE_PARALLEL needs parallel HDF5 (found serial HDF5 ${H5SPARSE_HDF5_VERSION}); "
                      "Debian: libhdf5-mpi-dev, or name its pkg-config module with -DH5SPARSE_HDF5_PKG=")
elseif(NOT H5SPARSE_PARALLEL AND H5SPARSE_HDF5_IS_PARALLEL)
  message(FATAL_ERROR "the serial flavour found parallel HDF5 ${H5SPARSE_HDF5_VERSION}; name the serial "
                      "HDF5's pkg-config module with -DH5SPARSE_HDF5_PKG= or configure with -DH5SPARSE_PARALLEL=ON")
endif()
if(H5SPARSE_PARALLEL)
  find_package(MPI REQUIRED COMPONENTS C)
  target_link_libraries(h5sparse_hdf5 INTERFACE MPI::MPI_C)
  target_compile_definitions(h5sparse_hdf5 INTERFACE H5SPARSE_PARALLEL=1)
endif()
