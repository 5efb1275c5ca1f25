// Whole compiled graphs in the disk cache ("graphs" entries), so a later process skips
// decomposition, scheduling, lowering and tuning: an entry holds the decomposed graph, the
// LoopProgram, each kernel's tuning config, the plugin's extern list the program was made
// with, and the scheduler's statistics. The plan, its arena and the KIR are built again from
// the program (cheap, and never out of step with it); the artifacts stay in "kernels"
// entries. Key: the graph as given (ops, arguments, input and parameter types, random
// ranges), the plugin, its compiler fingerprint and the device, the options that shape
// kernels, and the build of the core that scheduled it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cache/disk_cache.h"
#include "core/config/options.h"
#include "core/runtime/compiled_graph_parts.h"

namespace kiln {

// First bytes of every entry: a reader of another format stops here.
inline constexpr std::string_view kCompiledGraphFormat = "kiln.compiled/1";

// std::nullopt when the core's build cannot be identified: such entries could outlive the
// scheduler that made them, so none are read or written.
std::optional<CacheKey> compiled_graph_key(const Graph& graph, const Plugin& plugin,
                                           uint32_t device, const ScheduleOptions& schedule,
                                           const AutotuneOptions& autotune);

// What an entry holds besides the graph and program.
struct CompiledGraphRecord {
  std::vector<std::string> kernel_configs;  // "kernel-name config", in kernel order
  // Whether the program had library calls when it was made, and the plugin's extern list
  // then (checked again before the entry is used).
  bool asked_externs = false;
  std::vector<std::string> externs;
  std::vector<std::string> fallbacks;  // nodes the scheduler left to the host oracle
  size_t inlined = 0, merged = 0;
  std::vector<FusionFailure> failures;
  int64_t bytes_unfused = 0, bytes_fused = 0;
};

std::string encode_compiled_graph(const Graph& decomposed, const LoopProgram& program,
                                  const CompiledGraphRecord& record);

struct DecodedGraph {
  Graph graph;
  LoopProgram program;
  CompiledGraphRecord record;
};

// Reads an entry with every field bounds-checked and the program checked against the graph
// (the values its input, parameter and output buffers hold, the tensors each host step
// moves): whatever the bytes, the result is an error or a program that is safe to plan and
// run. An entry is trusted to be what this build wrote (checksum, build ID in the key, a
// directory only its owner may write); the checks guard memory, not against forgery.
Result<DecodedGraph> decode_compiled_graph(std::string_view payload,
                                           std::shared_ptr<const OpRegistry> registry);

}  // namespace kiln
