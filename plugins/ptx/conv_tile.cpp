#include "plugins/ptx/conv_tile.h"

#include <sstream>

namespace kiln::ptx {

std::string ConvTile::name() const {
  return std::to_string(rows) + "x" + std::to_string(step_bytes) + "x" + std::to_string(stages) +
         (warp_rows != 32 || slices != 1 ? "x" + std::to_string(warp_rows) : "") +
         (slices != 1 ? "x" + std::to_string(slices) : "");
}

int64_t conv_blocks(const kir_support::ConvCall& call, const ConvTile& tile) {
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  if (call.groups <= 0) return 0;
  return ceil_div(call.n * call.out_h * call.out_w, tile.rows) *
         ceil_div(call.k / call.groups, kConvCols) * call.groups;
}

ConvTile conv_tile_for(const kir_support::ConvCall& call, int64_t multiprocessors,
                       int64_t shared_limit) {
  // On the H100 (bench/conv_tiles.py, bench/results/2026-12-06-warp-tiles/): ResNet's 56x56
  // stage (196 such blocks for 132 multiprocessors) takes 12-19% less time; where they would
  // be fewer than the multiprocessors, up to 1.64x as long as 128 positions in more blocks.
  // f32 without TF32 (three products per term) keeps the default: no run timed it.
  const bool timed = call.dtype != kir::DType::F32 || call.tf32;
  const ConvTile wide{256, 64, 3, 64};
  if (timed && conv_blocks(call, wide) >= multiprocessors &&
      wide.block_shared_bytes() <= shared_limit)
    return wide;
  return ConvTile{};
}

std::optional<ConvTile> parse_conv_tile(const std::string& text, std::string& why) {
  ConvTile tile;
  char x1 = 0, x2 = 0, x3 = 'x', x4 = 'x';
  std::istringstream in(text);
  in >> tile.rows >> x1 >> tile.step_bytes >> x2 >> tile.stages;
  if (in && !in.eof()) in >> x3 >> tile.warp_rows;
  if (in && !in.eof()) in >> x4 >> tile.slices;
  if (!in || x1 != 'x' || x2 != 'x' || x3 != 'x' || x4 != 'x' || !in.eof()) {
    why = "is ROWSxSTEPxSTAGES[xWARP_ROWS[xSLICES]] (such as 128x64x3), got '" + text + "'";
    return std::nullopt;
  }
  if ((tile.rows != 128 && tile.rows != 256) || (tile.step_bytes != 64 && tile.step_bytes != 128) ||
      tile.stages < 2 || tile.stages > 4 || (tile.warp_rows != 32 && tile.warp_rows != 64) ||
      (tile.slices != 1 && tile.slices != 2) || tile.threads() > 256) {
    why =
        "takes 128 or 256 rows, steps of 64 or 128 bytes, 2 to 4 stages, 32 or 64 rows per "
        "warp and 1 or 2 slices, in at most 8 warps, got '" +
        text + "'";
    return std::nullopt;
  }
  return tile;
}

}  // namespace kiln::ptx
