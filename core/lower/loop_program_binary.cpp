#include "core/lower/loop_program_binary.h"

#include <set>

#include "core/graph/graph_binary.h"

namespace kiln {
namespace {

// Deeper index expressions than this are refused: reading them recursively could exhaust
// the stack. Lowering builds a few levels per view; hundreds are never reached.
constexpr int kMaxExprDepth = 256;

void write_expr(ByteWriter& out, const Expr& e) {
  out.u8(static_cast<uint8_t>(e.kind()));
  if (e.kind() == ExprKind::Const) {
    out.i64(e.value());
  } else if (e.kind() == ExprKind::Var) {
    out.string(e.name());
  } else {
    out.u64(e.operands().size());
    for (const Expr& o : e.operands()) write_expr(out, o);
  }
}

Expr read_expr(ByteReader& in, int depth = 0) {
  const ExprKind kind = in.enumerator(ExprKind::Max);
  if (depth > kMaxExprDepth) in.fail();
  if (!in.ok()) return Expr::constant(0);
  switch (kind) {
    case ExprKind::Const:
      return Expr::constant(in.i64());
    case ExprKind::Var:
      return Expr::var(in.string());
    default:
      break;
  }
  const size_t n = in.count(9);
  const bool binary = kind != ExprKind::Add && kind != ExprKind::Mul;
  if (binary ? n != 2 : n == 0) in.fail();
  std::vector<Expr> operands;
  for (size_t i = 0; i < n && in.ok(); ++i) operands.push_back(read_expr(in, depth + 1));
  return in.ok() ? make_expr(kind, std::move(operands)) : Expr::constant(0);
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

void write_op(ByteWriter& out, const LoopOp& op) {
  out.u8(static_cast<uint8_t>(op.kind));
  out.i64(op.id);
  write_dtype(out, op.dtype);
  out.string(op.name);
  write_ids(out, op.args);
  out.i64(op.buffer);
  write_expr(out, op.index);
  out.i64(op.mask);
  out.f64(op.other);
  out.f64(op.value);
  out.i64(op.number);
}

LoopOp read_op(ByteReader& in) {
  LoopOp op;
  op.kind = in.enumerator(LoopOpKind::Scan);
  op.id = in.i32();
  op.dtype = read_dtype(in);
  op.name = in.string();
  op.args = read_ids(in);
  op.buffer = in.i32();
  op.index = read_expr(in);
  op.mask = in.i32();
  op.other = in.f64();
  op.value = in.f64();
  op.number = in.i64();
  return op;
}

// Every buffer a kernel names exists, every SSA operand is defined earlier in the body, and
// a host kernel's node exists.
bool references_hold(const LoopKernel& k, size_t buffers, size_t graph_nodes) {
  auto buffer_ok = [&](int b) { return b >= 0 && static_cast<size_t>(b) < buffers; };
  std::set<int> defined;
  for (const LoopOp& op : k.body) {
    for (int a : op.args)
      if (!defined.count(a)) return false;
    if (op.mask >= 0 && !defined.count(op.mask)) return false;
    if (accesses_buffer(op) && !buffer_ok(op.buffer)) return false;
    if (op.id >= 0) defined.insert(op.id);
  }
  for (int b : k.extern_inputs)
    if (!buffer_ok(b)) return false;
  for (int b : k.extern_outputs)
    if (!buffer_ok(b)) return false;
  return k.node < 0 || static_cast<size_t>(k.node) < graph_nodes;
}

}  // namespace

void write_loop_program(ByteWriter& out, const LoopProgram& program) {
  out.u64(program.buffers.size());
  for (const LoopBuffer& b : program.buffers) {
    out.string(b.name);
    write_dtype(out, b.dtype);
    out.i64(b.elements);
    out.u8(static_cast<uint8_t>(b.kind));
    out.i64(b.value.id);
  }
  out.u64(program.kernels.size());
  for (const LoopKernel& k : program.kernels) {
    out.string(k.name);
    out.string(k.origin);
    out.u8(static_cast<uint8_t>(k.kind));
    out.string(k.extern_name);
    out.i64s(k.ranges);
    out.i64s(k.reduction_ranges);
    out.u64(k.body.size());
    for (const LoopOp& op : k.body) write_op(out, op);
    write_ids(out, k.extern_inputs);
    write_ids(out, k.extern_outputs);
    out.u64(k.attrs.size());
    for (const auto& [key, value] : k.attrs) {
      out.string(key);
      out.i64(value);
    }
    out.i64(k.node);
  }
  write_ids(out, program.outputs);
}

Result<LoopProgram> read_loop_program(ByteReader& in, const Graph& graph) {
  const size_t graph_nodes = graph.nodes.size();
  LoopProgram p;
  p.buffers.resize(in.count(26));
  for (LoopBuffer& b : p.buffers) {
    b.name = in.string();
    b.dtype = read_dtype(in);
    b.elements = in.i64();
    b.kind = in.enumerator(BufferKind::RandomState);
    if (b.elements < 0 || b.elements > kMaxElements) in.fail();
    b.value.id = in.i32();
    const bool stored = b.kind == BufferKind::Input || b.kind == BufferKind::Param;
    if (stored && (b.value.id < 0 || static_cast<size_t>(b.value.id) >= graph.values.size()))
      in.fail();
  }
  p.kernels.resize(in.count(64));
  for (LoopKernel& k : p.kernels) {
    k.name = in.string();
    k.origin = in.string();
    k.kind = in.enumerator(LoopKernelKind::Extern);
    k.extern_name = in.string();
    k.ranges = in.i64s();
    k.reduction_ranges = in.i64s();
    k.body.resize(in.count(60));
    for (LoopOp& op : k.body) op = read_op(in);
    k.extern_inputs = read_ids(in);
    k.extern_outputs = read_ids(in);
    k.attrs.resize(in.count(16));
    for (auto& [key, value] : k.attrs) {
      key = in.string();
      value = in.i64();
    }
    k.node = in.i32();
    if (in.ok() && !references_hold(k, p.buffers.size(), graph_nodes))
      return Error::internal("compiled graph entry: kernel '" + k.name +
                             "' refers to a buffer, value or node that does not exist");
  }
  p.outputs = read_ids(in);
  if (p.outputs.size() != graph.outputs.size()) in.fail();
  for (int b : p.outputs)
    if (b < 0 || static_cast<size_t>(b) >= p.buffers.size()) in.fail();
  if (!in.ok()) return Error::internal("compiled graph entry: the program is truncated or damaged");
  return p;
}

}  // namespace kiln
