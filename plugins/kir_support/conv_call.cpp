#include "plugins/kir_support/conv_call.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>

#include "plugins/kir_support/extern_params.h"

namespace kiln::kir_support {

std::optional<ConvDirection> conv_direction(const std::string& name) {
  for (size_t i = 0; i < std::size(kConvExterns); ++i)
    if (name == kConvExterns[i]) return static_cast<ConvDirection>(i);
  return std::nullopt;
}

std::string ConvCall::shape_key() const {
  std::string key = tf32 ? "tf32" : kir::dtype_name(dtype);
  for (int64_t v : {n,     c,      h,           w,           k,           r,          s,
                    out_h, out_w,  stride_h,    stride_w,    pad_h,       pad_w,      dil_h,
                    dil_w, groups, x_stride[0], x_stride[1], x_stride[2], x_stride[3]})
    key += "," + std::to_string(v);
  for (const int64_t* strides : {w_stride, y_stride})
    for (int i = 0; i < 4; ++i) key += "," + std::to_string(strides[i]);
  return key;
}

namespace {

// The elements a tensor of `sizes` laid out by `strides` spans (0 when empty).
int64_t extent(const int64_t sizes[4], const int64_t strides[4]) {
  int64_t last = 0;
  for (int i = 0; i < 4; ++i) {
    if (sizes[i] == 0) return 0;
    last += (sizes[i] - 1) * strides[i];
  }
  return last + 1;
}

// Row-major strides of `sizes`.
void contiguous(const int64_t sizes[4], int64_t strides[4]) {
  int64_t step = 1;
  for (int i = 4; i-- > 0;) {
    strides[i] = step;
    step *= sizes[i];
  }
}

// Whether no two elements of a tensor of `sizes` share an address under `strides`: sorted by
// stride, each dim's stride covers everything inside it.
bool one_to_one(const int64_t sizes[4], const int64_t strides[4]) {
  int order[4] = {0, 1, 2, 3};
  std::sort(order, order + 4, [&](int a, int b) { return strides[a] < strides[b]; });
  int64_t span = 1;
  for (int i : order) {
    if (sizes[i] <= 1) continue;
    if (strides[i] < span) return false;
    span = strides[i] * sizes[i];
  }
  return true;
}

}  // namespace

std::vector<int64_t> ConvCall::buffer_bytes(ConvDirection direction) const {
  const int64_t esize = kir::dtype_size(dtype);
  const bool empty_x = n == 0 || c == 0 || h == 0 || w == 0;
  const int64_t x_bytes = empty_x ? 0
                                  : (x_offset + (n - 1) * x_stride[0] + (c - 1) * x_stride[1] +
                                     (h - 1) * x_stride[2] + (w - 1) * x_stride[3] + 1) *
                                        esize;
  const int64_t w_sizes[4] = {k, groups > 0 ? c / groups : 0, r, s};
  const int64_t y_sizes[4] = {n, k, out_h, out_w};
  const int64_t w_bytes = extent(w_sizes, w_stride) * esize;
  const int64_t y_bytes = extent(y_sizes, y_stride) * esize;
  switch (direction) {
    case ConvDirection::BackwardInput:
      return {y_bytes, w_bytes, x_bytes};
    case ConvDirection::BackwardWeight:
      return {x_bytes, y_bytes, w_bytes};
    default:
      return {x_bytes, w_bytes, y_bytes};
  }
}

ConvCall read_conv_call(const std::vector<int64_t>& p) {
  constexpr size_t count = std::size(kConvParams);
  constexpr size_t strided = count + std::size(kConvStrideParams);
  if (p.size() != count && p.size() != strided)
    throw std::invalid_argument("takes " + std::to_string(count) + " parameters (" +
                                std::to_string(strided) + " with strides), got " +
                                std::to_string(p.size()));
  const ExternDtype dtype = read_extern_dtype(p[0]);
  if (std::any_of(p.begin() + 1, p.end(), [](int64_t v) { return v < 0; }))
    throw std::invalid_argument("negative size, stride or offset");
  ConvCall c;
  c.dtype = dtype.dtype;
  c.tf32 = dtype.tf32;
  c.n = p[1], c.c = p[2], c.h = p[3], c.w = p[4], c.k = p[5], c.r = p[6], c.s = p[7];
  c.out_h = p[8], c.out_w = p[9], c.stride_h = p[10], c.stride_w = p[11], c.pad_h = p[12];
  c.pad_w = p[13], c.dil_h = p[14], c.dil_w = p[15], c.groups = p[16], c.x_offset = p[17];
  std::copy(p.begin() + 18, p.begin() + 22, c.x_stride);
  if (c.stride_h == 0 || c.stride_w == 0 || c.dil_h == 0 || c.dil_w == 0 || c.groups == 0 ||
      c.c % c.groups != 0 || c.k % c.groups != 0)
    throw std::invalid_argument(
        "zero stride, dilation or groups, or channels not divisible by groups");
  const auto out = [](int64_t in, int64_t pad, int64_t dil, int64_t kernel, int64_t stride) {
    const int64_t span = in + 2 * pad - dil * (kernel - 1) - 1;
    return span < 0 ? 0 : span / stride + 1;
  };
  if (c.out_h != out(c.h, c.pad_h, c.dil_h, c.r, c.stride_h) ||
      c.out_w != out(c.w, c.pad_w, c.dil_w, c.s, c.stride_w))
    throw std::invalid_argument("the output size is not the convolution's");
  const int64_t w_sizes[4] = {c.k, c.c / c.groups, c.r, c.s};
  const int64_t y_sizes[4] = {c.n, c.k, c.out_h, c.out_w};
  contiguous(w_sizes, c.w_stride);
  contiguous(y_sizes, c.y_stride);
  if (p.size() == strided) {
    std::copy(p.begin() + 22, p.begin() + 26, c.w_stride);
    std::copy(p.begin() + 26, p.end(), c.y_stride);
    if (!one_to_one(w_sizes, c.w_stride) || !one_to_one(y_sizes, c.y_stride))
      throw std::invalid_argument("the weight's or the output's strides make elements overlap");
  }
  return c;
}

ConvCall read_conv_call(const kiln_launch_args& args) {
  return read_conv_call(integer_params(args));
}

}  // namespace kiln::kir_support
