// A graph compiled for one plugin and device: the loaded kernels, the parameters resident
// on the device, and a plan of steps (allocate, launch, extern, host, free) that run()
// walks. Views and broadcasts cost nothing here: they are index expressions in kernels.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/lower/loop_ir.h"
#include "core/ops/random_stream.h"
#include "core/runtime/device_buffer.h"
#include "core/runtime/huge_pages.h"
#include "core/runtime/replays.h"
#include "core/runtime/tensor_ref.h"
#include "core/sched/fusion_failure.h"

namespace kiln {

class PlanRunner;

struct PlanStep {
  // Transfer: `buffer`'s bytes from device `from` to device `place` (a graph placed across
  // plugins, core/runtime/placement.h).
  enum class Kind { Allocate, Launch, Extern, Host, Free, Transfer };
  Kind kind = Kind::Launch;
  std::string name;  // kernel or extern name
  // Launch: the name of the kernel's code in its executable when another kernel's code serves
  // it (kernels alike but for their names compile once); empty: `name`.
  std::string entry;
  std::vector<int> buffers;     // program buffers, in the call's parameter order
  std::vector<int64_t> params;  // extern parameters
  int node = -1;                // Host: the graph node the oracle runs
  int buffer = -1;              // Allocate / Free
  int kernel = -1;              // Launch / Extern / Host: the program kernel it runs
  int executable = -1;          // Launch: which of the graph's executables holds the kernel
  bool in_place = false;        // Allocate: takes a dying input's bytes (not poisoned)
  int place = 0;                // Launch, Transfer: the device it runs on (0: the graph's own)
  int from = 0;                 // Transfer: the device the bytes come from
  const std::string& code_name() const { return entry.empty() ? name : entry; }
};

struct CompileStats {
  std::string target;                   // "plugin:device index" the graph was compiled for
  size_t kernels = 0;                   // generated kernels
  size_t externs = 0;                   // library calls
  size_t host_steps = 0;                // nodes run by the host oracle (no lowering yet)
  size_t inlined = 0;                   // pointwise producers folded into their readers
  size_t merged = 0;                    // kernel merges (reductions with epilogues, siblings)
  std::vector<FusionFailure> failures;  // every producer kept and pair left apart, and why
  int64_t bytes_unfused = 0;            // bytes the kernels move with one kernel per node
  int64_t bytes_fused = 0;              // ... and as scheduled
  int64_t arena_bytes = 0;              // planned peak of temporaries (one arena)
  int64_t naive_bytes = 0;              // the same with every temporary its own allocation
  int in_place = 0;                     // temporaries written over a dying input of the same size
  bool cache_hit = false;               // every artifact came from the kernel cache
  bool graph_cache_hit = false;         // the whole compiled graph came from the cache
  size_t units = 0, units_cached = 0;   // compile units, and those the cache had
  size_t distinct_kernels = 0;          // kernels compiled (those alike but for names once)
  double compile_ms = 0;                // plugin compile time, summed over units (0: all hits)
  double tune_ms = 0;                   // autotuning, kernel configs (0: none or cached)
  double plugin_load_ms = 0;            // compile(): opening the configured plugins
  std::vector<std::string> fallbacks;
  // Kernels the graph's plugin declined, each run by another configured device: "KERNEL on
  // PLUGIN:DEVICE (PLUGIN declines it: why)"; and the copies between devices that costs.
  std::vector<std::string> placed;
  size_t transfers = 0;
};

struct RunOptions {
  // Fill every buffer a kernel writes with 0xFF bytes (NaN for floats) before the run, so a
  // kernel that skips an element cannot pass for correct.
  bool poison = false;
  // The random state to run with (core/ops/random_stream.h); by default the compiled graph's
  // seed and its next call number.
  std::optional<RandomState> random;
};

class CompiledGraph {
 public:
  struct Parts;
  explicit CompiledGraph(std::unique_ptr<Parts> parts);
  ~CompiledGraph();
  CompiledGraph(CompiledGraph&&) noexcept;
  CompiledGraph& operator=(CompiledGraph&&) noexcept;

