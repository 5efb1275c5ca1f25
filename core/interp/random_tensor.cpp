#include "core/interp/random_tensor.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace kiln {

HostTensor random_tensor(const TensorType& type, uint64_t seed,
                         std::optional<std::pair<double, double>> range) {
  std::mt19937_64 rng(seed);
  // Storage large enough for the strided extent; filled so that every element is random.
  int64_t extent = 1;
  for (size_t d = 0; d < type.sizes.size(); ++d) {
    if (type.sizes[d] == 0) return HostTensor::zeros(type.dtype, type.sizes);
    // Strides were checked when the graph was read (non-negative, bounded).
    extent += (type.sizes[d] - 1) * std::max<int64_t>(type.strides[d], 0);
  }
  HostTensor flat = HostTensor::zeros(type.dtype, {extent});
  const bool fp = is_floating(type.dtype);
  const auto [low, high] = range.value_or(fp ? std::pair{-1.0, 1.0} : std::pair{0.0, 8.0});
  std::uniform_real_distribution<double> real(low, high);
  for (int64_t i = 0; i < extent; ++i) {
    if (type.dtype == DType::Bool) {
      flat.set_int(i, static_cast<int64_t>(rng() & 1));
    } else if (fp) {
      flat.set(i, real(rng));
    } else {
      // Ranges are clamped to what int64 holds before converting (no undefined casts).
      const auto lo = static_cast<int64_t>(std::clamp(std::ceil(low), -9.0e18, 9.0e18));
      const auto hi =
          static_cast<int64_t>(std::clamp(std::ceil(high), -9.0e18, 9.0e18));  // exclusive
      std::uniform_int_distribution<int64_t> integer(lo, std::max(lo, hi - 1));
      flat.set_int(i, integer(rng));
    }
  }
  if (type.is_contiguous())
    return HostTensor::from_bytes(type.dtype, type.sizes,
                                  {flat.bytes().begin(), flat.bytes().end()})
        .value();
  auto storage = std::make_shared<std::vector<std::byte>>(flat.bytes().begin(), flat.bytes().end());
  return HostTensor::strided(type, storage, 0).value();
}

}  // namespace kiln
