#include "cli/explain.h"

#include <fmt/format.h>

#include <map>

namespace kiln::cli {
namespace {

std::string mib(int64_t bytes) {
  return fmt::format("{:.3f} MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

void print_explain(const Graph& graph, const CompiledGraph& compiled) {
  const CompileStats& st = compiled.stats();
  fmt::print(
      "explain: {} graph nodes ({} after decomposition) -> {} kernels, {} library calls, "
      "{} host steps\n",
      graph.nodes.size(), compiled.graph().nodes.size(), st.kernels, st.externs, st.host_steps);
  const double saved = st.bytes_unfused > 0
                           ? 100.0 * static_cast<double>(st.bytes_unfused - st.bytes_fused) /
                                 static_cast<double>(st.bytes_unfused)
                           : 0.0;
  fmt::print(
      "explain: {} pointwise producers inlined, {} kernel merges; kernels move {} (unfused {}, "
      "{:.0f}% less)\n",
      st.inlined, st.merged, mib(st.bytes_fused), mib(st.bytes_unfused), saved);
  fmt::print(
      "explain: temporaries in one arena of {} (naive, each its own allocation: {}); {} "
      "written in place\n",
      mib(st.arena_bytes), mib(st.naive_bytes), st.in_place);
  // Producers kept as buffers by reason, then pairs left apart by category.
  std::map<std::string, std::vector<std::string>> groups;
  for (const FusionFailure& f : st.failures) {
    if (f.category == FusionCategory::Realized) {
      groups["kept as a buffer (" + f.detail + ")"].push_back(f.producer);
    } else {
      groups[std::string("not fused (") + category_name(f.category) + ")"].push_back(
          f.producer + "+" + f.consumer);
    }
  }
  for (const auto& [what, items] : groups) {
    std::string names;
    for (size_t i = 0; i < items.size() && i < 4; ++i) names += (i ? ", " : "") + items[i];
    if (items.size() > 4) names += ", ...";
    fmt::print("explain: {}: {} [{}]\n", what, items.size(), names);
  }
  for (const std::string& f : st.fallbacks) fmt::print("explain: on the host oracle: {}\n", f);
  // The partition across plugins: which kernels left the graph's device, and the copies.
  if (!st.placed.empty())
    fmt::print("explain: {} of {} kernels on other devices than {}, {} copies between devices\n",
               st.placed.size(), st.kernels, st.target, st.transfers);
  for (const std::string& k : st.placed) fmt::print("explain: placed: {}\n", k);
}

}  // namespace kiln::cli
