#include "core/ops/op_registry.h"

namespace kiln {

std::vector<OpRow> indexing_ops() {
  return {};
}

}  // namespace kiln
