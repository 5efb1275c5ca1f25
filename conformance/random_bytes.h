// Bytes of a fixed pseudo-random pattern, for copies whose arrival the checks compare.
#pragma once

#include <random>
#include <vector>

namespace kiln::conformance {

inline std::vector<unsigned char> random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<unsigned char> out(n);
  for (auto& b : out) b = static_cast<unsigned char>(gen());
  return out;
}

}  // namespace kiln::conformance
