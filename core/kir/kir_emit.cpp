#include "core/kir/kir_emit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln {

static_assert(static_cast<int>(DType::F64) == static_cast<int>(kir::DType::F64) &&
                  static_cast<int>(DType::BF16) == static_cast<int>(kir::DType::BF16),
              "core and KIR dtypes share their numbering (extern dtype attributes rely on it)");

kir::DType to_kir(DType d) {
  return static_cast<kir::DType>(static_cast<int>(d));
}

kir::Expr to_kir(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Const:
      return kir::Expr::constant(e.value());
    case ExprKind::Var:
      return kir::Expr::var(e.name());
    default:
      break;
  }
  static const kir::Expr::Kind kinds[] = {kir::Expr::Const, kir::Expr::Var,      kir::Expr::Add,
                                          kir::Expr::Mul,   kir::Expr::FloorDiv, kir::Expr::Mod,
                                          kir::Expr::Min,   kir::Expr::Max};
  std::vector<kir::Expr> operands;
  for (const Expr& o : e.operands()) operands.push_back(to_kir(o));
  return kir::Expr::node(kinds[static_cast<int>(e.kind())], std::move(operands));
}

std::string number_text(double v, DType dtype) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (!is_floating(dtype) && v == std::trunc(v) && std::fabs(v) < 9.2e18) {
    return std::to_string(static_cast<int64_t>(v));
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

namespace {

kir::OpKind to_kir(LoopOpKind k) {
  return static_cast<kir::OpKind>(static_cast<int>(k));
}
static_assert(static_cast<int>(LoopOpKind::Scatter) == static_cast<int>(kir::OpKind::Scatter));
static_assert(static_cast<int>(LoopOpKind::Scan) == static_cast<int>(kir::OpKind::Scan));

}  // namespace

EmittedKernel emit_kir(const LoopKernel& k, const LoopProgram& program) {
  EmittedKernel out;
  kir::Kernel& kk = out.kernel;
  kk.name = k.name;
  kk.kind = k.kind == LoopKernelKind::Extern      ? "extern"
            : k.kind == LoopKernelKind::Reduction ? "reduction"
                                                  : "pointwise";
  kk.extern_name = k.extern_name;
  kk.ranges = k.ranges;
  kk.reduction_ranges = k.reduction_ranges;
  kk.attrs = k.attrs;
  const std::vector<int> reads = kernel_reads(k), writes = kernel_writes(k);
  std::map<int, std::string> names;
  auto add = [&](int b, const std::string& name, kir::Role role) {
    const LoopBuffer& lb = program.buffers.at(static_cast<size_t>(b));
    kk.buffers.push_back({name, to_kir(lb.dtype), lb.elements, role});
    names[b] = name;
    out.buffers.push_back(b);
  };
  for (size_t i = 0; i < reads.size(); ++i) {
    const bool also_written = std::find(writes.begin(), writes.end(), reads[i]) != writes.end();
    add(reads[i], "in" + std::to_string(i), also_written ? kir::Role::InOut : kir::Role::In);
  }
  size_t out_count = 0;
  for (int b : writes) {
    if (!names.contains(b)) add(b, "out" + std::to_string(out_count++), kir::Role::Out);
  }
  for (const LoopOp& op : k.body) {
    kir::Op ko;
    ko.kind = to_kir(op.kind);
    ko.id = op.id;
    ko.dtype = to_kir(op.dtype);
    ko.args = op.args;
    ko.mask = op.mask;
    ko.number = op.number;
    switch (op.kind) {
      case LoopOpKind::Load:
        ko.name = names.at(op.buffer);
        ko.index = to_kir(op.index);
        if (op.mask >= 0) ko.other = number_text(op.other, op.dtype);
        break;
      case LoopOpKind::Store:
        ko.name = names.at(op.buffer);
        ko.index = to_kir(op.index);
        break;
      case LoopOpKind::Scatter:
        ko.name = names.at(op.buffer);
        ko.index = to_kir(op.index);
        ko.combine = op.name;
        break;
      case LoopOpKind::Index:
        ko.index = to_kir(op.index);
        break;
      case LoopOpKind::Const:
        ko.literal = number_text(op.value, op.dtype);
        break;
      default:
        ko.name = op.name;
        break;
    }
    kk.body.push_back(std::move(ko));
  }
  return out;
}

std::vector<kir::Kernel> emit_kir_kernels(const LoopProgram& program) {
  std::vector<kir::Kernel> kernels;
  for (const LoopKernel& k : program.kernels)
    if (k.kind != LoopKernelKind::Extern) kernels.push_back(emit_kir(k, program).kernel);
  return kernels;
}

}  // namespace kiln
