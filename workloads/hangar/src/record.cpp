// Record strings and Hangar's xxh64_hexdigest.
#include "hangar/record.hpp"

#include <xxhash.h>

#include <cstdio>
#include <stdexcept>

namespace hangar {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::uint64_t parse_number(const std::string& text, const char* field, const std::string& record) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 19)
    throw std::invalid_argument("record '" + record + "': " + field + " '" + text + "' is not a number");
  return std::stoull(text);
}

}  // namespace

std::uint64_t element_count(const Shape& shape) {
  std::uint64_t n = 1;
  for (const std::uint64_t d : shape) n *= d;
  return n;
}

std::string xxh64_hexdigest(const void* data, std::size_t size) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(XXH64(data, size, 0)));
  return text;
}

std::string Record::str() const {
  std::string text = "00:" + uid + ":" + digest + ":" + std::to_string(dataset) + ":" + std::to_string(index) + ":";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? " " : "") + std::to_string(shape[i]);
  return text;
}

Record Record::parse(const std::string& text) {
  const std::vector<std::string> fields = split(text, ':');
  if (fields.size() != 6) throw std::invalid_argument("record '" + text + "': expected 6 fields separated by ':'");
  if (fields[0] != "00")
    throw std::invalid_argument("record '" + text + "': format code '" + fields[0] + "' is not 00 (HDF5_00)");
  Record record;
  record.uid = fields[1];
  if (record.uid.empty() || record.uid.find_first_of("/\\.") != std::string::npos)
    throw std::invalid_argument("record '" + text + "': invalid file uid");
  record.digest = fields[2];
  if (record.digest.size() != 16 || record.digest.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw std::invalid_argument("record '" + text + "': checksum is not 16 lowercase hex digits");
  const std::uint64_t dataset = parse_number(fields[3], "dataset number", text);
  if (dataset > 1'000'000) throw std::invalid_argument("record '" + text + "': dataset number out of range");
  record.dataset = unsigned(dataset);
  record.index = parse_number(fields[4], "collection index", text);
  if (!fields[5].empty())
    for (const std::string& dim : split(fields[5], ' ')) record.shape.push_back(parse_number(dim, "shape", text));
  return record;
}

}  // namespace hangar
