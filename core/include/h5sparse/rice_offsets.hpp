// The "rice offsets" selection encoding (tag 6, docs/FORMAT.md): the gaps of the offsets
// encoding (tag 3) as a Rice-coded bitstream instead of varints. Random points cost about
// log2(mean gap) + 2 bits each instead of whole bytes (66 points in 65,536 elements: ~99 bytes
// instead of ~134), close to the entropy bound of a random selection.
#pragma once

#include <cstddef>
#include <cstdint>

#include "h5sparse/selection_codec.hpp"

namespace h5sparse {

/// The largest Rice parameter a writer uses and a reader accepts.
constexpr unsigned kMaxRiceParameter = 32;

/// A lower bound of the Rice-coded gaps' bits for any parameter, from the count (> 0) and the
/// last defined element alone: no pass over the elements.
std::uint64_t least_rice_bits(std::uint64_t last, std::uint64_t count);

/// Appends the Rice parameter byte and the bitstream of the gaps of `s`, which has `count`
/// (> 0) defined elements. The parameter is the one the mean gap suggests, or a neighbour
/// when that is smaller: one pass measures the neighbours while writing (a second pass only
/// when a neighbour wins). Returns the number of gaps of 128 and more, which take two bytes or
/// more as varints (the offsets encoding's lower bound), when the parameter first tried is 4
/// or more; below, 0: the codes then average under 8 bits, so varint offsets cannot compete.
std::uint64_t append_rice_gaps(const ChunkSelection& s, std::uint64_t count, Bytes& out);
/// append_rice_gaps of `count` (> 0) ascending distinct offsets: the same bytes.
std::uint64_t append_rice_gaps(const std::uint32_t* offsets, std::size_t count, Bytes& out);

/// Reads `count` Rice-coded gaps with parameter k from exactly `size` bytes and sets the
/// offsets they give in `s`. Throws Error(corrupt_data) for offsets past the chunk, unary runs
/// longer than any gap inside it, truncation, trailing bytes or nonzero padding bits.
void read_rice_gaps(const std::uint8_t* data, std::size_t size, std::uint64_t count, unsigned k, ChunkSelection& s);
/// read_rice_gaps for a chunk of `n` elements, appending the offsets to `offsets`.
void read_rice_gaps(const std::uint8_t* data, std::size_t size, std::uint64_t count, unsigned k, std::uint64_t n,
                    std::vector<std::uint32_t>& offsets);

}  // namespace h5sparse
