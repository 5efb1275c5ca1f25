// Reads through index tensors: embedding, gather, index_select, index.Tensor. An index out
// of range is an error naming the op and the index, never an out-of-bounds read.
#include <algorithm>

#include "core/ops/elementwise.h"
#include "core/ops/indexing.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {
namespace {}  // namespace

int64_t checked_index(int64_t index, int64_t size, const std::string& op) {
  op_check(index >= -size && index < size, op + ": index " + std::to_string(index) +
                                               " is out of bounds for size " +
                                               std::to_string(size));
  return index < 0 ? index + size : index;
}

void require_index_dtype(const TensorType& t, const std::string& op) {
  op_check(t.dtype == DType::I64 || t.dtype == DType::I32,
           op + ": indices must be an int64 or int32 tensor, got " + t.to_string());
}

AdvancedIndex plan_advanced_index(const Shape& self,
                                  const std::vector<std::optional<TensorType>>& indices,
                                  const std::string& op) {
  op_check(indices.size() <= self.size(),
           op + ": too many indices (" + std::to_string(indices.size()) +
               ") for a tensor of rank " + std::to_string(self.size()));
  AdvancedIndex plan;
  int first = -1, last = -1;
  for (size_t k = 0; k < indices.size(); ++k) {
    if (!indices[k]) continue;
    op_check(
        indices[k]->dtype != DType::Bool && indices[k]->dtype != DType::U8,
        op + ": boolean mask indices give a data-dependent shape, which kiln does not support");
    require_index_dtype(*indices[k], op);
    auto b = broadcast_shapes(plan.broadcast, indices[k]->sizes);
    if (!b) op_fail(op + ": indices do not broadcast: " + b.error().message());
    plan.broadcast = *b;
    plan.indexed.push_back(static_cast<int>(k));
    if (first < 0) first = static_cast<int>(k);
    last = static_cast<int>(k);
  }
  op_check(first >= 0, op + ": at least one index must be a tensor");
  plan.adjacent = last - first + 1 == static_cast<int>(plan.indexed.size());
  plan.insert_at = plan.adjacent ? static_cast<size_t>(first) : 0;
  std::vector<bool> is_indexed(self.size(), false);
  for (int k : plan.indexed) is_indexed[static_cast<size_t>(k)] = true;
  for (size_t d = 0; d < self.size(); ++d) {
    if (!is_indexed[d]) plan.kept.push_back(d);
  }
  // Kept dims before the indexed block stay in front; the block's result dims go at insert_at.
  for (size_t d = 0; d < plan.kept.size(); ++d) {
    if (plan.adjacent && plan.kept[d] < plan.insert_at) plan.result.push_back(self[plan.kept[d]]);
  }
  plan.result.insert(plan.result.end(), plan.broadcast.begin(), plan.broadcast.end());
  for (size_t d = 0; d < plan.kept.size(); ++d) {
    if (!plan.adjacent || plan.kept[d] >= plan.insert_at) plan.result.push_back(self[plan.kept[d]]);
  }
  return plan;
}

int64_t AdvancedIndex::source(int64_t out_linear, const Shape& self,
                              const std::vector<std::optional<HostTensor>>& index_values,
                              const std::string& op) const {
  Shape out(result.size());
  for (size_t d = result.size(); d-- > 0;) {
    out[d] = out_linear % result[d];
    out_linear /= result[d];
  }
  const size_t lead = adjacent
                          ? static_cast<size_t>(std::count_if(
                                kept.begin(), kept.end(), [&](size_t k) { return k < insert_at; }))
                          : 0;
  // The broadcast index position, shared by every index tensor.
  int64_t b_linear = 0;
  for (size_t d = 0; d < broadcast.size(); ++d) b_linear = b_linear * broadcast[d] + out[lead + d];
  Shape src(self.size(), 0);
  for (int k : indexed) {
    const HostTensor& t = *index_values[static_cast<size_t>(k)];
    const int64_t v = t.get_int(Broadcaster(t.sizes(), broadcast)(b_linear));
    src[static_cast<size_t>(k)] = checked_index(v, self[static_cast<size_t>(k)], op);
  }
  // Kept dims appear in order: those before the block first, then (after the block) the rest.
  size_t out_dim = 0;
  for (size_t d = 0; d < kept.size(); ++d) {
    if (adjacent && kept[d] < insert_at) {
      src[kept[d]] = out[out_dim++];
    } else {
      src[kept[d]] = out[broadcast.size() + out_dim++];
    }
  }
  int64_t linear = 0;
  for (size_t d = 0; d < self.size(); ++d) linear = linear * self[d] + src[d];
  return linear;
}

