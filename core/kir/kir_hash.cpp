#include "core/kir/kir_hash.h"

#include <xxhash.h>

#include <cstdio>

namespace kiln {

std::string kir_hash(std::string_view text) {
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

}  // namespace kiln
