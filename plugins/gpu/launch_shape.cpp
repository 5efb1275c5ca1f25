#include "plugins/gpu/launch_shape.h"

#include <algorithm>
#include <map>

#include "plugins/kir_support/kir_expr.h"

namespace kiln::gpu {
namespace {

// Whether some load walks the rows across memory: unit stride along the innermost output dim,
// and no load reads a row contiguously.
bool reads_across_rows(const kir::Kernel& k) {
  if (k.ranges.empty() || k.reduction_ranges.empty()) return false;
  const std::string x = "x" + std::to_string(k.ranges.size() - 1);
  const std::string r = "r" + std::to_string(k.reduction_ranges.size() - 1);
  bool across = false;
  for (const kir::Op& op : k.body) {
    if (op.kind != kir::OpKind::Load) continue;
    std::map<std::string, int64_t> terms;
    if (!kir_support::linear_terms(op.index, 1, terms)) continue;
    const int64_t along_r = terms.contains(r) ? terms.at(r) : 0;
    const int64_t along_x = terms.contains(x) ? terms.at(x) : 0;
    if (along_r == 1 || along_r == -1) return false;  // a row read contiguously
    if (along_r != 0 && along_x == 1) across = true;
  }
  return across;
}

}  // namespace

bool scans(const kir::Kernel& k) {
  return std::any_of(k.body.begin(), k.body.end(),
                     [](const kir::Op& op) { return op.kind == kir::OpKind::Scan; });
}

unsigned row_threads(const kir::Kernel& k, const TuningConfig& c, unsigned warp_width) {
  int64_t row = 1;
  for (int64_t r : k.reduction_ranges) row *= r;
  if (row <= c.thread_row_limit) return 1;
  // A scan walks its row in order: a thread per row when rows lie across memory (a warp's
  // neighbouring rows make each step one coalesced access), else a warp per row, a warp's
  // width of elements per step, or on long rows the whole block (fewer, wider steps).
  if (scans(k)) {
    if (reads_across_rows(k)) return 1;
    return row > kBlockScanRow ? c.block_size : warp_width;
  }
  return row <= c.warp_row_limit ? warp_width : c.block_size;
}

unsigned rows_per_block(const kir::Kernel& k, const TuningConfig& c, unsigned warp_width) {
  if (column_rows(k, c, warp_width)) return warp_width;
  const unsigned per_row = row_threads(k, c, warp_width);
  // A scan's row per thread is a long serial walk: small blocks spread few rows over more
  // multiprocessors.
  if (scans(k) && per_row == 1) return std::min(c.block_size, 2 * warp_width);
  return c.block_size / per_row;
}

bool column_rows(const kir::Kernel& k, const TuningConfig& c, unsigned warp_width) {
  if (k.kind != "reduction" || scans(k)) return false;
  return row_threads(k, c, warp_width) > 1 && reads_across_rows(k);
}

std::vector<const kir::Op*> tiled_loads(const kir::Kernel& k, const TuningConfig& c,
                                        unsigned warp_width) {
  std::vector<const kir::Op*> out;
  if (!c.tiles || k.kind != "pointwise" || k.ranges.size() < 2) return out;
  const std::string inner = "x" + std::to_string(k.ranges.size() - 1);
  const std::string outer = "x" + std::to_string(k.ranges.size() - 2);
  for (const kir::Op& op : k.body) {
    if (op.kind != kir::OpKind::Load || op.mask >= 0 || op.dtype == kir::DType::Bool) continue;
    std::map<std::string, int64_t> terms;
    if (!kir_support::linear_terms(op.index, 1, terms)) continue;
    const bool dims_only = std::all_of(terms.begin(), terms.end(), [](const auto& t) {
      return t.first.empty() || t.first[0] == 'x';
    });
    const int64_t along_inner = terms.contains(inner) ? terms.at(inner) : 0;
    if (dims_only && terms.contains(outer) && terms.at(outer) == 1 && along_inner != 0 &&
        along_inner != 1)
      out.push_back(&op);
  }
  // Each staged load takes a padded tile per set (two sets when loads pair up with their
  // mirror), in registers' width (half floats widen to 4 bytes): the whole must fit a block's
  // static shared memory, 48 KiB on NVIDIA GPUs (AMD's LDS is 64), or no load is staged.
  constexpr int64_t kSharedBudget = 48 * 1024;
  const int64_t tile = warp_width;
  int64_t bytes = 0;
  for (const kir::Op* op : out)
    bytes += 2 * tile * (tile + 1) * std::max<int64_t>(kir::dtype_size(op->dtype), 4);
  if (bytes > kSharedBudget) out.clear();
  return out;
}

int64_t tile_count(const kir::Kernel& k, unsigned warp_width) {
  const size_t d = k.ranges.size();
  int64_t tiles = 1;
  for (size_t i = 0; i + 2 < d; ++i) tiles *= k.ranges[i];
  const auto split = [&](int64_t n) { return (n + warp_width - 1) / warp_width; };
  return tiles * split(k.ranges[d - 2]) * split(k.ranges[d - 1]);
}

LaunchShape launch_shape(const kir::Kernel& k, const TuningConfig& c, unsigned warp_width) {
  int64_t points = 1;
  for (int64_t r : k.ranges) points *= r;
  LaunchShape s;
  const bool reduction = k.kind == "reduction";
  const int64_t rows = reduction ? rows_per_block(k, c, warp_width) : 0;
  s.block = reduction && !column_rows(k, c, warp_width)
                ? static_cast<unsigned>(rows) * row_threads(k, c, warp_width)
                : c.block_size;
  const int64_t blocks = reduction ? (points + rows - 1) / rows
                         : !tiled_loads(k, c, warp_width).empty()
                             ? tile_count(k, warp_width)
                             : (points + c.block_size - 1) / c.block_size;
  s.grid = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, c.max_blocks));
  return s;
}

}  // namespace kiln::gpu
