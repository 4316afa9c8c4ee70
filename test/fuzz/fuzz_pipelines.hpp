// The four section pipelines the chunk fuzz targets and their seeds choose from (by bits of a
// seed's first byte): none, deflate, shuffle + optional LZF, optional Blosc.
#pragma once

#include "h5sparse/filter_ids.hpp"
#include "h5sparse/section_pipeline.hpp"

inline const h5sparse::SectionPipeline& fuzz_pipeline(unsigned choice) {
  using namespace h5sparse;
  static const SectionPipeline kPipelines[] = {
      {},
      {{kFilterDeflate, 0, {6}}},
      {{kFilterShuffle, 0, {}}, {kFilterLzf, kFilterFlagOptional, {}}},
      {{kFilterBlosc, kFilterFlagOptional, {2, 2, 0, 0, 5, 1, 1}}},
  };
  return kPipelines[choice & 3];
}
