// One element as the interpreter holds it: floats (f16, bf16, f32, f64) as a double already
// rounded to their dtype, integers and bools as an int64 already wrapped to theirs. Every op
// rounds its result to its dtype, so a value computes as if held in its own type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <kiln/kir.hpp>
#include <string>

namespace kiln::interp {

struct Value {
  double f = 0;
  int64_t i = 0;
};

// `v` held as `d` says: a float rounded to nearest even at d's precision (overflow to
// infinity), an integer wrapped to d's width, a bool 0 or 1.
Value round_to(kir::DType d, Value v);
// A value of dtype `from` converted to `to`, as the reference casts (float to integer: NaN
// reads 0, saturating at the int64 range, then wrapped).
Value convert(Value v, kir::DType from, kir::DType to);
// A value as an integer index (a float truncated) and as a double.
int64_t as_integer(Value v, kir::DType d);
double as_double(Value v, kir::DType d);
bool as_bool(Value v, kir::DType d);
Value from_double(double x, kir::DType d);
Value from_integer(int64_t x, kir::DType d);
// A KIR literal ("1.5", "-inf", "nan", "3") as dtype `d`; false when it is not a number.
bool parse_literal(const std::string& text, kir::DType d, Value& out);

// Element `index` of a buffer of dtype `d`, in the byte layout a tensor of that dtype has.
Value load_element(const std::byte* base, kir::DType d, int64_t index);
void store_element(std::byte* base, kir::DType d, int64_t index, Value v);

}  // namespace kiln::interp
