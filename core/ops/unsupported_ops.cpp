#include "core/ops/unsupported_ops.h"

#include <map>

namespace kiln {

Unsupported unsupported_reason(std::string_view op) {
  const std::string between_graphs =
      "; under torch.compile it runs in PyTorch between kiln graphs (a graph break)";
  const std::string symbolic =
      "a symbolic shape query: kiln graphs have static shapes, which export folds into numbers";
  static const std::map<std::string, Unsupported, std::less<>> table = {
      {"aten.nonzero.default", {true, "its output shape depends on the data" + between_graphs}},
      {"aten._local_scalar_dense.default",
       {true, "it reads a tensor's value into a host number for control flow" + between_graphs}},
      {"aten.resize_.default",
       {true, "it changes a tensor's shape in place, outside functional graphs"}},
      {"aten.sym_size.int", {true, symbolic}},
      {"aten.sym_stride.int", {true, symbolic}},
      {"aten.sym_numel.default", {true, symbolic}},
      {"aten.sym_storage_offset.default", {true, symbolic}},
      {"aten.sym_is_contiguous.default", {true, symbolic}},
  };
  auto it = table.find(op);
  return it == table.end() ? Unsupported{} : it->second;
}

}  // namespace kiln
