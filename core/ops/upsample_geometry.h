// Where upsample_nearest2d and upsample_bilinear2d read: the output size from output_size or
// scale factors, and the factor that maps an output index to input coordinates, as PyTorch
// computes them (nearest in float, bilinear in the op's math dtype). Shared by the ops'
// references and their lowerings.
#pragma once

#include <optional>
#include <string>

#include "core/graph/arg_value.h"
#include "core/graph/tensor_type.h"

namespace kiln {

// [N, C, OH, OW] for input [N, C, H, W]; checked (an OpError names `op`).
Shape upsample_output(const Shape& in, const std::optional<IntList>& output_size,
                      const std::optional<FloatList>& scales, const std::string& op);

// The scale factor of spatial dim d (0 or 1), when scale factors were given.
std::optional<double> upsample_scale(const std::optional<FloatList>& scales, size_t d);

// Nearest: the source index of output index o (PyTorch's float arithmetic).
float nearest_factor(int64_t in, int64_t out, std::optional<double> scale);
int64_t nearest_source(int64_t o, int64_t in, int64_t out, std::optional<double> scale);

// Bilinear: source coordinate = factor * o (align_corners) or factor * (o + 0.5) - 0.5,
// clamped at 0.
double bilinear_factor(int64_t in, int64_t out, bool align_corners, std::optional<double> scale);

}  // namespace kiln
