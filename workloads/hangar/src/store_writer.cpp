// StoreWriter: creates store files (all collections up front, then SWMR write) and writes
// samples into consecutive rows.
#include <h5sparse.h>

#include <random>
#include <stdexcept>

#include "attributes.hpp"
#include "handle.hpp"
#include "hangar/errors.hpp"
#include "hangar/sample_store.hpp"

namespace hangar {
namespace {

using h5sparse::hdf5::Handle;

Handle owned(hid_t id, const std::string& what) { return Handle(hid_t(hdf5_check(id, what))); }

// Hangar's random_string(): the file uid.
std::string random_uid() {
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device device;
  std::uniform_int_distribution<int> pick(0, int(sizeof(kAlphabet)) - 2);
  std::string uid;
  for (int i = 0; i < 6; ++i) uid += kAlphabet[pick(device)];
  return uid;
}

Handle dataset_creation_list(const StoreOptions& options, std::uint64_t chunk_len) {
  Handle dcpl = owned(H5Pcreate(H5P_DATASET_CREATE), "cannot create a dataset creation property list");
  const hsize_t chunk[2] = {1, chunk_len};
  const std::vector<h5sparse::FilterSpec> filters =
      options.compression ? h5sparse::filter_pipeline(*options.compression) : std::vector<h5sparse::FilterSpec>{};
  if (options.mode == StorageMode::sparse) {
    // Only the sample's elements are defined; the chosen compression filters their values.
    hdf5_check(h5sparse_pset_sparse_chunk(dcpl.get(), 2, chunk), "cannot make the datasets sparse");
    for (const h5sparse::FilterSpec& f : filters)
      hdf5_check(h5sparse_pset_section_filter(dcpl.get(), H5SPARSE_SECTION_VALUES, H5Z_filter_t(f.id),
                                              f.optional ? H5Z_FLAG_OPTIONAL : H5Z_FLAG_MANDATORY,
                                              f.cd_values.size(), f.cd_values.data()),
                 "cannot set the values section's compression");
  } else {
    hdf5_check(H5Pset_chunk(dcpl.get(), 2, chunk), "cannot set the chunk shape");
    for (const h5sparse::FilterSpec& f : filters)
      hdf5_check(H5Pset_filter(dcpl.get(), H5Z_filter_t(f.id), f.optional ? H5Z_FLAG_OPTIONAL : H5Z_FLAG_MANDATORY,
                               f.cd_values.size(), f.cd_values.data()),
                 "cannot set the compression filters (is HDF5_PLUGIN_PATH set?)");
  }
  return dcpl;
}

}  // namespace

struct StoreWriter::File {
  std::string uid;
  Handle file;
  Handle type;
  Handle dataset;              // the collection being filled
  unsigned dataset_number = 0;
  std::uint64_t index = 0;     // next collection index
};

StoreWriter::StoreWriter(std::string directory, StoreOptions options)
    : directory_(std::move(directory)), options_(std::move(options)), row_length_(element_count(options_.schema_shape)) {
  if (options_.schema_shape.empty() || row_length_ == 0)
    throw std::invalid_argument("the schema shape must have at least one dimension and no zero dimension");
  if (options_.collection_size == 0 || options_.collection_count == 0)
    throw std::invalid_argument("collection size and count must be positive");
  if (!options_.chunk_index) options_.chunk_index = default_chunk_index(options_.mode);
}

StoreWriter::~StoreWriter() {
  try {
    close();
  } catch (...) {  // a destructor cannot report; close() explicitly to see errors
  }
}

void StoreWriter::create_file() {
  auto file = std::make_unique<File>();
  file->uid = random_uid();
  const std::string path = directory_ + "/" + file->uid + ".hdf5";
  const std::size_t itemsize = info(options_.dtype).size;
  const std::uint64_t chunk_len = chunk_length(row_length_, itemsize);
  const ChunkCache cache = chunk_cache(row_length_ * itemsize, chunk_len * itemsize);

  Handle fapl = owned(H5Pcreate(H5P_FILE_ACCESS), "cannot create a file access property list");
  hdf5_check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "cannot set the format version");
  hdf5_check(H5Pset_cache(fapl.get(), 0, cache.nslots, cache.nbytes, cache.w0), "cannot set the chunk cache");
  file->file = owned(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "cannot create " + path);
  files_.push_back(path);
  file->type = owned(make_hdf5_type(options_.dtype), "cannot create the sample datatype");

  Handle dcpl = dataset_creation_list(options_, chunk_len);
  const hsize_t dims[2] = {options_.collection_size, row_length_};
  // The maximum shape picks HDF5's chunk index (see ChunkIndex); the extent is Hangar's either way.
  const hsize_t maxdims[2] = {*options_.chunk_index == ChunkIndex::fixed_array ? dims[0] : H5S_UNLIMITED, dims[1]};
  Handle space = owned(H5Screate_simple(2, dims, maxdims), "cannot create the collection dataspace");
  for (unsigned n = 0; n < options_.collection_count; ++n) {
    const std::string name = std::to_string(n);
    Handle dset = owned(H5Dcreate2(file->file.get(), name.c_str(), file->type.get(), space.get(), H5P_DEFAULT,
                                   dcpl.get(), H5P_DEFAULT),
                        "cannot create collection dataset '" + name + "' in " + path);
  }

