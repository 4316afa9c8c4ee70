// A virtual dataset (VDS) whose sources are sparse datasets: stripes that writers without MPI
// wrote one file each, joined by one virtual dataset. HDF5's own reads of it (h5py, h5dump) see
// the sources' values through the structured-chunk filter and the fill value elsewhere, so what
// is defined would be lost; get-defined and the coordinate reads answer from the sources
// instead, each mapping taken box to box. Sources are opened read-only below the connector for
// the length of one call.
#pragma once

#include <hdf5.h>

#include <memory>
#include <string>
#include <vector>

#include "h5sparse/engine/coordinates.hpp"
#include "h5sparse_vol.h"

namespace h5sparse::vol {

class VirtualSparse {
 public:
  /// The view of the dataset below when its layout is virtual, else nullptr. Throws when a
  /// mapping is not one box of the virtual dataset taken from one box of its source (printf-
  /// style source names, unlimited or irregular selections).
  static std::unique_ptr<VirtualSparse> detect(void* under, hid_t under_vol_id, hid_t dxpl);

  /// A dataspace (the virtual extent) selecting the defined elements among those selected:
  /// those the sparse sources define, every element of a dense source's box; with no sparse
  /// source, the selection (a dense dataset's elements are all defined).
  hid_t get_defined(hid_t file_space, hid_t dxpl) const;
  /// h5sparse_diterate_coo, h5sparse_dread_coo and h5sparse_dread_csr on the virtual dataset:
  /// every defined element of the region in one batch, in row-major order. A cursor can only
  /// start an iteration (the one batch ends it).
  herr_t iterate_coordinates(const H5SparseIterateCooArgs& a, hid_t dxpl) const;

 private:
  struct Mapping {
    Box target;         ///< in the virtual dataset
    Coords source_start;  ///< the first element of the box it comes from
    std::string file, dataset;
  };
  struct Elements;  // defined elements gathered from the sources

  VirtualSparse(void* under, hid_t under_vol_id, std::vector<Mapping> mappings, std::vector<std::uint64_t> dims);
  /// The defined elements of the region's parts in sparse sources (values of `mem_type`, none
  /// for H5I_INVALID_HID), in row-major order; parts in dense sources are refused unless
  /// `dense_allowed`, which collects their boxes.
  Elements gather(hid_t file_space, hid_t mem_type, bool dense_allowed, hid_t dxpl) const;
  std::vector<std::string> source_places(hid_t dxpl) const;
  std::string source_path(const Mapping& m, const std::vector<std::string>& places) const;

  void* under_;
  hid_t under_vol_id_;
  std::vector<Mapping> mappings_;
  std::vector<std::uint64_t> dims_;
};

}  // namespace h5sparse::vol
