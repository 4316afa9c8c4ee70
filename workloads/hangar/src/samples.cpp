// Synthetic samples: image-like values (a gradient plus a little noise) so compression has
// something to do, with shapes drawn from the named distribution.
#include "hangar/samples.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace hangar {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double unit(std::uint64_t& state) { return double((splitmix64(state) >> 11) + 1) / 9007199254740992.0; }  // (0, 1]

template <typename T>
void fill_values(std::uint64_t state, std::size_t n, std::uint8_t* out) {
  std::uint64_t bits = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (k % 16 == 0) bits = splitmix64(state);
    const unsigned noise = unsigned(bits >> ((k % 16) * 4)) & 3;
    T v = T((k % 61) + noise);
    std::memcpy(out + k * sizeof(T), &v, sizeof(T));
  }
}

}  // namespace

const std::vector<std::string>& SampleGenerator::distributions() {
  static const std::vector<std::string> names = {"full", "large", "uniform", "skewed", "heavy"};
  return names;
}

SampleGenerator::SampleGenerator(std::uint64_t seed, std::vector<Dtype> dtypes, Shape max_shape, std::string distribution,
                                 std::string values)
    : seed_(seed),
      dtypes_(std::move(dtypes)),
      max_shape_(std::move(max_shape)),
      distribution_(std::move(distribution)),
      random_values_(values == "random") {
  if (values != "ramp" && values != "random")
    throw std::invalid_argument("unknown sample values '" + values + "' (valid: ramp, random)");
  if (dtypes_.empty()) throw std::invalid_argument("no dtypes to generate");
  bool known = false;
  for (const std::string& name : distributions()) known = known || name == distribution_;
  if (!known) throw std::invalid_argument("unknown shape distribution '" + distribution_ + "'");
}

SampleGenerator::Spec SampleGenerator::spec(std::uint64_t i) const {
  std::uint64_t state = seed_ * 0x2545f4914f6cdd1dULL + i;
  splitmix64(state);
  Spec spec{dtypes_[splitmix64(state) % dtypes_.size()], {}};
  for (const std::uint64_t max : max_shape_) {
    const double u = unit(state);
    std::uint64_t d = max;
    if (distribution_ == "large") d = (max + 1) / 2 + std::uint64_t(u * double(max - (max + 1) / 2 + 1) - 1e-9);
    else if (distribution_ == "uniform") d = 1 + std::uint64_t(u * double(max) - 1e-9);
    else if (distribution_ == "skewed") d = std::uint64_t(std::ceil(double(max) * u * u));
    else if (distribution_ == "heavy") d = std::uint64_t(std::ceil(double(max) * u * u * u * u));
    spec.shape.push_back(std::min(max, std::max<std::uint64_t>(1, d)));
  }
  return spec;
}

void SampleGenerator::fill(std::uint64_t i, const Spec& spec, std::vector<std::uint8_t>& out) const {
  const std::size_t n = std::size_t(element_count(spec.shape));
  out.resize(n * info(spec.dtype).size);
  const std::uint64_t state = (seed_ + 1) * 0x9e3779b97f4a7c15ULL ^ (i * 0xd1b54a32d192ed03ULL);
  if (random_values_ && spec.dtype != Dtype::b1) {  // raw random bytes (any bit pattern is a valid u*/i*;
    std::uint64_t s = state;                         // floats may be NaN, which digests handle as bytes)
    for (std::size_t k = 0; k < out.size(); k += 8) {
      const std::uint64_t r = splitmix64(s);
      std::memcpy(out.data() + k, &r, std::min<std::size_t>(8, out.size() - k));
    }
    return;
  }
  switch (spec.dtype) {
    case Dtype::b1: {
      std::uint64_t s = state;
      for (std::size_t k = 0; k < n; ++k) out[k] = std::uint8_t(splitmix64(s) & 1);
      break;
    }
    case Dtype::u1: fill_values<std::uint8_t>(state, n, out.data()); break;
    case Dtype::u2: fill_values<std::uint16_t>(state, n, out.data()); break;
    case Dtype::u4: fill_values<std::uint32_t>(state, n, out.data()); break;
    case Dtype::u8: fill_values<std::uint64_t>(state, n, out.data()); break;
    case Dtype::i1: fill_values<std::int8_t>(state, n, out.data()); break;
    case Dtype::i2: fill_values<std::int16_t>(state, n, out.data()); break;
    case Dtype::i4: fill_values<std::int32_t>(state, n, out.data()); break;
    case Dtype::i8: fill_values<std::int64_t>(state, n, out.data()); break;
    case Dtype::f4: fill_values<float>(state, n, out.data()); break;
    case Dtype::f8: fill_values<double>(state, n, out.data()); break;
  }
}

}  // namespace hangar
