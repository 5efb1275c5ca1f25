// A KIR kernel prepared for interpretation: value and variable names resolved to slots, math
// names to functions, literals to values, and each op given its level (the reductions it
// depends on) and whether it varies along the reduction. A reduction kernel then runs, per
// row, level by level: the ops that do not vary, then one walk over the row for the ops that
// do (docs/kir.md: "a row is walked once per level").
#pragma once

#include <string>
#include <vector>

#include "math_ops.h"
#include "value.h"

namespace kiln::interp {

struct IndexNode {
  enum Kind { Const, X, R, T, Add, Mul, FloorDiv, Mod, Min, Max };
  Kind kind = Const;
  int64_t value = 0;  // Const: the number; X, R, T: the loop variable or value slot
  std::vector<IndexNode> operands;
};

struct Step {
  kir::OpKind kind = kir::OpKind::Math;
  kir::DType dtype = kir::DType::F32;    // the value's (store, scatter: the buffer's)
  kir::DType operand = kir::DType::F32;  // the first operand's
  std::vector<int> args;                 // value slots (a value's slot is its step's position)
  int mask = -1;                         // value slot, or -1
  int buffer = -1;                       // load, store, scatter
  IndexNode index;                       // load/store/scatter address, or the value of `index`
  Value constant;                        // const; a masked load's `other`
  MathFn fn = MathFn::Add;
  std::string combine;   // reduce or scan kind; scatter combine
  int64_t number = 0;    // extract: component; check_index: the dim size
  int accumulator = -1;  // reduce, scan
  int level = 0;         // reductions it depends on (a reduce: its operand's + 1)
  bool varies = false;   // runs once per element of its level's walk
};

struct Program {
  std::string name;
  bool reduction = false;
  std::vector<kir::Buffer> buffers;
  std::vector<int64_t> ranges, reduction_ranges;
  std::vector<Step> steps;
  int accumulators = 0;
  // Per level: the steps run once per row before that level's walk, and those run at each
  // element of it (a reduce accumulates in the walk of its operand's level).
  std::vector<std::vector<int>> once, walk;
};

// Throws std::invalid_argument naming what cannot be interpreted (an extern kernel, a math op
// on the wrong dtype, an unknown reduction kind).
Program prepare(const kir::Kernel& kernel);

}  // namespace kiln::interp
