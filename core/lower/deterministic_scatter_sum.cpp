#include "core/lower/deterministic_scatter_sum.h"

#include "core/lower/window_index.h"

namespace kiln {
namespace {

// The factor each value of a place is scaled by: 2^61 / largest / count, so that count
// values no larger than `largest` sum to at most 2^61 in magnitude (dividing twice: the
// product largest * count could overflow). Correctly rounded divisions: every kernel that
// computes it gets the same bits. A place nothing reached (or only zeros) divides by 2^-900.
int scale_of(KernelBuilder& kb, int largest, int count) {
  const DType f = DType::F64;
  const int magnitude = kb.math("max", f, {kb.cast(largest, f), kb.constant(f, 0x1p-900)});
  const int values = kb.math("max", f, {kb.cast(count, f), kb.constant(f, 1)});
  return kb.math("div", f, {kb.math("div", f, {kb.constant(f, 0x1p61), magnitude}), values});
}

int is_finite(KernelBuilder& kb, int v) {
  const int nan = kb.math("isnan", DType::Bool, {v});
  const int inf = kb.math("isinf", DType::Bool, {v});
  return kb.math("not", DType::Bool, {kb.math("or", DType::Bool, {nan, inf})});
}

}  // namespace

DeterministicScatterSum::DeterministicScatterSum(
    NodeLowering& n, const Shape& space, const std::function<ScatterSite(KernelBuilder& kb)>& site,
    DType acc, int64_t places)
    : acc_(acc) {
  largest_ = n.temp_buffer("largest", acc, places);
  count_ = n.temp_buffer("count_reaching", DType::I64, places);
  fixed_ = n.temp_buffer("fixed_point_sum", DType::I64, places);
  special_ = n.temp_buffer("nonfinite_sum", acc, places);
  n.fill(largest_, {places}, acc, 0);
  n.fill(count_, {places}, DType::I64, 0);
  n.fill(fixed_, {places}, DType::I64, 0);
  n.fill(special_, {places}, acc, 0);
  if (shape_numel(space) == 0) return;
  {
    // Per place: the largest finite |value| and the number of values.
    KernelBuilder kb = n.kernel(space);
    const ScatterSite s = site(kb);
    const int magnitude =
        kb.where(is_finite(kb, s.value), kb.math("abs", acc, {s.value}), kb.constant(acc, 0));
    kb.scatter("max", largest_, s.address, magnitude, s.mask);
    kb.scatter("sum", count_, s.address, kb.constant(DType::I64, 1), s.mask);
    n.emit(std::move(kb).finish());
  }
  // Each finite value scaled, rounded and summed as an integer; the others as floats.
  KernelBuilder kb = n.kernel(space);
  const ScatterSite s = site(kb);
  const int largest = kb.load(largest_, acc, s.address, s.mask, 0);
  const int count = kb.load(count_, DType::I64, s.address, s.mask, 1);
  const int finite = is_finite(kb, s.value);
  // Non-finite and masked-off values become 0 first: scaled, they could pass the int64
  // range (a masked-off place's scale is unbounded), and such a cast is undefined.
  const int value = kb.where(mask_and(kb, s.mask, finite), kb.cast(s.value, DType::F64),
                             kb.constant(DType::F64, 0));
  const int scaled = kb.math("round", DType::F64,
                             {kb.math("mul", DType::F64, {value, scale_of(kb, largest, count)})});
  kb.scatter("sum", fixed_, s.address, kb.cast(scaled, DType::I64), s.mask);
  kb.scatter("sum", special_, s.address, s.value,
             mask_and(kb, s.mask, kb.math("not", DType::Bool, {finite})));
  n.emit(std::move(kb).finish());
}

int DeterministicScatterSum::add_to(KernelBuilder& kb, const Expr& at, int initial) const {
  const int scale = scale_of(kb, kb.load(largest_, acc_, at), kb.load(count_, DType::I64, at));
  const int fixed = kb.cast(kb.load(fixed_, DType::I64, at), DType::F64);
  const int exact = kb.cast(kb.math("div", DType::F64, {fixed, scale}), acc_);
  // A place some infinity or NaN reached takes their sum (the finite ones cannot change it).
  const int special = kb.load(special_, acc_, at);
  const int has_special = kb.math("ne", DType::Bool, {special, kb.constant(acc_, 0)});
  return kb.math("add", acc_, {initial, kb.where(has_special, special, exact)});
}

}  // namespace kiln
