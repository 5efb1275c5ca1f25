// Bytes a program moves: each kernel reads every buffer it loads from and writes every buffer
// it stores to, once (what a kernel that reaches the bandwidth floor would move). Used to
// report what fusion saved.
#pragma once

#include <cstdint>

#include "core/lower/loop_ir.h"

namespace kiln {

int64_t program_bytes(const LoopProgram& program);

}  // namespace kiln
