#include "core/sched/program_bytes.h"

namespace kiln {

int64_t program_bytes(const LoopProgram& program) {
  int64_t total = 0;
  auto bytes = [&](int b) {
    const LoopBuffer& lb = program.buffers.at(static_cast<size_t>(b));
    return lb.elements * dtype_size(lb.dtype);
  };
  for (const LoopKernel& k : program.kernels) {
    for (int b : kernel_reads(k)) total += bytes(b);
    for (int b : kernel_writes(k)) total += bytes(b);
  }
  return total;
}

}  // namespace kiln
