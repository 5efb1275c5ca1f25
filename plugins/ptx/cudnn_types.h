// cuDNN's data types (cudnnDataType_t's values, the same in its legacy and graph APIs) for the
// dtypes kiln's convolution calls take.
#pragma once

#include <stdexcept>
#include <string>

#include "kiln/kir.hpp"

namespace kiln::ptx {

inline constexpr int kCudnnFloat = 0, kCudnnHalf = 2, kCudnnBFloat16 = 9;

// Throws std::runtime_error for a dtype cuDNN convolutions do not take.
inline int cudnn_data_type(kir::DType d) {
  switch (d) {
    case kir::DType::F32:
      return kCudnnFloat;
    case kir::DType::F16:
      return kCudnnHalf;
    case kir::DType::BF16:
      return kCudnnBFloat16;
    default:
      throw std::runtime_error(std::string("cuDNN: no ") + kir::dtype_name(d) + " convolution");
  }
}

}  // namespace kiln::ptx
