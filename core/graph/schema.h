// ATen operator schemas, parsed from the text PyTorch uses
// ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/arg_value.h"
#include "core/support/result.h"

namespace kiln {

enum class ArgKind {
  Tensor,
  Int,  // int and SymInt
  Float,
  Bool,
  Scalar,  // a number of any kind
  ScalarType,
  Str,
  Ignored,  // Layout, Device, MemoryFormat, Generator: placement is the runtime's
};

struct ArgSchema {
  std::string name;
  ArgKind kind = ArgKind::Tensor;
  bool is_list = false;
  int list_size = 0;              // int[2]: 2; int[]: 0
  bool optional = false;          // T? or T[]?
  bool element_optional = false;  // Tensor?[]
  bool kwarg_only = false;
  bool mutated = false;  // Tensor(a!)
  std::optional<ArgValue> default_value;
};

struct Schema {
  std::string op;  // "aten.add.Tensor"
  std::vector<ArgSchema> args;
  int num_outputs = 1;
  bool returns_list = false;  // Tensor[] (split): the count depends on the arguments
  bool returns_scalar = false;

  // The index of argument `name`, or -1.
  int index_of(std::string_view name) const;
};

// Parses one schema; `op` names are "aten.<name>.<overload or default>".
Result<Schema> parse_schema(std::string_view text);

std::string_view arg_kind_name(ArgKind kind);

}  // namespace kiln
