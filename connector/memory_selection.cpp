#include "memory_selection.hpp"

#include <cstring>

#include "error_stack.hpp"
#include "handle.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::checked;
using hdf5::Handle;
using hdf5::throw_if_negative;

// Calls visit(offset in bytes, length in bytes) for each run of the selection, in order.
template <typename Visit>
void for_each_run(hid_t space, std::size_t element_size, Visit&& visit) {
  Handle iter = checked(H5Ssel_iter_create(space, element_size, 0), "cannot iterate the memory selection");
  constexpr std::size_t kBatch = 1024;
  hsize_t offsets[kBatch];
  std::size_t lengths[kBatch];
  while (true) {
    std::size_t nseq = 0, nbytes = 0;
    throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), kBatch, SIZE_MAX, &nseq, &nbytes, offsets, lengths),
                      "cannot iterate the memory selection");
    if (nseq == 0) break;
    for (std::size_t i = 0; i < nseq; ++i) visit(offsets[i], lengths[i]);
  }
}

}  // namespace

bool has_data_transform(hid_t dxpl) {
  if (dxpl == H5P_DEFAULT || dxpl == H5P_DATASET_XFER_DEFAULT) return false;
  ssize_t length = -1;
  H5E_BEGIN_TRY { length = H5Pget_data_transform(dxpl, nullptr, 0); }  // fails when none is set
  H5E_END_TRY
  return length > 0;
}

std::int64_t contiguous_offset(hid_t space, std::size_t element_size, std::uint64_t count) {
  Handle iter = checked(H5Ssel_iter_create(space, element_size, 0), "cannot iterate the memory selection");
  hsize_t offset = 0;
  std::size_t length = 0, nseq = 0, nbytes = 0;
  throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), 1, SIZE_MAX, &nseq, &nbytes, &offset, &length),
                    "cannot iterate the memory selection");
  return nseq == 1 && length == count * element_size ? std::int64_t(offset) : -1;
}

void scatter_to_memory(hid_t space, const std::uint8_t* source, std::size_t element_size, std::uint8_t* buf) {
  for_each_run(space, element_size, [&](hsize_t offset, std::size_t length) {
    std::memcpy(buf + offset, source, length);
    source += length;
  });
}

}  // namespace h5sparse::vol
