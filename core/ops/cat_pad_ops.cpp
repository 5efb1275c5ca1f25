#include "core/ops/op_registry.h"

namespace kiln {

std::vector<OpRow> cat_pad_ops() {
  return {};
}

}  // namespace kiln
