#include "core/ops/random_stream.h"

#include <cmath>
#include <numbers>

#include "core/support/philox.h"

namespace kiln {

uint32_t random_stream_id(std::string_view node_name) {
  uint32_t h = 2166136261u;
  for (char c : node_name) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h;
}

uint32_t random_word(const RandomState& state, uint32_t stream, uint64_t block, int word) {
  const PhiloxCounter counter = {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                                 stream, static_cast<uint32_t>(state.call)};
  const PhiloxKey key = {static_cast<uint32_t>(state.seed),
                         static_cast<uint32_t>(state.seed >> 32)};
  return philox4x32_10(counter, key)[static_cast<size_t>(word)];
}

int uniform_bits(DType d) {
  switch (d) {
    case DType::F16:
      return 11;
    case DType::BF16:
      return 8;
    case DType::F64:
      return 32;
    default:
      return 24;
  }
}

double random_uniform(const RandomState& state, uint32_t stream, uint64_t i, DType d) {
  const int bits = uniform_bits(d);
  const uint32_t w = random_word(state, stream, i / 4, static_cast<int>(i % 4));
  return std::ldexp(static_cast<double>(w >> (32 - bits)), -bits);
}

double random_normal(const RandomState& state, uint32_t stream, uint64_t i) {
  const int first = static_cast<int>(i % 2) * 2;
  const uint32_t a = random_word(state, stream, i / 2, first);
  const uint32_t b = random_word(state, stream, i / 2, first + 1);
  const double u = std::ldexp(static_cast<double>((a >> 8) + 1), -24);
  const double v = std::ldexp(static_cast<double>(b >> 8), -24);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

}  // namespace kiln
