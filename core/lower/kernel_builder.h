// Appends SSA ops to one LoopKernel's body. Lowering rules build kernels through this so
// that ids, dtypes and index simplification are handled in one place.
#pragma once

#include <string>
#include <vector>

#include "core/lower/loop_ir.h"

namespace kiln {

class KernelBuilder {
 public:
  KernelBuilder(std::string name, std::string origin, Shape ranges, Shape reduction_ranges = {});

  // Loop variables: x<i> for pointwise dims, r<i> for reduction dims.
  Expr x(size_t i) const { return Expr::var("x" + std::to_string(i)); }
  Expr r(size_t i) const { return Expr::var("r" + std::to_string(i)); }
  std::vector<Expr> pointwise_vars() const;

  int load(int buffer, DType dtype, const Expr& index, int mask = -1, double other = 0);
  void store(int buffer, const Expr& index, int value, int mask = -1);
  // Combines `value` into buffer[index] (store, sum, prod, max, min), which holds values
  // already; iterations may name the same element. Only pointwise kernels scatter.
  void scatter(const std::string& combine, int buffer, const Expr& index, int value, int mask = -1);
  int constant(DType dtype, double value);
  int index(const Expr& value);   // an int64 value computed from loop variables
  int cast(int value, DType to);  // no-op when already `to`
  int where(int cond, int a, int b);
  int math(const std::string& fn, DType dtype, std::vector<int> args);
  int reduce(const std::string& kind, DType dtype, int value);
  // The running `kind` (kScanKinds) of `value` along the reduction, this element included.
  int scan(const std::string& kind, DType dtype, int value);
  int extract(int welford, int component);
  // value wrapped like Python indices (-size..size-1), checked: out of range is an error at run
  // time.
  int check_index(int value, int64_t size);

  DType dtype(int value) const;
  // The simplified form of `e` given the ranges of this kernel's variables.
  Expr simplify_index(const Expr& e) const;
  // A variable standing for the value of SSA op `value` inside an index expression.
  Expr indirect(int value) const { return Expr::var("t" + std::to_string(value)); }

  LoopKernel finish() &&;

 private:
  int add(LoopOp op);
  LoopKernel kernel_;
  std::vector<DType> dtypes_;
};

}  // namespace kiln
