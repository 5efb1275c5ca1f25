// Emits a library call kernel (an Extern a plugin serves) for the node being lowered.
#pragma once

#include <vector>

#include "core/lower/lower_context.h"

namespace kiln {

// `call` emitted for the node, reading buffers `inputs` and writing `output`.
void emit_library_call(NodeLowering& n, LoopKernel call, std::vector<int> inputs, int output);

}  // namespace kiln
