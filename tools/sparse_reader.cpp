// Reading stored structured chunks without the connector (see sparse_reader.hpp).
#include "sparse_reader.hpp"

#include <algorithm>
#include <cstring>

#include "dcpl.hpp"
#include "locations_text.hpp"
#include "tool_support.hpp"
#include "var_values.hpp"

namespace h5sparse::tool {
namespace {

std::string layout_name(hid_t dcpl) {
  switch (H5Pget_layout(dcpl)) {
    case H5D_COMPACT: return "COMPACT";
    case H5D_CONTIGUOUS: return "CONTIGUOUS";
    case H5D_CHUNKED: return "CHUNKED";
    case H5D_VIRTUAL: return "VIRTUAL";
    default: return "unknown";
  }
}

}  // namespace

std::vector<std::string> sparse_dataset_paths(hid_t file) {
  std::vector<std::string> paths;
  for (const std::string& p : list_datasets(file)) {
    Handle d = open_dataset(file, p);
    if (SparseReader::is_sparse(d.get())) paths.push_back(p);
  }
  return paths;
}

bool SparseReader::is_sparse(hid_t dset) {
  Handle dcpl = checked_handle(H5Dget_create_plist(dset), "cannot read a dataset's creation properties");
  return hdf5::sparse_dataset_values(dcpl.get()).has_value();
}

SparseReader::SparseReader(hid_t dset, std::string path)
    : dset_(dset), path_(std::move(path)), store_(dset, path_, dataset_dims(dset).size()) {
  Handle dcpl = checked_handle(H5Dget_create_plist(dset), "cannot read the creation properties of " + path_);
  const auto values = hdf5::filter_values(dcpl.get(), kFilterStructuredChunk);
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED || !values)
    fail(ErrorCode::invalid_argument, path_ + " is not a sparse dataset (layout " + layout_name(dcpl.get()) +
                                          ", no structured-chunk filter " + std::to_string(kFilterStructuredChunk) +
                                          ")");
  if (!is_complete_form(values->data(), values->size()))
    fail(ErrorCode::invalid_argument, path_ + " is not a sparse dataset: filter " +
                                          std::to_string(kFilterStructuredChunk) +
                                          " holds request-form parameters (HDF5 never ran its set_local)");
  SparseParams params;
  try {
    params = from_cd_values(values->data(), values->size());
  } catch (const Error& e) {
    fail(ErrorCode::corrupt_data, path_ + ": structured-chunk parameters: " + e.what());
  }
  dims_ = dataset_dims(dset);
  Handle type = checked_handle(H5Dget_type(dset), "cannot read the datatype of " + path_);
  const std::size_t type_size = H5Tget_size(type.get());
  std::vector<hsize_t> chunk(dims_.size() + 1);
  const int chunk_rank = H5Pget_chunk(dcpl.get(), int(chunk.size()), chunk.data());
  const bool consistent = type_size == params.layout.element_size && chunk_rank == int(dims_.size()) &&
                          std::equal(params.layout.dims.begin(), params.layout.dims.end(), chunk.begin(),
                                     chunk.begin() + chunk_rank);
  if (!consistent)
    fail(ErrorCode::corrupt_data, path_ + ": structured-chunk parameters disagree with the dataset's "
                                          "element size or chunk dimensions");
  fill_ = params.fill.empty() ? Bytes(params.layout.element_size, 0) : params.fill;
  engine_ = std::make_unique<SparseEngine>(std::move(params), 0);
}

std::vector<ChunkEntry> SparseReader::stored_chunks() const { return store_.entries(); }

StoredChunk SparseReader::read_raw(const ChunkEntry& chunk) const {
  StoredChunk raw;
  store_.read_listed(chunk.origin, ChunkLocation{chunk.size}, raw);
  return raw;
}

hdf5::Handle SparseReader::true_type() const {
  if (is_var()) return hdf5::true_type_of(params());
  return checked_handle(H5Dget_type(dset_), "cannot read the datatype of " + path_);
}

