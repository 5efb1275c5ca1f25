#include "core/ops/op_registry.h"

namespace kiln {

std::vector<OpRow> norm_ops() {
  return {};
}

}  // namespace kiln
