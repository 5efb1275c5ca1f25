// Matrix products. mm and bmm are primitive (they lower to extern calls); addmm, linear
// and matmul decompose into them.
#include "core/graph/builder.h"
#include "core/ops/elementwise.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {
namespace {

void same_dtype(const std::string& op, DType a, DType b) {
  op_check(a == b, op + ": both operands must have the same dtype, got " +
                       std::string(dtype_name(a)) + " and " + std::string(dtype_name(b)));
  op_check(a != DType::Bool, op + " is not defined for bool tensors");
}

// c[batch] = a[batch] @ b[batch], accumulated in f64 (or wrapping i64 for integers).
HostTensor batched_product(const HostTensor& a, const HostTensor& b, const TensorType& out_type) {
  HostTensor out = HostTensor::zeros(out_type.dtype, out_type.sizes);
  const bool batched = a.rank() == 3;
  const int64_t batches = batched ? a.sizes()[0] : 1;
  const int64_t n = a.sizes()[a.rank() - 2], k = a.sizes()[a.rank() - 1],
                m = b.sizes()[b.rank() - 1];
  const bool fp = is_floating(out.dtype());
  for (int64_t p = 0; p < batches; ++p) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0;
        uint64_t iacc = 0;
        for (int64_t t = 0; t < k; ++t) {
          const int64_t ai = (p * n + i) * k + t, bi = (p * k + t) * m + j;
          if (fp)
            acc += a.get(ai) * b.get(bi);
          else
            iacc += static_cast<uint64_t>(a.get_int(ai)) * static_cast<uint64_t>(b.get_int(bi));
        }
        const int64_t o = (p * n + i) * m + j;
        if (fp)
          out.set(o, acc);
        else
          out.set_int(o, static_cast<int64_t>(iacc));
      }
    }
  }
  return out;
}

std::vector<TensorType> infer_mm(const InferContext& c) {
  const TensorType a = c.type(0), b = c.type(1);
  op_check(a.rank() == 2 && b.rank() == 2,
           "mm: both operands must be 2-D, got " + a.to_string() + " and " + b.to_string());
  op_check(a.sizes[1] == b.sizes[0], "mm: shapes " + shape_text(a.sizes) + " and " +
                                         shape_text(b.sizes) + " cannot be multiplied");
  same_dtype("mm", a.dtype, b.dtype);
  return one(a.dtype, {a.sizes[0], b.sizes[1]});
}

std::vector<TensorType> infer_bmm(const InferContext& c) {
  const TensorType a = c.type(0), b = c.type(1);
  op_check(a.rank() == 3 && b.rank() == 3,
           "bmm: both operands must be 3-D, got " + a.to_string() + " and " + b.to_string());
  op_check(a.sizes[0] == b.sizes[0] && a.sizes[2] == b.sizes[1],
           "bmm: shapes " + shape_text(a.sizes) + " and " + shape_text(b.sizes) +
               " cannot be multiplied");
  same_dtype("bmm", a.dtype, b.dtype);
  return one(a.dtype, {a.sizes[0], a.sizes[1], b.sizes[2]});
}

// The shape torch.matmul gives, with the batch dims broadcast.
Shape matmul_shape(const Shape& a, const Shape& b) {
  op_check(!a.empty() && !b.empty(), "matmul: both arguments need at least 1 dimension");
  const int64_t k_a = a.back();
  const int64_t k_b = b.size() == 1 ? b[0] : b[b.size() - 2];
  op_check(k_a == k_b,
           "matmul: shapes " + shape_text(a) + " and " + shape_text(b) + " cannot be multiplied");
  if (a.size() == 1 && b.size() == 1) return {};
  if (b.size() == 1) return Shape(a.begin(), a.end() - 1);
  if (a.size() == 1) {
    Shape out(b.begin(), b.end() - 2);
    out.push_back(b.back());
    return out;
  }
  auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch) op_fail("matmul: " + batch.error().message());
  Shape out = *batch;
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  return out;
}

