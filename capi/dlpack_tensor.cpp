#include "capi/dlpack_tensor.h"

namespace kiln::capi {

std::optional<DType> from_dl_dtype(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case kDLInt:
      if (t.bits == 8) return DType::I8;
      if (t.bits == 16) return DType::I16;
      if (t.bits == 32) return DType::I32;
      if (t.bits == 64) return DType::I64;
      return std::nullopt;
    case kDLUInt:
      if (t.bits == 8) return DType::U8;
      return std::nullopt;
    case kDLFloat:
      if (t.bits == 16) return DType::F16;
      if (t.bits == 32) return DType::F32;
      if (t.bits == 64) return DType::F64;
      return std::nullopt;
    case kDLBfloat:
      if (t.bits == 16) return DType::BF16;
      return std::nullopt;
    case KILN_DL_BOOL:
      if (t.bits == 8) return DType::Bool;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

DLDataType to_dl_dtype(DType d) {
  const auto bits = static_cast<uint8_t>(dtype_size(d) * 8);
  switch (d) {
    case DType::Bool:
      return {static_cast<uint8_t>(KILN_DL_BOOL), 8, 1};
    case DType::U8:
      return {kDLUInt, bits, 1};
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
      return {kDLInt, bits, 1};
    case DType::BF16:
      return {kDLBfloat, bits, 1};
    case DType::F16:
    case DType::F32:
    case DType::F64:
      return {kDLFloat, bits, 1};
    case DType::C64:  // graphs take complex tensors as real pairs (f32[..., 2]): not reached
      return {kDLComplex, bits, 1};
  }
  return {kDLFloat, 32, 1};
}

Result<TensorRef> tensor_ref(const DLTensor& t, DLDevice device, std::string_view kind,
                             size_t index) {
  const auto name = [&] { return std::string(kind) + " " + std::to_string(index); };
  const auto dtype = from_dl_dtype(t.dtype);
  if (!dtype)
    return Error::user(name() + ": DLPack dtype (code " + std::to_string(t.dtype.code) + ", " +
                       std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                       " lanes) is not one kiln runs");
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr))
    return Error::user(name() + ": DLTensor has no valid shape");
  TensorRef r;
  r.type.dtype = *dtype;
  r.type.sizes.assign(t.shape, t.shape + t.ndim);
  for (int64_t s : r.type.sizes)
    if (s < 0) return Error::user(name() + ": negative size " + std::to_string(s));
  r.type.strides = t.strides ? Shape(t.strides, t.strides + t.ndim)
                             : TensorType::contiguous(*dtype, r.type.sizes).strides;
  r.data = static_cast<std::byte*>(t.data) + t.byte_offset;
  const bool same =
      t.device.device_type == device.device_type && t.device.device_id == device.device_id;
  const bool host = t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
  if (!same && !host)
    return Error::user(name() + ": on DLPack device (type " + std::to_string(t.device.device_type) +
                       ", id " + std::to_string(t.device.device_id) +
                       "), but the graph runs on (type " + std::to_string(device.device_type) +
                       ", id " + std::to_string(device.device_id) +
                       ") and reads only that device and host memory");
  r.on_device = same;
  return r;
}

}  // namespace kiln::capi
