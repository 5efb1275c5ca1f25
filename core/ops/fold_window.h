// col2im's window, as the op's reference and its lowering read it:
// (self, output_size, kernel_size, dilation, padding, stride).
#pragma once

#include "core/ops/pool_window.h"

namespace kiln {

struct Fold {
  Window w;
  Shape out;     // output_size (H, W)
  Shape blocks;  // window positions along H and W
};

// Reads and checks the arguments (an OpError names what does not fit).
Fold fold_of(const ArgView& c);

}  // namespace kiln