// matmul via views, expand, bmm: promote 1-D operands to matrices, broadcast the batch,
// flatten it, multiply, and view the result back.
ValueRef decompose_matmul(GraphBuilder& b, ValueRef x, ValueRef y, const Shape& out_shape) {
  Shape xs = b.type(x).sizes, ys = b.type(y).sizes;
  if (xs.size() == 1) x = b.op("aten.unsqueeze.default", {x, int64_t{0}});
  if (ys.size() == 1) y = b.op("aten.unsqueeze.default", {y, int64_t{-1}});
  const Shape xm = b.type(x).sizes, ym = b.type(y).sizes;
  ValueRef product;
  if (xm.size() == 2 && ym.size() == 2) {
    product = b.op("aten.mm.default", {x, y});
  } else {
    auto batch =
        broadcast_shapes(Shape(xm.begin(), xm.end() - 2), Shape(ym.begin(), ym.end() - 2)).value();
    const int64_t flat = shape_numel(batch);
    auto expand_to = [&](ValueRef v, const Shape& m) {
      Shape full = batch;
      full.push_back(m[m.size() - 2]);
      full.push_back(m.back());
      if (full != m) v = b.op("aten.expand.default", {v, IntList(full)});
      return b.op("aten.view.default", {v, IntList{flat, m[m.size() - 2], m.back()}});
    };
    product = b.op("aten.bmm.default", {expand_to(x, xm), expand_to(y, ym)});
  }
  return b.op("aten.view.default", {product, IntList(out_shape)});
}

}  // namespace

