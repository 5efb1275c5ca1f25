// The oracle's answer for a comparison: the interpreter's outputs, plus what compare needs to
// bound the rounding of sums (the same graph run on the magnitudes of its float inputs and
// parameters, and the longest reduction the graph can hold) and how far a few ulps of error per
// op can move each output (the graph run with its intermediates perturbed).
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph/graph.h"
#include "core/interp/compare.h"
#include "core/ops/random_stream.h"
#include "core/support/result.h"

namespace kiln {

struct OracleResults {
  std::vector<HostTensor> expected;   // graph.outputs in order
  std::vector<HostTensor> magnitude;  // per output, sums of |terms|; empty when unavailable
  int64_t terms = 1;                  // an upper bound on any reduction's length
  std::vector<HostTensor> perturbed;  // per output, the perturbed run's; empty when unavailable
  ReductionBound bound(size_t output) const {
    return {output < magnitude.size() ? &magnitude[output] : nullptr, terms,
            output < perturbed.size() ? &perturbed[output] : nullptr};
  }
  // `actual` against output `output`, with its dtype's tolerance and the reduction bound.
  Comparison compare(size_t output, const HostTensor& actual) const {
    const HostTensor& want = expected[output];
    return kiln::compare(actual, want, tolerance_for(want.dtype()), bound(output));
  }
};

// The error a device's math functions may have per op, in units of roundoff (2^-24 for f32):
// 8 units are 4 ulps, CUDA's documented bound for most of its single-precision functions.
inline constexpr double kOpErrorUlps = 8;

// Runs the interpreter on `inputs` (see interpret), again on |inputs| and |parameters|
// (floats only: integer inputs may be indices) for the magnitudes, and again with every float
// node output perturbed by kOpErrorUlps units of roundoff. When a bound run fails, the
// comparison goes without its term.
Result<OracleResults> run_oracle(const Graph& graph, const std::vector<HostTensor>& inputs,
                                 const RandomState& random = {});

// The longest reduction `graph` can hold: the largest dim of any value, or the largest ratio of
// a node's biggest tensor operand to its first output (a reduction over several dims).
int64_t longest_reduction(const Graph& graph);

}  // namespace kiln
