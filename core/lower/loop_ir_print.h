// A readable text form of a LoopProgram: its buffers, then each kernel with its loop ranges
// and SSA body. Used by `kiln compile --emit loopir`, the debug dump and golden tests.
#pragma once

#include <string>

#include "core/lower/loop_ir.h"

namespace kiln {

std::string print_loop_program(const LoopProgram& program);

}  // namespace kiln
