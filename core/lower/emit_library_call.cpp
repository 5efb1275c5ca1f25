#include "core/lower/emit_library_call.h"

namespace kiln {

void emit_library_call(NodeLowering& n, LoopKernel call, std::vector<int> inputs, int output) {
  call.name = n.kernel({}).finish().name;
  call.origin = n.node().name;
  // Never the node's own step: its buffers may be copies, so no host step could stand in
  // for it (a cache entry is only used with the same library calls on offer).
  call.node = -1;
  call.extern_inputs = std::move(inputs);
  call.extern_outputs = {output};
  n.emit(std::move(call));
}

}  // namespace kiln
