#include "core/lower/kernel_builder.h"

#include <stdexcept>

#include "core/expr/simplify.h"

namespace kiln {

KernelBuilder::KernelBuilder(std::string name, std::string origin, Shape ranges,
                             Shape reduction_ranges) {
  kernel_.name = std::move(name);
  kernel_.origin = std::move(origin);
  kernel_.ranges = std::move(ranges);
  kernel_.reduction_ranges = std::move(reduction_ranges);
  kernel_.kind =
      kernel_.reduction_ranges.empty() ? LoopKernelKind::Pointwise : LoopKernelKind::Reduction;
}

std::vector<Expr> KernelBuilder::pointwise_vars() const {
  std::vector<Expr> vars;
  for (size_t i = 0; i < kernel_.ranges.size(); ++i) vars.push_back(x(i));
  return vars;
}

Expr KernelBuilder::simplify_index(const Expr& e) const {
  return simplify(e, loop_var_ranges(kernel_));
}

int KernelBuilder::add(LoopOp op) {
  op.id = static_cast<int>(dtypes_.size());
  dtypes_.push_back(op.dtype);
  kernel_.body.push_back(std::move(op));
  return kernel_.body.back().id;
}

DType KernelBuilder::dtype(int value) const {
  return dtypes_.at(static_cast<size_t>(value));
}

int KernelBuilder::load(int buffer, DType dtype, const Expr& index, int mask, double other) {
  LoopOp op = make_loop_op(LoopOpKind::Load, dtype);
  op.buffer = buffer;
  op.index = simplify_index(index);
  op.mask = mask;
  op.other = other;
  return add(std::move(op));
}

void KernelBuilder::store(int buffer, const Expr& index, int value, int mask) {
  LoopOp op = make_loop_op(LoopOpKind::Store, dtype(value), {value});
  op.buffer = buffer;
  op.index = simplify_index(index);
  op.mask = mask;
  kernel_.body.push_back(std::move(op));
}

void KernelBuilder::scatter(const std::string& combine, int buffer, const Expr& index, int value,
                            int mask) {
  LoopOp op = make_loop_op(LoopOpKind::Scatter, dtype(value), {value}, combine);
  op.buffer = buffer;
  op.index = simplify_index(index);
  op.mask = mask;
  kernel_.body.push_back(std::move(op));
}

int KernelBuilder::constant(DType dtype, double value) {
  LoopOp op = make_loop_op(LoopOpKind::Const, dtype);
  op.value = value;
  return add(std::move(op));
}

int KernelBuilder::index(const Expr& value) {
  LoopOp op = make_loop_op(LoopOpKind::Index, DType::I64);
  op.index = simplify_index(value);
  return add(std::move(op));
}

int KernelBuilder::cast(int value, DType to) {
  if (dtype(value) == to) return value;
  return add(make_loop_op(LoopOpKind::Cast, to, {value}));
}

int KernelBuilder::where(int cond, int a, int b) {
  if (dtype(cond) != DType::Bool) cond = cast(cond, DType::Bool);
  return add(make_loop_op(LoopOpKind::Where, dtype(a), {cond, a, b}));
}

int KernelBuilder::math(const std::string& fn, DType dtype, std::vector<int> args) {
  return add(make_loop_op(LoopOpKind::Math, dtype, std::move(args), fn));
}

int KernelBuilder::reduce(const std::string& kind, DType dtype, int value) {
  kernel_.kind = LoopKernelKind::Reduction;
  return add(make_loop_op(LoopOpKind::Reduce, dtype, {value}, kind));
}

int KernelBuilder::scan(const std::string& kind, DType dtype, int value) {
  kernel_.kind = LoopKernelKind::Reduction;
  return add(make_loop_op(LoopOpKind::Scan, dtype, {value}, kind));
}

int KernelBuilder::extract(int welford, int component) {
  LoopOp op = make_loop_op(LoopOpKind::Extract, dtype(welford), {welford});
  op.number = component;
  return add(std::move(op));
}

int KernelBuilder::check_index(int value, int64_t size) {
  LoopOp op = make_loop_op(LoopOpKind::CheckIndex, DType::I64, {cast(value, DType::I64)});
  op.number = size;
  return add(std::move(op));
}

LoopKernel KernelBuilder::finish() && {
  return std::move(kernel_);
}

}  // namespace kiln
