// A KIR kernel as an LLVM function for a GpuTarget. Parameters: one pointer per KIR buffer
// (in order, in the target's global space), then a pointer to an i32 status word that a
// failed index check or an integer division by zero sets (first error wins).
//
// Pointwise kernels walk the flattened elements in a grid-stride loop, one element per
// thread per step (runs of 4 when rows allow, for 16-byte accesses). Reduction kernels give
// each row to a warp (rows up to TuningConfig::warp_row_limit) or to a block, grid-stride over
// rows: the row's threads stride over it once per pass of its RowPlan, combine through warp
// shuffles (and shared memory, for a block), and every thread gets each reduction's value;
// per-row values are computed by every thread, row-level stores by the row's first thread.
#pragma once

#include <llvm/IR/Module.h>

#include "kiln/kir.hpp"
#include "plugins/gpu/gpu_target.h"
#include "plugins/gpu/launch_shape.h"

namespace kiln::gpu {

// Throws std::runtime_error naming the reason when the kernel cannot be generated.
llvm::Function* emit_kernel(llvm::Module& m, const GpuTarget& target, const kir::Kernel& k,
                            const TuningConfig& config);

}  // namespace kiln::gpu
