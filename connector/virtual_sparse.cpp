#include "virtual_sparse.hpp"

#include <H5VLconnector_passthru.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "error_stack.hpp"
#include "file_selection.hpp"
#include "handle.hpp"
#include "native_dataset.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::Handle;
using hdf5::throw_if_negative;

std::string text_of(const Coords& c) {
  std::string s = "(";
  for (std::size_t d = 0; d < c.size(); ++d) s += (d ? ", " : "") + std::to_string(c[d]);
  return s + ")";
}

// The one box a mapping's selection makes, or an error naming the mapping.
Box one_box(hid_t space, std::size_t mapping, const char* side) {
  std::vector<Box> boxes;
  try {
    boxes = hdf5::selection_boxes(space);
  } catch (const Error& e) {
    throw Error(ErrorCode::unsupported, "mapping " + std::to_string(mapping) + " of the virtual dataset: its " + side +
                                            " selection: " + e.what());
  }
  H5SPARSE_FAIL_IF(boxes.size() != 1, ErrorCode::unsupported,
                   "mapping " + std::to_string(mapping) + " of the virtual dataset selects " +
                       std::to_string(boxes.size()) + " boxes in its " + side +
                       "; coordinate reads take mappings of one box to one box");
  return boxes[0];
}

using NameGetter = ssize_t (*)(hid_t, size_t, char*, size_t);
std::string mapping_name(hid_t dcpl, std::size_t i, NameGetter get, const char* what) {
  const ssize_t n = get(dcpl, i, nullptr, 0);
  throw_if_negative(n, std::string("cannot read the virtual dataset's source ") + what);
  std::string name(std::size_t(n) + 1, '\0');
  throw_if_negative(get(dcpl, i, name.data(), name.size()), std::string("cannot read the virtual dataset's source ") + what);
  name.resize(std::size_t(n));
  return name;
}

// The part of `box` inside `target`, or false when they do not meet.
bool intersect(const Box& box, const Box& target, Box& out) {
  out = Box{Coords(box.start.size()), Coords(box.start.size())};
  for (std::size_t d = 0; d < box.start.size(); ++d) {
    const std::uint64_t lo = std::max(box.start[d], target.start[d]);
    const std::uint64_t hi = std::min(box.start[d] + box.count[d], target.start[d] + target.count[d]);
    if (lo >= hi) return false;
    out.start[d] = lo;
    out.count[d] = hi - lo;
  }
  return true;
}

std::string name_of_file(void* file, hid_t under_vol_id, hid_t dxpl) {
  char buf[4096] = "";
  size_t length = 0;
  H5VL_file_get_args_t args{};
  args.op_type = H5VL_FILE_GET_NAME;
  args.args.get_name.type = H5I_FILE;
  args.args.get_name.buf_size = sizeof buf;
  args.args.get_name.buf = buf;
  args.args.get_name.file_name_len = &length;
  throw_if_negative(H5VLfile_get(file, under_vol_id, &args, dxpl, nullptr), "cannot read the virtual dataset's file name");
  return buf;
}

