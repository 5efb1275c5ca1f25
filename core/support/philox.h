// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11): a counter-based generator. Its output is
// a pure function of a 128-bit counter and a 64-bit key, so any element of a random stream
// is computed on its own, on any device, in any order.
#pragma once

#include <array>
#include <cstdint>

namespace kiln {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;
inline constexpr int kPhiloxRounds = 10;

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

}  // namespace kiln
