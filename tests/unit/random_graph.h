// Random graphs for the differential fuzzer, drawn from the op registry's schemas: each op's
// arguments are filled by kind (tensors from the values made so far, dims within the rank,
// numbers, flags), and whatever the op's shape inference refuses is drawn again. Shapes have
// 0, 1, odd and prime dims; inputs broadcast against each other and may be transposed or
// strided views; dtypes span floats (f16/bf16 included), ints and bool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/builder.h"

namespace kiln::test {

struct RandomGraphOptions {
  int max_inputs = 3;
  int max_ops = 6;
};

// Adds one random subgraph to `b`, all names starting with `prefix`; its outputs become
// graph outputs. Returns the outputs (empty when no op could be drawn). `ranges` receives the
// value range of each new input. The same seed draws the same subgraph.
struct RandomSubgraph {
  std::vector<ValueRef> outputs;
  std::vector<std::pair<std::string, std::pair<double, double>>> input_ranges;
  std::vector<std::string> ops;  // the ops drawn, for coverage reports
};
RandomSubgraph add_random_subgraph(GraphBuilder& b, uint64_t seed, const std::string& prefix,
                                   const RandomGraphOptions& options = {});

// The ops the generator draws from: the registry's pointwise, reduction and view ops whose
// arguments it knows how to fill (and whose results are exact or well conditioned).
std::vector<std::string> fuzzable_ops(const OpRegistry& registry);

}  // namespace kiln::test
