// The caller's side of a transfer (H5Dread/H5Dwrite's memory buffer, datatype and selection)
// in the sparse engine's terms: the selected elements as one packed array in selection order,
// in the dataset's datatype.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/engine/coordinates.hpp"
#include "h5sparse/engine/owner_merge.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "handle.hpp"

namespace h5sparse::hdf5 {

/// Whether the transfer property list sets a data transform (H5Pset_data_transform).
bool has_data_transform(hid_t dxpl);

/// The selected memory elements (`count` of them) in selection order, in `file_type`: `buf`
/// itself when it already is that, else gathered (H5Dgather) and converted (H5Tconvert, the
/// background of each element `fill` or zeros) into `storage`.
const std::uint8_t* values_in_file_type(hid_t mem_type, hid_t mem_space, std::size_t count, hid_t file_type,
                                        const Bytes& fill, hid_t dxpl, const void* buf, Bytes& storage);

/// `count` values in a row (a memory dataspace of `count` elements), in `file_type`.
const std::uint8_t* values_in_file_type(hid_t mem_type, std::size_t count, hid_t file_type, const Bytes& fill,
                                        hid_t dxpl, const void* buf, Bytes& storage);

/// h5sparse_dwrite_coo: `n` values of `mem_type` in a row at `buf`, converted to the dataset's
/// type (`file_type`; a variable-length dataset's true type) and defined at the coordinates.
void write_coordinate_values(const SparseEngine& engine, ChunkStore& store, const ChunkGrid& grid,
                             const std::uint64_t* coords, std::size_t n, hid_t mem_type, hid_t file_type, hid_t dxpl,
                             const void* buf);

class VarMemoryValues;

/// A coordinate scan's values handed over in a memory datatype, converted as H5Dread converts
/// them (H5Tconvert, zero background) when the types differ; a variable-length dataset's
/// (`var`: the scan gives numbers of its batch's values) by VarMemoryValues.
class ValuesToMemory {
 public:
  ValuesToMemory(hid_t file_type, hid_t mem_type, bool var, hid_t dxpl);
  ~ValuesToMemory();
  /// The batch's values in the memory type: the batch's own or a converted copy, valid (with
  /// variable-length payloads) until the next call.
  const void* operator()(const CoordinateBatch& batch);
  /// Where the scan writes `count` values bound for `room`, the caller's memory for them in the
  /// memory type: `room` itself when the types are the same, else a staging buffer.
  std::uint8_t* place_for(std::size_t count, void* room);
  /// After the batch was written at place_for(count, room): `room`, holding its values
  /// converted (the caller owns variable-length payloads).
  void* land(const CoordinateBatch& batch);

 private:
  // The batch's `values` converted: variable-length ones put at `out` (their payloads handed
  // over or not), others in converted_. Returns where they are.
  const void* convert(const CoordinateBatch& batch, const void* values, void* out, bool hand_over);

  hid_t file_type_, mem_type_, dxpl_;
  std::size_t file_size_, mem_size_;
  bool convert_;
  std::unique_ptr<VarMemoryValues> var_;
  Bytes converted_, background_, staged_;
  void* room_ = nullptr;
};

/// Where a read puts the selected elements in selection order: straight into the caller's
/// buffer when the memory selection is one run of bytes (H5S_ALL, a whole array, a full row
/// block), else a staging buffer that finish() scatters into the memory selection.
class MemoryDestination {
 public:
  MemoryDestination(hid_t space, std::size_t element_size, std::uint64_t count, void* buf);
  std::uint8_t* data() noexcept { return dest_; }
  /// True when data() is the caller's buffer.
  bool in_place() const noexcept { return staging_.empty(); }
  /// After the elements were put at data(): moves staged ones to their places.
  void finish();

 private:
  hid_t space_;
  std::size_t element_size_;
  std::uint8_t* buf_;
  std::uint8_t* dest_;
  Bytes staging_;
};

/// The memory of one collective write of whole chunks' dense images: the bounding box of the
/// chunks, selected like the file (the part of each chunk inside the extent; same shape, so
/// HDF5 maps memory to chunks block by block), each chunk's image copied into its place (pages
/// outside the selection are never touched).
struct ImageBox {
  Handle space;
  std::unique_ptr<std::uint8_t[]> bytes;
};
ImageBox image_box(const ChunkGrid& grid, const std::vector<const OwnedChunk*>& chunks, std::size_t element_size);

}  // namespace h5sparse::hdf5
