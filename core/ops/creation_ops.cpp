#include "core/ops/op_registry.h"

namespace kiln {

std::vector<OpRow> creation_ops() {
  return {};
}

}  // namespace kiln
