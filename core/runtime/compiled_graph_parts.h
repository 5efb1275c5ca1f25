// The inside of a CompiledGraph, shared by the code that builds it (compile.cpp) and the
// code that runs it (compiled_graph.cpp).
#pragma once

#include <optional>

#include "core/runtime/compiled_graph.h"
#include "core/sched/kernel_cost.h"
#include "core/sched/program_bytes.h"

namespace kiln {

struct CompiledGraph::Parts {
  Graph graph;  // decomposed: Host steps run its nodes
  LoopProgram program;
  std::string kir_text;
  CompileStats stats;
  std::vector<PlanStep> plan;
  std::shared_ptr<const Plugin> plugin;
  uint32_t device = 0;
  std::vector<kiln_executable*> executables;          // one per compile unit
  std::vector<std::string> kernel_configs;            // per kernel launched: its tuning config
  std::vector<std::optional<DeviceBuffer>> resident;  // parameters, uploaded once
  // Temporaries live in one arena per run (stats.arena_bytes): a byte offset per program
  // buffer (-1: not in it).
  std::vector<int64_t> arena_offset;
  Roofline roofline;  // the device's, for kernel estimates

  Parts() = default;
  Parts(const Parts&) = delete;
  Parts& operator=(const Parts&) = delete;
  ~Parts() {
    resident.clear();
    for (kiln_executable* e : executables)
      if (e && plugin->api().executable_destroy) plugin->api().executable_destroy(e);
  }
};

// A host tensor laid out as `declared` says (strides honoured) in `extent` elements.
std::vector<std::byte> storage_bytes(const HostTensor& t, const TensorType& declared,
                                     int64_t extent);

}  // namespace kiln
