// The anchor workloads of the benchmark (sin_cos_1d, add_relu_mul_bcast, transpose_add,
// softmax, layernorm, rmsnorm, rowsum, cross_entropy; the four row workloads also in bf16
// outside the CPU class) as graphs, at a chosen size class.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/graph.h"
#include "core/support/result.h"

namespace kiln {
class OpRegistry;
}

namespace kiln::bench {

enum class SizeClass { Cpu, Gpu, Small };

struct Workload {
  std::string name;
  std::string shape;  // for the table, e.g. "f32[8192, 1024]"
  Graph graph;
  // Per graph input: the range its random values come from (nullopt: dtype default).
  std::vector<std::optional<std::pair<double, double>>> ranges;
  // Minimal bytes: every input read once and every output written once.
  int64_t minimal_bytes = 0;
};

// Sets w.minimal_bytes and w.shape (its first input's type) from w.graph.
void describe_workload(Workload& w);

Result<std::vector<Workload>> anchor_workloads(SizeClass size,
                                               const std::shared_ptr<const OpRegistry>& registry);

}  // namespace kiln::bench
