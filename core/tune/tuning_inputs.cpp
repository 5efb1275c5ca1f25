#include "core/tune/tuning_inputs.h"

#include <algorithm>

#include "core/interp/random_tensor.h"

namespace kiln {

std::vector<int64_t> index_bounds(const kir::Kernel& k) {
  std::vector<int64_t> bounds(k.buffers.size(), 0);
  for (const kir::Op& op : k.body) {
    if (op.kind != kir::OpKind::CheckIndex || op.args.empty() || op.number <= 0) continue;
    const kir::Op* source = k.op(op.args[0]);
    while (source && source->kind == kir::OpKind::Cast && !source->args.empty())
      source = k.op(source->args[0]);
    if (!source || source->kind != kir::OpKind::Load) continue;
    for (size_t b = 0; b < k.buffers.size(); ++b) {
      if (k.buffers[b].name != source->name) continue;
      bounds[b] = bounds[b] == 0 ? op.number : std::min(bounds[b], op.number);
    }
  }
  return bounds;
}

std::vector<HostTensor> tuning_inputs(const kir::Kernel& k, uint64_t seed) {
  const std::vector<int64_t> bounds = index_bounds(k);
  std::vector<HostTensor> inputs;
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    const kir::Buffer& buffer = k.buffers[b];
    const auto dtype = static_cast<DType>(buffer.dtype);
    if (buffer.role == kir::Role::Out) {
      inputs.push_back(HostTensor::zeros(dtype, {0}));
      continue;
    }
    std::pair<double, double> range{-1.0, 1.0};
    if (!kir::is_float(buffer.dtype))
      range = bounds[b] > 0 ? std::pair{0.0, static_cast<double>(bounds[b])} : std::pair{1.0, 65.0};
    inputs.push_back(
        random_tensor(TensorType::contiguous(dtype, {buffer.elements}), seed + b, range));
  }
  return inputs;
}

}  // namespace kiln
