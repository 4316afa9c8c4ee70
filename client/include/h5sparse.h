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

#ifdef __cplusplus
extern "C" {
#endif

/* Filter ID of the structured-chunk filter (unregistered range; registration pending). */
#define H5SPARSE_FILTER_STRUCTURED_CHUNK 45100
/* Sections of a structured chunk. */
#define H5SPARSE_SECTION_SELECTION 0 /* encoded selection of defined elements */
#define H5SPARSE_SECTION_VALUES 1    /* values of the defined elements */

/* RFC H5Pset_sparse_chunk: chunked layout whose chunks are structured chunks. */
herr_t h5sparse_pset_sparse_chunk(hid_t dcpl_id, int ndims, const hsize_t dim[]);

/* RFC H5Pset_filter2: appends a filter to one section's pipeline (deflate 1, shuffle 2,
 * lzf 32000, blosc 32001), with H5Pset_filter's flags and cd_values. */
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

/* Copies "h5sparse <version>" of the connector serving file_id into buf; fails when the file
 * is not opened through the connector. */
herr_t h5sparse_connector_version(hid_t file_id, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