// A source dataset opened read-only below the connector, for one call.
class Source {
 public:
  Source(const std::string& path, const std::string& dataset, void* vds, hid_t vol, hid_t dxpl) : vol_(vol), dxpl_(dxpl) {
    if (path.empty()) {
      file_ = hdf5::file_of(vds, vol, dxpl);  // "." : the virtual dataset's own file
    } else {
      // Opened with an identifier (on the connector below, not ours): HDF5 closes a file whose
      // object anyone asked for (H5VL_OBJECT_GET_FILE) only when an identifier is released.
      Handle fapl = hdf5::checked(H5Pcreate(H5P_FILE_ACCESS), "cannot create a file access list");
      throw_if_negative(H5Pset_vol(fapl.get(), vol, nullptr), "cannot name the connector below");
      file_id_ = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
      H5SPARSE_FAIL_IF(!file_id_.valid(), ErrorCode::hdf5_call, "cannot open the source file '" + path + "'");
      file_ = H5VLobject(file_id_.get());
    }
    H5VL_loc_params_t loc{};
    loc.type = H5VL_OBJECT_BY_SELF;
    loc.obj_type = H5I_FILE;
    dataset_ = H5VLdataset_open(file_, &loc, vol, dataset.c_str(), H5P_DATASET_ACCESS_DEFAULT, dxpl, nullptr);
    if (dataset_ == nullptr) {
      close();
      throw Error(ErrorCode::hdf5_call, "cannot open the source dataset '" + dataset + "' in '" + path + "'");
    }
    try {
      sparse_ = SparseDataset::detect(dataset_, vol, dxpl);
    } catch (...) {
      close();
      throw;
    }
  }
  ~Source() { close(); }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  /// Null for a dense source, every element of which is defined (RFC).
  const SparseDataset* sparse() const { return sparse_.get(); }
  std::vector<std::uint64_t> dims() const {
    return hdf5::extent_of(hdf5::dataset_get(dataset_, vol_, H5VL_DATASET_GET_SPACE, dxpl_).get());
  }

 private:
  void close() noexcept {
    hdf5::preserving_error_stack([&] {
      sparse_.reset();
      if (dataset_) H5VLdataset_close(dataset_, vol_, dxpl_, nullptr);
      dataset_ = file_ = nullptr;
      file_id_.reset();
    });
  }

  hid_t vol_, dxpl_;
  Handle file_id_;  // a file this source opened
  void* file_ = nullptr;
  void* dataset_ = nullptr;
  std::unique_ptr<SparseDataset> sparse_;
};

// A dataspace of extent `dims` selecting `boxes`.
Handle space_of_boxes(const std::vector<std::uint64_t>& dims, const std::vector<Box>& boxes) {
  const std::vector<hsize_t> extent(dims.begin(), dims.end());
  Handle space = hdf5::checked(H5Screate_simple(int(extent.size()), extent.data(), nullptr), "cannot create a dataspace");
  throw_if_negative(H5Sselect_none(space.get()), "cannot clear a selection");
  for (const Box& b : boxes) {
    const std::vector<hsize_t> start(b.start.begin(), b.start.end()), count(b.count.begin(), b.count.end());
    throw_if_negative(H5Sselect_hyperslab(space.get(), H5S_SELECT_OR, start.data(), nullptr, count.data(), nullptr),
                      "cannot select a box of a source");
  }
  return space;
}

}  // namespace

struct VirtualSparse::Elements {
  std::size_t rank = 0, value_size = 0, count = 0;
  std::vector<std::uint64_t> coords;
  Bytes values;
  std::size_t sparse_sources = 0;
  std::vector<Box> dense;  // parts of the region whose source is dense: all defined

  // Row-major order, as every coordinate read gives its elements.
  void sort() {
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    const auto at = [&](std::size_t i) { return coords.begin() + std::ptrdiff_t(i * rank); };
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return std::lexicographical_compare(at(a), at(a) + rank, at(b), at(b) + rank); });
    std::vector<std::uint64_t> c(coords.size());
    Bytes v(values.size());
    for (std::size_t k = 0; k < count; ++k) {
      std::copy(at(order[k]), at(order[k]) + rank, c.begin() + std::ptrdiff_t(k * rank));
      if (value_size) std::memcpy(&v[k * value_size], &values[order[k] * value_size], value_size);
    }
    coords.swap(c);
    values.swap(v);
  }
};

VirtualSparse::VirtualSparse(void* under, hid_t under_vol_id, std::vector<Mapping> mappings,
                             std::vector<std::uint64_t> dims)
    : under_(under), under_vol_id_(under_vol_id), mappings_(std::move(mappings)), dims_(std::move(dims)) {}

