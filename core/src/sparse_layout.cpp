// Request and complete cd_values forms of the structured-chunk filter: parameters version 1
// (fixed-size elements) and version 2 (variable-length elements).
#include "h5sparse/sparse_layout.hpp"

#include <algorithm>
#include <string>

#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"

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

// The pipelines a layout has: four for variable-length elements, else two.
std::vector<SectionPipeline*> pipelines_of(ChunkLayout& l, bool var) {
  std::vector<SectionPipeline*> all{&l.selection_pipeline, &l.values_pipeline};
  if (var) all.insert(all.end(), {&l.lengths_pipeline, &l.data_pipeline});
  return all;
}

void validate_pipelines(const SparseParams& p, ErrorCode code) {
  try {
    validate_pipeline(p.layout.selection_pipeline);
    validate_pipeline(p.layout.values_pipeline);
    validate_pipeline(p.layout.lengths_pipeline);
    validate_pipeline(p.layout.data_pipeline);
  } catch (const Error& e) {
    throw Error(code, e.what());
  }
}

void write_words(std::vector<unsigned>& out, const Bytes& bytes) {
  for (std::size_t i = 0; i < bytes.size(); i += 4) {
    unsigned word = 0;
    for (std::size_t b = 0; b < 4 && i + b < bytes.size(); ++b) word |= unsigned(bytes[i + b]) << (8 * b);
    out.push_back(word);
  }
}

Bytes read_words(Reader& in, std::size_t size, const char* what) {
  Bytes bytes;
  for (std::size_t i = 0; i < size; i += 4) {
    const unsigned word = in.next(what);
    for (std::size_t b = 0; b < 4 && i + b < size; ++b) bytes.push_back(std::uint8_t(word >> (8 * b)));
  }
  return bytes;
}

// Version 2's tail: the fixed part's size, the slots, the true datatype's bytes.
void write_var_description(std::vector<unsigned>& out, const SparseParams& p) {
  const VarType& t = p.layout.var;
  H5SPARSE_FAIL_IF(t.slots() > kMaxVarSlots || p.slot_kinds.size() != t.slots(), ErrorCode::invalid_argument,
                   "a variable-length element needs 1-64 slots, each with its kind");
  H5SPARSE_FAIL_IF(p.true_type.empty(), ErrorCode::invalid_argument, "a variable-length dataset needs its true datatype");
  out.push_back(unsigned(t.fixed_size));
  out.push_back(unsigned(t.slots()));
  for (std::size_t m = 0; m < t.slots(); ++m) {
    H5SPARSE_FAIL_IF(t.slot_base_sizes[m] == 0 || t.slot_base_sizes[m] > 0xFFFFFFFFu ||
                         (p.slot_kinds[m] != SlotKind::sequence && t.slot_base_sizes[m] != 1),
                     ErrorCode::invalid_argument, "a slot's base size must be 1 for strings, else 1 to 2^32-1");
    out.push_back(unsigned(p.slot_kinds[m]));
    out.push_back(unsigned(t.slot_base_sizes[m]));
  }
  out.push_back(unsigned(p.true_type.size()));
  write_words(out, p.true_type);
}

void read_var_description(Reader& in, SparseParams& p) {
  const ErrorCode bad = ErrorCode::corrupt_data;
  p.layout.var.fixed_size = in.next("the fixed part's size");
  const unsigned slots = in.next("the slot count");
  H5SPARSE_FAIL_IF(slots == 0 || slots > kMaxVarSlots, bad, "a variable-length element needs 1-64 slots");
  for (unsigned m = 0; m < slots; ++m) {
    const unsigned kind = in.next("a slot's kind"), base = in.next("a slot's base size");
    H5SPARSE_FAIL_IF(kind > unsigned(SlotKind::utf8), ErrorCode::unsupported, "a slot kind from a newer writer");
    H5SPARSE_FAIL_IF(base == 0 || (kind != unsigned(SlotKind::sequence) && base != 1), bad,
                     "a slot's base size must be 1 for strings, else at least 1");
    p.slot_kinds.push_back(SlotKind(kind));
    p.layout.var.slot_base_sizes.push_back(base);
  }
  const unsigned type_size = in.next("the datatype's size");
  H5SPARSE_FAIL_IF(type_size == 0, bad, "a variable-length dataset without its true datatype");
  p.true_type = read_words(in, type_size, "the datatype's bytes");
}

}  // namespace

SparseParams parse_request(const std::vector<unsigned>& cd_values) {
  SparseParams p;
  if (cd_values.empty()) return p;
  H5SPARSE_FAIL_IF(is_complete_form(cd_values.data(), cd_values.size()), ErrorCode::invalid_argument,
          "use from_cd_values for the complete form");
  Reader in(cd_values.data(), cd_values.size(), ErrorCode::invalid_argument);
  p.options = in.next("the options word");
  H5SPARSE_FAIL_IF(p.options & ~kKnownRequestOptions, ErrorCode::invalid_argument,
          "unknown structured-chunk option bits " + std::to_string(p.options & ~kKnownRequestOptions) +
              " (known: 1 = fill-valued elements stay undefined, 2 = section 3's pipeline chosen by the datatype)");
  for (SectionPipeline* pipeline : pipelines_of(p.layout, true))
    if (!in.done()) *pipeline = read_pipeline(in, ErrorCode::invalid_argument);
  H5SPARSE_FAIL_IF(!in.done(), ErrorCode::invalid_argument,
          "structured-chunk parameters have " + std::to_string(cd_values.size() - in.position()) +
              " values past the four section pipelines");
  H5SPARSE_FAIL_IF((p.options & kOptionVarDataByType) && !p.layout.data_pipeline.empty(),
                   ErrorCode::invalid_argument,
                   "section 3's pipeline is both given and left to the datatype (option value 2)");
  validate_pipelines(p, ErrorCode::invalid_argument);
  return p;
}

