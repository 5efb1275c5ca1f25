#include "core/runtime/compiled_graph_cache.h"

#include <algorithm>

#include "core/expr/simplify.h"
#include "core/graph/graph_binary.h"
#include "core/lower/loop_program_binary.h"
#include "core/lower/matmul_kernel.h"
#include "core/sched/mask_ranges.h"

namespace kiln {
namespace {

void write_failures(ByteWriter& out, const std::vector<FusionFailure>& failures) {
  out.u64(failures.size());
  for (const FusionFailure& f : failures) {
    out.string(f.producer);
    out.string(f.consumer);
    out.u8(static_cast<uint8_t>(f.category));
    out.string(f.detail);
  }
}

std::vector<FusionFailure> read_failures(ByteReader& in) {
  std::vector<FusionFailure> failures(in.count(25));
  for (FusionFailure& f : failures) {
    f.producer = in.string();
    f.consumer = in.string();
    f.category = in.enumerator(FusionCategory::Unknown);
    f.detail = in.string();
  }
  return failures;
}

bool buffer_holds(const LoopBuffer& b, DType dtype, int64_t elements) {
  return b.dtype == dtype && b.elements == elements;
}

// A generated kernel's loops and accesses, proven inside its buffers by interval bounds over
// the loop ranges (and the checked ranges of indirect indices), narrowed for a masked access
// by what its mask guards: a forged range or index cannot make a kernel read or write outside
// its buffers. Empty when all hold.
std::string access_outside_buffer(const LoopKernel& k, const std::vector<LoopBuffer>& buffers) {
  if (k.kind == LoopKernelKind::Extern) return "";
  constexpr int64_t kMaxIterations = int64_t{1} << 40;
  int64_t iterations = 1;
  for (const Shape* dims : {&k.ranges, &k.reduction_ranges})
    for (int64_t size : *dims) {
      if (size < 0 || (size > 0 && iterations > kMaxIterations / size))
        return "kernel '" + k.name + "' has a loop range out of bounds";
      iterations *= size;
    }
  if (iterations == 0) return "";
  const VarRanges ranges = loop_var_ranges(k);
  for (const LoopOp& op : k.body) {
    if (!accesses_buffer(op)) continue;
    if (op.buffer < 0 || static_cast<size_t>(op.buffer) >= buffers.size())
      return "kernel '" + k.name + "' names no buffer";
    VarRanges where = ranges;
    std::map<std::string, Interval> guarded;
    narrow_by_mask(k.body, op.mask, where, &guarded);
    bool never = false;
    for (const auto& [name, r] : where) never = never || r.low > r.high;
    if (never) continue;
    if (auto g = guarded.find(op.index.to_string()); g != guarded.end()) {
      const Interval whole = bounds(op.index, where);
      if (std::max(whole.low, g->second.low) > std::min(whole.high, g->second.high))
        continue;  // the mask is never on
    }
    // A guarded index inside this one (a flat position's row where a cat's half is read)
    // counts with the bounds its mask gives it.
    std::vector<KnownBound> known;
    for (const LoopOp& def : k.body)
      if (def.kind == LoopOpKind::Index)
        if (auto g = guarded.find(def.index.to_string()); g != guarded.end())
          known.push_back({def.index, g->second});
    const Interval at = bounds(op.index, where, known);
    if (at.low < 0 || at.high >= buffers[static_cast<size_t>(op.buffer)].elements)
      return "kernel '" + k.name + "' reaches outside buffer '" +
             buffers[static_cast<size_t>(op.buffer)].name + "' (" +
             std::to_string(buffers[static_cast<size_t>(op.buffer)].elements) +
             " elements): index " + op.index.to_string() + " in [" + std::to_string(at.low) + ", " +
             std::to_string(at.high) + "]";
  }
  return "";
}

// What running the program takes for granted about its buffers: an input or parameter
// buffer holds one of the graph's inputs or parameters, whole; an output buffer, and each
// tensor a host step moves, is that value contiguous. Empty when all hold.
std::string program_mismatch(const Graph& g, const LoopProgram& p,
                             const std::vector<std::string>& externs) {
  auto listed = [](const std::vector<ValueRef>& refs, ValueRef r) {
    return std::find(refs.begin(), refs.end(), r) != refs.end();
  };
  for (const LoopBuffer& b : p.buffers) {
    if (b.kind == BufferKind::Temp) continue;
    if (b.kind == BufferKind::RandomState) {
      if (!buffer_holds(b, DType::I64, 2)) return "buffer '" + b.name + "' is no random state";
      continue;
    }
    const bool input = b.kind == BufferKind::Input;
    if (!listed(input ? g.inputs : g.params, b.value))
      return "buffer '" + b.name + "' holds no graph " + (input ? "input" : "parameter");
    const TensorType& t = g.type(b.value);
    if (!buffer_holds(b, t.dtype, storage_extent(t)))
      return "buffer '" + b.name + "' does not hold " + t.to_string();
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const TensorType& t = g.type(g.outputs[i]);
    if (!buffer_holds(p.buffers[static_cast<size_t>(p.outputs[i])], t.dtype, t.numel()))
      return "output " + std::to_string(i) + " has no buffer of " + t.to_string();
  }
  for (const LoopKernel& k : p.kernels)
    if (std::string why = access_outside_buffer(k, p.buffers); !why.empty()) return why;
  for (const LoopKernel& k : p.kernels) {
    if (k.kind != LoopKernelKind::Extern || k.node < 0) continue;
    // A library call the plugin makes reads views through its own offsets and strides, and
    // the plugin checks each range it touches against its memory.
    if (k.extern_name != "reference" && extern_available(externs, k)) continue;
    std::vector<int> buffers = k.extern_inputs;
    buffers.insert(buffers.end(), k.extern_outputs.begin(), k.extern_outputs.end());
    const Node& node = g.nodes[static_cast<size_t>(k.node)];
    std::vector<ValueRef> values = tensor_args(node);
    values.insert(values.end(), node.outputs.begin(), node.outputs.end());
    // A library call runs on the host when the plugin lacks it: its buffers are its node's.
    if (buffers.size() != values.size()) return "kernel '" + k.name + "' moves other tensors";
    const size_t inputs = k.extern_inputs.size();
    for (size_t i = 0; i < values.size(); ++i) {
      const TensorType& t = g.type(values[i]);
      // An input may be a view (a weight broadcast over a batch); outputs are dense.
      const int64_t elements = i < inputs ? storage_extent(t) : t.numel();
      if (!buffer_holds(p.buffers[static_cast<size_t>(buffers[i])], t.dtype, elements))
        return "kernel '" + k.name + "' buffer " + std::to_string(i) + " is not " + t.to_string();
    }
  }
  return "";
}

}  // namespace

std::string encode_compiled_graph(const Graph& decomposed, const LoopProgram& program,
                                  const CompiledGraphRecord& r) {
  ByteWriter out;
  out.string(kCompiledGraphFormat);
  write_graph(out, decomposed);
  write_loop_program(out, program);
  out.strings(r.kernel_configs);
  out.boolean(r.asked_externs);
  out.strings(r.externs);
  out.strings(r.fallbacks);
  out.u64(r.inlined);
  out.u64(r.merged);
  write_failures(out, r.failures);
  out.i64(r.bytes_unfused);
  out.i64(r.bytes_fused);
  return out.bytes();
}

Result<DecodedGraph> decode_compiled_graph(std::string_view payload,
                                           std::shared_ptr<const OpRegistry> registry) {
  ByteReader in(payload);
  if (in.string() != kCompiledGraphFormat || !in.ok())
    return Error::internal("compiled graph entry is not in the " +
                           std::string(kCompiledGraphFormat) + " format");
  auto graph = read_graph(in, std::move(registry));
  if (!graph) return std::move(graph).error();
  auto program = read_loop_program(in, *graph);
  if (!program) return std::move(program).error();
  CompiledGraphRecord r;
  r.kernel_configs = in.strings();
  r.asked_externs = in.boolean();
  r.externs = in.strings();
  r.fallbacks = in.strings();
  r.inlined = in.u64();
  r.merged = in.u64();
  r.failures = read_failures(in);
  r.bytes_unfused = in.i64();
  r.bytes_fused = in.i64();
  if (!in.ok() || !in.at_end() || r.bytes_unfused < 0 || r.bytes_fused < 0)
    return Error::internal("compiled graph entry is truncated, damaged or has bytes past its end");
  if (const std::string why = program_mismatch(*graph, *program, r.externs); !why.empty())
    return Error::internal("compiled graph entry: " + why);
  return DecodedGraph{std::move(*graph), std::move(*program), std::move(r)};
}

}  // namespace kiln