  // Inputs in graph.inputs order, each of the input's dtype and sizes (any strides).
  Result<std::vector<HostTensor>> run(const std::vector<HostTensor>& inputs,
                                      const RunOptions& options = {}) const;
  // A run on the caller's memory: inputs and outputs in graph order, each of its value's
  // dtype and sizes (any strides). Tensors on the device (or on the host, when the device's
  // memory is the host's) in the layout the program uses are read and written in place; the
  // rest are copied through the host. Runs of one compiled graph take turns (one arena).
  Status run_into(const std::vector<TensorRef>& inputs,
                  const std::vector<TensorRef>& outputs) const;
  // Bytes the last run_into copied to stage tensors that were not read or written in place
  // (0 when every tensor was).
  int64_t last_run_copied_bytes() const;
  // Whether the device's memory is the host's (a "cpu" device): host pointers are on it.
  bool host_memory() const;
  // Memory another process shares (ABI 1.3 mem_import) on the serving device: the address to
  // use as tensor data there until release_shared. An error names the plugin and why when it
  // imports no such handle (or speaks an older ABI).
  Result<uint64_t> import_shared(const kiln_mem_import_desc& desc) const;
  Status release_shared(uint64_t address) const;

  // Runs the plan once to warm up, then `reps` samples on inputs uploaded once, buffers kept
  // between runs (no allocation is timed). A sample is `runs_per_sample` runs back to back,
  // timed by the plugin's events (device time: launches may return before their kernels
  // finish) and divided by that count: with more than one, the host's cost of launching
  // hides behind the device's work, as it does in a steady stream of runs. Returns ms per run.
  Result<std::vector<double>> time_runs(const std::vector<HostTensor>& inputs, int reps,
                                        int runs_per_sample = 1) const;
  // The same protocol, each program kernel timed on its own: median microseconds per kernel,
  // in program order.
  Result<std::vector<double>> time_kernels(const std::vector<HostTensor>& inputs, int reps) const;
  // Per kernel: loads, stores, bytes, flops, the roofline estimate on this device, and the
  // measured time and GB/s when `measured_us` (from time_kernels) is given.
  std::string kernel_metadata(const std::vector<double>& measured_us = {}) const;
  // The serving device's memory bandwidth as its plugin reports it (0: not reported).
  double bandwidth_gbps() const;

  // Random ops draw from this seed from now on, starting again at call `first_call`.
  void set_random_seed(uint64_t seed, uint64_t first_call = 0);
  // run_into returns without waiting for the device when it copied nothing (RunConfig).
  void set_asynchronous(bool asynchronous);
  // RunConfig::staging: inputs and outputs through page-locked memory where the device can.
  void set_staging(bool staging);
  // RunConfig::cuda_graphs: run_into replays a recording of the plan where the device records.
  void set_cuda_graphs(bool on);
  // Host outputs written in place ask for transparent huge pages as `policy` says
  // (RunConfig::huge_pages: the OS's policy, read when the graph is compiled).
  void set_huge_pages(const HugePagePolicy& policy);
  // What run_into's runs recorded and replayed so far, and why recording stopped if it did.
  ReplayStats replay_stats() const;

  const CompileStats& stats() const;
  void set_plugin_load_ms(double ms);
  const std::vector<PlanStep>& plan() const;
  const std::string& kir_text() const;  // the whole batch, canonical
  const Graph& graph() const;           // the decomposed graph the plan runs
  const LoopProgram& program() const;

 private:
  Result<std::vector<std::byte>> read_ref(const TensorRef& r) const;
  Status write_ref(const TensorRef& r, std::span<const std::byte> dense) const;
  void warn_layout_once(size_t input, const TensorRef& r, bool usable) const;

  std::unique_ptr<Parts> parts_;
};

}  // namespace kiln
