// H5SPARSE_CPU, the cap on the instruction-set level (cpu_features.hpp).
#include "h5sparse/cpu_features.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace h5sparse {

CpuLevel cpu_level_cap() noexcept {
  static const CpuLevel cap = [] {
    const char* text = std::getenv("H5SPARSE_CPU");
    if (text == nullptr || *text == '\0') return CpuLevel::avx2;
    static const char* const kNames[] = {"baseline", "popcnt", "bmi2", "avx2"};
    for (int level = 0; level < 4; ++level)
      if (std::strcmp(text, kNames[level]) == 0) return CpuLevel(level);
    std::fprintf(stderr, "h5sparse: H5SPARSE_CPU=%s is none of baseline, popcnt, bmi2, avx2; using baseline\n", text);
    return CpuLevel::baseline;
  }();
  return cap;
}

}  // namespace h5sparse
