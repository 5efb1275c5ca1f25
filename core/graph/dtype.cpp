#include "core/graph/dtype.h"

#include <array>
#include <utility>

namespace kiln {
namespace {

struct DTypeNames {
  DType dtype;
  std::string_view name;
  std::string_view torch_name;
  int64_t size;
};

constexpr std::array<DTypeNames, 11> kNames{{
    {DType::Bool, "bool", "bool", 1},
    {DType::I8, "i8", "int8", 1},
    {DType::U8, "u8", "uint8", 1},
    {DType::I16, "i16", "int16", 2},
    {DType::I32, "i32", "int32", 4},
    {DType::I64, "i64", "int64", 8},
    {DType::F16, "f16", "float16", 2},
    {DType::BF16, "bf16", "bfloat16", 2},
    {DType::F32, "f32", "float32", 4},
    {DType::F64, "f64", "float64", 8},
    {DType::C64, "c64", "complex64", 8},
}};

const DTypeNames& entry(DType d) {
  return kNames[static_cast<size_t>(d)];
}

// Rank inside a category: the wider type wins.
int int_rank(DType d) {
  switch (d) {
    case DType::I8:
      return 1;
    case DType::U8:
      return 1;
    case DType::I16:
      return 2;
    case DType::I32:
      return 3;
    case DType::I64:
      return 4;
    default:
      return 0;
  }
}

}  // namespace

std::string_view dtype_name(DType dtype) {
  return entry(dtype).name;
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name.rfind("torch.", 0) == 0) name.remove_prefix(6);
  for (const auto& e : kNames) {
    if (e.name == name || e.torch_name == name) return e.dtype;
  }
  if (name == "float") return DType::F32;
  if (name == "double") return DType::F64;
  if (name == "half") return DType::F16;
  if (name == "long") return DType::I64;
  if (name == "cfloat") return DType::C64;
  if (name == "int") return DType::I32;
  return std::nullopt;
}

int64_t dtype_size(DType dtype) {
  return entry(dtype).size;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_complex(a) || is_complex(b)) return DType::C64;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_floating(a) && is_floating(b)) {
    if (a == DType::F64 || b == DType::F64) return DType::F64;
    if (a == DType::F32 || b == DType::F32) return DType::F32;
    return DType::F32;  // f16 with bf16
  }
  if (is_floating(a)) return a;
  if (is_floating(b)) return b;
  // Both integers. u8 and i8 meet at i16; otherwise the wider wins (u8 is narrower than i16).
  if ((a == DType::U8 && b == DType::I8) || (a == DType::I8 && b == DType::U8)) return DType::I16;
  return int_rank(a) >= int_rank(b) ? a : b;
}

}  // namespace kiln
