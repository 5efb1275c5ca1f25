// One row of the op registry: an ATen overload's schema, shape and dtype inference, a
// reference implementation (the oracle), and an optional decomposition into other ops.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/graph/host_tensor.h"
#include "core/graph/schema.h"
#include "core/ops/arg_view.h"
#include "core/ops/random_stream.h"
#include "core/ops/view_spec.h"

namespace kiln {

class GraphBuilder;

struct InferContext : ArgView {
  InferContext(const Schema& schema, std::span<const ArgValue> args,
               std::function<const TensorType&(ValueRef)> type_of)
      : ArgView(schema, args), type_of_(std::move(type_of)) {}
  // The type of tensor argument i; a wrapped number reads as a 0-dim tensor of its own dtype.
  TensorType type(int i) const;
  std::vector<std::optional<TensorType>> list_types(int i) const;

 private:
  std::function<const TensorType&(ValueRef)> type_of_;
};

// What a random op's reference draws from: the run's state and the node's stream.
struct RandomDraw {
  RandomState state;
  uint32_t stream = 0;
};

struct RefContext : ArgView {
  RefContext(const Schema& schema, std::span<const ArgValue> args,
             std::function<const HostTensor&(ValueRef)> value_of, std::span<const TensorType> out,
             RandomDraw draw = {})
      : ArgView(schema, args), out_types(out), random(draw), value_of_(std::move(value_of)) {}
  // Tensor argument i; a wrapped number becomes a 0-dim tensor of its own dtype.
  HostTensor tensor(int i) const;
  std::vector<std::optional<HostTensor>> tensors(int i) const;
  // A fresh output tensor of the inferred type k.
  HostTensor output(size_t k) const;

  std::span<const TensorType> out_types;
  RandomDraw random;
  // The oracle's bound run (inputs replaced by their magnitudes): a reference that weighs its
  // terms with signed constants of its own (DFT twiddles) sums |weight| * term instead.
  bool magnitudes = false;

 private:
  std::function<const HostTensor&(ValueRef)> value_of_;
};

struct DecomposeContext : ArgView {
  DecomposeContext(const Schema& schema, std::span<const ArgValue> args, GraphBuilder& builder,
                   std::function<ArgValue(const ArgValue&)> map, std::span<const TensorType> out)
      : ArgView(schema, args), b(builder), out_types(out), map_(std::move(map)) {}
  // Argument i as it exists in the graph being built (tensors mapped, literals as they are).
  ArgValue mapped(int i) const { return map_(at(i)); }
  ValueRef tensor(int i) const;
  TensorType type(int i) const;

  GraphBuilder& b;
  std::span<const TensorType> out_types;

 private:
  std::function<ArgValue(const ArgValue&)> map_;
};

using InferFn = std::function<std::vector<TensorType>(const InferContext&)>;
using ReferenceFn = std::function<std::vector<HostTensor>(const RefContext&)>;
using DecomposeFn = std::function<std::vector<ValueRef>(const DecomposeContext&)>;

// What op tables provide; the registry adds the schema.
struct OpRow {
  std::string name;  // "aten.add.Tensor"
  InferFn infer;
  ReferenceFn reference;
  DecomposeFn decompose = nullptr;  // absent: a primitive op
  ViewSpecsFn view = nullptr;       // view ops: how each output reads the input
};

struct OpDef {
  std::string name;
  std::string category;  // from the schema table
  Schema schema;
  InferFn infer;
  ReferenceFn reference;
  DecomposeFn decompose;
  ViewSpecsFn view;
  bool is_primitive() const { return !decompose; }
};

}  // namespace kiln
