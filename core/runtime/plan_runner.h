// Walks a compiled graph's plan on its device: uploads inputs, opens the arena of
// temporaries, runs each step (launch, library call, host step), and reads outputs back. A
// runner kept between runs reuses its buffers and arena; a program buffer may be bound to
// memory the caller owns on the device (zero-copy inputs and outputs) for one run.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/runtime/compiled_graph_parts.h"
#include "core/runtime/replays.h"
#include "core/runtime/staged_copies.h"

namespace kiln {

// An input's bytes as its program buffer lays them out: the tensor's own when they already
// are (no copy), else packed. Moves only: a copy's view would point into the original.
struct InputBytes {
  HostTensor tensor;
  std::vector<std::byte> packed;
  std::span<const std::byte> view;
  InputBytes() = default;
  InputBytes(InputBytes&&) = default;
  InputBytes& operator=(InputBytes&&) = default;
  InputBytes(const InputBytes&) = delete;
  InputBytes& operator=(const InputBytes&) = delete;
};
InputBytes input_bytes(const HostTensor& t, const TensorType& declared, int64_t extent);

class PlanRunner {
 public:
  explicit PlanRunner(const CompiledGraph::Parts& p);
  ~PlanRunner();
  PlanRunner(const PlanRunner&) = delete;
  PlanRunner& operator=(const PlanRunner&) = delete;

  // Inputs uploaded and the arena of temporaries open: ready for the plan's first step.
  Status prepare(const std::vector<HostTensor>& inputs, bool poison);
  // The arena of temporaries (kept when already open); with `poison`, every byte
  // kPoisonByte before the first step.
  Status open_arena(bool poison);
  // Inputs into their program buffers; an input whose buffer is bound is left alone.
  // Also writes the random state (set_random) into its buffer, when the program has one.
  Status upload_inputs(const std::vector<HostTensor>& inputs);
  // The random state of the coming run: its kernels and host steps draw from it.
  void set_random(const RandomState& state) { random_ = state; }
  Status step(const PlanStep& s, bool keep_buffers, bool poison);
  // Every step of the plan on kept buffers, unpoisoned: as one replay of a recording where
  // the graph asks for it (RunConfig::cuda_graphs) and the device and plan allow (replays.h).
  Status run_plan();
  ReplayStats replay_stats() const;
  // Waits for the device's work: a plugin whose launches return early reports a kernel's
  // error here even when no output is read back.
  Status finish();
  // This run's outputs will be read (outputs()): with staging, each is copied back as soon as
  // its last kernel is queued.
  void expect_outputs(bool wanted = true) { outputs_early_ = wanted && staged(); }
  Result<std::vector<HostTensor>> outputs();
  Result<HostTensor> download(int b, const TensorType& type) const;
  // Program buffer `b`'s bytes on the graph's own device.
  Result<std::vector<std::byte>> own_bytes(int b) const;
  // Host bytes into program buffer `b` (its own allocation, arena slice or bound memory).
  Status write(int b, std::span<const std::byte> bytes) const;

  // Program buffer `b` lives at device address `address` (memory the caller owns) until
  // unbind_all().
  void bind(int b, uint64_t address);
  void unbind_all();
  bool bound(int b) const { return bound_.at(static_cast<size_t>(b)) != 0; }
  uint64_t bound_address(int b) const { return bound_.at(static_cast<size_t>(b)); }

 private:
  int64_t arena_offset(int b) const;
  Status allocate(int b, bool poison);
  uint64_t address(int b) const;
  Status host_step(const PlanStep& s);
  // Program buffer `b` on helper device `at` (1..): made, poisoned when asked, on first use.
  Result<DeviceBuffer*> mirror(int at, int b, bool poison);
  Result<std::vector<std::byte>> read_bytes(int at, int b);
  Status transfer(const PlanStep& s, bool poison);
  Status helper_launch(const PlanStep& s, bool poison);

  const CompiledGraph::Parts& p_;
  std::vector<std::optional<DeviceBuffer>> buffers_;
  std::vector<uint64_t> bound_;
  std::optional<DeviceBuffer> arena_;
  RandomState random_;
  // Per helper device, its copy of each program buffer a step there touches.
  std::vector<std::vector<std::optional<DeviceBuffer>>> mirrors_;

  // Staging (RunConfig::staging, ABI 1.2): copies through page-locked host buffers on
  // streams of their own, overlapped with the kernels (staged_copies.h).
  bool staged() const;
  const bool can_stage_;  // the device's part of staged(), read once
  StagedCopies* copies();
  std::unique_ptr<StagedCopies> copies_;
  Status launch_on_device(const PlanStep& s, kiln_launch_args& args);
  Result<std::vector<HostTensor>> staged_outputs();
  Status download_output(StagedCopies& c, int b);
  Status put(StagedCopies* staging, int b, std::span<const std::byte> bytes);
  // Per step, the graph outputs no later step touches: copied back once it is queued.
  std::map<const PlanStep*, std::vector<int>> outputs_after_;
  bool outputs_early_ = false;
  // Recordings of the plan (RunConfig::cuda_graphs, ABI 1.4), made on first use. Only plans of
  // kernels and library calls on the graph's own device are recorded: host steps and copies
  // between devices are the host's work.
  std::string not_recordable() const;  // why not, or ""
  std::string plan_not_recordable() const;
  const std::string plan_not_recordable_;  // its part that is the plan's own
  std::unique_ptr<Replays> replays_;
  kiln_stream* recording_ = nullptr;  // the stream a recording is made on, while it is
  // Parameters already copied to a helper device (place, buffer): not copied again.
  std::map<std::pair<int, int>, bool> params_ready_;
};

// A turn on the runner a compiled graph's calls reuse (made on first use): its runs take
// turns on it, and on the plugin when the plugin's calls must not overlap. Bindings of
// caller memory from an earlier turn are dropped, and so is its expect_outputs.
class WarmTurn {
 public:
  explicit WarmTurn(const CompiledGraph::Parts& p);
  PlanRunner& runner() { return runner_; }

 private:
  std::lock_guard<std::mutex> turn_;
  std::vector<std::unique_lock<std::recursive_mutex>> calls_;
  PlanRunner& runner_;
};

}  // namespace kiln