StructuredChunk SparseReader::decode(const ChunkEntry& chunk, const StoredChunk& raw) const {
  if (is_var())
    fail(ErrorCode::unsupported, path_ + " holds variable-length values, which only dump, show and stat "
                                         "read without the connector (HDF5_VOL_CONNECTOR=h5sparse reads them all)");
  return engine_->decode_stored(store_, chunk.origin, &raw);
}

ChunkVarElements SparseReader::decode_var(const ChunkEntry& chunk, const StoredChunk& raw) const {
  return engine_->decode_var_stored(store_, chunk.origin, &raw);
}

ChunkSelection SparseReader::defined(const ChunkEntry& chunk, const StoredChunk& raw) const {
  if (!is_var()) return decode(chunk, raw).defined;
  ChunkSelection defined(layout().element_count());
  for (std::uint32_t offset : decode_var(chunk, raw).offsets) defined.set(offset);
  return defined;
}

ChunkAnatomy SparseReader::anatomy(const ChunkEntry& chunk, const StoredChunk& stored_chunk,
                                   const ChunkSelection& defined) const {
  const RawBytes& raw = stored_chunk.bytes;
  ChunkAnatomy a;
  for_each_defined_run(chunk, defined, [&](const std::uint64_t*, std::uint64_t, std::uint64_t n, std::uint64_t) {
    a.defined_in_extent += n;
  });
  if (chunk.filter_mask & 1) {
    // Stored around the filter: a dense chunk (a variable-length dataset's carrier chunk of
    // zeros holds nothing).
    a.encoding = is_var() ? SelectionEncoding::empty : SelectionEncoding::all;
    a.sections.assign(is_var() ? 4 : 2, SectionInfo{});
    return a;
  }
  std::size_t header_size = 0;
  if (is_var()) {
    const VarChunkHeader h = read_var_chunk_header(raw.data(), raw.size(), layout());
    a.sections.assign(h.sections.begin(), h.sections.end());
    header_size = h.size;
  } else {
    const ChunkHeader h = read_chunk_header(raw.data(), raw.size(), layout());
    a.sections.assign(h.sections.begin(), h.sections.end());
    header_size = h.size;
  }
  const SectionInfo& s0 = a.sections[0];
  const Bytes stored(raw.begin() + long(header_size), raw.begin() + long(header_size + s0.stored_size));
  const Bytes section = layout().selection_pipeline.empty()
                            ? stored
                            : reverse_pipeline(layout().selection_pipeline, stored, s0.filter_mask, 1,
                                               s0.unfiltered_size);
  a.encoding = SelectionEncoding(section.empty() ? 0 : section[0]);
  return a;
}

void SparseReader::for_each_defined_run(const ChunkEntry& chunk, const ChunkSelection& defined,
                                         const RunVisitor& f) const {
  const std::vector<std::uint64_t>& cdims = layout().dims;
  const std::size_t r = rank();
  const std::uint64_t row_length = cdims[r - 1];
  std::vector<std::uint64_t> row(r > 1 ? r - 1 : 1);
  std::uint64_t value_index = 0;
  defined.for_each_run([&](std::uint64_t first, std::uint64_t length) {
    std::uint64_t at = first, left = length;
    while (left > 0) {
      const std::uint64_t col = at % row_length, take = std::min(left, row_length - col);
      // Unravel the chunk row into dataset coordinates; rows past the extent hold nothing visible.
      std::uint64_t rest = at / row_length;
      bool inside = true;
      for (std::size_t d = r - 1; d-- > 0;) {
        row[d] = chunk.origin[d] + rest % cdims[d];
        rest /= cdims[d];
        inside = inside && row[d] < dims_[d];
      }
      const std::uint64_t start = chunk.origin[r - 1] + col;
      const std::uint64_t end = std::min(start + take, dims_[r - 1]);
      if (inside && start < end) f(row.data(), start, end - start, value_index);
      value_index += take;
      at += take;
      left -= take;
    }
  });
}

std::string SparseReader::chunk_name(const ChunkEntry& chunk) const {
  return format_coords(chunk.origin.data(), chunk.origin.size());
}

}  // namespace h5sparse::tool
