#include "plugins/ptx/conv_tile.h"

#include <sstream>

namespace kiln::ptx {

std::string ConvTile::name() const {
  return std::to_string(rows) + "x" + std::to_string(step_bytes) + "x" + std::to_string(stages);
}

std::optional<ConvTile> parse_conv_tile(const std::string& text, std::string& why) {
  ConvTile tile;
  char x1 = 0, x2 = 0;
  std::istringstream in(text);
  in >> tile.rows >> x1 >> tile.step_bytes >> x2 >> tile.stages;
  if (!in || x1 != 'x' || x2 != 'x' || !(in >> std::ws).eof()) {
    why = "is ROWSxSTEPxSTAGES (such as 128x64x3), got '" + text + "'";
    return std::nullopt;
  }
  if ((tile.rows != 128 && tile.rows != 256) || (tile.step_bytes != 64 && tile.step_bytes != 128) ||
      tile.stages < 2 || tile.stages > 4) {
    why = "takes 128 or 256 rows, steps of 64 or 128 bytes and 2 to 4 stages, got '" + text + "'";
    return std::nullopt;
  }
  return tile;
}

}  // namespace kiln::ptx
