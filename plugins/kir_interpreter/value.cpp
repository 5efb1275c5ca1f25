#include "value.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace kiln::interp {

using kir::DType;

namespace {

// Round to nearest even with `mantissa` stored bits and smallest normal exponent `min_exp`,
// overflowing to infinity at 2^`max_exp`: exact, since scaling by a power of two is.
double round_binary(double x, int mantissa, int min_exp, int max_exp) {
  if (!std::isfinite(x) || x == 0) return x;
  const int e = std::max(std::ilogb(x), min_exp);
  const double quantum = std::ldexp(1.0, e - mantissa);
  const double r = std::nearbyint(x / quantum) * quantum;
  if (std::fabs(r) >= std::ldexp(1.0, max_exp)) return std::copysign(INFINITY, x);
  return r;
}

int64_t wrap(int64_t v, DType d) {
  switch (d) {
    case DType::Bool:
      return v != 0;
    case DType::I8:
      return static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(v)));
    case DType::U8:
      return static_cast<uint8_t>(static_cast<uint64_t>(v));
    case DType::I16:
      return static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint64_t>(v)));
    case DType::I32:
      return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    default:
      return v;
  }
}

int64_t saturate_to_int64(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (x <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

uint16_t f16_bits(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7E00;
  if (std::isinf(x)) return sign | 0x7C00;
  const double a = std::fabs(x);
  if (a == 0) return sign;
  const int e = std::ilogb(a);
  if (e < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal
  const auto fraction = static_cast<uint16_t>(std::ldexp(a, 10 - e) - 1024);
  return sign | static_cast<uint16_t>((e + 15) << 10) | fraction;
}

double f16_value(uint16_t bits) {
  const double sign = bits & 0x8000 ? -1.0 : 1.0;
  const int e = (bits >> 10) & 0x1F;
  const int fraction = bits & 0x3FF;
  if (e == 0x1F) return fraction ? NAN : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(1024 + fraction, e - 25);
}

template <class T>
T read_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void write_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

Value round_to(DType d, Value v) {
  switch (d) {
    case DType::F64:
      return v;
    case DType::F32:
      return {static_cast<double>(static_cast<float>(v.f)), 0};
    case DType::F16:
      return {round_binary(v.f, 10, -14, 16), 0};
    case DType::BF16:
      return {round_binary(v.f, 7, -126, 128), 0};
    default:
      return {0, wrap(v.i, d)};
  }
}

namespace {
bool half(DType d) {
  return d == DType::F16 || d == DType::BF16;
}
}  // namespace

Value convert(Value v, DType from, DType to) {
  // As PyTorch converts: integers to f32 in one rounding, and to f16/bf16 (and f64 to
  // f16/bf16) through f32.
  if (kir::is_float(from) && kir::is_float(to)) {
    if (from == DType::F64 && half(to)) v = round_to(DType::F32, v);
    return round_to(to, v);
  }
  if (kir::is_float(from)) {
    if (to == DType::Bool) return {0, v.f != 0};
    return {0, wrap(saturate_to_int64(v.f), to)};
  }
  if (to == DType::F32 || half(to)) return round_to(to, {static_cast<float>(v.i), 0});
  if (to == DType::F64) return {static_cast<double>(v.i), 0};
  return {0, wrap(v.i, to)};
}

int64_t as_integer(Value v, DType d) {
  return kir::is_float(d) ? saturate_to_int64(v.f) : v.i;
}

double as_double(Value v, DType d) {
  return kir::is_float(d) ? v.f : static_cast<double>(v.i);
}

bool as_bool(Value v, DType d) {
  return kir::is_float(d) ? v.f != 0 : v.i != 0;
}

Value from_double(double x, DType d) {
  return convert({x, 0}, DType::F64, d);
}

Value from_integer(int64_t x, DType d) {
  return convert({0, x}, DType::I64, d);
}

bool parse_literal(const std::string& text, DType d, Value& out) {
  if (text.empty()) return false;
  if (text == "true" || text == "false") {
    out = from_integer(text == "true", d);
    return true;
  }
  char* end = nullptr;
  if (!kir::is_float(d)) {
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() + text.size()) {
      out = from_integer(n, d);
      return true;
    }
  }
  const double x = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  out = from_double(x, d);
  return true;
}

Value load_element(const std::byte* base, DType d, int64_t index) {
  const std::byte* p = base + index * kir::dtype_size(d);
  switch (d) {
    case DType::Bool:
      return {0, read_as<uint8_t>(p) != 0};
    case DType::I8:
      return {0, read_as<int8_t>(p)};
    case DType::U8:
      return {0, read_as<uint8_t>(p)};
    case DType::I16:
      return {0, read_as<int16_t>(p)};
    case DType::I32:
      return {0, read_as<int32_t>(p)};
    case DType::I64:
      return {0, read_as<int64_t>(p)};
    case DType::F16:
      return {f16_value(read_as<uint16_t>(p)), 0};
    case DType::BF16: {
      const uint32_t bits = static_cast<uint32_t>(read_as<uint16_t>(p)) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return {f, 0};
    }
    case DType::F32:
      return {read_as<float>(p), 0};
    case DType::F64:
      return {read_as<double>(p), 0};
  }
  return {};
}

void store_element(std::byte* base, DType d, int64_t index, Value v) {
  std::byte* p = base + index * kir::dtype_size(d);
  const Value r = round_to(d, v);
  switch (d) {
    case DType::Bool:
    case DType::U8:
      return write_as(p, static_cast<uint8_t>(r.i));
    case DType::I8:
      return write_as(p, static_cast<int8_t>(r.i));
    case DType::I16:
      return write_as(p, static_cast<int16_t>(r.i));
    case DType::I32:
      return write_as(p, static_cast<int32_t>(r.i));
    case DType::I64:
      return write_as(p, r.i);
    case DType::F16:
      return write_as(p, f16_bits(r.f));
    case DType::BF16: {
      // Already rounded to bf16, so the top half of the f32 bits is exact.
      const auto f = static_cast<float>(r.f);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      return write_as(p, static_cast<uint16_t>(std::isnan(r.f) ? 0x7FC0 : bits >> 16));
    }
    case DType::F32:
      return write_as(p, static_cast<float>(r.f));
    case DType::F64:
      return write_as(p, r.f);
  }
}

}  // namespace kiln::interp
