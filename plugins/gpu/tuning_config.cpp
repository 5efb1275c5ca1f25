#include "plugins/gpu/tuning_config.h"

#include <charconv>
#include <sstream>
#include <stdexcept>

namespace kiln::gpu {
namespace {

int64_t number(const std::string& key, const std::string& text, int64_t low, int64_t high) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || v < low || v > high)
    throw std::invalid_argument("tuning knob " + key + "=" + text + ": expected an integer in [" +
                                std::to_string(low) + ", " + std::to_string(high) + "]");
  return v;
}

}  // namespace

const std::vector<std::string>& tuning_keys() {
  static const std::vector<std::string> keys = {
      "block_size",       "max_blocks", "thread_row_limit", "warp_row_limit",
      "persistent_limit", "walk_lanes", "runs_per_step",    "tiles"};
  return keys;
}

TuningConfig parse_tuning(const std::string& line, TuningConfig c) {
  std::istringstream words(line);
  std::string pair;
  while (words >> pair) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("tuning config: expected key=value, got '" + pair + "'");
    const std::string key = pair.substr(0, eq), value = pair.substr(eq + 1);
    if (key == "block_size") {
      c.block_size = static_cast<unsigned>(number(key, value, 32, 1024));
      if (c.block_size % 32 != 0)
        throw std::invalid_argument("tuning knob block_size=" + value + ": not a multiple of 32");
    } else if (key == "max_blocks") {
      c.max_blocks = static_cast<unsigned>(number(key, value, 1, int64_t{1} << 31));
    } else if (key == "thread_row_limit") {
      c.thread_row_limit = number(key, value, 0, int64_t{1} << 40);
    } else if (key == "warp_row_limit") {
      c.warp_row_limit = number(key, value, 0, int64_t{1} << 40);
    } else if (key == "persistent_limit") {
      c.persistent_limit = number(key, value, 0, 64);
    } else if (key == "walk_lanes") {
      c.walk_lanes = number(key, value, 0, 16);
    } else if (key == "runs_per_step") {
      c.runs_per_step = number(key, value, 1, 8);
    } else if (key == "tiles") {
      c.tiles = number(key, value, 0, 1) == 1;
    } else {
      throw std::invalid_argument("tuning config: unknown knob '" + key + "'");
    }
  }
  return c;
}

std::string tuning_line(const TuningConfig& c) {
  return "block_size=" + std::to_string(c.block_size) +
         " max_blocks=" + std::to_string(c.max_blocks) +
         " thread_row_limit=" + std::to_string(c.thread_row_limit) +
         " warp_row_limit=" + std::to_string(c.warp_row_limit) +
         " persistent_limit=" + std::to_string(c.persistent_limit) +
         " walk_lanes=" + std::to_string(c.walk_lanes) +
         " runs_per_step=" + std::to_string(c.runs_per_step) + " tiles=" + (c.tiles ? "1" : "0");
}

}  // namespace kiln::gpu
