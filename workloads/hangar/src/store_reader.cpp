// StoreReader: opens store files SWMR-read on demand and reads samples back by record,
// verifying each sample's digest.
#include <stdexcept>

#include "attributes.hpp"
#include "handle.hpp"
#include "hangar/errors.hpp"
#include "hangar/sample_store.hpp"

namespace hangar {
namespace {

using h5sparse::hdf5::Handle;

Handle owned(hid_t id, const std::string& what) { return Handle(hid_t(hdf5_check(id, what))); }

}  // namespace

struct StoreReader::File {
  Handle file;
  Handle type;
  Dtype dtype;
  Shape schema_shape;
  std::uint64_t row_length = 0;
  std::int64_t collection_total = 0;
  std::map<unsigned, Handle> datasets;
};

StoreReader::StoreReader(std::string directory, ReaderOptions options)
    : directory_(std::move(directory)), options_(options) {}

StoreReader::~StoreReader() = default;

StoreReader::File& StoreReader::file(const std::string& uid) {
  auto found = files_.find(uid);
  if (found != files_.end()) return *found->second;
  const std::string path = directory_ + "/" + uid + ".hdf5";
  auto f = std::make_unique<File>();
  Handle fapl = owned(H5Pcreate(H5P_FILE_ACCESS), "cannot create a file access property list");
  hdf5_check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "cannot set the format version");
  const unsigned flags = H5F_ACC_RDONLY | (options_.swmr ? H5F_ACC_SWMR_READ : 0u);
  f->file = owned(H5Fopen(path.c_str(), flags, fapl.get()), "cannot open " + path);
  const hid_t root = f->file.get();
  const std::vector<std::int64_t> num = attributes::read_ints(root, "schema_dtype_num");
  if (num.size() != 1) throw StoreError(path + ": schema_dtype_num is not one number");
  f->dtype = dtype_from_numpy_num(int(num[0]));
  for (const std::int64_t d : attributes::read_ints(root, "schema_shape")) {
    if (d < 0) throw StoreError(path + ": negative schema_shape");
    f->schema_shape.push_back(std::uint64_t(d));
  }
  f->row_length = element_count(f->schema_shape);
  const std::vector<std::int64_t> total = attributes::read_ints(root, "collection_total");
  if (total.size() != 1 || total[0] <= 0) throw StoreError(path + ": invalid collection_total");
  f->collection_total = total[0];
  f->type = owned(make_hdf5_type(f->dtype), "cannot create the sample datatype");
  return *files_.emplace(uid, std::move(f)).first->second;
}

Dtype StoreReader::read_into(const Record& record, std::vector<std::uint8_t>& out) {
  File& f = file(record.uid);
  const std::string where = "sample " + record.str();
  if (record.shape.size() != f.schema_shape.size()) throw StoreError(where + ": rank differs from the file's schema");
  for (std::size_t i = 0; i < record.shape.size(); ++i)
    if (record.shape[i] > f.schema_shape[i]) throw StoreError(where + ": shape exceeds the file's schema");
  if (std::int64_t(record.dataset) >= f.collection_total) throw StoreError(where + ": no such collection dataset");
  auto [slot, inserted] = f.datasets.try_emplace(record.dataset);
  if (inserted) {
    const std::string name = std::to_string(record.dataset);
    try {
      slot->second = owned(H5Dopen2(f.file.get(), name.c_str(), H5P_DEFAULT), where + ": cannot open its collection");
    } catch (...) {
      f.datasets.erase(slot);
      throw;
    }
  }
  const hid_t dset = slot->second.get();
  if (options_.refresh) hdf5_check(H5Drefresh(dset), where + ": cannot refresh its collection");

  const std::uint64_t n = element_count(record.shape);
  out.resize(n * info(f.dtype).size);
  if (n > 0) {
    Handle space = owned(H5Dget_space(dset), where + ": cannot get its collection's dataspace");
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_ndims(space.get()) != 2) throw StoreError(where + ": collection dataset is not 2-D");
    hdf5_check(H5Sget_simple_extent_dims(space.get(), dims, nullptr), where + ": cannot read the collection's extent");
    if (record.index >= dims[0] || n > dims[1]) throw StoreError(where + ": outside its collection dataset");
    const hsize_t count = n;
    Handle mem = owned(H5Screate_simple(1, &count, nullptr), "cannot create the sample dataspace");
    const hsize_t start[2] = {record.index, 0}, block[2] = {1, n};
    hdf5_check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, block, nullptr),
               where + ": cannot select its row");
    hdf5_check(H5Dread(dset, f.type.get(), mem.get(), space.get(), H5P_DEFAULT, out.data()), "cannot read " + where);
  }
  const std::string digest = xxh64_hexdigest(out.data(), out.size());
  if (digest != record.digest)
    throw DigestMismatch("DATA CORRUPTION: checksum " + digest + " != recorded " + record.str());
  return f.dtype;
}

StoreReader::Sample StoreReader::read(const Record& record) {
  Sample sample;
  sample.dtype = read_into(record, sample.bytes);
  sample.shape = record.shape;
  return sample;
}

}  // namespace hangar
