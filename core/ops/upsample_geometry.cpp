#include "core/ops/upsample_geometry.h"

#include <algorithm>
#include <cmath>

#include "core/ops/op_error.h"

namespace kiln {

Shape upsample_output(const Shape& in, const std::optional<IntList>& output_size,
                      const std::optional<FloatList>& scales, const std::string& op) {
  op_check(in.size() == 4, op + ": expected a 4-D input [N, C, H, W], got " + shape_text(in));
  op_check(output_size.has_value() != scales.has_value(),
           op + ": give exactly one of output_size and scale_factors");
  Shape out{in[0], in[1]};
  for (size_t d = 0; d < 2; ++d) {
    int64_t size = 0;
    if (output_size) {
      op_check(output_size->size() == 2, op + ": output_size needs 2 values");
      size = (*output_size)[d];
    } else {
      op_check(scales->size() == 2, op + ": scale_factors needs 2 values");
      const double s = (*scales)[d];
      op_check(std::isfinite(s) && s > 0 && s <= 1 << 20,
               op + ": scale factors must be positive and finite");
      size = static_cast<int64_t>(static_cast<double>(in[2 + d]) * s);
    }
    op_check(size > 0 && size <= int64_t{1} << 31 && in[2 + d] > 0,
             op + ": input and output sizes must be positive, got " + shape_text(in) + " to " +
                 std::to_string(size));
    out.push_back(size);
  }
  return out;
}

std::optional<double> upsample_scale(const std::optional<FloatList>& scales, size_t d) {
  if (!scales || (*scales)[d] <= 0) return std::nullopt;
  return (*scales)[d];
}

float nearest_factor(int64_t in, int64_t out, std::optional<double> scale) {
  return scale ? static_cast<float>(1.0 / *scale)
               : static_cast<float>(in) / static_cast<float>(out);
}

int64_t nearest_source(int64_t o, int64_t in, int64_t out, std::optional<double> scale) {
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  const float f = nearest_factor(in, out, scale);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * f)), in - 1);
}

double bilinear_factor(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners)
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return scale ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
}

}  // namespace kiln
