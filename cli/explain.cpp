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
      "explain: {} pointwise producers inlined; kernels move {} (unfused {}, {:.0f}% less)\n",
      st.inlined, mib(st.bytes_fused), mib(st.bytes_unfused), saved);
  fmt::print("explain: temporaries in one arena of {} (naive, each its own allocation: {})\n",
             mib(st.arena_bytes), mib(st.naive_bytes));
  // Why the pointwise producers that remain were not inlined, by reason.
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const std::string& k : st.kept) {
    const size_t colon = k.find(": ");
    by_reason[colon == std::string::npos ? "unknown" : k.substr(colon + 2)].push_back(
        k.substr(0, colon));
  }
  for (const auto& [reason, kernels] : by_reason) {
    std::string names;
    for (size_t i = 0; i < kernels.size() && i < 4; ++i) names += (i ? ", " : "") + kernels[i];
    if (kernels.size() > 4) names += ", ...";
    fmt::print("explain: kept as a buffer ({}): {} [{}]\n", reason, kernels.size(), names);
  }
  for (const std::string& f : st.fallbacks) fmt::print("explain: on the host oracle: {}\n", f);
}

}  // namespace kiln::cli
