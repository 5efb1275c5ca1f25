// A convolution's arguments as aten.convolution and aten.convolution_backward take them,
// (stride, padding, dilation, transposed, output_padding, groups), with the window's kernel
// taken from the weight. Shared by the ops' references and by their lowerings.
#pragma once

#include <string>

#include "core/ops/pool_window.h"

namespace kiln {

struct ConvArgs {
  Window window;  // kernel: the weight's spatial sizes
  bool transposed = false;
  IntList output_padding;
  int64_t groups = 1;
};

// Reads the arguments from `first` (stride) on; `weight` gives the kernel and the rank.
ConvArgs conv_args(const ArgView& c, int first, const Shape& weight);

// The output shape of convolution(x, w) with `a`, every argument checked: an OpError names
// `op` and what does not match.
Shape conv_output_shape(const Shape& x, const Shape& w, const ConvArgs& a, const std::string& op);

}  // namespace kiln
