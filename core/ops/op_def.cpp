#include "core/ops/op_def.h"

#include "core/graph/builder.h"
#include "core/ops/op_error.h"

namespace kiln {

TensorType InferContext::type(int i) const {
  if (is_tensor(i)) return type_of_(ref(i));
  if (is_wrapped_scalar(i)) return TensorType::contiguous(scalar_dtype(i), {});
  op_bug(schema().op + ": argument '" + name(i) + "' is not a tensor");
}

std::vector<std::optional<TensorType>> InferContext::list_types(int i) const {
  std::vector<std::optional<TensorType>> types;
  for (const auto& item : tensor_list(i).items) {
    types.push_back(item ? std::optional<TensorType>(type_of_(*item)) : std::nullopt);
  }
  return types;
}

HostTensor RefContext::tensor(int i) const {
  if (is_tensor(i)) return value_of_(ref(i));
  HostTensor t = HostTensor::zeros(scalar_dtype(i), {});
  if (std::holds_alternative<double>(at(i))) {
    t.set(0, get_float(i));
  } else {
    t.set_int(0, get_int(i));
  }
  return t;
}

HostTensor RefContext::output(size_t k) const {
  if (k >= out_types.size())
    op_bug(schema().op + ": the reference asks for output " + std::to_string(k) + " of " +
           std::to_string(out_types.size()));
  return HostTensor::zeros(out_types[k].dtype, out_types[k].sizes);
}

std::vector<std::optional<HostTensor>> RefContext::tensors(int i) const {
  std::vector<std::optional<HostTensor>> out;
  for (const auto& item : tensor_list(i).items) {
    out.push_back(item ? std::optional<HostTensor>(value_of_(*item)) : std::nullopt);
  }
  return out;
}

ValueRef DecomposeContext::tensor(int i) const {
  const ArgValue v = mapped(i);
  if (const auto* r = std::get_if<ValueRef>(&v)) return *r;
  op_bug(schema().op + ": decomposition wants argument '" + name(i) + "' as a tensor");
}

TensorType DecomposeContext::type(int i) const {
  if (is_wrapped_scalar(i)) return TensorType::contiguous(scalar_dtype(i), {});
  return b.type(tensor(i));
}

}  // namespace kiln
