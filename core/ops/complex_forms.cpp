#include "core/ops/complex_forms.h"

#include <algorithm>

namespace kiln {

const std::vector<std::string>& complex_form_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names = {
        "aten._conj.default",        "aten._fft_c2c.default",
        "aten._to_copy.default",     "aten.full.default",
        "aten.full_like.default",    "aten._fft_c2r.default",
        "aten._fft_r2c.default",     "aten._neg_view.default",
        "aten.abs.default",          "aten.add.Tensor",
        "aten.alias.default",        "aten.cat.default",
        "aten.clone.default",        "aten.div.Tensor",
        "aten.expand.default",       "aten.mean.dim",
        "aten.mul.Tensor",           "aten.neg.default",
        "aten.permute.default",      "aten.reshape.default",
        "aten.select.int",           "aten.slice.Tensor",
        "aten.squeeze.dim",          "aten.squeeze.dims",
        "aten.sub.Tensor",           "aten.sum.dim_IntList",
        "aten.transpose.int",        "aten.unsqueeze.default",
        "aten.view.default",         "aten.view_as_complex.default",
        "aten.view_as_real.default",
    };
    std::sort(names.begin(), names.end());
    return names;
  }();
  return ops;
}

bool has_complex_form(std::string_view op) {
  const auto& ops = complex_form_ops();
  return std::binary_search(ops.begin(), ops.end(), op, std::less<>());
}

}  // namespace kiln
