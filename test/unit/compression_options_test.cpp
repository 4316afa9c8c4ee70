// The Hangar vocabulary: every valid combination is accepted, every invalid one is refused
// with a message that lists the valid values.
#include <gtest/gtest.h>

#include "h5sparse/compression_options.hpp"
#include "h5sparse/error.hpp"

using namespace h5sparse;
using V = OptionValue;

namespace {

std::string error_of(const V& complib, const V& level, const V& shuffle) {
  try {
    parse_compression_options(complib, level, shuffle);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    return e.what();
  }
  return "";
}

const char* const kBlosc[] = {"blosc:blosclz", "blosc:lz4", "blosc:lz4hc", "blosc:zlib", "blosc:zstd"};

}  // namespace

TEST(CompressionOptions, EveryValidBloscCombination) {
  for (const char* lib : kBlosc) {
    for (int level = 0; level <= 9; ++level) {
      const std::pair<V, Shuffle> shuffles[] = {{V::none(), Shuffle::none}, {V::of("none"), Shuffle::none},
                                                {V::of("byte"), Shuffle::byte}, {V::of("bit"), Shuffle::bit}};
      for (const auto& [value, expected] : shuffles) {
        const CompressionOptions o = parse_compression_options(V::of(lib), V::of(level), value);
        EXPECT_EQ(o.complevel, level);
        EXPECT_EQ(o.shuffle, expected);
        EXPECT_STREQ(complib_name(o.complib), lib);
        EXPECT_EQ(to_spec(parse_compression_spec(to_spec(o))), to_spec(o));
        const auto pipeline = filter_pipeline(o);
        ASSERT_EQ(pipeline.size(), 1u);
        EXPECT_EQ(pipeline[0].id, 32001);
        EXPECT_TRUE(pipeline[0].optional);
        EXPECT_EQ(pipeline[0].cd_values[4], unsigned(level));
        EXPECT_EQ(pipeline[0].cd_values[5], unsigned(expected));
      }
    }
  }
}

TEST(CompressionOptions, EveryValidLzfAndGzipCombination) {
  const V off[] = {V::of(false), V::none(), V::of("none")};
  const V on[] = {V::of(true), V::of("byte")};
  for (const V& level : off) {
    for (const V& s : off) EXPECT_EQ(parse_compression_options(V::of("lzf"), level, s).shuffle, Shuffle::none);
    for (const V& s : on) EXPECT_EQ(parse_compression_options(V::of("lzf"), level, s).shuffle, Shuffle::byte);
  }
  for (int level = 0; level <= 9; ++level) {
    for (const V& s : off) EXPECT_EQ(parse_compression_options(V::of("gzip"), V::of(level), s).complevel, level);
    for (const V& s : on) EXPECT_EQ(parse_compression_options(V::of("gzip"), V::of(level), s).shuffle, Shuffle::byte);
  }
  const auto lzf = filter_pipeline(parse_compression_spec("complib=lzf,shuffle=True"));
  ASSERT_EQ(lzf.size(), 2u);
  EXPECT_EQ(lzf[0].id, 2);
  EXPECT_EQ(lzf[1].id, 32000);
  const auto gzip = filter_pipeline(parse_compression_spec("complib=gzip,complevel=7"));
  ASSERT_EQ(gzip.size(), 1u);
  EXPECT_EQ(gzip[0].id, 1);
  EXPECT_EQ(gzip[0].cd_values, std::vector<unsigned>{7});
}

TEST(CompressionOptions, DefaultsAreHangars) {
  const CompressionOptions o = parse_compression_spec("");
  EXPECT_EQ(o.complib, Complib::blosc_lz4hc);
  EXPECT_EQ(o.complevel, 5);
  EXPECT_EQ(o.shuffle, Shuffle::byte);
}

TEST(CompressionOptions, InvalidCombinationsListWhatIsValid) {
  EXPECT_NE(error_of(V::of("blosc:snappy"), V::of(5), V::none()).find("'blosc:zstd'"), std::string::npos);
  EXPECT_NE(error_of(V::of("zstd"), V::of(5), V::none()).find("valid complib values"), std::string::npos);
  EXPECT_NE(error_of(V::of(3), V::of(5), V::none()).find("valid complib"), std::string::npos);
  for (const char* lib : kBlosc) {
    for (const V& level : {V::of(-1), V::of(10), V::none(), V::of("5"), V::of(true), V::of("none")})
      EXPECT_NE(error_of(V::of(lib), level, V::of("byte")).find("integers 0 to 9"), std::string::npos)
          << lib << " " << level.repr();
    for (const V& s : {V::of(true), V::of(false), V::of("bits"), V::of(1)})
      EXPECT_NE(error_of(V::of(lib), V::of(5), s).find("None, 'none', 'byte', 'bit'"), std::string::npos)
          << lib << " " << s.repr();
  }
  for (const V& level : {V::of(0), V::of(5), V::of(true), V::of("fast")})
    EXPECT_NE(error_of(V::of("lzf"), level, V::none()).find("False, None, 'none'"), std::string::npos);
  for (const char* lib : {"lzf", "gzip"})
    for (const V& s : {V::of("bit"), V::of(2), V::of("shuffle")})
      EXPECT_NE(error_of(V::of(lib), V::of(lib == std::string("lzf") ? 0 : 4) , s).find(""), std::string::npos);
  EXPECT_NE(error_of(V::of("gzip"), V::of(4), V::of("bit")).find("False, None, 'none', True, 'byte'"),
            std::string::npos);
  EXPECT_NE(error_of(V::of("gzip"), V::none(), V::none()).find("integers 0 to 9"), std::string::npos);
  EXPECT_THROW(parse_compression_spec("complib"), Error);
  EXPECT_THROW(parse_compression_spec("level=3"), Error);
}
