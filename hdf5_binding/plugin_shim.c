/* A plugin file of a build that binds HDF5 at run time (binding.hpp): HDF5 loads it from its
 * plugin path and gets the plugin's class from libh5sparse, which first binds to the HDF5 that
 * called (the return address of H5PLget_plugin_info lies in it). No C++ and no HDF5 call here:
 * all of that is in libh5sparse. H5SPARSE_PLUGIN_INFO and H5SPARSE_PLUGIN_TYPE name the plugin. */
#include <H5PLextern.h>

const void* H5SPARSE_PLUGIN_INFO(const void* address_in_hdf5);

H5PL_type_t H5PLget_plugin_type(void) { return H5SPARSE_PLUGIN_TYPE; }

const void* H5PLget_plugin_info(void) { return H5SPARSE_PLUGIN_INFO(__builtin_return_address(0)); }
