// The chunk checksum: the run-time chosen XXH3 (AVX2 where the CPU has it) gives the system
// libxxhash's value for every length and alignment, so files stay readable everywhere.
#include <gtest/gtest.h>

#include <xxhash.h>

#include <random>
#include <vector>

#include "h5sparse/checksum.hpp"

TEST(Checksum, EqualsLibxxhashXxh3) {
  std::mt19937_64 rng(3);
  std::vector<std::uint8_t> data(300000);
  for (auto& b : data) b = std::uint8_t(rng());
  for (std::size_t size : {0u, 1u, 16u, 17u, 128u, 129u, 240u, 241u, 1023u, 1024u, 1025u, 4096u, 65537u, 299999u}) {
    for (std::size_t offset : {0u, 1u}) {
      EXPECT_EQ(h5sparse::xxh3_64(data.data() + offset, size), XXH3_64bits(data.data() + offset, size)) << size;
    }
  }
}
