// Reduction dims that walk memory as one dim become one: a mean over (H, W) of an NCHW
// tensor reads each row of H*W elements contiguously, but as [H, W] its inner loop is W
// long (28 on ResNet shapes), shorter than two 16-lane vectors, and most of it ran as a
// scalar tail.
#pragma once

#include "core/lower/loop_ir.h"

namespace kiln {

// Merges adjacent reduction dims r_i, r_{i+1} of every reduction kernel of `program` while
// each index of its body is affine in both with r_i's factor R_{i+1} times r_{i+1}'s (a
// row-major walk of the two is one walk of their product, so positions, scans and
// argmax/argmin order keep their meaning). Returns how many dims were merged away.
int merge_reduction_dims(LoopProgram& program);

}  // namespace kiln
