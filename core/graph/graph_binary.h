// A graph in the binary form of the core's own cache entries (compiled graphs): exact
// (doubles as bits, every argument as given), and read back with every reference checked,
// then verified like any graph. Parameter data is not part of it.
#pragma once

#include <memory>

#include "core/graph/graph.h"
#include "core/support/byte_stream.h"

namespace kiln {

void write_graph(ByteWriter& out, const Graph& graph);

// A dtype as one byte; an unknown byte fails the reader.
void write_dtype(ByteWriter& out, DType dtype);
DType read_dtype(ByteReader& in);

// Ops are looked up in `registry`; an unknown op, a reference out of range or a failing
// verify_graph is an error (the entry came from another build, or is damaged).
Result<Graph> read_graph(ByteReader& in, std::shared_ptr<const OpRegistry> registry);

}  // namespace kiln
