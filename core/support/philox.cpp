#include "core/support/philox.h"

namespace kiln {

PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      k[0] += kPhiloxW0;
      k[1] += kPhiloxW1;
    }
    const uint64_t p0 = uint64_t{kPhiloxM0} * c[0];
    const uint64_t p1 = uint64_t{kPhiloxM1} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

}  // namespace kiln
