#include "core/lower/lower_context.h"

#include <algorithm>

#include "core/expr/simplify.h"
#include "core/lower/program_builder.h"
#include "core/ops/elementwise.h"
#include "core/ops/op_def.h"

namespace kiln {

Expr dim_var(size_t i) {
  return Expr::var("d" + std::to_string(i));
}

Expr contiguous_index(const Shape& sizes, const std::vector<Expr>& vars) {
  const Shape strides = contiguous_strides(sizes);
  Expr index = Expr::constant(0);
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] != 1) index = index + vars.at(i) * Expr::constant(strides[i]);
  }
  return index;
}

std::vector<Expr> unravel_index(const Expr& linear, const Shape& sizes) {
  std::vector<Expr> at(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    at[d] = mod(floordiv(linear, Expr::constant(stride)), Expr::constant(sizes[d]));
    stride *= sizes[d];
  }
  return at;
}

DType compute_dtype(DType d) {
  if (d == DType::F64) return DType::F64;
  if (is_floating(d)) return DType::F32;
  return DType::I64;
}

NodeLowering::NodeLowering(ProgramBuilder& program, const Graph& graph, int node_index)
    : program_(program),
      graph_(graph),
      node_(&graph.nodes.at(static_cast<size_t>(node_index))),
      node_index_(node_index),
      args_(node_->op->schema, node_->args) {}

const TensorType& NodeLowering::in_type(int arg) const {
  return graph_.type(args_.ref(arg));
}

const TensorType& NodeLowering::out_type(size_t k) const {
  return graph_.type(node_->outputs.at(k));
}

const Access& NodeLowering::operand(int arg) const {
  return program_.access(args_.ref(arg));
}

const Node* NodeLowering::producer(int arg) const {
  const Value& v = graph_.value(args_.ref(arg));
  if (v.kind != ValueKind::NodeOutput || v.node < 0) return nullptr;
  return &graph_.nodes.at(static_cast<size_t>(v.node));
}

const Access& NodeLowering::list_operand(int arg, size_t i) const {
  return program_.access(args_.tensor_list(arg).items.at(i).value());
}

KernelBuilder NodeLowering::kernel(const Shape& ranges, const Shape& reduction_ranges) {
  return KernelBuilder(program_.kernel_name(*node_), node_->name, ranges, reduction_ranges);
}

Expr NodeLowering::address(const KernelBuilder& kb, const Access& a,
                           const std::vector<Expr>& idx) const {
  std::map<std::string, Expr> bindings;
  for (size_t i = 0; i < idx.size(); ++i) bindings["d" + std::to_string(i)] = idx[i];
  return kb.simplify_index(substitute(a.index, bindings));
}

int NodeLowering::load(KernelBuilder& kb, const Access& a, const std::vector<Expr>& idx, int mask,
                       double other) const {
  return kb.load(a.buffer, a.type.dtype, address(kb, a, idx), mask, other);
}

int NodeLowering::load_operand(KernelBuilder& kb, int arg, const Shape& out_sizes, DType compute,
                               DType round) const {
  if (!args_.is_tensor(arg)) {
    const DType own = args_.scalar_dtype(arg);
    if (is_floating(compute) || own == DType::F64) {
      return kb.constant(compute, round_to(round, args_.get_float(arg)));
    }
    return kb.constant(compute, static_cast<double>(args_.get_int(arg)));
  }
  const Access& a = operand(arg);
  const std::vector<Expr> vars = kb.pointwise_vars();
  std::vector<Expr> idx;
  const size_t offset = out_sizes.size() - a.type.sizes.size();
  for (size_t i = 0; i < a.type.sizes.size(); ++i) {
    idx.push_back(a.type.sizes[i] == 1 ? Expr::constant(0) : vars.at(offset + i));
  }
  return kb.cast(load(kb, a, idx), compute);
}

Access NodeLowering::realize_output(size_t k) {
  const TensorType& t = out_type(k);
  const ValueRef ref = node_->outputs.at(k);
  const int buffer = program_.add_buffer(graph_.value(ref).name, t.dtype, t.numel());
  std::vector<Expr> vars;
  for (size_t i = 0; i < t.sizes.size(); ++i) vars.push_back(dim_var(i));
  Access a{buffer, contiguous_index(t.sizes, vars), TensorType::contiguous(t.dtype, t.sizes)};
  program_.set_access(ref, a);
  return a;
}

