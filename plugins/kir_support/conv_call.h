// The "conv2d" extern call as plugins receive it (plugin-abi.md): three buffers (x read
// through its offset and four strides, the contiguous [K, C/groups, R, S] weight, the
// contiguous [N, K, OH, OW] output) and 22 integer parameters, read and checked once. Its
// two backward calls take the same parameters (the forward convolution's):
// "conv2d_backward_input" (dy, weight -> dx, dx laid out by x's offset and strides) and
// "conv2d_backward_weight" (x, dy -> dweight), dy and dweight contiguous like y and weight.
// A plugin listing the call's `strides` feature ("conv2d f32 strides") may also get 30
// parameters: the 22, then the weight's and the output's strides (kConvStrideParams), e.g.
// channels-last packed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/kir.hpp"
#include "kiln/plugin.h"

namespace kiln::kir_support {

// Which product of a convolution a call computes.
enum class ConvDirection { Forward, BackwardInput, BackwardWeight };
inline constexpr const char* kConvExterns[] = {"conv2d", "conv2d_backward_input",
                                               "conv2d_backward_weight"};
// The direction of extern `name`, or none when it is no convolution call.
std::optional<ConvDirection> conv_direction(const std::string& name);

struct ConvCall {
  kir::DType dtype = kir::DType::F32;
  bool tf32 = false;  // f32 products may be rounded to TF32 (dtype parameter kExternTf32)
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t k = 0, r = 0, s = 0;         // output channels, kernel height and width
  int64_t out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
  int64_t x_offset = 0, x_stride[4] = {0, 0, 0, 0};  // elements, over N, C, H, W
  // Elements, over K, C/groups, R, S and over N, K, OH, OW: contiguous unless given.
  int64_t w_stride[4] = {0, 0, 0, 0}, y_stride[4] = {0, 0, 0, 0};
  // Bytes each buffer must span, in the call's order: forward (x, weight, y), backward input
  // (dy, weight, dx), backward weight (x, dy, dweight).
  std::vector<int64_t> buffer_bytes(ConvDirection direction = ConvDirection::Forward) const;
  // Every field that shapes the call (not x's offset), comma-separated: a key for what a
  // library plans once per shape.
  std::string shape_key() const;
};

// The parameters in their order:
inline constexpr const char* kConvParams[] = {
    "dtype",  "n",        "c",          "h",          "w",          "k",         "r",     "s",
    "out_h",  "out_w",    "stride_h",   "stride_w",   "pad_h",      "pad_w",     "dil_h", "dil_w",
    "groups", "x_offset", "x_stride_n", "x_stride_c", "x_stride_h", "x_stride_w"};
// ... and after them, with the `strides` feature:
inline constexpr const char* kConvStrideParams[] = {"w_stride_k", "w_stride_c", "w_stride_r",
                                                    "w_stride_s", "y_stride_n", "y_stride_k",
                                                    "y_stride_h", "y_stride_w"};
// The feature word in an extern_names line.
inline constexpr const char* kStridesFeature = "strides";

// Throws std::invalid_argument naming the problem: the count (22 or 30), an unknown dtype
// code (a DType's, or kir::kExternTf32 for f32 with TF32 products), a size or stride that is
// negative or does not follow from the others (channels not divisible by groups, an output
// size that is not the convolution's, strides that make elements overlap).
ConvCall read_conv_call(const std::vector<int64_t>& params);
ConvCall read_conv_call(const kiln_launch_args& args);

}  // namespace kiln::kir_support
