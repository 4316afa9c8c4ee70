#include "h5sparse/populate_pages.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace {

using h5sparse::populate_pages_for_writing;

std::size_t resident_pages(void* base, std::size_t size) {
  const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> present((size + page - 1) / page);
  EXPECT_EQ(mincore(base, size, present.data()), 0);
  std::size_t count = 0;
  for (unsigned char p : present) count += p & 1;
  return count;
}

TEST(PopulatePages, FreshAnonymousMemoryBecomesResidentAndStaysZero) {
  const std::size_t size = std::size_t(9) << 20;  // several 2 MiB pieces and a part of one
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(base, MAP_FAILED);
  ASSERT_EQ(resident_pages(base, size), 0u);
  for (int threads : {1, 2, 3}) {
    populate_pages_for_writing(static_cast<std::uint8_t*>(base), size, threads);
    const std::size_t page = std::size_t(sysconf(_SC_PAGESIZE));
    EXPECT_EQ(resident_pages(base, size), size / page) << threads << " threads";
  }
  const auto* bytes = static_cast<const std::uint8_t*>(base);
  for (std::size_t i = 0; i < size; i += 4093) ASSERT_EQ(bytes[i], 0u) << i;
  munmap(base, size);
}

TEST(PopulatePages, ContentsAreUnchangedAndOnlyWholePagesInsideAreTouched) {
  // A range that starts and ends inside pages, written beforehand with a pattern.
  std::vector<std::uint8_t> buffer((std::size_t(5) << 20) + 12345);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = std::uint8_t(i * 31 + 7);
  const std::vector<std::uint8_t> before = buffer;
  populate_pages_for_writing(buffer.data() + 1001, buffer.size() - 2002, 2);
  populate_pages_for_writing(buffer.data() + 5, 100, 2);  // inside one page: nothing to do
  populate_pages_for_writing(buffer.data(), 0, 2);
  EXPECT_EQ(buffer, before);
}

}  // namespace
