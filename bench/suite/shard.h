// Shards of a suite's matrix (`--shard K/N`): cell i belongs to shard K when i % N == K - 1,
// so N machines each running one shard cover every cell once, whatever the matrix.
#pragma once

#include <cstdint>
#include <string>

#include "core/support/result.h"

namespace kiln::bench {

struct Shard {
  int64_t index = 1;  // K, from 1
  int64_t count = 1;  // N
  bool contains(int64_t cell) const { return cell % count == index - 1; }
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "K/N" with 1 <= K <= N.
Result<Shard> parse_shard(const std::string& text);

}  // namespace kiln::bench
