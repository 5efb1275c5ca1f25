#include "core/lower/lower_graph.h"

#include <exception>

#include "core/lower/attention_library_call.h"
#include "core/lower/program_builder.h"
#include "core/lower/scatter_combine.h"
#include "core/ops/op_def.h"
#include "core/ops/op_error.h"

namespace kiln {
namespace {

std::map<std::string, LowerFn> all_lowerings() {
  std::map<std::string, LowerFn> rules;
  for (auto table :
       {pointwise_lowerings, reduction_lowerings, data_movement_lowerings, matmul_lowerings,
        scatter_lowerings, pool_lowerings, conv_lowerings, pool_backward_lowerings, embed_lowerings,
        upsample_lowerings, distance_lowerings, fold_lowerings, scan_sort_lowerings,
        grid_sampler_lowerings, scatter_combine_lowerings, masked_scatter_lowerings,
        embedding_bag_lowerings, random_lowerings, attention_lowerings}) {
    rules.merge(table());
  }
  return rules;
}

// Storage of an input or parameter as its type lays it out (strides honoured).
void bind_external(ProgramBuilder& pb, const Graph& graph, ValueRef ref, BufferKind kind) {
  const Value& v = graph.value(ref);
  Expr index = Expr::constant(0);
  for (size_t i = 0; i < v.type.sizes.size(); ++i)
    if (v.type.sizes[i] != 1) index = index + dim_var(i) * Expr::constant(v.type.strides[i]);
  const int buffer = pb.add_buffer(v.name, v.type.dtype, storage_extent(v.type), kind, ref);
  pb.set_access(ref, {buffer, index, v.type});
}

void lower_on_host(ProgramBuilder& pb, const Graph& graph, int n) {
  NodeLowering nl(pb, graph, n);
  const Node& node = graph.nodes[static_cast<size_t>(n)];
  LoopKernel k;
  k.name = pb.kernel_name(node);
  k.origin = node.name;
  k.kind = LoopKernelKind::Extern;
  k.extern_name = "reference";
  k.node = n;
  for (ValueRef r : tensor_args(node))
    k.extern_inputs.push_back(nl.contiguous(pb.access(r)).buffer);
  for (size_t o = 0; o < node.outputs.size(); ++o)
    k.extern_outputs.push_back(nl.realize_output(o).buffer);
  pb.emit(std::move(k));
}

}  // namespace

bool lowers_directly(const Graph& graph, const Node& node,
                     const std::vector<std::string>& externs) {
  static const std::map<std::string, LowerFn> rules = all_lowerings();
  const OpDef& op = *node.op;
  if (op.is_primitive()) return false;
  // Attention stays whole only for the plugin's fused call; elsewhere its decomposition
  // (matmul, softmax, matmul) is what the generated kernels fuse.
  if (op.name == kAttentionOp) return attention_call_applies(graph, node, externs);
  return rules.contains(op.name);
}

bool has_lowering_rule(std::string_view op) {
  static const std::map<std::string, LowerFn> rules = all_lowerings();
  return rules.contains(std::string(op));
}

Result<LoweredGraph> lower_graph(const Graph& graph, const std::vector<std::string>& externs,
                                 const LowerOptions& options) {
  const std::map<std::string, LowerFn> rules = all_lowerings();
  ProgramBuilder pb(graph, externs, options);
  LoweredGraph out;
  for (ValueRef r : graph.inputs) bind_external(pb, graph, r, BufferKind::Input);
  for (ValueRef r : graph.params) bind_external(pb, graph, r, BufferKind::Param);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (!node.op->is_primitive() && !rules.contains(node.op->name)) {
      return Error::internal("lower: node '" + node.name + "' (" + node.op->name +
                             ") is a composite; decompose the graph first");
    }
    try {
      auto rule = rules.find(node.op->name);
      NodeLowering nl(pb, graph, static_cast<int>(n));
      const bool lowered = node.op->view && node.op->is_primitive() ? lower_view(nl)
                           : rule != rules.end()                    ? rule->second(nl)
                                                                    : false;
      if (!lowered) {
        out.fallbacks.push_back(node.name + " (" + node.op->name + ")");
        lower_on_host(pb, graph, static_cast<int>(n));
      }
    } catch (const OpError& e) {
      const std::string what = "node '" + node.name + "' (" + node.op->name + "): " + e.message;
      return e.internal ? Error::internal("lower: " + what) : Error::user(what);
    } catch (const std::exception& e) {
      return Error::internal("lower: node '" + node.name + "' (" + node.op->name +
                             "): " + e.what());
    }
  }
  // Every output gets a contiguous buffer of its own that no input or other output shares.
  std::vector<bool> taken(pb.program().buffers.size() + graph.outputs.size() * 2, false);
  for (ValueRef r : graph.outputs) {
    Access a = pb.access(r);
    const auto& buffers = pb.program().buffers;
    const bool own = buffers.at(static_cast<size_t>(a.buffer)).kind == BufferKind::Temp &&
                     pb.is_contiguous_buffer(a) && !taken.at(static_cast<size_t>(a.buffer));
    if (!own) a = pb.copy_to_contiguous(a, graph.value(r).name);
    if (static_cast<size_t>(a.buffer) >= taken.size())
      taken.resize(static_cast<size_t>(a.buffer) + 1);
    taken[static_cast<size_t>(a.buffer)] = true;
    pb.program().outputs.push_back(a.buffer);
  }
  out.program = std::move(pb.program());
  return out;
}

}  // namespace kiln
