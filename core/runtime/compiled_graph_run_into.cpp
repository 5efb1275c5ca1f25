// CompiledGraph::run_into: a run on the caller's memory. Program buffers are bound to the
// caller's tensors where those sit on the device in the layout the program uses (no copies);
// the rest go through the host.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "core/runtime/caller_memory.h"
#include "core/runtime/compiled_graph.h"
#include "core/runtime/compiled_graph_parts.h"
#include "core/runtime/plan_runner.h"

namespace kiln {
namespace {

bool same_layout(const TensorType& a, const TensorType& b) {
  if (a.sizes != b.sizes) return false;
  for (size_t d = 0; d < a.sizes.size(); ++d)
    if (a.sizes[d] != 1 && a.strides[d] != b.strides[d]) return false;
  return true;
}

// GPU kernels assume what the plugin's own allocations give, 64-byte aligned buffers (they
// use 16-byte vector accesses from there); CPU kernels read any element-aligned address.
// Other caller memory is staged.
bool aligned(const TensorRef& r, bool host_memory) {
  const auto alignment = host_memory ? static_cast<uintptr_t>(dtype_size(r.type.dtype)) : 64;
  return reinterpret_cast<uintptr_t>(r.data) % alignment == 0;
}

// The bytes [first, last) a tensor's elements span.
std::pair<uintptr_t, uintptr_t> byte_span(const TensorRef& r) {
  const ElementSpan e = element_span(r.type);
  const auto size = static_cast<intptr_t>(dtype_size(r.type.dtype));
  const auto base = reinterpret_cast<intptr_t>(r.data);
  return {static_cast<uintptr_t>(base + e.low * size),
          static_cast<uintptr_t>(base + (e.high + 1) * size)};
}

bool overlaps(const std::pair<uintptr_t, uintptr_t>& a, const std::pair<uintptr_t, uintptr_t>& b) {
  return a.first < b.second && b.first < a.second;
}

// `what()` names the tensor in an error; it is called only then (this runs per tensor per call).
template <class What>
Status check_ref(const TensorRef& r, const TensorType& want, const What& what) {
  if (r.type.dtype != want.dtype || r.type.sizes != want.sizes)
    return Error::user(what() + " is " + std::string(dtype_name(r.type.dtype)) +
                       shape_text(r.type.sizes) + " but the graph says " +
                       std::string(dtype_name(want.dtype)) + shape_text(want.sizes));
  if (r.type.strides.size() != r.type.sizes.size())
    return Error::user(what() + " has " + std::to_string(r.type.strides.size()) +
                       " strides for rank " + std::to_string(r.type.sizes.size()));
  if (r.data == nullptr && r.type.numel() > 0) return Error::user(what() + " has no data");
  return Ok{};
}

}  // namespace

int64_t CompiledGraph::last_run_copied_bytes() const {
  std::lock_guard<std::mutex> turn(parts_->warm_mutex);
  return parts_->last_copied_bytes;
}

bool CompiledGraph::host_memory() const {
  for (const DeviceInfo& d : parts_->plugin->devices())
    if (d.index == parts_->device) return d.kind == "cpu";
  return false;
}

// The dense bytes of `r`, read from the host or from the device.
Result<std::vector<std::byte>> CompiledGraph::read_ref(const TensorRef& r) const {
  const size_t size = dtype_size(r.type.dtype);
  std::vector<std::byte> dense(static_cast<size_t>(r.type.numel()) * size);
  if (dense.empty()) return dense;
  const ElementSpan span = element_span(r.type);
  const auto* base = static_cast<const std::byte*>(r.data);
  if (!r.on_device || host_memory()) {
    gather_elements(r.type, base, dense);
    return dense;
  }
  std::vector<std::byte> staged(static_cast<size_t>(span.high - span.low + 1) * size);
  const kiln_plugin_api& api = parts_->plugin->api();
  const auto from = reinterpret_cast<uintptr_t>(base) + span.low * static_cast<int64_t>(size);
  CallerMemory reg(*parts_->plugin, parts_->device);
  if (auto s = reg.add(from, staged.size()); !s) return std::move(s).error();
  if (auto s = parts_->plugin->check(
          api.copy_device_to_host(parts_->plugin->instance(), parts_->device, nullptr,
                                  staged.data(), from, staged.size()),
          "copy_device_to_host");
      !s)
    return std::move(s).error();
  gather_elements(r.type, staged.data() - span.low * static_cast<int64_t>(size), dense);
  return dense;
}

// An input kernels could have read in place but for its strides goes through the host on
// every call: slow enough (a transposed weight per training step) that the caller is told
// once, with what to change.
void CompiledGraph::warn_layout_once(size_t i, const TensorRef& r, bool usable) const {
  const Graph& g = parts_->graph;
  if (!usable || !parts_->log || r.type.numel() == 0) return;
  const TensorType& want = g.type(g.inputs[i]);
  if (same_layout(r.type, want)) return;
  auto& warned = parts_->layout_warned;
  if (warned.size() < g.inputs.size()) warned.resize(g.inputs.size(), false);
  if (warned[i]) return;
  warned[i] = true;
  parts_->log->warn(
      "graph '{}': input {} ('{}') arrives with strides {} but was compiled for strides {}; "
      "each call copies it through the host (compile the graph for the layout it is given)",
      g.name, i, g.value(g.inputs[i]).name, shape_text(r.type.strides), shape_text(want.strides));
}

// Dense bytes into `r` on the host or the device; elements its layout skips keep their bytes.
Status CompiledGraph::write_ref(const TensorRef& r, std::span<const std::byte> dense) const {
  if (dense.empty()) return Ok{};
  auto* base = static_cast<std::byte*>(r.data);
  if (!r.on_device || host_memory()) {
    scatter_elements(r.type, dense, base);
    return Ok{};
  }
  const size_t size = dtype_size(r.type.dtype);
  const ElementSpan span = element_span(r.type);
  std::vector<std::byte> staged(static_cast<size_t>(span.high - span.low + 1) * size);
  const kiln_plugin_api& api = parts_->plugin->api();
  const auto at = reinterpret_cast<uintptr_t>(base) + span.low * static_cast<int64_t>(size);
  CallerMemory reg(*parts_->plugin, parts_->device);
  if (auto s = reg.add(at, staged.size()); !s) return s;
  const bool dense_layout = r.type.is_contiguous();
  if (!dense_layout) {
    if (auto s = parts_->plugin->check(
            api.copy_device_to_host(parts_->plugin->instance(), parts_->device, nullptr,
                                    staged.data(), at, staged.size()),
            "copy_device_to_host");
        !s)
      return s;
  }
  scatter_elements(r.type, dense, staged.data() - span.low * static_cast<int64_t>(size));
  return parts_->plugin->check(api.copy_host_to_device(parts_->plugin->instance(), parts_->device,
                                                       nullptr, at, staged.data(), staged.size()),
                               "copy_host_to_device");
}

Status CompiledGraph::run_into(const std::vector<TensorRef>& inputs,
                               const std::vector<TensorRef>& outputs) const {
  const Graph& g = parts_->graph;
  const LoopProgram& prog = parts_->program;
  if (inputs.size() != g.inputs.size() || outputs.size() != g.outputs.size())
    return Error::user("graph '" + g.name + "' takes " + std::to_string(g.inputs.size()) +
                       " inputs and " + std::to_string(g.outputs.size()) + " outputs, got " +
                       std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto what = [&] {
      return "input " + std::to_string(i) + " ('" + g.value(g.inputs[i]).name + "')";
    };
    if (auto s = check_ref(inputs[i], g.type(g.inputs[i]), what); !s) return s;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto what = [&] { return "output " + std::to_string(i); };
    if (auto s = check_ref(outputs[i], g.type(g.outputs[i]), what); !s) return s;
  }
  // Caller memory becomes usable by kernels once the plugin registers it (ABI 1.1); a plugin
  // without mem_register gets copies.
  const bool can_register = CallerMemory(*parts_->plugin, parts_->device).supported();
  const bool on_host = host_memory();  // asked once: it walks the plugin's device list
  // Memory kernels can read and write in place: registrable, and aligned as they need.
  auto usable = [&](const TensorRef& r) {
    return can_register && (r.on_device || on_host) && aligned(r, on_host);
  };

  WarmTurn turn(*parts_);
  parts_->last_copied_bytes = 0;
  PlanRunner& runner = turn.runner();
  runner.set_random(parts_->next_random(std::nullopt));
  // Unregistered when the run ends, however it ends; the runner's bindings are dropped at the
  // start of its next use.
  CallerMemory bindings(*parts_->plugin, parts_->device);
  // Inputs: bound where the layout is the program's, else gathered to the host.
  std::vector<HostTensor> staged(inputs.size());
  std::vector<std::pair<uintptr_t, uintptr_t>> bound_spans;  // read or written by kernels
  int64_t copied = 0;
  for (size_t b = 0; b < prog.buffers.size(); ++b) {
    const LoopBuffer& lb = prog.buffers[b];
    if (lb.kind != BufferKind::Input) continue;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!(g.inputs[i] == lb.value)) continue;
      const TensorRef& r = inputs[i];
      if (usable(r) && r.type.numel() > 0 && same_layout(r.type, g.type(lb.value))) {
        runner.bind(static_cast<int>(b), reinterpret_cast<uintptr_t>(r.data));
        bound_spans.push_back(byte_span(r));
      }
    }
  }
  std::vector<bool> needed(inputs.size(), false);  // some buffer of it is not bound
  for (size_t b = 0; b < prog.buffers.size(); ++b)
    if (prog.buffers[b].kind == BufferKind::Input && !runner.bound(static_cast<int>(b)))
      for (size_t i = 0; i < inputs.size(); ++i)
        if (g.inputs[i] == prog.buffers[b].value) needed[i] = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!needed[i]) continue;
    warn_layout_once(i, inputs[i], usable(inputs[i]));
    auto dense = read_ref(inputs[i]);
    if (!dense) return std::move(dense).error();
    copied += static_cast<int64_t>(dense->size());
    auto t = HostTensor::from_bytes(inputs[i].type.dtype, inputs[i].type.sizes, std::move(*dense));
    if (!t) return std::move(t).error();
    staged[i] = std::move(*t);
  }
  // Outputs: a temporary written straight into the caller's dense tensor, once, unless its
  // memory overlaps a tensor kernels read or write in place (then it is staged).
  std::vector<bool> direct(outputs.size(), false);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const int b = prog.outputs[i];
    const TensorRef& r = outputs[i];
    if (prog.buffers[static_cast<size_t>(b)].kind != BufferKind::Temp || runner.bound(b) ||
        !usable(r) || r.type.numel() == 0 || !r.type.is_contiguous())
      continue;
    const auto span = byte_span(r);
    bool clash = false;
    for (const auto& other : bound_spans) clash = clash || overlaps(span, other);
    if (clash) continue;
    runner.bind(b, reinterpret_cast<uintptr_t>(r.data));
    bound_spans.push_back(span);
    direct[i] = true;
    if (on_host) advise_huge_pages(parts_->huge_pages, span.first, span.second - span.first);
  }
  for (size_t b = 0; b < prog.buffers.size(); ++b) {
    if (!runner.bound(static_cast<int>(b))) continue;
    if (auto s = bindings.add(runner.bound_address(static_cast<int>(b)),
                              static_cast<uint64_t>(buffer_bytes(prog.buffers[b])));
        !s)
      return s;
  }
  Status status = runner.prepare(staged, false);
  if (status) status = runner.run_plan();
  // Asynchronous runs that copied nothing return with their kernels queued: the caller's
  // work on the same stream orders after them. Otherwise (and after a failed step) the run
  // waits: nothing launched may still touch memory the caller may free or read on the host.
  const bool in_place =
      copied == 0 && std::all_of(direct.begin(), direct.end(), [](bool d) { return d; });
  if (!(status && parts_->asynchronous && in_place)) {
    const Status finished = runner.finish();
    if (status) status = finished;
  }
  for (size_t i = 0; status && i < outputs.size(); ++i) {
    if (direct[i]) continue;
    const TensorType& t = g.type(g.outputs[i]);
    auto host = runner.download(prog.outputs[i], TensorType::contiguous(t.dtype, t.sizes));
    if (!host) {
      status = std::move(host).error();
      break;
    }
    status = write_ref(outputs[i], host->bytes());
    copied += static_cast<int64_t>(host->bytes().size());
  }
  runner.unbind_all();
  const Status undone = bindings.release();
  if (status) status = undone;
  parts_->last_copied_bytes = copied;
  return status;
}

}  // namespace kiln
