// PrefaultAhead (pages of a large destination faulted in ahead of its writers) and the worker
// pool's prestart.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "h5sparse/prefault_ahead.hpp"
#include "h5sparse/worker_pool.hpp"

namespace h5sparse {
namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;

// Anonymous memory, without huge pages so that residency is visible per 4 KiB page.
struct Mapping {
  explicit Mapping(std::size_t size) : size(size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      data = static_cast<std::uint8_t*>(p);
      madvise(p, size, MADV_NOHUGEPAGE);
    }
  }
  ~Mapping() {
    if (data != nullptr) munmap(data, size);
  }
  // Pages of [from, to) (byte offsets) that are resident.
  std::size_t resident_pages(std::size_t from, std::size_t to) const {
    const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((to - from + page - 1) / page);
    if (mincore(data + from, to - from, in.data()) != 0) return SIZE_MAX;
    std::size_t n = 0;
    for (unsigned char c : in) n += c & 1;
    return n;
  }
  std::uint8_t* data = nullptr;
  std::size_t size;
};

bool populate_supported() {
  Mapping m(std::size_t(sysconf(_SC_PAGESIZE)));
  return madvise(m.data, m.size, 23 /* MADV_POPULATE_WRITE */) == 0;
}

TEST(PrefaultAhead, FaultsWhatIsNeededAndOnePieceMoreWithoutChangingBytes) {
  if (!populate_supported()) GTEST_SKIP() << "kernel without MADV_POPULATE_WRITE (Linux < 5.14)";
  const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
  Mapping m(16 * kMiB);
  ASSERT_NE(m.data, nullptr);
  // Some bytes written before: populating keeps them.
  std::memset(m.data + 100, 0x5a, 3 * page);
  const std::size_t before = m.resident_pages(0, m.size);
  EXPECT_LE(before, 8u);

  // The destination starts a page into the mapping and ends a page before its end.
  std::uint8_t* dest = m.data + page;
  PrefaultAhead ahead(dest, m.size - 2 * page);
  ahead.advance(3 * kMiB, 12 * kMiB);
  // Every page below 3 MiB into the destination is there; beyond the next 2 MiB boundary
  // after it, one more piece at most; nothing past that.
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(m.data);
  const std::uintptr_t needed_end = reinterpret_cast<std::uintptr_t>(dest) + 3 * kMiB;
  EXPECT_EQ(m.resident_pages(page, 3 * kMiB + page), 3 * kMiB / page);
  const std::uintptr_t piece_end = (needed_end + 2 * kMiB - 1) & ~std::uintptr_t(2 * kMiB - 1);
  const std::size_t far = std::size_t(piece_end - base) + 2 * kMiB;
  EXPECT_EQ(m.resident_pages(far, m.size), 0u);
  EXPECT_GT(m.resident_pages(piece_end - base, far), 0u);
  for (std::size_t i = 0; i < 3 * page; ++i) ASSERT_EQ(m.data[100 + i], 0x5a) << i;
  EXPECT_EQ(m.data[0], 0);

  // Asking for everything populates every whole page of the destination, never the pages
  // outside it.
  ahead.advance(UINT64_MAX, UINT64_MAX);
  EXPECT_EQ(m.resident_pages(page, m.size - page), (m.size - 2 * page) / page);
  EXPECT_EQ(m.resident_pages(m.size - page, m.size), 0u);
}

TEST(PrefaultAhead, ThreadsShareThePiecesAndAllArePopulated) {
  if (!populate_supported()) GTEST_SKIP() << "kernel without MADV_POPULATE_WRITE (Linux < 5.14)";
  const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
  Mapping m(24 * kMiB);
  ASSERT_NE(m.data, nullptr);
  PrefaultAhead ahead(m.data, m.size);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      for (std::uint64_t at = 0; at <= m.size; at += kMiB) ahead.advance(at, at + 4 * kMiB);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(m.resident_pages(0, m.size), m.size / page);
}

TEST(PrefaultAhead, EmptyAndTinyDestinationsDoNothing) {
  Mapping m(std::size_t(sysconf(_SC_PAGESIZE)));
  ASSERT_NE(m.data, nullptr);
  PrefaultAhead none(m.data + 10, 0);
  none.advance(UINT64_MAX, UINT64_MAX);
  PrefaultAhead inside(m.data + 10, 100);  // no whole page in it
  inside.advance(UINT64_MAX, UINT64_MAX);
  EXPECT_EQ(m.resident_pages(0, m.size), 0u);
}

TEST(WorkerPool, PrestartedWorkersServeTheNextJob) {
  prestart_shared_workers(3);
  EXPECT_GE(shared_pool_workers(), 2);
  const int started = shared_pool_workers();
  prestart_shared_workers(3);  // already there: nothing more
  EXPECT_EQ(shared_pool_workers(), started);
  std::atomic<int> ran{0};
  auto task = [&](int) { ran.fetch_add(1); };
  run_shared(3, task);
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(shared_pool_workers(), started);
}

}  // namespace
}  // namespace h5sparse
