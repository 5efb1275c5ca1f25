#include "core/ops/op_registry.h"

namespace kiln {

std::vector<OpRow> matmul_ops() {
  return {};
}

}  // namespace kiln
