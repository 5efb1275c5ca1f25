// kiln's own discrete Fourier transforms on complex values in real form (f32 pairs in a
// trailing dim of 2, torch.view_as_real's layout), one dim at a time and unnormalised; complex
// lowering builds ATen's FFTs from them. The references sum in f64 with exact angles; the
// decompositions are a matrix product with a table of twiddles (cos and sin of 2*pi*(k*n mod
// N)/N), so every plugin runs them as a matmul: O(N^2) per line, fast for the lengths models
// use (up to a few thousand), slower than an FFT's O(N log N) beyond.
//
//   kiln.rfft(x f32[.., N, ..], dim, onesided) -> f32[.., K, .., 2]  K = N/2+1 or N
//   kiln.cfft(x f32[.., N, .., 2], dim, forward) -> f32[.., N, .., 2]  (inverse: e^{+i})
//   kiln.irfft(x f32[.., K, .., 2], dim, length N) -> f32[.., N, ..]  Hermitian, K = N/2+1
#include <cmath>
#include <numbers>
#include <numeric>

#include "core/graph/builder.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {
namespace {

// A line along `dim` of a row-major shape: element j of line (outer, inner) sits at
// (outer * length + j) * inner + inner_index; the complex pair's 2 folds into inner.
struct Lines {
  int64_t outer = 1, length = 1, inner = 1;
  Lines(const Shape& sizes, int64_t dim, int64_t pair) : inner(pair) {
    for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
      const int64_t s = sizes[static_cast<size_t>(d)];
      if (d < dim) outer *= s;
      if (d == dim) length = s;
      if (d > dim) inner *= s;
    }
  }
  int64_t at(int64_t o, int64_t j, int64_t i) const { return (o * length + j) * inner + i; }
};

// A twiddle as the reference weighs a term by it: itself, or its magnitude in the oracle's
// bound run (RefContext::magnitudes), so that run sums |terms|.
struct Weigh {
  bool magnitudes = false;
  double operator()(double weight) const { return magnitudes ? std::fabs(weight) : weight; }
};

double angle(int64_t k, int64_t n, int64_t length) {
  return 2 * std::numbers::pi * static_cast<double>((k * n) % length) / static_cast<double>(length);
}

// The complex rank of a real-form tensor (its trailing 2 left out), after checking it is one.
int64_t complex_rank(const TensorType& x, const std::string& op) {
  op_check(x.dtype == DType::F32 && x.rank() >= 2 && x.sizes.back() == 2,
           op +
               ": expects complex values as f32 pairs (a last dim of 2, at least one dim "
               "before it), got " +
               x.to_string());
  return x.rank() - 1;
}

int64_t transform_dim(const ArgView& c, int64_t rank, const std::string& op) {
  auto d = normalize_dim(c.get_int(1), rank);
  op_check(d.has_value() && rank > 0, op + ": dim " + std::to_string(c.get_int(1)) +
                                          " is out of range for " + std::to_string(rank) + " dims");
  return *d;
}

// Moves `dim` of a rank-`rank` value to just before the last `tail` dims.
IntList moved_last(int64_t rank, int64_t dim, int64_t tail) {
  IntList p;
  for (int64_t d = 0; d < rank - tail; ++d)
    if (d != dim) p.push_back(d);
  p.push_back(dim);
  for (int64_t d = rank - tail; d < rank; ++d) p.push_back(d);
  return p;
}

