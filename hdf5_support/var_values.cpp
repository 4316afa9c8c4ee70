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

// A variable-length member's slot: its kind and its base type (sequences only).
VarMember slot_of(std::size_t offset, Handle type) {
  const hid_t t = type.get();
  if (H5Tis_variable_str(t) > 0)
    return {offset, std::move(type), H5Tget_cset(t) == H5T_CSET_UTF8 ? SlotKind::utf8 : SlotKind::ascii, Handle()};
  H5SPARSE_FAIL_IF(H5Tget_class(t) != H5T_VLEN, ErrorCode::unsupported,
                   "variable-length members must be variable-length strings or sequences (arrays of them, "
                   "and compounds nested in compounds holding them, are not supported)");
  Handle base = checked(H5Tget_super(t), "cannot read a sequence's base type");
  H5SPARSE_FAIL_IF(has_var(base.get()), ErrorCode::unsupported,
                   "nested variable-length types (sequences of strings or of sequences) cannot be stored in "
                   "structured chunks");
  return {offset, std::move(type), SlotKind::sequence, std::move(base)};
}

VarMember member_of(std::size_t offset, Handle type) {
  if (has_var(type.get())) return slot_of(offset, std::move(type));
  return {offset, std::move(type), std::nullopt, Handle()};
}

Bytes encoded(hid_t type) {
  std::size_t size = 0;
  throw_if_negative(H5Tencode(type, nullptr, &size), "cannot encode the datatype");
  Bytes bytes(size);
  throw_if_negative(H5Tencode(type, bytes.data(), &size), "cannot encode the datatype");
  return bytes;
}

// One member of an element in memory: a fixed-size one (no slot) or a variable-length one,
// with the base types its sequences convert between (memory, file).
struct MemberForm {
  std::size_t offset = 0, size = 0;  // in a memory element
  std::optional<SlotKind> kind;      // variable-length members only
  Handle mem_base, file_base;        // sequences only
  std::size_t mem_base_size = 1, file_base_size = 1;
  bool same_base = true;  // no conversion between memory and file
  bool sequence() const { return kind == SlotKind::sequence; }
};

// A dataset's element as a transfer's memory holds it: its members in order.
struct MemoryForm {
  std::size_t element_size = 0;
  std::vector<MemberForm> members;

  VarType type() const {
    VarType t;
    for (const MemberForm& m : members)
      m.kind ? t.slot_base_sizes.push_back(m.file_base_size) : void(t.fixed_size += m.size);
    return t;
  }
};

MemberForm member_form(VarMember member) {
  MemberForm m{member.offset, H5Tget_size(member.type.get()), member.kind, Handle(), Handle(), 1, 1, true};
  if (!m.sequence()) return m;
  m.mem_base_size = m.file_base_size = H5Tget_size(member.base.get());
  m.mem_base = checked(H5Tcopy(member.base.get()), "cannot copy a base type");
  m.file_base = std::move(member.base);
  return m;
}

// The true type's members: a compound's, or the one variable-length value.
MemoryForm form_of(hid_t type) {
  MemoryForm f{H5Tget_size(type), {}};
  for (VarMember& m : var_members(type)) f.members.push_back(member_form(std::move(m)));
  H5SPARSE_FAIL_IF(f.type().slots() > kMaxVarSlots, ErrorCode::unsupported,
                   "a compound with more than 64 variable-length members");
  return f;
}

std::string description(const MemoryForm& f) {
  if (f.members.size() == 1 && f.members[0].sequence())
    return "variable-length sequence of " + std::to_string(f.members[0].file_base_size) + "-byte elements";
  if (f.members.size() == 1)
    return std::string("variable-length string, ") + (f.members[0].kind == SlotKind::utf8 ? "UTF-8" : "ASCII");
  return "compound of " + std::to_string(f.members.size()) + " members, " + std::to_string(f.type().slots()) +
         " of variable length";
}

// The memory form of a transfer in `mem_type` of a dataset of `file_type`: a string or
// sequence in any variable-length string or sequence type whose base converts; a compound in
// its own type (H5Dget_type's, as h5py transfers it).
MemoryForm memory_form(hid_t mem_type, hid_t file_type) {
  MemoryForm f = form_of(file_type);
  if (H5Tget_class(file_type) == H5T_COMPOUND) {
    H5SPARSE_FAIL_IF(H5Tequal(mem_type, file_type) <= 0, ErrorCode::invalid_argument,
                     "a compound with variable-length members is transferred in the dataset's own datatype");
    return f;
  }
  MemberForm& m = f.members[0];
  const bool string = !m.sequence();
  H5SPARSE_FAIL_IF(string ? H5Tis_variable_str(mem_type) <= 0 : H5Tget_class(mem_type) != H5T_VLEN,
                   ErrorCode::invalid_argument,
                   string ? "a variable-length string dataset is transferred as variable-length strings (char *)"
                          : "a variable-length sequence dataset is transferred as variable-length sequences (hvl_t)");
  f.element_size = m.size = H5Tget_size(mem_type);
  if (string) return f;
  m.mem_base = checked(H5Tget_super(mem_type), "cannot read the memory sequence's base type");
  m.mem_base_size = H5Tget_size(m.mem_base.get());
  const htri_t same = H5Tequal(m.mem_base.get(), m.file_base.get());
  throw_if_negative(same, "cannot compare the sequences' base types");
  m.same_base = same > 0;
  return f;
}

