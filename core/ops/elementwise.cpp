#include "core/ops/elementwise.h"

#include "core/support/half.h"

namespace kiln {

Broadcaster::Broadcaster(const Shape& in, const Shape& out)
    : out_sizes_(out), in_strides_(out.size(), 0) {
  const Shape in_strides = contiguous_strides(in);
  const size_t offset = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    in_strides_[d + offset] = in[d] == 1 ? 0 : in_strides[d];
  }
}

int64_t Broadcaster::operator()(int64_t out_index) const {
  int64_t in_index = 0;
  for (size_t d = out_sizes_.size(); d-- > 0;) {
    const int64_t size = out_sizes_[d];
    in_index += (out_index % size) * in_strides_[d];
    out_index /= size;
  }
  return in_index;
}

double round_to(DType dtype, double v) {
  switch (dtype) {
    case DType::F32:
      return static_cast<double>(static_cast<float>(v));
    case DType::F16:
      return f16_to_float(float_to_f16(static_cast<float>(v)));
    case DType::BF16:
      return bf16_to_float(float_to_bf16(static_cast<float>(v)));
    default:
      return v;
  }
}

Shape broadcast_args(const InferContext& c, std::initializer_list<int> args) {
  Shape shape;
  for (int i : args) {
    if (c.is_none(i)) continue;
    auto next = broadcast_shapes(shape, c.type(i).sizes);
    if (!next) op_fail(next.error().message());
    shape = std::move(*next);
  }
  return shape;
}

}  // namespace kiln
