// _cdist_forward (distances between the rows of two batched matrices) and _pdist_forward
// (between every pair of rows of one matrix, upper triangle in row-major order): shape
// inference and references (p_norm.h).
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/p_norm.h"

namespace kiln {
namespace {

void check_p(double p, const std::string& op) {
  op_check(p >= 0 && !std::isnan(p),
           op + ": p must be a non-negative number, got " + std::to_string(p));
}

// _cdist_forward(x1 [*, P, M], x2 [*, R, M], p, compute_mode) -> [*, P, R]
OpRow cdist_row() {
  return {
      "aten._cdist_forward.default",
      [](const InferContext& c) {
        const TensorType a = c.type(0), b = c.type(1);
        op_check(is_floating(a.dtype) && a.dtype == b.dtype,
                 "_cdist_forward: x1 and x2 must share a floating dtype");
        op_check(a.rank() >= 2 && b.rank() == a.rank(),
                 "_cdist_forward: x1 and x2 must have the same rank, at least 2");
        op_check(a.sizes.back() == b.sizes.back(),
                 "_cdist_forward: x1 and x2 must have the same number of columns");
        op_check(
            Shape(a.sizes.begin(), a.sizes.end() - 2) == Shape(b.sizes.begin(), b.sizes.end() - 2),
            "_cdist_forward: batch dims " + shape_text(a.sizes) + " and " + shape_text(b.sizes) +
                " differ (expand them first)");
        check_p(c.get_float(2), "_cdist_forward");
        Shape out(a.sizes.begin(), a.sizes.end() - 1);
        out.push_back(b.sizes[b.sizes.size() - 2]);
        return one(a.dtype, out);
      },
      [](const RefContext& c) {
        const HostTensor a = c.tensor(0), b = c.tensor(1);
        const double p = c.get_float(2);
        HostTensor out = c.output(0);
        const int64_t m = a.sizes().back(), rows_a = a.sizes()[a.sizes().size() - 2],
                      rows_b = b.sizes()[b.sizes().size() - 2];
        for (int64_t o = 0; o < out.numel(); ++o) {
          const int64_t batch = o / (rows_a * rows_b), i = o / rows_b % rows_a, j = o % rows_b;
          const int64_t ai = (batch * rows_a + i) * m, bj = (batch * rows_b + j) * m;
          out.set(o, p_distance(p, m, [&](int64_t k) { return a.get(ai + k) - b.get(bj + k); }));
        }
        return std::vector{out};
      }};
}

// _pdist_forward(self [N, M], p) -> [N * (N - 1) / 2]
OpRow pdist_row() {
  return {"aten._pdist_forward.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            op_check(is_floating(x.dtype) && x.rank() == 2,
                     "_pdist_forward: expected a 2-D floating input, got " + x.to_string());
            check_p(c.get_float(1), "_pdist_forward");
            const int64_t n = x.sizes[0];
            op_check(n < (int64_t{1} << 31), "_pdist_forward: at most 2^31 rows");
            return one(x.dtype, {n * (n - 1) / 2});
          },
          [](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            const double p = c.get_float(1);
            HostTensor out = c.output(0);
            const int64_t n = x.sizes()[0], m = x.sizes()[1];
            int64_t o = 0;
            for (int64_t i = 0; i < n; ++i)
              for (int64_t j = i + 1; j < n; ++j, ++o)
                out.set(o, p_distance(p, m, [&](int64_t k) {
                          return x.get(i * m + k) - x.get(j * m + k);
                        }));
            return std::vector{out};
          }};
}

}  // namespace

std::vector<OpRow> distance_ops() {
  return {cdist_row(), pdist_row()};
}

}  // namespace kiln
