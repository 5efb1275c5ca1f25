// Complex lowering: every complex64 value becomes f32 with a trailing dim of 2 (real, imaginary:
// torch.view_as_real's layout, the same bytes), and every node that touches one becomes real
// ops on those pairs: FFTs the kiln.rfft/cfft/irfft transforms (one dim at a time, then the
// normalisation), products and quotients their formulas, abs the pair's length, views and
// reductions the same op with dims counted in the complex rank. A complex graph input, parameter
// or output keeps its name and takes the real form's type. It runs when a graph is loaded, so
// the interpreter, the scheduler and the plugins never meet a complex value.
#pragma once

#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/support/result.h"

namespace kiln {

bool has_complex_values(const Graph& graph);

// `graph` itself when it holds no complex value.
Result<Graph> lower_complex(const Graph& graph);

// The ops it rewrites, in name order (complex_form_ops() must name the same).
std::vector<std::string> complex_lowering_rules();

}  // namespace kiln
