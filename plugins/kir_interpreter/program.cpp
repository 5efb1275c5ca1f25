#include "program.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "accumulator.h"

namespace kiln::interp {

namespace {

struct Preparer {
  const kir::Kernel& kernel;
  Program& program;
  std::map<int, int> slot_of;  // %id -> its step
  std::map<std::string, int> buffer_of;

  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument("kernel " + kernel.name + ": " + why);
  }

  int slot(int id) const {
    auto it = slot_of.find(id);
    if (it == slot_of.end()) fail("%" + std::to_string(id) + " is used before it is defined");
    return it->second;
  }

  IndexNode index(const kir::Expr& e) const {
    IndexNode n;
    switch (e.kind) {
      case kir::Expr::Const:
        n.value = e.value;
        return n;
      case kir::Expr::Var: {
        const int64_t number = std::stoll(e.name.substr(1));
        n.kind = e.name[0] == 'x' ? IndexNode::X : e.name[0] == 'r' ? IndexNode::R : IndexNode::T;
        n.value = n.kind == IndexNode::T ? slot(static_cast<int>(number)) : number;
        return n;
      }
      case kir::Expr::Add:
        n.kind = IndexNode::Add;
        break;
      case kir::Expr::Mul:
        n.kind = IndexNode::Mul;
        break;
      case kir::Expr::FloorDiv:
        n.kind = IndexNode::FloorDiv;
        break;
      case kir::Expr::Mod:
        n.kind = IndexNode::Mod;
        break;
      case kir::Expr::Min:
        n.kind = IndexNode::Min;
        break;
      case kir::Expr::Max:
        n.kind = IndexNode::Max;
        break;
    }
    for (const kir::Expr& o : e.operands) n.operands.push_back(index(o));
    return n;
  }

  int buffer(const std::string& name) const {
    auto it = buffer_of.find(name);
    if (it == buffer_of.end()) fail("no buffer '" + name + "'");
    return it->second;
  }

  // The level of, and whether anything varies along the reduction in, an index expression.
  void depend_on(const IndexNode& n, Step& st) const {
    if (n.kind == IndexNode::R) st.varies = true;
    if (n.kind == IndexNode::T) depend_on_value(static_cast<int>(n.value), st);
    for (const IndexNode& o : n.operands) depend_on(o, st);
  }

  void depend_on_value(int s, Step& st) const {
    const Step& from = program.steps.at(static_cast<size_t>(s));
    st.level = std::max(st.level, from.level);
    st.varies = st.varies || from.varies;
  }

