#include "core/ops/promotion.h"

#include <optional>

#include "core/ops/op_error.h"

namespace kiln {
namespace {

using Maybe = std::optional<DType>;

Maybe promote(Maybe a, DType b) {
  return a ? promote_types(*a, b) : b;
}

Maybe combine_categories(Maybe higher, Maybe lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating(*higher)) return higher;
  if (*higher == DType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

std::pair<DType, int64_t> dtype_and_rank(const InferContext& c, int i) {
  const TensorType t = c.type(i);
  return {t.dtype, t.rank()};
}

std::pair<DType, int64_t> dtype_and_rank(const RefContext& c, int i) {
  const HostTensor t = c.tensor(i);
  return {t.dtype(), t.rank()};
}

}  // namespace

template <class Context>
DType result_type_of(const Context& c, std::initializer_list<int> args) {
  Maybe dimensioned, zero_dim, wrapped;
  for (int i : args) {
    if (c.is_none(i)) continue;
    if (c.is_wrapped_scalar(i)) {
      // A Python float promotes as the default float dtype, an int as i64.
      const DType d = c.scalar_dtype(i);
      wrapped = promote(wrapped, d == DType::F64 ? kDefaultFloat : d);
      continue;
    }
    const auto [dtype, rank] = dtype_and_rank(c, i);
    if (rank == 0) {
      zero_dim = promote(zero_dim, dtype);
    } else {
      dimensioned = promote(dimensioned, dtype);
    }
  }
  const Maybe result = combine_categories(dimensioned, combine_categories(zero_dim, wrapped));
  if (!result) op_bug(c.schema().op + ": no operand to take a dtype from");
  return *result;
}

DType result_type(const InferContext& c, std::initializer_list<int> args) {
  return result_type_of(c, args);
}

DType result_type(const RefContext& c, std::initializer_list<int> args) {
  return result_type_of(c, args);
}

}  // namespace kiln