std::unique_ptr<VirtualSparse> VirtualSparse::detect(void* under, hid_t under_vol_id, hid_t dxpl) {
  Handle dcpl = hdf5::dataset_get(under, under_vol_id, H5VL_DATASET_GET_DCPL, dxpl);
  if (H5Pget_layout(dcpl.get()) != H5D_VIRTUAL) return nullptr;
  size_t count = 0;
  throw_if_negative(H5Pget_virtual_count(dcpl.get(), &count), "cannot count the virtual dataset's mappings");
  std::vector<Mapping> mappings;
  for (std::size_t i = 0; i < count; ++i) {
    const Handle vspace = hdf5::checked(H5Pget_virtual_vspace(dcpl.get(), i), "cannot read a mapping's selection");
    const Handle sspace = hdf5::checked(H5Pget_virtual_srcspace(dcpl.get(), i), "cannot read a mapping's source");
    Mapping m{one_box(vspace.get(), i, "virtual"), {}, mapping_name(dcpl.get(), i, H5Pget_virtual_filename, "file"),
              mapping_name(dcpl.get(), i, H5Pget_virtual_dsetname, "dataset")};
    const Box source = one_box(sspace.get(), i, "source");
    H5SPARSE_FAIL_IF(source.count != m.target.count, ErrorCode::unsupported,
                     "mapping " + std::to_string(i) + " of the virtual dataset maps a box of " + text_of(source.count) +
                         " elements onto one of " + text_of(m.target.count));
    H5SPARSE_FAIL_IF(m.file.find('%') != std::string::npos || m.dataset.find('%') != std::string::npos,
                     ErrorCode::unsupported, "mapping " + std::to_string(i) + " names its sources by a pattern ('" +
                                                 m.file + "', '" + m.dataset + "')");
    m.source_start = source.start;
    for (const Mapping& other : mappings) {
      Box both;
      H5SPARSE_FAIL_IF(intersect(m.target, other.target, both), ErrorCode::unsupported,
                       "mappings of the virtual dataset overlap at " + text_of(both.start));
    }
    mappings.push_back(std::move(m));
  }
  std::vector<std::uint64_t> dims =
      hdf5::extent_of(hdf5::dataset_get(under, under_vol_id, H5VL_DATASET_GET_SPACE, dxpl).get());
  return std::unique_ptr<VirtualSparse>(new VirtualSparse(under, under_vol_id, std::move(mappings), std::move(dims)));
}

// Where relative source names are looked for, in HDF5's order: after the prefix of
// HDF5_VDS_PREFIX or the access list, beside the virtual dataset's file, then as given ("").
std::vector<std::string> VirtualSparse::source_places(hid_t dxpl) const {
  std::vector<std::string> places;
  if (const char* prefix = std::getenv("HDF5_VDS_PREFIX"); prefix && *prefix) places.push_back(std::string(prefix) + "/");
  Handle dapl = hdf5::dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_DAPL, dxpl);
  if (const ssize_t n = H5Pget_virtual_prefix(dapl.get(), nullptr, 0); n > 0) {
    std::string prefix(std::size_t(n) + 1, '\0');
    H5Pget_virtual_prefix(dapl.get(), prefix.data(), prefix.size());
    places.push_back(prefix.c_str() + std::string("/"));
  }
  const std::string vds_file = name_of_file(hdf5::file_of(under_, under_vol_id_, dxpl), under_vol_id_, dxpl);
  const std::size_t slash = vds_file.rfind('/');
  if (slash != std::string::npos) places.push_back(vds_file.substr(0, slash + 1));
  places.push_back("");
  return places;
}

// The source file of a mapping: "." is the virtual dataset's own file (returned as ""), an
// absolute name is itself, a relative one the first readable in `places`.
std::string VirtualSparse::source_path(const Mapping& m, const std::vector<std::string>& places) const {
  if (m.file == ".") return "";
  if (!m.file.empty() && m.file[0] == '/') return m.file;
  for (const std::string& place : places)
    if (access((place + m.file).c_str(), R_OK) == 0) return place + m.file;
  throw Error(ErrorCode::invalid_argument, "the source file '" + m.file + "' of the virtual dataset is not found");
}

