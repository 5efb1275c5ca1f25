#include "bench/suite/shard.h"

#include <charconv>

namespace kiln::bench {

Result<Shard> parse_shard(const std::string& text) {
  const auto bad = [&] {
    return Error::user("--shard takes K/N with 1 <= K <= N (e.g. 2/8); got '" + text + "'");
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return bad();
  Shard s;
  const char* end = text.data() + text.size();
  const auto k = std::from_chars(text.data(), text.data() + slash, s.index);
  const auto n = std::from_chars(text.data() + slash + 1, end, s.count);
  if (k.ec != std::errc{} || k.ptr != text.data() + slash || n.ec != std::errc{} || n.ptr != end)
    return bad();
  if (s.count < 1 || s.index < 1 || s.index > s.count) return bad();
  return s;
}

}  // namespace kiln::bench
