// Two kernels made one: the second kernel's body after the first's, in one loop nest; a
// value the first stores and the second loads at the same element is passed directly.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "core/lower/loop_ir.h"
#include "core/sched/fusion_failure.h"

namespace kiln {

struct MergeOptions {
  // An epilogue spread over a reduction's elements runs in the reduction's row loop: with
  // fewer rows than this the rows cannot keep a many-core CPU or a GPU busy, and two
  // kernels (each parallel over all elements) are faster than one.
  int64_t min_rows = 32;
  // Kernels whose bodies together hold more ops stay apart (ScheduleOptions::max_kernel_ops).
  int64_t max_ops = 256;
};

struct MergeOutcome {
  std::optional<LoopKernel> kernel;
  FusionCategory why = FusionCategory::Unknown;
  std::string detail;
};

// `first` runs before `second` in the program. Stores of `first` into `dropped` buffers are
// left out (no one else reads them). Fails, with a category, when the loops do not line up.
MergeOutcome merge_kernels(const LoopKernel& first, const LoopKernel& second,
                           const std::set<int>& dropped, const MergeOptions& options = {});

}  // namespace kiln
