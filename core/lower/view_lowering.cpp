// Views never copy: output element (d0, ..) of a view is input element
// offset + sum(d_j * stride_j) of the input read as contiguous, whose dims are recovered by
// floordiv/mod and substituted into the input's own index. The simplifier folds the
// common cases (permute, slice, expand, reshape of contiguous data) to plain strides.
#include "core/lower/lower_context.h"
#include "core/ops/op_def.h"

namespace kiln {

bool lower_view(NodeLowering& n) {
  const Access& in = n.operand(0);
  const std::vector<ViewSpec> specs = n.node().op->view(n.args(), in.type.sizes);
  const Shape in_strides = contiguous_strides(in.type.sizes);
  for (size_t k = 0; k < specs.size(); ++k) {
    const ViewSpec& spec = specs[k];
    Expr linear = Expr::constant(spec.offset);
    for (size_t j = 0; j < spec.sizes.size(); ++j) {
      if (spec.sizes[j] != 1) linear = linear + dim_var(j) * Expr::constant(spec.strides[j]);
    }
    std::map<std::string, Expr> in_dims;
    for (size_t i = 0; i < in.type.sizes.size(); ++i) {
      Expr d = floordiv(linear, Expr::constant(in_strides[i]));
      if (i > 0) d = mod(d, Expr::constant(std::max<int64_t>(in.type.sizes[i], 1)));
      in_dims["d" + std::to_string(i)] = in.type.sizes[i] == 1 ? Expr::constant(0) : d;
    }
    n.define_view(k, in.buffer, substitute(in.index, in_dims));
  }
  return true;
}

}  // namespace kiln
