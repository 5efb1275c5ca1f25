#include "core/ops/op_registry.h"

namespace kiln {

std::vector<OpRow> conv_pool_ops() {
  return {};
}

}  // namespace kiln
