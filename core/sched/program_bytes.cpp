#include "core/sched/program_bytes.h"

#include <algorithm>

namespace kiln {

int64_t buffer_bytes(const LoopBuffer& buffer) {
  return buffer.elements * dtype_size(buffer.dtype);
}

int64_t buffers_bytes(const std::vector<int>& buffers, const LoopProgram& program) {
  int64_t total = 0;
  for (int b : buffers) total += buffer_bytes(program.buffers.at(static_cast<size_t>(b)));
  return total;
}

int64_t kernel_bytes(const LoopKernel& kernel, const LoopProgram& program) {
  return buffers_bytes(kernel_reads(kernel), program) +
         buffers_bytes(kernel_writes(kernel), program);
}

int64_t program_bytes(const LoopProgram& program) {
  int64_t total = 0;
  for (const LoopKernel& k : program.kernels) total += kernel_bytes(k, program);
  return total;
}

int64_t live_peak_bytes(const LoopProgram& program) {
  const size_t n = program.buffers.size();
  const int end = static_cast<int>(program.kernels.size());
  std::vector<int> first(n, -1), last(n, -1);
  for (int k = 0; k < end; ++k) {
    const LoopKernel& kernel = program.kernels[static_cast<size_t>(k)];
    for (int b : kernel_writes(kernel))
      if (first[static_cast<size_t>(b)] < 0) first[static_cast<size_t>(b)] = k;
    for (int b : kernel_reads(kernel)) last[static_cast<size_t>(b)] = k;
  }
  for (int b : program.outputs) last[static_cast<size_t>(b)] = end;
  int64_t peak = 0;
  for (int step = 0; step < end; ++step) {
    int64_t live = 0;
    for (size_t b = 0; b < n; ++b) {
      if (program.buffers[b].kind != BufferKind::Temp || first[b] < 0) continue;
      if (first[b] <= step && step <= std::max(first[b], last[b]))
        live += buffer_bytes(program.buffers[b]);
    }
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace kiln
