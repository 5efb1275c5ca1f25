#include "core/lower/program_builder.h"

#include <algorithm>
#include <kiln/kir.hpp>

#include "core/expr/simplify.h"
#include "core/lower/matmul_kernel.h"
#include "core/ops/op_def.h"
#include "core/support/error.h"

namespace kiln {

ProgramBuilder::ProgramBuilder(const Graph& graph, std::vector<std::string> externs,
                               LowerOptions options)
    : graph_(graph),
      access_(graph.values.size()),
      externs_(std::move(externs)),
      options_(std::move(options)) {}

bool ProgramBuilder::declines_library_call(const std::string& signature) const {
  const std::vector<std::string>& declined = options_.declined;
  return std::find(declined.begin(), declined.end(), signature) != declined.end();
}

bool ProgramBuilder::offers_extern(const std::string& name, DType dtype) const {
  return extern_available(externs_, name, dtype);
}

bool ProgramBuilder::offers_extern_feature(const std::string& name,
                                           const std::string& feature) const {
  return extern_has_feature(externs_, name, feature);
}

int64_t ProgramBuilder::library_dtype(const std::string& name, DType dtype,
                                      bool tf32_allowed) const {
  const bool tf32 = dtype == DType::F32 && tf32_allowed &&
                    extern_available(externs_, name, static_cast<int64_t>(kir::kExternTf32));
  return tf32 ? kir::kExternTf32 : static_cast<int64_t>(dtype);
}

int ProgramBuilder::add_buffer(std::string name, DType dtype, int64_t elements, BufferKind kind,
                               ValueRef value) {
  program_.buffers.push_back({std::move(name), dtype, elements, kind, value});
  return static_cast<int>(program_.buffers.size()) - 1;
}

void ProgramBuilder::set_access(ValueRef value, Access access) {
  access_.at(static_cast<size_t>(value.id)) = std::move(access);
}

bool ProgramBuilder::has_access(ValueRef value) const {
  return access_.at(static_cast<size_t>(value.id)).has_value();
}

const Access& ProgramBuilder::access(ValueRef value) const {
  const auto& a = access_.at(static_cast<size_t>(value.id));
  if (!a) throw Error::internal("lower: value '" + graph_.value(value).name + "' has no storage");
  return *a;
}

int ProgramBuilder::random_state_buffer() {
  if (random_state_ < 0)
    random_state_ = add_buffer("random_state", DType::I64, 2, BufferKind::RandomState);
  return random_state_;
}

std::string ProgramBuilder::kernel_name(const Node& node) {
  std::string op = node.op ? node.op->name : "copy";
  // "aten.add.Tensor" -> "add"
  if (op.rfind("aten.", 0) == 0) op = op.substr(5);
  op = op.substr(0, op.find('.'));
  std::string clean;
  for (char c : op) clean += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return "k" + std::to_string(kernels_named_++) + "_" + clean;
}

bool ProgramBuilder::is_contiguous_buffer(const Access& a) const {
  std::vector<Expr> vars;
  VarRanges ranges;
  for (size_t i = 0; i < a.type.sizes.size(); ++i) {
    vars.push_back(dim_var(i));
    ranges["d" + std::to_string(i)] = {0, std::max<int64_t>(a.type.sizes[i] - 1, 0)};
  }
  const LoopBuffer& b = program_.buffers.at(static_cast<size_t>(a.buffer));
  return b.dtype == a.type.dtype && b.elements == a.type.numel() &&
         simplify(a.index, ranges) == simplify(contiguous_index(a.type.sizes, vars), ranges);
}

Access ProgramBuilder::copy_to_contiguous(const Access& a, const std::string& origin) {
  const Shape& sizes = a.type.sizes;
  KernelBuilder kb("k" + std::to_string(kernels_named_++) + "_copy", origin, sizes);
  const int buffer = add_buffer(origin + "/contiguous", a.type.dtype, a.type.numel());
  const std::vector<Expr> vars = kb.pointwise_vars();
  std::map<std::string, Expr> bindings;
  for (size_t i = 0; i < vars.size(); ++i) bindings["d" + std::to_string(i)] = vars[i];
  const int v = kb.load(a.buffer, a.type.dtype, substitute(a.index, bindings));
  kb.store(buffer, contiguous_index(sizes, vars), v);
  emit(std::move(kb).finish());
  std::vector<Expr> dvars;
  for (size_t i = 0; i < sizes.size(); ++i) dvars.push_back(dim_var(i));
  return {buffer, contiguous_index(sizes, dvars), TensorType::contiguous(a.type.dtype, sizes)};
}

}  // namespace kiln