IntList inverse_of(const IntList& p) {
  IntList q(p.size());
  for (size_t i = 0; i < p.size(); ++i) q[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return q;
}

// cos and sin of 2*pi*(a*b mod n)/n for a in [0, rows), b in [0, cols), as f32 [rows, cols].
std::pair<ValueRef, ValueRef> twiddles(GraphBuilder& b, int64_t rows, int64_t cols, int64_t n) {
  const ValueRef a =
      b.op("aten.view.default",
           {b.op("aten.arange.start_step", {int64_t{0}, rows, int64_t{1}}), IntList{rows, 1}});
  const ValueRef c =
      b.op("aten.view.default",
           {b.op("aten.arange.start_step", {int64_t{0}, cols, int64_t{1}}), IntList{1, cols}});
  const ValueRef turns =
      b.op("aten.remainder.Scalar", {b.op("aten.mul.Tensor", {a, c}), n});  // exact in i64
  const ValueRef theta =
      b.op("aten.mul.Tensor", {turns, 2 * std::numbers::pi / static_cast<double>(n)});
  return {b.op("aten.cos.default", {theta}), b.op("aten.sin.default", {theta})};
}

ValueRef stack(GraphBuilder& b, std::vector<ValueRef> items, int64_t dim) {
  TensorList list;
  for (ValueRef v : items) list.items.emplace_back(v);
  return b.op("aten.stack.default", {list, dim});
}

// Lines of `x` (the transform dim moved before the last `tail` dims) times `table`
// [length * width, out_width], put back with the transform dim where it was. `out_tail` is the
// trailing dims of the result after the transform dim (the pair's 2, or none).
ValueRef times_table(GraphBuilder& b, ValueRef x, const TensorType& type, int64_t dim, int64_t tail,
                     ValueRef table, int64_t out_length, Shape out_tail) {
  const IntList p = moved_last(type.rank(), dim, tail);
  int64_t inner = type.sizes[static_cast<size_t>(dim)];
  for (int64_t d = type.rank() - tail; d < type.rank(); ++d)
    inner *= type.sizes[static_cast<size_t>(d)];
  const int64_t lines = type.numel() / std::max<int64_t>(inner, 1);
  const ValueRef rows =
      b.op("aten.view.default", {b.op("aten.permute.default", {x, p}), IntList{lines, inner}});
  const ValueRef product = b.op("aten.mm.default", {rows, table});
  Shape moved;
  for (int64_t d : IntList(p.begin(), p.end() - 1 - tail))
    moved.push_back(type.sizes[static_cast<size_t>(d)]);
  moved.push_back(out_length);
  moved.insert(moved.end(), out_tail.begin(), out_tail.end());
  IntList back_order = p;
  back_order.resize(p.size() - static_cast<size_t>(tail) + out_tail.size());
  for (size_t i = 0; i < out_tail.size(); ++i)
    back_order[p.size() - static_cast<size_t>(tail) + i] =
        static_cast<int64_t>(p.size() - static_cast<size_t>(tail) + i);
  return b.op("aten.permute.default",
              {b.op("aten.view.default", {product, IntList(moved)}), inverse_of(back_order)});
}

OpRow rfft_row() {
  return {
      "kiln.rfft.default",
      [](const InferContext& c) {
        const TensorType x = c.type(0);
        op_check(x.dtype == DType::F32, "kiln.rfft: expects f32, got " + x.to_string());
        const int64_t dim = transform_dim(c, x.rank(), "kiln.rfft");
        Shape sizes = x.sizes;
        int64_t& n = sizes[static_cast<size_t>(dim)];
        op_check(n > 0, "kiln.rfft: a transform of length 0");
        if (c.get_bool(2)) n = n / 2 + 1;
        sizes.push_back(2);
        return one(DType::F32, sizes);
      },
      [](const RefContext& c) {
        const HostTensor x = c.tensor(0);
        HostTensor out = c.output(0);
        const Weigh w{c.magnitudes};
        const int64_t dim = transform_dim(c, x.rank(), "kiln.rfft");
        const Lines in(x.sizes(), dim, 1);
        const Lines to(Shape(c.out_types[0].sizes.begin(), c.out_types[0].sizes.end() - 1), dim, 2);
        for (int64_t o = 0; o < in.outer; ++o)
          for (int64_t i = 0; i < in.inner; ++i)
            for (int64_t k = 0; k < to.length; ++k) {
              double re = 0, im = 0;
              for (int64_t n = 0; n < in.length; ++n) {
                const double v = x.get(in.at(o, n, i)), t = angle(k, n, in.length);
                re += v * w(std::cos(t));
                im += w(-1) * v * w(std::sin(t));
              }
              out.set(to.at(o, k, 2 * i), re);
              out.set(to.at(o, k, 2 * i + 1), im);
            }
        return std::vector{out};
      },
      [](const DecomposeContext& c) {
        const TensorType x = c.type(0);
        const int64_t dim = transform_dim(c, x.rank(), "kiln.rfft");
        const int64_t n = x.sizes[static_cast<size_t>(dim)];
        const int64_t k = c.out_types[0].sizes[static_cast<size_t>(dim)];
        auto [cos, sin] = twiddles(c.b, n, k, n);  // [n, k]
        const ValueRef table =
            c.b.op("aten.view.default",
                   {stack(c.b, {cos, c.b.op("aten.neg.default", {sin})}, 2), IntList{n, 2 * k}});
        return std::vector{times_table(c.b, c.tensor(0), x, dim, 0, table, k, {2})};
      }};
}

OpRow cfft_row() {
  return {"kiln.cfft.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            const int64_t dim = transform_dim(c, complex_rank(x, "kiln.cfft"), "kiln.cfft");
            op_check(x.sizes[static_cast<size_t>(dim)] > 0, "kiln.cfft: a transform of length 0");
            return one(DType::F32, x.sizes);
          },
          [](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            HostTensor out = c.output(0);
            const Shape complex_sizes(x.sizes().begin(), x.sizes().end() - 1);
            const int64_t dim =
                transform_dim(c, static_cast<int64_t>(complex_sizes.size()), "kiln.cfft");
            const double sign = c.get_bool(2) ? -1 : 1;  // forward: e^{-i theta}
            const Weigh w{c.magnitudes};
            const Lines l(complex_sizes, dim, 2);
            for (int64_t o = 0; o < l.outer; ++o)
              for (int64_t i = 0; i < l.inner; i += 2)
                for (int64_t k = 0; k < l.length; ++k) {
                  double re = 0, im = 0;
                  for (int64_t n = 0; n < l.length; ++n) {
                    const double a = x.get(l.at(o, n, i)), b = x.get(l.at(o, n, i + 1));
                    const double t = angle(k, n, l.length), co = w(std::cos(t)),
                                 si = w(sign * std::sin(t));
                    re += a * co + w(-1) * b * si;
                    im += a * si + b * co;
                  }
                  out.set(l.at(o, k, i), re);
                  out.set(l.at(o, k, i + 1), im);
                }
            return std::vector{out};
          },
          [](const DecomposeContext& c) {
            const TensorType x = c.type(0);
            const int64_t dim = transform_dim(c, complex_rank(x, "kiln.cfft"), "kiln.cfft");
            const int64_t n = x.sizes[static_cast<size_t>(dim)];
            GraphBuilder& b = c.b;
            auto [cos, sin] = twiddles(b, n, n, n);
            // (a + ib)(cos + i s sin) with s = -1 forward: rows (n, a|b), columns (k, re|im).
            const ValueRef s_sin = c.get_bool(2) ? b.op("aten.neg.default", {sin}) : sin;
            const ValueRef from_re = stack(b, {cos, s_sin}, 2);
            const ValueRef from_im = stack(b, {b.op("aten.neg.default", {s_sin}), cos}, 2);
            const ValueRef table =
                b.op("aten.view.default", {stack(b, {from_re, from_im}, 1), IntList{2 * n, 2 * n}});
            return std::vector{times_table(b, c.tensor(0), x, dim, 1, table, n, {2})};
          }};
}

