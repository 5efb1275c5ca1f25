// Typed, read-only access to a node's arguments (in schema order, defaults filled). The
// arguments were checked against the schema when the node was made, so a getter that
// finds the wrong kind is a kiln bug (op_bug), not a user error.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "core/graph/schema.h"

namespace kiln {

class ArgView {
 public:
  ArgView(const Schema& schema, std::span<const ArgValue> args) : schema_(&schema), args_(args) {}

  const Schema& schema() const { return *schema_; }
  size_t size() const { return args_.size(); }
  const ArgValue& at(int i) const;
  const std::string& name(int i) const { return schema_->args.at(static_cast<size_t>(i)).name; }

  bool is_none(int i) const { return std::holds_alternative<None>(at(i)); }
  bool is_tensor(int i) const { return std::holds_alternative<ValueRef>(at(i)); }
  // A number where the schema says Tensor (or a Scalar argument): promoted weakly.
  bool is_wrapped_scalar(int i) const;
  ValueRef ref(int i) const;
  const TensorList& tensor_list(int i) const;

  int64_t get_int(int i) const;
  std::optional<int64_t> opt_int(int i) const;
  double get_float(int i) const;  // accepts ints and bools too
  std::optional<double> opt_float(int i) const;
  bool get_bool(int i) const;
  IntList get_ints(int i) const;  // a single int reads as a one-element list
  std::optional<IntList> opt_ints(int i) const;
  std::optional<FloatList> opt_floats(int i) const;
  std::optional<DType> opt_dtype(int i) const;
  std::string get_str(int i) const;
  std::optional<std::string> opt_str(int i) const;
  // The dtype a wrapped number carries on its own: bool, i64 or f64.
  DType scalar_dtype(int i) const;

 private:
  const Schema* schema_;
  std::span<const ArgValue> args_;
};

}  // namespace kiln