  const hid_t root = file->file.get();
  std::vector<std::int64_t> shape(options_.schema_shape.begin(), options_.schema_shape.end());
  attributes::write_string(root, "backend", "00");
  attributes::write_string(root, "storage_mode", storage_mode_name(options_.mode));
  attributes::write_ints(root, "schema_shape", shape);
  attributes::write_ints(root, "schema_dtype_num", {info(options_.dtype).numpy_num});
  attributes::write_ints(root, "next_location", {0, 0});
  attributes::write_ints(root, "collection_max_size", {options_.collection_size});
  attributes::write_ints(root, "collection_total", {options_.collection_count});
  attributes::write_ints(root, "collections_remaining", {options_.collection_count});
  attributes::write_ints(root, "rdcc_nbytes", {std::int64_t(cache.nbytes)});
  attributes::write_double(root, "rdcc_w0", cache.w0);
  attributes::write_ints(root, "rdcc_nslots", {std::int64_t(cache.nslots)});
  attributes::write_ints(root, "chunk_shape", {std::int64_t(chunk_len)});
  attributes::write_string(root, "compression_opts",
                           options_.compression ? h5sparse::to_spec(*options_.compression) : "none");

  hdf5_check(H5Fflush(root, H5F_SCOPE_LOCAL), "cannot flush " + path);
  hdf5_check(H5Fstart_swmr_write(root), "cannot start SWMR writing on " + path);
  file->dataset = owned(H5Dopen2(root, "0", H5P_DEFAULT), "cannot open collection '0'");
  file_ = std::move(file);
}

Record StoreWriter::write(const void* data, const Shape& shape) {
  if (shape.size() != options_.schema_shape.size())
    throw std::invalid_argument("sample rank " + std::to_string(shape.size()) + " differs from the schema's " +
                                std::to_string(options_.schema_shape.size()));
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > options_.schema_shape[i])
      throw std::invalid_argument("sample dimension " + std::to_string(i) + " is " + std::to_string(shape[i]) +
                                  ", larger than the schema's " + std::to_string(options_.schema_shape[i]));
  const std::uint64_t n = element_count(shape);
  if (n > 0 && data == nullptr) throw std::invalid_argument("no sample data");
  const std::string digest = xxh64_hexdigest(data, n * info(options_.dtype).size);
  if (!file_) create_file();
  File& f = *file_;
  Record record{f.uid, digest, f.dataset_number, f.index, shape};
  if (n > 0) {
    const hsize_t count = n;
    Handle mem = owned(H5Screate_simple(1, &count, nullptr), "cannot create the sample dataspace");
    Handle space = owned(H5Dget_space(f.dataset.get()), "cannot get the collection dataspace");
    const hsize_t start[2] = {f.index, 0}, block[2] = {1, n};
    hdf5_check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, block, nullptr),
               "cannot select the sample's row");
    // Messages are built only on failure: building them on every write cost 4% of it.
    if (H5Dwrite(f.dataset.get(), f.type.get(), mem.get(), space.get(), H5P_DEFAULT, data) < 0)
      hdf5_check(-1, "cannot write sample " + record.str());
  }
  if (options_.flush_every_write && H5Dflush(f.dataset.get()) < 0)
    hdf5_check(-1, "cannot flush collection " + std::to_string(f.dataset_number));

  if (++f.index == options_.collection_size) {  // next collection, or a new file when all are full
    f.index = 0;
    hdf5_check(H5Dflush(f.dataset.get()), "cannot flush collection " + std::to_string(f.dataset_number));
    if (++f.dataset_number == options_.collection_count) {
      close();
    } else {
      const std::string name = std::to_string(f.dataset_number);
      f.dataset = owned(H5Dopen2(f.file.get(), name.c_str(), H5P_DEFAULT), "cannot open collection '" + name + "'");
    }
  }
  return record;
}

void StoreWriter::close() {
  if (!file_) return;
  std::unique_ptr<File> f = std::move(file_);
  const hid_t root = f->file.get();
  attributes::modify_ints(root, "next_location", {std::int64_t(f->dataset_number), std::int64_t(f->index)});
  attributes::modify_ints(root, "collections_remaining",
                          {std::int64_t(options_.collection_count - f->dataset_number)});
  f->dataset.reset();
  f->type.reset();
  hdf5_check(H5Fflush(root, H5F_SCOPE_LOCAL), "cannot flush " + f->uid + ".hdf5");
  hdf5_check(H5Fclose(f->file.release()), "cannot close " + f->uid + ".hdf5");
}

}  // namespace hangar
