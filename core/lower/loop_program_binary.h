// A LoopProgram in the binary form of the core's compiled-graph cache entries: index
// expressions, SSA bodies, buffers and outputs, exact. Read back with every buffer, node
// and SSA reference checked, so a damaged entry is an error, never an index out of range.
#pragma once

#include "core/lower/loop_ir.h"
#include "core/support/byte_stream.h"
#include "core/support/result.h"

namespace kiln {

void write_loop_program(ByteWriter& out, const LoopProgram& program);

// Checked against `graph`, the decomposed graph the program was lowered from: the values
// its input and parameter buffers hold, the nodes its host kernels run, one buffer per output.
Result<LoopProgram> read_loop_program(ByteReader& in, const Graph& graph);

}  // namespace kiln
