// Random tensors for inputs nobody supplied: reproducible from a seed, never all zeros.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "core/graph/host_tensor.h"

namespace kiln {

// Floats uniform in [low, high) (default [-1, 1)), integers uniform in [low, high)
// (default [0, 8)), bools fair coin flips. Strided types get storage to match.
HostTensor random_tensor(const TensorType& type, uint64_t seed,
                         std::optional<std::pair<double, double>> range = std::nullopt);

}  // namespace kiln