// `count` base elements of `m` at `data` (`size` bytes) converted into `scratch` (to the file's
// base type, or from it); returns where the result is (`data` itself when nothing converts).
const std::uint8_t* converted(const MemberForm& m, bool to_file, const std::uint8_t* data, std::size_t count,
                              Bytes& scratch, hid_t dxpl) {
  if (m.same_base || count == 0) return data;
  scratch.resize(count * std::max(m.mem_base_size, m.file_base_size));
  std::memcpy(scratch.data(), data, count * (to_file ? m.mem_base_size : m.file_base_size));
  throw_if_negative(H5Tconvert(to_file ? m.mem_base.get() : m.file_base.get(),
                               to_file ? m.file_base.get() : m.mem_base.get(), count, scratch.data(), nullptr, dxpl),
                    "cannot convert the sequences' elements between the memory and the dataset's base type");
  return scratch.data();
}

// The selected memory elements, packed in selection order.
Bytes gathered(hid_t mem_space, const void* buf, hid_t mem_type, std::size_t n) {
  Bytes packed(n * H5Tget_size(mem_type));
  throw_if_negative(H5Dgather(mem_space, buf, mem_type, packed.size(), packed.data(), nullptr, nullptr),
                    "cannot gather the memory elements");
  return packed;
}

// One variable-length member of a memory element as the engine takes it (`scratch` holds a
// sequence converted to the file's base type).
VarPayload payload_of(const MemberForm& m, const std::uint8_t* at, Bytes& scratch, hid_t dxpl) {
  if (!m.sequence()) {
    const char* s;
    std::memcpy(&s, at, sizeof s);
    return s ? VarPayload{reinterpret_cast<const std::uint8_t*>(s), std::strlen(s), false} : VarPayload{nullptr, 0, true};
  }
  hvl_t seq;
  std::memcpy(&seq, at, sizeof seq);
  H5SPARSE_FAIL_IF(seq.p == nullptr && seq.len > 0, ErrorCode::invalid_argument,
                   "a variable-length sequence of " + std::to_string(seq.len) + " elements without data");
  const auto* data = static_cast<const std::uint8_t*>(seq.p);
  return VarPayload{converted(m, true, data, seq.len, scratch, dxpl), seq.len * m.file_base_size, seq.p == nullptr};
}

// The bytes of the sequences of `n` memory elements, so that their values are allocated once:
// grown by doubling they touched about twice their size in fresh pages, a page fault each
// (int32 sequences from C: 27,000 -> 22,000 faults for 20 MB). Strings are left out: a second
// strlen of each cost more instructions (6% of a write of 1 M words) than the faults it saved.
std::size_t sequence_bytes(const MemoryForm& form, const std::uint8_t* packed, std::size_t n) {
  std::size_t total = 0;
  for (const MemberForm& m : form.members)
    if (m.sequence())
      for (std::size_t e = 0; e < n; ++e) {
        hvl_t seq;
        std::memcpy(&seq, packed + e * form.element_size + m.offset, sizeof seq);
        total += seq.len * m.file_base_size;
      }
  return total;
}