SectionPipeline var_data_pipeline(const std::vector<SlotKind>& slot_kinds) {
  // Blosc cd_values (0, 0, 0, 0, level, shuffle, compressor): byte shuffle is 1, zstd 5. Level
  // 1 on text is as small as higher levels and writes several times faster; numeric sequences
  // are up to 1.7x smaller at level 3 (zstd's level 5; docs/DESIGN.md).
  const bool text =
      std::all_of(slot_kinds.begin(), slot_kinds.end(), [](SlotKind k) { return k != SlotKind::sequence; });
  return {SectionFilter{kFilterBlosc, kFilterFlagOptional, {0, 0, 0, 0, text ? 1u : 3u, 1, 5}}};
}

void choose_var_data_pipeline(SparseParams& params) {
  if (!(params.options & kOptionVarDataByType)) return;
  params.layout.data_pipeline = var_data_pipeline(params.slot_kinds);
  params.options &= ~unsigned(kOptionVarDataByType);
}

std::vector<unsigned> to_request(const SparseParams& params) {
  std::vector<unsigned> out{params.options};
  ChunkLayout layout = params.layout;
  // Sections 2-3 whenever given: a request may name them before the datatype is known.
  const bool four = layout.is_var() || !layout.lengths_pipeline.empty() || !layout.data_pipeline.empty();
  for (const SectionPipeline* pipeline : pipelines_of(layout, four)) write_pipeline(out, *pipeline);
  return out;
}

std::vector<unsigned> to_cd_values(const SparseParams& params) {
  ChunkLayout l = params.layout;
  const bool var = l.is_var();
  H5SPARSE_FAIL_IF(var && (l.element_size != kVarCarrierSize || !params.fill.empty()), ErrorCode::invalid_argument,
                   "a variable-length dataset has a 16-byte carrier and no fill value");
  H5SPARSE_FAIL_IF(!var && (!l.lengths_pipeline.empty() || !l.data_pipeline.empty() ||
                            (params.options & kOptionVarDataByType)),
                   ErrorCode::invalid_argument, "sections 2 and 3 (lengths, data) exist only for variable-length datatypes");
  H5SPARSE_FAIL_IF(params.options & ~kKnownOptions, ErrorCode::invalid_argument,
                   "structured-chunk option bits " + std::to_string(params.options & ~kKnownOptions) +
                       " are not stored (section 3's pipeline is chosen before)");
  H5SPARSE_FAIL_IF(l.dims.empty() || l.dims.size() > 32, ErrorCode::invalid_argument, "chunk rank must be 1-32");
  H5SPARSE_FAIL_IF(l.element_size == 0, ErrorCode::invalid_argument, "element size must not be zero");
  H5SPARSE_FAIL_IF(!params.fill.empty() && params.fill.size() != l.element_size, ErrorCode::invalid_argument,
          "fill value size differs from the element size");
  std::vector<unsigned> out{var ? kVarParamsMagic : kSparseParamsMagic, params.options, unsigned(l.element_size), unsigned(l.dims.size())};
  for (std::uint64_t d : l.dims) {
    H5SPARSE_FAIL_IF(d == 0 || d > 0xFFFFFFFFu, ErrorCode::invalid_argument, "chunk dimensions must be 1 to 2^32-1");
    out.push_back(unsigned(d));
  }
  out.push_back(unsigned(params.fill.size()));
  write_words(out, params.fill);
  for (const SectionPipeline* pipeline : pipelines_of(l, var)) write_pipeline(out, *pipeline);
  if (var) write_var_description(out, params);
  return out;
}

bool is_complete_form(const unsigned* cd_values, std::size_t count) {
  return count > 0 && (cd_values[0] == kSparseParamsMagic || cd_values[0] == kVarParamsMagic);
}

SparseParams from_cd_values(const unsigned* cd_values, std::size_t count) {
  const ErrorCode bad = ErrorCode::corrupt_data;
  H5SPARSE_FAIL_IF(!is_complete_form(cd_values, count), bad,
          "structured-chunk parameters do not start with the format marker 0x53500001 or 0x53500002");
  const bool var = cd_values[0] == kVarParamsMagic;
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
  H5SPARSE_FAIL_IF(var && (fill_size != 0 || p.layout.element_size != kVarCarrierSize), bad,
                   "a variable-length dataset has a 16-byte carrier and no fill value");
  p.fill = read_words(in, fill_size, "the fill value");
  for (SectionPipeline* pipeline : pipelines_of(p.layout, var)) *pipeline = read_pipeline(in, bad);
  if (var) read_var_description(in, p);
  H5SPARSE_FAIL_IF(!in.done(), bad, "structured-chunk parameters have trailing values");
  validate_pipelines(p, ErrorCode::unsupported);
  return p;
}

}  // namespace h5sparse
