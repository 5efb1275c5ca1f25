#include "core/lower/loop_ir_print.h"

#include <fmt/format.h>

namespace kiln {
namespace {

const char* kind_name(BufferKind k) {
  switch (k) {
    case BufferKind::Input:
      return "input";
    case BufferKind::Param:
      return "param";
    case BufferKind::Temp:
      return "temp";
    case BufferKind::RandomState:
      return "random";
  }
  return "?";
}

std::string ids(const std::vector<int>& list, const char* prefix) {
  std::string s;
  for (size_t i = 0; i < list.size(); ++i)
    s += fmt::format("{}{}{}", i ? ", " : "", prefix, list[i]);
  return s;
}

std::string ranges(const Shape& sizes, const char* var) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += fmt::format("{}{}{} < {}", i ? ", " : "", var, i, sizes[i]);
  return s + "]";
}

std::string print_op(const LoopOp& op) {
  const std::string def = fmt::format("%{} = ", op.id);
  const std::string dt(dtype_name(op.dtype));
  const std::string mask =
      op.mask >= 0 ? fmt::format(" mask %{} other {}", op.mask, op.other) : std::string();
  switch (op.kind) {
    case LoopOpKind::Load:
      return fmt::format("{}load {} b{}[{}]{}", def, dt, op.buffer, op.index.to_string(), mask);
    case LoopOpKind::Store:
      return fmt::format("store b{}[{}] {}{}", op.buffer, op.index.to_string(), ids(op.args, "%"),
                         op.mask >= 0 ? fmt::format(" mask %{}", op.mask) : std::string());
    case LoopOpKind::Scatter:
      return fmt::format("scatter {} b{}[{}] {}{}", op.name, op.buffer, op.index.to_string(),
                         ids(op.args, "%"),
                         op.mask >= 0 ? fmt::format(" mask %{}", op.mask) : std::string());
    case LoopOpKind::Const:
      return fmt::format("{}const {} {}", def, dt, op.value);
    case LoopOpKind::Index:
      return fmt::format("{}index {} {}", def, dt, op.index.to_string());
    case LoopOpKind::Cast:
      return fmt::format("{}cast {} {}", def, dt, ids(op.args, "%"));
    case LoopOpKind::Where:
      return fmt::format("{}where {} {}", def, dt, ids(op.args, "%"));
    case LoopOpKind::Reduce:
      return fmt::format("{}reduce {} {} {}", def, op.name, dt, ids(op.args, "%"));
    case LoopOpKind::Scan:
      return fmt::format("{}scan {} {} {}", def, op.name, dt, ids(op.args, "%"));
    case LoopOpKind::Extract:
      return fmt::format("{}extract {} {} {}", def, dt, ids(op.args, "%"), op.number);
    case LoopOpKind::CheckIndex:
      return fmt::format("{}check_index {} {} < {}", def, dt, ids(op.args, "%"), op.number);
    case LoopOpKind::Math:
      return fmt::format("{}{} {} {}", def, op.name, dt, ids(op.args, "%"));
  }
  return "?";
}

std::string print_kernel(const LoopKernel& k) {
  std::string s;
  if (k.kind == LoopKernelKind::Extern) {
    s = fmt::format("kernel {} extern {}({} -> {})", k.name, k.extern_name,
                    ids(k.extern_inputs, "b"), ids(k.extern_outputs, "b"));
    for (const auto& [key, value] : k.attrs) s += fmt::format(" {}={}", key, value);
    return s + fmt::format("  # {}\n", k.origin);
  }
  s = fmt::format("kernel {} {} {}", k.name,
                  k.kind == LoopKernelKind::Pointwise ? "pointwise" : "reduction",
                  ranges(k.ranges, "x"));
  if (k.kind == LoopKernelKind::Reduction) s += " over " + ranges(k.reduction_ranges, "r");
  s += fmt::format("  # {}\n", k.origin);
  for (const LoopOp& op : k.body) s += "  " + print_op(op) + "\n";
  return s;
}

}  // namespace

std::string print_loop_program(const LoopProgram& program) {
  std::string s;
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const LoopBuffer& lb = program.buffers[b];
    s += fmt::format("buffer b{} {} {} {}[{}]\n", b, kind_name(lb.kind), lb.name,
                     dtype_name(lb.dtype), lb.elements);
  }
  for (const LoopKernel& k : program.kernels) s += print_kernel(k);
  s += "outputs " + ids(program.outputs, "b") + "\n";
  return s;
}

}  // namespace kiln