std::vector<OpRow> matmul_ops() {
  std::vector<OpRow> rows;
  rows.push_back({"aten.mm.default", infer_mm, [](const RefContext& c) {
                    return std::vector{batched_product(c.tensor(0), c.tensor(1), c.out_types[0])};
                  }});
  rows.push_back({"aten.bmm.default", infer_bmm, [](const RefContext& c) {
                    return std::vector{batched_product(c.tensor(0), c.tensor(1), c.out_types[0])};
                  }});
  // addmm(self, mat1, mat2, beta, alpha) = beta * self + alpha * (mat1 @ mat2)
  rows.push_back(
      {"aten.addmm.default",
       [](const InferContext& c) {
         const TensorType a = c.type(1), b = c.type(2);
         op_check(a.rank() == 2 && b.rank() == 2 && a.sizes[1] == b.sizes[0],
                  "addmm: shapes " + shape_text(a.sizes) + " and " + shape_text(b.sizes) +
                      " cannot be multiplied");
         same_dtype("addmm", a.dtype, b.dtype);
         auto shape = broadcast_shapes(c.type(0).sizes, {a.sizes[0], b.sizes[1]});
         op_check(shape && *shape == Shape{a.sizes[0], b.sizes[1]},
                  "addmm: self of shape " + shape_text(c.type(0).sizes) +
                      " does not broadcast to the product");
         return one(a.dtype, {a.sizes[0], b.sizes[1]});
       },
       [](const RefContext& c) {
         const HostTensor product = batched_product(c.tensor(1), c.tensor(2), c.out_types[0]);
         const HostTensor self = c.tensor(0);
         HostTensor out = c.output(0);
         const double beta = c.get_float(3), alpha = c.get_float(4);
         const Broadcaster bs(self.sizes(), out.sizes());
         for (int64_t i = 0; i < out.numel(); ++i) {
           out.set(i, (beta == 0 ? 0.0 : beta * self.get(bs(i))) + alpha * product.get(i));
         }
         return std::vector{out};
       },
       [](const DecomposeContext& c) {
         ValueRef product = c.b.op("aten.mm.default", {c.tensor(1), c.tensor(2)});
         if (c.get_float(4) != 1.0) product = c.b.mul(product, c.mapped(4));
         if (c.get_float(3) == 0.0) return std::vector{product};
         ValueRef self = c.tensor(0);
         if (c.get_float(3) != 1.0) self = c.b.mul(self, c.mapped(3));
         return std::vector{c.b.add(self, product)};
       }});
  rows.push_back(
      {"aten.matmul.default",
       [](const InferContext& c) {
         same_dtype("matmul", c.type(0).dtype, c.type(1).dtype);
         return one(c.type(0).dtype, matmul_shape(c.type(0).sizes, c.type(1).sizes));
       },
       [](const RefContext& c) {
         // Straight from the definition: out[..., i, j] = sum_k a[..., i, k] b[..., k, j].
         const HostTensor a = c.tensor(0), b = c.tensor(1);
         Shape as = a.sizes(), bs = b.sizes();
         if (as.size() == 1) as.insert(as.begin(), 1);
         if (bs.size() == 1) bs.push_back(1);
         const Shape batch =
             broadcast_shapes(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2))
                 .value();
         const int64_t n = as[as.size() - 2], k = as.back(), m = bs.back();
         Shape a_full = batch, b_full = batch;
         a_full.insert(a_full.end(), {n, k});
         b_full.insert(b_full.end(), {k, m});
         HostTensor out = c.output(0);
         const int64_t batches = shape_numel(batch);
         const bool fp = is_floating(out.dtype());
         const Shape a_strides = contiguous_strides(as), b_strides = contiguous_strides(bs);
         auto batch_offset = [&](const Shape& own, const Shape& strides, int64_t p) {
           int64_t offset = 0;
           const size_t lead = batch.size() - (own.size() - 2);
           for (size_t d = batch.size(); d-- > 0;) {
             const int64_t idx = p % batch[d];
             p /= batch[d];
             if (d >= lead && own[d - lead] != 1) offset += idx * strides[d - lead];
           }
           return offset;
         };
         for (int64_t p = 0; p < batches; ++p) {
           const int64_t ao = batch_offset(as, a_strides, p), bo = batch_offset(bs, b_strides, p);
           for (int64_t i = 0; i < n; ++i) {
             for (int64_t j = 0; j < m; ++j) {
               double acc = 0;
               uint64_t iacc = 0;  // integers: exact, wrapping
               for (int64_t t = 0; t < k; ++t) {
                 if (fp)
                   acc += a.get(ao + i * k + t) * b.get(bo + t * m + j);
                 else
                   iacc += static_cast<uint64_t>(a.get_int(ao + i * k + t)) *
                           static_cast<uint64_t>(b.get_int(bo + t * m + j));
               }
               if (fp)
                 out.set((p * n + i) * m + j, acc);
               else
                 out.set_int((p * n + i) * m + j, static_cast<int64_t>(iacc));
             }
           }
         }
         return std::vector{out};
       },
       [](const DecomposeContext& c) {
         return std::vector{decompose_matmul(c.b, c.tensor(0), c.tensor(1), c.out_types[0].sizes)};
       }});
  // linear(input, weight, bias) = input @ weight^T + bias
  rows.push_back({"aten.linear.default",
                  [](const InferContext& c) {
                    const TensorType x = c.type(0), w = c.type(1);
                    op_check(w.rank() == 2, "linear: weight must be 2-D, got " + w.to_string());
                    op_check(x.rank() >= 1 && x.sizes.back() == w.sizes[1],
                             "linear: input " + shape_text(x.sizes) + " does not match weight " +
                                 shape_text(w.sizes));
                    same_dtype("linear", x.dtype, w.dtype);
                    Shape out = x.sizes;
                    out.back() = w.sizes[0];
                    if (!c.is_none(2)) {
                      auto s = broadcast_shapes(c.type(2).sizes, out);
                      op_check(s && *s == out, "linear: bias " + shape_text(c.type(2).sizes) +
                                                   " does not broadcast to " + shape_text(out));
                    }
                    return one(x.dtype, out);
                  },
                  [](const RefContext& c) {
                    const HostTensor x = c.tensor(0), w = c.tensor(1);
                    HostTensor out = c.output(0);
                    const int64_t in = w.sizes()[1], outs = w.sizes()[0];
                    const std::optional<HostTensor> bias =
                        c.is_none(2) ? std::nullopt : std::optional(c.tensor(2));
                    const std::optional<Broadcaster> bias_index =
                        bias ? std::optional<Broadcaster>(Broadcaster(bias->sizes(), out.sizes()))
                             : std::nullopt;
                    for (int64_t r = 0; r < out.numel() / std::max<int64_t>(outs, 1); ++r) {
                      for (int64_t o = 0; o < outs; ++o) {
                        double acc = 0;
                        for (int64_t t = 0; t < in; ++t)
                          acc += x.get(r * in + t) * w.get(o * in + t);
                        if (bias) acc += bias->get((*bias_index)(r * outs + o));
                        out.set(r * outs + o, acc);
                      }
                    }
                    return std::vector{out};
                  },
                  [](const DecomposeContext& c) {
                    const Shape xs = c.type(0).sizes;
                    ValueRef wt = c.b.op("aten.permute.default", {c.tensor(1), IntList{1, 0}});
                    ValueRef x2 = xs.size() == 2 ? c.tensor(0)
                                                 : c.b.op("aten.view.default",
                                                          {c.tensor(0), IntList{-1, xs.back()}});
                    ValueRef y = c.b.op("aten.mm.default", {x2, wt});
                    if (!c.is_none(2)) y = c.b.add(y, c.tensor(2));
                    if (xs.size() != 2)
                      y = c.b.op("aten.view.default", {y, IntList(c.out_types[0].sizes)});
                    return std::vector{y};
                  }});
  return rows;
}

}  // namespace kiln
