// Helpers for op tests: build small tensors from literal values, run one op through the
// reference interpreter, and read the results back.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/builder.h"
#include "core/interp/interpreter.h"
#include "core/ops/op_registry.h"

namespace kiln::test {

inline std::shared_ptr<const OpRegistry> registry() {
  static const std::shared_ptr<const OpRegistry> instance = OpRegistry::create().value();
  return instance;
}

inline HostTensor tensor(DType dtype, Shape sizes, std::initializer_list<double> values) {
  HostTensor t = HostTensor::zeros(dtype, std::move(sizes));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel())
      << "literal has the wrong number of values";
  int64_t i = 0;
  for (double v : values) {
    if (i < t.numel()) t.set(i++, v);
  }
  return t;
}

inline HostTensor f32(Shape sizes, std::initializer_list<double> values) {
  return tensor(DType::F32, std::move(sizes), values);
}
inline HostTensor i64(Shape sizes, std::initializer_list<double> values) {
  return tensor(DType::I64, std::move(sizes), values);
}

inline std::vector<double> values(const HostTensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get(i));
  return out;
}

// An argument of the op under test: a tensor (becomes a graph input) or a literal.
struct OpArg {
  OpArg(HostTensor t) : tensor(std::move(t)) {}                     // NOLINT: implicit on purpose
  OpArg(std::vector<HostTensor> items) : list(std::move(items)) {}  // NOLINT
  template <class T>
  OpArg(T v) : literal(ArgValue(v)) {}                          // NOLINT
  OpArg(int v) : literal(ArgValue(static_cast<int64_t>(v))) {}  // NOLINT
  std::optional<HostTensor> tensor;
  std::optional<std::vector<HostTensor>> list;
  ArgValue literal;
};

// Runs `op` on `args` (+ kwargs) through the interpreter; returns every output, or the
// error text prefixed with "error: " in `error`.
struct OpRun {
  std::vector<HostTensor> outputs;
  std::vector<TensorType> types;
  std::string error;
  bool ok() const { return error.empty(); }
  const HostTensor& out(size_t k = 0) const {
    static const HostTensor missing = HostTensor::zeros(DType::F32, {0});
    if (k < outputs.size()) return outputs[k];
    ADD_FAILURE() << "no output " << k << ": " << error;
    return missing;
  }
};

inline OpRun run_op(const std::string& op, std::vector<OpArg> args, const Kwargs& kwargs = {}) {
  GraphBuilder b(registry(), "test");
  std::vector<ArgValue> bound;
  std::vector<HostTensor> inputs;
  auto add_input = [&](const HostTensor& t) {
    inputs.push_back(t);
    return b.input("in" + std::to_string(inputs.size()), t.type());
  };
  for (auto& a : args) {
    if (a.tensor) {
      bound.push_back(add_input(*a.tensor));
    } else if (a.list) {
      TensorList list;
      for (const auto& t : *a.list) list.items.push_back(add_input(t));
      bound.push_back(list);
    } else {
      bound.push_back(a.literal);
    }
  }
  OpRun run;
  auto outs = b.try_ops(op, bound, kwargs, "node");
  if (!outs) {
    run.error = outs.error().to_string();
    return run;
  }
  for (ValueRef r : *outs) {
    b.output(r);
    run.types.push_back(b.type(r));
  }
  auto graph = b.finish();
  if (!graph) {
    run.error = graph.error().to_string();
    return run;
  }
  auto results = interpret(*graph, inputs);
  if (!results) {
    run.error = results.error().to_string();
    return run;
  }
  run.outputs = *results;
  return run;
}

inline void expect_near(const HostTensor& t, std::initializer_list<double> expected,
                        double tol = 1e-6) {
  const auto got = values(t);
  ASSERT_EQ(got.size(), expected.size());
  size_t i = 0;
  for (double e : expected) {
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    } else if (std::isinf(e)) {
      EXPECT_EQ(got[i], e) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], e, tol * std::max(1.0, std::fabs(e))) << "element " << i;
    }
    ++i;
  }
}

}  // namespace kiln::test
