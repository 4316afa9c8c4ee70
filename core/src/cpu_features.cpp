// H5SPARSE_CPU, the cap on the instruction-set level, and what the CPU supports (cpu_features.hpp).
#include "h5sparse/cpu_features.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

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

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The bits are those of Intel's SDM, vol. 2A, CPUID leaves 0, 1 and 7 (the family as the SDM
// composes it); AVX state as its "Detection of Intel AVX instructions" asks: OSXSAVE set, and
// XCR0 saving SSE and YMM state.
CpuSupport detect() noexcept {
  CpuSupport s;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return s;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  const bool amd = std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return s;
  const unsigned family = (a >> 8 & 0xf) == 0xf ? 0xf + (a >> 20 & 0xff) : a >> 8 & 0xf;
  s.slow_pdep = amd && family < 0x19;
  s.popcnt = c & (1u << 23);
  const bool avx = c & (1u << 28), osxsave = c & (1u << 27);
  bool ymm_saved = false;
  if (osxsave) {
    unsigned xcr0 = 0, high = 0;
    __asm__ volatile("xgetbv" : "=a"(xcr0), "=d"(high) : "c"(0));
    ymm_saved = (xcr0 & 6u) == 6u;
  }
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return s;
  s.bmi2 = (b & (1u << 3)) && (b & (1u << 8));
  s.avx2 = avx && ymm_saved && (b & (1u << 5));
  return s;
}
#else
CpuSupport detect() noexcept { return CpuSupport(); }
#endif

}  // namespace

const CpuSupport& cpu_support() noexcept {
  static const CpuSupport support = detect();
  return support;
}

const char* cpu_kernels_text() noexcept {
  static const std::string text = [] {
    std::string t;
    for (const auto& [used, name] : {std::pair<bool, const char*>{cpu_has_popcnt(), "popcnt"}, {cpu_has_bmi2(), "bmi2"},
                                     {cpu_has_fast_pdep(), "pdep"}, {cpu_has_avx2(), "avx2"}})
      if (used) t += (t.empty() ? "" : " ") + std::string(name);
    return t.empty() ? std::string("baseline") : t;
  }();
  return text.c_str();
}

}  // namespace h5sparse
