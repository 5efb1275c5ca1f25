#include "core/lower/matmul_kernel.h"

#include <algorithm>
#include <kiln/kir.hpp>

#include "core/expr/simplify.h"
#include "core/lower/lower_context.h"

namespace kiln {
namespace {

LoopOp op_with_id(LoopOp op, int id) {
  op.id = id;
  return op;
}

LoopKernel matmul_kernel(const LoopKernel& call) {
  auto p = [&](const std::string& key) { return extern_attr(call, key); };
  const auto dtype = static_cast<DType>(p("dtype"));  // never kExternTf32 (see below)
  const DType acc = compute_dtype(dtype);
  LoopKernel k;
  k.name = call.name;
  k.origin = call.origin;
  k.kind = LoopKernelKind::Reduction;
  k.ranges = {p("batch"), p("m"), p("n")};
  k.reduction_ranges = {p("k")};
  const Expr b = Expr::var("x0"), i = Expr::var("x1"), j = Expr::var("x2"), r = Expr::var("r0");
  auto c = [](int64_t v) { return Expr::constant(v); };
  LoopOp a_load = make_loop_op(LoopOpKind::Load, dtype);
  a_load.buffer = call.extern_inputs.at(0);
  a_load.index = c(p("a_offset")) + b * c(p("a_batch_stride")) + i * c(p("a_row_stride")) +
                 r * c(p("a_col_stride"));
  LoopOp b_load = make_loop_op(LoopOpKind::Load, dtype);
  b_load.buffer = call.extern_inputs.at(1);
  b_load.index = c(p("b_offset")) + b * c(p("b_batch_stride")) + r * c(p("b_row_stride")) +
                 j * c(p("b_col_stride"));
  k.body.push_back(op_with_id(a_load, 0));
  k.body.push_back(op_with_id(b_load, 1));
  int next = 2, lhs = 0, rhs = 1;
  if (acc != dtype) {
    k.body.push_back(op_with_id(make_loop_op(LoopOpKind::Cast, acc, {0}), next));
    lhs = next++;
    k.body.push_back(op_with_id(make_loop_op(LoopOpKind::Cast, acc, {1}), next));
    rhs = next++;
  }
  k.body.push_back(op_with_id(make_loop_op(LoopOpKind::Math, acc, {lhs, rhs}, "mul"), next));
  const int product = next++;
  k.body.push_back(op_with_id(make_loop_op(LoopOpKind::Reduce, acc, {product}, "sum"), next));
  int value = next++;
  if (acc != dtype) {
    k.body.push_back(op_with_id(make_loop_op(LoopOpKind::Cast, dtype, {value}), next));
    value = next++;
  }
  LoopOp store = make_loop_op(LoopOpKind::Store, dtype, {value});
  store.buffer = call.extern_outputs.at(0);
  store.index = b * c(p("m") * p("n")) + i * c(p("n")) + j;
  k.body.push_back(store);
  const VarRanges ranges = loop_var_ranges(k);
  for (LoopOp& op : k.body)
    if (op.kind == LoopOpKind::Load || op.kind == LoopOpKind::Store)
      op.index = simplify(op.index, ranges);
  return k;
}

}  // namespace

bool library_layout(const LoopKernel& call) {
  auto p = [&](const std::string& key) { return extern_attr(call, key); };
  // Operand (rows x cols, strides row and col) as a BLAS matrix: one unit stride, and the
  // other at least the extent along the unit one (no overlapping rows or columns).
  auto fits = [](int64_t rows, int64_t cols, int64_t row, int64_t col) {
    if ((col == 1 || cols == 1) && (rows == 1 || row >= std::max<int64_t>(cols, 1))) return true;
    return (row == 1 || rows == 1) && (cols == 1 || col >= std::max<int64_t>(rows, 1));
  };
  return fits(p("m"), p("k"), p("a_row_stride"), p("a_col_stride")) &&
         fits(p("k"), p("n"), p("b_row_stride"), p("b_col_stride"));
}

int generate_missing_matmuls(LoopProgram& program, const std::vector<std::string>& available) {
  int replaced = 0;
  for (LoopKernel& k : program.kernels) {
    if (k.kind != LoopKernelKind::Extern || (k.extern_name != "mm" && k.extern_name != "bmm"))
      continue;
    // TF32 products are a permission: without them (a library that does not list tf32, or the
    // generated kernel) the product is f32's.
    auto f32 = [&k] {
      for (auto& [key, value] : k.attrs)
        if (key == "dtype" && value == kir::kExternTf32) value = static_cast<int64_t>(DType::F32);
    };
    if (!extern_available(available, k)) f32();
    if (extern_available(available, k) && library_layout(k)) continue;
    f32();
    k = matmul_kernel(k);
    ++replaced;
  }
  return replaced;
}

}  // namespace kiln