std::vector<OpRow> indexing_ops() {
  std::vector<OpRow> rows;
  rows.push_back({"aten.embedding.default",
                  [](const InferContext& c) {
                    const TensorType w = c.type(0), idx = c.type(1);
                    op_check(w.rank() == 2, "embedding: weight must be 2-D, got " + w.to_string());
                    require_index_dtype(idx, "embedding");
                    Shape out = idx.sizes;
                    out.push_back(w.sizes[1]);
                    return one(w.dtype, out);
                  },
                  [](const RefContext& c) {
                    const HostTensor w = c.tensor(0), idx = c.tensor(1);
                    HostTensor out = c.output(0);
                    const int64_t rows_n = w.sizes()[0], width = w.sizes()[1];
                    for (int64_t i = 0; i < idx.numel(); ++i) {
                      const int64_t row = idx.get_int(i);
                      op_check(row >= 0 && row < rows_n, "embedding: index " + std::to_string(row) +
                                                             " is out of range for " +
                                                             std::to_string(rows_n) + " rows");
                      for (int64_t j = 0; j < width; ++j)
                        copy_element(out, i * width + j, w, row * width + j);
                    }
                    return std::vector{out};
                  }});
  rows.push_back(
      {"aten.gather.default",
       [](const InferContext& c) {
         const TensorType x = c.type(0), idx = c.type(2);
         require_index_dtype(idx, "gather");
         op_check(x.rank() > 0, "gather: 0-dim inputs are not supported");
         op_check(idx.rank() == x.rank(), "gather: index must have the same rank as the input");
         const int64_t dim = normalize_dim(c.get_int(1), x.rank()).value_or(-1);
         op_check(dim >= 0, "gather: dim " + std::to_string(c.get_int(1)) + " is out of range");
         for (int64_t d = 0; d < x.rank(); ++d) {
           op_check(
               d == dim || idx.sizes[static_cast<size_t>(d)] <= x.sizes[static_cast<size_t>(d)],
               "gather: index " + shape_text(idx.sizes) + " is larger than input " +
                   shape_text(x.sizes) + " outside dim " + std::to_string(dim));
         }
         return one(x.dtype, idx.sizes);
       },
       [](const RefContext& c) {
         const HostTensor x = c.tensor(0), idx = c.tensor(2);
         HostTensor out = c.output(0);
         const auto dim = static_cast<size_t>(normalize_dim(c.get_int(1), x.rank()).value());
         const Shape xs = x.sizes(), is = idx.sizes();
         for (int64_t o = 0; o < out.numel(); ++o) {
           int64_t rest = o, src = 0, stride = 1;
           Shape at(is.size());
           for (size_t d = is.size(); d-- > 0;) {
             at[d] = rest % is[d];
             rest /= is[d];
           }
           at[dim] = checked_index(idx.get_int(o), xs.empty() ? 1 : xs[dim], "gather");
           for (size_t d = xs.size(); d-- > 0;) {
             src += at[d] * stride;
             stride *= xs[d];
           }
           copy_element(out, o, x, src);
         }
         return std::vector{out};
       }});
  rows.push_back(
      {"aten.index_select.default",
       [](const InferContext& c) {
         const TensorType x = c.type(0), idx = c.type(2);
         require_index_dtype(idx, "index_select");
         op_check(idx.rank() <= 1,
                  "index_select: index must be 0-D or 1-D, got " + idx.to_string());
         const auto dim = normalize_dim(c.get_int(1), x.rank());
         if (!dim) op_fail("index_select: " + dim.error().message());
         op_check(x.rank() > 0 || idx.numel() == 1,
                  "index_select: a 0-dim input takes exactly one index");
         Shape out = x.sizes;
         if (x.rank() > 0) out[static_cast<size_t>(*dim)] = idx.numel();
         return one(x.dtype, out);
       },
       [](const RefContext& c) {
         const HostTensor x = c.tensor(0), idx = c.tensor(2);
         HostTensor out = c.output(0);
         if (x.rank() == 0) {
           checked_index(idx.get_int(0), 1, "index_select");
           copy_element(out, 0, x, 0);
           return std::vector{out};
         }
         const auto dim = static_cast<size_t>(normalize_dim(c.get_int(1), x.rank()).value());
         const int64_t inner = shape_numel(
             Shape(x.sizes().begin() + static_cast<std::ptrdiff_t>(dim) + 1, x.sizes().end()));
         const int64_t n = x.sizes()[dim], m = idx.numel();
         for (int64_t o = 0; o < out.numel(); ++o) {
           const int64_t outer = o / (m * inner), k = (o / inner) % m, within = o % inner;
           const int64_t row = checked_index(idx.get_int(k), n, "index_select");
           copy_element(out, o, x, (outer * n + row) * inner + within);
         }
         return std::vector{out};
       }});
  rows.push_back({"aten.index.Tensor",
                  [](const InferContext& c) {
                    const TensorType x = c.type(0);
                    return one(x.dtype,
                               plan_advanced_index(x.sizes, c.list_types(1), "index").result);
                  },
                  [](const RefContext& c) {
                    const HostTensor x = c.tensor(0);
                    const auto values = c.tensors(1);
                    std::vector<std::optional<TensorType>> types;
                    for (const auto& v : values)
                      types.push_back(v ? std::optional(v->type()) : std::nullopt);
                    const AdvancedIndex plan = plan_advanced_index(x.sizes(), types, "index");
                    HostTensor out = c.output(0);
                    for (int64_t o = 0; o < out.numel(); ++o)
                      copy_element(out, o, x, plan.source(o, x.sizes(), values, "index"));
                    return std::vector{out};
                  }});
  return rows;
}

}  // namespace kiln
