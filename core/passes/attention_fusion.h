// Attention written out becomes one scaled_dot_product_attention node: bmm(softmax(bmm(q, kᵀ)
// [/ or * a number] [+ mask], -1), v), through the views, expands to the same sizes and clones
// PyTorch's matmuls leave between them. The plugin's fused attention call then runs it where it
// offers one (no score matrix in memory); elsewhere it decomposes into the same products and
// softmax again. Only where nothing else reads the scores or their softmax (a training graph
// that saves them keeps its ops), q, k and v share their leading dims, the mask (added, of the
// scores' dtype) broadcasts to the scores, and the dtypes agree. A mask computed from no input
// (core/passes/constant_value.h) that hides exactly the keys after each query becomes
// is_causal.
#pragma once

#include <functional>

#include "core/graph/graph.h"
#include "core/support/result.h"

namespace kiln {

// Whether the plugin runs attention on q [..., S, D] and v [..., T, E] as one fused call: the
// pass rewrites only then (elsewhere the rewrite would decompose into the same ops again, and
// a row whose every score is -inf would give 0 instead of the graph's NaN).
using AttentionTaken = std::function<bool(const TensorType& q, const TensorType& v)>;

// `graph` with each such pattern rewritten; `rewritten` (may be null) counts them.
Result<Graph> fuse_attention(const Graph& graph, const AttentionTaken& takes,
                             int* rewritten = nullptr);

}  // namespace kiln
