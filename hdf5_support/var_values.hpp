// Variable-length datatypes in the sparse engine's terms (docs/DESIGN.md, "Variable-length
// data"): the carrier a variable-length dataset is created with (an opaque 16-byte type, the
// true type in the filter's parameters version 2), and the values of a transfer converted
// between HDF5's memory forms (char* strings, hvl_t sequences) and the engine's VarValues.
// Supported: variable-length strings, variable-length sequences of a fixed-size type, and
// compounds whose members are fixed-size types or either of those.
#pragma once

#include <hdf5.h>

#include <memory>
#include <optional>
#include <vector>

#include "file_selection.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "handle.hpp"

namespace h5sparse::hdf5 {

/// What a variable-length dataset is created as: the opaque carrier and a copy of the DCPL
/// holding the complete parameters (version 2) and no fill value of the true type.
struct VarCarrier {
  Handle type;
  Handle dcpl;
};

/// The carrier of a dataset being created with `type` and `dcpl`, or nullopt when it is no
/// sparse variable-length dataset (no structured-chunk filter, or a fixed-size type).
/// Error(unsupported) for variable-length types that cannot be described (nested ones, arrays
/// of them).
std::optional<VarCarrier> var_carrier(hid_t dcpl, hid_t type);

/// One member of a variable-length dataset's element, in the order of the chunks' fixed part
/// and slots (docs/FORMAT.md, "Version 3"): a fixed-size member (no kind), or a
/// variable-length string or sequence (with its base type).
struct VarMember {
  std::size_t offset = 0;  ///< in an element of the true type
  Handle type;             ///< the member's type (the true type itself when it is no compound)
  std::optional<SlotKind> kind;
  Handle base;  ///< a sequence's base type
};

/// The members of a true type: a compound's members, or the type itself. Error(unsupported)
/// for variable-length members that cannot be described (nested ones, arrays of them).
std::vector<VarMember> var_members(hid_t true_type);

/// The true datatype of a variable-length dataset, decoded from its parameters.
Handle true_type_of(const SparseParams& params);

/// H5Dwrite of a variable-length dataset: the `sel.npoints` memory elements of `mem_type`
/// (char* or hvl_t, converted to the base type of `file_type`; a compound in `file_type`
/// itself) written by the engine.
void write_var_values(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel, hid_t mem_type,
                      hid_t mem_space, hid_t file_type, hid_t dxpl, const void* buf);

/// H5Dread of a variable-length dataset: the selection's values put into `buf` as `mem_type`,
/// payloads allocated by the DXPL's variable-length allocator (H5Pset_vlen_mem_manager; by
/// default malloc, as HDF5's, so H5Treclaim frees them); undefined elements read as NULL.
void read_var_values(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel, hid_t mem_type,
                     hid_t mem_space, hid_t file_type, hid_t dxpl, void* buf);

/// h5sparse_dwrite_coo of a variable-length dataset: `n` elements of `mem_type` in a row at
/// `buf` (converted as write_var_values converts them) defined at the coordinates.
void write_var_coordinates(const SparseEngine& engine, ChunkStore& store, const ChunkGrid& grid,
                           const std::uint64_t* coords, std::size_t n, hid_t mem_type, hid_t file_type, hid_t dxpl,
                           const void* buf);

/// A coordinate scan's variable-length values put into memory as `mem_type` (char* strings,
/// hvl_t sequences, a compound in the dataset's own type), payloads allocated as
/// read_var_values allocates them.
class VarMemoryValues {
 public:
  VarMemoryValues(hid_t mem_type, hid_t file_type, hid_t dxpl);
  ~VarMemoryValues();
  /// Elements numbers[0, count) of `values` put at `out` (`count` elements of the memory type).
  /// `hand_over`: the caller owns their payloads (H5Treclaim frees them); else they are freed
  /// by the next put or the destructor.
  void put(const VarValues& values, const std::uint64_t* numbers, std::size_t count, void* out, bool hand_over);

 private:
  struct Held;
  std::unique_ptr<Held> held_;
  hid_t dxpl_;
};

/// H5Dvlen_get_buf_size: the bytes a read of the selection as `mem_type` allocates.
hsize_t var_buffer_size(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel, hid_t mem_type);

}  // namespace h5sparse::hdf5
