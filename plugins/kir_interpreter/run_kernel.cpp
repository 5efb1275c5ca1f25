#include "run_kernel.h"

#include <algorithm>
#include <stdexcept>

#include "accumulator.h"

namespace kiln::interp {

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t product(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return static_cast<int64_t>(n);
}

// Row-major position `flat` into the variables of `dims`.
void unflatten(int64_t flat, const std::vector<int64_t>& dims, std::vector<int64_t>& vars) {
  for (size_t d = dims.size(); d-- > 0;) {
    vars[d] = dims[d] > 0 ? flat % dims[d] : 0;
    flat = dims[d] > 0 ? flat / dims[d] : 0;
  }
}

class Runner {
 public:
  Runner(const Program& p, const std::vector<std::byte*>& base)
      : p_(p),
        base_(base),
        x_(p.ranges.size()),
        r_(p.reduction_ranges.size()),
        values_(p.steps.size()) {
    for (const Step& s : p.steps)
      if (s.accumulator >= 0) accumulators_.emplace_back(combine_of(s.combine), s.operand, s.dtype);
  }

  KernelFault run() {
    const int64_t points = product(p_.ranges);
    for (int64_t at = 0; at < points && fault_.code == KernelFault::None; ++at) {
      unflatten(at, p_.ranges, x_);
      if (p_.reduction)
        row();
      else
        for (size_t s = 0; s < p_.steps.size(); ++s) exec(s);
    }
    return fault_;
  }

 private:
  void row() {
    for (Accumulator& a : accumulators_) a.reset();
    const int64_t length = product(p_.reduction_ranges);
    for (size_t level = 0; level < p_.once.size(); ++level) {
      for (int s : p_.once[level]) exec(static_cast<size_t>(s));
      const std::vector<int>& walk = p_.walk[level];
      if (walk.empty()) continue;
      for (position_ = 0; position_ < length; ++position_) {
        unflatten(position_, p_.reduction_ranges, r_);
        for (int s : walk) exec(static_cast<size_t>(s));
      }
      for (int s : walk) {
        const Step& st = p_.steps[static_cast<size_t>(s)];
        if (st.kind == kir::OpKind::Reduce)
          values_[static_cast<size_t>(s)] =
              accumulators_[static_cast<size_t>(st.accumulator)].result();
      }
    }
  }

