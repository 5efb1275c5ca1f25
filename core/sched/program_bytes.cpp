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

ProgramAccess::ProgramAccess(const LoopProgram& program) : readers(program.buffers.size()) {
  for (const LoopKernel& k : program.kernels) {
    reads.push_back(kernel_reads(k));
    writes.push_back(kernel_writes(k));
    for (int b : reads.back()) {
      auto& list = readers.at(static_cast<size_t>(b));
      if (list.empty() || list.back() != reads.size() - 1) list.push_back(reads.size() - 1);
    }
  }
}

int64_t live_peak_bytes(const LoopProgram& program) {
  const ProgramAccess access(program);
  std::vector<KernelBuffers> order;
  for (size_t k = 0; k < program.kernels.size(); ++k) order.push_back(access.of(k));
  return live_peak_bytes(program, order);
}

int64_t live_peak_bytes(const LoopProgram& program, const std::vector<KernelBuffers>& order) {
  const size_t n = program.buffers.size();
  const int end = static_cast<int>(order.size());
  std::vector<int> first(n, -1), last(n, -1);
  for (int k = 0; k < end; ++k) {
    const KernelBuffers& kernel = order[static_cast<size_t>(k)];
    for (int b : *kernel.writes)
      if (first[static_cast<size_t>(b)] < 0) first[static_cast<size_t>(b)] = k;
    for (int b : *kernel.reads) last[static_cast<size_t>(b)] = k;
  }
  for (int b : program.outputs) last[static_cast<size_t>(b)] = end;
  // Each temporary adds its bytes over the steps [first, last] (outputs to the final step);
  // the peak is the largest running sum.
  std::vector<int64_t> change(static_cast<size_t>(end) + 1, 0);
  for (size_t b = 0; b < n; ++b) {
    if (program.buffers[b].kind != BufferKind::Temp || first[b] < 0) continue;
    const int until = std::min(std::max(first[b], last[b]), end - 1);
    const int64_t bytes = buffer_bytes(program.buffers[b]);
    change[static_cast<size_t>(first[b])] += bytes;
    change[static_cast<size_t>(until) + 1] -= bytes;
  }
  int64_t live = 0, peak = 0;
  for (int step = 0; step < end; ++step) {
    live += change[static_cast<size_t>(step)];
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace kiln
