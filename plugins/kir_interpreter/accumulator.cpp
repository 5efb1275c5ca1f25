#include "accumulator.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "math_ops.h"

namespace kiln::interp {

using kir::DType;

Combine combine_of(const std::string& kind) {
  static const std::pair<const char*, Combine> kinds[] = {
      {"sum", Combine::Sum},       {"prod", Combine::Prod},      {"max", Combine::Max},
      {"min", Combine::Min},       {"any", Combine::Any},        {"argmax", Combine::ArgMax},
      {"argmin", Combine::ArgMin}, {"welford", Combine::Welford}};
  for (const auto& [name, combine] : kinds)
    if (kind == name) return combine;
  throw std::invalid_argument("unknown reduction kind '" + kind + "'");
}

bool Accumulator::float_domain() const {
  switch (kind_) {
    case Combine::Sum:
    case Combine::Prod:
      return kir::is_float(result_);
    case Combine::Welford:
      return true;
    default:
      return kir::is_float(operand_);
  }
}

void Accumulator::reset() {
  f_ = 0;
  i_ = 0;
  if (kind_ == Combine::Prod) f_ = 1, i_ = 1;
  if (kind_ == Combine::Max) {
    f_ = -INFINITY;
    i_ = std::numeric_limits<int64_t>::min();
  }
  if (kind_ == Combine::Min) {
    f_ = INFINITY;
    i_ = std::numeric_limits<int64_t>::max();
  }
  position_ = 0;
  seen_ = false;
  mean_ = m2_ = count_ = 0;
}

void Accumulator::add(Value x, int64_t position) {
  const bool fp = float_domain();
  const double xf = as_double(x, operand_);
  const int64_t xi = as_integer(x, operand_);
  switch (kind_) {
    case Combine::Sum:
      if (fp)
        f_ += xf;
      else
        i_ = static_cast<int64_t>(static_cast<uint64_t>(i_) + static_cast<uint64_t>(xi));
      return;
    case Combine::Prod:
      if (fp)
        f_ *= xf;
      else
        i_ = static_cast<int64_t>(static_cast<uint64_t>(i_) * static_cast<uint64_t>(xi));
      return;
    case Combine::Max:
      if (fp)
        f_ = max_propagating(f_, xf);
      else
        i_ = std::max(i_, xi);
      return;
    case Combine::Min:
      if (fp)
        f_ = min_propagating(f_, xf);
      else
        i_ = std::min(i_, xi);
      return;
    case Combine::Any:
      i_ = i_ || as_bool(x, operand_);
      return;
    case Combine::ArgMax:
    case Combine::ArgMin: {
      // The first extreme wins ties; once a NaN is seen it stays.
      const bool larger = kind_ == Combine::ArgMax;
      bool take = !seen_;
      if (seen_ && fp && !std::isnan(f_)) take = std::isnan(xf) || (larger ? xf > f_ : xf < f_);
      if (seen_ && !fp) take = larger ? xi > i_ : xi < i_;
      if (take) {
        f_ = xf;
        i_ = xi;
        position_ = position;
        seen_ = true;
      }
      return;
    }
    case Combine::Welford: {
      count_ += 1;
      const double d = xf - mean_;
      mean_ += d / count_;
      m2_ += d * (xf - mean_);
      return;
    }
  }
}

Value Accumulator::result() const {
  if (kind_ == Combine::ArgMax || kind_ == Combine::ArgMin) return from_integer(position_, result_);
  if (kind_ == Combine::Welford) return from_double(mean_, result_);
  return float_domain() ? from_double(f_, result_) : from_integer(i_, result_);
}

Value Accumulator::component(int64_t k, DType d) const {
  if (kind_ != Combine::Welford)
    throw std::invalid_argument("extract of a reduction that is not welford");
  if (k < 0 || k > 2) throw std::invalid_argument("welford has components 0, 1 and 2");
  return from_double(k == 0 ? mean_ : k == 1 ? m2_ : count_, d);
}

Value scatter_combine(const std::string& combine, Value old, Value x, DType d) {
  if (combine == "store") return x;
  const bool fp = kir::is_float(d);
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  if (combine == "sum")
    return fp ? from_double(old.f + x.f, d)
              : from_integer(static_cast<int64_t>(u(old.i) + u(x.i)), d);
  if (combine == "prod")
    return fp ? from_double(old.f * x.f, d)
              : from_integer(static_cast<int64_t>(u(old.i) * u(x.i)), d);
  if (combine == "max")
    return fp ? from_double(max_propagating(old.f, x.f), d) : from_integer(std::max(old.i, x.i), d);
  if (combine == "min")
    return fp ? from_double(min_propagating(old.f, x.f), d) : from_integer(std::min(old.i, x.i), d);
  throw std::invalid_argument("unknown scatter combine '" + combine + "'");
}

}  // namespace kiln::interp