VirtualSparse::Elements VirtualSparse::gather(hid_t file_space, hid_t mem_type, bool dense_allowed, hid_t dxpl) const {
  std::vector<Box> region{Box{Coords(dims_.size(), 0), dims_}};
  if (file_space != H5S_ALL) {
    H5SPARSE_FAIL_IF(hdf5::extent_of(file_space) != dims_, ErrorCode::invalid_argument,
                     "the selection's extent is not the virtual dataset's");
    region = hdf5::selection_boxes(file_space);
  }
  Elements e;
  e.rank = dims_.size();
  e.value_size = mem_type == H5I_INVALID_HID ? 0 : H5Tget_size(mem_type);
  std::size_t contributing = 0;
  std::vector<std::string> places;  // found once a mapping meets the region
  for (const Mapping& m : mappings_) {
    std::vector<Box> boxes;
    for (const Box& b : region) {
      Box inside;
      if (!intersect(b, m.target, inside)) continue;
      for (std::size_t d = 0; d < e.rank; ++d) inside.start[d] = inside.start[d] - m.target.start[d] + m.source_start[d];
      boxes.push_back(inside);
    }
    if (boxes.empty()) continue;
    if (places.empty()) places = source_places(dxpl);
    const std::string path = source_path(m, places);
    const Source source(path, m.dataset, under_, under_vol_id_, dxpl);
    if (!source.sparse()) {
      H5SPARSE_FAIL_IF(!dense_allowed, ErrorCode::unsupported,
                       "the source dataset '" + m.dataset + "' in '" + (path.empty() ? "." : path) +
                           "' of the virtual dataset is not sparse: its elements are all defined; read them with "
                           "H5Dread");
      for (Box& b : boxes)
        for (std::size_t d = 0; d < e.rank; ++d) b.start[d] = b.start[d] - m.source_start[d] + m.target.start[d];
      e.dense.insert(e.dense.end(), boxes.begin(), boxes.end());
      continue;
    }
    ++e.sparse_sources;
    const Handle space = space_of_boxes(source.dims(), boxes);
    const std::size_t first = e.count;
    H5SparseIterateCooArgs args{};
    args.file_space_id = space.get();
    args.mem_type_id = mem_type;
    args.max_bytes = SIZE_MAX;
    args.op_data = &e;
    args.room = [](size_t n, hsize_t** coords, void** values, void* data) -> herr_t {
      auto& into = *static_cast<Elements*>(data);
      into.coords.resize((into.count + n) * into.rank);
      into.values.resize((into.count + n) * into.value_size);
      *coords = reinterpret_cast<hsize_t*>(&into.coords[into.count * into.rank]);
      if (values) *values = into.value_size ? &into.values[into.count * into.value_size] : nullptr;
      into.count += n;
      return 0;
    };
    source.sparse()->iterate_coordinates(args, dxpl);
    for (std::size_t k = first; k < e.count; ++k)
      for (std::size_t d = 0; d < e.rank; ++d) {
        std::uint64_t& c = e.coords[k * e.rank + d];
        c = c - m.source_start[d] + m.target.start[d];
      }
    contributing += e.count > first;
  }
  if (contributing > 1) e.sort();
  return e;
}

