#include "core/sched/kernel_cost.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/graph/tensor_type.h"
#include "core/sched/program_bytes.h"

namespace kiln {
namespace {

// Weights in f32 operations: a library call (exp, log, ...) is about ten of them in a SIMD
// math library; everything else that computes is one. Loads, stores and index checks
// count as bytes, not flops.
double op_flops(const LoopOp& op) {
  static const std::set<std::string> calls = {
      "sin",  "cos",   "tan",   "asin",  "acos",  "atan",    "sinh", "cosh",
      "tanh", "asinh", "acosh", "atanh", "exp",   "expm1",   "log",  "log1p",
      "log2", "log10", "erf",   "pow",   "atan2", "sigmoid", "sqrt", "rsqrt"};
  switch (op.kind) {
    case LoopOpKind::Math:
      return calls.contains(op.name) ? 10.0 : 1.0;
    case LoopOpKind::Reduce:
      return op.name == "welford" ? 4.0 : 1.0;
    case LoopOpKind::Scan:
      return 1.0;
    case LoopOpKind::Where:
      return 1.0;
    default:
      return 0.0;
  }
}

std::string shape_of(const LoopKernel& k) {
  std::string s = shape_text(k.ranges);
  if (k.kind == LoopKernelKind::Reduction) s += " over " + shape_text(k.reduction_ranges);
  return s;
}

}  // namespace

KernelCost kernel_cost(const LoopKernel& k, const LoopProgram& program, const Roofline& roofline) {
  KernelCost c;
  c.bytes_read = buffers_bytes(kernel_reads(k), program);
  c.bytes_written = buffers_bytes(kernel_writes(k), program);
  const double points = static_cast<double>(shape_numel(k.ranges)) *
                        static_cast<double>(shape_numel(k.reduction_ranges));
  double per_point = 0;
  for (const LoopOp& op : k.body) {
    c.loads += op.kind == LoopOpKind::Load;
    c.stores += op.kind == LoopOpKind::Store || op.kind == LoopOpKind::Scatter;
    per_point += op_flops(op);
  }
  c.flops = per_point * points;
  if (k.kind == LoopKernelKind::Extern && (k.extern_name == "mm" || k.extern_name == "bmm")) {
    c.flops = 2.0 * static_cast<double>(extern_attr(k, "batch") * extern_attr(k, "m") *
                                        extern_attr(k, "n") * extern_attr(k, "k"));
  }
  if (roofline.known()) {
    const double memory_us =
        static_cast<double>(c.bytes_read + c.bytes_written) / (roofline.bandwidth_gbps * 1e3);
    const double compute_us = c.flops / (roofline.peak_gflops * 1e3);
    c.est_us = std::max(memory_us, compute_us);
    c.bound = memory_us >= compute_us ? "memory" : "compute";
  }
  return c;
}

std::string kernel_metadata_csv(const LoopProgram& program, const Roofline& roofline,
                                const std::vector<double>& measured_us) {
  std::string s =
      "kernel,kind,space,loads,stores,bytes_read,bytes_written,flops,est_us,bound,measured_us,"
      "achieved_gbps\n";
  const bool measured = measured_us.size() == program.kernels.size();
  for (size_t i = 0; i < program.kernels.size(); ++i) {
    const LoopKernel& k = program.kernels[i];
    const KernelCost c = kernel_cost(k, program, roofline);
    const char* kind = k.kind == LoopKernelKind::Extern      ? "extern"
                       : k.kind == LoopKernelKind::Reduction ? "reduction"
                                                             : "pointwise";
    char numbers[256];
    std::snprintf(numbers, sizeof numbers, "%d,%d,%lld,%lld,%.0f,%.3f,%s", c.loads, c.stores,
                  static_cast<long long>(c.bytes_read), static_cast<long long>(c.bytes_written),
                  c.flops, c.est_us, c.bound.c_str());
    std::string timing = ",";
    if (measured && measured_us[i] > 0) {
      char t[64];
      std::snprintf(t, sizeof t, "%.3f,%.2f", measured_us[i],
                    static_cast<double>(c.bytes_read + c.bytes_written) / (measured_us[i] * 1e3));
      timing = t;
    }
    s += k.name + "," + kind + ",\"" + shape_of(k) + "\"," + numbers + "," + timing + "\n";
  }
  return s;
}

}  // namespace kiln
