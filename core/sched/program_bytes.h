// Bytes a program moves: each kernel reads every buffer it loads from and writes every buffer
// it stores to, once (what a kernel that reaches the bandwidth floor would move). Used to
// report what fusion saved and to score fusion candidates.
#pragma once

#include <cstdint>

#include "core/lower/loop_ir.h"

namespace kiln {

int64_t buffer_bytes(const LoopBuffer& buffer);
// The bytes of `buffers` (program buffer ids) together.
int64_t buffers_bytes(const std::vector<int>& buffers, const LoopProgram& program);
int64_t kernel_bytes(const LoopKernel& kernel, const LoopProgram& program);
int64_t program_bytes(const LoopProgram& program);

// The most bytes of temporaries live at once when kernels run in order: a temporary lives
// from the kernel that first writes it to the last that reads it (outputs to the end).
int64_t live_peak_bytes(const LoopProgram& program);
// The buffers one kernel reads and writes (kernel_reads, kernel_writes), listed elsewhere.
struct KernelBuffers {
  const std::vector<int>* reads = nullptr;
  const std::vector<int>* writes = nullptr;
};

// The buffers each kernel of a program reads and writes, and the kernels reading each buffer
// (ascending), listed once (fusion asks for them many times per round).
struct ProgramAccess {
  std::vector<std::vector<int>> reads, writes;
  std::vector<std::vector<size_t>> readers;  // by buffer id
  explicit ProgramAccess(const LoopProgram& program);
  KernelBuffers of(size_t kernel) const { return {&reads[kernel], &writes[kernel]}; }
};
// The same for kernels touching `order`'s buffers in this order over `program`'s buffers
// and outputs (a program with some kernels replaced, weighed without copying it).
int64_t live_peak_bytes(const LoopProgram& program, const std::vector<KernelBuffers>& order);

}  // namespace kiln
