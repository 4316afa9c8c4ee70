// The chunk layout the structured-chunk unit tests share: 16 x 24 elements of 4 bytes.
#pragma once

#include "h5sparse/structured_chunk.hpp"

inline h5sparse::ChunkLayout layout_with(h5sparse::SectionPipeline selection, h5sparse::SectionPipeline values) {
  h5sparse::ChunkLayout l;
  l.dims = {16, 24};
  l.element_size = 4;
  l.selection_pipeline = std::move(selection);
  l.values_pipeline = std::move(values);
  return l;
}
