// rand, randn, randperm and native_dropout: references that draw from the run's random state
// and the node's stream (random_stream.h), exactly as the kernels do. A dropout keeps element
// i when the top 24 bits of its uniform word are below ceil((1 - p) * 2^24).
#include "core/ops/random_ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {

int64_t dropout_threshold(double p) {
  return static_cast<int64_t>(std::ceil((1.0 - p) * 16777216.0));
}

namespace {

Shape checked_sizes(const IntList& sizes, const std::string& op) {
  for (int64_t s : sizes)
    op_check(s >= 0, op + ": sizes must be non-negative, got " + shape_text(sizes));
  return sizes;
}

DType float_dtype(const ArgView& c, int arg) {
  const DType d = c.opt_dtype(arg).value_or(kDefaultFloat);
  op_check(is_floating(d),
           c.schema().op + " makes floating tensors, not " + std::string(dtype_name(d)));
  return d;
}

// Whether native_dropout drops (train is None or true).
bool training(const ArgView& c) {
  return c.is_none(2) || c.get_bool(2);
}

}  // namespace

std::vector<OpRow> random_ops() {
  std::vector<OpRow> rows;
  rows.push_back({"aten.rand.default",
                  [](const InferContext& c) {
                    return one(float_dtype(c, 1), checked_sizes(c.get_ints(0), "rand"));
                  },
                  [](const RefContext& c) {
                    HostTensor out = c.output(0);
                    for (int64_t i = 0; i < out.numel(); ++i)
                      out.set(i, random_uniform(c.random.state, c.random.stream,
                                                static_cast<uint64_t>(i), out.dtype()));
                    return std::vector{out};
                  }});
  rows.push_back(
      {"aten.randn.default",
       [](const InferContext& c) {
         return one(float_dtype(c, 1), checked_sizes(c.get_ints(0), "randn"));
       },
       [](const RefContext& c) {
         HostTensor out = c.output(0);
         for (int64_t i = 0; i < out.numel(); ++i)
           out.set(i, random_normal(c.random.state, c.random.stream, static_cast<uint64_t>(i)));
         return std::vector{out};
       }});
  rows.push_back({"aten.randperm.default",
                  [](const InferContext& c) {
                    op_check(c.get_int(0) >= 0, "randperm: n must be non-negative");
                    const DType d = c.opt_dtype(1).value_or(DType::I64);
                    op_check(d != DType::Bool, "randperm: a permutation cannot be bool");
                    return one(d, {c.get_int(0)});
                  },
                  [](const RefContext& c) {
                    // Indices sorted by their random word, ties by index: the kernels' ranks.
                    HostTensor out = c.output(0);
                    std::vector<int64_t> order(static_cast<size_t>(out.numel()));
                    std::iota(order.begin(), order.end(), 0);
                    const auto key = [&](int64_t i) {
                      return random_word(c.random.state, c.random.stream,
                                         static_cast<uint64_t>(i) / 4, static_cast<int>(i % 4));
                    };
                    std::stable_sort(order.begin(), order.end(),
                                     [&](int64_t a, int64_t b) { return key(a) < key(b); });
                    for (size_t p = 0; p < order.size(); ++p) {
                      if (is_floating(out.dtype()))
                        out.set(static_cast<int64_t>(p), static_cast<double>(order[p]));
                      else
                        out.set_int(static_cast<int64_t>(p), order[p]);
                    }
                    return std::vector{out};
                  }});
  rows.push_back({"aten.native_dropout.default",
                  [](const InferContext& c) {
                    const TensorType x = c.type(0);
                    op_check(is_floating(x.dtype),
                             "native_dropout needs a floating input, got " + x.to_string());
                    const double p = c.get_float(1);
                    op_check(p >= 0 && p <= 1,
                             "native_dropout: p must be in [0, 1], got " + std::to_string(p));
                    return std::vector{TensorType::contiguous(x.dtype, x.sizes),
                                       TensorType::contiguous(DType::Bool, x.sizes)};
                  },
                  [](const RefContext& c) {
                    const HostTensor x = c.tensor(0);
                    HostTensor out = c.output(0), mask = c.output(1);
                    const double p = c.get_float(1);
                    const bool drop = training(c);
                    const int64_t threshold = dropout_threshold(p);
                    const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
                    for (int64_t i = 0; i < out.numel(); ++i) {
                      const double v = x.get(i);
                      const uint32_t w =
                          random_word(c.random.state, c.random.stream, static_cast<uint64_t>(i) / 4,
                                      static_cast<int>(i % 4));
                      const bool keep = !drop || static_cast<int64_t>(w >> 8) < threshold;
                      out.set(i, !drop ? v : keep ? v * scale : 0.0);
                      mask.set_int(i, keep ? 1 : 0);
                    }
                    return std::vector{out, mask};
                  }});
  return rows;
}

}  // namespace kiln
