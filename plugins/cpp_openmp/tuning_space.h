// The cpp_openmp plugin's tuning knobs: a config line ("threads=2 vector_width=8 tile=32x64
// groups=1 column_block=8") sets the code generator's options for one compile, and the
// tuning space of a kernel lists the lines worth timing, the heuristic default first.
#pragma once

#include <string>

#include "kiln/kir.hpp"
#include "plugins/cpp_openmp/codegen.h"

namespace kiln::cpu {

// `base` with the config's pairs applied; "" leaves it as it is. Throws std::invalid_argument
// naming the pair for an unknown key or a value out of range (threads 1..`max_threads`,
// vector_width 1/4/8/16, tiles of positive sides, column_block 1..64).
CodegenOptions apply_tuning(const std::string& config, CodegenOptions base, int max_threads);

// The full config line of `options`.
std::string tuning_line(const CodegenOptions& options);

// The configs for `k`: the line of `base` first, then combinations of the knobs that change
// this kernel's code, pruned by what they can gain (one thread only for kernels small enough
// that waking a team costs more than it saves, vector widths the CPU runs natively
// (`native_f32_lanes`), tiles only for transposed reads, column blocks only for reductions
// in column form), fewest changed knobs first, at most `limit` lines. A line that may change
// the rounding of the results (another lane count, another split of a row across threads,
// a reduction's groups) ends in `exact=0`.
std::string tuning_space_text(const kir::Kernel& k, const CodegenOptions& base,
                              int native_f32_lanes, size_t limit = 24);

}  // namespace kiln::cpu
