// The "attention" extern call as plugins receive it (plugin-abi.md): scaled dot-product
// attention, softmax(q kᵀ · scale + mask) v, with q [batch, heads, q_len, head_dim], k and v
// [batch, heads, kv_len, head_dim] read through their offsets and strides (the last dim
// contiguous), an optional mask read through strides that may be 0 (broadcast), and the output
// [batch, heads, q_len, head_dim], contiguous or, with the `out_strides` feature, any dense
// order of those dims with head_dim innermost ([batch, q_len, heads, head_dim]: the layout a
// projection after the heads' transpose reads in place). Buffers: q, k, v, the mask when there
// is one, the output. 26 integer parameters, 29 with the output's strides; read and checked
// once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kir.hpp"
#include "kiln/plugin.h"

namespace kiln::kir_support {

// What the mask parameter says: none, bool (true keeps the score), or added to the scores.
enum class AttentionMask : int64_t { None = 0, Keep = 1, Add = 2 };

// Where one operand's element (b, h, row, col) is: offset + b*batch + h*head + row*row_stride
// + col*col_stride (elements).
struct OperandLayout {
  int64_t offset = 0, batch = 0, head = 0, row = 0, col = 1;
  int64_t extent(int64_t batches, int64_t heads, int64_t rows, int64_t cols) const;
};

struct AttentionCall {
  kir::DType dtype = kir::DType::BF16;
  int64_t batch = 0, heads = 0, q_len = 0, kv_len = 0, head_dim = 0;
  bool causal = false;  // key j is hidden from query i when j > i
  double scale = 0;
  OperandLayout q, k, v;  // col stride 1
  AttentionMask mask = AttentionMask::None;
  kir::DType mask_dtype = kir::DType::Bool;  // Keep: bool; Add: dtype
  OperandLayout mask_at;                     // over (b, h, query, key)
  OperandLayout out;                         // over (b, h, query, dim); col stride 1
  // Whether `out` is [batch, heads, q_len, head_dim] contiguous (the 26-parameter form).
  bool out_contiguous() const;
  // Bytes each buffer must span, in the call's order.
  std::vector<int64_t> buffer_bytes() const;
  // Every parameter, comma-separated: the key a compiled kernel is kept under.
  std::string key() const;
};

// The parameters in their order (scale_bits: the IEEE-754 bits of the f64 scale).
inline constexpr const char* kAttentionParams[] = {
    "dtype",         "batch",        "heads",      "q_len",       "kv_len",        "head_dim",
    "causal",        "scale_bits",   "q_offset",   "q_stride_b",  "q_stride_h",    "q_stride_l",
    "k_offset",      "k_stride_b",   "k_stride_h", "k_stride_l",  "v_offset",      "v_stride_b",
    "v_stride_h",    "v_stride_l",   "mask",       "mask_offset", "mask_stride_b", "mask_stride_h",
    "mask_stride_l", "mask_stride_s"};

// The output's strides (the `out_strides` feature), after kAttentionParams.
inline constexpr const char* kAttentionOutParams[] = {"out_stride_b", "out_stride_h",
                                                      "out_stride_l"};

// The output of `call` contiguous.
OperandLayout contiguous_output(const AttentionCall& call);

// The parameters of `call`, in kAttentionParams' order, then kAttentionOutParams' unless the
// output is contiguous.
std::vector<int64_t> attention_params(const AttentionCall& call);

// Throws std::invalid_argument naming the problem: the count, a dtype that is not f16 or bf16,
// a negative size, stride or offset, an unknown mask kind, a scale that is not finite, output
// strides that are not a dense order of its dims.
AttentionCall read_attention_call(const std::vector<int64_t>& params);
AttentionCall read_attention_call(const kiln_launch_args& args);

}  // namespace kiln::kir_support
