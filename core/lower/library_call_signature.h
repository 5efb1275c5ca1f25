// A library call's shape: its extern name and every parameter but where its operands start
// ("conv2d dtype=f32 n=8 c=64 ..."). The autotuner's choice between a library and the
// kernels the core generates instead is made, cached and passed back per signature.
#pragma once

#include <string>

#include "core/lower/loop_ir.h"

namespace kiln {

std::string library_call_signature(const LoopKernel& call);

}  // namespace kiln
