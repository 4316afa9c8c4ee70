/* h5sparse client API: the Lifeboat RFC's sparse-dataset functions for stock HDF5 1.14.
 *
 * Dataset creation property functions work on any DCPL (they set the structured-chunk filter,
 * ID 45100, and its parameters). Dataset functions need the h5sparse VOL connector to be
 * active (HDF5_VOL_CONNECTOR="h5sparse under_vol=0;under_info={}"); without it they fail with
 * a clear error. Every function reports failures on the HDF5 error stack under the "h5sparse"
 * error class. */
#ifndef H5SPARSE_H
#define H5SPARSE_H

#include <hdf5.h>

#include "h5sparse_vol.h" /* section numbers, h5sparse_struct_chunk_info_t */

#ifdef __cplusplus
extern "C" {
#endif

/* Filter ID of the structured-chunk filter (unregistered range; registration pending). */
#define H5SPARSE_FILTER_STRUCTURED_CHUNK 45100

/* RFC H5Pset_sparse_chunk: chunked layout whose chunks are structured chunks. */
herr_t h5sparse_pset_sparse_chunk(hid_t dcpl_id, int ndims, const hsize_t dim[]);

/* RFC H5Pset_filter2: appends a filter to one section's pipeline (deflate 1, shuffle 2,
 * lzf 32000, blosc 32001), with H5Pset_filter's flags and cd_values. Sections: 0 selection,
 * 1 values, 2 lengths and 3 data (variable-length datatypes only). */
herr_t h5sparse_pset_section_filter(hid_t dcpl_id, unsigned section, H5Z_filter_t filter, unsigned flags,
                                    size_t cd_nelmts, const unsigned cd_values[]);

/* Number of filters in a section's pipeline, and one filter's parameters
 * (RFC H5Pget_nfilter2 / H5Pget_filter3). cd_nelmts is in/out as for H5Pget_filter2. */
int h5sparse_pget_section_nfilters(hid_t dcpl_id, unsigned section);
H5Z_filter_t h5sparse_pget_section_filter(hid_t dcpl_id, unsigned section, unsigned idx, unsigned *flags,
                                          size_t *cd_nelmts, unsigned cd_values[]);

/* When set, a write does not define elements whose value equals the fill value (so a dense
 * array written by unmodified code stores only the other elements); it erases them. */
herr_t h5sparse_pset_fill_is_undefined(hid_t dcpl_id, hbool_t enabled);

/* True when a DCPL (or a dataset's) describes a sparse dataset. */
htri_t h5sparse_is_sparse(hid_t dcpl_or_dataset_id);

/* RFC H5Dget_defined: a dataspace (the dataset's extent) selecting the defined elements among
 * those selected by file_space_id (H5S_ALL: the whole dataset). The caller closes it. */
hid_t h5sparse_dget_defined(hid_t dset_id, hid_t file_space_id, hid_t dxpl_id);

/* RFC H5Derase: makes the selected elements undefined; they read as the fill value again. */
herr_t h5sparse_derase(hid_t dset_id, hid_t file_space_id, hid_t dxpl_id);

/* ---- Coordinate I/O --------------------------------------------------------------------
 * Elements in and out as coordinates and values, with no dataspace selection in between:
 * the work follows the elements and chunks touched, never the extent. Variable-length
 * datasets take and give values as H5Dwrite and H5Dread do (char* strings, hvl_t sequences,
 * a compound in the dataset's own type): values read are allocated by the DXPL's
 * variable-length allocator; h5sparse_dread_coo's caller owns them (H5Treclaim frees them),
 * h5sparse_diterate_coo's op sees them until it returns. */

/* Defines the num_points elements at coords (num_points x rank, row-major, any order) with
 * values (num_points elements of mem_type_id, converted to the dataset's type as H5Dwrite
 * converts). A coordinate given twice takes its last value. A coordinate outside the extent
 * fails the call before anything is stored. With fill-is-undefined, fill values erase. On an
 * MPI-IO file both calls are collective whatever dxpl_id says: every rank calls them, each with
 * its own coordinates (maybe none); the highest rank wins where ranks give the same one. */
herr_t h5sparse_dwrite_coo(hid_t dset_id, size_t num_points, const hsize_t *coords, hid_t mem_type_id,
                           const void *values, hid_t dxpl_id);

/* Makes the elements at coords undefined (those undefined already stay so). */
herr_t h5sparse_derase_coo(hid_t dset_id, size_t num_points, const hsize_t *coords, hid_t dxpl_id);

/* Calls op with the defined elements among file_space_id (H5S_ALL: all) in batches of whole
 * chunks, about max_bytes of coordinates and values each (0: 64 MiB), with values converted
 * to mem_type_id (H5I_INVALID_HID: coordinates only, values NULL). Elements come in row-major
 * order; a batch holds whole bands of chunks (chunks sharing their rows), so the batches
 * together are in row-major order too, except where one band of chunks holds more than
 * max_bytes (it is then cut into groups of whole chunks, each in row-major order).
 * cursor (NULL, or rank values) resumes an iteration op stopped: on input, the origin of the
 * chunk to start from (all zeros: the first); on output, the origin of the chunk after the
 * last batch passed to op, or cursor[0] = HSIZE_UNDEF when no chunk is left.
 * Returns 0, op's positive value when it stopped the iteration, negative on failure (also
 * when op returned a negative value). */
herr_t h5sparse_diterate_coo(hid_t dset_id, hid_t file_space_id, hid_t mem_type_id, size_t max_bytes,
                             hsize_t *cursor, h5sparse_coo_op_t op, void *op_data, hid_t dxpl_id);

/* h5sparse_diterate_coo into the caller's memory: before each batch, room (see
 * h5sparse_coo_room_t) says where its coordinates and values go; they are written there once,
 * then op, when not NULL, is called with them. With max_bytes SIZE_MAX a whole region comes
 * in one batch: its exact size is asked for once, and nothing is copied after. */
herr_t h5sparse_dread_coo(hid_t dset_id, hid_t file_space_id, hid_t mem_type_id, size_t max_bytes, hsize_t *cursor,
                          h5sparse_coo_room_t room, h5sparse_coo_op_t op, void *op_data, hid_t dxpl_id);

/* The defined elements of a box of a 2-D dataset (file_space_id: one block, or H5S_ALL) in
 * compressed-row form, as scipy.sparse's CSR and anndata hold them, in one batch: room is
 * called once and sets *coords to room for num_points column indices (each the element's
 * column minus the box's first column, an integer of index_size bytes: 4 for boxes narrower
 * than 2^31 columns, or 8) in place of coordinates, *values as h5sparse_dread_coo does; and
 * row_counts (one per row of the box) receives each row's count of elements. Elements come
 * in row-major order, so the prefix sums of row_counts are CSR's row pointers. */
herr_t h5sparse_dread_csr(hid_t dset_id, hid_t file_space_id, hid_t mem_type_id, size_t index_size,
                          hsize_t *row_counts, h5sparse_coo_room_t room, void *op_data, hid_t dxpl_id);

/* ---- Direct structured-chunk I/O (RFC section 2.2) -------------------------------------
 * A chunk's sections as stored: the bytes after each section's pipeline, with their stored
 * and unfiltered sizes and filter masks (h5sparse_struct_chunk_info_t). offset is the chunk's
 * first element. Section bytes are those of docs/FORMAT.md ("Structured chunk"). */

/* RFC H5Dwrite_struct_chunk: stores the chunk made of the given sections (buf[i] holds
 * chunk_info->section_size[i] bytes). Every section is decoded with the dataset's section
 * pipeline to verify it (its unfiltered size, the selection for the chunk's dimensions, one
 * value per defined element) and to compute the chunk's checksums; anything inconsistent is
 * refused and the chunk stored before stays as it was. Replaces a stored chunk. */
herr_t h5sparse_dwrite_struct_chunk(hid_t dset_id, hid_t dxpl_id, const h5sparse_struct_chunk_info_t *chunk_info,
                                    const hsize_t *offset, const void *const buf[]);

/* RFC H5Dread_struct_chunk: with buf NULL, fills chunk_info only (number of sections, their
 * sizes and masks). With buf, chunk_info->section_size[i] on input is the capacity of buf[i]
 * (as a previous size query leaves it) and the sections are copied; a buffer too small fails
 * the call, copies nothing and leaves the needed sizes in chunk_info. No chunk stored at
 * offset is an error. Header and stored-bytes checksums are verified; nothing is decoded. */
herr_t h5sparse_dread_struct_chunk(hid_t dset_id, hid_t dxpl_id, const hsize_t *offset,
                                   h5sparse_struct_chunk_info_t *chunk_info, void *buf[]);

/* RFC H5Dget_struct_chunk_info: the chunk_idx-th stored chunk (chunk index order) among those
 * that meet the selection fspace_id (H5S_ALL: all stored chunks); an index past the last is
 * an error. chunk_size is the stored size of the whole chunk (header and sections). NULL may
 * be passed for any OUT parameter. */
herr_t h5sparse_dget_struct_chunk_info(hid_t dset_id, hid_t fspace_id, hsize_t chunk_idx, hsize_t *offset,
                                       h5sparse_struct_chunk_info_t *chunk_info, haddr_t *addr,
                                       hsize_t *chunk_size);

/* RFC H5Dget_struct_chunk_info_by_coord: when no chunk is stored at offset, chunk_size is 0,
 * addr HADDR_UNDEF and chunk_info untouched. */
herr_t h5sparse_dget_struct_chunk_info_by_coord(hid_t dset_id, const hsize_t *offset,
                                                h5sparse_struct_chunk_info_t *chunk_info, haddr_t *addr,
                                                hsize_t *chunk_size);

/* RFC H5Dstruct_chunk_iter: calls op once per stored chunk, in chunk index order, with
 * op_data_size and op_data passed through (the finalized callback). op may do chunk I/O on
 * the dataset (the index is listed before the first call). Returns 0 after the last chunk,
 * op's positive value when it stopped the iteration, negative on failure. */
herr_t h5sparse_dstruct_chunk_iter(hid_t dset_id, hid_t dxpl_id, h5sparse_struct_chunk_iter_op_t op,
                                   size_t op_data_size, void *op_data);

/* Copies "h5sparse <version>" of the connector serving file_id into buf; fails when the file
 * is not opened through the connector. */
herr_t h5sparse_connector_version(hid_t file_id, char *buf, size_t size);

/* ---- Variable-length chunks without the connector --------------------------------------
 * For a reader that takes a variable-length sparse dataset's stored chunks itself
 * (H5Dread_chunk, h5py's read_direct_chunk) with no connector: the dataset's parameters are
 * the cd_values of filter 45100 in its DCPL, all of them (H5Pget_filter_by_id2), and the
 * chunks are decoded and verified here as the connector decodes them (docs/FORMAT.md, version
 * 3). No HDF5 function is called but the error stack's: a failure's record carries the
 * h5sparse error code as its minor message, "corrupt data" for parameters or stored bytes that
 * break the format (checksums included), "unsupported" for what this build cannot decode (a
 * newer writer's format, a Blosc codec this c-blosc was built without). */

/* The true datatype of a variable-length dataset as H5Tencode writes it (H5Tdecode's input):
 * copies up to size bytes into buf (NULL: none) and returns their number. Negative when the
 * parameters are not a variable-length dataset's (a fixed-size one's: "invalid argument"). */
ssize_t h5sparse_var_true_type(size_t cd_nelmts, const unsigned cd_values[], void *buf, size_t size);

/* One decoded chunk: header fields per section (0 selection, 1 fixed parts, 2 lengths, 3
 * data), then the defined elements, which go where the room callback says. */
typedef struct h5sparse_var_chunk_t {
  uint32_t filter_mask[4];      /* OUT: bit i set: filter i of the section's pipeline skipped */
  size_t section_size[4];       /* OUT: stored bytes of each section */
  size_t section_orig_size[4];  /* OUT: unfiltered bytes of each section */
  size_t fixed_size;            /* OUT: bytes of an element's fixed-size members, packed */
  size_t num_slots;             /* OUT: variable-length members of an element */
  size_t num_elements;          /* OUT when decoded: defined elements */
  size_t data_size;             /* OUT when decoded: payload bytes of all the elements */
  uint32_t *offsets;            /* room: num_elements offsets in the chunk (row-major, ascending) */
  void *fixed;                  /* room: num_elements * fixed_size bytes (file types' bytes) */
  uint64_t *ends;               /* room: num_elements * num_slots ends in data; member m of element
                                   e is data[ends[k - 1], ends[k]) with k = e * num_slots + m
                                   (from 0 for k = 0), in its base type's file bytes */
  uint8_t *null;                /* room: num_elements * num_slots flags, 1 for NULL (no payload),
                                   which is not the empty value */
  void *data;                   /* room: data_size bytes */
} h5sparse_var_chunk_t;

/* Called once per decoded chunk with the OUT fields set: sets the room fields to memory of
 * those sizes (NULL where a size is 0), which is then filled. Return negative to fail. */
typedef herr_t (*h5sparse_var_room_t)(h5sparse_var_chunk_t *chunk, void *op_data);

/* Decodes the stored chunk buf (buf_size bytes, with H5Dread_chunk's filter_mask) of the
 * variable-length dataset whose parameters are cd_values. room NULL: only the header is read
 * (its checksum verified) into chunk's OUT fields. Otherwise every section is unfiltered and
 * verified, then room is called and the elements copied. A chunk stored around the filter
 * (filter_mask bit 0) has zero sections and no elements: only zero bytes are valid there. */
herr_t h5sparse_decode_var_chunk(size_t cd_nelmts, const unsigned cd_values[], const void *buf, size_t buf_size,
                                 uint32_t filter_mask, h5sparse_var_chunk_t *chunk, h5sparse_var_room_t room,
                                 void *op_data);

/* ---- Chunks encoded away from the file ------------------------------------------------
 * For a write split between processes: workers (a cluster's) encode a fixed-size sparse
 * dataset's chunks from coordinates and values with no HDF5 call but the error stack's, and the
 * one process that has the file open stores their bytes with H5Dwrite_chunk (filter mask 0),
 * which through the connector checks each chunk before it is stored (below). The
 * dataset's parameters are all cd_values of filter 45100 in its DCPL (H5Pget_filter_by_id2). */

/* How H5Dwrite_chunk with this DXPL checks a sparse dataset's chunk before storing it:
 * H5SPARSE_CHUNK_CHECK_DECODE (the default) decodes every section as a reader does;
 * H5SPARSE_CHUNK_CHECK_CHECKSUMS, for chunks h5sparse_encode_coo made, checks the header against
 * the dataset's layout and the stored bytes against their checksums (a hash of the bytes: what
 * arrives intact from the encoder is stored). */
#define H5SPARSE_CHUNK_CHECK_DECODE 0u
#define H5SPARSE_CHUNK_CHECK_CHECKSUMS 1u
herr_t h5sparse_pset_chunk_write_check(hid_t dxpl_id, unsigned check);

/* A chunk's stored bytes: as H5Dread_chunk gives them (in), or to store (out, filter mask 0). */
typedef struct h5sparse_chunk_bytes_t {
  hsize_t offset[H5S_MAX_RANK]; /* the chunk's first element; rank values used */
  uint32_t filter_mask;
  size_t size;
  const void *buf;
} h5sparse_chunk_bytes_t;

/* Receives one encoded chunk, its bytes valid during the call. Return negative to fail. */
typedef herr_t (*h5sparse_chunk_bytes_op_t)(const h5sparse_chunk_bytes_t *chunk, void *op_data);

/* The chunks h5sparse_dwrite_coo would store for the same elements on a dataset of extent
 * dims whose stored chunks are stored[0 .. num_stored) (others not stored), byte for byte:
 * values are num_points elements in the dataset's file datatype (no conversion), a coordinate
 * given twice takes its last value, fill values erase with fill-is-undefined. op gets each
 * touched chunk once, in row-major order of their offsets. moves_rewritten: the file's writer
 * is an SWMR writer (a rewritten chunk then never keeps its stored size). A coordinate outside
 * dims fails the call before op is called; a stored chunk that does not decode fails it naming
 * the chunk. Fixed-size datasets only. message: NULL, or room for message_size bytes: a
 * failure's message then goes there (NUL-terminated, cut to fit) instead of onto HDF5's error
 * stack, and the call makes no HDF5 call at all, so that threads may encode while another
 * thread of the process is inside HDF5 (which a build without thread safety does not allow). */
herr_t h5sparse_encode_coo(size_t cd_nelmts, const unsigned cd_values[], int rank, const hsize_t dims[],
                           hbool_t moves_rewritten, size_t num_points, const hsize_t *coords, const void *values,
                           size_t num_stored, const h5sparse_chunk_bytes_t *stored, h5sparse_chunk_bytes_op_t op,
                           void *op_data, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif

#endif
