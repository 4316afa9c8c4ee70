// Deterministic synthetic samples for the example program, the tests and the benchmark:
// sample i's dtype, shape and values depend only on (seed, i), so a reader can regenerate
// what a writer in another process stored.
//
// Shape distributions (each dimension independently, 1 <= d <= max):
//   full     d = max                      (every sample has the schema shape)
//   large    d uniform in [ceil(max/2), max]
//   uniform  d uniform in [1, max]
//   skewed   d = ceil(max * u^2), u uniform in (0, 1]
//   heavy    d = ceil(max * u^4)          (mostly small samples, a few large ones)
//
// Values: "ramp" (default) a sawtooth of period 61 along the flattened sample plus 2 bits of
// noise, which Blosc/LZ4HC stores in about 80% of its size, as it does natural images;
// "random" every byte uniformly random, which no compressor shrinks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hangar/dtype.hpp"
#include "hangar/record.hpp"

namespace hangar {

class SampleGenerator {
 public:
  /// Throws std::invalid_argument for an unknown distribution or an empty dtype list.
  SampleGenerator(std::uint64_t seed, std::vector<Dtype> dtypes, Shape max_shape, std::string distribution,
                  std::string values = "ramp");

  struct Spec {
    Dtype dtype;
    Shape shape;
  };
  Spec spec(std::uint64_t i) const;
  /// Sample i's bytes (C order) for its spec.
  void fill(std::uint64_t i, const Spec& spec, std::vector<std::uint8_t>& out) const;

  const Shape& max_shape() const { return max_shape_; }
  static const std::vector<std::string>& distributions();

 private:
  std::uint64_t seed_;
  std::vector<Dtype> dtypes_;
  Shape max_shape_;
  std::string distribution_;
  bool random_values_;
};

}  // namespace hangar
