#include "core/sched/schedule_graph.h"

#include "core/lower/attention_library_call.h"
#include "core/lower/lower_graph.h"
#include "core/passes/attention_fusion.h"
#include "core/passes/decompose.h"
#include "core/sched/mask_ranges.h"
#include "core/sched/merge_reduction_dims.h"
#include "core/sched/split_long_rows.h"

namespace kiln {

Result<ScheduledGraph> schedule_graph(const Graph& graph,
                                      std::shared_ptr<const OpRegistry> registry,
                                      const ScheduleOptions& schedule, const Roofline& roofline,
                                      const std::vector<std::string>& externs) {
  auto fused = fuse_attention(graph, [&](const TensorType& q, const TensorType& v) {
    return attention_call_takes(q, v, externs);
  });
  if (!fused) return std::move(fused).error();
  auto decomposed = decompose(*fused, std::move(registry), [&](const Graph& g, const Node& node) {
    return lowers_directly(g, node, externs);
  });
  if (!decomposed) return std::move(decomposed).error();
  ScheduledGraph s;
  s.graph = std::move(*decomposed);
  LowerOptions lower;
  lower.declined = schedule.declined_library_calls;
  lower.deterministic = schedule.deterministic;
  lower.conv_tf32 = schedule.conv_tf32;
  lower.matmul_tf32 = schedule.matmul_tf32;
  lower.bag_chunk = bag_chunk_for(roofline.warp_width);
  auto lowered = lower_graph(s.graph, externs, lower);
  if (!lowered) return std::move(lowered).error();
  s.unfused = std::move(lowered->program);
  // Masked loads lose the clamps their masks make idle (a padded window's taps read along a
  // row again): fusion does the same for the kernels it rewrites.
  for (LoopKernel& k : s.unfused.kernels)
    if (k.kind != LoopKernelKind::Extern) simplify_indices(k);
  s.fallbacks = std::move(lowered->fallbacks);
  s.program = s.unfused;
  if (schedule.fusion) {
    s.inlining = inline_pointwise(s.program, inline_options(schedule));
    FuseOptions fuse;
    fuse.merge.min_rows = schedule.min_fused_rows;
    fuse.merge.max_ops = schedule.max_kernel_ops;
    fuse.max_peak_growth_bytes = schedule.max_peak_growth_bytes;
    fuse.roofline = roofline;
    s.fusion = fuse_kernels(s.program, fuse);
  }
  merge_reduction_dims(s.program);
  // An explicit row count (0: never) replaces the device's rule.
  split_long_rows(s.program,
                  schedule.split_rows_below >= 0
                      ? SplitRowsOptions{.min_rows = schedule.split_rows_below}
                      : device_split_options(roofline.compute_units, roofline.warp_width));
  return s;
}

std::vector<FusionFailure> ScheduledGraph::failures() const {
  std::vector<FusionFailure> out;
  // An output is written whatever happens; that is not a missed fusion.
  for (const FusionFailure& kept : inlining.kept)
    if (kept.detail != "graph output") out.push_back(kept);
  out.insert(out.end(), fusion.failures.begin(), fusion.failures.end());
  return out;
}

}  // namespace kiln
