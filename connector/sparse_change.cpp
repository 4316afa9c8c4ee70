#include "sparse_change.hpp"

#include <atomic>

namespace h5sparse::vol {
namespace {
std::atomic<std::uint64_t> generation{1};
}  // namespace

std::uint64_t sparse_generation() noexcept { return generation.load(std::memory_order_acquire); }
void note_sparse_change() noexcept { generation.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace h5sparse::vol
