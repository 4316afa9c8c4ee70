// Variable-length datatypes and values between HDF5 and the engine (var_values.hpp).
#include "var_values.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dcpl.hpp"
#include "error_stack.hpp"
#include "h5sparse/error.hpp"
#include "memory_selection.hpp"

namespace h5sparse::hdf5 {
namespace {

// True when a variable-length type is anywhere in `type`.
bool has_var(hid_t type) {
  const H5T_class_t c = H5Tget_class(type);
  if (c == H5T_VLEN) return true;
  if (c == H5T_STRING) return H5Tis_variable_str(type) > 0;
  if (c == H5T_ARRAY) return has_var(checked(H5Tget_super(type), "cannot read an array's base type").get());
  if (c != H5T_COMPOUND) return false;
  for (int m = 0, n = H5Tget_nmembers(type); m < n; ++m)
    if (has_var(checked(H5Tget_member_type(type, unsigned(m)), "cannot read a member's type").get())) return true;
  return false;
}

// A string type's slot, or else a sequence's: its kind and its base type (sequences only).
struct Slot {
  SlotKind kind;
  Handle base;
};

Slot slot_of(hid_t type) {
  if (H5Tis_variable_str(type) > 0)
    return {H5Tget_cset(type) == H5T_CSET_UTF8 ? SlotKind::utf8 : SlotKind::ascii, Handle()};
  H5SPARSE_FAIL_IF(H5Tget_class(type) != H5T_VLEN, ErrorCode::unsupported,
                   "sparse variable-length datasets hold variable-length strings or sequences; compound and "
                   "array types with variable-length members are not supported yet");
  Handle base = checked(H5Tget_super(type), "cannot read a sequence's base type");
  H5SPARSE_FAIL_IF(has_var(base.get()), ErrorCode::unsupported,
                   "nested variable-length types (sequences of strings or of sequences) cannot be stored in "
                   "structured chunks");
  return {SlotKind::sequence, std::move(base)};
}

Bytes encoded(hid_t type) {
  std::size_t size = 0;
  throw_if_negative(H5Tencode(type, nullptr, &size), "cannot encode the datatype");
  Bytes bytes(size);
  throw_if_negative(H5Tencode(type, bytes.data(), &size), "cannot encode the datatype");
  return bytes;
}

std::string description(const Slot& slot, std::size_t base_size) {
  if (slot.kind == SlotKind::sequence)
    return "variable-length sequence of " + std::to_string(base_size) + "-byte elements";
  return std::string("variable-length string, ") + (slot.kind == SlotKind::utf8 ? "UTF-8" : "ASCII");
}

// The memory form of a transfer against the dataset's slot: the sequence base types to convert
// between (none for strings), and the size of a memory element.
struct MemoryForm {
  Slot slot;
  Handle mem_base;
  std::size_t mem_base_size = 1, file_base_size = 1;
  bool sequence() const { return slot.kind == SlotKind::sequence; }
};

MemoryForm memory_form(hid_t mem_type, hid_t file_type) {
  MemoryForm f{slot_of(file_type), Handle(), 1, 1};
  const bool string = f.slot.kind != SlotKind::sequence;
  H5SPARSE_FAIL_IF(string ? H5Tis_variable_str(mem_type) <= 0 : H5Tget_class(mem_type) != H5T_VLEN,
                   ErrorCode::invalid_argument,
                   string ? "a variable-length string dataset is transferred as variable-length strings (char *)"
                          : "a variable-length sequence dataset is transferred as variable-length sequences (hvl_t)");
  if (string) return f;
  f.mem_base = checked(H5Tget_super(mem_type), "cannot read the memory sequence's base type");
  f.mem_base_size = H5Tget_size(f.mem_base.get());
  f.file_base_size = H5Tget_size(f.slot.base.get());
  return f;
}

// `count` base elements at `data` converted in place from `from` to `to` (`data` has room
// for the larger of both).
void convert_bases(hid_t from, hid_t to, std::size_t count, std::uint8_t* data, hid_t dxpl) {
  if (count == 0 || H5Tequal(from, to) > 0) return;
  throw_if_negative(H5Tconvert(from, to, count, data, nullptr, dxpl),
                    "cannot convert the sequences' elements to the dataset's base type");
}

// The selected memory elements, packed in selection order.
Bytes gathered(hid_t mem_space, const void* buf, hid_t mem_type, std::size_t n) {
  Bytes packed(n * H5Tget_size(mem_type));
  throw_if_negative(H5Dgather(mem_space, buf, mem_type, packed.size(), packed.data(), nullptr, nullptr),
                    "cannot gather the memory elements");
  return packed;
}

VarValues from_memory(const MemoryForm& form, const Bytes& packed, std::size_t n, hid_t dxpl) {
  VarValues v;
  const VarType type{0, {form.file_base_size}};
  const std::size_t wide = std::max(form.mem_base_size, form.file_base_size);
  for (std::size_t e = 0; e < n; ++e) {
    const std::uint8_t* at = packed.data() + e * (form.sequence() ? sizeof(hvl_t) : sizeof(char*));
    VarPayload slot{nullptr, 0, false};
    Bytes converted;
    if (!form.sequence()) {
      const char* s;
      std::memcpy(&s, at, sizeof s);
      slot = s ? VarPayload{reinterpret_cast<const std::uint8_t*>(s), std::strlen(s), false} : VarPayload{nullptr, 0, true};
    } else {
      hvl_t seq;
      std::memcpy(&seq, at, sizeof seq);
      H5SPARSE_FAIL_IF(seq.p == nullptr && seq.len > 0, ErrorCode::invalid_argument,
                       "a variable-length sequence of " + std::to_string(seq.len) + " elements without data");
      converted.resize(seq.len * wide);
      if (seq.len) std::memcpy(converted.data(), seq.p, seq.len * form.mem_base_size);
      convert_bases(form.mem_base.get(), form.slot.base.get(), seq.len, converted.data(), dxpl);
      slot = VarPayload{converted.data(), seq.len * form.file_base_size, seq.p == nullptr};
    }
    v.append(type, nullptr, &slot);
  }
  return v;
}

// Payloads allocated for a read, given back to the allocator's free if the read fails.
class Allocations {
 public:
  explicit Allocations(hid_t dxpl) {
    if (dxpl == H5P_DEFAULT) dxpl = H5P_DATASET_XFER_DEFAULT;
    throw_if_negative(H5Pget_vlen_mem_manager(dxpl, &alloc_, &alloc_info_, &free_, &free_info_),
                      "cannot read the variable-length memory manager");
  }
  ~Allocations() {
    for (void* p : made_) free_ ? free_(p, free_info_) : std::free(p);
  }
  void* allocate(std::size_t size) {
    void* p = alloc_ ? alloc_(size, alloc_info_) : std::malloc(size);
    H5SPARSE_FAIL_IF(p == nullptr, ErrorCode::out_of_memory, "cannot allocate a variable-length value");
    made_.push_back(p);
    return p;
  }
  /// The read succeeded: the caller owns the payloads.
  void keep() { made_.clear(); }

