// sort and topk of long lines as a merge tree, without comparing every pair of elements:
//  - level 0: each chunk of C elements ranked inside itself (n*C comparisons, one reduction
//    kernel) and written out in order, its first `keep` elements only (topk keeps k, sort all);
//  - level l+1: pairs of level-l runs merged, one pointwise kernel per level: an element's
//    place in the merged run is its place in its own run plus how many of the partner run's
//    elements sort before it, a binary search of the partner (log2 of its length in loads).
//    Merged runs again keep their first `keep`.
// Sort costs n*C + n*sum(log2 run) steps in 2 + log2(n/C) kernels (n = 50257, C = 32: ~1%
// of the n^2 a whole-line rank takes); topk with runs capped at k much less.
#pragma once

#include <cstdint>

#include "core/lower/lower_context.h"

namespace kiln {

// The chunk length (a power of two) for the merge tree of `lines` lines of `len` keeping
// `keep` elements each; 0 when ranking every element against the whole line is as cheap.
int64_t merge_tree_chunk(int64_t len, int64_t keep, int64_t lines);
// The first `keep` elements of each line along `dim` in sort order, into the node's outputs
// (values, indices).
void merge_tree_sort(NodeLowering& n, size_t dim, bool descending, int64_t keep, int64_t chunk);

}  // namespace kiln