Access packed_access(int buffer, const TensorType& t, const std::vector<size_t>& order) {
  Shape sizes;
  std::vector<Expr> vars;
  for (size_t d : order) {
    sizes.push_back(t.sizes.at(d));
    vars.push_back(dim_var(d));
  }
  return {buffer, contiguous_index(sizes, vars), TensorType::contiguous(t.dtype, t.sizes)};
}

Access NodeLowering::realize_output_in_order(size_t k, const std::vector<size_t>& order) {
  const TensorType& t = out_type(k);
  const ValueRef ref = node_->outputs.at(k);
  const Access a =
      packed_access(program_.add_buffer(graph_.value(ref).name, t.dtype, t.numel()), t, order);
  program_.set_access(ref, a);
  return a;
}

bool NodeLowering::operand_in_own_storage(int arg) const {
  const Access& a = operand(arg);
  const LoopBuffer& b = program_.program().buffers.at(static_cast<size_t>(a.buffer));
  const TensorType& t = in_type(arg);
  return b.dtype == t.dtype && b.elements == storage_extent(t);
}

bool NodeLowering::output_read(size_t k) const {
  return graph_output(k) || !readers(k).empty();
}

std::vector<const Node*> NodeLowering::readers(size_t k) const {
  const ValueRef ref = node_->outputs.at(k);
  std::vector<const Node*> out;
  for (size_t i = static_cast<size_t>(node_index_) + 1; i < graph_.nodes.size(); ++i) {
    const auto args = tensor_args(graph_.nodes[i]);
    if (std::find(args.begin(), args.end(), ref) != args.end()) out.push_back(&graph_.nodes[i]);
  }
  return out;
}

bool NodeLowering::graph_output(size_t k) const {
  const ValueRef ref = node_->outputs.at(k);
  return std::find(graph_.outputs.begin(), graph_.outputs.end(), ref) != graph_.outputs.end();
}

void NodeLowering::store_output(KernelBuilder& kb, int value, size_t k) {
  const TensorType& out = out_type(k);
  const Access o = realize_output(k);
  kb.store(o.buffer, contiguous_index(out.sizes, kb.pointwise_vars()), kb.cast(value, out.dtype));
  emit(std::move(kb).finish());
}

void NodeLowering::define_view(size_t k, int buffer, const Expr& index) {
  const TensorType& t = out_type(k);
  VarRanges ranges;
  for (size_t i = 0; i < t.sizes.size(); ++i)
    ranges["d" + std::to_string(i)] = {0, std::max<int64_t>(t.sizes[i] - 1, 0)};
  program_.set_access(node_->outputs.at(k), {buffer, simplify(index, ranges), t});
}

void NodeLowering::emit(LoopKernel kernel) {
  program_.emit(std::move(kernel));
}

int NodeLowering::temp_buffer(const std::string& suffix, DType dtype, int64_t elements) {
  return program_.add_buffer(node_->name + "/" + suffix, dtype, elements);
}

Access NodeLowering::contiguous(const Access& a) {
  if (program_.is_contiguous_buffer(a)) return a;
  return program_.copy_to_contiguous(a, node_->name);
}

void NodeLowering::fill(int buffer, const Shape& sizes, DType dtype, double value) {
  KernelBuilder kb = kernel(sizes);
  kb.store(buffer, contiguous_index(sizes, kb.pointwise_vars()), kb.constant(dtype, value));
  emit(std::move(kb).finish());
}

int NodeLowering::random_state_buffer() {
  return program_.random_state_buffer();
}

bool NodeLowering::offers_extern(const std::string& name, DType dtype) const {
  return program_.offers_extern(name, dtype);
}

bool NodeLowering::offers_extern_feature(const std::string& name,
                                         const std::string& feature) const {
  return program_.offers_extern_feature(name, feature);
}

bool NodeLowering::declines_library_call(const std::string& signature) const {
  return program_.declines_library_call(signature);
}

bool NodeLowering::deterministic() const {
  return program_.deterministic();
}

int64_t NodeLowering::library_dtype(const std::string& name, DType dtype, bool tf32_allowed) const {
  return program_.library_dtype(name, dtype, tf32_allowed);
}

const LowerOptions& NodeLowering::options() const {
  return program_.options();
}

}  // namespace kiln
