#include "core/ops/op_registry.h"

namespace kiln {

std::vector<OpRow> composite_ops() {
  return {};
}

}  // namespace kiln
