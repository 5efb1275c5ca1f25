// A reduction's (or a scan's) running state over one row: sums and products in double (or
// wrapping int64 for integer results), NaN-propagating max and min, argmax/argmin keeping the
// first extreme (a NaN beats every number), welford's mean, m2 and count.
#pragma once

#include <string>

#include "value.h"

namespace kiln::interp {

enum class Combine { Sum, Prod, Max, Min, Any, ArgMax, ArgMin, Welford };

// The combine of a reduce or scan kind; throws std::invalid_argument for an unknown one.
Combine combine_of(const std::string& kind);

class Accumulator {
 public:
  Accumulator(Combine kind, kir::DType operand, kir::DType result)
      : kind_(kind), operand_(operand), result_(result) {
    reset();
  }
  void reset();
  // `x` (of the operand dtype) at `position`, the row-major step of the reduction.
  void add(Value x, int64_t position);
  Value result() const;
  // Welford's component k (0 mean, 1 m2, 2 count) as dtype `d`.
  Value component(int64_t k, kir::DType d) const;

 private:
  bool float_domain() const;

  Combine kind_;
  kir::DType operand_, result_;
  double f_ = 0;
  int64_t i_ = 0;
  int64_t position_ = 0;
  bool seen_ = false;
  double mean_ = 0, m2_ = 0, count_ = 0;
};

// What a scatter of `combine` leaves in an element holding `old`, both of dtype `d`.
Value scatter_combine(const std::string& combine, Value old, Value x, kir::DType d);

}  // namespace kiln::interp
