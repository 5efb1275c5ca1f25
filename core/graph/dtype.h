// Element types and PyTorch's type promotion between them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

// C64 (complex64) exists only in graphs as written: complex lowering turns each complex value
// into f32 with a trailing dim of 2 (torch.view_as_real's layout) before anything runs, so
// kernels, plugins and the interpreter never see it. It is not in kAllDTypes.
enum class DType : uint8_t { Bool, I8, U8, I16, I32, I64, F16, BF16, F32, F64, C64 };

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I8,  DType::U8,  DType::I16,
                                       DType::I32,  DType::I64, DType::F16, DType::BF16,
                                       DType::F32,  DType::F64};

std::string_view dtype_name(DType dtype);                 // "f32"
std::optional<DType> parse_dtype(std::string_view name);  // "f32", also "float32", "torch.float32"
int64_t dtype_size(DType dtype);                          // bytes per element

inline bool is_floating(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64;
}
inline bool is_complex(DType d) {
  return d == DType::C64;
}
inline bool is_integral(DType d) {
  return !is_floating(d) && d != DType::Bool && !is_complex(d);
}

// torch.promote_types: the smallest type both values fit in (u8 + i8 -> i16, f16 + bf16 -> f32,
// any integer + any float -> the float; anything with c64 -> c64, kiln's only complex type).
DType promote_types(DType a, DType b);

// The default float dtype (torch.get_default_dtype()).
inline constexpr DType kDefaultFloat = DType::F32;

}  // namespace kiln
