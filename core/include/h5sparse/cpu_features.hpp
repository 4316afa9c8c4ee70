// Instruction-set extensions chosen at run time. The library is built for baseline x86-64;
// kernels that need more are compiled with target attributes and called only when the CPU has
// what they use.
#pragma once

namespace h5sparse {

/// AVX2 and POPCNT (every AVX2 CPU has POPCNT; the kernels use both).
inline bool cpu_has_avx2() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  return yes;
#else
  return false;
#endif
}

}  // namespace h5sparse