 private:
  H5MM_allocate_t alloc_ = nullptr;
  H5MM_free_t free_ = nullptr;
  void *alloc_info_ = nullptr, *free_info_ = nullptr;
  std::vector<void*> made_;
};

void to_memory(const MemoryForm& form, const VarValues& v, std::uint8_t* out, Allocations& memory, hid_t dxpl) {
  const std::size_t n = v.ends.size();
  Bytes bases;
  if (form.sequence()) {  // every element's base elements converted at once
    bases.resize(v.data.size() / form.file_base_size * std::max(form.mem_base_size, form.file_base_size));
    std::memcpy(bases.data(), v.data.data(), v.data.size());
    convert_bases(form.slot.base.get(), form.mem_base.get(), v.data.size() / form.file_base_size, bases.data(), dxpl);
  }
  for (std::size_t e = 0; e < n; ++e) {
    const VarPayload p = v.payload(e);
    if (!form.sequence()) {
      char* s = nullptr;
      if (!p.null) {
        s = static_cast<char*>(memory.allocate(p.size + 1));
        std::memcpy(s, p.data, p.size);
        s[p.size] = '\0';
      }
      std::memcpy(out + e * sizeof s, &s, sizeof s);
      continue;
    }
    hvl_t seq{p.size / form.file_base_size, nullptr};
    if (seq.len) {
      seq.p = memory.allocate(seq.len * form.mem_base_size);
      std::memcpy(seq.p, bases.data() + v.begin(e) / form.file_base_size * form.mem_base_size,
                  seq.len * form.mem_base_size);
    }
    std::memcpy(out + e * sizeof seq, &seq, sizeof seq);
  }
}

VarValues read_selection(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel) {
  const bool whole = selects_everything(sel.space, sel.grid, std::uint64_t(sel.npoints));
  const std::vector<ChunkPiece> pieces = whole ? std::vector<ChunkPiece>() : selection_pieces(sel.space, sel.grid);
  return engine.read_var(store, ChunkRequest{sel.grid, pieces, whole, std::uint64_t(sel.npoints)});
}

}  // namespace

std::optional<VarCarrier> var_carrier(hid_t dcpl, hid_t type) {
  if (dcpl == H5P_DEFAULT || dcpl == H5P_DATASET_CREATE_DEFAULT || !has_var(type)) return std::nullopt;
  const std::optional<std::vector<unsigned>> values = filter_values(dcpl, kFilterStructuredChunk);
  if (!values) return std::nullopt;
  SparseParams params = is_complete_form(values->data(), values->size()) ? from_cd_values(values->data(), values->size())
                                                                        : parse_request(*values);
  const Slot slot = slot_of(type);
  const std::size_t base_size = slot.kind == SlotKind::sequence ? H5Tget_size(slot.base.get()) : 1;
  params.layout.var = VarType{0, {base_size}};
  params.slot_kinds = {slot.kind};
  params.true_type = encoded(type);
  params.fill.clear();
  params.layout.element_size = kVarCarrierSize;
  H5SPARSE_FAIL_IF(H5Pget_layout(dcpl) != H5D_CHUNKED, ErrorCode::invalid_argument, "a sparse dataset needs chunks");
  hsize_t dims[H5S_MAX_RANK];
  params.layout.dims.assign(dims, dims + H5Pget_chunk(dcpl, H5S_MAX_RANK, dims));
  const std::vector<unsigned> complete = to_cd_values(params);
  H5SPARSE_FAIL_IF(complete.size() > 256, ErrorCode::unsupported,
                   "the structured-chunk parameters of this datatype exceed HDF5's 256 values");
  VarCarrier carrier{checked(H5Tcreate(H5T_OPAQUE, kVarCarrierSize), "cannot create the carrier type"),
                     checked(H5Pcopy(dcpl), "cannot copy the creation property list")};
  const std::string tag = "h5sparse-vl: " + description(slot, base_size);
  throw_if_negative(H5Tset_tag(carrier.type.get(), tag.c_str()), "cannot tag the carrier type");
  throw_if_negative(H5Pmodify_filter(carrier.dcpl.get(), kFilterStructuredChunk, H5Z_FLAG_MANDATORY, complete.size(),
                                     complete.data()),
                    "cannot store the structured-chunk parameters");
  const std::uint8_t zeros[kVarCarrierSize] = {};
  throw_if_negative(H5Pset_fill_value(carrier.dcpl.get(), carrier.type.get(), zeros),
                    "cannot set the carrier's fill value");
  return carrier;
}

Handle true_type_of(const SparseParams& params) {
#if H5_VERSION_GE(2, 0, 0)
  return checked(H5Tdecode2(params.true_type.data(), params.true_type.size()), "cannot decode the dataset's datatype");
#else
  return checked(H5Tdecode(params.true_type.data()), "cannot decode the dataset's datatype");
#endif
}

void write_var_values(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel, hid_t mem_type,
                      hid_t mem_space, hid_t file_type, hid_t dxpl, const void* buf) {
  const std::size_t n = std::size_t(sel.npoints);
  const VarValues values = from_memory(memory_form(mem_type, file_type), gathered(mem_space, buf, mem_type, n), n, dxpl);
  engine.write_var(store, sel.grid, selection_pieces(sel.space, sel.grid), values);
}

void read_var_values(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel, hid_t mem_type,
                     hid_t mem_space, hid_t file_type, hid_t dxpl, void* buf) {
  const MemoryForm form = memory_form(mem_type, file_type);
  const VarValues values = read_selection(engine, store, sel);
  Allocations memory(dxpl);
  MemoryDestination dest(mem_space, H5Tget_size(mem_type), std::uint64_t(sel.npoints), buf);
  to_memory(form, values, dest.data(), memory, dxpl);
  dest.finish();
  memory.keep();
}

hsize_t var_buffer_size(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel, hid_t mem_type) {
  const MemoryForm form = memory_form(mem_type, true_type_of(engine.params()).get());
  const VarValues values = read_selection(engine, store, sel);
  hsize_t total = 0;
  for (std::size_t e = 0; e < values.ends.size(); ++e) {
    const VarPayload p = values.payload(e);
    if (!p.null) total += form.sequence() ? p.size / form.file_base_size * form.mem_base_size : p.size + 1;
  }
  return total;
}

}  // namespace h5sparse::hdf5
