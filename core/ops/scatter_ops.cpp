// Writes through index tensors, functionally: each op returns a new tensor equal to `self`
// with some elements replaced or accumulated. Indices are bounds-checked.
#include <cmath>
#include <type_traits>

#include "core/expr/expr.h"
#include "core/ops/elementwise.h"
#include "core/ops/indexing.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/slice_bounds.h"

namespace kiln {
namespace {

std::vector<TensorType> same_as_self(const InferContext& c) {
  return {TensorType::contiguous(c.type(0).dtype, c.type(0).sizes)};
}

enum class Combine { Assign, Sum, Prod, Mean, Max, Min };

Combine parse_reduce(const std::string& reduce) {
  if (reduce == "sum") return Combine::Sum;
  if (reduce == "prod") return Combine::Prod;
  if (reduce == "mean") return Combine::Mean;
  if (reduce == "amax") return Combine::Max;
  if (reduce == "amin") return Combine::Min;
  op_fail("scatter_reduce: reduce must be sum, prod, mean, amax or amin, got '" + reduce + "'");
}

// scatter family: for each element e of `index`, out[e with dim replaced by index[e]]
// combines src[e] (or `value`).
void check_scatter(const InferContext& c, int index_arg, int src_arg) {
  const TensorType x = c.type(0), idx = c.type(index_arg);
  require_index_dtype(idx, c.schema().op);
  op_check(x.rank() > 0, c.schema().op + ": 0-dim inputs are not supported");
  op_check(idx.rank() == x.rank(), c.schema().op + ": index must have the same rank as self");
  const int64_t dim = normalize_dim(c.get_int(1), x.rank()).value_or(-1);
  op_check(dim >= 0, c.schema().op + ": dim " + std::to_string(c.get_int(1)) + " is out of range");
  for (int64_t d = 0; d < x.rank(); ++d) {
    op_check(d == dim || idx.sizes[static_cast<size_t>(d)] <= x.sizes[static_cast<size_t>(d)],
             c.schema().op + ": index " + shape_text(idx.sizes) + " is larger than self " +
                 shape_text(x.sizes));
  }
  if (src_arg >= 0 && c.is_tensor(src_arg)) {
    const TensorType src = c.type(src_arg);
    op_check(src.rank() == idx.rank(), c.schema().op + ": src must have the same rank as index");
    for (int64_t d = 0; d < idx.rank(); ++d) {
      op_check(idx.sizes[static_cast<size_t>(d)] <= src.sizes[static_cast<size_t>(d)],
               c.schema().op + ": index " + shape_text(idx.sizes) + " is larger than src " +
                   shape_text(src.sizes));
    }
  }
}

template <class T>
T load(const HostTensor& t, int64_t i) {
  if constexpr (std::is_same_v<T, double>)
    return t.get(i);
  else
    return t.get_int(i);
}

template <class T>
void store(HostTensor& t, int64_t i, T v) {
  if constexpr (std::is_same_v<T, double>)
    t.set(i, v);
  else
    t.set_int(i, v);
}

// One combining step; integers wrap, floats propagate NaN through max and min.
template <class T>
T combine_values(Combine combine, T a, T v) {
  switch (combine) {
    case Combine::Assign:
      return v;
    case Combine::Sum:
    case Combine::Mean:
      if constexpr (std::is_same_v<T, double>)
        return a + v;
      else
        return wrap_add(a, v);
    case Combine::Prod:
      if constexpr (std::is_same_v<T, double>)
        return a * v;
      else
        return wrap_mul(a, v);
    case Combine::Max:
      if constexpr (std::is_same_v<T, double>) {
        if (std::isnan(a) || std::isnan(v)) return NAN;
      }
      return std::max(a, v);
    case Combine::Min:
      if constexpr (std::is_same_v<T, double>) {
        if (std::isnan(a) || std::isnan(v)) return NAN;
      }
      return std::min(a, v);
  }
  return v;
}

// The scatter family in the output's own arithmetic: f64 for floats, exact int64 otherwise.
template <class T>
HostTensor scatter_typed(const RefContext& c, int index_arg, int src_arg, Combine combine,
                         bool include_self) {
  const HostTensor self = c.tensor(0), idx = c.tensor(index_arg);
  HostTensor out = self.to(self.dtype());
  // src is a tensor, or a number converted to self's dtype as PyTorch does.
  const HostTensor src =
      c.is_tensor(src_arg) ? c.tensor(src_arg) : c.tensor(src_arg).to(self.dtype());
  const bool from_tensor = c.is_tensor(src_arg);
  const Shape xs = self.sizes(), is = idx.sizes();
  const auto dim = static_cast<size_t>(normalize_dim(c.get_int(1), self.rank()).value());
  std::vector<T> acc(static_cast<size_t>(out.numel()));
  std::vector<int64_t> count(static_cast<size_t>(out.numel()), 0);
  for (int64_t i = 0; i < out.numel(); ++i) acc[static_cast<size_t>(i)] = load<T>(out, i);
  for (int64_t e = 0; e < idx.numel(); ++e) {
    Shape at = unravel(e, is);
    const T v = load<T>(src, from_tensor ? ravel(at, src.sizes()) : 0);
    at[dim] = checked_index(idx.get_int(e), xs[dim], c.schema().op);
    const auto o = static_cast<size_t>(ravel(at, xs));
    const bool first = count[o] == 0 && (!include_self || combine == Combine::Assign);
    acc[o] = first ? v : combine_values(combine, acc[o], v);
    ++count[o];
  }
  for (int64_t i = 0; i < out.numel(); ++i) {
    const auto k = static_cast<size_t>(i);
    if (count[k] == 0) continue;
    T v = acc[k];
    if (combine == Combine::Mean) {
      const int64_t n = count[k] + (include_self ? 1 : 0);
      if constexpr (std::is_same_v<T, double>)
        v /= static_cast<double>(n);
      else
        v = floor_div(v, n);
    }
    store<T>(out, i, v);
  }
  return out;
}

HostTensor scatter_reference(const RefContext& c, int index_arg, int src_arg, Combine combine,
                             bool include_self) {
  if (is_floating(c.out_types[0].dtype))
    return scatter_typed<double>(c, index_arg, src_arg, combine, include_self);
  return scatter_typed<int64_t>(c, index_arg, src_arg, combine, include_self);
}

OpRow scatter_row(const std::string& overload, int src_arg, Combine combine) {
  return {overload,
          [src_arg](const InferContext& c) {
            check_scatter(c, 2, src_arg);
            return same_as_self(c);
          },
          [src_arg, combine](const RefContext& c) {
            return std::vector{scatter_reference(c, 2, src_arg, combine, true)};
          }};
}

// select_scatter and slice_scatter: embed src into a copy of self at a view.
HostTensor embed(const RefContext& c, const std::function<bool(Shape&)>& to_src) {
  const HostTensor self = c.tensor(0), src = c.tensor(1);
  HostTensor out = self.to(self.dtype());
  for (int64_t o = 0; o < out.numel(); ++o) {
    Shape at = unravel(o, out.sizes());
    if (!to_src(at)) continue;
    const int64_t s = ravel(at, src.sizes());
    if (is_floating(out.dtype()))
      out.set(o, src.get(s));
    else
      out.set_int(o, src.get_int(s));
  }
  return out;
}

}  // namespace

std::vector<OpRow> scatter_ops() {
  std::vector<OpRow> rows;
  rows.push_back(scatter_row("aten.scatter.src", 3, Combine::Assign));
  rows.push_back(scatter_row("aten.scatter.value", 3, Combine::Assign));
  rows.push_back(scatter_row("aten.scatter_add.default", 3, Combine::Sum));
  rows.push_back({"aten.scatter_reduce.two",
                  [](const InferContext& c) {
                    parse_reduce(c.get_str(4));
                    check_scatter(c, 2, 3);
                    return same_as_self(c);
                  },
                  [](const RefContext& c) {
                    return std::vector{
                        scatter_reference(c, 2, 3, parse_reduce(c.get_str(4)), c.get_bool(5))};
                  }});
  rows.push_back(
      {"aten.select_scatter.default",
       [](const InferContext& c) {
         const TensorType x = c.type(0);
         op_check(x.rank() > 0, "select_scatter: self must have at least one dim");
         const int64_t dim = normalize_dim(c.get_int(2), x.rank()).value_or(-1);
         op_check(dim >= 0, "select_scatter: dim out of range");
         checked_index(c.get_int(3), x.sizes[static_cast<size_t>(dim)], "select_scatter");
         Shape expected = x.sizes;
         expected.erase(expected.begin() + dim);
         op_check(c.type(1).sizes == expected, "select_scatter: src must be " +
                                                   shape_text(expected) + ", got " +
                                                   shape_text(c.type(1).sizes));
         return same_as_self(c);
       },
       [](const RefContext& c) {
         const auto dim =
             static_cast<size_t>(normalize_dim(c.get_int(2), c.tensor(0).rank()).value());
         const int64_t index =
             checked_index(c.get_int(3), c.tensor(0).sizes()[dim], "select_scatter");
         return std::vector{embed(c, [&](Shape& at) {
           if (at[dim] != index) return false;
           at.erase(at.begin() + static_cast<std::ptrdiff_t>(dim));
           return true;
         })};
       }});
  rows.push_back({"aten.slice_scatter.default",
                  [](const InferContext& c) {
                    const TensorType x = c.type(0);
                    op_check(x.rank() > 0, "slice_scatter: self must have at least one dim");
                    const int64_t dim = normalize_dim(c.get_int(2), x.rank()).value_or(-1);
                    op_check(dim >= 0, "slice_scatter: dim out of range");
                    op_check(c.get_int(5) > 0, "slice_scatter: step must be positive");
                    Shape expected = x.sizes;
                    expected[static_cast<size_t>(dim)] =
                        slice_bounds(x.sizes[static_cast<size_t>(dim)], c.opt_int(3), c.opt_int(4),
                                     c.get_int(5))
                            .count();
                    op_check(c.type(1).sizes == expected, "slice_scatter: src must be " +
                                                              shape_text(expected) + ", got " +
                                                              shape_text(c.type(1).sizes));
                    return same_as_self(c);
                  },
                  [](const RefContext& c) {
                    const HostTensor self = c.tensor(0);
                    const auto dim =
                        static_cast<size_t>(normalize_dim(c.get_int(2), self.rank()).value());
                    const SliceBounds r =
                        slice_bounds(self.sizes()[dim], c.opt_int(3), c.opt_int(4), c.get_int(5));
                    return std::vector{embed(c, [&](Shape& at) {
                      const int64_t i = at[dim];
                      if (i < r.start || i >= r.end || (i - r.start) % r.step != 0) return false;
                      at[dim] = (i - r.start) / r.step;
                      return true;
                    })};
                  }});
  rows.push_back(
      {"aten.index_put.default",
       [](const InferContext& c) {
         const AdvancedIndex plan =
             plan_advanced_index(c.type(0).sizes, c.list_types(1), "index_put");
         auto b = broadcast_shapes(c.type(2).sizes, plan.result);
         op_check(b && *b == plan.result, "index_put: values " + shape_text(c.type(2).sizes) +
                                              " do not broadcast to the indexed shape " +
                                              shape_text(plan.result));
         return same_as_self(c);
       },
       [](const RefContext& c) {
         const HostTensor self = c.tensor(0), values = c.tensor(2);
         const auto indices = c.tensors(1);
         std::vector<std::optional<TensorType>> types;
         for (const auto& v : indices) types.push_back(v ? std::optional(v->type()) : std::nullopt);
         const AdvancedIndex plan = plan_advanced_index(self.sizes(), types, "index_put");
         HostTensor out = self.to(self.dtype());
         const Broadcaster bv(values.sizes(), plan.result);
         const bool accumulate = c.get_bool(3);
         // Float sums in f64, rounded once at the end (not per step, which would make the
         // result depend on the order of the repeated indices in half precision).
         std::vector<double> sums;
         if (is_floating(out.dtype()))
           for (int64_t o = 0; o < out.numel(); ++o) sums.push_back(out.get(o));
         for (int64_t r = 0; r < shape_numel(plan.result); ++r) {
           const int64_t o = plan.source(r, self.sizes(), indices, "index_put");
           if (is_floating(out.dtype())) {
             double& sum = sums[static_cast<size_t>(o)];
             sum = accumulate ? sum + values.get(bv(r)) : values.get(bv(r));
           } else {
             out.set_int(o, accumulate ? wrap_add(out.get_int(o), values.get_int(bv(r)))
                                       : values.get_int(bv(r)));
           }
         }
         for (size_t o = 0; o < sums.size(); ++o) out.set(static_cast<int64_t>(o), sums[o]);
         return std::vector{out};
       }});
  rows.push_back({"aten.masked_scatter.default",
                  [](const InferContext& c) {
                    op_check(c.type(1).dtype == DType::Bool, "masked_scatter: mask must be bool");
                    auto b = broadcast_shapes(c.type(1).sizes, c.type(0).sizes);
                    op_check(b && *b == c.type(0).sizes,
                             "masked_scatter: mask does not broadcast to self");
                    op_check(c.type(2).dtype == c.type(0).dtype,
                             "masked_scatter: source must have self's dtype");
                    return same_as_self(c);
                  },
                  [](const RefContext& c) {
                    const HostTensor self = c.tensor(0), mask = c.tensor(1), source = c.tensor(2);
                    HostTensor out = self.to(self.dtype());
                    const Broadcaster bm(mask.sizes(), self.sizes());
                    int64_t next = 0;
                    for (int64_t o = 0; o < out.numel(); ++o) {
                      if (mask.get(bm(o)) == 0) continue;
                      op_check(next < source.numel(),
                               "masked_scatter: source has fewer elements than the mask selects");
                      copy_element(out, o, source, next++);
                    }
                    return std::vector{out};
                  }});
  rows.push_back(
      {"aten.embedding_dense_backward.default",
       [](const InferContext& c) {
         const TensorType grad = c.type(0), idx = c.type(1);
         require_index_dtype(idx, "embedding_dense_backward");
         Shape expected = idx.sizes;
         op_check(grad.rank() == idx.rank() + 1 &&
                      Shape(grad.sizes.begin(), grad.sizes.end() - 1) == expected,
                  "embedding_dense_backward: grad_output " + shape_text(grad.sizes) +
                      " does not match indices " + shape_text(idx.sizes));
         op_check(c.get_int(2) >= 0, "embedding_dense_backward: num_weights must be non-negative");
         return std::vector{TensorType::contiguous(grad.dtype, {c.get_int(2), grad.sizes.back()})};
       },
       [](const RefContext& c) {
         const HostTensor grad = c.tensor(0), idx = c.tensor(1);
         HostTensor out = c.output(0);
         const int64_t rows_n = c.get_int(2), width = out.sizes()[1], padding = c.get_int(3);
         std::vector<int64_t> freq(static_cast<size_t>(rows_n), 0);
         for (int64_t i = 0; i < idx.numel(); ++i) {
           const int64_t r = idx.get_int(i);
           op_check(r >= 0 && r < rows_n,
                    "embedding_dense_backward: index " + std::to_string(r) + " is out of range");
           ++freq[static_cast<size_t>(r)];
         }
         std::vector<double> acc(static_cast<size_t>(out.numel()), 0.0);
         for (int64_t i = 0; i < idx.numel(); ++i) {
           const int64_t r = idx.get_int(i);
           if (r == padding) continue;
           const double scale =
               c.get_bool(4) ? 1.0 / static_cast<double>(freq[static_cast<size_t>(r)]) : 1.0;
           for (int64_t j = 0; j < width; ++j)
             acc[static_cast<size_t>(r * width + j)] += scale * grad.get(i * width + j);
         }
         for (int64_t o = 0; o < out.numel(); ++o) out.set(o, acc[static_cast<size_t>(o)]);
         return std::vector{out};
       }});
  return rows;
}

}  // namespace kiln
