// sort and topk of long lines without comparing every pair of elements. Both start from each
// chunk of C elements ranked inside itself (n*C comparisons).
//  - topk in two rounds: each chunk keeps its first k as candidates (value and index), then
//    the candidates rank among themselves. Every element of the top k is among its chunk's
//    top k, so the result is the same, for n*C + (n*k/C)^2 comparisons instead of n^2
//    (n = 50257, k = 50: 0.1% of them).
//  - sort: the chunks are written out sorted; an element's place is the sum over chunks of how
//    many of the chunk's elements sort before it, each a binary search of the sorted chunk
//    (log2 C loads), and the element is scattered there: n*C + n*(n/C)*log2(C) steps (n =
//    50257: 3% of n^2).
#pragma once

#include <cstdint>

#include "core/lower/lower_context.h"

namespace kiln {

// The chunk length that makes a two-round topk of k out of `len` cheapest; 0 when one round
// over the whole line is as cheap.
int64_t topk_chunk(int64_t len, int64_t k);
void chunked_topk(NodeLowering& n, size_t dim, bool descending, int64_t k, int64_t chunk);

// The chunk length (a power of two) for sorting lines of `len`; 0 when ranking against the
// whole line is as cheap.
int64_t sort_chunk(int64_t len);
void chunked_sort(NodeLowering& n, size_t dim, bool descending, int64_t chunk);

}  // namespace kiln
