// mm and bmm lower to Extern calls. Operands pass as (offset, batch stride, row stride,
// column stride) over their buffers, so transposed weights reach the library without a
// copy; an operand whose index is not affine in its dims is copied to contiguous first.
//
// Extern parameters, in order (every plugin that implements "mm"/"bmm" reads them so):
//   dtype (kir DType code), batch, m, n, k,
//   a_offset, a_batch_stride, a_row_stride, a_col_stride,
//   b_offset, b_batch_stride, b_row_stride, b_col_stride
// The output is contiguous [batch, m, n].
#include "core/expr/simplify.h"
#include "core/lower/lower_context.h"

namespace kiln {

std::optional<std::vector<int64_t>> affine_strides(const Access& a) {
  const size_t rank = a.type.sizes.size();
  std::map<std::string, int64_t> zero;
  for (size_t i = 0; i < rank; ++i) zero["d" + std::to_string(i)] = 0;
  std::vector<int64_t> result{evaluate(a.index, zero)};
  VarRanges ranges;
  Expr rebuilt = Expr::constant(result[0]);
  for (size_t i = 0; i < rank; ++i) {
    auto unit = zero;
    unit["d" + std::to_string(i)] = 1;
    const int64_t stride = a.type.sizes[i] > 1 ? evaluate(a.index, unit) - result[0] : 0;
    result.push_back(stride);
    ranges["d" + std::to_string(i)] = {0, std::max<int64_t>(a.type.sizes[i] - 1, 0)};
    if (a.type.sizes[i] > 1) rebuilt = rebuilt + dim_var(i) * Expr::constant(stride);
  }
  if (!(simplify(rebuilt, ranges) == simplify(a.index, ranges))) return std::nullopt;
  return result;
}

namespace {}  // namespace

bool emit_matmul_call(NodeLowering& n, Access a, Access b, int out_buffer, DType dtype, int node,
                      bool tf32_allowed) {
  const bool batched = a.type.rank() == 3;
  auto sa = affine_strides(a);
  if (!sa) {
    a = n.contiguous(a);
    sa = affine_strides(a);
  }
  auto sb = affine_strides(b);
  if (!sb) {
    b = n.contiguous(b);
    sb = affine_strides(b);
  }
  if (!sa || !sb) return false;
  LoopKernel k;
  k.name = n.kernel({}).finish().name;
  k.origin = n.node().name;
  k.kind = LoopKernelKind::Extern;
  k.extern_name = batched ? "bmm" : "mm";
  k.node = node;
  k.extern_inputs = {a.buffer, b.buffer};
  k.extern_outputs = {out_buffer};
  const size_t off = batched ? 1 : 0;
  const auto& as = a.type.sizes;
  const auto& s1 = *sa;
  const auto& s2 = *sb;
  k.attrs = {{"dtype", n.library_dtype(k.extern_name, dtype, tf32_allowed)},
             {"batch", batched ? as[0] : 1},
             {"m", as[off]},
             {"n", b.type.sizes[off + 1]},
             {"k", as[off + 1]},
             {"a_offset", s1[0]},
             {"a_batch_stride", batched ? s1[1] : 0},
             {"a_row_stride", s1[off + 1]},
             {"a_col_stride", s1[off + 2]},
             {"b_offset", s2[0]},
             {"b_batch_stride", batched ? s2[1] : 0},
             {"b_row_stride", s2[off + 1]},
             {"b_col_stride", s2[off + 2]}};
  n.emit(std::move(k));
  return true;
}

namespace {

LowerFn matmul() {
  return [](NodeLowering& n) {
    // Copies (for operands that are not affine) come before the output is realized. An
    // operand read in place must be its value's own storage: where the plugin lacks the
    // call, the host runs the node on the call's buffers as the node's tensors.
    Access a = n.operand(0), b = n.operand(1);
    if (!affine_strides(a) || !n.operand_in_own_storage(0)) a = n.contiguous(a);
    if (!affine_strides(b) || !n.operand_in_own_storage(1)) b = n.contiguous(b);
    return emit_matmul_call(n, a, b, n.realize_output(0).buffer, n.out_type(0).dtype,
                            n.node_index(), n.options().matmul_tf32);
  };
}

}  // namespace

std::map<std::string, LowerFn> matmul_lowerings() {
  return {{"aten.mm.default", matmul()}, {"aten.bmm.default", matmul()}};
}

}  // namespace kiln
