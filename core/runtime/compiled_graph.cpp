#include "core/runtime/compiled_graph.h"

#include <algorithm>
#include <cstring>

#include "core/interp/interpreter.h"
#include "core/runtime/compiled_graph_parts.h"
#include "core/runtime/device_timer.h"
#include "core/support/median.h"

namespace kiln {

// Poison for unwritten outputs: 0x7F in every byte reads as 127 (i8), 32639 (i16), about 2^31
// (i32) and 2^63 (i64), 3.4e38 (f32, bf16), 1.4e306 (f64) and NaN (f16): outside every range
// tests draw from, so a skipped write cannot pass as a right answer. (0xFF was -1 for signed
// ints, which random inputs do produce.)
constexpr unsigned char kPoisonByte = 0x7F;

std::vector<std::byte> storage_bytes(const HostTensor& t, const TensorType& declared,
                                     int64_t extent) {
  const size_t bytes = static_cast<size_t>(extent * dtype_size(declared.dtype));
  if (declared.is_contiguous() && extent == declared.numel()) {
    const HostTensor c = t.contiguous();
    const auto b = c.bytes();
    return {b.begin(), b.end()};
  }
  auto storage = std::make_shared<std::vector<std::byte>>(bytes);
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

namespace {

using Buffers = std::vector<std::optional<DeviceBuffer>>;

class Runner {
 public:
  explicit Runner(const CompiledGraph::Parts& p) : p_(p), buffers_(p.program.buffers.size()) {}

  // Inputs uploaded and the arena of temporaries open: ready for the plan's first step.
  Status prepare(const std::vector<HostTensor>& inputs, bool poison) {
    if (auto s = upload_inputs(inputs); !s) return s;
    return open_arena(poison);
  }

  // The arena of temporaries; with `poison`, every byte kPoisonByte before the first step.
  Status open_arena(bool poison) {
    auto arena = DeviceBuffer::allocate(
        p_.plugin, p_.device, static_cast<uint64_t>(std::max<int64_t>(p_.stats.arena_bytes, 1)));
    if (!arena) return std::move(arena).error().with_context("allocating the arena");
    arena_ = std::move(*arena);
    if (!poison) return Ok{};
    const std::vector<std::byte> junk(static_cast<size_t>(arena_->size()), std::byte{kPoisonByte});
    return arena_->upload(junk);
  }

  Status upload_inputs(const std::vector<HostTensor>& inputs) {
    const Graph& g = p_.graph;
    if (inputs.size() != g.inputs.size()) {
      return Error::user("graph '" + g.name + "' takes " + std::to_string(g.inputs.size()) +
                         " inputs, got " + std::to_string(inputs.size()));
    }
    for (size_t b = 0; b < p_.program.buffers.size(); ++b) {
      const LoopBuffer& lb = p_.program.buffers[b];
      if (lb.kind != BufferKind::Input) continue;
      size_t i = 0;
      while (i < g.inputs.size() && !(g.inputs[i] == lb.value)) ++i;
      const Value& v = g.value(lb.value);
      const HostTensor& t = inputs.at(i);
      if (t.dtype() != v.type.dtype || t.sizes() != v.type.sizes) {
        return Error::user("input '" + v.name + "' is " + std::string(dtype_name(t.dtype())) +
                           shape_text(t.sizes()) + " but the graph says " +
                           std::string(dtype_name(v.type.dtype)) + shape_text(v.type.sizes));
      }
      if (auto s = allocate(static_cast<int>(b), false); !s) return s;
      const auto bytes = storage_bytes(t, v.type, lb.elements);
      // An empty tensor still gets a one-byte allocation, and nothing to copy.
      if (bytes.empty()) continue;
      if (auto s = buffers_[b]->upload(bytes); !s) return s;
    }
    return Ok{};
  }

  int64_t arena_offset(int b) const {
    return p_.arena_offset.empty() ? -1 : p_.arena_offset.at(static_cast<size_t>(b));
  }

  Status allocate(int b, bool poison) {
    const LoopBuffer& lb = p_.program.buffers.at(static_cast<size_t>(b));
    if (arena_offset(b) >= 0) {
      // A slice of the arena: poisoned again, since a dead buffer left its bytes there.
      if (!poison || buffer_bytes(lb) == 0) return Ok{};
      const std::vector<std::byte> junk(static_cast<size_t>(buffer_bytes(lb)),
                                        std::byte{kPoisonByte});
      return arena_->upload_at(static_cast<uint64_t>(arena_offset(b)), junk);
    }
    const auto bytes = static_cast<uint64_t>(std::max<int64_t>(buffer_bytes(lb), 1));
    auto buf = DeviceBuffer::allocate(p_.plugin, p_.device, bytes);
    if (!buf) return std::move(buf).error().with_context("allocating '" + lb.name + "'");
    buffers_[static_cast<size_t>(b)] = std::move(*buf);
    if (poison && buffer_bytes(lb) > 0) {
      const std::vector<std::byte> junk(static_cast<size_t>(bytes), std::byte{kPoisonByte});
      return buffers_[static_cast<size_t>(b)]->upload(junk);
    }
    return Ok{};
  }

  uint64_t address(int b) const {
    if (arena_offset(b) >= 0) return arena_->address() + static_cast<uint64_t>(arena_offset(b));
    const auto& buf = buffers_.at(static_cast<size_t>(b));
    if (buf) return buf->address();
    const auto& r = p_.resident.at(static_cast<size_t>(b));
    return r ? r->address() : 0;
  }

  Status step(const PlanStep& s, bool keep_buffers, bool poison) {
    const kiln_plugin_api& api = p_.plugin->api();
    switch (s.kind) {
      case PlanStep::Kind::Allocate:
        if (keep_buffers &&
            (buffers_[static_cast<size_t>(s.buffer)] || arena_offset(s.buffer) >= 0))
          return Ok{};
        return allocate(s.buffer, poison && !s.in_place);
      case PlanStep::Kind::Free:
        if (!keep_buffers) buffers_[static_cast<size_t>(s.buffer)].reset();
        return Ok{};
      case PlanStep::Kind::Launch:
      case PlanStep::Kind::Extern: {
        std::vector<uint64_t> addresses;
        for (int b : s.buffers) addresses.push_back(address(b));
        std::vector<kiln_scalar> scalars;
        for (int64_t v : s.params) scalars.push_back({sizeof(kiln_scalar), KILN_SCALAR_INT, v, 0});
        kiln_launch_args args{sizeof(args),   s.name.c_str(), addresses.data(), addresses.size(),
                              scalars.data(), scalars.size(), nullptr};
        if (s.kind == PlanStep::Kind::Launch)
          return p_.plugin->check(
              api.launch(p_.executables.at(static_cast<size_t>(s.executable)), &args),
              "launch of " + s.name);
        return p_.plugin->check(api.extern_call(p_.plugin->instance(), p_.device, &args),
                                "extern " + s.name);
      }
      case PlanStep::Kind::Host:
        return host_step(s);
    }
    return Ok{};
  }

  // A node without a kernel: its inputs come to the host, the oracle runs it, its outputs go back.
  Status host_step(const PlanStep& s) {
    const Node& node = p_.graph.nodes.at(static_cast<size_t>(s.node));
    std::map<int32_t, HostTensor> values;
    size_t next = 0;
    for (ValueRef r : tensor_args(node)) {
      const TensorType& t = p_.graph.type(r);
      auto host = download(s.buffers.at(next++), TensorType::contiguous(t.dtype, t.sizes));
      if (!host) return std::move(host).error();
      values[r.id] = std::move(*host);
    }
    auto outs = run_node(p_.graph, node, [&](ValueRef r) -> const HostTensor* {
      auto it = values.find(r.id);
      return it == values.end() ? nullptr : &it->second;
    });
    if (!outs) return std::move(outs).error();
    for (size_t k = 0; k < outs->size(); ++k) {
      const int b = s.buffers.at(next + k);
      const HostTensor c = (*outs)[k].contiguous();
      if (c.numel() == 0) continue;
      if (auto st = write(b, c.bytes()); !st) return st;
    }
    return Ok{};
  }

  Result<HostTensor> download(int b, const TensorType& type) const {
    const LoopBuffer& lb = p_.program.buffers.at(static_cast<size_t>(b));
    std::vector<std::byte> bytes(static_cast<size_t>(buffer_bytes(lb)));
    if (!bytes.empty()) {
      if (arena_offset(b) >= 0) {
        if (auto s = arena_->download_at(static_cast<uint64_t>(arena_offset(b)), bytes); !s)
          return std::move(s).error();
      } else {
        const auto& buf = buffers_.at(static_cast<size_t>(b));
        const auto& res = p_.resident.at(static_cast<size_t>(b));
        const DeviceBuffer* d = buf ? &*buf : res ? &*res : nullptr;
        if (!d) return Error::internal("buffer '" + lb.name + "' is read before it exists");
        if (auto s = d->download_at(0, bytes); !s) return std::move(s).error();
      }
    }
    return HostTensor::from_bytes(type.dtype, type.sizes, std::move(bytes));
  }

  // Host bytes into program buffer `b` (its own allocation or its arena slice).
  Status write(int b, std::span<const std::byte> bytes) const {
    if (arena_offset(b) >= 0)
      return arena_->upload_at(static_cast<uint64_t>(arena_offset(b)), bytes);
    const auto& buf = buffers_.at(static_cast<size_t>(b));
    if (!buf)
      return Error::internal("buffer " + std::to_string(b) + " is written before it exists");
    return buf->upload_at(0, bytes);
  }

  // Waits for the device's work: a plugin whose launches return early reports a kernel's
  // error here even when no output is read back (an empty output copies nothing).
  Status finish() const {
    const kiln_plugin_api& api = p_.plugin->api();
    if (!api.stream_create || !api.stream_synchronize || !api.stream_destroy) return Ok{};
    kiln_stream* stream = nullptr;
    if (auto s = p_.plugin->check(api.stream_create(p_.plugin->instance(), p_.device, &stream),
                                  "stream_create");
        !s)
      return s;
    auto s = p_.plugin->check(api.stream_synchronize(stream), "waiting for the device");
    api.stream_destroy(stream);
    return s;
  }

  Result<std::vector<HostTensor>> outputs() const {
    std::vector<HostTensor> outs;
    for (size_t i = 0; i < p_.program.outputs.size(); ++i) {
      const TensorType& t = p_.graph.type(p_.graph.outputs[i]);
      auto h = download(p_.program.outputs[i], TensorType::contiguous(t.dtype, t.sizes));
      if (!h) return std::move(h).error();
      outs.push_back(std::move(*h));
    }
    return outs;
  }

 private:
  const CompiledGraph::Parts& p_;
  Buffers buffers_;
  std::optional<DeviceBuffer> arena_;
};

}  // namespace

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
  Runner r(*parts_);
  if (auto s = r.prepare(inputs, options.poison); !s) return std::move(s).error();
  for (const PlanStep& step : parts_->plan) {
    if (auto s = r.step(step, false, options.poison); !s) return std::move(s).error();
  }
  if (auto s = r.finish(); !s) return std::move(s).error();
  return r.outputs();
}

Result<std::vector<double>> CompiledGraph::time_runs(const std::vector<HostTensor>& inputs,
                                                     int reps, int runs_per_sample) const {
  Runner r(*parts_);
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
  Runner r(*parts_);
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

}  // namespace kiln