  Step step(const kir::Op& op) {
    Step st;
    st.kind = op.kind;
    st.dtype = op.dtype;
    for (int id : op.args) st.args.push_back(slot(id));
    if (op.mask >= 0) st.mask = slot(op.mask);
    st.operand = st.args.empty() ? op.dtype : program.steps[static_cast<size_t>(st.args[0])].dtype;
    switch (op.kind) {
      case kir::OpKind::Load:
        st.buffer = buffer(op.name);
        st.index = index(op.index);
        if (op.mask >= 0 && !parse_literal(op.other, op.dtype, st.constant))
          fail("bad masked load value '" + op.other + "'");
        break;
      case kir::OpKind::Store:
      case kir::OpKind::Scatter:
        st.buffer = buffer(op.name);
        st.dtype = program.buffers[static_cast<size_t>(st.buffer)].dtype;
        st.index = index(op.index);
        st.combine = op.combine;
        if (op.kind == kir::OpKind::Scatter &&
            std::none_of(std::begin(kir::kScatterCombines), std::end(kir::kScatterCombines),
                         [&](const char* c) { return op.combine == c; }))
          fail("unknown scatter combine '" + op.combine + "'");
        break;
      case kir::OpKind::Const:
        if (!parse_literal(op.literal, op.dtype, st.constant))
          fail("bad constant '" + op.literal + "'");
        break;
      case kir::OpKind::Index:
        st.index = index(op.index);
        break;
      case kir::OpKind::Reduce:
      case kir::OpKind::Scan: {
        const Combine c = combine_of(op.name);
        const bool scannable =
            c == Combine::Sum || c == Combine::Prod || c == Combine::Max || c == Combine::Min;
        if (op.kind == kir::OpKind::Scan && !scannable) fail("no scan of kind '" + op.name + "'");
        if (!program.reduction) fail(op.name + " outside a reduction kernel");
        st.combine = op.name;
        st.accumulator = program.accumulators++;
        break;
      }
      case kir::OpKind::Extract: {
        const Step& from = program.steps[static_cast<size_t>(st.args.at(0))];
        if (from.kind != kir::OpKind::Reduce || from.combine != "welford")
          fail("extract reads a value that is not a welford reduction");
        st.number = op.number;
        break;
      }
      case kir::OpKind::CheckIndex:
        st.number = op.number;
        break;
      case kir::OpKind::Math:
        try {
          st.fn = math_fn(op.name, st.operand);
        } catch (const std::invalid_argument& e) {
          fail(e.what());
        }
        if (is_unary(st.fn) != (st.args.size() == 1))
          fail(op.name + " with " + std::to_string(st.args.size()) + " operands");
        break;
      case kir::OpKind::Cast:
      case kir::OpKind::Where:
        break;
    }
    for (int a : st.args) depend_on_value(a, st);
    if (st.mask >= 0) depend_on_value(st.mask, st);
    depend_on(st.index, st);
    if (op.kind == kir::OpKind::Reduce) {
      st.level += 1;
      st.varies = false;
    }
    if (op.kind == kir::OpKind::Scan) st.varies = true;
    return st;
  }
};

}  // namespace

Program prepare(const kir::Kernel& kernel) {
  if (kernel.kind == "extern")
    throw std::invalid_argument("kernel " + kernel.name + " is a library call (" +
                                kernel.extern_name + "): the interpreter has no libraries");
  Program p;
  p.name = kernel.name;
  p.reduction = kernel.kind == "reduction";
  p.buffers = kernel.buffers;
  p.ranges = kernel.ranges;
  p.reduction_ranges = kernel.reduction_ranges;
  Preparer preparer{kernel, p, {}, {}};
  for (size_t b = 0; b < kernel.buffers.size(); ++b)
    preparer.buffer_of[kernel.buffers[b].name] = static_cast<int>(b);
  for (const kir::Op& op : kernel.body) {
    p.steps.push_back(preparer.step(op));
    if (op.id >= 0) preparer.slot_of[op.id] = static_cast<int>(p.steps.size() - 1);
  }
  int levels = 1;
  for (const Step& s : p.steps) levels = std::max(levels, s.level + 1);
  p.once.resize(static_cast<size_t>(levels));
  p.walk.resize(static_cast<size_t>(levels));
  // A walk computes again the per-element values of earlier levels it reads (softmax's
  // quotient reads x again): pure ops only, so no store, accumulation or scan runs twice.
  const auto pure = [](const Step& st) {
    return st.kind != kir::OpKind::Store && st.kind != kir::OpKind::Scatter &&
           st.kind != kir::OpKind::Reduce && st.kind != kir::OpKind::Scan;
  };
  const auto walk_level = [](const Step& st) {
    return static_cast<size_t>(st.kind == kir::OpKind::Reduce ? st.level - 1 : st.level);
  };
  for (size_t level = 0; level < p.walk.size(); ++level) {
    const bool walks = std::any_of(p.steps.begin(), p.steps.end(), [&](const Step& st) {
      return (st.kind == kir::OpKind::Reduce || st.varies) && walk_level(st) == level;
    });
    for (size_t s = 0; s < p.steps.size(); ++s) {
      const Step& st = p.steps[s];
      const int at = static_cast<int>(s);
      const size_t own = walk_level(st);
      if (st.kind == kir::OpKind::Reduce || st.varies) {
        if (walks && (own == level || (own < level && pure(st)))) p.walk[level].push_back(at);
      } else if (own == level) {
        p.once[level].push_back(at);
      }
    }
  }
  return p;
}

}  // namespace kiln::interp
