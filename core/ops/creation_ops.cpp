// Tensors made from nothing but sizes and values: full, arange, empty, ...
#include <cmath>

#include "core/graph/builder.h"
#include "core/ops/op_error.h"
#include "core/ops/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {
namespace {

Shape checked_size(const IntList& sizes) {
  for (int64_t s : sizes) op_check(s >= 0, "sizes must be non-negative, got " + shape_text(sizes));
  return sizes;
}

// The dtype PyTorch gives a tensor filled with a Python number.
DType dtype_of_number(const ArgView& c, int i) {
  const DType d = c.scalar_dtype(i);
  return d == DType::F64 ? kDefaultFloat : d;
}

HostTensor filled(const RefContext& c, int value_arg) {
  HostTensor out = c.output(0);
  const bool fp = is_floating(out.dtype()) || std::holds_alternative<double>(c.at(value_arg));
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (fp)
      out.set(i, c.get_float(value_arg));
    else
      out.set_int(i, c.get_int(value_arg));
  }
  return out;
}

int64_t arange_length(double start, double end, double step) {
  op_check(step != 0 && !std::isnan(step), "arange: step must be a nonzero number");
  op_check(std::isfinite(start) && std::isfinite(end), "arange: start and end must be finite");
  op_check((end - start) / step >= 0 || start == end,
           "arange: upper bound and step have inconsistent signs");
  const double length = std::ceil((end - start) / step);
  op_check(
      std::isfinite(length) && length <= static_cast<double>(kMaxElements),
      "arange: the result would have " + std::to_string(length) + " elements, above kiln's limit");
  return static_cast<int64_t>(length);
}

DType arange_dtype(const ArgView& c, int start, int end, int step, int dtype) {
  if (auto d = c.opt_dtype(dtype)) return *d;
  for (int i : {start, end, step}) {
    if (i >= 0 && std::holds_alternative<double>(c.at(i))) return kDefaultFloat;
  }
  return DType::I64;
}

}  // namespace

std::vector<OpRow> creation_ops() {
  std::vector<OpRow> rows;
  rows.push_back({"aten.full.default",
                  [](const InferContext& c) {
                    return one(c.opt_dtype(2).value_or(dtype_of_number(c, 1)),
                               checked_size(c.get_ints(0)));
                  },
                  [](const RefContext& c) { return std::vector{filled(c, 1)}; }});
  rows.push_back({"aten.full_like.default",
                  [](const InferContext& c) {
                    return one(c.opt_dtype(2).value_or(c.type(0).dtype), c.type(0).sizes);
                  },
                  [](const RefContext& c) { return std::vector{filled(c, 1)}; }});
  rows.push_back({"aten.fill.Scalar",
                  [](const InferContext& c) { return one(c.type(0).dtype, c.type(0).sizes); },
                  [](const RefContext& c) { return std::vector{filled(c, 1)}; }});
  rows.push_back(
      {"aten.scalar_tensor.default",
       [](const InferContext& c) { return one(c.opt_dtype(1).value_or(kDefaultFloat), {}); },
       [](const RefContext& c) { return std::vector{filled(c, 0)}; }});
  // empty tensors hold unspecified values; the reference makes them zeros.
  rows.push_back({"aten.empty.memory_format",
                  [](const InferContext& c) {
                    return one(c.opt_dtype(1).value_or(kDefaultFloat), checked_size(c.get_ints(0)));
                  },
                  [](const RefContext& c) { return std::vector{c.output(0)}; }});
  rows.push_back({"aten.empty_strided.default",
                  [](const InferContext& c) {
                    op_check(c.get_ints(0).size() == c.get_ints(1).size(),
                             "empty_strided: sizes and strides differ in length");
                    return one(c.opt_dtype(2).value_or(kDefaultFloat), checked_size(c.get_ints(0)));
                  },
                  [](const RefContext& c) { return std::vector{c.output(0)}; }});
  rows.push_back({"aten.arange.start_step",
                  [](const InferContext& c) {
                    return one(arange_dtype(c, 0, 1, 2, 3),
                               {arange_length(c.get_float(0), c.get_float(1), c.get_float(2))});
                  },
                  [](const RefContext& c) {
                    HostTensor out = c.output(0);
                    bool fp = is_floating(out.dtype());
                    for (int a : {0, 1, 2}) fp = fp || std::holds_alternative<double>(c.at(a));
                    for (int64_t i = 0; i < out.numel(); ++i) {
                      if (fp)
                        out.set(i, c.get_float(0) + static_cast<double>(i) * c.get_float(2));
                      else
                        out.set_int(i, c.get_int(0) + i * c.get_int(2));
                    }
                    return std::vector{out};
                  }});

  // Spellings that decompose into the rows above.
  auto to_arange = [](const std::string& overload, int start, int end, int dtype) {
    return OpRow{
        overload,
        [=](const InferContext& c) {
          const double s = start >= 0 ? c.get_float(start) : 0.0;
          return one(arange_dtype(c, start, end, -1, dtype),
                     {arange_length(s, c.get_float(end), 1.0)});
        },
        [=](const RefContext& c) {
          HostTensor out = c.output(0);
          const double s = start >= 0 ? c.get_float(start) : 0.0;
          for (int64_t i = 0; i < out.numel(); ++i) out.set(i, s + static_cast<double>(i));
          return std::vector{out};
        },
        [=](const DecomposeContext& c) {
          const ArgValue s = start >= 0 ? c.mapped(start) : ArgValue{int64_t{0}};
          return std::vector{c.b.op("aten.arange.start_step", {s, c.mapped(end), int64_t{1}},
                                    {{"dtype", c.out_types[0].dtype}})};
        }};
  };
  rows.push_back(to_arange("aten.arange.default", -1, 0, 1));
  rows.push_back(to_arange("aten.arange.start", 0, 1, 2));
  for (const bool ones : {false, true}) {
    const int64_t value = ones ? 1 : 0;
    rows.push_back({ones ? "aten.ones.default" : "aten.zeros.default",
                    [](const InferContext& c) {
                      return one(c.opt_dtype(1).value_or(kDefaultFloat),
                                 checked_size(c.get_ints(0)));
                    },
                    [value](const RefContext& c) {
                      HostTensor out = c.output(0);
                      for (int64_t i = 0; i < out.numel(); ++i) out.set_int(i, value);
                      return std::vector{out};
                    },
                    [value](const DecomposeContext& c) {
                      return std::vector{c.b.op("aten.full.default", {c.mapped(0), value},
                                                {{"dtype", c.out_types[0].dtype}})};
                    }});
    rows.push_back({ones ? "aten.ones_like.default" : "aten.zeros_like.default",
                    [](const InferContext& c) {
                      return one(c.opt_dtype(1).value_or(c.type(0).dtype), c.type(0).sizes);
                    },
                    [value](const RefContext& c) {
                      HostTensor out = c.output(0);
                      for (int64_t i = 0; i < out.numel(); ++i) out.set_int(i, value);
                      return std::vector{out};
                    },
                    [value](const DecomposeContext& c) {
                      return std::vector{c.b.op("aten.full_like.default", {c.tensor(0), value},
                                                {{"dtype", c.out_types[0].dtype}})};
                    }});
  }
  return rows;
}

}  // namespace kiln