VarValues from_memory(const MemoryForm& form, const std::uint8_t* packed, std::size_t n, hid_t dxpl) {
  const VarType type = form.type();
  VarValues v;
  v.fixed.reserve(n * type.fixed_size);
  v.ends.reserve(n * type.slots());
  v.null.reserve(n * type.slots());
  v.data.reserve(sequence_bytes(form, packed, n));
  Bytes fixed;
  std::vector<VarPayload> slots;
  std::vector<Bytes> scratch(type.slots());
  for (std::size_t e = 0; e < n; ++e) {
    const std::uint8_t* element = packed + e * form.element_size;
    fixed.clear();
    slots.clear();
    for (const MemberForm& m : form.members) {
      if (m.kind)
        slots.push_back(payload_of(m, element + m.offset, scratch[slots.size()], dxpl));
      else
        fixed.insert(fixed.end(), element + m.offset, element + m.offset + m.size);
    }
    v.append(type, fixed.data(), slots.data());
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

// One variable-length member of a memory element from the engine's payload.
void put_payload(const MemberForm& m, const VarPayload& p, std::uint8_t* at, Allocations& memory, Bytes& scratch,
                 hid_t dxpl) {
  if (!m.sequence()) {
    char* s = nullptr;
    if (!p.null) {
      s = static_cast<char*>(memory.allocate(p.size + 1));
      if (p.size) std::memcpy(s, p.data, p.size);  // an empty string may have no payload pointer
      s[p.size] = '\0';
    }
    std::memcpy(at, &s, sizeof s);
    return;
  }
  hvl_t seq{p.size / m.file_base_size, nullptr};
  if (seq.len) {
    seq.p = memory.allocate(seq.len * m.mem_base_size);
    std::memcpy(seq.p, converted(m, false, p.data, seq.len, scratch, dxpl), seq.len * m.mem_base_size);
  }
  std::memcpy(at, &seq, sizeof seq);
}

// Elements of `v` put at `out`: all of them in order, or (`numbers` not null) `count` of them,
// element numbers[i] at place i.
void to_memory(const MemoryForm& form, const VarValues& v, const std::uint64_t* numbers, std::size_t count,
               std::uint8_t* out, Allocations& memory, hid_t dxpl) {
  const VarType type = form.type();
  Bytes scratch;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t e = numbers ? std::size_t(numbers[i]) : i;
    std::uint8_t* element = out + i * form.element_size;
    std::memset(element, 0, form.element_size);
    const std::uint8_t* fixed = v.fixed.data() + e * type.fixed_size;
    std::size_t slot = e * type.slots();
    for (const MemberForm& m : form.members) {
      if (m.kind) {
        put_payload(m, v.payload(slot++), element + m.offset, memory, scratch, dxpl);
      } else {
        std::memcpy(element + m.offset, fixed, m.size);
        fixed += m.size;
      }
    }
  }
}

VarValues read_selection(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel) {
  const bool whole = selects_everything(sel.space, sel.grid, std::uint64_t(sel.npoints));
  const std::vector<ChunkPiece> pieces = whole ? std::vector<ChunkPiece>() : selection_pieces(sel.space, sel.grid);
  return engine.read_var(store, ChunkRequest{sel.grid, pieces, whole, std::uint64_t(sel.npoints)});
}

}  // namespace

std::vector<VarMember> var_members(hid_t type) {
  std::vector<VarMember> members;
  if (H5Tget_class(type) != H5T_COMPOUND) {
    members.push_back(member_of(0, checked(H5Tcopy(type), "cannot copy a datatype")));
    return members;
  }
  for (int m = 0, n = H5Tget_nmembers(type); m < n; ++m)
    members.push_back(member_of(H5Tget_member_offset(type, unsigned(m)),
                                checked(H5Tget_member_type(type, unsigned(m)), "cannot read a member")));
  return members;
}

namespace {

// The complete parameters (version 2) of a dataset of `type`: the options and pipelines of the
// DCPL's form (`values`), the element's parts and the true type from `type`.
SparseParams var_params(hid_t dcpl, hid_t type, const std::vector<unsigned>& values) {
  SparseParams params = is_complete_form(values.data(), values.size()) ? from_cd_values(values.data(), values.size())
                                                                      : parse_request(values);
  const MemoryForm form = form_of(type);
  params.layout.var = form.type();
  params.slot_kinds.clear();
  for (const MemberForm& m : form.members)
    if (m.kind) params.slot_kinds.push_back(*m.kind);
  choose_var_data_pipeline(params);
  params.true_type = encoded(type);
  params.fill.clear();
  params.layout.element_size = kVarCarrierSize;
  H5SPARSE_FAIL_IF(H5Pget_layout(dcpl) != H5D_CHUNKED, ErrorCode::invalid_argument, "a sparse dataset needs chunks");
  hsize_t dims[H5S_MAX_RANK];
  params.layout.dims.assign(dims, dims + H5Pget_chunk(dcpl, H5S_MAX_RANK, dims));
  return params;
}

// `dcpl` with the complete parameters, and without a fill value of the true type: it cannot
// convert to the carrier (undefined elements read as NULL anyway). The default fill value has
// no type, so H5Pget_fill_value in the true type keeps giving zeros (NULL).
Handle carrier_dcpl(hid_t dcpl, hid_t carrier, const std::vector<unsigned>& complete) {
  H5SPARSE_FAIL_IF(complete.size() > 256, ErrorCode::unsupported,
                   "the structured-chunk parameters of this datatype exceed HDF5's 256 values");
  Handle copy = checked(H5Pcopy(dcpl), "cannot copy the creation property list");
  throw_if_negative(H5Pmodify_filter(copy.get(), kFilterStructuredChunk, H5Z_FLAG_MANDATORY, complete.size(),
                                     complete.data()),
                    "cannot store the structured-chunk parameters");
  H5D_fill_value_t fill = H5D_FILL_VALUE_DEFAULT;
  throw_if_negative(H5Pfill_value_defined(dcpl, &fill), "cannot tell whether a fill value is set");
  if (fill != H5D_FILL_VALUE_DEFAULT)
    throw_if_negative(H5Pset_fill_value(copy.get(), carrier, nullptr), "cannot clear the fill value");
  return copy;
}

}  // namespace

