/* Public C header of the h5sparse VOL connector: its name, value and the arguments of its
 * optional operations, for clients that call them with H5VLfind_opt_operation and
 * H5VLfile_optional_op / H5VLdataset_optional_op. */
#ifndef H5SPARSE_VOL_H
#define H5SPARSE_VOL_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

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

/* ---- Coordinate I/O ------------------------------------------------------------------- */

/* Called by "h5sparse.iterate_coo" with each batch: num_points defined elements, their
 * coordinates (num_points x rank, row-major) and values (in the iteration's memory type, or
 * NULL when it asked for coordinates only). Both are valid during the call only. Return 0 to
 * continue, a positive value to stop (the iteration returns it), a negative one to fail. */
typedef herr_t (*h5sparse_coo_op_t)(size_t num_points, const hsize_t *coords, const void *values, void *op_data);

/* Called by "h5sparse.iterate_coo", when given, before each batch is written: sets *coords to
 * room for num_points x rank coordinates and, when values are read, *values to room for
 * num_points values of the memory type (values is NULL when coordinates only are read). The
 * batch is written there, once, then passed to op (if any) with those pointers; the memory
 * stays the caller's. Return negative to fail the iteration. */
typedef herr_t (*h5sparse_coo_room_t)(size_t num_points, hsize_t **coords, void **values, void *op_data);

/* Arguments of the dataset operation "h5sparse.write_coo". */
typedef struct H5SparseWriteCooArgs {
  size_t num_points;   /* IN */
  const hsize_t *coords; /* IN: num_points x rank coordinates, any order */
  hid_t mem_type_id;   /* IN: type of values */
  const void *values;  /* IN: num_points values */
} H5SparseWriteCooArgs;

/* Arguments of the dataset operation "h5sparse.erase_coo". */
typedef struct H5SparseEraseCooArgs {
  size_t num_points;     /* IN */
  const hsize_t *coords; /* IN: num_points x rank coordinates */
} H5SparseEraseCooArgs;

/* Arguments of the dataset operation "h5sparse.iterate_coo". */
typedef struct H5SparseIterateCooArgs {
  hid_t file_space_id; /* IN: region (H5S_ALL: the whole dataset) */
  hid_t mem_type_id;   /* IN: type of the values passed to op; H5I_INVALID_HID: coordinates only */
  size_t max_bytes;    /* IN: coordinates and values per batch, about (0: a default) */
  hsize_t *cursor;     /* IN/OUT, may be NULL: rank values (see h5sparse_diterate_coo) */
  h5sparse_coo_op_t op; /* IN, may be NULL when room is given */
  void *op_data;       /* IN: passed to op and room */
  herr_t result;       /* OUT: 0, or the positive value op stopped with */
  h5sparse_coo_room_t room; /* IN, may be NULL: batches in the connector's memory */
  hsize_t *row_counts; /* IN, NULL: coordinates; else compressed rows (see h5sparse_dread_csr):
                          one count per row of the region, set by the operation */
  size_t index_size;   /* IN, with row_counts: bytes of a column index, 4 or 8 */
} H5SparseIterateCooArgs;

/* ---- Direct structured-chunk I/O (RFC H5D*_struct_chunk*) ------------------------------ */

/* Section types of a structured chunk (RFC H5_section_type_t). Sparse chunks of fixed-size
 * data have two sections: the encoded selection, then the defined elements' values. */
#define H5SPARSE_SECTION_SELECTION 0 /* encoded selection of defined elements */
#define H5SPARSE_SECTION_VALUES 1    /* values of the defined elements (RFC H5_SECTION_FIXED) */
#define H5SPARSE_MAX_SECTIONS 3      /* room for the RFC's variable-length section */

/* RFC H5D_struct_chunk_info_t (as finalized in April 2025): what the chunk index says about
 * one stored structured chunk. Masks are 32 bits wide (a pipeline holds up to 32 filters, as
 * H5Dread_chunk's mask); the RFC draft has 16. */
