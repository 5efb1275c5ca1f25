#include "core/ops/op_registry.h"

namespace kiln {

std::vector<OpRow> scatter_ops() {
  return {};
}

}  // namespace kiln
