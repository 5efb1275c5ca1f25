#include "core/runtime/plan_runner.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/interp/interpreter.h"

namespace kiln {

namespace {

PlanRunner& warm_runner(const CompiledGraph::Parts& p) {
  if (!p.warm) p.warm = std::make_unique<PlanRunner>(p);
  return *p.warm;
}

}  // namespace

WarmTurn::WarmTurn(const CompiledGraph::Parts& p)
    : turn_(p.warm_mutex), calls_(p.exclusive()), runner_(warm_runner(p)) {
  runner_.unbind_all();
  runner_.expect_outputs(false);
}

PlanRunner::PlanRunner(const CompiledGraph::Parts& p)
    : p_(p),
      buffers_(p.program.buffers.size()),
      bound_(p.program.buffers.size(), 0),
      mirrors_(p.helpers.size()),
      can_stage_(StagedCopies::possible(*p.plugin, p.device)),
      plan_not_recordable_(plan_not_recordable()) {
  for (auto& copies : mirrors_) copies.resize(p.program.buffers.size());
  // Each output's last step: the one after which it may be copied back.
  std::map<int, const PlanStep*> last;
  for (const PlanStep& s : p.plan) {
    for (int b : s.buffers) last[b] = &s;
    if (s.kind == PlanStep::Kind::Transfer) last[s.buffer] = &s;
  }
  for (int b : p.program.outputs)
    if (auto it = last.find(b); it != last.end()) outputs_after_[it->second].push_back(b);
}

InputBytes input_bytes(const HostTensor& t, const TensorType& declared, int64_t extent) {
  InputBytes in;
  // The common case, a contiguous tensor into a contiguous buffer: its own bytes, not a copy.
  if (declared.is_contiguous() && extent == declared.numel() && t.dtype() == declared.dtype) {
    in.tensor = t.contiguous();
    in.view = in.tensor.bytes();
    return in;
  }
  in.packed = storage_bytes(t, declared, extent);
  in.view = in.packed;
  return in;
}

PlanRunner::~PlanRunner() = default;

bool PlanRunner::staged() const {
  return p_.staging && can_stage_;
}

// The staging streams while runs are staged (kept, unused, when staging is turned off).
StagedCopies* PlanRunner::copies() {
  if (!staged()) return nullptr;
  if (!copies_) copies_ = std::make_unique<StagedCopies>(*p_.plugin, p_.device);
  return copies_.get();
}

// A kernel (or library call) on the graph's own device. Staged, it runs on the compute stream
// after the uploads of what it reads, and the outputs it touches last are copied back behind
// it while later kernels run.
Status PlanRunner::launch_on_device(const PlanStep& s, kiln_launch_args& args) {
  const kiln_plugin_api& api = p_.plugin->api();
  StagedCopies* c = copies();
  if (c) {
    if (auto st = c->before_kernel(s.buffers); !st) return st;
    args.stream = c->compute_stream();
  }
  const bool kernel = s.kind == PlanStep::Kind::Launch;
  kiln_error* error = kernel
                          ? api.launch(p_.executables.at(static_cast<size_t>(s.executable)), &args)
                          : api.extern_call(p_.plugin->instance(), p_.device, &args);
  // The step's name goes into a message only when there is one (this runs per launch).
  Status launched = Ok{};
  if (error) launched = p_.plugin->check(error, (kernel ? "launch of " : "extern ") + s.name);
  if (!launched || !c || !outputs_early_) return launched;
  if (auto it = outputs_after_.find(&s); it != outputs_after_.end())
    for (int b : it->second)
      if (!bound(b))
        if (auto st = download_output(*c, b); !st) return st;
  return Ok{};
}

// Output buffer `b` on its way to its page-locked buffer, unless it is already.
Status PlanRunner::download_output(StagedCopies& c, int b) {
  if (c.downloading(b)) return Ok{};
  const LoopBuffer& lb = p_.program.buffers.at(static_cast<size_t>(b));
  return c.download(b, address(b), static_cast<size_t>(buffer_bytes(lb)));
}

// Every output not yet on its way copied back, one wait, then read out.
Result<std::vector<HostTensor>> PlanRunner::staged_outputs() {
  StagedCopies* c = copies();
  for (int b : p_.program.outputs)
    if (auto s = download_output(*c, b); !s) return std::move(s).error();
  if (auto s = c->wait_downloads(); !s) return std::move(s).error();
  std::vector<HostTensor> outs;
  for (size_t i = 0; i < p_.program.outputs.size(); ++i) {
    const TensorType& t = p_.graph.type(p_.graph.outputs[i]);
    const std::span<const std::byte> host = c->downloaded(p_.program.outputs[i]);
    auto out = HostTensor::from_bytes(t.dtype, t.sizes, {host.begin(), host.end()});
    if (!out) return std::move(out).error();
    outs.push_back(std::move(*out));
  }
  return outs;
}

void PlanRunner::bind(int b, uint64_t address) {
  bound_.at(static_cast<size_t>(b)) = address;
}

void PlanRunner::unbind_all() {
  std::fill(bound_.begin(), bound_.end(), 0);
}

Status PlanRunner::prepare(const std::vector<HostTensor>& inputs, bool poison) {
  if (auto s = upload_inputs(inputs); !s) return s;
  return open_arena(poison);
}

Status PlanRunner::open_arena(bool poison) {
  if (!arena_) {
    auto arena = DeviceBuffer::allocate(
        p_.plugin, p_.device, static_cast<uint64_t>(std::max<int64_t>(p_.stats.arena_bytes, 1)));
    if (!arena) return std::move(arena).error().with_context("allocating the arena");
    arena_ = std::move(*arena);
  }
  if (!poison) return Ok{};
  // Copies on helper devices kept from an earlier run are poisoned again too (parameters
  // included: they are copied again).
  params_ready_.clear();
  for (auto& copies : mirrors_)
    for (auto& m : copies)
      if (m) {
        const std::vector<std::byte> junk(static_cast<size_t>(m->size()), std::byte{kPoisonByte});
        if (auto s = m->upload(junk); !s) return s;
      }
  const std::vector<std::byte> junk(static_cast<size_t>(arena_->size()), std::byte{kPoisonByte});
  return arena_->upload(junk);
}

Status PlanRunner::upload_inputs(const std::vector<HostTensor>& inputs) {
  const Graph& g = p_.graph;
  if (inputs.size() != g.inputs.size()) {
    return Error::user("graph '" + g.name + "' takes " + std::to_string(g.inputs.size()) +
                       " inputs, got " + std::to_string(inputs.size()));
  }
  StagedCopies* staging = copies();
  if (staging)
    if (auto s = staging->begin_uploads(outputs_early_); !s) return s;
  for (size_t b = 0; b < p_.program.buffers.size(); ++b) {
    const LoopBuffer& lb = p_.program.buffers[b];
    if (lb.kind == BufferKind::RandomState) {
      if (!buffers_[b]) {
        if (auto s = allocate(static_cast<int>(b), false); !s) return s;
      }
      const int64_t words[2] = {static_cast<int64_t>(random_.seed),
                                static_cast<int64_t>(random_.call)};
      if (auto s = put(staging, static_cast<int>(b), std::as_bytes(std::span(words))); !s) return s;
      continue;
    }
    if (lb.kind != BufferKind::Input || bound_[b] != 0) continue;
    size_t i = 0;
    while (i < g.inputs.size() && !(g.inputs[i] == lb.value)) ++i;
    const Value& v = g.value(lb.value);
    const HostTensor& t = inputs.at(i);
    if (t.dtype() != v.type.dtype || t.sizes() != v.type.sizes) {
      return Error::user("input '" + v.name + "' is " + std::string(dtype_name(t.dtype())) +
                         shape_text(t.sizes()) + " but the graph says " +
                         std::string(dtype_name(v.type.dtype)) + shape_text(v.type.sizes));
    }
    if (!buffers_[b]) {
      if (auto s = allocate(static_cast<int>(b), false); !s) return s;
    }
    InputBytes bytes = input_bytes(t, v.type, lb.elements);
    // An empty tensor still gets a one-byte allocation, and nothing to copy.
    if (bytes.view.empty()) continue;
    if (auto s = put(staging, static_cast<int>(b), bytes.view); !s) return s;
  }
  return staging ? staging->end_uploads() : Ok{};
}

// Host bytes into input buffer `b`: staged when `staging`, else copied at once.
Status PlanRunner::put(StagedCopies* staging, int b, std::span<const std::byte> bytes) {
  if (staging) return staging->upload(b, address(b), bytes);
  return buffers_[static_cast<size_t>(b)]->upload(bytes);
}

int64_t PlanRunner::arena_offset(int b) const {
  return p_.arena_offset.empty() ? -1 : p_.arena_offset.at(static_cast<size_t>(b));
}

Status PlanRunner::allocate(int b, bool poison) {
  const LoopBuffer& lb = p_.program.buffers.at(static_cast<size_t>(b));
  if (bound(b)) return Ok{};  // the caller's memory: never poisoned or replaced
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

uint64_t PlanRunner::address(int b) const {
  if (bound(b)) return bound_[static_cast<size_t>(b)];
  if (arena_offset(b) >= 0) return arena_->address() + static_cast<uint64_t>(arena_offset(b));
  const auto& buf = buffers_.at(static_cast<size_t>(b));
  if (buf) return buf->address();
  const auto& r = p_.resident.at(static_cast<size_t>(b));
  return r ? r->address() : 0;
}

Status PlanRunner::step(const PlanStep& s, bool keep_buffers, bool poison) {
  // Work the host orders by returning (copies without a stream, freeing) comes after the
  // staged streams' work.
  const bool kernel =
      s.kind == PlanStep::Kind::Extern || (s.kind == PlanStep::Kind::Launch && s.place == 0);
  const bool host_ordered = !kernel && !(s.kind == PlanStep::Kind::Allocate && !poison) &&
                            !(s.kind == PlanStep::Kind::Free && keep_buffers);
  if (copies_ && host_ordered)
    if (auto st = copies_->settle(); !st) return st;
  switch (s.kind) {
    case PlanStep::Kind::Allocate:
      if (keep_buffers && (buffers_[static_cast<size_t>(s.buffer)] || arena_offset(s.buffer) >= 0))
        return Ok{};
      return allocate(s.buffer, poison && !s.in_place);
    case PlanStep::Kind::Free:
      if (!keep_buffers) buffers_[static_cast<size_t>(s.buffer)].reset();
      return Ok{};
    case PlanStep::Kind::Transfer:
      return transfer(s, poison);
    case PlanStep::Kind::Launch:
      if (s.place != 0) return helper_launch(s, poison);
      [[fallthrough]];
    case PlanStep::Kind::Extern: {
      std::vector<uint64_t> addresses;
      for (int b : s.buffers) addresses.push_back(address(b));
      std::vector<kiln_scalar> scalars;
      for (int64_t v : s.params) scalars.push_back({sizeof(kiln_scalar), KILN_SCALAR_INT, v, 0});
      kiln_launch_args args{sizeof(args),     s.code_name().c_str(), addresses.data(),
                            addresses.size(), scalars.data(),        scalars.size(),
                            recording_};
      return launch_on_device(s, args);
    }
    case PlanStep::Kind::Host:
      return host_step(s);
  }
  return Ok{};
}

// What keeps the plan itself from being recorded, whatever the run: read once per runner.
std::string PlanRunner::plan_not_recordable() const {
  if (!p_.helpers.empty()) return "kernels run on more than one device";
  for (const PlanStep& s : p_.plan) {
    if (s.kind == PlanStep::Kind::Host) return "'" + s.name + "' runs on the host";
    if (s.kind == PlanStep::Kind::Transfer || (s.kind == PlanStep::Kind::Launch && s.place != 0))
      return "kernels run on more than one device";
  }
  if (!Replays::possible(*p_.plugin, p_.device))
    return "the device does not record work (no KILN_CAPABILITY_CAPTURE, ABI 1.4)";
  return "";
}

std::string PlanRunner::not_recordable() const {
  return staged() ? "runs are staged (run.staging)" : plan_not_recordable_;
}

ReplayStats PlanRunner::replay_stats() const {
  ReplayStats stats = replays_ ? replays_->stats() : ReplayStats{};
  if (p_.cuda_graphs) stats.not_recordable = not_recordable();
  return stats;
}

Status PlanRunner::run_plan() {
  if (p_.cuda_graphs && not_recordable().empty()) {
    if (!replays_) replays_ = std::make_unique<Replays>(*p_.plugin, p_.device);
    // Everything but caller memory is the runner's own and stays where it is.
    auto replayed = replays_->run(bound_, [&](kiln_stream* stream) {
      recording_ = stream;
      Status status = Ok{};
      for (size_t k = 0; status && k < p_.plan.size(); ++k) status = step(p_.plan[k], true, false);
      recording_ = nullptr;
      return status;
    });
    if (!replayed) return std::move(replayed).error();
    if (*replayed) return Ok{};
  }
  for (const PlanStep& s : p_.plan)
    if (auto st = step(s, true, false); !st) return st;
  if (replays_) replays_->ran_plainly(bound_);
  return Ok{};
}

// A node without a kernel: its inputs come to the host, the oracle runs it, its outputs go back.
Status PlanRunner::host_step(const PlanStep& s) {
  const Node& node = p_.graph.nodes.at(static_cast<size_t>(s.node));
  std::map<int32_t, HostTensor> values;
  size_t next = 0;
  for (ValueRef r : tensor_args(node)) {
    const TensorType& t = p_.graph.type(r);
    auto host = download(s.buffers.at(next++), TensorType::contiguous(t.dtype, t.sizes));
    if (!host) return std::move(host).error();
    values[r.id] = std::move(*host);
  }
  auto outs = run_node(
      p_.graph, node,
      [&](ValueRef r) -> const HostTensor* {
        auto it = values.find(r.id);
        return it == values.end() ? nullptr : &it->second;
      },
      random_);
  if (!outs) return std::move(outs).error();
  for (size_t k = 0; k < outs->size(); ++k) {
    const int b = s.buffers.at(next + k);
    const HostTensor c = (*outs)[k].contiguous();
    if (c.numel() == 0) continue;
    if (auto st = write(b, c.bytes()); !st) return st;
  }
  return Ok{};
}

Result<DeviceBuffer*> PlanRunner::mirror(int at, int b, bool poison) {
  std::optional<DeviceBuffer>& m =
      mirrors_.at(static_cast<size_t>(at - 1)).at(static_cast<size_t>(b));
  if (m) return &*m;
  const CompiledGraph::Parts::Helper& h = p_.helpers.at(static_cast<size_t>(at - 1));
  const LoopBuffer& lb = p_.program.buffers.at(static_cast<size_t>(b));
  const auto bytes = static_cast<uint64_t>(std::max<int64_t>(buffer_bytes(lb), 1));
  auto buf = DeviceBuffer::allocate(h.plugin, h.device, bytes);
  if (!buf)
    return std::move(buf).error().with_context("allocating '" + lb.name + "' on " +
                                               h.plugin->name());
  m = std::move(*buf);
  if (poison) {
    const std::vector<std::byte> junk(static_cast<size_t>(bytes), std::byte{kPoisonByte});
    if (auto s = m->upload(junk); !s) return std::move(s).error();
  }
  return &*m;
}

// Buffer `b`'s bytes as device `at` holds them.
Result<std::vector<std::byte>> PlanRunner::read_bytes(int at, int b) {
  if (at == 0) return own_bytes(b);
  const LoopBuffer& lb = p_.program.buffers.at(static_cast<size_t>(b));
  auto m = mirror(at, b, false);
  if (!m) return std::move(m).error();
  std::vector<std::byte> bytes(static_cast<size_t>(buffer_bytes(lb)));
  if (!bytes.empty())
    if (auto s = (*m)->download_at(0, bytes); !s) return std::move(s).error();
  return bytes;
}

// A buffer's bytes from one device to another, through the host (the ABI has no copies
// between plugins).
Status PlanRunner::transfer(const PlanStep& s, bool poison) {
  // Parameters never change: a helper's copy, once made, serves every later run.
  const bool param = p_.program.buffers.at(static_cast<size_t>(s.buffer)).kind == BufferKind::Param;
  auto& ready = params_ready_[{s.place, s.buffer}];
  if (param && s.place != 0 && ready) return Ok{};
  auto bytes = read_bytes(s.from, s.buffer);
  if (!bytes)
    return std::move(bytes).error().with_context("copying '" + s.name + "' off its device");
  if (bytes->empty()) return Ok{};
  if (s.place == 0) return write(s.buffer, *bytes);
  auto m = mirror(s.place, s.buffer, poison);
  if (!m) return std::move(m).error();
  if (auto st = (*m)->upload_at(0, *bytes); !st) return st;
  ready = param;
  return Ok{};
}

Status PlanRunner::helper_launch(const PlanStep& s, bool poison) {
  const CompiledGraph::Parts::Helper& h = p_.helpers.at(static_cast<size_t>(s.place - 1));
  std::vector<uint64_t> addresses;
  for (int b : s.buffers) {
    auto m = mirror(s.place, b, poison);
    if (!m) return std::move(m).error();
    addresses.push_back((*m)->address());
  }
  kiln_launch_args args{
      sizeof(args), s.code_name().c_str(), addresses.data(), addresses.size(), nullptr, 0, nullptr};
  auto calls = h.plugin->exclusive();
  return h.plugin->check(
      h.plugin->api().launch(h.executables.at(static_cast<size_t>(s.executable)), &args),
      "launch of " + s.name + " on " + h.plugin->name());
}

Result<HostTensor> PlanRunner::download(int b, const TensorType& type) const {
  auto bytes = own_bytes(b);
  if (!bytes) return std::move(bytes).error();
  return HostTensor::from_bytes(type.dtype, type.sizes, std::move(*bytes));
}

Result<std::vector<std::byte>> PlanRunner::own_bytes(int b) const {
  const LoopBuffer& lb = p_.program.buffers.at(static_cast<size_t>(b));
  std::vector<std::byte> bytes(static_cast<size_t>(buffer_bytes(lb)));
  if (bytes.empty()) return bytes;
  if (bound(b)) {
    const kiln_plugin_api& api = p_.plugin->api();
    if (auto s = p_.plugin->check(api.copy_device_to_host(p_.plugin->instance(), p_.device, nullptr,
                                                          bytes.data(), address(b), bytes.size()),
                                  "copy_device_to_host");
        !s)
      return std::move(s).error();
  } else if (arena_offset(b) >= 0) {
    if (auto s = arena_->download_at(static_cast<uint64_t>(arena_offset(b)), bytes); !s)
      return std::move(s).error();
  } else {
    const auto& buf = buffers_.at(static_cast<size_t>(b));
    const auto& res = p_.resident.at(static_cast<size_t>(b));
    const DeviceBuffer* d = buf ? &*buf : res ? &*res : nullptr;
    if (!d) return Error::internal("buffer '" + lb.name + "' is read before it exists");
    if (auto s = d->download_at(0, bytes); !s) return std::move(s).error();
  }
  return bytes;
}

Status PlanRunner::write(int b, std::span<const std::byte> bytes) const {
  if (bound(b)) {
    const kiln_plugin_api& api = p_.plugin->api();
    return p_.plugin->check(api.copy_host_to_device(p_.plugin->instance(), p_.device, nullptr,
                                                    address(b), bytes.data(), bytes.size()),
                            "copy_host_to_device");
  }
  if (arena_offset(b) >= 0) return arena_->upload_at(static_cast<uint64_t>(arena_offset(b)), bytes);
  const auto& buf = buffers_.at(static_cast<size_t>(b));
  if (!buf) return Error::internal("buffer " + std::to_string(b) + " is written before it exists");
  return buf->upload_at(0, bytes);
}

namespace {

// Waits for `device`'s work through a stream of its own.
Status wait_for(const Plugin& plugin, uint32_t device) {
  const kiln_plugin_api& api = plugin.api();
  if (!api.stream_create || !api.stream_synchronize || !api.stream_destroy) return Ok{};
  kiln_stream* stream = nullptr;
  if (auto s = plugin.check(api.stream_create(plugin.instance(), device, &stream), "stream_create");
      !s)
    return s;
  auto s = plugin.check(api.stream_synchronize(stream), "waiting for the device");
  api.stream_destroy(stream);
  return s;
}

}  // namespace

Status PlanRunner::finish() {
  if (copies_)
    if (auto s = copies_->settle(); !s) return s;
  for (const CompiledGraph::Parts::Helper& h : p_.helpers) {
    auto calls = h.plugin->exclusive();
    if (auto s = wait_for(*h.plugin, h.device); !s) return s;
  }
  return wait_for(*p_.plugin, p_.device);
}

Result<std::vector<HostTensor>> PlanRunner::outputs() {
  outputs_early_ = false;
  const bool any_bound = std::any_of(p_.program.outputs.begin(), p_.program.outputs.end(),
                                     [&](int b) { return bound(b); });
  if (staged() && !any_bound) return staged_outputs();
  std::vector<HostTensor> outs;
  for (size_t i = 0; i < p_.program.outputs.size(); ++i) {
    const TensorType& t = p_.graph.type(p_.graph.outputs[i]);
    auto h = download(p_.program.outputs[i], TensorType::contiguous(t.dtype, t.sizes));
    if (!h) return std::move(h).error();
    outs.push_back(std::move(*h));
  }
  return outs;
}

}  // namespace kiln
