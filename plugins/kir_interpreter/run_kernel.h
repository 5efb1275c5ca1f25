// Runs a prepared kernel on host memory: a pointwise kernel element by element, a reduction
// kernel row by row, each row walked once per level. Single-threaded and in order, so scatters
// need no atomics and every run gives the same bits.
#pragma once

#include <cstddef>
#include <vector>

#include "program.h"

namespace kiln::interp {

// `buffers` holds each kernel buffer's first byte, in the kernel's order, each checked by the
// caller to hold the buffer's elements. Returns the first kernel error met (an index out of
// range...), or code None. Throws std::out_of_range when an address falls outside its buffer,
// which a well-formed kernel never computes (check_index guards every data-dependent index).
KernelFault run_kernel(const Program& program, const std::vector<std::byte*>& buffers);

}  // namespace kiln::interp