// Hermitian weights: every k other than 0 and N/2 stands for itself and its mirror N - k.
double hermitian_weight(int64_t k, int64_t n) {
  return k == 0 || 2 * k == n ? 1.0 : 2.0;
}

OpRow irfft_row() {
  return {"kiln.irfft.default",
          [](const InferContext& c) {
            const TensorType x = c.type(0);
            const int64_t dim = transform_dim(c, complex_rank(x, "kiln.irfft"), "kiln.irfft");
            const int64_t length = c.get_int(2);
            op_check(length >= 1 && x.sizes[static_cast<size_t>(dim)] == length / 2 + 1,
                     "kiln.irfft: a length of " + std::to_string(length) + " takes " +
                         std::to_string(length / 2 + 1) + " values along dim " +
                         std::to_string(dim) + ", got " + x.to_string());
            Shape sizes(x.sizes.begin(), x.sizes.end() - 1);
            sizes[static_cast<size_t>(dim)] = length;
            return one(DType::F32, sizes);
          },
          [](const RefContext& c) {
            const HostTensor x = c.tensor(0);
            HostTensor out = c.output(0);
            const Shape complex_sizes(x.sizes().begin(), x.sizes().end() - 1);
            const int64_t dim =
                transform_dim(c, static_cast<int64_t>(complex_sizes.size()), "kiln.irfft");
            const Lines in(complex_sizes, dim, 2);
            const Lines to(out.sizes(), dim, 1);
            const Weigh w{c.magnitudes};
            for (int64_t o = 0; o < to.outer; ++o)
              for (int64_t i = 0; i < to.inner; ++i)
                for (int64_t n = 0; n < to.length; ++n) {
                  double sum = 0;
                  for (int64_t k = 0; k < in.length; ++k) {
                    const double t = angle(k, n, to.length);
                    sum += hermitian_weight(k, to.length) *
                           (x.get(in.at(o, k, 2 * i)) * w(std::cos(t)) +
                            w(-1) * x.get(in.at(o, k, 2 * i + 1)) * w(std::sin(t)));
                  }
                  out.set(to.at(o, n, i), sum);
                }
            return std::vector{out};
          },
          [](const DecomposeContext& c) {
            const TensorType x = c.type(0);
            const int64_t dim = transform_dim(c, complex_rank(x, "kiln.irfft"), "kiln.irfft");
            const int64_t k = x.sizes[static_cast<size_t>(dim)], n = c.get_int(2);
            GraphBuilder& b = c.b;
            auto [cos, sin] = twiddles(b, k, n, n);  // [k, n]
            // weight 2 - [k == 0] - [2k == n], as a column
            const ValueRef ks =
                b.op("aten.view.default",
                     {b.op("aten.arange.start_step", {int64_t{0}, k, int64_t{1}}), IntList{k, 1}});
            const ValueRef edges =
                b.op("aten.add.Tensor",
                     {b.op("aten._to_copy.default", {b.op("aten.eq.Scalar", {ks, int64_t{0}})},
                           {{"dtype", DType::F32}}),
                      b.op("aten._to_copy.default",
                           {b.op("aten.eq.Scalar", {b.op("aten.mul.Tensor", {ks, int64_t{2}}), n})},
                           {{"dtype", DType::F32}})});
            const ValueRef weight =
                b.op("aten.add.Tensor", {b.op("aten.mul.Tensor", {edges, -1.0}), 2.0});
            const ValueRef table =
                b.op("aten.view.default",
                     {stack(b,
                            {b.op("aten.mul.Tensor", {cos, weight}),
                             b.op("aten.mul.Tensor", {b.op("aten.neg.default", {sin}), weight})},
                            1),
                      IntList{2 * k, n}});
            return std::vector{times_table(b, c.tensor(0), x, dim, 1, table, n, {})};
          }};
}

}  // namespace

std::vector<OpRow> dft_ops() {
  return {rfft_row(), cfft_row(), irfft_row()};
}

}  // namespace kiln
