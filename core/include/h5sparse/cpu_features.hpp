// Instruction-set extensions chosen at run time. The library is built for baseline x86-64;
// kernels that need more are compiled with target attributes and called only when the CPU has
// what they use. H5SPARSE_CPU caps the level used (baseline, popcnt, bmi2, avx2), so that the
// tests and fuzz replays run every shipped variant on one machine (test/unit/CMakeLists.txt).
//
// What the CPU has is asked of CPUID here, not of __builtin_cpu_supports: that builtin reads a
// table the compiler's runtime fills at start-up, and Zig's runtime (the wheel's compiler)
// leaves it empty, which silently kept the wheel on baseline kernels.
#pragma once

namespace h5sparse {

/// The levels, each allowing what the ones below allow.
enum class CpuLevel { baseline = 0, popcnt = 1, bmi2 = 2, avx2 = 3 };

/// The highest level H5SPARSE_CPU allows (read once; unset: avx2, i.e. whatever the CPU has;
/// an unknown value: baseline, with a message on stderr).
CpuLevel cpu_level_cap() noexcept;

/// What the CPU (and, for AVX, the operating system) supports, each asked once of CPUID
/// (false off x86-64).
struct CpuSupport {
  bool popcnt = false;
  bool bmi2 = false;       // BMI1 and BMI2
  bool slow_pdep = false;  // PDEP/PEXT microcoded (AMD and Hygon before family 19h, Zen 3)
  bool avx2 = false;       // AVX2 with the YMM state saved by the OS
};
const CpuSupport& cpu_support() noexcept;

/// The kernels in use, for reports: "baseline", or the extensions used, e.g. "popcnt bmi2 pdep
/// avx2" (pdep: BMI2's PDEP where it is fast).
const char* cpu_kernels_text() noexcept;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Compile a function for CPUs with BMI1/BMI2 or POPCNT; call it only when cpu_has_bmi2() /
// cpu_has_popcnt(). Its body is usually an always-inline function shared with the baseline.
#define H5SPARSE_BMI2_KERNELS 1
#define H5SPARSE_TARGET_BMI2 __attribute__((target("bmi,bmi2")))
#define H5SPARSE_TARGET_POPCNT __attribute__((target("popcnt")))
#define H5SPARSE_TARGET_PDEP __attribute__((target("popcnt,bmi,bmi2")))
#endif

/// AVX2 and POPCNT (every AVX2 CPU has POPCNT; the kernels use both).
inline bool cpu_has_avx2() {
  static const bool yes = cpu_level_cap() >= CpuLevel::avx2 && cpu_support().avx2 && cpu_support().popcnt;
  return yes;
}
/// POPCNT (not part of baseline x86-64: __builtin_popcountll is a libgcc call there).
inline bool cpu_has_popcnt() {
  static const bool yes = cpu_level_cap() >= CpuLevel::popcnt && cpu_support().popcnt;
  return yes;
}
/// BMI1 and BMI2 (shifts by a register without CL, TZCNT): the bit-stream loops' clones.
inline bool cpu_has_bmi2() {
  static const bool yes = cpu_level_cap() >= CpuLevel::bmi2 && cpu_support().bmi2;
  return yes;
}
/// BMI2 with a PDEP of a few cycles: Zen 1 and 2 run it in microcode, a cycle or more per set
/// bit of its mask, slower than the code it would replace.
inline bool cpu_has_fast_pdep() {
  static const bool yes = cpu_has_bmi2() && cpu_has_popcnt() && !cpu_support().slow_pdep;
  return yes;
}

}  // namespace h5sparse
