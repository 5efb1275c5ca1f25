// Embedding bags over 1-D offsets, summed by bag span (embedding_bag_lowering.cpp).
//
// 1-D indices: bags are runs of consecutive positions of any length. Short bags (under
// s.chunk positions) are combined by one reduction per bag over s.chunk steps, the steps past
// the bag's end masked off, and stored. Long bags go in chunks of s.chunk positions: a long
// bag cannot lie wholly inside a chunk, so a chunk's positions of long bags belong to its
// first bag or its last; per chunk and column a reduction combines each apart, and a scatter
// sends those two partials into the bags' cells: two scattered values per chunk and column
// instead of one per position. The chunk's length is the device's (LowerOptions::bag_chunk).
#pragma once

#include <string>
#include <utility>

#include "core/lower/embedding_bag_parts.h"
#include "core/lower/scatter_combine.h"

namespace kiln::embedding_bag {

// Bag b's first position and the position after its last (i64), b a checked index.
std::pair<int, int> bag_span(const BagSum& s, KernelBuilder& kb, int b);

// Short bags into `cells`, one reduction row per bag and column; long bags' cells get
// `none`, for the chunks' partials to combine into.
void combine_short_bags(const BagSum& s, int cells, const std::string& combine, double none);

// Checks the offsets and finds each chunk's first and last long bag and where their
// positions end and start in it: i64[chunks, 2, 2] (chunk_bags in the .cpp says how).
int chunk_bags(const BagSum& s);

// acc[chunks, 2, dims]: per chunk and column, its first long bag's positions combined, then
// its last's.
int combine_chunks(const BagSum& s, int info, const std::string& combine, double none);

// Over [chunks, 2, dims]: partial (x0, x1) sent into its long bag's cell, if it has one.
ScatterSite chunk_site(const BagSum& s, int info, int parts, KernelBuilder& kb);

}  // namespace kiln::embedding_bag
