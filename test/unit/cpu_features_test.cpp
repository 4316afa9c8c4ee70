// H5SPARSE_CPU caps the instruction-set level: the variant runs of the unit tests and fuzz
// replays (test/unit/CMakeLists.txt) set it, and this test holds the kernels' switches to it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "h5sparse/cpu_features.hpp"

using namespace h5sparse;

TEST(CpuFeatures, TheCapIsObeyed) {
  const char* asked = std::getenv("H5SPARSE_CPU");
  const CpuLevel cap = cpu_level_cap();
  CpuLevel expected = CpuLevel::avx2;
  if (asked != nullptr) {
    const char* const names[] = {"baseline", "popcnt", "bmi2", "avx2"};
    for (int level = 0; level < 4; ++level)
      if (std::strcmp(asked, names[level]) == 0) expected = CpuLevel(level);
  }
  EXPECT_EQ(cap, expected);
  if (cap < CpuLevel::avx2) {
    EXPECT_FALSE(cpu_has_avx2());
  }
  if (cap < CpuLevel::bmi2) {
    EXPECT_FALSE(cpu_has_bmi2());
    EXPECT_FALSE(cpu_has_fast_pdep());
  }
  EXPECT_TRUE(!cpu_has_fast_pdep() || cpu_has_bmi2());
  if (cap < CpuLevel::popcnt) {
    EXPECT_FALSE(cpu_has_popcnt());
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // Below the cap, what the CPU has is used.
  if (cap >= CpuLevel::popcnt) {
    EXPECT_EQ(cpu_has_popcnt(), bool(__builtin_cpu_supports("popcnt")));
  }
  if (cap >= CpuLevel::avx2) {
    EXPECT_EQ(cpu_has_avx2(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt"));
  }
#endif
}
