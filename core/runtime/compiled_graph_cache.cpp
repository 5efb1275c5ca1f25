#include "core/runtime/compiled_graph_cache.h"

#include "core/config/options_key.h"
#include "core/graph/graph_binary.h"
#include "core/graph/graph_dump.h"
#include "core/kir/kir_hash.h"
#include "core/lower/loop_program_binary.h"
#include "core/support/build_id.h"

namespace kiln {
namespace {

// First bytes of every entry: a reader of another format stops here.
constexpr std::string_view kFormat = "kiln.compiled/1";

void write_strings(ByteWriter& out, const std::vector<std::string>& v) {
  out.u64(v.size());
  for (const std::string& s : v) out.string(s);
}

std::vector<std::string> read_strings(ByteReader& in) {
  std::vector<std::string> v(in.count(8));
  for (std::string& s : v) s = in.string();
  return v;
}

void write_ids(ByteWriter& out, const std::vector<int>& v) {
  out.u64(v.size());
  for (int x : v) out.i64(x);
}

std::vector<int> read_ids(ByteReader& in) {
  std::vector<int> v(in.count(8));
  for (int& x : v) x = in.i32();
  return v;
}

void write_stats(ByteWriter& out, const CompileStats& s) {
  for (size_t n : {s.kernels, s.externs, s.host_steps, s.inlined, s.merged}) out.u64(n);
  for (int64_t n : {s.bytes_unfused, s.bytes_fused, s.arena_bytes, s.naive_bytes}) out.i64(n);
  out.i64(s.in_place);
  out.u64(s.failures.size());
  for (const FusionFailure& f : s.failures) {
    out.string(f.producer);
    out.string(f.consumer);
    out.u8(static_cast<uint8_t>(f.category));
    out.string(f.detail);
  }
  write_strings(out, s.fallbacks);
}

void read_stats(ByteReader& in, CompileStats& s) {
  for (size_t* n : {&s.kernels, &s.externs, &s.host_steps, &s.inlined, &s.merged}) *n = in.u64();
  for (int64_t* n : {&s.bytes_unfused, &s.bytes_fused, &s.arena_bytes, &s.naive_bytes})
    *n = in.i64();
  s.in_place = in.i32();
  s.failures.resize(in.count(25));
  for (FusionFailure& f : s.failures) {
    f.producer = in.string();
    f.consumer = in.string();
    const uint8_t c = in.u8();
    if (c > static_cast<uint8_t>(FusionCategory::Unknown)) in.fail();
    f.category = static_cast<FusionCategory>(in.ok() ? c : 0);
    f.detail = in.string();
  }
  s.fallbacks = read_strings(in);
  if (s.arena_bytes < 0) in.fail();
}

void write_step(ByteWriter& out, const PlanStep& s) {
  out.u8(static_cast<uint8_t>(s.kind));
  out.string(s.name);
  write_ids(out, s.buffers);
  out.u64(s.params.size());
  for (int64_t v : s.params) out.i64(v);
  for (int v : {s.node, s.buffer, s.kernel, s.executable}) out.i64(v);
  out.boolean(s.in_place);
}

PlanStep read_step(ByteReader& in) {
  PlanStep s;
  const uint8_t kind = in.u8();
  if (kind > static_cast<uint8_t>(PlanStep::Kind::Free)) in.fail();
  s.kind = static_cast<PlanStep::Kind>(in.ok() ? kind : 0);
  s.name = in.string();
  s.buffers = read_ids(in);
  s.params.resize(in.count(8));
  for (int64_t& v : s.params) v = in.i64();
  for (int* v : {&s.node, &s.buffer, &s.kernel, &s.executable}) *v = in.i32();
  s.in_place = in.boolean();
  return s;
}

// Tensors a host step moves: its node's tensor arguments, then its outputs.
size_t host_step_buffers(const Node& node) {
  size_t n = node.outputs.size();
  for (const ArgValue& a : node.args) {
    if (std::holds_alternative<ValueRef>(a)) ++n;
    if (const auto* l = std::get_if<TensorList>(&a))
      for (const auto& item : l->items) n += item.has_value();
  }
  return n;
}

// Every index a step follows at run time exists: buffers, nodes, kernels, executables, and
// each arena slice lies inside the arena.
bool plan_holds(const CompiledGraph::Parts& p, size_t executables) {
  const size_t buffers = p.program.buffers.size();
  auto in_range = [](int i, size_t n) { return i >= 0 && static_cast<size_t>(i) < n; };
  for (const PlanStep& s : p.plan) {
    for (int b : s.buffers)
      if (!in_range(b, buffers)) return false;
    switch (s.kind) {
      case PlanStep::Kind::Allocate:
      case PlanStep::Kind::Free:
        if (!in_range(s.buffer, buffers)) return false;
        break;
      case PlanStep::Kind::Launch:
        if (!in_range(s.executable, executables) || !in_range(s.kernel, p.program.kernels.size()))
          return false;
        break;
      case PlanStep::Kind::Extern:
        if (!in_range(s.kernel, p.program.kernels.size())) return false;
        break;
      case PlanStep::Kind::Host:
        if (!in_range(s.node, p.graph.nodes.size()) ||
            s.buffers.size() != host_step_buffers(p.graph.nodes[static_cast<size_t>(s.node)]))
          return false;
        break;
    }
  }
  if (p.arena_offset.size() != buffers) return false;
  for (size_t b = 0; b < buffers; ++b) {
    const int64_t at = p.arena_offset[b];
    if (at < -1) return false;
    if (at >= 0 &&
        (at > p.stats.arena_bytes || buffer_bytes(p.program.buffers[b]) > p.stats.arena_bytes - at))
      return false;
  }
  return true;
}

}  // namespace

std::optional<CacheKey> compiled_graph_key(const Graph& graph, const Plugin& plugin,
                                           uint32_t device, const ScheduleOptions& schedule,
                                           const AutotuneOptions& autotune) {
  const std::string core = core_build_id();
  if (core.empty()) return std::nullopt;
  // The dump names every op, argument and type; input ranges steer random test inputs only,
  // but they travel in the entry, so they are part of its key.
  std::string text = dump_graph(graph);
  for (ValueRef r : graph.inputs)
    if (const auto& range = graph.value(r).random_range)
      text += "range %" + graph.value(r).name + " " + std::to_string(range->first) + " " +
              std::to_string(range->second) + "\n";
  return CacheKey{"graphs",
                  {{"graph", kir_hash(text)},
                   {"device", device_label(plugin, device)},
                   {"compiler", plugin.attributes().compiler_fingerprint},
                   {"schedule", schedule_key_text(schedule)},
                   {"tuning", tuning_key_text(autotune)},
                   {"core", core},
                   {"format", std::string(kFormat)}}};
}

std::string encode_compiled_graph(const CompiledGraph::Parts& p, const CompiledGraphRecord& r) {
  ByteWriter out;
  out.string(kFormat);
  write_graph(out, p.graph);
  write_loop_program(out, p.program);
  out.u64(p.plan.size());
  for (const PlanStep& s : p.plan) write_step(out, s);
  out.u64(p.arena_offset.size());
  for (int64_t v : p.arena_offset) out.i64(v);
  out.string(p.kir_text);
  write_strings(out, p.kernel_configs);
  write_stats(out, p.stats);
  out.u64(r.units.size());
  for (const CompileUnit& u : r.units) {
    out.string(u.text);
    out.string(u.config);
    write_strings(out, u.names);
  }
  out.boolean(r.asked_externs);
  write_strings(out, r.externs);
  return out.bytes();
}

Result<CompiledGraphRecord> decode_compiled_graph(std::string_view payload,
                                                  std::shared_ptr<const OpRegistry> registry,
                                                  CompiledGraph::Parts& p) {
  ByteReader in(payload);
  if (in.string() != kFormat || !in.ok())
    return Error::internal("compiled graph entry is not in the " + std::string(kFormat) +
                           " format");
  auto graph = read_graph(in, std::move(registry));
  if (!graph) return std::move(graph).error();
  p.graph = std::move(*graph);
  auto program = read_loop_program(in, p.graph);
  if (!program) return std::move(program).error();
  p.program = std::move(*program);
  p.plan.resize(in.count(40));
  for (PlanStep& s : p.plan) s = read_step(in);
  p.arena_offset.resize(in.count(8));
  for (int64_t& v : p.arena_offset) v = in.i64();
  p.kir_text = in.string();
  p.kernel_configs = read_strings(in);
  read_stats(in, p.stats);
  CompiledGraphRecord r;
  r.units.resize(in.count(24));
  for (CompileUnit& u : r.units) {
    u.text = in.string();
    u.config = in.string();
    u.names = read_strings(in);
  }
  r.asked_externs = in.boolean();
  r.externs = read_strings(in);
  if (!in.ok() || !in.at_end())
    return Error::internal("compiled graph entry is truncated or has bytes past its end");
  if (!plan_holds(p, r.units.size()))
    return Error::internal("compiled graph entry: its plan refers to something that is not there");
  return r;
}

}  // namespace kiln
