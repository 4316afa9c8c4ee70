// Parser and printer of the BLOCK/POINT text form (see locations_text.hpp).
#include "locations_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

#include "h5sparse/error.hpp"

namespace h5sparse::tool {
namespace {

class LineParser {
 public:
  LineParser(std::string line, std::string where) : s_(std::move(line)), where_(std::move(where)) {}

  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool at_end() {
    skip_space();
    return i_ >= s_.size();
  }
  bool accept(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool accept_word(const char* word) {
    skip_space();
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  std::uint64_t number() {
    skip_space();
    const std::size_t start = i_;
    std::uint64_t v = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      const std::uint64_t digit = std::uint64_t(s_[i_] - '0');
      if (v > (UINT64_MAX - digit) / 10) fail("coordinate too large");
      v = v * 10 + digit;
      ++i_;
    }
    if (i_ == start) fail("expected a coordinate");
    return v;
  }
  std::vector<std::uint64_t> coords() {
    expect('(');
    std::vector<std::uint64_t> c{number()};
    while (accept(',')) c.push_back(number());
    expect(')');
    return c;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::invalid_argument,
                where_ + ": " + what + " at column " + std::to_string(i_ + 1) + " in \"" + s_ + "\"");
  }

 private:
  std::string s_;
  std::string where_;
  std::size_t i_ = 0;
};

DatasetLocations& current(std::vector<DatasetLocations>& out, std::size_t rank, LineParser& p) {
  if (out.empty()) out.push_back({"", BoxList(rank)});
  DatasetLocations& d = out.back();
  if (d.boxes.size() == 0 && d.boxes.rank() != rank) d.boxes = BoxList(rank);
  if (d.boxes.rank() != rank)
    p.fail("rank " + std::to_string(rank) + " differs from earlier entries (" + std::to_string(d.boxes.rank()) + ")");
  return d;
}

}  // namespace

void append_coords(std::string& out, const std::uint64_t* coords, std::size_t rank) {
  char buf[24];
  out += '(';
  for (std::size_t d = 0; d < rank; ++d) {
    if (d) out += ',';
    out.append(buf, std::to_chars(buf, buf + sizeof buf, coords[d]).ptr);
  }
  out += ')';
}

std::string format_coords(const std::uint64_t* coords, std::size_t rank) {
  std::string text;
  append_coords(text, coords, rank);
  return text;
}

std::vector<DatasetLocations> parse_locations(std::istream& in, const std::string& source) {
  std::vector<DatasetLocations> out;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string where = source + ":" + std::to_string(number);
    const std::size_t dataset = line.find("DATASET \"");
    if (dataset != std::string::npos) {
      const std::size_t start = dataset + 9, end = line.find('"', start);
      if (end == std::string::npos) LineParser(line, where).fail("unterminated dataset name");
      out.push_back({line.substr(start, end - start), BoxList(0)});
      continue;
    }
    const std::size_t block = line.find("BLOCK"), point = line.find("POINT");
    if (block == std::string::npos && point == std::string::npos) continue;
    // From the first keyword on: entries, each after BLOCK or POINT (the keyword stays in force
    // for entries separated by commas), so the RFC's one-line form parses too.
    LineParser p(line.substr(std::min(block, point)), where);
    bool is_block = false;
    while (!p.at_end()) {
      p.accept_word("DEFINED_SPARSE_DATA");
      if (p.accept_word("BLOCK")) is_block = true;
      else if (p.accept_word("POINT")) is_block = false;
      const std::vector<std::uint64_t> lo = p.coords();
      std::vector<std::uint64_t> hi = lo;
      if (is_block) {
        p.expect('-');
        hi = p.coords();
        if (hi.size() != lo.size()) p.fail("block corners of different ranks");
        for (std::size_t d = 0; d < lo.size(); ++d)
          if (hi[d] < lo[d]) p.fail("block's second corner precedes its first");
      }
      current(out, lo.size(), p).boxes.add(lo.data(), hi.data());
      p.accept(',');
    }
  }
  return out;
}

}  // namespace h5sparse::tool
