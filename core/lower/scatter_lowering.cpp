// scatter.src/.value: into a constant (below), elementwise; into anything else, scatter_combine.
// scatter upon a constant: `scatter(full(c), dim, index, v)` with one index per row along
// `dim` is `where(index == iota(dim), v, c)`, elementwise, so it fuses with its readers and a
// one-hot matrix (cross-entropy written with scatter) is never stored. The indices are checked
// by a small kernel of their own, which keeps the elementwise kernel free of checks (a kernel
// that checks indices is never inlined: a partial reader would skip checks).
#include "core/lower/lower_context.h"
#include "core/lower/scatter_combine.h"
#include "core/ops/op_def.h"

namespace kiln {
namespace {

// The constant a full/full_like/fill node writes, when the node is one.
std::optional<double> constant_fill(const Node* node, DType dtype) {
  if (!node) return std::nullopt;
  const std::string& op = node->op->name;
  if (op != "aten.full.default" && op != "aten.full_like.default" && op != "aten.fill.Scalar")
    return std::nullopt;
  const ArgValue& value = node->args.at(1);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? 1.0 : 0.0;
  if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
  const auto* d = std::get_if<double>(&value);
  if (!d) return std::nullopt;
  // An integer tensor filled from a fractional number converts it; leave that to the oracle.
  if (!is_floating(dtype) && static_cast<double>(static_cast<int64_t>(*d)) != *d)
    return std::nullopt;
  return *d;
}

LowerFn scatter_on_constant(bool from_tensor) {
  return [from_tensor](NodeLowering& n) {
    const TensorType& out = n.out_type(0);
    const Access& index = n.operand(2);
    const auto fill = constant_fill(n.producer(0), out.dtype);
    auto dim_r = normalize_dim(n.args().get_int(1), out.rank());
    if (!fill || !dim_r || out.rank() == 0 || index.type.rank() != out.rank())
      return lower_scatter_into(n, from_tensor);
    const auto dim = static_cast<size_t>(*dim_r);
    for (size_t d = 0; d < out.sizes.size(); ++d)
      if (index.type.sizes[d] != (d == dim ? 1 : out.sizes[d]))
        return lower_scatter_into(n, from_tensor);
    double value = 0;
    if (from_tensor) {
      const TensorType& src = n.in_type(3);
      if (src.rank() != out.rank()) return lower_scatter_into(n, from_tensor);
      for (size_t d = 0; d < out.sizes.size(); ++d)
        if (src.sizes[d] < index.type.sizes[d]) return lower_scatter_into(n, from_tensor);
    } else {
      value = n.args().get_float(3);
      if (!is_floating(out.dtype) && static_cast<double>(static_cast<int64_t>(value)) != value)
        return lower_scatter_into(n, from_tensor);
    }
    // Every index checked once, into a buffer of checked indices.
    const int checked = n.temp_buffer("checked_index", DType::I64, index.type.numel());
    {
      KernelBuilder kb = n.kernel(index.type.sizes);
      const int i = kb.check_index(kb.cast(n.load(kb, index, kb.pointwise_vars()), DType::I64),
                                   out.sizes[dim]);
      kb.store(checked, contiguous_index(index.type.sizes, kb.pointwise_vars()), i);
      n.emit(std::move(kb).finish());
    }
    KernelBuilder kb = n.kernel(out.sizes);
    std::vector<Expr> at = kb.pointwise_vars();
    const Expr position = at[dim];
    at[dim] = Expr::constant(0);
    const int i =
        kb.load(checked, DType::I64, kb.simplify_index(contiguous_index(index.type.sizes, at)));
    const int hit = kb.math("eq", DType::Bool, {i, kb.index(position)});
    const int v = from_tensor ? kb.cast(n.load(kb, n.operand(3), at), out.dtype)
                              : kb.constant(out.dtype, value);
    const int result = kb.where(hit, v, kb.constant(out.dtype, *fill));
    const Access o = n.realize_output(0);
    kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()), result);
    n.emit(std::move(kb).finish());
    return true;
  };
}

}  // namespace

std::map<std::string, LowerFn> scatter_lowerings() {
  std::map<std::string, LowerFn> t;
  t["aten.scatter.src"] = scatter_on_constant(true);
  t["aten.scatter.value"] = scatter_on_constant(false);
  return t;
}

}  // namespace kiln
