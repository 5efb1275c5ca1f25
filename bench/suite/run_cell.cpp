#include "bench/suite/run_cell.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/interp/random_tensor.h"
#include "core/runtime/compile.h"
#include "core/support/median.h"

namespace kiln::bench {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Outputs of a poisoned run against the reference.
std::string check_outputs(const CompiledGraph& compiled, GraphReference& reference,
                          double& max_abs) {
  RunOptions options;
  options.poison = true;
  auto got = compiled.run(reference.inputs(), options);
  if (!got) return "run failed: " + got.error().message();
  return reference.check(*got, max_abs);
}

}  // namespace

GraphReference::GraphReference(const Workload& w) : w_(w) {}

const std::vector<HostTensor>& GraphReference::inputs() {
  if (inputs_.empty())
    for (size_t i = 0; i < w_.graph.inputs.size(); ++i)
      inputs_.push_back(
          random_tensor(w_.graph.type(w_.graph.inputs[i]), 1000 + i, w_.ranges.at(i)));
  return inputs_;
}

std::string GraphReference::check(const std::vector<HostTensor>& outputs, double& max_abs) {
  if (!oracle_) oracle_.emplace(run_oracle(w_.graph, inputs()));
  if (!*oracle_) return "reference failed: " + oracle_->error().message();
  const OracleResults& oracle = **oracle_;
  if (outputs.size() != oracle.expected.size())
    return fmt::format("mismatch: {} outputs where the graph has {}", outputs.size(),
                       oracle.expected.size());
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Comparison c = oracle.compare(o, outputs[o]);
    max_abs = std::max(max_abs, c.max_abs);
    if (!c.ok())
      return fmt::format("mismatch: output {}: {} elements outside the tolerance (max abs {:.3g})",
                         o, c.mismatches, c.max_abs);
  }
  return "ok";
}

void summarize_samples(std::vector<double> samples, ResultRow& row) {
  row.runs = static_cast<int64_t>(samples.size());
  if (samples.empty()) return;
  std::sort(samples.begin(), samples.end());
  row.median_ms = median(samples);
  row.min_ms = samples.front();
  row.max_ms = samples.back();
  // Distribution-free: the median lies between these ranks with about 95% probability.
  const double n = static_cast<double>(samples.size());
  const double half = 1.96 * std::sqrt(n) / 2;
  const auto rank = [&](double r) {
    return samples[static_cast<size_t>(std::clamp(r, 0.0, n - 1))];
  };
  row.ci_low_ms = rank(std::floor(n / 2 - half));
  row.ci_high_ms = rank(std::ceil(n / 2 + half));
}

ResultRow run_cell(int64_t cell, const Workload& w, GraphReference& reference, const CellTarget& t,
                   const Suite& suite, const std::shared_ptr<const OpRegistry>& registry,
                   const Logging& logging, const std::filesystem::path& scratch) {
  ResultRow row;
  row.cell = cell;
  row.graph = w.name;
  row.shape = w.shape;
  row.target = t.target->name;
  row.bytes = w.minimal_bytes;
  row.check = suite.check ? "" : "skipped";
  // Cold: a kernel cache of its own, empty; warm: the same cache, now filled.
  Options options = t.options;
  options.cache.enabled = true;
  options.cache.dir = (scratch / fmt::format("cell-{}", cell)).string();
  std::error_code ignored;
  std::filesystem::remove_all(options.cache.dir, ignored);
  const auto cold_start = std::chrono::steady_clock::now();
  auto cold = compile(w.graph, registry, options, logging);
  row.compile_cold_ms = ms_since(cold_start);
  if (!cold) {
    row.error = cold.error().message();
    std::filesystem::remove_all(options.cache.dir, ignored);
    return row;
  }
  const auto warm_start = std::chrono::steady_clock::now();
  auto compiled = compile(w.graph, registry, options, logging);
  row.compile_warm_ms = ms_since(warm_start);
  std::filesystem::remove_all(options.cache.dir, ignored);
  if (!compiled) {
    row.error = compiled.error().message();
    return row;
  }
  row.device = compiled->stats().target;
  row.kernels = static_cast<int64_t>(compiled->stats().kernels + compiled->stats().externs);
  if (suite.check) row.check = check_outputs(*compiled, reference, row.max_abs_error);
  auto samples =
      compiled->time_runs(reference.inputs(), suite.protocol.runs, suite.protocol.runs_per_sample);
  if (!samples) {
    row.error = samples.error().message();
    return row;
  }
  summarize_samples(*samples, row);
  if (row.median_ms > 0) row.gbps = static_cast<double>(row.bytes) / (row.median_ms * 1e6);
  row.device_gbps = compiled->bandwidth_gbps();
  if (row.device_gbps > 0) row.bandwidth_fraction = row.gbps / row.device_gbps;
  return row;
}

}  // namespace kiln::bench
