#include "core/lower/attention_library_call.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/lower/emit_library_call.h"
#include "core/lower/matmul_kernel.h"
#include "core/ops/op_registry.h"

namespace kiln {
namespace {

constexpr const char* kCall = "attention";
constexpr int64_t kMaxHeadDim = 128;   // the ptx kernel keeps a row block's output in registers
constexpr int64_t kAlignElements = 8;  // 16 bytes of f16/bf16: the kernel loads rows so

// Whether the call takes these operands (the plugin's offer aside).
// The dtype, rank and head dims the call takes.
bool types_apply(const TensorType& q, const TensorType& v) {
  if (q.dtype != DType::F16 && q.dtype != DType::BF16) return false;
  if (q.rank() < 2 || q.rank() > 4) return false;
  const int64_t e = q.sizes.back();
  return e % 16 == 0 && e <= kMaxHeadDim && v.sizes.back() == e && v.dtype == q.dtype;
}

bool shape_applies(const ArgView& a, const TensorType& q, const TensorType& k,
                   const TensorType& v) {
  if (!types_apply(q, v)) return false;
  if (a.get_float(4) != 0.0 || a.get_bool(7)) return false;  // dropout, grouped heads
  return k.dtype == q.dtype;
}

// Where element (b, h, row, col) of a rank-2..4 operand is, from its [offset, strides...]
// over the score-shaped dims (batch and head 0 where the rank has none).
struct Layout {
  int64_t offset = 0, batch = 0, head = 0, row = 0, col = 0;
};

Layout as_layout(const std::vector<int64_t>& s) {
  const size_t rank = s.size() - 1;
  Layout l;
  l.offset = s[0];
  l.row = s[rank - 1];
  l.col = s[rank];
  if (rank >= 3) l.batch = s[1];
  if (rank == 4) l.head = s[2];
  return l;
}

// [offset, strides...] of `a`, a size-1 dim's stride 0.
std::optional<std::vector<int64_t>> strides_of(const Access& a) {
  auto s = affine_strides(a);
  if (!s) return std::nullopt;
  for (size_t i = 0; i < a.type.sizes.size(); ++i)
    if (a.type.sizes[i] == 1) (*s)[i + 1] = 0;
  return s;
}

// q, k or v as the call reads it: in place when the head dim is contiguous and the rest
// 16-byte aligned (and no stride negative: a flipped view), else a contiguous copy.
std::pair<Access, Layout> operand(NodeLowering& n, int arg) {
  const Access& a = n.operand(arg);
  if (auto s = strides_of(a)) {
    const Layout l = as_layout(*s);
    const auto aligned = [](int64_t v) { return v >= 0 && v % kAlignElements == 0; };
    if (l.col == 1 && aligned(l.offset) && aligned(l.batch) && aligned(l.head) && aligned(l.row))
      return {a, l};
  }
  const Access c = n.contiguous(a);
  return {c, as_layout(*strides_of(c))};
}

// The mask as the call reads it, broadcast to the scores' dims (stride 0 where it has none).
std::pair<Access, Layout> mask_operand(NodeLowering& n, size_t score_rank) {
  Access a = n.operand(3);
  auto s = strides_of(a);
  // A flipped view's negative strides: the call takes none.
  if (!s || std::any_of(s->begin(), s->end(), [](int64_t v) { return v < 0; })) {
    a = n.contiguous(a);
    s = strides_of(a);
  }
  std::vector<int64_t> score(score_rank + 1, 0);
  score[0] = (*s)[0];
  const size_t lead = score_rank - a.type.sizes.size();
  for (size_t d = 0; d < a.type.sizes.size(); ++d) score[lead + d + 1] = (*s)[d + 1];
  return {a, as_layout(score)};
}

// Whether every reader of the [batch, heads, len, dim] output swaps its heads and rows
// (permute [0, 2, 1, 3], as a transpose(1, 2) decomposes) and no caller sees it: the heads
// then go to one row per position, which a projection after them reads in place.
bool read_with_heads_inside(const NodeLowering& n) {
  const std::vector<const Node*> readers = n.readers(0);
  if (readers.empty() || n.graph_output(0)) return false;
  return std::all_of(readers.begin(), readers.end(), [](const Node* r) {
    if (r->op->name != "aten.permute.default") return false;
    IntList dims = ArgView(r->op->schema, r->args).get_ints(1);
    for (int64_t& d : dims)
      if (d < 0) d += 4;
    return dims == IntList{0, 2, 1, 3};
  });
}

bool lower_attention(NodeLowering& n) {
  const ArgView& a = n.args();
  const TensorType &q = n.in_type(0), &k = n.in_type(1), &v = n.in_type(2);
  if (!shape_applies(a, q, k, v) || !n.offers_extern(kCall, q.dtype)) return false;
  const size_t rank = q.sizes.size();
  const int64_t e = q.sizes.back(), len = q.sizes[rank - 2], kv_len = k.sizes[rank - 2];
  const int64_t batch = rank >= 3 ? q.sizes[0] : 1, heads = rank == 4 ? q.sizes[1] : 1;
  const double scale = a.opt_float(6).value_or(1.0 / std::sqrt(static_cast<double>(e)));
  const auto [qa, ql] = operand(n, 0);
  const auto [ka, kl] = operand(n, 1);
  const auto [va, vl] = operand(n, 2);
  std::vector<int> inputs = {qa.buffer, ka.buffer, va.buffer};
  int64_t mask_kind = 0;
  Layout ml;
  if (!a.is_none(3)) {
    const auto [ma, layout] = mask_operand(n, rank);
    inputs.push_back(ma.buffer);
    ml = layout;
    mask_kind = ma.type.dtype == DType::Bool ? 1 : 2;
  }
  LoopKernel call;
  call.kind = LoopKernelKind::Extern;
  call.extern_name = kCall;
  call.attrs = {{"dtype", static_cast<int64_t>(q.dtype)},
                {"batch", batch},
                {"heads", heads},
                {"q_len", len},
                {"kv_len", kv_len},
                {"head_dim", e},
                {"causal", a.get_bool(5) ? 1 : 0},
                {"scale_bits", std::bit_cast<int64_t>(scale)}};
  const std::pair<const char*, Layout> operands[] = {{"q", ql}, {"k", kl}, {"v", vl}};
  for (const auto& [name, l] : operands) {
    const std::string p = name;
    call.attrs.insert(call.attrs.end(), {{p + "_offset", l.offset},
                                         {p + "_stride_b", l.batch},
                                         {p + "_stride_h", l.head},
                                         {p + "_stride_l", l.row}});
  }
  call.attrs.insert(call.attrs.end(), {{"mask", mask_kind},
                                       {"mask_offset", ml.offset},
                                       {"mask_stride_b", ml.batch},
                                       {"mask_stride_h", ml.head},
                                       {"mask_stride_l", ml.row},
                                       {"mask_stride_s", ml.col}});
  // The output in [batch, len, heads, dim] order where its readers want it so (the plugin
  // takes the output's strides): their transpose is then a view of contiguous rows.
  if (rank == 4 && n.offers_extern_feature(kCall, "out_strides") && read_with_heads_inside(n)) {
    call.attrs.insert(
        call.attrs.end(),
        {{"out_stride_b", len * heads * e}, {"out_stride_h", e}, {"out_stride_l", heads * e}});
    emit_library_call(n, std::move(call), std::move(inputs),
                      n.realize_output_in_order(0, {0, 2, 1, 3}).buffer);
    return true;
  }
  emit_library_call(n, std::move(call), std::move(inputs), n.realize_output(0).buffer);
  return true;
}

}  // namespace

bool attention_call_applies(const Graph& graph, const Node& node,
                            const std::vector<std::string>& externs) {
  if (node.op->name != kAttentionOp) return false;
  const ArgView a(node.op->schema, node.args);
  const TensorType& q = graph.type(a.ref(0));
  return shape_applies(a, q, graph.type(a.ref(1)), graph.type(a.ref(2))) &&
         extern_available(externs, kCall, q.dtype);
}

bool attention_call_takes(const TensorType& q, const TensorType& v,
                          const std::vector<std::string>& externs) {
  return types_apply(q, v) && extern_available(externs, kCall, q.dtype);
}

std::map<std::string, LowerFn> attention_lowerings() {
  return {{kAttentionOp, lower_attention}};
}

}  // namespace kiln
