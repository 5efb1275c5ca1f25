#include "plugins/kir_support/attention_call.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include "plugins/kir_support/extern_params.h"

namespace kiln::kir_support {
namespace {

// Where in kAttentionParams the scale's bits (the one parameter that may be negative), the
// first operand layout and the mask kind are.
constexpr size_t kScaleAt = 7, kLayoutsAt = 8, kMaskAt = 20;

// Whether `out` packs (batch, heads, rows) densely over rows of `dim` elements, in any order:
// each dim's stride is the product of the sizes inside it (dims of size 1 aside).
bool dense_order(const OperandLayout& out, int64_t batch, int64_t heads, int64_t rows,
                 int64_t dim) {
  std::array<std::pair<int64_t, int64_t>, 3> dims = {
      {{out.batch, batch}, {out.head, heads}, {out.row, rows}}};
  std::sort(dims.begin(), dims.end());
  int64_t inside = dim;
  for (const auto& [stride, size] : dims) {
    if (size == 1) continue;
    if (stride != inside) return false;
    inside *= size;
  }
  return true;
}

}  // namespace

OperandLayout contiguous_output(const AttentionCall& c) {
  OperandLayout out;
  out.row = c.head_dim;
  out.head = c.q_len * c.head_dim;
  out.batch = c.heads * out.head;
  return out;
}

bool AttentionCall::out_contiguous() const {
  const OperandLayout plain = contiguous_output(*this);
  return out.batch == plain.batch && out.head == plain.head && out.row == plain.row;
}

int64_t OperandLayout::extent(int64_t batches, int64_t heads, int64_t rows, int64_t cols) const {
  if (batches == 0 || heads == 0 || rows == 0 || cols == 0) return 0;
  return offset + (batches - 1) * batch + (heads - 1) * head + (rows - 1) * row + (cols - 1) * col +
         1;
}

std::vector<int64_t> AttentionCall::buffer_bytes() const {
  const int64_t size = kir::dtype_size(dtype);
  std::vector<int64_t> bytes = {q.extent(batch, heads, q_len, head_dim) * size,
                                k.extent(batch, heads, kv_len, head_dim) * size,
                                v.extent(batch, heads, kv_len, head_dim) * size};
  if (mask != AttentionMask::None)
    bytes.push_back(mask_at.extent(batch, heads, q_len, kv_len) * kir::dtype_size(mask_dtype));
  bytes.push_back(out.extent(batch, heads, q_len, head_dim) * size);
  return bytes;
}

std::vector<int64_t> attention_params(const AttentionCall& c) {
  std::vector<int64_t> p = {static_cast<int64_t>(c.dtype),
                            c.batch,
                            c.heads,
                            c.q_len,
                            c.kv_len,
                            c.head_dim,
                            c.causal ? 1 : 0,
                            std::bit_cast<int64_t>(c.scale)};
  for (const OperandLayout* o : {&c.q, &c.k, &c.v})
    p.insert(p.end(), {o->offset, o->batch, o->head, o->row});
  p.insert(p.end(), {static_cast<int64_t>(c.mask), c.mask_at.offset, c.mask_at.batch,
                     c.mask_at.head, c.mask_at.row, c.mask_at.col});
  if (!c.out_contiguous()) p.insert(p.end(), {c.out.batch, c.out.head, c.out.row});
  return p;
}

std::string AttentionCall::key() const {
  std::string text;
  for (int64_t p : attention_params(*this)) text += std::to_string(p) + ",";
  return text;
}

AttentionCall read_attention_call(const std::vector<int64_t>& p) {
  constexpr size_t count = std::size(kAttentionParams);
  constexpr size_t with_out = count + std::size(kAttentionOutParams);
  if (p.size() != count && p.size() != with_out)
    throw std::invalid_argument("takes " + std::to_string(count) + " or " +
                                std::to_string(with_out) + " parameters, got " +
                                std::to_string(p.size()));
  AttentionCall c;
  if (p[0] != static_cast<int64_t>(kir::DType::F16) &&
      p[0] != static_cast<int64_t>(kir::DType::BF16))
    throw std::invalid_argument("dtype code " + std::to_string(p[0]) + " is not f16 or bf16");
  for (size_t i = 1; i < p.size(); ++i)
    if (i != kScaleAt && p[i] < 0) throw std::invalid_argument("negative size, stride or offset");
  c.dtype = static_cast<kir::DType>(p[0]);
  c.batch = p[1], c.heads = p[2], c.q_len = p[3], c.kv_len = p[4], c.head_dim = p[5];
  if (p[6] > 1) throw std::invalid_argument("causal is 0 or 1, got " + std::to_string(p[6]));
  c.causal = p[6] == 1;
  c.scale = std::bit_cast<double>(p[kScaleAt]);
  if (!std::isfinite(c.scale)) throw std::invalid_argument("the scale is not finite");
  size_t at = kLayoutsAt;
  for (OperandLayout* o : {&c.q, &c.k, &c.v}) {
    o->offset = p[at], o->batch = p[at + 1], o->head = p[at + 2], o->row = p[at + 3];
    at += 4;
  }
  if (p[kMaskAt] > static_cast<int64_t>(AttentionMask::Add))
    throw std::invalid_argument("unknown mask kind " + std::to_string(p[kMaskAt]));
  c.mask = static_cast<AttentionMask>(p[kMaskAt]);
  c.mask_dtype = c.mask == AttentionMask::Add ? c.dtype : kir::DType::Bool;
  c.mask_at = {p[kMaskAt + 1], p[kMaskAt + 2], p[kMaskAt + 3], p[kMaskAt + 4], p[kMaskAt + 5]};
  c.out = contiguous_output(c);
  if (p.size() == with_out) {
    c.out.batch = p[count], c.out.head = p[count + 1], c.out.row = p[count + 2];
    if (!dense_order(c.out, c.batch, c.heads, c.q_len, c.head_dim))
      throw std::invalid_argument("the output strides are not a dense order of its dims");
  }
  return c;
}

AttentionCall read_attention_call(const kiln_launch_args& args) {
  return read_attention_call(integer_params(args));
}

}  // namespace kiln::kir_support
