// _embedding_bag: sums, means or maxes of embedding rows over bags. Bags are rows of a 2-D
// `indices`, or runs of a 1-D `indices` starting at each `offsets` entry. Outputs:
// (output [B, D], offset2bag [len(indices)], bag_size [B], max_indices [B, D] for max
// mode, else [B]). Rows equal to padding_idx are skipped and not counted.
#include <cmath>

#include "core/ops/indexing.h"
#include "core/ops/op_registry.h"

namespace kiln {
namespace {

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

// The bag of every index position, from offsets (1-D indices) or rows (2-D indices).
std::vector<int64_t> bag_starts(const HostTensor& indices, const HostTensor& offsets,
                                bool include_last) {
  std::vector<int64_t> starts;
  if (indices.rank() == 2) {
    for (int64_t b = 0; b <= indices.sizes()[0]; ++b) starts.push_back(b * indices.sizes()[1]);
    return starts;
  }
  for (int64_t i = 0; i < offsets.numel(); ++i) starts.push_back(offsets.get_int(i));
  if (!include_last) starts.push_back(indices.numel());
  for (size_t i = 0; i < starts.size(); ++i) {
    op_check(
        starts[i] >= 0 && starts[i] <= indices.numel() && (i == 0 || starts[i] >= starts[i - 1]),
        "_embedding_bag: offsets must be non-decreasing and within the indices");
  }
  op_check(starts.empty() || starts[0] == 0, "_embedding_bag: the first offset must be 0");
  return starts;
}

int64_t bag_count(const TensorType& indices, const TensorType& offsets, bool include_last) {
  if (indices.rank() == 2) return indices.sizes[0];
  return offsets.numel() - (include_last ? 1 : 0);
}

}  // namespace

std::vector<OpRow> embedding_bag_ops() {
  std::vector<OpRow> rows;
  rows.push_back(
      {"aten._embedding_bag.default",
       [](const InferContext& c) {
         const TensorType w = c.type(0), idx = c.type(1), off = c.type(2);
         op_check(w.rank() == 2, "_embedding_bag: weight must be 2-D");
         require_index_dtype(idx, "_embedding_bag");
         require_index_dtype(off, "_embedding_bag");
         op_check(idx.rank() == 1 || idx.rank() == 2, "_embedding_bag: indices must be 1-D or 2-D");
         op_check(idx.rank() == 2 || off.rank() == 1, "_embedding_bag: offsets must be 1-D");
         const int64_t mode = c.get_int(4);
         op_check(mode >= kSum && mode <= kMax,
                  "_embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max)");
         op_check(c.is_none(6) || mode == kSum,
                  "_embedding_bag: per_sample_weights only work with mode sum");
         if (!c.is_none(6))
           op_check(c.type(6).sizes == idx.sizes,
                    "_embedding_bag: per_sample_weights must match indices");
         const int64_t bags = bag_count(idx, off, c.get_bool(7));
         op_check(bags >= 0, "_embedding_bag: include_last_offset needs at least one offset");
         const int64_t d = w.sizes[1];
         return std::vector{
             TensorType::contiguous(w.dtype, {bags, d}),
             TensorType::contiguous(DType::I64, {idx.numel()}),
             TensorType::contiguous(DType::I64, {bags}),
             TensorType::contiguous(DType::I64, mode == kMax ? Shape{bags, d} : Shape{bags})};
       },
       [](const RefContext& c) {
         const HostTensor w = c.tensor(0), idx = c.tensor(1), off = c.tensor(2);
         const int64_t mode = c.get_int(4), padding = c.get_int(8), d = w.sizes()[1],
                       rows_n = w.sizes()[0];
         const std::optional<HostTensor> psw =
             c.is_none(6) ? std::nullopt : std::optional(c.tensor(6));
         const std::vector<int64_t> starts = bag_starts(idx, off, c.get_bool(7));
         HostTensor out = c.output(0), offset2bag = c.output(1), bag_size = c.output(2),
                    max_indices = c.output(3);
         const int64_t bags = out.sizes()[0];
         for (int64_t b = 0; b < bags; ++b) {
           std::vector<double> acc(static_cast<size_t>(d), mode == kMax ? -INFINITY : 0.0);
           std::vector<int64_t> arg(static_cast<size_t>(d), -1);
           int64_t count = 0;
           for (int64_t i = starts[static_cast<size_t>(b)]; i < starts[static_cast<size_t>(b) + 1];
                ++i) {
             offset2bag.set_int(i, b);
             const int64_t row = checked_index(idx.get_int(i), rows_n, "_embedding_bag");
             if (padding >= 0 && row == padding) continue;  // -1: no padding row (ATen level)
             ++count;
             const double scale = psw ? psw->get(i) : 1.0;
             for (int64_t j = 0; j < d; ++j) {
               const double v = w.get(row * d + j);
               auto& a = acc[static_cast<size_t>(j)];
               if (mode == kMax) {
                 if (arg[static_cast<size_t>(j)] < 0 || v > a) {
                   a = v;
                   arg[static_cast<size_t>(j)] = row;
                 }
               } else {
                 a += scale * v;
               }
             }
           }
           bag_size.set_int(b, count);
           for (int64_t j = 0; j < d; ++j) {
             double v = acc[static_cast<size_t>(j)];
             if (mode == kMean) v = count > 0 ? v / static_cast<double>(count) : 0.0;
             if (mode == kMax && count == 0) v = 0.0;
             out.set(b * d + j, v);
             if (mode == kMax) max_indices.set_int(b * d + j, arg[static_cast<size_t>(j)]);
           }
         }
         return std::vector{out, offset2bag, bag_size, max_indices};
       }});
  // What PyTorch calls without autograd: the same op, its outputs only for the forward.
  OpRow forward_only = rows.back();
  forward_only.name = "aten._embedding_bag_forward_only.default";
  rows.push_back(std::move(forward_only));
  return rows;
}

}  // namespace kiln
