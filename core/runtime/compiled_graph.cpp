#include "core/runtime/compiled_graph.h"

#include <algorithm>
#include <cstring>

#include "core/runtime/compiled_graph_parts.h"
#include "core/runtime/device_timer.h"
#include "core/runtime/plan_runner.h"
#include "core/runtime/tensor_ref.h"
#include "core/support/median.h"

namespace kiln {

std::vector<std::byte> storage_bytes(const HostTensor& t, const TensorType& declared,
                                     int64_t extent) {
  const size_t bytes = static_cast<size_t>(extent * dtype_size(declared.dtype));
  if (declared.is_contiguous() && extent == declared.numel()) {
    const HostTensor c = t.contiguous();
    const auto b = c.bytes();
    return {b.begin(), b.end()};
  }
  auto storage = std::make_shared<std::vector<std::byte>>(bytes);
  const bool forward_strides = std::all_of(declared.strides.begin(), declared.strides.end(),
                                           [](int64_t s) { return s >= 0; });
  if (t.dtype() == declared.dtype && forward_strides &&
      element_span(declared).high < std::max<int64_t>(extent, 1)) {
    // Same dtype: bytes move as they are, no trip through doubles.
    const HostTensor c = t.contiguous();
    scatter_elements(declared, c.bytes(), storage->data());
    return *storage;
  }
  auto view = HostTensor::strided(declared, storage, 0);
  if (!view) return *storage;
  const bool fp = is_floating(declared.dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (fp) {
      view->set(i, t.get(i));
    } else {
      view->set_int(i, t.get_int(i));
    }
  }
  return *storage;
}

CompiledGraph::Parts::Parts() = default;
CompiledGraph::Parts::~Parts() {
  warm.reset();
  resident.clear();
  for (kiln_executable* e : executables)
    if (e && plugin->api().executable_destroy) plugin->api().executable_destroy(e);
  for (const Helper& h : helpers)
    for (kiln_executable* e : h.executables)
      if (e && h.plugin->api().executable_destroy) h.plugin->api().executable_destroy(e);
}

CompiledGraph::CompiledGraph(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}
CompiledGraph::~CompiledGraph() = default;
CompiledGraph::CompiledGraph(CompiledGraph&&) noexcept = default;
CompiledGraph& CompiledGraph::operator=(CompiledGraph&&) noexcept = default;

const CompileStats& CompiledGraph::stats() const {
  return parts_->stats;
}
void CompiledGraph::set_plugin_load_ms(double ms) {
  parts_->stats.plugin_load_ms = ms;
}
const std::vector<PlanStep>& CompiledGraph::plan() const {
  return parts_->plan;
}
const std::string& CompiledGraph::kir_text() const {
  return parts_->kir_text;
}
const Graph& CompiledGraph::graph() const {
  return parts_->graph;
}
const LoopProgram& CompiledGraph::program() const {
  return parts_->program;
}

Result<std::vector<HostTensor>> CompiledGraph::run(const std::vector<HostTensor>& inputs,
                                                   const RunOptions& options) const {
  const RandomState random = parts_->next_random(options.random);
  if (options.poison) {
    // A runner of its own, every buffer fresh and poisoned.
    const auto calls = parts_->exclusive();
    PlanRunner r(*parts_);
    r.set_random(random);
    r.expect_outputs();
    if (auto s = r.prepare(inputs, true); !s) return std::move(s).error();
    for (const PlanStep& step : parts_->plan) {
      if (auto s = r.step(step, false, true); !s) return std::move(s).error();
    }
    if (auto s = r.finish(); !s) return std::move(s).error();
    return r.outputs();
  }
  WarmTurn turn(*parts_);
  PlanRunner& r = turn.runner();
  r.set_random(random);
  r.expect_outputs();
  if (auto s = r.prepare(inputs, false); !s) return std::move(s).error();
  for (const PlanStep& step : parts_->plan) {
    if (auto s = r.step(step, true, false); !s) return std::move(s).error();
  }
  if (auto s = r.finish(); !s) return std::move(s).error();
  return r.outputs();
}

void CompiledGraph::set_random_seed(uint64_t seed, uint64_t first_call) {
  std::lock_guard lock(parts_->random_mutex);
  parts_->random = {seed, first_call};
}

void CompiledGraph::set_asynchronous(bool asynchronous) {
  parts_->asynchronous = asynchronous;
}

void CompiledGraph::set_staging(bool staging) {
  parts_->staging = staging;
}

void CompiledGraph::set_cuda_graphs(bool on) {
  parts_->cuda_graphs = on;
}

void CompiledGraph::set_huge_pages(const HugePagePolicy& policy) {
  parts_->huge_pages = policy;
}

ReplayStats CompiledGraph::replay_stats() const {
  std::lock_guard<std::mutex> turn(parts_->warm_mutex);
  return parts_->warm ? parts_->warm->replay_stats() : ReplayStats{};
}

Result<std::vector<double>> CompiledGraph::time_runs(const std::vector<HostTensor>& inputs,
                                                     int reps, int runs_per_sample) const {
  // The runner calls use: the timed path is the path users run.
  WarmTurn turn(*parts_);
  PlanRunner& r = turn.runner();
  if (auto s = r.prepare(inputs, false); !s) return std::move(s).error();
  auto timer = DeviceTimer::create(parts_->plugin, parts_->device, 2);
  if (!timer) return std::move(timer).error();
  std::vector<double> times;
  for (int rep = 0; rep <= reps; ++rep) {  // rep 0 allocates and warms up
    const int runs = rep == 0 ? 1 : std::max(runs_per_sample, 1);
    if (auto s = timer->mark(0); !s) return std::move(s).error();
    for (int run = 0; run < runs; ++run) {
      for (const PlanStep& step : parts_->plan) {
        if (auto s = r.step(step, true, false); !s) return std::move(s).error();
      }
    }
    if (auto s = timer->mark(1); !s) return std::move(s).error();
    auto spans = timer->spans(1);
    if (!spans) return std::move(spans).error();
    if (rep > 0) times.push_back(spans->at(0) / runs);
  }
  return times;
}

Result<std::vector<double>> CompiledGraph::time_kernels(const std::vector<HostTensor>& inputs,
                                                        int reps) const {
  // The runner calls use: the timed path is the path users run.
  WarmTurn turn(*parts_);
  PlanRunner& r = turn.runner();
  if (auto s = r.prepare(inputs, false); !s) return std::move(s).error();
  const std::vector<PlanStep>& plan = parts_->plan;
  // Marks around every step: step i runs between marks i and i + 1.
  auto timer = DeviceTimer::create(parts_->plugin, parts_->device, plan.size() + 1);
  if (!timer) return std::move(timer).error();
  std::vector<std::vector<double>> samples(parts_->program.kernels.size());
  for (int rep = 0; rep <= reps; ++rep) {  // rep 0 allocates and warms up
    if (auto s = timer->mark(0); !s) return std::move(s).error();
    for (size_t i = 0; i < plan.size(); ++i) {
      if (auto s = r.step(plan[i], true, false); !s) return std::move(s).error();
      if (auto s = timer->mark(i + 1); !s) return std::move(s).error();
    }
    auto spans = timer->spans(plan.size());
    if (!spans) return std::move(spans).error();
    for (size_t i = 0; i < plan.size() && rep > 0; ++i)
      if (plan[i].kernel >= 0)
        samples[static_cast<size_t>(plan[i].kernel)].push_back(spans->at(i) * 1000.0);
  }
  std::vector<double> medians;
  for (auto& v : samples) medians.push_back(median(std::move(v)));
  return medians;
}

std::string CompiledGraph::kernel_metadata(const std::vector<double>& measured_us) const {
  return kernel_metadata_csv(parts_->program, parts_->roofline, measured_us);
}

double CompiledGraph::bandwidth_gbps() const {
  return parts_->roofline.bandwidth_gbps;
}

}  // namespace kiln
