#include "plugins/gpu/tuning_space.h"

namespace kiln::gpu {

std::string tuning_space(const std::vector<kir::Kernel>& kernels, const TuningConfig& base,
                         const std::vector<unsigned>& block_sizes) {
  bool reduction = false, pointwise = false;
  for (const kir::Kernel& k : kernels) {
    reduction = reduction || k.kind == "reduction";
    pointwise = pointwise || k.kind == "pointwise";
  }
  std::string s = tuning_line(base) + "\n";
  auto vary = [&](bool exact, auto change) {
    TuningConfig c = base;
    change(c);
    const std::string line = tuning_line(c);
    if (s.find(line) == std::string::npos) s += line + (exact ? "\n" : " exact=0\n");
  };
  for (unsigned b : block_sizes) vary(!reduction, [&](TuningConfig& c) { c.block_size = b; });
  if (reduction) {
    vary(false, [](TuningConfig& c) { c.warp_row_limit = 0; });
    vary(false, [](TuningConfig& c) { c.thread_row_limit = 0; });
    // Registers or walks from memory: a walked softmax finds its max and sum online, and a
    // kept Welford state comes from two passes, so the bits may differ.
    vary(false, [](TuningConfig& c) { c.persistent_limit = 0; });
    // Loads in flight per thread on rows walked an element at a time (sums in another order).
    for (int64_t w : {1, 4, 8}) vary(false, [&](TuningConfig& c) { c.walk_lanes = w; });
  }
  if (pointwise) {
    for (int64_t r : {1, 2, 4}) vary(true, [&](TuningConfig& c) { c.runs_per_step = r; });
    vary(true, [](TuningConfig& c) { c.tiles = !c.tiles; });
  }
  return s;
}

}  // namespace kiln::gpu
