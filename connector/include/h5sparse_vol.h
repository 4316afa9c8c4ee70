/* Public C header of the h5sparse VOL connector: its name, value and the arguments of its
 * optional operations, for clients that call them with H5VLfind_opt_operation and
 * H5VLfile_optional_op / H5VLdataset_optional_op. */
#ifndef H5SPARSE_VOL_H
#define H5SPARSE_VOL_H

#include <hdf5.h>
#include <stddef.h>

#define H5SPARSE_VOL_NAME "h5sparse"
/* Pending registration with The HDF Group; chosen clear of the registered values
 * (512 async, 513 cache, 514 LOG, 510 LowFive, 517 external passthrough). */
#define H5SPARSE_VOL_VALUE 10563

/* Arguments of the file operation "h5sparse.connector_version". */
typedef struct H5SparseVersionArgs {
  char *buffer;      /* receives "h5sparse <version>", NUL-terminated */
  size_t capacity;   /* bytes available in buffer */
} H5SparseVersionArgs;

/* Arguments of the dataset operation "h5sparse.get_defined". */
typedef struct H5SparseGetDefinedArgs {
  hid_t file_space_id;    /* IN: selection to query, or H5S_ALL */
  hid_t defined_space_id; /* OUT: dataspace selecting the defined elements; caller closes it */
} H5SparseGetDefinedArgs;

/* Arguments of the dataset operation "h5sparse.erase". */
typedef struct H5SparseEraseArgs {
  hid_t file_space_id; /* IN: selection to make undefined, or H5S_ALL */
} H5SparseEraseArgs;

#endif