hid_t VirtualSparse::get_defined(hid_t file_space, hid_t dxpl) const {
  const Elements e = gather(file_space, H5I_INVALID_HID, true, dxpl);
  Handle result = hdf5::dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_SPACE, dxpl);
  if (e.sparse_sources == 0) {  // an ordinary virtual dataset: dense, every element defined
    if (file_space == H5S_ALL) return result.release();
    return hdf5::checked(H5Scopy(file_space), "cannot copy the selection").release();
  }
  throw_if_negative(H5Sselect_none(result.get()), "cannot clear the result selection");
  if (e.dense.empty()) {
    if (e.count > 0)
      throw_if_negative(H5Sselect_elements(result.get(), H5S_SELECT_SET, e.count,
                                           reinterpret_cast<const hsize_t*>(e.coords.data())),
                        "cannot select the defined elements");
    return result.release();
  }
  // Dense sources' boxes with the sparse ones' elements: one hyperslab selection (HDF5 joins
  // no points to blocks), an element a block.
  std::vector<Box> blocks = e.dense;
  for (std::size_t k = 0; k < e.count; ++k)
    blocks.push_back(Box{Coords(&e.coords[k * e.rank], &e.coords[(k + 1) * e.rank]), Coords(e.rank, 1)});
  for (const Box& b : blocks) {
    const std::vector<hsize_t> start(b.start.begin(), b.start.end()), count(b.count.begin(), b.count.end());
    throw_if_negative(H5Sselect_hyperslab(result.get(), H5S_SELECT_OR, start.data(), nullptr, count.data(), nullptr),
                      "cannot select the defined elements");
  }
  return result.release();
}

herr_t VirtualSparse::iterate_coordinates(const H5SparseIterateCooArgs& a, hid_t dxpl) const {
  H5SPARSE_FAIL_IF(!a.op && !a.room, ErrorCode::invalid_argument, "no callback to call");
  const std::size_t rank = dims_.size();
  if (a.cursor) {
    H5SPARSE_FAIL_IF(std::any_of(a.cursor, a.cursor + rank, [](hsize_t c) { return c != 0; }),
                     ErrorCode::unsupported,
                     "a virtual dataset's elements come in one batch: an iteration over it cannot resume");
    a.cursor[0] = HSIZE_UNDEF;
  }
  const bool values = a.mem_type_id != H5I_INVALID_HID;
  H5SPARSE_FAIL_IF(values && (H5Tdetect_class(a.mem_type_id, H5T_VLEN) > 0 || H5Tis_variable_str(a.mem_type_id) > 0),
                   ErrorCode::unsupported, "coordinate reads of variable-length values from a virtual dataset");
  Elements e = gather(a.file_space_id, a.mem_type_id, false, dxpl);
  if (a.row_counts) {  // compressed rows (h5sparse_dread_csr) of a one-box region
    const Box box = a.file_space_id == H5S_ALL ? Box{Coords(rank, 0), dims_} : hdf5::selection_boxes(a.file_space_id).at(0);
    std::fill(a.row_counts, a.row_counts + box.count[0], 0);
    Bytes columns(e.count * a.index_size);
    for (std::size_t k = 0; k < e.count; ++k) {
      ++a.row_counts[e.coords[2 * k] - box.start[0]];
      const std::uint64_t column = e.coords[2 * k + 1] - box.start[1];
      const std::uint32_t narrow = std::uint32_t(column);
      std::memcpy(&columns[k * a.index_size], a.index_size == 4 ? static_cast<const void*>(&narrow) : &column,
                  a.index_size);
    }
    e.coords.resize((columns.size() + 7) / 8);
    std::memcpy(e.coords.data(), columns.data(), columns.size());
  }
  const std::size_t coord_bytes = a.row_counts ? e.count * a.index_size : e.count * rank * sizeof(hsize_t);
  if (e.count == 0) return 0;
  const void* coords = e.coords.data();
  const void* vals = values ? e.values.data() : nullptr;
  if (a.room) {
    hsize_t* c = nullptr;
    void* v = nullptr;
    H5SPARSE_FAIL_IF(a.room(e.count, &c, values ? &v : nullptr, a.op_data) < 0, ErrorCode::invalid_argument,
                     "the coordinate read's room callback failed");
    std::memcpy(c, coords, coord_bytes);
    if (values) std::memcpy(v, vals, e.values.size());
    coords = c;
    vals = v;
  }
  if (!a.op) return 0;
  const herr_t result = a.op(e.count, static_cast<const hsize_t*>(coords), vals, a.op_data);
  H5SPARSE_FAIL_IF(result < 0, ErrorCode::invalid_argument,
                   "the coordinate iteration's callback failed (returned " + std::to_string(result) + ")");
  return result;
}

}  // namespace h5sparse::vol
