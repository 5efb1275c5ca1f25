// A tensor in host memory: a type plus shared bytes. Parameters, interpreter values and
// safetensors contents are HostTensors. Element access is by logical (row-major) position
// and honours strides, so a strided input reads as its logical values.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "core/graph/tensor_type.h"

namespace kiln {

class HostTensor {
 public:
  HostTensor() = default;
  // Contiguous, filled with zeros.
  static HostTensor zeros(DType dtype, Shape sizes);
  // Contiguous, taking `bytes` (which must hold exactly numel * dtype_size bytes).
  static Result<HostTensor> from_bytes(DType dtype, Shape sizes, std::vector<std::byte> bytes);
  // A view of `storage` with any sizes and strides; the caller guarantees the extent fits.
  static Result<HostTensor> strided(TensorType type,
                                    std::shared_ptr<std::vector<std::byte>> storage,
                                    int64_t offset);

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& sizes() const { return type_.sizes; }
  int64_t rank() const { return type_.rank(); }
  int64_t numel() const { return type_.numel(); }

  // Element `i` in row-major order of the logical shape.
  double get(int64_t i) const { return load_double(storage_offset(i)); }
  int64_t get_int(int64_t i) const { return load_int(storage_offset(i)); }
  // Writes convert to the dtype: floats round (f16/bf16 to nearest even), integers wrap,
  // a float written to an integer truncates toward zero (NaN -> 0, saturating when out of range).
  void set(int64_t i, double value) { store_double(storage_offset(i), value); }
  void set_int(int64_t i, int64_t value) { store_int(storage_offset(i), value); }

  // A contiguous copy (or this, when already contiguous with no offset).
  HostTensor contiguous() const;
  // The bytes of a contiguous tensor.
  std::span<const std::byte> bytes() const;
  // A copy converted to `dtype`.
  HostTensor to(DType dtype) const;

 private:
  int64_t storage_offset(int64_t i) const;
  double load_double(int64_t element) const;
  int64_t load_int(int64_t element) const;
  void store_double(int64_t element, double value);
  void store_int(int64_t element, int64_t value);

  TensorType type_;
  std::shared_ptr<std::vector<std::byte>> storage_;
  int64_t offset_ = 0;  // in elements
};

}  // namespace kiln
