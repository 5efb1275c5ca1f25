// scaled_dot_product_attention as the plugin's fused "attention" library call (ptx: one kernel
// with an online softmax, no score matrix in memory), where the plugin offers it for the dtype
// and the call takes the shape: f16/bf16, rank 2 to 4, a head dim that is a multiple of 16 up to
// 128 and the same for values, no dropout or grouped heads. q, k, v and a mask are read in
// place when their strides suit the call (the head dim contiguous, everything else 16-byte
// aligned), copied first otherwise; a mask's broadcast dims are read with stride 0. Everywhere
// else sdpa decomposes into the matmul-softmax-matmul that the generated kernels fuse.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/lower/lower_context.h"

namespace kiln {

inline constexpr const char* kAttentionOp = "aten.scaled_dot_product_attention.default";

// Whether `node` (an sdpa) goes to the plugin's attention call, given its library calls
// `externs`: decompose keeps such a node whole.
bool attention_call_applies(const Graph& graph, const Node& node,
                            const std::vector<std::string>& externs);
// The same for attention without dropout or grouped heads on q [..., S, D] and v [..., T, E]
// (k like q): what core/passes/attention_fusion.h asks before it makes such a node.
bool attention_call_takes(const TensorType& q, const TensorType& v,
                          const std::vector<std::string>& externs);

std::map<std::string, LowerFn> attention_lowerings();

}  // namespace kiln
