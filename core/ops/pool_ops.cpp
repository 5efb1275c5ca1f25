// Pooling: shape inference and a direct reference. The window walk (pool_window.h) is
// shared with convolution.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/pool_window.h"

namespace kiln {
namespace {

OpRow avg_pool_row(const std::string& overload, size_t dims, bool has_divisor) {
  return {overload,
          [=](const InferContext& c) {
            op_check(is_floating(c.type(0).dtype), c.schema().op + " needs a floating input");
            op_check(!has_divisor || c.is_none(6) || c.get_int(6) != 0,
                     c.schema().op + ": divisor_override must not be 0");
            return one(c.type(0).dtype,
                       window_output(c.type(0).sizes, pool_window(c, dims, false), c.schema().op));
          },
          [=](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const Window w = pool_window(c, dims, false);
            const bool count_pad = c.get_bool(5);
            const int64_t divisor = has_divisor && !c.is_none(6) ? c.get_int(6) : 0;  // 0: none
            HostTensor out = c.output(0);
            pool_all(x, out.sizes(), dims,
                     [&](int64_t base, const Shape& in_spatial, const Shape& pos, int64_t o) {
                       double sum = 0;
                       for_window(w, in_spatial, pos, [&](const Shape& at, bool inside) {
                         if (inside) sum += x.get(base + ravel(at, in_spatial));
                       });
                       const int64_t n = avg_pool_divisor(w, in_spatial, pos, count_pad, divisor);
                       out.set(o, sum / static_cast<double>(n));
                     });
            return std::vector{out};
          }};
}

OpRow max_pool_row(const std::string& overload, size_t dims) {
  return {overload,
          [=](const InferContext& c) {
            const Shape shape =
                window_output(c.type(0).sizes, pool_window(c, dims, true), c.schema().op);
            return std::vector{TensorType::contiguous(c.type(0).dtype, shape),
                               TensorType::contiguous(DType::I64, shape)};
          },
          [=](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const Window w = pool_window(c, dims, true);
            HostTensor out = c.output(0), indices = c.output(1);
            pool_all(x, out.sizes(), dims,
                     [&](int64_t base, const Shape& in_spatial, const Shape& pos, int64_t o) {
                       double best = -INFINITY;
                       int64_t where = -1;
                       for_window(w, in_spatial, pos, [&](const Shape& at, bool inside) {
                         if (!inside) return;
                         const int64_t i = ravel(at, in_spatial);
                         const double v = x.get(base + i);
                         if (where < 0 || v > best || std::isnan(v)) {
                           if (!(where >= 0 && std::isnan(best))) {
                             best = v;
                             where = i;
                           }
                         }
                       });
                       out.set(o, best);
                       indices.set_int(o, where);
                     });
            return std::vector{out, indices};
          }};
}

// Adaptive average pooling: output cell i covers [floor(i*in/out), ceil((i+1)*in/out)).
OpRow adaptive_avg_row(const std::string& overload, size_t dims) {
  return {overload,
          [=](const InferContext& c) {
            const TensorType x = c.type(0);
            const IntList size = c.get_ints(1);
            op_check(size.size() == dims,
                     c.schema().op + ": output_size needs " + std::to_string(dims) + " values");
            op_check(x.rank() == static_cast<int64_t>(dims) + 1 ||
                         x.rank() == static_cast<int64_t>(dims) + 2,
                     c.schema().op + ": unexpected input rank " + std::to_string(x.rank()));
            Shape out(x.sizes.begin(), x.sizes.end() - static_cast<std::ptrdiff_t>(dims));
            for (int64_t s : size) {
              op_check(s > 0, c.schema().op + ": output sizes must be positive");
              out.push_back(s);
            }
            return one(x.dtype, out);
          },
          [=](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            HostTensor out = c.output(0);
            pool_all(x, out.sizes(), dims,
                     [&](int64_t base, const Shape& in_spatial, const Shape& pos, int64_t o) {
                       Shape lo(dims), hi(dims);
                       const Shape out_spatial(
                           out.sizes().end() - static_cast<std::ptrdiff_t>(dims),
                           out.sizes().end());
                       for (size_t d = 0; d < dims; ++d) {
                         lo[d] = adaptive_start(pos[d], in_spatial[d], out_spatial[d]);
                         hi[d] = adaptive_end(pos[d], in_spatial[d], out_spatial[d]);
                       }
                       Shape extent(dims);
                       for (size_t d = 0; d < dims; ++d) extent[d] = hi[d] - lo[d];
                       double sum = 0;
                       const int64_t count = shape_numel(extent);
                       for (int64_t t = 0; t < count; ++t) {
                         Shape at = unravel(t, extent);
                         for (size_t d = 0; d < dims; ++d) at[d] += lo[d];
                         sum += x.get(base + ravel(at, in_spatial));
                       }
                       out.set(o, sum / static_cast<double>(count));
                     });
            return std::vector{out};
          }};
}

}  // namespace

std::vector<OpRow> pool_ops() {
  std::vector<OpRow> rows;
  rows.push_back(avg_pool_row("aten.avg_pool1d.default", 1, false));
  rows.push_back(avg_pool_row("aten.avg_pool2d.default", 2, true));
  rows.push_back(avg_pool_row("aten.avg_pool3d.default", 3, true));
  rows.push_back(max_pool_row("aten.max_pool2d_with_indices.default", 2));
  rows.push_back(max_pool_row("aten.max_pool3d_with_indices.default", 3));
  rows.push_back(adaptive_avg_row("aten.adaptive_avg_pool1d.default", 1));
  rows.push_back(adaptive_avg_row("aten._adaptive_avg_pool2d.default", 2));
  rows.push_back(adaptive_avg_row("aten._adaptive_avg_pool3d.default", 3));
  return rows;
}

}  // namespace kiln