std::optional<VarCarrier> var_carrier(hid_t dcpl, hid_t type) {
  if (dcpl == H5P_DEFAULT || dcpl == H5P_DATASET_CREATE_DEFAULT || !has_var(type)) return std::nullopt;
  const std::optional<std::vector<unsigned>> values = filter_values(dcpl, kFilterStructuredChunk);
  if (!values) return std::nullopt;
  const SparseParams params = var_params(dcpl, type, *values);
  Handle carrier = checked(H5Tcreate(H5T_OPAQUE, kVarCarrierSize), "cannot create the carrier type");
  const std::string tag = "h5sparse-vl: " + description(form_of(type));
  throw_if_negative(H5Tset_tag(carrier.get(), tag.c_str()), "cannot tag the carrier type");
  Handle carrier_plist = carrier_dcpl(dcpl, carrier.get(), to_cd_values(params));
  return VarCarrier{std::move(carrier), std::move(carrier_plist)};
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
  const VarValues values =
      from_memory(memory_form(mem_type, file_type), gathered(mem_space, buf, mem_type, n).data(), n, dxpl);
  engine.write_var(store, sel.grid, selection_pieces(sel.space, sel.grid), values);
}

void write_var_coordinates(const SparseEngine& engine, ChunkStore& store, const ChunkGrid& grid,
                           const std::uint64_t* coords, std::size_t n, hid_t mem_type, hid_t file_type, hid_t dxpl,
                           const void* buf) {
  const VarValues values =
      from_memory(memory_form(mem_type, file_type), static_cast<const std::uint8_t*>(buf), n, dxpl);
  engine.write_var_coordinates(store, grid, coords, n, values);
}

struct VarMemoryValues::Held {
  MemoryForm form;
  std::optional<Allocations> payloads;  // of the last put, until handed over
};

VarMemoryValues::VarMemoryValues(hid_t mem_type, hid_t file_type, hid_t dxpl)
    : held_(new Held{memory_form(mem_type, file_type), std::nullopt}), dxpl_(dxpl) {}

VarMemoryValues::~VarMemoryValues() = default;

void VarMemoryValues::put(const VarValues& values, const std::uint64_t* numbers, std::size_t count, void* out,
                          bool hand_over) {
  held_->payloads.reset();
  held_->payloads.emplace(dxpl_);
  const std::size_t held = values.count(held_->form.type());
  for (std::size_t i = 0; i < count; ++i)
    H5SPARSE_FAIL_IF(numbers[i] >= held, ErrorCode::invalid_argument, "a value number outside its batch");
  to_memory(held_->form, values, numbers, count, static_cast<std::uint8_t*>(out), *held_->payloads, dxpl_);
  if (hand_over) held_->payloads->keep();
}

void read_var_values(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel, hid_t mem_type,
                     hid_t mem_space, hid_t file_type, hid_t dxpl, void* buf) {
  const MemoryForm form = memory_form(mem_type, file_type);
  const VarValues values = read_selection(engine, store, sel);
  Allocations memory(dxpl);
  MemoryDestination dest(mem_space, H5Tget_size(mem_type), std::uint64_t(sel.npoints), buf);
  to_memory(form, values, nullptr, values.count(form.type()), dest.data(), memory, dxpl);
  dest.finish();
  memory.keep();
}

hsize_t var_buffer_size(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel, hid_t mem_type) {
  const MemoryForm form = memory_form(mem_type, true_type_of(engine.params()).get());
  const VarValues values = read_selection(engine, store, sel);
  hsize_t total = 0;
  std::size_t slot = 0;
  for (std::size_t e = 0, n = values.count(form.type()); e < n; ++e) {
    for (const MemberForm& m : form.members) {
      if (!m.kind) continue;
      const VarPayload p = values.payload(slot++);
      if (!p.null) total += m.sequence() ? p.size / m.file_base_size * m.mem_base_size : p.size + 1;
    }
  }
  return total;
}

}  // namespace h5sparse::hdf5
