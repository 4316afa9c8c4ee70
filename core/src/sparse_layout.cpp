// Request and complete cd_values forms of the structured-chunk filter.
#include "h5sparse/sparse_layout.hpp"

#include <string>

#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

class Reader {
 public:
  Reader(const unsigned* v, std::size_t n, ErrorCode code) : v_(v), n_(n), code_(code) {}
  unsigned next(const char* what) {
    H5SPARSE_FAIL_IF(i_ >= n_, code_, std::string("structured-chunk parameters end before ") + what +
                                 " (value " + std::to_string(i_) + ")");
    return v_[i_++];
  }
  bool done() const { return i_ == n_; }
  std::size_t position() const { return i_; }

 private:
  const unsigned* v_;
  std::size_t n_;
  std::size_t i_ = 0;
  ErrorCode code_;
};

SectionPipeline read_pipeline(Reader& in, ErrorCode code) {
  const unsigned count = in.next("a pipeline's filter count");
  H5SPARSE_FAIL_IF(count > 32, code, "a section pipeline holds at most 32 filters, got " + std::to_string(count));
  SectionPipeline pipeline(count);
  for (SectionFilter& f : pipeline) {
    f.id = int(in.next("a filter id"));
    f.flags = in.next("a filter's flags");
    const unsigned ncd = in.next("a filter's cd_values count");
    H5SPARSE_FAIL_IF(ncd > 256, code, "a section filter has at most 256 cd_values");
    for (unsigned k = 0; k < ncd; ++k) f.cd_values.push_back(in.next("a filter's cd_values"));
  }
  return pipeline;
}

void write_pipeline(std::vector<unsigned>& out, const SectionPipeline& pipeline) {
  out.push_back(unsigned(pipeline.size()));
  for (const SectionFilter& f : pipeline) {
    out.push_back(unsigned(f.id));
    out.push_back(f.flags);
    out.push_back(unsigned(f.cd_values.size()));
    out.insert(out.end(), f.cd_values.begin(), f.cd_values.end());
  }
}

void validate_pipelines(const SparseParams& p, ErrorCode code) {
  try {
    validate_pipeline(p.layout.selection_pipeline);
    validate_pipeline(p.layout.values_pipeline);
  } catch (const Error& e) {
    throw Error(code, e.what());
  }
}

}  // namespace

SparseParams parse_request(const std::vector<unsigned>& cd_values) {
  SparseParams p;
  if (cd_values.empty()) return p;
  H5SPARSE_FAIL_IF(is_complete_form(cd_values.data(), cd_values.size()), ErrorCode::invalid_argument,
          "use from_cd_values for the complete form");
  Reader in(cd_values.data(), cd_values.size(), ErrorCode::invalid_argument);
  p.options = in.next("the options word");
  H5SPARSE_FAIL_IF(p.options & ~kKnownOptions, ErrorCode::invalid_argument,
          "unknown structured-chunk option bits " + std::to_string(p.options & ~kKnownOptions) +
              " (known: 1 = fill-valued elements stay undefined)");
  if (!in.done()) p.layout.selection_pipeline = read_pipeline(in, ErrorCode::invalid_argument);
  if (!in.done()) p.layout.values_pipeline = read_pipeline(in, ErrorCode::invalid_argument);
  H5SPARSE_FAIL_IF(!in.done(), ErrorCode::invalid_argument,
          "structured-chunk parameters have " + std::to_string(cd_values.size() - in.position()) +
              " values past the two section pipelines");
  validate_pipelines(p, ErrorCode::invalid_argument);
  return p;
}

std::vector<unsigned> to_request(const SparseParams& params) {
  std::vector<unsigned> out{params.options};
  write_pipeline(out, params.layout.selection_pipeline);
  write_pipeline(out, params.layout.values_pipeline);
  return out;
}

std::vector<unsigned> to_cd_values(const SparseParams& params) {
  const ChunkLayout& l = params.layout;
  H5SPARSE_FAIL_IF(l.dims.empty() || l.dims.size() > 32, ErrorCode::invalid_argument, "chunk rank must be 1-32");
  H5SPARSE_FAIL_IF(l.element_size == 0, ErrorCode::invalid_argument, "element size must not be zero");
  H5SPARSE_FAIL_IF(!params.fill.empty() && params.fill.size() != l.element_size, ErrorCode::invalid_argument,
          "fill value size differs from the element size");
  std::vector<unsigned> out{kSparseParamsMagic, params.options, unsigned(l.element_size), unsigned(l.dims.size())};
  for (std::uint64_t d : l.dims) {
    H5SPARSE_FAIL_IF(d == 0 || d > 0xFFFFFFFFu, ErrorCode::invalid_argument, "chunk dimensions must be 1 to 2^32-1");
    out.push_back(unsigned(d));
  }
  out.push_back(unsigned(params.fill.size()));
  for (std::size_t i = 0; i < params.fill.size(); i += 4) {
    unsigned word = 0;
    for (std::size_t b = 0; b < 4 && i + b < params.fill.size(); ++b) word |= unsigned(params.fill[i + b]) << (8 * b);
    out.push_back(word);
  }
  write_pipeline(out, l.selection_pipeline);
  write_pipeline(out, l.values_pipeline);
  return out;
}

bool is_complete_form(const unsigned* cd_values, std::size_t count) {
  return count > 0 && cd_values[0] == kSparseParamsMagic;
}

SparseParams from_cd_values(const unsigned* cd_values, std::size_t count) {
  const ErrorCode bad = ErrorCode::corrupt_data;
  H5SPARSE_FAIL_IF(!is_complete_form(cd_values, count), bad,
          "structured-chunk parameters do not start with the format marker 0x53500001");
  Reader in(cd_values, count, bad);
  in.next("the marker");
  SparseParams p;
  p.options = in.next("the options word");
  H5SPARSE_FAIL_IF(p.options & ~kKnownOptions, ErrorCode::unsupported, "structured-chunk options from a newer writer");
  p.layout.element_size = in.next("the element size");
  const unsigned rank = in.next("the rank");
  H5SPARSE_FAIL_IF(rank == 0 || rank > 32 || p.layout.element_size == 0, bad, "invalid rank or element size");
  for (unsigned d = 0; d < rank; ++d) {
    p.layout.dims.push_back(in.next("a chunk dimension"));
    H5SPARSE_FAIL_IF(p.layout.dims.back() == 0, bad, "a chunk dimension is zero");
  }
  const unsigned fill_size = in.next("the fill size");
  H5SPARSE_FAIL_IF(fill_size != 0 && fill_size != p.layout.element_size, bad, "fill value size differs from the element size");
  for (unsigned i = 0; i < fill_size; i += 4) {
    const unsigned word = in.next("the fill value");
    for (unsigned b = 0; b < 4 && i + b < fill_size; ++b) p.fill.push_back(std::uint8_t(word >> (8 * b)));
  }
  p.layout.selection_pipeline = read_pipeline(in, bad);
  p.layout.values_pipeline = read_pipeline(in, bad);
  H5SPARSE_FAIL_IF(!in.done(), bad, "structured-chunk parameters have trailing values");
  validate_pipelines(p, ErrorCode::unsupported);
  return p;
}

}  // namespace h5sparse
