// The inside of a CompiledGraph, shared by the code that builds it (compile.cpp) and the
// code that runs it (compiled_graph.cpp).
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "core/runtime/compiled_graph.h"
#include "core/sched/kernel_cost.h"
#include "core/sched/program_bytes.h"

namespace spdlog {
class logger;
}

namespace kiln {

class PlanRunner;

// Poison for unwritten outputs: 0x7F in every byte reads as 127 (i8), 32639 (i16), about 2^31
// (i32) and 2^63 (i64), 3.4e38 (f32, bf16), 1.4e306 (f64) and NaN (f16): outside every range
// tests draw from, so a skipped write cannot pass as a right answer. (0xFF was -1 for signed
// ints, which random inputs do produce.)
inline constexpr unsigned char kPoisonByte = 0x7F;

struct CompiledGraph::Parts {
  Graph graph;  // decomposed: Host steps run its nodes
  LoopProgram program;
  std::string kir_text;
  CompileStats stats;
  std::vector<PlanStep> plan;
  std::shared_ptr<const Plugin> plugin;
  uint32_t device = 0;
  std::vector<kiln_executable*> executables;  // one per compile unit
  // Devices of other plugins that run the kernels p.plugin declines (PlanStep::place k is
  // helpers[k - 1]), each with its own executables.
  struct Helper {
    std::shared_ptr<const Plugin> plugin;
    uint32_t device = 0;
    std::vector<kiln_executable*> executables;
  };
  std::vector<Helper> helpers;
  // The calls of p.plugin and every helper's, for a run's turn (exclusive_calls).
  std::vector<std::unique_lock<std::recursive_mutex>> exclusive() const {
    std::vector<const Plugin*> all{plugin.get()};
    for (const Helper& h : helpers) all.push_back(h.plugin.get());
    return exclusive_calls(all);
  }
  std::vector<std::string> kernel_configs;            // per kernel launched: its tuning config
  std::vector<std::optional<DeviceBuffer>> resident;  // parameters, uploaded once
  // Temporaries live in one arena per run (stats.arena_bytes): a byte offset per program
  // buffer (-1: not in it).
  std::vector<int64_t> arena_offset;
  Roofline roofline;  // the device's, for kernel estimates
  // The runner calls reuse (its arena, input and temporary buffers), made on the first run;
  // runs of one compiled graph take turns on it.
  mutable std::mutex warm_mutex;
  mutable std::unique_ptr<PlanRunner> warm;
  mutable int64_t last_copied_bytes = 0;  // run_into's staging, for callers to verify
  // Inputs run_into has warned about (they arrive in a layout other than the graph's and go
  // through the host each call): said once per input, under warm_mutex.
  mutable std::vector<bool> layout_warned;
  std::shared_ptr<spdlog::logger> log;  // "runtime"
  bool asynchronous = false;            // RunConfig::asynchronous
  bool staging = false;                 // RunConfig::staging
  bool cuda_graphs = false;             // RunConfig::cuda_graphs
  HugePagePolicy huge_pages;            // the OS's, where RunConfig::huge_pages; else none
  // Random ops: the seed, and the runs so far (each run draws with the next call number),
  // changed together under `random_mutex`.
  mutable std::mutex random_mutex;
  mutable RandomState random;  // seed, and the call number of the next run
  // The state of the next run (`chosen` when the caller names one; the count moves on
  // only otherwise).
  RandomState next_random(const std::optional<RandomState>& chosen) const {
    if (chosen) return *chosen;
    std::lock_guard lock(random_mutex);
    return {random.seed, random.call++};
  }

  Parts();
  Parts(const Parts&) = delete;
  Parts& operator=(const Parts&) = delete;
  ~Parts();
};

// A host tensor laid out as `declared` says (strides honoured) in `extent` elements.
std::vector<std::byte> storage_bytes(const HostTensor& t, const TensorType& declared,
                                     int64_t extent);

}  // namespace kiln
