#include "core/graph/host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/support/half.h"

namespace kiln {
namespace {

template <class T>
T read_as(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <class T>
void write_as(std::byte* p, T value) {
  std::memcpy(p, &value, sizeof(T));
}

// Float to integer without undefined behaviour: NaN -> 0, saturate out of range.
int64_t float_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

}  // namespace

HostTensor HostTensor::zeros(DType dtype, Shape sizes) {
  HostTensor t;
  t.type_ = TensorType::contiguous(dtype, std::move(sizes));
  t.storage_ = std::make_shared<std::vector<std::byte>>(
      static_cast<size_t>(t.type_.numel() * dtype_size(dtype)));
  return t;
}

Result<HostTensor> HostTensor::from_bytes(DType dtype, Shape sizes, std::vector<std::byte> bytes) {
  HostTensor t;
  t.type_ = TensorType::contiguous(dtype, std::move(sizes));
  const int64_t expected = t.type_.numel() * dtype_size(dtype);
  if (static_cast<int64_t>(bytes.size()) != expected) {
    return Error::user("tensor " + t.type_.to_string() + " needs " + std::to_string(expected) +
                       " bytes, got " + std::to_string(bytes.size()));
  }
  t.storage_ = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  return t;
}

Result<HostTensor> HostTensor::strided(TensorType type,
                                       std::shared_ptr<std::vector<std::byte>> storage,
                                       int64_t offset) {
  // The largest element offset reachable must lie inside the storage.
  int64_t max_offset = offset;
  int64_t min_offset = offset;
  for (size_t d = 0; d < type.sizes.size(); ++d) {
    if (type.sizes[d] == 0) return HostTensor::zeros(type.dtype, type.sizes);
    int64_t span = 0;
    int64_t& bound = type.strides[d] > 0 ? max_offset : min_offset;
    if (type.sizes[d] < 0 || __builtin_mul_overflow(type.sizes[d] - 1, type.strides[d], &span) ||
        __builtin_add_overflow(bound, span, &bound)) {
      return Error::user("strided view " + type.to_string() + " overflows its index arithmetic");
    }
  }
  const int64_t elements = static_cast<int64_t>(storage->size()) / dtype_size(type.dtype);
  if (min_offset < 0 || max_offset >= elements) {
    return Error::user("strided view " + type.to_string() + " at offset " + std::to_string(offset) +
                       " reaches outside its " + std::to_string(elements) + "-element storage");
  }
  HostTensor t;
  t.type_ = std::move(type);
  t.storage_ = std::move(storage);
  t.offset_ = offset;
  return t;
}

int64_t HostTensor::storage_offset(int64_t i) const {
  int64_t offset = offset_;
  for (size_t d = type_.sizes.size(); d-- > 0;) {
    const int64_t size = type_.sizes[d];
    offset += (i % size) * type_.strides[d];
    i /= size;
  }
  return offset;
}

double HostTensor::load_double(int64_t element) const {
  const std::byte* p = storage_->data() + element * dtype_size(type_.dtype);
  switch (type_.dtype) {
    case DType::Bool:
      return read_as<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::I8:
      return read_as<int8_t>(p);
    case DType::U8:
      return read_as<uint8_t>(p);
    case DType::I16:
      return read_as<int16_t>(p);
    case DType::I32:
      return read_as<int32_t>(p);
    case DType::I64:
      return static_cast<double>(read_as<int64_t>(p));
    case DType::F16:
      return f16_to_float(read_as<uint16_t>(p));
    case DType::BF16:
      return bf16_to_float(read_as<uint16_t>(p));
    case DType::F32:
      return read_as<float>(p);
    case DType::F64:
      return read_as<double>(p);
    case DType::C64:  // a number read from a complex value is its real part
      return read_as<float>(p);
  }
  return 0;
}

int64_t HostTensor::load_int(int64_t element) const {
  const std::byte* p = storage_->data() + element * dtype_size(type_.dtype);
  switch (type_.dtype) {
    case DType::Bool:
      return read_as<uint8_t>(p) != 0 ? 1 : 0;
    case DType::I8:
      return read_as<int8_t>(p);
    case DType::U8:
      return read_as<uint8_t>(p);
    case DType::I16:
      return read_as<int16_t>(p);
    case DType::I32:
      return read_as<int32_t>(p);
    case DType::I64:
      return read_as<int64_t>(p);
    default:
      return float_to_int64(load_double(element));
  }
}

void HostTensor::store_double(int64_t element, double v) {
  std::byte* p = storage_->data() + element * dtype_size(type_.dtype);
  switch (type_.dtype) {
    case DType::Bool:
      write_as<uint8_t>(p, v != 0 ? 1 : 0);
      return;
    case DType::F16:
      write_as<uint16_t>(p, float_to_f16(static_cast<float>(v)));
      return;
    case DType::BF16:
      write_as<uint16_t>(p, float_to_bf16(static_cast<float>(v)));
      return;
    case DType::F32:
      write_as<float>(p, static_cast<float>(v));
      return;
    case DType::F64:
      write_as<double>(p, v);
      return;
    case DType::C64:  // a real number: no imaginary part
      write_as<float>(p, static_cast<float>(v));
      write_as<float>(p + sizeof(float), 0.0F);
      return;
    default:
      store_int(element, float_to_int64(v));
      return;
  }
}

void HostTensor::store_int(int64_t element, int64_t v) {
  std::byte* p = storage_->data() + element * dtype_size(type_.dtype);
  // Integers wrap like two's complement (through uint64_t: no signed overflow).
  const auto u = static_cast<uint64_t>(v);
  switch (type_.dtype) {
    case DType::Bool:
      write_as<uint8_t>(p, v != 0 ? 1 : 0);
      return;
    case DType::I8:
      write_as<uint8_t>(p, static_cast<uint8_t>(u));
      return;
    case DType::U8:
      write_as<uint8_t>(p, static_cast<uint8_t>(u));
      return;
    case DType::I16:
      write_as<uint16_t>(p, static_cast<uint16_t>(u));
      return;
    case DType::I32:
      write_as<uint32_t>(p, static_cast<uint32_t>(u));
      return;
    case DType::I64:
      write_as<uint64_t>(p, u);
      return;
    default:
      store_double(element, static_cast<double>(v));
      return;
  }
}

HostTensor HostTensor::contiguous() const {
  if (type_.is_contiguous() && offset_ == 0 &&
      static_cast<int64_t>(storage_->size()) == numel() * dtype_size(dtype())) {
    return *this;
  }
  HostTensor out = zeros(dtype(), sizes());
  const size_t width = static_cast<size_t>(dtype_size(dtype()));
  for (int64_t i = 0; i < numel(); ++i) {
    std::memcpy(out.storage_->data() + i * static_cast<int64_t>(width),
                storage_->data() + storage_offset(i) * static_cast<int64_t>(width), width);
  }
  return out;
}

std::span<const std::byte> HostTensor::bytes() const {
  if (!storage_) return {};
  return {storage_->data() + offset_ * dtype_size(dtype()),
          static_cast<size_t>(numel() * dtype_size(dtype()))};
}

HostTensor HostTensor::to(DType target) const {
  HostTensor out = zeros(target, sizes());
  const bool exact_ints = !is_floating(dtype()) && !is_floating(target);
  for (int64_t i = 0; i < numel(); ++i) {
    if (exact_ints) {
      out.set_int(i, get_int(i));
    } else {
      out.set(i, get(i));
    }
  }
  return out;
}

}  // namespace kiln