  int64_t eval(const IndexNode& n) const {
    switch (n.kind) {
      case IndexNode::Const:
        return n.value;
      case IndexNode::X:
        return x_[static_cast<size_t>(n.value)];
      case IndexNode::R:
        return r_[static_cast<size_t>(n.value)];
      case IndexNode::T: {
        const size_t s = static_cast<size_t>(n.value);
        return as_integer(values_[s], p_.steps[s].dtype);
      }
      default:
        break;
    }
    int64_t v = eval(n.operands.at(0));
    for (size_t k = 1; k < n.operands.size(); ++k) {
      const int64_t w = eval(n.operands[k]);
      switch (n.kind) {
        case IndexNode::Add:  // wrapping, never undefined: an index may be built from any data
          v = static_cast<int64_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(w));
          break;
        case IndexNode::Mul:
          v = static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(w));
          break;
        case IndexNode::FloorDiv:
          v = w == 0 ? 0 : floor_div(v, w);
          break;
        case IndexNode::Mod:
          v = w == 0 ? 0 : v - floor_div(v, w) * w;
          break;
        case IndexNode::Min:
          v = std::min(v, w);
          break;
        default:
          v = std::max(v, w);
          break;
      }
    }
    return v;
  }

  const Value& value(int slot) const { return values_[static_cast<size_t>(slot)]; }
  kir::DType dtype(int slot) const { return p_.steps[static_cast<size_t>(slot)].dtype; }

  bool masked_off(const Step& st) const {
    return st.mask >= 0 && !as_bool(value(st.mask), dtype(st.mask));
  }

  // The element a load, store or scatter addresses, checked against its buffer.
  std::byte* element(const Step& st, int64_t& index) const {
    const kir::Buffer& b = p_.buffers[static_cast<size_t>(st.buffer)];
    index = eval(st.index);
    if (index < 0 || index >= b.elements)
      throw std::out_of_range("kernel " + p_.name + ": element " + std::to_string(index) + " of " +
                              b.name + " is outside its " + std::to_string(b.elements) +
                              " elements");
    return base_[static_cast<size_t>(st.buffer)];
  }

  void exec(size_t s) {
    const Step& st = p_.steps[s];
    Value& out = values_[s];
    const auto arg = [&](size_t k) { return value(st.args.at(k)); };
    int64_t at = 0;
    switch (st.kind) {
      case kir::OpKind::Load: {
        // After a kernel error the element's indices may be stand-ins: read nothing.
        if (masked_off(st) || fault_.code != KernelFault::None) {
          out = st.constant;
          return;
        }
        const kir::Buffer& b = p_.buffers[static_cast<size_t>(st.buffer)];
        // A row-invariant load hoisted before a walk over no elements (a reduction of an
        // empty tensor) has nothing to read, and nothing will use what it reads.
        if (b.elements == 0) {
          out = from_integer(0, st.dtype);
          return;
        }
        const kir::DType stored = b.dtype;
        const std::byte* base = element(st, at);
        out = convert(load_element(base, stored, at), stored, st.dtype);
        return;
      }
      case kir::OpKind::Store:
      case kir::OpKind::Scatter: {
        if (masked_off(st) || fault_.code != KernelFault::None) return;
        std::byte* base = element(st, at);
        Value v = convert(arg(0), st.operand, st.dtype);
        if (st.kind == kir::OpKind::Scatter)
          v = scatter_combine(st.combine, load_element(base, st.dtype, at), v, st.dtype);
        store_element(base, st.dtype, at, v);
        return;
      }
      case kir::OpKind::Const:
        out = st.constant;
        return;
      case kir::OpKind::Index:
        out = from_integer(eval(st.index), st.dtype);
        return;
      case kir::OpKind::Cast:
        out = convert(arg(0), st.operand, st.dtype);
        return;
      case kir::OpKind::Where: {
        const int chosen = as_bool(arg(0), st.operand) ? st.args.at(1) : st.args.at(2);
        out = convert(value(chosen), dtype(chosen), st.dtype);
        return;
      }
      case kir::OpKind::Reduce:
        accumulators_[static_cast<size_t>(st.accumulator)].add(arg(0), position_);
        return;
      case kir::OpKind::Scan: {
        Accumulator& a = accumulators_[static_cast<size_t>(st.accumulator)];
        a.add(arg(0), position_);
        out = a.result();
        return;
      }
      case kir::OpKind::Extract: {
        const Step& from = p_.steps[static_cast<size_t>(st.args.at(0))];
        out = accumulators_[static_cast<size_t>(from.accumulator)].component(st.number, st.dtype);
        return;
      }
      case kir::OpKind::CheckIndex: {
        const int64_t given = as_integer(arg(0), st.operand);
        const int64_t wrapped = given < 0 ? given + st.number : given;
        if (wrapped < 0 || wrapped >= st.number) {
          fault_.raise(KernelFault::IndexOutOfRange, given, st.number);
          out = from_integer(0, st.dtype);
        } else {
          out = from_integer(wrapped, st.dtype);
        }
        return;
      }
      case kir::OpKind::Math:
        out = st.args.size() == 1
                  ? apply_unary(st.fn, arg(0), st.operand, st.dtype, fault_)
                  : apply_binary(st.fn, arg(0), arg(1), st.operand, st.dtype, fault_);
        return;
    }
  }

  const Program& p_;
  const std::vector<std::byte*>& base_;
  std::vector<int64_t> x_, r_;
  std::vector<Value> values_;
  std::vector<Accumulator> accumulators_;
  int64_t position_ = 0;
  KernelFault fault_;
};

}  // namespace

KernelFault run_kernel(const Program& program, const std::vector<std::byte*>& buffers) {
  return Runner(program, buffers).run();
}

}  // namespace kiln::interp