typedef struct h5sparse_struct_chunk_info_t {
  uint8_t num_sections;                           /* 2 */
  int sections[H5SPARSE_MAX_SECTIONS];            /* H5SPARSE_SECTION_* of each section */
  uint32_t filter_mask[H5SPARSE_MAX_SECTIONS];    /* bit i: filter i of the section's pipeline skipped */
  size_t section_size[H5SPARSE_MAX_SECTIONS];     /* stored (filtered) bytes of each section */
  size_t section_orig_size[H5SPARSE_MAX_SECTIONS]; /* unfiltered bytes of each section */
} h5sparse_struct_chunk_info_t;

/* RFC H5D_struct_chunk_iter_op_t (finalized form, with op_data_size). Return 0 to continue,
 * a positive value to stop (the iteration returns it), a negative one to fail. */
typedef int (*h5sparse_struct_chunk_iter_op_t)(const hsize_t *offset, h5sparse_struct_chunk_info_t *chunk_info,
                                               haddr_t *addr, hsize_t *chunk_size, size_t op_data_size,
                                               void *op_data);

/* Arguments of the dataset operation "h5sparse.write_struct_chunk". */
typedef struct H5SparseWriteStructChunkArgs {
  const hsize_t *offset;                          /* IN: the chunk's first element */
  const h5sparse_struct_chunk_info_t *chunk_info; /* IN: sections, their sizes and masks */
  const void *const *buf;                         /* IN: num_sections stored section buffers */
} H5SparseWriteStructChunkArgs;

/* Arguments of the dataset operation "h5sparse.read_struct_chunk". */
typedef struct H5SparseReadStructChunkArgs {
  const hsize_t *offset;                    /* IN: the chunk's first element */
  h5sparse_struct_chunk_info_t *chunk_info; /* IN: section_size[i] = capacity of buf[i] (when buf);
                                               OUT: the chunk's info */
  void **buf;                               /* IN/OUT: section buffers, or NULL for the info only */
} H5SparseReadStructChunkArgs;

/* Arguments of the dataset operation "h5sparse.get_struct_chunk_info" (by index). */
typedef struct H5SparseStructChunkInfoArgs {
  hid_t file_space_id;                      /* IN: selection (H5S_ALL: whole dataset) */
  hsize_t chunk_index;                      /* IN: among stored chunks meeting the selection */
  hsize_t *offset;                          /* OUT (rank values; may be NULL) */
  h5sparse_struct_chunk_info_t *chunk_info; /* OUT (may be NULL) */
  haddr_t *addr;                            /* OUT (may be NULL) */
  hsize_t *chunk_size;                      /* OUT: stored bytes of the whole chunk (may be NULL) */
} H5SparseStructChunkInfoArgs;

/* Arguments of the dataset operation "h5sparse.get_struct_chunk_info_by_coord". */
typedef struct H5SparseStructChunkInfoByCoordArgs {
  const hsize_t *offset;                    /* IN: the chunk's first element */
  h5sparse_struct_chunk_info_t *chunk_info; /* OUT, untouched when no chunk is stored (may be NULL) */
  haddr_t *addr;                            /* OUT: HADDR_UNDEF when no chunk is stored (may be NULL) */
  hsize_t *chunk_size;                      /* OUT: 0 when no chunk is stored (may be NULL) */
} H5SparseStructChunkInfoByCoordArgs;

/* Arguments of the dataset operation "h5sparse.struct_chunk_iter". */
typedef struct H5SparseStructChunkIterArgs {
  h5sparse_struct_chunk_iter_op_t op; /* IN: called once per stored chunk */
  size_t op_data_size;                /* IN: passed to op */
  void *op_data;                      /* IN: passed to op */
  int result;                         /* OUT: 0, or the positive value op stopped with */
} H5SparseStructChunkIterArgs;

#endif
